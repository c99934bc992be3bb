/* The NPU time of a process (run/npu_time.h): the union of run windows, whatever the
 * order they are reported in, with memory bounded by folding old windows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "run/npu_time.h"

static void test_union(void **state)
{
	struct rb_npu_time t;
	unsigned long runs, tuned;

	(void)state;
	rb_npu_time_init(&t);
	assert_int_equal(rb_npu_time_ns(&t, &runs, &tuned), 0);
	assert_int_equal(runs, 0);
	rb_npu_time_add(&t, 100, 200, true);  /* core 0 */
	rb_npu_time_add(&t, 150, 260, false); /* core 1, overlapping: 60 more */
	rb_npu_time_add(&t, 120, 180, true);  /* core 2, inside: nothing more */
	rb_npu_time_add(&t, 300, 310, false); /* after a gap */
	rb_npu_time_add(&t, 260, 270, false); /* touching the first group, reported late */
	assert_int_equal(rb_npu_time_ns(&t, &runs, &tuned), 160 + 10 + 10);
	assert_int_equal(runs, 5);
	assert_int_equal(tuned, 2);
	rb_npu_time_add(&t, 400, 400, false); /* an empty window is a run of no time */
	assert_int_equal(rb_npu_time_ns(&t, &runs, NULL), 180);
	assert_int_equal(runs, 6);
	rb_npu_time_release(&t);
}

/* Many more windows than are kept: three cores' runs of 10 ns, each core 3 ns after the
 * previous one, reported core by core in reverse order within each group of three. The
 * union is exact: every group covers 16 ns and groups are 100 ns apart. */
static void test_folding(void **state)
{
	static struct rb_npu_time t;
	const unsigned groups = 10 * RB_NPU_TIME_SPANS;
	unsigned long runs;

	(void)state;
	rb_npu_time_init(&t);
	for (unsigned g = 0; g < groups; g++)
		for (int core = 2; core >= 0; core--) {
			uint64_t begin = 1000 + (uint64_t)g * 100 + (uint64_t)core * 3;

			rb_npu_time_add(&t, begin, begin + 10, false);
		}
	assert_int_equal(rb_npu_time_ns(&t, &runs, NULL), (uint64_t)groups * 16);
	assert_int_equal(runs, groups * 3);
	assert_true(t.n <= RB_NPU_TIME_SPANS);
	/* A window reported after its time was folded counts only what lies after it. */
	rb_npu_time_add(&t, 0, 1000 + (uint64_t)groups * 100 + 50, false);
	assert_int_equal(rb_npu_time_ns(&t, NULL, NULL),
			 1000 + (uint64_t)groups * 100 + 50 - t.folded_end + t.folded_ns);
	rb_npu_time_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_union),
	    cmocka_unit_test(test_folding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
