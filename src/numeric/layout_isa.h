/* The kernels of the layouts that depend on the ISA, one header per family, each
 * defining the same inline functions (16-byte transposes, line copies, block writes,
 * streaming stores) so that layout*.c hold no ISA branch but the AVX-512 calls:
 * layout_x86.h (SSE2, AVX-512), layout_neon.h (aarch64), layout_generic.h (scalar;
 * RB_LAYOUT_PORTABLE forces it). Private to numeric/. */
#ifndef RB_NUMERIC_LAYOUT_ISA_H
#define RB_NUMERIC_LAYOUT_ISA_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "numeric/layout.h"

#define ATOM RB_LAYOUT_ATOM_BYTES
/* Weight blocks are 1 KiB for both dtypes: 16 kernels × 32 fp16, 32 × 32 int8. */
#define BLOCK_BYTES 1024

#if defined(RB_LAYOUT_PORTABLE)
#include "numeric/layout_generic.h"
#elif defined(__SSE2__)
#include "numeric/layout_x86.h"
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include "numeric/layout_neon.h"
#else
#include "numeric/layout_generic.h"
#endif

#if !LAYOUT_STREAMS
/* Without streaming stores a staged block is copied, and there is nothing to order. */
static inline void write_block(uint8_t *d, const uint8_t *s, bool stream)
{
	(void)stream;
	memcpy(d, s, BLOCK_BYTES);
}

static inline void stream_fence(void)
{
}
#endif

#if !defined(RB_LAYOUT_AVX512)
static inline bool layout_avx512_supported(void)
{
	return false;
}
#endif

#endif
