/* Host threads kept from call to call: the emulator runs the NPU cores of every run,
 * and the workers of every task, on threads, and starting a thread costs 40-140 µs in a
 * VM (2 starts and joins, measured), a few percent of a decode run.
 *
 * A pool is used by one caller at a time (a core's tasks, or the cores of one NPU under
 * the kernel's lock); a call made while another is in progress runs its jobs on its own
 * thread, one after another. The pool owns its threads: rb_sim_pool_release ends and
 * joins them. */
#ifndef RB_SIM_POOL_H
#define RB_SIM_POOL_H

#include <pthread.h>
#include <stdbool.h>

struct rb_sim_pool_thread;

struct rb_sim_pool {
	pthread_mutex_t lock;
	pthread_cond_t go, done;
	struct rb_sim_pool_thread **threads; /* threads[i] runs job i + 1 */
	int started;                         /* threads running */
	unsigned long round;                 /* one per rb_sim_pool_run */
	int jobs, left;                      /* this round's jobs, those not finished */
	void (*fn)(void *arg, int job);
	void *arg;
	bool busy, quit;
};

void rb_sim_pool_init(struct rb_sim_pool *p);
void rb_sim_pool_release(struct rb_sim_pool *p);

/* fn(arg, j) for every j in [0, n): job 0 on the calling thread, the others on the
 * pool's threads (started when first needed, then kept); returns when all are done.
 * Jobs whose thread cannot be started run on the calling thread after job 0. */
void rb_sim_pool_run(struct rb_sim_pool *p, int n, void (*fn)(void *arg, int job), void *arg);

/* Threads the pool holds (tests). */
int rb_sim_pool_threads(struct rb_sim_pool *p);

#endif
