/* Unit tests of host/perfctr: the reasons given for unavailable counters, phase
 * accounting on the real counters of this machine (whatever they expose), the JSON and
 * table forms of a hand-made struct rb_perf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "assert.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/perfctr.h"

static void test_reasons(void **state)
{
	char buf[RB_PERFCTR_WHY];

	(void)state;
	rb_perfctr_reason(buf, sizeof(buf), ENOENT, 2);
	assert_string_equal(buf, "not exposed by this CPU or VM (ENOENT)");
	rb_perfctr_reason(buf, sizeof(buf), EOPNOTSUPP, 2);
	assert_string_equal(buf, "not exposed by this CPU or VM (EOPNOTSUPP)");
	rb_perfctr_reason(buf, sizeof(buf), EACCES, 3);
	assert_contains(buf, "kernel.perf_event_paranoid is 3");
	assert_contains(buf, "run as root");
	rb_perfctr_reason(buf, sizeof(buf), EPERM, INT_MIN);
	assert_contains(buf, "not permitted");
	rb_perfctr_reason(buf, sizeof(buf), ENOSYS, 2);
	assert_contains(buf, "no perf events");
	rb_perfctr_reason(buf, sizeof(buf), EBUSY, 2);
	assert_contains(buf, "perf_event_open failed: ");
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(rb_perfctr_event_name(RB_PERFCTR_TASK_CLOCK), "task_clock_ns");
	assert_string_equal(rb_perfctr_event_name(RB_PERFCTR_CACHE_MISSES), "cache_misses");
	assert_string_equal(rb_phase_name(RB_PHASE_PACK_B), "pack_b");
	assert_string_equal(rb_phase_name(RB_PHASE_VERIFY), "verify");
	assert_string_equal(rb_phase_name(RB_PHASE_NONE), "none");
}

static volatile double sink;

/* Spins until this thread has used `ms` of CPU (not wall) time: robust on a busy host. */
static void burn_ms(double ms)
{
	struct timespec ts;
	double t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	t0 = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
	do {
		for (int i = 0; i < 1000; i++)
			sink += i * 0.5;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		t = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
	} while (t - t0 < ms);
}

/* Every event is open or has a reason; counts land in the phase that was entered. */
static void test_counting(void **state)
{
	struct rb_perfctr pc;

	(void)state;
	rb_perfctr_open(&pc);
	for (int ev = 0; ev < RB_PERFCTR_EVENTS; ev++)
		assert_true((pc.fd[ev] >= 0) != (pc.perf.why[ev][0] != '\0'));
	rb_perfctr_enter(&pc, RB_PHASE_COMPUTE);
	burn_ms(3);
	rb_perfctr_enter(&pc, RB_PHASE_VERIFY);
	rb_perfctr_enter(&pc, RB_PHASE_COMPUTE);
	burn_ms(1);
	rb_perfctr_enter(&pc, RB_PHASE_NONE);
	burn_ms(1); /* counted nowhere */
	rb_perfctr_enter(&pc, RB_PHASE_NONE);
	assert_int_equal(pc.perf.runs[RB_PHASE_COMPUTE], 2);
	assert_int_equal(pc.perf.runs[RB_PHASE_VERIFY], 1);
	assert_int_equal(pc.perf.runs[RB_PHASE_PACK_A], 0);
	if (!pc.perf.why[RB_PERFCTR_TASK_CLOCK][0]) { /* ~4 ms of CPU in COMPUTE */
		assert_true(pc.perf.sum[RB_PHASE_COMPUTE][RB_PERFCTR_TASK_CLOCK] > 2e6);
		assert_true(pc.perf.sum[RB_PHASE_COMPUTE][RB_PERFCTR_TASK_CLOCK] < 1e9);
	}
	rb_perfctr_reset(&pc);
	assert_int_equal(pc.perf.runs[RB_PHASE_COMPUTE], 0);
	assert_true(pc.perf.sum[RB_PHASE_COMPUTE][RB_PERFCTR_TASK_CLOCK] == 0);
	rb_perfctr_close(&pc);
	rb_perfctr_close(&pc); /* safe twice */
	rb_perfctr_enter(NULL, RB_PHASE_PACK_A);
	rb_perfctr_reset(NULL);
	rb_perfctr_close(NULL);
}

static void *burn_thread(void *arg)
{
	(void)arg;
	burn_ms(4);
	return NULL;
}

/* Threads started after the counters opened count (inherit): the reference GEMM's and
 * the emulator's workers. */
static void test_threads_counted(void **state)
{
	struct rb_perfctr pc;
	pthread_t tid;

	(void)state;
	rb_perfctr_open(&pc);
	if (pc.perf.why[RB_PERFCTR_TASK_CLOCK][0]) {
		print_message("task-clock unavailable here (%s): nothing to check\n",
			      pc.perf.why[RB_PERFCTR_TASK_CLOCK]);
		rb_perfctr_close(&pc);
		return;
	}
	rb_perfctr_enter(&pc, RB_PHASE_COMPUTE);
	assert_int_equal(pthread_create(&tid, NULL, burn_thread, NULL), 0);
	pthread_join(tid, NULL); /* the calling thread sleeps meanwhile */
	rb_perfctr_enter(&pc, RB_PHASE_NONE);
	assert_true(pc.perf.sum[RB_PHASE_COMPUTE][RB_PERFCTR_TASK_CLOCK] > 3e6);
	rb_perfctr_close(&pc);
}

static struct rb_perf sample_perf(void)
{
	struct rb_perf p;

	memset(&p, 0, sizeof(p));
	snprintf(p.why[RB_PERFCTR_CYCLES], RB_PERFCTR_WHY,
		 "not exposed by this CPU or VM (ENOENT)");
	p.runs[RB_PHASE_PACK_A] = 4;
	p.sum[RB_PHASE_PACK_A][RB_PERFCTR_TASK_CLOCK] = 10000; /* 2.5 µs per run */
	p.sum[RB_PHASE_PACK_A][RB_PERFCTR_PAGE_FAULTS] = 2;
	return p;
}

static double number(const cJSON *o, const char *path0, const char *path1, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, path0);

	v = path1 ? cJSON_GetObjectItemCaseSensitive(v, path1) : v;
	v = cJSON_GetObjectItemCaseSensitive(v, key);
	if (cJSON_IsNull(v))
		return NAN;
	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static void test_json(void **state)
{
	struct rb_perf p = sample_perf();
	cJSON *o = rb_perf_json(&p);
	const cJSON *why;

	(void)state;
	assert_non_null(o);
	assert_true(number(o, "phases", "pack_a", "runs") == 4);
	assert_true(number(o, "phases", "pack_a", "task_clock_ns") == 2500);
	assert_true(number(o, "phases", "pack_a", "page_faults") == 0.5);
	assert_true(isnan(number(o, "phases", "pack_a", "cycles")));
	assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "phases"),
						     "pack_b")); /* never ran */
	why = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "unavailable"),
					       "cycles");
	assert_true(cJSON_IsString(why));
	assert_string_equal(why->valuestring, "not exposed by this CPU or VM (ENOENT)");
	assert_null(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(o, "unavailable"), "instructions"));
	assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "counted")));
	cJSON_Delete(o);
}

static void test_table(void **state)
{
	struct rb_perf p = sample_perf();
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	(void)state;
	assert_non_null(f);
	rb_perf_print(f, "'x' on sim", &p);
	rb_perf_print_unavailable(f, &p);
	fclose(f);
	assert_contains(text, "perf: 'x' on sim (host, measured");
	assert_contains(text, "  pack_a        4       2.5 µs     0.0      0.5          n/a");
	assert_contains(text, "perf: cycles unavailable: not exposed by this CPU or VM (ENOENT)\n");
	assert_null(strstr(text, "pack_b"));
	assert_null(strstr(text, "instructions unavailable"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reasons),  cmocka_unit_test(test_names),
	    cmocka_unit_test(test_counting), cmocka_unit_test(test_threads_counted),
	    cmocka_unit_test(test_json),     cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
