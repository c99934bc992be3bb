/* The reference GEMM's generic kernels (ref_kernels.h): packing to fp32, the MR×NR
 * micro-kernel on GCC vector extensions and the M = 1 path, for every CPU. */
#include <stdint.h>
#include <string.h>

#include "core/fp16.h"
#include "numeric/ref_kernels.h"

/* GCC turns off FMA contraction in ISO C mode (-std=c11); the kernels want it, as
 * `acc += a * b` is meant as a fused multiply-add. clang contracts by default. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif

#include "numeric/ref_tile.h"

/* ---- packing ------------------------------------------------------------------ */

/* ---- packing ------------------------------------------------------------------ */

/* Packed A: strips of MR rows; within a strip, column p holds its MR values together.
 * Packed B: strips of NR columns; within a strip, row p holds its NR values together.
 * Both are zero-padded to whole strips, so kernels always compute full tiles. The
 * fp16 variants convert a whole row of the source first, with the F16C/NEON array
 * converter, then scatter it. */
static void pack_a_f16(const struct gemm_ops *o, void *dst, const void *src, int64_t lda,
		       int64_t mc, int64_t kc, float *row)
{
	float *out = dst;
	int64_t mr = o->mr, rows = DIV_UP(mc, mr) * mr;

	for (int64_t r = 0; r < rows; r++) {
		float *strip = out + (r / mr) * kc * mr + r % mr;

		if (r < mc)
			rb_fp16_to_f32_array(row, (const uint16_t *)src + r * lda, (size_t)kc);
		else
			memset(row, 0, (size_t)kc * sizeof(*row));
		for (int64_t p = 0; p < kc; p++)
			strip[p * mr] = row[p];
	}
}

/* int8 is packed as fp32 too: the int8 kernel runs on the FMA units (see there). */
static void pack_a_i8(const struct gemm_ops *o, void *dst, const void *src, int64_t lda, int64_t mc,
		      int64_t kc, float *row)
{
	float *out = dst;
	int64_t mr = o->mr, rows = DIV_UP(mc, mr) * mr;

	(void)row;
	for (int64_t r = 0; r < rows; r++) {
		float *strip = out + (r / mr) * kc * mr + r % mr;
		const int8_t *in = (const int8_t *)src + r * lda;

		for (int64_t p = 0; p < kc; p++)
			strip[p * mr] = r < mc ? (float)in[p] : 0.0f;
	}
}

/* Row p of a packed B panel: whole strips are fixed-size copies the compiler inlines. */
static inline __attribute__((always_inline)) void
scatter_b_row_nr(float *dst, const float *row, int64_t kc, int64_t p, int64_t nc, int64_t nr)
{
	int64_t j = 0;

	for (; j + nr <= nc; j += nr)
		memcpy(dst + (j / nr) * kc * nr + p * nr, row + j, (size_t)nr * sizeof(*row));
	if (j < nc) {
		float *at = dst + (j / nr) * kc * nr + p * nr;

		memcpy(at, row + j, (size_t)(nc - j) * sizeof(*row));
		memset(at + (nc - j), 0, (size_t)(nr - (nc - j)) * sizeof(*row));
	}
}

/* Specialised on the strip widths in use, so the strip copies stay inlined. */
void rb_ref_scatter_b_row(float *dst, const float *row, int64_t kc, int64_t p, int64_t nc,
			  int64_t nr)
{
	if (nr == NR)
		scatter_b_row_nr(dst, row, kc, p, nc, NR);
	else if (nr == 32)
		scatter_b_row_nr(dst, row, kc, p, nc, 32);
	else
		scatter_b_row_nr(dst, row, kc, p, nc, nr);
}

static void pack_b_f16(const struct gemm_ops *o, void *dst, const void *src, int64_t ldb,
		       int64_t kc, int64_t nc, float *row)
{
	for (int64_t p = 0; p < kc; p++) {
		rb_fp16_to_f32_array(row, (const uint16_t *)src + p * ldb, (size_t)nc);
		rb_ref_scatter_b_row(dst, row, kc, p, nc, o->nr);
	}
}

static void pack_b_i8(const struct gemm_ops *o, void *dst, const void *src, int64_t ldb, int64_t kc,
		      int64_t nc, float *row)
{
	for (int64_t p = 0; p < kc; p++) {
		const int8_t *in = (const int8_t *)src + p * ldb;

		for (int64_t j = 0; j < nc; j++)
			row[j] = (float)in[j];
		rb_ref_scatter_b_row(dst, row, kc, p, nc, o->nr);
	}
}

/* ---- micro-kernels ------------------------------------------------------------- */

/* ---- micro-kernels ------------------------------------------------------------- */

static void kernel_f32_portable(int64_t kc, const void *a, const void *b, void *c, int64_t ldc,
				int mr, int nr, int accumulate)
{
	kernel_f32_body(kc, a, b, c, ldc, mr, nr, accumulate);
}

static void kernel_i32_portable(int64_t kc, const void *a, const void *b, void *c, int64_t ldc,
				int mr, int nr, int accumulate)
{
	kernel_i32_body(kc, a, b, c, ldc, mr, nr, accumulate);
}
/* ---- M = 1: stream B once ---------------------------------------------------------- */

static inline __attribute__((always_inline)) void axpy_f32_body(float *restrict acc, float s,
								const float *restrict x, int64_t w)
{
	vf sv = SPLAT(s);
	int64_t j = 0;

	for (; j + VLEN <= w; j += VLEN) {
		vf av, xv;

		memcpy(&av, acc + j, sizeof(av));
		memcpy(&xv, x + j, sizeof(xv));
		av += sv * xv;
		memcpy(acc + j, &av, sizeof(av));
	}
	for (; j < w; j++)
		acc[j] += s * x[j];
}

/* Portable: convert one row of the chunk, then accumulate it. */
static void gemv_f16_portable(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w,
			      void *c, float *scratch)
{
	const float *af = a;
	float *acc = c;

	memset(acc, 0, (size_t)w * sizeof(*acc));
	for (int64_t p = 0; p < k; p++) {
		rb_fp16_to_f32_array(scratch, (const uint16_t *)b + p * ldb, (size_t)w);
		axpy_f32_body(acc, af[p], scratch, w);
	}
}

/* Portable int8: GCC lowers a widening __builtin_convertvector of int8 lanes to one
 * scalar extract per lane, so this is a plain loop; the x86 and aarch64 builds use
 * their widening instructions below. */
static void gemv_i8_portable(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w,
			     void *c, float *scratch)
{
	const int8_t *ai = a;
	uint32_t *acc = c;

	(void)scratch;
	memset(acc, 0, (size_t)w * sizeof(*acc));
	for (int64_t p = 0; p < k; p++) {
		const int8_t *x = (const int8_t *)b + p * ldb;
		uint32_t s = (uint32_t)ai[p];

		for (int64_t j = 0; j < w; j++)
			acc[j] += s * (uint32_t)x[j];
	}
}

/* Folds groups of four rows of B into the sums with rows4, then the rest with row1. */
void rb_ref_gemv_i8_rows(rows4_i8_fn rows4, row_i8_fn row1, const int8_t *a, const int8_t *b,
			 int64_t ldb, int64_t k, int64_t w, int32_t *c)
{
	int64_t p = 0;

	memset(c, 0, (size_t)w * sizeof(*c));
	for (; p + 4 <= k; p += 4)
		rows4(c, a + p, b + p * ldb, ldb, w);
	for (; p < k; p++)
		row1(c, a[p], b + p * ldb, w);
}

void rb_ref_axpy_i8_tail(int32_t *acc, const int8_t *a, const int8_t *b, int64_t ldb, int rows,
			 int64_t j0, int64_t w)
{
	for (int64_t j = j0; j < w; j++) {
		uint32_t s = (uint32_t)acc[j];

		for (int r = 0; r < rows; r++)
			s += (uint32_t)a[r] * (uint32_t)b[r * ldb + j];
		acc[j] = (int32_t)s;
	}
}

void rb_ref_gemv_f16_rows(rows4_f16_fn rows4, row_f16_fn row1, const float *af, const uint16_t *b,
			  int64_t ldb, int64_t k, int64_t w, float *acc, int64_t p0)
{
	int64_t p = p0;

	for (; p + 4 <= k; p += 4)
		rows4(acc, af + p, b + p * ldb, ldb, w);
	for (; p < k; p++)
		row1(acc, af[p], b + p * ldb, w);
}

void rb_ref_fma_f16_tail(float *acc, const float *af, const uint16_t *b, int64_t ldb, int rows,
			 int64_t j0, int64_t w)
{
	for (int64_t j = j0; j < w; j++) {
		float s = acc[j];

		for (int r = 0; r < rows; r++)
			s = __builtin_fmaf(af[r], rb_fp16_to_f32(b[r * ldb + j]), s);
		acc[j] = s;
	}
}

/* Blocking and layout of the generic kernels, with the dtype's packing and kernels. */
static void generic_ops(struct gemm_ops *ops, size_t in_size, pack_fn pack_a, pack_fn pack_b,
			kernel_fn kernel, gemv_fn gemv)
{
	*ops = (struct gemm_ops){.in_size = in_size,
				 .mr = MR,
				 .nr = NR,
				 .kc = KC,
				 .mc = MC,
				 .nc = NC,
				 .kgrain = 1,
				 .pel = 4,
				 .a_tail = 0,
				 .pack_a = pack_a,
				 .pack_b = pack_b,
				 .kernel = kernel,
				 .gemv = gemv};
}

void rb_ref_generic_f16_ops(struct gemm_ops *ops)
{
	generic_ops(ops, sizeof(uint16_t), pack_a_f16, pack_b_f16, kernel_f32_portable,
		    gemv_f16_portable);
}

void rb_ref_generic_i8_ops(struct gemm_ops *ops)
{
	generic_ops(ops, sizeof(int8_t), pack_a_i8, pack_b_i8, kernel_i32_portable,
		    gemv_i8_portable);
}
