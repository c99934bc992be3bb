/* Fuzz target: the hardware profile loader (src/hw/soc.c, configs/soc/ files). */
#include <string.h>

#include "core/error.h"
#include "fuzz.h"
#include "sim/sim.h"
#include "hw/soc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rb_soc_profile p;
	int ret;

	memset(&p, 0xa5, sizeof(p));
	ret = rb_soc_load_string(&p, (const char *)data, size, "fuzz.json");
	FUZZ_CHECK_ERROR(ret);
	if (ret == 0) {
		/* What the timing model and the emulated kernel rely on. */
		FUZZ_CHECK(p.cores >= 1 && p.cores <= RB_SIM_MAX_CORES);
		FUZZ_CHECK(p.clock_mhz > 0 && p.ddr_total_gbps > 0);
		FUZZ_CHECK(memchr(p.name, '\0', sizeof(p.name)) != NULL);
		FUZZ_CHECK(memchr(p.status, '\0', sizeof(p.status)) != NULL);
		FUZZ_CHECK(memchr(p.label, '\0', sizeof(p.label)) != NULL);
	}
	return 0;
}
