/* Fuzz target: the tuned JSON loader and its lookups (src/tune/tuned_read.c), the public
 * library API an inference backend calls (include/rknn_bench/tuned.h). */
#include <string.h>

#include "fuzz.h"
#include "rknn_bench/tuned.h"

/* Every lookup rule on the shapes the file holds: by name, by shape, by bucket. */
static void look_up(const struct rb_tuned_db *db)
{
	size_t n = rb_tuned_count(db);

	for (size_t i = 0; i < n; i++) {
		const struct rb_tuned_config *c = rb_tuned_at(db, i);
		const struct rb_shape *s = &c->shape;
		enum rb_tuned_match match;

		FUZZ_CHECK(c->name && c->config && c->launch && c->split_axis);
		FUZZ_CHECK(c->n_ranges <= RB_TUNED_MAX_CORES);
		FUZZ_CHECK(rb_tuned_lookup(db, s->m, s->k, s->n, s->dtype, c->name, &match));
		FUZZ_CHECK(match == RB_TUNED_NAME || match == RB_TUNED_SHAPE);
		rb_tuned_lookup(db, s->m + 1, s->k, s->n, s->dtype, NULL, &match);
		FUZZ_CHECK(match != RB_TUNED_NONE);
		rb_tuned_lookup(db, 1, s->k, s->n, s->dtype, "x", &match);
		rb_tuned_match_name(match);
	}
	FUZZ_CHECK(rb_tuned_at(db, n) == NULL);
	rb_tuned_lookup(db, 1, 1, 1, RB_DTYPE_INT8, NULL, NULL);
	for (const char *const *k =
		 (const char *const[]){"device", "driver", "soc", "generated", "x", NULL};
	     *k; k++)
		FUZZ_CHECK(rb_tuned_info(db, *k) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rb_tuned_db *db = NULL;
	int ret = rb_tuned_load_string(&db, (const char *)data, size, "fuzz.json");

	FUZZ_CHECK(ret == 0 || rb_last_error()[0] != '\0');
	FUZZ_CHECK((ret == 0) == (db != NULL));
	if (db)
		look_up(db);
	rb_tuned_free(db);
	return 0;
}
