/* Tests of the emulator's timing model (src/sim/timing.c) and hardware profiles
 * (src/hw/soc.c): the model's monotonic properties, on synthetic tasks and through
 * the real path (plan → job runner → emulated kernel → emulated NPU), the knobs the
 * tuner sweeps moving the time the way the physics says, determinism (also of the
 * binary), profile validation messages, and the embedded default being the file.
 * Run from the top of the tree (make check does). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core/error.h"
#include "core/fileio.h"
#include "numeric/inputs.h"
#include "npu/job.h"
#include "npu/plan.h"
#include "sim/sim.h"
#include "hw/soc.h"
#include "sim/timing.h"

#define SOC_FILE "configs/soc/rk3588.json"

static const struct rb_soc_profile *soc(void)
{
	const struct rb_soc_profile *p = rb_soc_default();

	assert_non_null(p);
	return p;
}

/* ---- the model on synthetic tasks ---- */

/* n identical tasks chained on one core (overlap after the first). */
static uint64_t run_tasks(const struct rb_timing_task *t, size_t n)
{
	struct rb_timing_task *v = calloc(n, sizeof(*v));
	struct rb_timing_core c = {.tasks = v, .n_tasks = n};

	assert_non_null(v);
	for (size_t i = 0; i < n; i++) {
		v[i] = *t;
		v[i].overlap = t->overlap && i > 0;
	}
	rb_timing_run(soc(), &c, 1);
	free(v);
	return c.elapsed_ns;
}

static uint64_t run_one(uint64_t feature, uint64_t weights, uint64_t output, uint64_t cycles)
{
	struct rb_timing_task t = {108, feature, weights, output, cycles, false};

	return run_tasks(&t, 1);
}

static void test_more_bytes_never_faster(void **state)
{
	uint64_t prev[4] = {0};

	(void)state;
	for (uint64_t b = 0; b <= (8u << 20); b = b ? 2 * b + 1 : 1) {
		uint64_t t[4] = {run_one(b, 4096, 4096, 1000), run_one(4096, b, 4096, 1000),
				 run_one(4096, 4096, b, 1000), run_one(4096, 4096, 4096, b)};

		for (int i = 0; i < 4; i++) {
			assert_true(t[i] >= prev[i]);
			prev[i] = t[i];
		}
	}
	/* bytes that dominate cost their time at the stream rate */
	assert_true(run_one(0, 100u << 20, 0, 0) >=
		    (uint64_t)((100u << 20) / soc()->ddr_stream_gbps));
}

/* Partial atoms and kernel groups waste lanes; fewer rows than the kernel group are
 * bound by loading the weights (M = 1). */
static void test_cycles_lane_waste(void **state)
{
	(void)state;
	assert_int_equal(rb_timing_cycles(soc(), false, 64, 2048, 128), 64 * 64 * 8);
	assert_int_equal(rb_timing_cycles(soc(), true, 64, 2048, 128), 64 * 64 * 4);
	assert_int_equal(rb_timing_cycles(soc(), false, 64, 33, 17), 64 * 2 * 2);
	assert_int_equal(rb_timing_cycles(soc(), false, 1, 2048, 16), 64 * 16);
	assert_int_equal(rb_timing_cycles(soc(), true, 1, 2048, 32), 64 * 32);
	assert_int_equal(rb_timing_cycles(soc(), false, 16, 2048, 16),
			 rb_timing_cycles(soc(), false, 1, 2048, 16));
}

/* The same work in many small tasks pays the per-task costs many times. */
static void test_many_tiny_tasks_slower(void **state)
{
	struct rb_timing_task big = {108, 64 << 10, 4 << 20, 64 << 10, 1 << 20, true};
	struct rb_timing_task tiny = {108, 1 << 10, 64 << 10, 1 << 10, 1 << 14, true};

	(void)state;
	assert_true(run_tasks(&tiny, 64) > run_tasks(&big, 1));
}

/* Ping-pong overlap: the next task's load hides behind this one's execution. */
static void test_overlap_not_slower(void **state)
{
	struct rb_timing_task t = {108, 256 << 10, 256 << 10, 32 << 10, 16384, true};
	struct rb_timing_task serial = t;

	(void)state;
	serial.overlap = false;
	assert_true(run_tasks(&t, 16) < run_tasks(&serial, 16));
}

/* Cores streaming together share DDR: each gets min(stream, core, total / k). */
static void test_shared_bandwidth(void **state)
{
	struct rb_timing_task t = {0, 0, 64 << 20, 0, 0, false};
	struct rb_timing_core c[3];
	uint64_t alone, stream_ns, shared_ns;

	(void)state;
	for (int i = 0; i < 3; i++)
		c[i] = (struct rb_timing_core){.tasks = &t, .n_tasks = 1};
	rb_timing_run(soc(), c, 1);
	alone = c[0].elapsed_ns;
	rb_timing_run(soc(), c, 3);
	for (int i = 0; i < 3; i++)
		assert_true(c[i].elapsed_ns >= alone);
	stream_ns = (uint64_t)((64u << 20) / soc()->ddr_stream_gbps);
	shared_ns = (uint64_t)(3.0 * (64u << 20) / soc()->ddr_total_gbps);
	assert_true(alone >= stream_ns && alone < stream_ns + 5000);
	assert_true(c[2].elapsed_ns >= shared_ns && c[2].elapsed_ns < shared_ns + 5000);
	/* a core kicked later ends later, and the first streams alone meanwhile */
	c[1].start_ns = 100000;
	rb_timing_run(soc(), c, 3);
	assert_true(c[1].start_ns + c[1].elapsed_ns > c[0].elapsed_ns);
}

static void test_model_deterministic(void **state)
{
	struct rb_timing_task t = {108, 12345, 678901, 2345, 45678, true};

	(void)state;
	assert_int_equal(run_tasks(&t, 100), run_tasks(&t, 100));
}

/* ---- the real path ---- */

struct path {
	struct rb_plan plan;
	double us;
};

/* Modeled device time of a shape under a plan config (compact form) on a fresh
 * emulator: the default plan for mask 0x7 with `config` applied. */
static void run_path(struct path *p, int64_t m, int64_t k, int64_t n, enum rb_dtype dtype,
		     const char *config)
{
	struct rb_shape s = {m, k, n, dtype};
	struct rb_plan_config cfg;
	struct rb_sim_config sim;
	struct rb_npu_device dev;
	struct rb_npu_job *job;
	struct rb_npu_job_times t;
	struct rb_inputs in;
	void *c;

	rb_sim_config_init(&sim);
	rb_plan_config_default(&cfg, &s, 0x7);
	assert_int_equal(rb_plan_config_parse(&cfg, config), 0);
	assert_int_equal(rb_plan_init(&p->plan, &s, &cfg), 0);
	assert_int_equal(rb_inputs_init(&in, &s, 1, RB_DATA_EXACT), 0);
	assert_int_equal(rb_npu_device_open_sim(&dev, &sim), 0);
	c = rb_output_alloc(&s);
	assert_non_null(c);
	assert_int_equal(rb_npu_job_new(&job, &dev, &p->plan, &in, RB_LAUNCH_FENCES), 0);
	assert_int_equal(rb_npu_job_run(job, c, &t), 0);
	p->us = t.device_us;
	assert_true(p->us > 0);
	/* the same run again takes exactly as long */
	assert_int_equal(rb_npu_job_run(job, c, &t), 0);
	assert_true(t.device_us == p->us);
	rb_npu_job_free(job);
	free(c);
	rb_npu_device_close(&dev);
	rb_inputs_release(&in);
}

static double path_us(int64_t m, int64_t k, int64_t n, enum rb_dtype dtype, const char *config)
{
	struct path p;

	run_path(&p, m, k, n, dtype, config);
	rb_plan_release(&p.plan);
	return p.us;
}

/* A shape that splits: more cores are never slower (DDR is shared, so not 3x). */
static void more_cores_faster(int64_t m, int64_t k, int64_t n, enum rb_dtype dtype)
{
	double t1 = path_us(m, k, n, dtype, "mask=0x1");
	double t3 = path_us(m, k, n, dtype, "mask=0x3");
	double t7 = path_us(m, k, n, dtype, "mask=0x7");

	assert_true(t3 < t1);
	assert_true(t7 < t3);
	assert_true(t7 > t1 / 3);
}

static void test_more_cores_decode(void **state)
{
	(void)state;
	more_cores_faster(1, 2048, 8192, RB_DTYPE_FP16);
}

static void test_more_cores_prefill(void **state)
{
	(void)state;
	more_cores_faster(128, 2048, 8192, RB_DTYPE_INT8);
}

/* Few data banks: small M tiles, each reading all the weights again (without weight
 * reuse); with it, each N tile's weights are read once whatever the M tiles. */
static void test_weight_rereads_slower(void **state)
{
	struct path few, enough;

	(void)state;
	run_path(&few, 128, 1024, 2048, RB_DTYPE_FP16, "mask=0x1 banks=1:11 wreuse=0");
	run_path(&enough, 128, 1024, 2048, RB_DTYPE_FP16, "mask=0x1 banks=4:8 wreuse=0");
	assert_true(few.plan.weight_bytes >= 4 * enough.plan.weight_bytes);
	assert_true(few.us > enough.us);
	rb_plan_release(&few.plan);
	rb_plan_release(&enough.plan);
	run_path(&few, 128, 1024, 2048, RB_DTYPE_FP16, "mask=0x1 banks=1:11 wreuse=1");
	run_path(&enough, 128, 1024, 2048, RB_DTYPE_FP16, "mask=0x1 banks=1:11 wreuse=0");
	assert_true(few.plan.weight_reuse && few.plan.weight_bytes == few.plan.b_bytes);
	assert_true(few.us < enough.us);
	rb_plan_release(&few.plan);
	rb_plan_release(&enough.plan);
}

/* One submit per core for all its tasks against one submit per task. */
static void chain_faster(int64_t m, int64_t k, int64_t n, enum rb_dtype dtype, const char *mask)
{
	char chained[64], unchained[64];
	struct path a, b;

	snprintf(chained, sizeof(chained), "%s chain=1", mask);
	snprintf(unchained, sizeof(unchained), "%s chain=0", mask);
	run_path(&a, m, k, n, dtype, chained);
	run_path(&b, m, k, n, dtype, unchained);
	assert_true(a.plan.n_tasks > 2 * a.plan.n_cores);
	assert_true(a.us < b.us);
	rb_plan_release(&a.plan);
	rb_plan_release(&b.plan);
}

static void test_chain_not_slower(void **state)
{
	(void)state;
	chain_faster(1, 2048, 2048, RB_DTYPE_FP16, "mask=0x1");
	chain_faster(128, 1024, 4096, RB_DTYPE_INT8, "mask=0x7");
}

/* One weight bank: 16 kernels a task, 512 tasks instead of 103 for the same bytes of
 * weights. */
static void test_tiny_tasks_slower(void **state)
{
	struct path tiny, big;

	(void)state;
	run_path(&tiny, 1, 2048, 8192, RB_DTYPE_FP16, "mask=0x1 banks=1:1");
	run_path(&big, 1, 2048, 8192, RB_DTYPE_FP16, "mask=0x1 banks=1:11");
	assert_true(tiny.plan.n_tasks > 4 * big.plan.n_tasks);
	assert_true(tiny.plan.weight_bytes == big.plan.weight_bytes);
	assert_true(tiny.us > big.us);
	rb_plan_release(&tiny.plan);
	rb_plan_release(&big.plan);
}

/* ---- the binary: the same run twice gives the same statistics ---- */

static cJSON *run_binary(void)
{
	const char *bin = getenv("RKNN_BENCH") ? getenv("RKNN_BENCH") : "build/rknn-bench";
	char cmd[512], *text = NULL;
	size_t len = 0, cap = 0, got;
	FILE *f;
	cJSON *json;

	snprintf(cmd, sizeof(cmd),
		 "%s run --device sim --shape 1x2048x8192 --shape 96x256x512 --dtype int8 "
		 "--iters 3 --warmup 1 --verify none --format json",
		 bin);
	f = popen(cmd, "r");
	assert_non_null(f);
	do {
		if (len + 4096 > cap) {
			char *grown = realloc(text, cap += 65536);

			assert_non_null(grown);
			text = grown;
		}
		got = fread(text + len, 1, cap - len - 1, f);
		len += got;
	} while (got);
	assert_int_equal(pclose(f), 0);
	json = cJSON_ParseWithLength(text, len);
	free(text);
	assert_non_null(json);
	return json;
}

static void test_binary_deterministic(void **state)
{
	cJSON *a = run_binary(), *b = run_binary();
	const cJSON *ra = cJSON_GetObjectItemCaseSensitive(a, "results");
	const cJSON *rb = cJSON_GetObjectItemCaseSensitive(b, "results");

	(void)state;
	assert_int_equal(cJSON_GetArraySize(ra), 2);
	assert_int_equal(cJSON_GetArraySize(rb), 2);
	for (int i = 0; i < 2; i++) {
		const cJSON *sa =
		    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ra, i), "stats");
		const cJSON *sb =
		    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rb, i), "stats");

		assert_non_null(sa);
		assert_true(cJSON_Compare(sa, sb, true));
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
}

/* ---- profiles ---- */

static void test_default_is_the_file(void **state)
{
	struct rb_soc_profile file;
	size_t len, flen;
	const char *text = rb_soc_default_text(&len);
	char *data;

	(void)state;
	assert_int_equal(rb_file_read(SOC_FILE, &data, &flen), 0);
	assert_int_equal(len, flen);
	assert_memory_equal(text, data, len);
	free(data);
	assert_int_equal(rb_soc_load_file(&file, SOC_FILE), 0);
	assert_memory_equal(&file, soc(), sizeof(file));
	assert_string_equal(soc()->label, "rk3588.json v1 (calibrated, see bench/calibration.md)");
	assert_int_equal(soc()->cores, 3);
	assert_int_equal(soc()->cbuf_banks, 12);
}

/* One change to the default profile and the message it must give. */
struct bad_profile {
	const char *parent, *key;
	const char *value; /* JSON text, NULL: delete the key */
	const char *message;
};

static const struct bad_profile bad_profiles[] = {
    {"ddr.gbps_total", "value", "-3",
     "rk3588.json: ddr.gbps_total is -3: must be from 0.1 to 51.2 GB/s (51.2: LPDDR5-6400 on the "
     "RK3588's 64-bit bus)"},
    {"ddr", "gbps_total", NULL, "rk3588.json: ddr.gbps_total is missing"},
    {"ddr", "gbps_total", "\"fast\"",
     "rk3588.json: ddr.gbps_total must be an object like {\"value\": 1, \"source\": "
     "\"perf-anchors §4 A9\"}, not a string"},
    {"ddr.gbps_total", "value", "\"30\"",
     "rk3588.json: ddr.gbps_total.value must be a number, not a string"},
    {"ddr.gbps_total", "value", NULL, "rk3588.json: ddr.gbps_total.value is missing"},
    {"ddr.gbps_total", "source", NULL,
     "rk3588.json: ddr.gbps_total.source is missing: every number says where it comes from "
     "(a perf-anchors or npu-facts section, \"fitted to ...\" or \"assumed ...\")"},
    {"ddr.gbps_total", "source", "\"\"",
     "rk3588.json: ddr.gbps_total.source must be a non-empty string, not an empty string"},
    {"", "ddr", "[]", "rk3588.json: ddr must be an object, not an array"},
    /* physical ranges (docs/reliability.md): an RK3588 has 3 cores, a 100-1000 MHz NPU
     * clock, at most 51.2 GB/s of DRAM; a tiny clock divided by zero in the timing
     * model, a tiny efficiency overflowed it into times faster than efficiency 1 */
    {"cores", "value", "4",
     "rk3588.json: cores is 4: must be 3: the RK3588 has three NPU cores, and plans use all "
     "of them"},
    {"cores", "value", "1",
     "rk3588.json: cores is 1: must be 3: the RK3588 has three NPU cores, and plans use all "
     "of them"},
    {"clock_mhz", "value", "1e-9",
     "rk3588.json: clock_mhz is 1e-09: must be from 100 to 1000 MHz (the RK3588 NPU's clock "
     "range)"},
    {"clock_mhz", "value", "2000",
     "rk3588.json: clock_mhz is 2000: must be from 100 to 1000 MHz (the RK3588 NPU's clock "
     "range)"},
    {"mac.fp16_efficiency", "value", "1e-300",
     "rk3588.json: mac.fp16_efficiency is 1e-300: must be from 0.01 to 2 (1: the TRM's MAC "
     "rate)"},
    {"mac.int8_efficiency", "value", "0",
     "rk3588.json: mac.int8_efficiency is 0: must be from 0.01 to 2 (1: the TRM's MAC rate)"},
    {"ddr.gbps_per_core", "value", "1e5",
     "rk3588.json: ddr.gbps_per_core is 100000: must be from 0.1 to 51.2 GB/s (51.2: LPDDR5-6400 "
     "on the RK3588's 64-bit bus)"},
    {"ddr.gbps_per_stream", "value", "1e-12",
     "rk3588.json: ddr.gbps_per_stream is 1e-12: must be from 0.1 to 51.2 GB/s (51.2: LPDDR5-6400 "
     "on the RK3588's 64-bit bus)"},
    {"cbuf.banks", "value", "12.5",
     "rk3588.json: cbuf.banks is 12.5: must be an integer from 1 to 15"},
    {"cbuf.banks", "value", "8",
     "rk3588.json: cbuf is 8 banks of 32768 bytes: the planner and the programs are made for "
     "the RK3588's 12 banks of 32768 bytes, which a profile cannot change (it describes "
     "timing)"},
    {"", "schema", "\"rknn-bench/soc-2\"",
     "rk3588.json: schema must be \"rknn-bench/soc-1\" (a hardware profile like "
     "configs/soc/rk3588.json)"},
    {"", "schema", NULL, "rk3588.json: schema is missing"},
    {"cbuf", "bank", "12", "rk3588.json: cbuf: unknown key 'bank'; did you mean 'banks'?"},
    {"", "corse", "3", "rk3588.json: unknown key 'corse'; did you mean 'cores'?"},
    {"submit.wake_ns", "value", "-1",
     "rk3588.json: submit.wake_ns is -1: must be a number of ns from 0 to 1e9"},
    {"mac.fp16_per_cycle", "value", "500",
     "rk3588.json: mac.fp16_per_cycle is 500: must be a multiple of mac.channel_atom (32)"},
    {"", "name", "3", "rk3588.json: name must be a non-empty string, not a number"},
    {"", "version", "0", "rk3588.json: version must be a positive integer"},
};

static cJSON *walk(cJSON *root, const char *path)
{
	char key[64];

	while (*path) {
		size_t n = strcspn(path, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		root = cJSON_GetObjectItemCaseSensitive(root, key);
		assert_non_null(root);
		path += n + (path[n] == '.');
	}
	return root;
}

static char *mutate(const struct bad_profile *b)
{
	size_t len;
	const char *text = rb_soc_default_text(&len);
	cJSON *root = cJSON_ParseWithLength(text, len), *parent;
	char *out;

	assert_non_null(root);
	parent = walk(root, b->parent);
	if (b->value && cJSON_GetObjectItemCaseSensitive(parent, b->key))
		assert_true(
		    cJSON_ReplaceItemInObjectCaseSensitive(parent, b->key, cJSON_Parse(b->value)));
	else if (b->value) /* a key the profile does not have: added */
		assert_true(cJSON_AddItemToObject(parent, b->key, cJSON_Parse(b->value)));
	else
		cJSON_DeleteItemFromObjectCaseSensitive(parent, b->key);
	out = cJSON_Print(root);
	cJSON_Delete(root);
	assert_non_null(out);
	return out;
}

static void test_bad_profiles(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_profiles) / sizeof(bad_profiles[0]); i++) {
		struct rb_soc_profile p = {.cores = 42};
		char *text = mutate(&bad_profiles[i]);

		assert_int_equal(rb_soc_load_string(&p, text, strlen(text), "rk3588.json"),
				 -EINVAL);
		assert_string_equal(rb_last_error(), bad_profiles[i].message);
		assert_int_equal(p.cores, 42); /* untouched on error */
		free(text);
	}
}

static void test_profile_syntax_and_extras(void **state)
{
	static const char dup[] =
	    "{\"schema\": \"rknn-bench/soc-1\", \"name\": \"x\", \"name\": \"y\"}";
	struct rb_soc_profile p;
	size_t len;
	const char *text = rb_soc_default_text(&len);
	cJSON *root = cJSON_ParseWithLength(text, len);
	char *extra;

	(void)state;
	assert_int_equal(rb_soc_load_string(&p, "{\n  \"cores\": ", 13, "x.json"), -EINVAL);
	assert_string_equal(
	    rb_last_error(),
	    "x.json: invalid JSON at line 2, column 11: unexpected end of file (is it truncated?)");
	assert_int_equal(rb_soc_load_string(&p, "{}\n x", 5, "x.json"), -EINVAL);
	assert_string_equal(rb_last_error(), "x.json: extra text after the JSON value at line 2, "
					     "column 2: \"x\"");
	assert_int_equal(rb_soc_load_string(&p, " [1]", 4, "x.json"), -EINVAL);
	assert_string_equal(rb_last_error(), "x.json: the top level must be an object");
	assert_int_equal(rb_soc_load_string(&p, dup, strlen(dup), "x.json"), -EINVAL);
	assert_string_equal(rb_last_error(), "x.json: name appears twice");
	assert_int_equal(rb_soc_load_file(&p, "no/such/soc.json"), -ENOENT);
	assert_non_null(strstr(rb_last_error(), "no/such/soc.json"));
	/* keys the model does not use are accepted and ignored */
	cJSON_AddStringToObject(walk(root, "ddr"), "note", "LPDDR5 board");
	cJSON_AddNumberToObject(root, "npu_sram_kib", 956);
	extra = cJSON_Print(root);
	assert_int_equal(rb_soc_load_string(&p, extra, strlen(extra), "dir/extra.json"), 0);
	assert_string_equal(p.label, "extra.json v1 (calibrated, see bench/calibration.md)");
	assert_true(p.ddr_total_gbps == soc()->ddr_total_gbps);
	free(extra);
	cJSON_Delete(root);
}

/* A profile with fewer cores than the emulator is asked for is refused. */
static void test_profile_cores(void **state)
{
	struct rb_soc_profile one = *soc();
	struct rb_sim_config cfg;
	struct rb_npu_device dev;

	(void)state;
	one.cores = 1;
	rb_sim_config_init(&cfg);
	cfg.soc = &one;
	assert_true(rb_npu_device_open_sim(&dev, &cfg) < 0);
	assert_non_null(strstr(rb_last_error(), "3 NPU cores asked for"));
	cfg.cores = 1;
	assert_int_equal(rb_npu_device_open_sim(&dev, &cfg), 0);
	rb_npu_device_close(&dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_more_bytes_never_faster),
	    cmocka_unit_test(test_cycles_lane_waste),
	    cmocka_unit_test(test_many_tiny_tasks_slower),
	    cmocka_unit_test(test_overlap_not_slower),
	    cmocka_unit_test(test_shared_bandwidth),
	    cmocka_unit_test(test_model_deterministic),
	    cmocka_unit_test(test_more_cores_decode),
	    cmocka_unit_test(test_more_cores_prefill),
	    cmocka_unit_test(test_weight_rereads_slower),
	    cmocka_unit_test(test_chain_not_slower),
	    cmocka_unit_test(test_tiny_tasks_slower),
	    cmocka_unit_test(test_binary_deterministic),
	    cmocka_unit_test(test_default_is_the_file),
	    cmocka_unit_test(test_bad_profiles),
	    cmocka_unit_test(test_profile_syntax_and_extras),
	    cmocka_unit_test(test_profile_cores),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
