/* The mainline clock and rocket's job timeout (issue 32, item 1): sim:rocket runs the
 * NPU at the mainline device tree's 200 MHz unless a profile says otherwise, a board's
 * clock is read from sysfs (or debugfs), and the planner cuts a core's tasks into
 * submits that each model under half of the kernel's 500 ms: 4096x4096x4096 fp16 on
 * one core, modeled only (no arithmetic), runs split and times out unsplit. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "numeric/inputs.h"
#include "dev/transport.h"
#include "npu/job.h"
#include "sim/sim.h"

#define MS_NS UINT64_C(1000000)

static struct rb_sim_kmod *kmod_of(struct rb_npu_device *dev)
{
	return rb_transport_sim_kmod(rb_npu_device_transport(dev));
}

/* sim:rocket without a profile runs at 200 MHz, sim at the profile's 1 GHz; a profile
 * given (--soc) keeps its clock. */
static void test_mainline_clock(void **state)
{
	struct rb_npu_device dev;
	struct rb_soc_profile soc = *rb_soc_default();
	struct rb_sim_config cfg;

	(void)state;
	assert_int_equal(rb_npu_device_open_sim_rocket(&dev, NULL), 0);
	assert_true(dev.soc.clock_mhz == RB_SOC_MAINLINE_CLOCK_MHZ);
	assert_non_null(strstr(dev.soc.label, "at 200 MHz"));
	assert_non_null(strstr(dev.soc.chosen_by, "assigned-clock-rates"));
	rb_npu_device_close(&dev);
	assert_int_equal(rb_npu_device_open_sim(&dev, NULL), 0);
	assert_true(dev.soc.clock_mhz == 1000);
	rb_npu_device_close(&dev);
	rb_sim_config_init(&cfg);
	cfg.soc = &soc;
	assert_int_equal(rb_npu_device_open_sim_rocket(&dev, &cfg), 0);
	assert_true(dev.soc.clock_mhz == 1000);
	rb_npu_device_close(&dev);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* On a board the kernel's clock wins: devfreq (vendor), else the clock's debugfs rate
 * (mainline); a pinned profile keeps its own. */
static void test_board_clock(void **state)
{
	char root[] = "/tmp/rb-sysfs-XXXXXX", dir[256], file[300], from[256];
	struct rb_soc_profile soc = *rb_soc_default();

	(void)state;
	assert_non_null(mkdtemp(root));
	assert_int_equal(rb_soc_read_npu_clock_hz(root, from, sizeof(from)), 0);
	rb_soc_for_driver(&soc, false, root);
	assert_true(soc.clock_mhz == 1000); /* a vendor kernel that says nothing */
	snprintf(dir, sizeof(dir), "%s/kernel", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/kernel/debug", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/kernel/debug/clk", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/kernel/debug/clk/scmi_clk_npu", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(file, sizeof(file), "%s/clk_rate", dir);
	write_file(file, "600000000\n");
	assert_int_equal(rb_soc_read_npu_clock_hz(root, from, sizeof(from)), 600000000);
	assert_string_equal(from, file);
	rb_soc_for_driver(&soc, true, root);
	assert_true(soc.clock_mhz == 600);
	assert_non_null(strstr(soc.chosen_by, "600 MHz read from"));
	soc = *rb_soc_default();
	soc.pinned = true;
	rb_soc_for_driver(&soc, true, root);
	assert_true(soc.clock_mhz == 1000);
	/* outside the 100-1000 MHz a profile may have (docs/reliability.md): not taken,
	 * 1 Hz divided by zero in the timing model */
	write_file(file, "1\n");
	assert_int_equal(rb_soc_read_npu_clock_hz(root, from, sizeof(from)), 0);
	write_file(file, "2000000000\n");
	assert_int_equal(rb_soc_read_npu_clock_hz(root, from, sizeof(from)), 0);
	unlink(file);
	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/kernel/debug/clk", root);
	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/kernel/debug", root);
	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/kernel", root);
	rmdir(dir);
	rmdir(root);
}

/* 4096x4096x4096 fp16 on one core of sim:rocket, timing only, planned with the
 * submits cut for a job timeout of timeout_ms (huge: one job for the core). Returns the
 * run's result; *fit gets the plan's fit, *longest the longest job's time. */
static int run_4096(const struct rb_soc_profile *soc, unsigned timeout_ms,
		    struct rb_plan_timeout_fit *fit, uint64_t *longest, double *device_us)
{
	struct rb_shape s = {4096, 4096, 4096, RB_DTYPE_FP16};
	struct rb_sim_config sc;
	struct rb_npu_device dev;
	struct rb_plan_config cfg;
	struct rb_plan plan;
	struct rb_inputs in;
	struct rb_npu_job *job;
	struct rb_npu_job_times t = {0};
	int ret;

	rb_sim_config_init(&sc);
	sc.model_only = true;
	sc.soc = soc;
	assert_int_equal(rb_npu_device_open_sim_rocket(&dev, &sc), 0);
	rb_plan_config_default(&cfg, &s, 0x1);
	cfg.mainline = true;
	assert_int_equal(rb_plan_init(&plan, &s, &cfg), 0);
	if (timeout_ms)
		assert_int_equal(rb_plan_fit_timeout(&plan, &dev.soc, timeout_ms, true), 0);
	else
		assert_int_equal(rb_npu_fit_plan(&plan, &dev), 0);
	*fit = plan.timeout_fit;
	memset(&in, 0, sizeof(in));
	in.shape = s;
	assert_int_equal(rb_npu_job_new(&job, &dev, &plan, &in, RB_LAUNCH_FENCES), 0);
	ret = rb_npu_job_run(job, NULL, &t);
	*longest = rb_sim_kmod_longest_job_ns(kmod_of(&dev));
	*device_us = t.device_us;
	if (ret)
		assert_non_null(strstr(rb_sim_kmod_log(kmod_of(&dev)), "more than 500 ms"));
	rb_npu_job_free(job);
	rb_plan_release(&plan);
	rb_npu_device_close(&dev);
	return ret;
}

static void test_split_4096(void **state)
{
	struct rb_soc_profile mainline = *rb_soc_default(), vendor = *rb_soc_default();
	struct rb_plan_timeout_fit fit;
	uint64_t longest;
	double us200, us1000, us_unsplit;

	(void)state;
	rb_soc_for_driver(&mainline, true, NULL);
	/* planned for rocket's timeout: every job under half of it, and the run passes */
	assert_int_equal(run_4096(&mainline, 0, &fit, &longest, &us200), 0);
	print_message("4096^3 fp16, 1 core, 200 MHz (modeled): unsplit %.1f ms, %zu submits of at "
		      "most %.1f ms planned, longest job run %.1f ms, device %.1f ms\n",
		      (double)fit.unsplit_ns / 1e6, fit.submits_after, (double)fit.longest_ns / 1e6,
		      (double)longest / 1e6, us200 / 1e3);
	assert_int_equal(fit.timeout_ms, 500);
	assert_true(fit.unsplit_ns > 500 * MS_NS);
	assert_true(fit.submits_after > fit.submits_before);
	assert_true(fit.longest_ns <= 250 * MS_NS);
	assert_true(longest > 0 && longest <= 250 * MS_NS);
	/* one job for the core: the kernel times it out at 500 ms and resets the core */
	assert_int_equal(run_4096(&mainline, 1000000, &fit, &longest, &us_unsplit), -ETIMEDOUT);
	assert_int_equal(fit.submits_after, 1);
	/* the same at the vendor kernels' 1 GHz: faster, and still split for rocket */
	assert_int_equal(run_4096(&vendor, 0, &fit, &longest, &us1000), 0);
	print_message("at 1 GHz (modeled): unsplit %.1f ms, %zu submits, device %.1f ms\n",
		      (double)fit.unsplit_ns / 1e6, fit.submits_after, us1000 / 1e3);
	assert_true(us1000 < us200);
}

/* `plan` says what it did. */
static void test_note(void **state)
{
	struct rb_shape s = {4096, 4096, 4096, RB_DTYPE_FP16};
	struct rb_soc_profile soc = *rb_soc_default();
	struct rb_plan_config cfg;
	struct rb_plan plan;
	char note[320];

	(void)state;
	rb_soc_for_driver(&soc, true, NULL);
	rb_plan_config_default(&cfg, &s, 0x1);
	cfg.mainline = true;
	assert_int_equal(rb_plan_init(&plan, &s, &cfg), 0);
	assert_int_equal(rb_plan_fit_driver(&plan, &soc), 0);
	rb_plan_timeout_note(&plan, "rocket", note, sizeof(note));
	assert_non_null(strstr(note, "for rocket's 500 ms job timeout"));
	assert_non_null(strstr(note, "at 200 MHz"));
	for (size_t i = 1; i < plan.cores[0].n_submits; i++) /* a new job reads its weights */
		assert_false(
		    plan.cores[0].tasks[plan.cores[0].submit_ends[i - 1]].npu.weight_reuse);
	rb_plan_release(&plan);
	/* the vendor kernel's 6000 ms: nothing to cut at 1 GHz */
	soc = *rb_soc_default();
	cfg.mainline = false;
	assert_int_equal(rb_plan_init(&plan, &s, &cfg), 0);
	assert_int_equal(rb_plan_fit_driver(&plan, &soc), 0);
	assert_int_equal(plan.timeout_fit.submits_after, plan.timeout_fit.submits_before);
	rb_plan_timeout_note(&plan, "rknpu", note, sizeof(note));
	assert_non_null(strstr(note, "within half of rknpu's 6000 ms"));
	rb_plan_release(&plan);
}

/* Mainline tiles come in fours (issue 32, item 2): rocket-userspace, validated on
 * silicon, takes M % 4 == 0 only, so a mainline plan pads M (5 -> 8, 394 -> 396) and
 * every task, every cube its rows sit in, is a multiple of 4 rows, whichever axis is
 * split; both run and verify on sim:rocket. The vendor plan keeps M. */
static void test_mainline_rows_in_fours(void **state)
{
	static const struct rb_shape shapes[] = {{5, 64, 64, RB_DTYPE_FP16},
						 {394, 394, 394, RB_DTYPE_FP16},
						 {394, 394, 394, RB_DTYPE_INT8}};
	static const enum rb_plan_axis axes[] = {RB_PLAN_AXIS_N, RB_PLAN_AXIS_M};

	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		for (size_t x = 0; x < 2; x++) {
			struct rb_plan_config cfg;
			struct rb_plan plan;

			rb_plan_config_default(&cfg, &shapes[i], 0x7);
			cfg.axis = axes[x];
			cfg.mainline = true;
			assert_int_equal(rb_plan_init(&plan, &shapes[i], &cfg), 0);
			assert_int_equal(plan.m % 4, 0);
			assert_true(plan.m >= shapes[i].m && plan.m < shapes[i].m + 4);
			for (unsigned c = 0; c < plan.n_cores; c++)
				for (size_t t = 0; t < plan.cores[c].n_tasks; t++) {
					const struct rb_npu_task *n = &plan.cores[c].tasks[t].npu;

					assert_int_equal(n->m % 4, 0);
					assert_int_equal(n->a_height % 4, 0);
					assert_int_equal(n->c_height % 4, 0);
				}
			rb_plan_release(&plan);
			cfg.mainline = false;
			assert_int_equal(rb_plan_init(&plan, &shapes[i], &cfg), 0);
			assert_int_equal(plan.m, shapes[i].m);
			rb_plan_release(&plan);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mainline_clock),
	    cmocka_unit_test(test_board_clock),
	    cmocka_unit_test(test_split_4096),
	    cmocka_unit_test(test_note),
	    cmocka_unit_test(test_mainline_rows_in_fours),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
