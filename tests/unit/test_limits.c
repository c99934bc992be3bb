/* Tests of the resource limits (host/limits.h, npu/job.h): saturating sizes, byte
 * formatting, the memory check against a meminfo fixture, and a job's buffers against
 * the emulator's budget, through the job check and through the sim engine. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "host/limits.h"
#include "run/engine.h"
#include "npu/job.h"
#include "npu/plan.h"

static void assert_error_has(const char *want)
{
	if (!strstr(rb_last_error(), want))
		fail_msg("message '%s' lacks '%s'", rb_last_error(), want);
}

static void test_saturating(void **state)
{
	(void)state;
	assert_int_equal(rb_mul_sat(1u << 31, 1u << 31), UINT64_C(1) << 62);
	assert_true(rb_mul_sat(UINT64_C(1) << 32, UINT64_C(1) << 32) == UINT64_MAX);
	assert_true(rb_mul_sat(0, UINT64_MAX) == 0);
	assert_true(rb_add_sat(UINT64_MAX - 1, 2) == UINT64_MAX);
	assert_true(rb_add_sat(1, 2) == 3);
}

static void test_bytes_text(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(rb_limits_bytes(1023, buf, sizeof(buf)), "1023 bytes");
	assert_string_equal(rb_limits_bytes(1024, buf, sizeof(buf)), "1.0 KiB");
	assert_string_equal(rb_limits_bytes(UINT64_C(5583457484), buf, sizeof(buf)), "5.2 GiB");
	assert_string_equal(rb_limits_bytes(UINT64_MAX, buf, sizeof(buf)), "16.0 EiB");
}

static void test_memory_from_meminfo(void **state)
{
	char path[] = "/tmp/rb-meminfo-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	(void)state;
	assert_non_null(f);
	fputs("MemTotal:        2048 kB\nMemFree:   10 kB\nMemAvailable:    1024 kB\n", f);
	fclose(f);
	setenv("RKNN_BENCH_MEMINFO", path, 1);
	assert_true(rb_limits_mem_available() == 1024 * 1024);
	assert_int_equal(rb_limits_check_memory("x", "host memory", 1024 * 1024), 0);
	assert_int_equal(rb_limits_check_memory("shape 'x'", "host memory", 1024 * 1024 + 1),
			 -ENOMEM);
	assert_error_has("shape 'x' needs 1.0 MiB of host memory (1048577 bytes), more than the "
			 "1.0 MiB available (1048576 bytes, MemAvailable of /tmp/rb-meminfo-");
	unsetenv("RKNN_BENCH_MEMINFO");
	unlink(path);
}

static void plan_of(struct rb_plan *plan, int64_t m, int64_t k, int64_t n)
{
	struct rb_shape s = {.m = m, .k = k, .n = n, .dtype = RB_DTYPE_FP16};
	struct rb_plan_config cfg;

	rb_plan_config_init(&cfg);
	assert_int_equal(rb_plan_init(plan, &s, &cfg), 0);
}

static void test_job_budget(void **state)
{
	struct rb_npu_job_bytes b;
	struct rb_plan plan;
	uint64_t total;

	(void)state;
	plan_of(&plan, 1, 4096, 8192);
	assert_int_equal(rb_npu_job_check_limits(&plan, 0, &b), 0);
	total = b.total;
	assert_true(total == b.a + b.b + b.c + b.regcmd + b.tasks);
	assert_true(b.b >= UINT64_C(4096) * 8192 * 2 && total % 4096 == 0);
	assert_int_equal(rb_npu_job_check_limits(&plan, total, &b), 0);
	assert_int_equal(rb_npu_job_check_limits(&plan, total - 1, &b), -E2BIG);
	assert_error_has("shape 1x4096x8192 fp16 needs 64.");
	assert_error_has("more than the emulator's memory budget");
	rb_plan_release(&plan);
}

/* The sim engine refuses before allocating (an input error) and prepares just under. */
static void test_sim_engine_budget(void **state)
{
	struct rb_inputs in = {.shape = {.m = 4, .k = 64, .n = 64, .dtype = RB_DTYPE_FP16}};
	const struct rb_engine_ops *sim;
	struct rb_engine_opts opts;
	struct rb_npu_job_bytes b;
	struct rb_engine e;
	struct rb_plan plan;

	(void)state;
	plan_of(&plan, 4, 64, 64);
	assert_int_equal(rb_npu_job_bytes(&plan, &b), 0);
	rb_plan_release(&plan);
	rb_engine_opts_init(&opts);
	opts.sim.model_only = true;
	sim = rb_engine_find("sim", &opts);
	assert_non_null(sim);
	opts.sim.mem_budget = b.total - 1;
	assert_int_equal(rb_engine_open(&e, sim, &opts), 0);
	assert_int_equal(sim->check(&e, &in.shape), -EINVAL);
	assert_error_has("more than the emulator's memory budget");
	assert_int_equal(sim->prepare(&e, &in), -EINVAL);
	rb_engine_close(&e);
	opts.sim.mem_budget = b.total;
	assert_int_equal(rb_engine_open(&e, sim, &opts), 0);
	assert_int_equal(sim->check(&e, &in.shape), 0);
	assert_int_equal(sim->prepare(&e, &in), 0);
	rb_engine_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_saturating),          cmocka_unit_test(test_bytes_text),
	    cmocka_unit_test(test_memory_from_meminfo), cmocka_unit_test(test_job_budget),
	    cmocka_unit_test(test_sim_engine_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
