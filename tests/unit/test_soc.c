/* Tests of the embedded hardware profiles and of the choice of one by board (hw/soc.h,
 * hw/board.h): the three profiles load, the LPDDR5 one keeps the default's numbers and
 * the LPDDR4x one differs only in the extrapolated shared bandwidth; boards are found by
 * compatible or model in a fake device tree, unknown ones fall back to the default. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/board.h"
#include "hw/soc.h"

/* The numbers of a profile, without its name, label and provenance. */
static void expect_same_numbers(const struct rb_soc_profile *a, const struct rb_soc_profile *b)
{
	assert_int_equal(a->cores, b->cores);
	assert_true(a->clock_mhz == b->clock_mhz);
	assert_int_equal(a->fp16_macs, b->fp16_macs);
	assert_int_equal(a->int8_macs, b->int8_macs);
	assert_int_equal(a->channel_atom, b->channel_atom);
	assert_int_equal(a->weight_load_cycles, b->weight_load_cycles);
	assert_int_equal(a->cbuf_banks, b->cbuf_banks);
	assert_int_equal(a->cbuf_bank_bytes, b->cbuf_bank_bytes);
	assert_true(a->ddr_stream_gbps == b->ddr_stream_gbps);
	assert_true(a->ddr_core_gbps == b->ddr_core_gbps);
	assert_true(a->task_fetch_ns == b->task_fetch_ns);
	assert_true(a->task_word_ns == b->task_word_ns);
	assert_true(a->task_pipeline_ns == b->task_pipeline_ns);
	assert_true(a->submit_ioctl_ns == b->submit_ioctl_ns);
	assert_true(a->submit_commit_ns == b->submit_commit_ns);
	assert_true(a->submit_irq_ns == b->submit_irq_ns);
	assert_true(a->submit_wake_ns == b->submit_wake_ns);
}

static void test_builtins_load(void **state)
{
	const struct rb_soc_profile *def = rb_soc_default();
	const struct rb_soc_profile *l4 = rb_soc_builtin("rk3588-lpddr4x");
	const struct rb_soc_profile *l5 = rb_soc_builtin("rk3588-lpddr5");
	size_t len = 0;

	(void)state;
	assert_non_null(def);
	assert_non_null(l4);
	assert_non_null(l5);
	assert_ptr_equal(def, rb_soc_builtin("rk3588"));
	assert_null(rb_soc_builtin("rk3588-ddr3"));
	assert_null(rb_soc_builtin_text("rk3588-ddr3", &len));
	assert_non_null(rb_soc_builtin_text("rk3588-lpddr5", &len));
	assert_true(len > 100);
	assert_string_equal(l4->name, "rk3588-lpddr4x");
	assert_string_equal(l5->name, "rk3588-lpddr5");
	assert_non_null(strstr(l4->label, "rk3588-lpddr4x.json v1"));
	assert_non_null(strstr(def->label, "rk3588.json v1"));
}

/* Every anchor the DDR numbers are fitted to was measured on an LPDDR5 board, so the
 * LPDDR5 profile is the default's numbers; the LPDDR4x one extrapolates the shared cap
 * alone, downwards (configs/soc/rk3588-lpddr4x.json says why). */
static void test_memory_profiles_differ_only_in_shared_ddr(void **state)
{
	const struct rb_soc_profile *def = rb_soc_default();
	const struct rb_soc_profile *l4 = rb_soc_builtin("rk3588-lpddr4x");
	const struct rb_soc_profile *l5 = rb_soc_builtin("rk3588-lpddr5");

	(void)state;
	expect_same_numbers(def, l5);
	assert_true(def->ddr_total_gbps == l5->ddr_total_gbps);
	expect_same_numbers(def, l4);
	assert_true(l4->ddr_total_gbps < l5->ddr_total_gbps);
	assert_true(l4->ddr_total_gbps > 0);
}

/* A fake device tree: files "model" and "compatible" (NUL-separated, as the kernel
 * shows them) in a fresh directory; NULL leaves a file out. */
static void fake_dt(char *dir, const char *model, const char *compat, size_t compat_len)
{
	char path[256];
	FILE *f;

	snprintf(dir, 64, "/tmp/rb-test-dt-XXXXXX");
	assert_non_null(mkdtemp(dir));
	if (model) {
		snprintf(path, sizeof(path), "%s/model", dir);
		f = fopen(path, "wb");
		assert_non_null(f);
		fwrite(model, 1, strlen(model) + 1, f);
		fclose(f);
	}
	if (compat) {
		snprintf(path, sizeof(path), "%s/compatible", dir);
		f = fopen(path, "wb");
		assert_non_null(f);
		fwrite(compat, 1, compat_len, f);
		fclose(f);
	}
}

static void remove_dt(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/model", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/compatible", dir);
	unlink(path);
	rmdir(dir);
}

static void expect_board(const char *model, const char *compat, size_t compat_len, const char *name,
			 enum rb_ddr_type ddr, const char *by)
{
	char dir[64];
	struct rb_board b;

	fake_dt(dir, model, compat, compat_len);
	rb_board_detect(&b, dir);
	remove_dt(dir);
	if (!name) {
		assert_null(b.name);
		assert_int_equal(b.ddr, RB_DDR_UNKNOWN);
		return;
	}
	assert_non_null(b.name);
	assert_string_equal(b.name, name);
	assert_int_equal(b.ddr, ddr);
	assert_string_equal(b.matched_by, by);
	assert_non_null(strstr(b.source, "http"));
}

#define COMPAT(s) s, sizeof(s)

static void test_boards_by_model(void **state)
{
	(void)state;
	/* mainline and vendor spellings of the same boards */
	expect_board("Xunlong Orange Pi 5", NULL, 0, "Orange Pi 5", RB_DDR_LPDDR4X, "model");
	expect_board("Orange Pi 5 Plus", NULL, 0, "Orange Pi 5 Plus", RB_DDR_LPDDR4X, "model");
	expect_board("Xunlong Orange Pi 5 Ultra", NULL, 0, "Orange Pi 5 Ultra", RB_DDR_LPDDR5,
		     "model");
	expect_board("Orange Pi 5 Max", NULL, 0, "Orange Pi 5 Max", RB_DDR_LPDDR5, "model");
	expect_board("Radxa ROCK 5B", NULL, 0, "Radxa ROCK 5B", RB_DDR_LPDDR4X, "model");
	expect_board("Radxa Rock 5B Board", NULL, 0, "Radxa ROCK 5B", RB_DDR_LPDDR4X, "model");
	expect_board("Radxa ROCK 5 Model A", NULL, 0, "Radxa ROCK 5A", RB_DDR_LPDDR4X, "model");
	/* '+' is a word: ROCK 5B+ is not a ROCK 5B */
	expect_board("Radxa ROCK 5B+", NULL, 0, "Radxa ROCK 5B+", RB_DDR_LPDDR5, "model");
	/* a model that only starts like a known one is not that board */
	expect_board("Orange Pi 5 Turbo", NULL, 0, NULL, RB_DDR_UNKNOWN, NULL);
	expect_board("QEMU Virt", NULL, 0, NULL, RB_DDR_UNKNOWN, NULL);
	expect_board(NULL, NULL, 0, NULL, RB_DDR_UNKNOWN, NULL);
}

/* The first compatible string is the stable key; it wins over the model. */
static void test_boards_by_compatible(void **state)
{
	(void)state;
	expect_board(NULL, COMPAT("xunlong,orangepi-5-ultra\0rockchip,rk3588"), "Orange Pi 5 Ultra",
		     RB_DDR_LPDDR5, "compatible");
	expect_board("Some vendor name", COMPAT("radxa,rock-5b\0rockchip,rk3588"), "Radxa ROCK 5B",
		     RB_DDR_LPDDR4X, "compatible");
	/* the SoC's compatible alone names no board */
	expect_board(NULL, COMPAT("rockchip,rk3588"), NULL, RB_DDR_UNKNOWN, NULL);
}

static void expect_choice(const char *model, const char *profile, const char *why)
{
	char dir[64];
	struct rb_soc_profile p;

	fake_dt(dir, model, NULL, 0);
	assert_int_equal(rb_soc_choose(&p, dir), 0);
	remove_dt(dir);
	assert_string_equal(p.name, profile);
	if (!strstr(p.chosen_by, why))
		fail_msg("'%s' not in chosen_by '%s'", why, p.chosen_by);
}

static void test_choose(void **state)
{
	(void)state;
	expect_choice("Xunlong Orange Pi 5", "rk3588-lpddr4x",
		      "board 'Xunlong Orange Pi 5' (LPDDR4x, by its model)");
	expect_choice("Orange Pi 5 Pro", "rk3588-lpddr5", "(LPDDR5, by its model)");
	expect_choice("Pine64 QuartzPro64", "rk3588",
		      "built-in default: board 'Pine64 QuartzPro64' is not one whose memory");
	expect_choice(NULL, "rk3588", "built-in default: no board in the device tree");
	/* the loaders choose nothing */
	assert_string_equal(rb_soc_default()->chosen_by, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_builtins_load),
	    cmocka_unit_test(test_memory_profiles_differ_only_in_shared_ddr),
	    cmocka_unit_test(test_boards_by_model),
	    cmocka_unit_test(test_boards_by_compatible),
	    cmocka_unit_test(test_choose),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
