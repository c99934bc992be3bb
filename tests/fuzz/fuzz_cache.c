/* Fuzz target: the tune cache reader (src/tune/cache.c), the JSON Lines file `tune`
 * resumes from: a header line compared with this run's, then one record per line. */
#include <string.h>

#include "core/error.h"
#include "fuzz.h"
#include "tune/tune.h"

/* The header of the seed corpus's caches. */
static const struct rb_tune_header header = {
    .tool_version = "0.1.0",
    .device = "sim",
    .driver = "0.9.8",
    .soc = "rk3588.json v1",
    .space = "0123456789abcdef",
    .space_desc = "fuzz",
    .measure = "iters=5",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rb_tune_cache c;
	size_t valid = 0;
	int ret = rb_tune_cache_parse(&c, "fuzz.jsonl", (const char *)data, size, &header, &valid);

	FUZZ_CHECK_ERROR(ret);
	FUZZ_CHECK(valid <= size);
	if (ret == 0) {
		FUZZ_CHECK(c.resumed == c.count);
		for (size_t i = 0; i < c.count; i++) {
			const struct rb_tune_record *r = &c.records[i];
			const struct rb_tune_record *found =
			    rb_tune_cache_find(&c, r->kind, r->shape, r->config, r->launch);

			/* The first record with the same key, i.e. r or one before it. */
			FUZZ_CHECK(found && found <= r);
			FUZZ_CHECK(strcmp(rb_tune_kind_name(r->kind), "unknown") != 0);
		}
	}
	rb_tune_cache_close(&c);
	return 0;
}
