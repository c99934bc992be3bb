/* Fuzz target: the shapes file parser (src/core/shape.c), as `run`, `plan` and `tune`
 * read it, and the "MxKxN" shape spec of --shape. */
#include <string.h>

#include "core/error.h"
#include "fuzz.h"
#include "rknn_bench/shape.h"

static void check_list(const struct rb_shape_list *list)
{
	for (size_t i = 0; i < list->count; i++) {
		const struct rb_shape_entry *e = &list->entries[i];

		FUZZ_CHECK(e->shape.m > 0 && e->shape.m <= RB_SHAPE_DIM_MAX);
		FUZZ_CHECK(e->shape.k > 0 && e->shape.k <= RB_SHAPE_DIM_MAX);
		FUZZ_CHECK(e->shape.n > 0 && e->shape.n <= RB_SHAPE_DIM_MAX);
		FUZZ_CHECK(e->n_names > 0);
		for (size_t j = 0; j < e->n_names; j++)
			FUZZ_CHECK(e->names[j] != NULL);
	}
}

/* The spec parser takes a C string: the input up to its first NUL, at most 64 bytes. */
static void fuzz_spec(const uint8_t *data, size_t size)
{
	struct rb_shape_list list;
	char spec[65];
	size_t n = size < sizeof(spec) - 1 ? size : sizeof(spec) - 1;
	int ret;

	memcpy(spec, data, n);
	spec[n] = '\0';
	rb_shape_list_init(&list);
	ret = rb_shape_list_add_spec(&list, spec, RB_DTYPE_FP16);
	FUZZ_CHECK_ERROR(ret);
	FUZZ_CHECK(ret != 0 || list.count == 1);
	check_list(&list);
	rb_shape_list_release(&list);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rb_shape_list list;
	int ret;

	rb_shape_list_init(&list);
	ret = rb_shape_list_load_string(&list, (const char *)data, size, "fuzz.json");
	FUZZ_CHECK_ERROR(ret);
	FUZZ_CHECK(ret == 0 || list.count == 0); /* an error leaves the list as it was */
	check_list(&list);
	rb_shape_list_release(&list);
	fuzz_spec(data, size);
	return 0;
}
