/* Unit tests of model/ggml_rknn (the seed ggml-rknn backend's rules: which pairs it can
 * create, its init and run-time slices) and of the per-prompt totals that count a
 * prompt's M = 1 pairs (results/totals, fed by model/graph's pairs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "results/totals.h"
#include "model/ggml_rknn.h"
#include "model/graph.h"

static struct rb_shape shape(int64_t m, int64_t k, int64_t n)
{
	return (struct rb_shape){.m = m, .k = k, .n = n, .dtype = RB_DTYPE_FP16};
}

static void assert_unusable(int64_t k, int64_t n, int threads, const char *reason)
{
	struct rb_shape s = shape(1, k, n);
	char why[256];

	assert_false(rb_ggml_rknn_usable(&s, threads, why, sizeof(why)));
	if (!strstr(why, reason)) {
		print_error("1x%lldx%lld, %d threads: '%s' does not say '%s'\n", (long long)k,
			    (long long)n, threads, why, reason);
		fail();
	}
}

/* Every rule, each on the smallest case that breaks it alone. */
static void test_usable(void **state)
{
	struct rb_shape ok = shape(1, 2048, 8192), min = shape(128, 32, 96);
	char why[256] = "x";

	(void)state;
	assert_true(rb_ggml_rknn_usable(&ok, 3, why, sizeof(why)));
	assert_string_equal(why, "");
	assert_true(rb_ggml_rknn_usable(&min, 3, why, sizeof(why)));
	assert_unusable(2048, 64, 3, "N = 64 < 96"); /* an init slice of 0 columns */
	assert_unusable(2048, 80, 3, "N = 80 < 96"); /* a multiple of 16 below 96 */
	assert_unusable(100, 8192, 3, "K = 100 is not a multiple of 32");
	assert_unusable(2048, 1000, 3, "N = 1000 is not a multiple of 16");
	assert_unusable(2048, 208, 3, "last 16 columns would be left as zeros");
	assert_unusable(2048, 128, 8, "a thread's columns are empty"); /* 128/8 = 16 < 32 */
	assert_true(rb_ggml_rknn_usable(&(struct rb_shape){1, 2048, 128, RB_DTYPE_FP16}, 4, why,
					sizeof(why)));
}

/* ggml_rk_mul_mat's thread count: down from T while N is not a multiple of 16·i. */
static void test_run_threads(void **state)
{
	(void)state;
	assert_int_equal(rb_ggml_rknn_run_threads(8192, 3), 3);
	assert_int_equal(rb_ggml_rknn_run_threads(8192, 4), 4);
	assert_int_equal(rb_ggml_rknn_run_threads(112, 3), 2); /* 112 % 48, 112 % 32 != 0 */
	assert_int_equal(rb_ggml_rknn_run_threads(112, 1), 1);
}

static void assert_slice(const struct rb_ggml_rknn_slice *s, int64_t begin, int64_t end, int core,
			 int thread, bool at_init)
{
	if (s->n_begin != begin || s->n_end != end || s->core != core || s->thread != thread ||
	    s->at_init != at_init) {
		print_error("slice [%lld,%lld) core %d thread %d %s, want [%lld,%lld) core %d "
			    "thread %d %s\n",
			    (long long)s->n_begin, (long long)s->n_end, s->core, s->thread,
			    s->at_init ? "init" : "run", (long long)begin, (long long)end, core,
			    thread, at_init ? "init" : "run");
		fail();
	}
}

/* N = 320 (the 1x128x320 pair): init 96/96/128, and the run (3 threads) uses
 * the same widths, so the three init contexts are the ones that run. */
static void test_slices_same(void **state)
{
	struct rb_ggml_rknn_slice sl[RB_GGML_RKNN_MAX_SLICES];
	struct rb_shape s = shape(1, 128, 320);

	(void)state;
	assert_int_equal(rb_ggml_rknn_slices(&s, 3, sl), 3);
	assert_slice(&sl[0], 0, 96, 0, 0, true);
	assert_slice(&sl[1], 96, 192, 1, 1, true);
	assert_slice(&sl[2], 192, 320, 2, 2, true);
}

/* N = 256: init 64/64/128, run 64/96/96 (backend-facts): threads 1 and 2 create
 * contexts of their own on their cores; the init ones of cores 1 and 2 never run. */
static void test_slices_differ(void **state)
{
	struct rb_ggml_rknn_slice sl[RB_GGML_RKNN_MAX_SLICES];
	struct rb_shape s = shape(1, 2048, 256);

	(void)state;
	assert_int_equal(rb_ggml_rknn_slices(&s, 3, sl), 5);
	assert_slice(&sl[0], 0, 64, 0, 0, true);
	assert_slice(&sl[1], 64, 128, 1, -1, true);
	assert_slice(&sl[2], 128, 256, 2, -1, true);
	assert_slice(&sl[3], 64, 160, 1, 1, false);
	assert_slice(&sl[4], 160, 256, 2, 2, false);
}

/* Four threads (llama.cpp -t 4): no init width is used, the fourth thread's context
 * has no core mask. */
static void test_slices_four_threads(void **state)
{
	struct rb_ggml_rknn_slice sl[RB_GGML_RKNN_MAX_SLICES];
	struct rb_shape s = shape(1, 2048, 8192);

	(void)state;
	assert_int_equal(rb_ggml_rknn_slices(&s, 4, sl), 7);
	assert_slice(&sl[0], 0, 2720, 0, -1, true);
	assert_slice(&sl[1], 2720, 5440, 1, -1, true);
	assert_slice(&sl[2], 5440, 8192, 2, -1, true);
	for (int t = 0; t < 4; t++)
		assert_slice(&sl[3 + t], t * 2048, (t + 1) * 2048, t < 3 ? t : -1, t, false);
}

static void test_slices_refused(void **state)
{
	struct rb_ggml_rknn_slice sl[RB_GGML_RKNN_MAX_SLICES];
	struct rb_shape small = shape(1, 2048, 64), ok = shape(1, 2048, 8192);

	(void)state;
	assert_int_equal(rb_ggml_rknn_slices(&small, 3, sl), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "N = 64 < 96"));
	assert_int_equal(rb_ggml_rknn_slices(&ok, 0, sl), -EINVAL);
	assert_int_equal(rb_ggml_rknn_slices(&ok, RB_GGML_RKNN_MAX_THREADS + 1, sl), -EINVAL);
}

/* A prompt counts the M = 1 pairs of its output row: the last layer's ffn_* and
 * result_output, when it does not list them at its own M. */
static void test_totals_output_rows(void **state)
{
	const struct rb_total_pair pairs[] = {
	    {"ffn_up-0", 1, 10.0},       {"ffn_up-1", 1, 10.0},        {"ffn_out-1", 1, 20.0},
	    {"result_output", 1, 100.0}, {"Qcur-1", 1, 5.0},           {"ffn_up-0", 16, 50.0},
	    {"Qcur-1", 16, 7.0},         {"ffn_up-1", 64, 80.0},       {"ffn_up-0", 64, 80.0},
	    {"ffn_out-1", 64, 90.0},     {"result_output", 64, 400.0},
	};
	struct rb_total t[RB_TOTALS_MAX];
	char line[200];

	(void)state;
	assert_int_equal(rb_totals_sum_pairs(pairs, 11, t, RB_TOTALS_MAX), 3);
	assert_true(t[0].m == 1 && t[0].pairs == 5 && t[0].output_rows == 0);
	assert_true(t[0].total_us == 145.0);
	/* M = 16: its two pairs, then ffn_up-1, ffn_out-1 and result_output at M = 1; not
	 * ffn_up-0 (another layer) nor Qcur-1 (before the rows are kept) */
	assert_true(t[1].m == 16 && t[1].pairs == 5 && t[1].output_rows == 3);
	assert_true(t[1].total_us == 57.0 + 130.0);
	/* M = 64 lists every one at its own M (every token's logits): nothing added */
	assert_true(t[2].m == 64 && t[2].pairs == 4 && t[2].output_rows == 0);
	assert_true(t[2].total_us == 650.0);
	rb_total_text(&t[1], line, sizeof(line));
	assert_string_equal(line, "prefill (M = 16): 187.0 µs per 16-token prompt over 5 pairs, "
				  "3 of them at M = 1 (output row)");
}

/* An unmeasured output-row pair leaves the prompt's total incomplete. */
static void test_totals_output_rows_incomplete(void **state)
{
	const struct rb_total_pair pairs[] = {
	    {"ffn_up-0", 1, 10.0}, {"result_output", 1, NAN}, {"ffn_up-0", 8, 20.0}};
	struct rb_total t[RB_TOTALS_MAX];

	(void)state;
	assert_int_equal(rb_totals_sum_pairs(pairs, 3, t, RB_TOTALS_MAX), 2);
	assert_false(t[0].complete);
	assert_true(t[1].m == 8 && !t[1].complete && t[1].output_rows == 1);
}

/* The pairs shapes writes for Qwen2.5-1.5B, decode and a 128-token prompt: the prompt
 * lists 81 pairs at M = 128 and runs 4 more at M = 1 (ffn_up/gate/out-27, result_output);
 * every other M = 1 pair is decode only. */
static void test_graph_prompt_totals(void **state)
{
	const int64_t tokens[] = {1, 128};
	struct rb_graph_model m = {.arch = "qwen2",
				   .embd = 1536,
				   .ff = 8960,
				   .layers = 28,
				   .heads = 12,
				   .heads_kv = 2,
				   .vocab = 151936};
	struct rb_graph_opts o = {.tokens = tokens, .n_tokens = 2};
	struct rb_graph_pair *gp;
	struct rb_total_pair *tp;
	struct rb_total t[RB_TOTALS_MAX];
	size_t n, out_rows = 0;

	(void)state;
	assert_int_equal(rb_graph_pairs(&m, &o, &gp, &n), 0);
	assert_int_equal(n, 85 + 81);
	tp = calloc(n, sizeof(*tp));
	assert_non_null(tp);
	for (size_t i = 0; i < n; i++) {
		/* each M = 1 pair costs 1, each prompt pair 1000: the total shows which ran */
		tp[i] = (struct rb_total_pair){gp[i].name, gp[i].shape.m,
					       gp[i].shape.m == 1 ? 1.0 : 1000.0};
		out_rows += gp[i].shape.m == 1 &&
			    (strstr(gp[i].name, "-27") || strcmp(gp[i].name, "result_output") == 0);
	}
	assert_int_equal(out_rows, 4);
	assert_int_equal(rb_totals_sum_pairs(tp, n, t, RB_TOTALS_MAX), 2);
	assert_true(t[0].m == 1 && t[0].pairs == 85 && t[0].total_us == 85.0);
	assert_true(t[1].m == 128 && t[1].pairs == 85 && t[1].output_rows == 4);
	assert_true(t[1].total_us == 81000.0 + 4.0);
	free(tp);
	free(gp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_usable),
	    cmocka_unit_test(test_run_threads),
	    cmocka_unit_test(test_slices_same),
	    cmocka_unit_test(test_slices_differ),
	    cmocka_unit_test(test_slices_four_threads),
	    cmocka_unit_test(test_slices_refused),
	    cmocka_unit_test(test_totals_output_rows),
	    cmocka_unit_test(test_totals_output_rows_incomplete),
	    cmocka_unit_test(test_graph_prompt_totals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
