/* Tests of the emulator's kept host threads (src/sim/pool.c): every job runs once, job 0
 * on the calling thread, the others on threads that stay from call to call; a call made
 * from inside a job (the pool busy) runs its jobs on its own thread; release ends them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "sim/pool.h"

#define JOBS 6

/* Jobs run on this thread so far: a kept thread counts on. */
static _Thread_local int calls_here;

struct record {
	atomic_int runs[JOBS];
	pthread_t who[JOBS];
	int calls[JOBS];          /* calls_here after the job */
	struct rb_sim_pool *pool; /* for the nested call */
	struct record *inner;
};

static void note(void *arg, int job)
{
	struct record *r = arg;

	atomic_fetch_add(&r->runs[job], 1);
	r->who[job] = pthread_self();
	r->calls[job] = ++calls_here;
}

static void run_and_check(struct rb_sim_pool *p, struct record *r, int n)
{
	memset(r, 0, sizeof(*r));
	rb_sim_pool_run(p, n, note, r);
	for (int j = 0; j < JOBS; j++)
		assert_int_equal(atomic_load(&r->runs[j]), j < n ? 1 : 0);
	assert_true(pthread_equal(r->who[0], pthread_self()));
}

/* Every job once; jobs 1..n-1 on threads of their own, the same ones on the next call,
 * more started only when a call has more jobs. */
static void test_kept_threads(void **state)
{
	struct rb_sim_pool p;
	struct record first, again;

	(void)state;
	rb_sim_pool_init(&p);
	run_and_check(&p, &first, 1);
	assert_int_equal(rb_sim_pool_threads(&p), 0);
	run_and_check(&p, &first, 4);
	assert_int_equal(rb_sim_pool_threads(&p), 3);
	for (int j = 1; j < 4; j++) {
		assert_false(pthread_equal(first.who[j], pthread_self()));
		for (int i = 1; i < j; i++)
			assert_false(pthread_equal(first.who[j], first.who[i]));
	}
	for (int j = 1; j < 4; j++)
		assert_int_equal(first.calls[j], 1);
	run_and_check(&p, &again, 3);
	assert_int_equal(rb_sim_pool_threads(&p), 3);
	for (int j = 1; j < 3; j++) {
		assert_true(pthread_equal(again.who[j], first.who[j]));
		assert_int_equal(again.calls[j], 2); /* the thread of the first call */
	}
	run_and_check(&p, &again, JOBS);
	assert_int_equal(rb_sim_pool_threads(&p), JOBS - 1);
	for (int j = 1; j < JOBS; j++)
		assert_int_equal(again.calls[j], j < 3 ? 3 : j < 4 ? 2 : 1);
	rb_sim_pool_release(&p);
}

static void nested(void *arg, int job)
{
	struct record *r = arg;

	note(r, job);
	if (job == 1)
		run_and_check(r->pool, r->inner, 3); /* busy: all on this thread */
}

/* A call from inside a job does not wait for the pool it runs on. */
static void test_busy_runs_on_caller(void **state)
{
	struct rb_sim_pool p;
	struct record outer, inner;

	(void)state;
	rb_sim_pool_init(&p);
	memset(&outer, 0, sizeof(outer));
	outer.pool = &p;
	outer.inner = &inner;
	rb_sim_pool_run(&p, 2, nested, &outer);
	assert_int_equal(atomic_load(&outer.runs[0]), 1);
	assert_int_equal(atomic_load(&outer.runs[1]), 1);
	for (int j = 0; j < 3; j++)
		assert_true(pthread_equal(inner.who[j], outer.who[1]));
	rb_sim_pool_release(&p);
}

/* Released without ever running a job, and after many calls (ASan: nothing leaks). */
static void test_release(void **state)
{
	struct rb_sim_pool p;
	struct record r;

	(void)state;
	rb_sim_pool_init(&p);
	rb_sim_pool_release(&p);
	rb_sim_pool_init(&p);
	for (int i = 0; i < 200; i++)
		run_and_check(&p, &r, 1 + i % JOBS);
	rb_sim_pool_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kept_threads),
	    cmocka_unit_test(test_busy_runs_on_caller),
	    cmocka_unit_test(test_release),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
