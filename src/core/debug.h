/* Debug switches, read once from RKNN_BENCH_DEBUG=flag,flag (Mesa's pattern).
 *
 *   corrupt_c   after each verification run, change one element of C: proves end to
 *               end that a wrong result is caught (exit code 1)
 *   fault_*     break the first task of an NPU job (word, banks, tail, size_e, dma,
 *               mask5, hang_once, no_rdma) or skip a sync (no_sync): see src/npu/fault.h
 *   shim        build/shim/librknnrt.so prints each failed call and each run's device
 *               time on stderr (it is silent otherwise)
 *   stream_b    `run` streams B to an NPU device whatever its size (run/measure.h):
 *               the streamed path on shapes small enough for every test
 *   device_c    `run` on sim leaves C on the device whatever its size and checks it a
 *               block at a time (run/measure.c), as it does for a large C */
#ifndef RB_CORE_DEBUG_H
#define RB_CORE_DEBUG_H

#include <stdbool.h>

#include <stddef.h>

/* Whether `flag` is set. The environment is read once, on the first query. */
bool rb_debug(const char *flag);
/* The flags of RKNN_BENCH_DEBUG that are not valid ("" if none), comma-separated, for
 * the command line to warn about (the library stays silent). */
const char *rb_debug_unknown(void);
/* The valid flags, for that warning. */
size_t rb_debug_flag_count(void);
const char *rb_debug_flag_name(size_t i);
/* Replaces the flags with `list` (NULL: none). For tests and embedders that set flags
 * in code; not thread-safe against concurrent queries. */
void rb_debug_set(const char *list);

#endif
