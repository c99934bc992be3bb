/* Unit tests of core/progress: the ETA over the whole command, the log form (a line per
 * item and at most one per interval between them, each with done/total, elapsed and
 * ETA) and the terminal form (one live line redrawn, results kept on lines of their
 * own). Times are passed in, so nothing waits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/progress.h"

struct capture {
	char *buf;
	size_t len;
	FILE *f;
};

static void capture_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
}

static size_t count(const char *text, const char *what)
{
	size_t n = 0;

	for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* Work done over the whole command: 1 of 4 units after 10 s leaves 30 s; half of an
 * item of 2 units counts as 1 more. Nothing done yet: unknown. */
static void test_eta(void **state)
{
	struct rb_progress p;
	struct capture c;

	(void)state;
	capture_open(&c);
	rb_progress_init(&p, c.f, false, 3, 4.0, 100.0);
	assert_true(isnan(rb_progress_eta_s(&p, 100.0)));
	rb_progress_item(&p, "a", 1.0, 100.0);
	rb_progress_item_done(&p, "ok", 110.0);
	assert_true(fabs(rb_progress_eta_s(&p, 110.0) - 30.0) < 1e-9);
	rb_progress_item(&p, "b", 2.0, 110.0);
	rb_progress_update(&p, 0.5, "half", 120.0);
	assert_true(fabs(rb_progress_eta_s(&p, 120.0) - 20.0) < 1e-9); /* 2 of 4 in 20 s */
	rb_progress_update(&p, 7.0, "clamped", 130.0); /* more than all of it: all of it */
	assert_true(fabs(rb_progress_eta_s(&p, 130.0) - 10.0) < 1e-9); /* 3 of 4 in 30 s */
	rb_progress_item_done(&p, "ok", 130.0);
	rb_progress_item(&p, "c", 1.0, 130.0);
	rb_progress_item_done(&p, "ok", 140.0);
	assert_true(rb_progress_eta_s(&p, 140.0) == 0);
	fclose(c.f);
	free(c.buf);
}

/* Not a terminal: each finished item is a line with its result and the counts; between
 * items a progress line at most every 10 s; no carriage return, no escape. */
static void test_log_lines(void **state)
{
	struct rb_progress p;
	struct capture c;

	(void)state;
	capture_open(&c);
	rb_progress_init(&p, c.f, false, 2, 2.0, 0.0);
	rb_progress_item(&p, "ffn_up-0", 1.0, 0.0);
	for (int s = 1; s <= 25; s++) /* an update a second: lines at 10 s and 20 s */
		rb_progress_update(&p, s / 25.0, "run 3/9", (double)s);
	rb_progress_item_done(&p, "1196.9 µs", 25.0);
	rb_progress_item(&p, "ffn_out-0", 1.0, 25.0);
	rb_progress_item_done(&p, "1195.9 µs", 50.0);
	rb_progress_end(&p);
	fclose(c.f);
	assert_int_equal(count(c.buf, "\n"), 4);
	assert_non_null(strstr(c.buf, "rknn-bench: 0/2 done, 10 s elapsed, ETA 40 s | "
				      "ffn_up-0: run 3/9\n"));
	assert_non_null(strstr(c.buf, "rknn-bench: 0/2 done, 20 s elapsed, ETA 30 s"));
	assert_non_null(strstr(c.buf, "rknn-bench: [1/2] ffn_up-0: 1196.9 µs | 1/2 done, 25 s "
				      "elapsed, ETA 25 s\n"));
	assert_non_null(strstr(c.buf, "rknn-bench: [2/2] ffn_out-0: 1195.9 µs | 2/2 done, 50 s "
				      "elapsed, ETA 0 s\n"));
	assert_null(strchr(c.buf, '\r'));
	assert_null(strchr(c.buf, '\033'));
	free(c.buf);
}

/* A terminal: the live line is redrawn in place ("\r", erase), a result is printed
 * after erasing it and ends with a newline, so it stays; the end erases the last live
 * line. */
static void test_live_line(void **state)
{
	struct rb_progress p;
	struct capture c;
	const char *result;

	(void)state;
	capture_open(&c);
	rb_progress_init(&p, c.f, true, 2, 2.0, 0.0);
	rb_progress_item(&p, "a", 1.0, 0.0);
	rb_progress_update(&p, 0.5, "model 5/10", 1.0);
	rb_progress_print(&p, "a note");
	rb_progress_item_done(&p, "12.5 µs", 2.0);
	rb_progress_item(&p, "b", 1.0, 2.0);
	rb_progress_end(&p);
	fclose(c.f);
	assert_non_null(strstr(c.buf, "\r\033[K[1/2] a: model 5/10 | 0/2 done, 1 s elapsed, "
				      "ETA 3 s"));
	assert_non_null(strstr(c.buf, "\r\033[Ka note\n\r\033[K[1/2] a: model 5/10"));
	result = strstr(c.buf, "\r\033[Krknn-bench: [1/2] a: 12.5 µs | 1/2 done, 2 s elapsed, "
			       "ETA 2 s\n");
	assert_non_null(result);
	assert_non_null(strstr(result, "\r\033[K[2/2] b | 1/2 done"));
	assert_int_equal(strcmp(c.buf + strlen(c.buf) - 4, "\r\033[K"), 0);
	free(c.buf);
}

/* Long commands: minutes and hours. */
static void test_durations(void **state)
{
	struct rb_progress p;
	struct capture c;
	char line[128];

	(void)state;
	capture_open(&c);
	rb_progress_init(&p, c.f, false, 10, 10.0, 0.0);
	rb_progress_item(&p, "a", 1.0, 0.0);
	rb_progress_item_done(&p, "ok", 200.0);
	rb_progress_counts(&p, 200.0, line, sizeof(line));
	assert_string_equal(line, "1/10 done, 3 min 20 s elapsed, ETA 30 min 00 s");
	rb_progress_counts(&p, 4000.0, line, sizeof(line));
	assert_string_equal(line, "1/10 done, 1 h 06 min elapsed, ETA 10 h 00 min");
	fclose(c.f);
	free(c.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_eta),
	    cmocka_unit_test(test_log_lines),
	    cmocka_unit_test(test_live_line),
	    cmocka_unit_test(test_durations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
