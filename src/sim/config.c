/* Defaults of the emulator configuration (sim.h). */
#include "sim/sim.h"

#include <string.h>

void rb_sim_config_init(struct rb_sim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cores = RB_SIM_MAX_CORES; /* RK3588: three NPU cores (npu-facts §1) */
	cfg->threads = 0;              /* one host thread per online CPU */
	cfg->mem_budget = 0;           /* 4 GiB: the whole 32-bit NPU address space */
	cfg->cpu_cache = true;         /* as strict as a board: syncs are needed */
	cfg->vendor_cleanup = true;    /* as strict as a board: old jobs are dropped */
}
