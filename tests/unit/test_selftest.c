/* Tests of the selftest library: rung 3's programs are the golden set's word for word
 * (tests/golden) at the golden addresses; the bug report's ustar writer (headers,
 * checksums, padding) and its name scrubbing; the ladder on the emulator, and a bad
 * option refused before anything runs. Run from the top of the tree (make check does). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu/regcmd.h"
#include "selftest/bundle.h"
#include "selftest/selftest.h"

static size_t load_hex(const char *path, uint64_t *words, size_t max)
{
	FILE *f = fopen(path, "r");
	char line[64];
	size_t n = 0;

	if (!f)
		fail_msg("cannot open %s (run from the top of the tree)", path);
	while (fgets(line, sizeof(line), f) && n < max)
		words[n++] = strtoull(line, NULL, 16);
	fclose(f);
	return n;
}

static void test_golden_programs(void **state)
{
	static const uint32_t addr[3] = {0xffff8000u, 0xffff9000u, 0xffffa000u};

	(void)state;
	for (size_t i = 0; i < RB_SELFTEST_GOLDEN; i++) {
		struct rb_npu_task task;
		struct rb_shape shape;
		struct rb_regcmd rc;
		const char *name;
		char path[128];
		uint64_t golden[200];
		size_t n;

		assert_int_equal(rb_selftest_golden_task(i, addr, false, &task, &shape, &name), 0);
		snprintf(path, sizeof(path), "tests/golden/%s.hex", name);
		n = load_hex(path, golden, 200);
		rb_regcmd_init(&rc);
		assert_int_equal(rb_regcmd_emit_task(&rc, &task), 0);
		assert_int_equal(rc.count, n);
		for (size_t w = 0; w < n; w++)
			if (rc.words[w] != golden[w])
				fail_msg("%s word %zu: %016" PRIx64 ", golden %016" PRIx64, path, w,
					 rc.words[w], golden[w]);
		rb_regcmd_release(&rc);
	}
	assert_int_equal(rb_selftest_golden_task(RB_SELFTEST_GOLDEN, NULL, false, NULL, NULL, NULL),
			 -EINVAL);
}

static unsigned long octal_at(const unsigned char *h, size_t off, size_t len)
{
	char buf[16];

	memcpy(buf, h + off, len);
	buf[len] = '\0';
	return strtoul(buf, NULL, 8);
}

static void test_tar(void **state)
{
	struct rb_bundle b = {0};
	unsigned char *data = NULL;
	size_t size = 0;
	FILE *f = open_memstream((char **)&data, &size);
	unsigned sum = 0;

	(void)state;
	assert_int_equal(rb_bundle_add(&b, "README.txt", "hello\n", 6), 0);
	assert_int_equal(rb_bundle_add(&b, "programs/core0.hex", "0000000000000000\n", 17), 0);
	assert_int_equal(rb_bundle_add(&b, "", "x", 1), -EINVAL);
	assert_int_equal(rb_bundle_write_tar(&b, f, 1000), 0);
	fclose(f);
	/* two headers, two padded contents, two zero blocks */
	assert_int_equal(size, 6 * 512);
	assert_string_equal((const char *)data, "README.txt");
	assert_memory_equal(data + 257,
			    "ustar\0"
			    "00",
			    8);
	assert_int_equal(octal_at(data, 124, 11), 6);
	assert_int_equal(octal_at(data, 136, 11), 1000);
	assert_int_equal(data[156], '0');
	for (size_t i = 0; i < 512; i++)
		sum += (i >= 148 && i < 156) ? ' ' : data[i];
	assert_int_equal(octal_at(data, 148, 6), sum);
	assert_memory_equal(data + 512, "hello\n", 6);
	assert_int_equal(data[512 + 6], 0);
	assert_string_equal((const char *)data + 1024, "programs/core0.hex");
	for (size_t i = 4 * 512; i < size; i++)
		assert_int_equal(data[i], 0);
	free(data);
	rb_bundle_release(&b);
}

static void test_scrub(void **state)
{
	static const char text[] = "host board7 on board7.lan, not myboard7 or board7x: board7";
	struct rb_bundle b = {0};

	(void)state;
	assert_int_equal(rb_bundle_add(&b, "a", text, sizeof(text) - 1), 0);
	assert_int_equal(rb_bundle_scrub(&b, "board7", "(host)"), 0);
	assert_int_equal(b.files[0].len,
			 strlen("host (host) on board7.lan, not myboard7 or board7x: (host)"));
	assert_memory_equal(b.files[0].data,
			    "host (host) on board7.lan, not myboard7 or board7x: (host)",
			    b.files[0].len);
	rb_bundle_release(&b);
}

static void test_ladder_on_sim(void **state)
{
	struct rb_selftest_opts o;
	struct rb_selftest st;

	(void)state;
	rb_selftest_opts_init(&o);
	o.device = "sim";
	o.soak_s = 0; /* one soak case */
	assert_int_equal(rb_selftest_run(&st, &o, NULL, NULL), 0);
	assert_int_equal(st.failure.rung, -1);
	for (int i = 0; i < RB_SELFTEST_RUNGS; i++)
		assert_true(st.rungs[i].ran && st.rungs[i].passed);
	assert_int_equal(st.rungs[8].n_cases, 1);
	assert_int_equal(st.n_results, 15); /* the calibration runs */
	assert_true(st.results[0].modeled);
	rb_selftest_release(&st);

	o.soak_s = -1;
	assert_int_equal(rb_selftest_run(&st, &o, NULL, NULL), -EINVAL);
	assert_false(st.rungs[0].ran);
	rb_selftest_release(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_golden_programs),
	    cmocka_unit_test(test_tar),
	    cmocka_unit_test(test_scrub),
	    cmocka_unit_test(test_ladder_on_sim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
