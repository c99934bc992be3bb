/* Debug switches, read once from RKNN_BENCH_DEBUG=flag,flag (Mesa's pattern).
 *
 *   corrupt_c   after each verification run, change one element of C: proves end to
 *               end that a wrong result is caught (exit code 1)
 *   fault_*     break the first task of an NPU job (word, banks, tail, size_e, dma,
 *               mask5, hang_once, no_rdma): see src/npu/fault.h */
#ifndef RB_CORE_DEBUG_H
#define RB_CORE_DEBUG_H

#include <stdbool.h>

bool rb_debug(const char *flag);

#endif
