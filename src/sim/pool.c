/* Host threads kept from call to call (pool.h). */
#include <signal.h>
#include <stdlib.h>

#include "sim/pool.h"

struct rb_sim_pool_thread {
	struct rb_sim_pool *pool;
	int job;             /* the job it runs in each round */
	unsigned long round; /* the last round it saw */
	pthread_t tid;
};

void rb_sim_pool_init(struct rb_sim_pool *p)
{
	*p = (struct rb_sim_pool){0};
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
}

/* Waits for each round, runs its job of it if the round has one. */
static void *pool_main(void *arg)
{
	struct rb_sim_pool_thread *t = arg;
	struct rb_sim_pool *p = t->pool;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->quit && p->round == t->round)
			pthread_cond_wait(&p->go, &p->lock);
		if (p->quit)
			break;
		t->round = p->round;
		if (t->job >= p->jobs)
			continue;
		pthread_mutex_unlock(&p->lock);
		p->fn(p->arg, t->job);
		pthread_mutex_lock(&p->lock);
		if (--p->left == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Threads for jobs 1..n-1, as many as can be started (p->lock held). They block every
 * signal: a kept thread idles between runs, and a signal (SIGINT stopping a run) must
 * reach the thread that waits for it. */
static void grow(struct rb_sim_pool *p, int n)
{
	struct rb_sim_pool_thread **v;
	sigset_t all, old;

	if (n - 1 <= p->started)
		return;
	v = realloc(p->threads, (size_t)(n - 1) * sizeof(*v));
	if (!v)
		return;
	p->threads = v;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (p->started < n - 1) {
		struct rb_sim_pool_thread *t = calloc(1, sizeof(*t));

		if (!t)
			break;
		*t = (struct rb_sim_pool_thread){
		    .pool = p, .job = p->started + 1, .round = p->round};
		if (pthread_create(&t->tid, NULL, pool_main, t) != 0) {
			free(t);
			break;
		}
		p->threads[p->started++] = t;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void rb_sim_pool_run(struct rb_sim_pool *p, int n, void (*fn)(void *arg, int job), void *arg)
{
	int shared;

	pthread_mutex_lock(&p->lock);
	if (p->busy || n <= 1) {
		pthread_mutex_unlock(&p->lock);
		for (int j = 0; j < n; j++)
			fn(arg, j);
		return;
	}
	grow(p, n);
	shared = p->started < n - 1 ? p->started + 1 : n; /* jobs the threads take part in */
	p->busy = true;
	p->fn = fn;
	p->arg = arg;
	p->jobs = shared;
	p->left = shared - 1;
	p->round++;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->lock);
	fn(arg, 0);
	for (int j = shared; j < n; j++)
		fn(arg, j);
	pthread_mutex_lock(&p->lock);
	while (p->left > 0)
		pthread_cond_wait(&p->done, &p->lock);
	p->busy = false;
	pthread_mutex_unlock(&p->lock);
}

int rb_sim_pool_threads(struct rb_sim_pool *p)
{
	int n;

	pthread_mutex_lock(&p->lock);
	n = p->started;
	pthread_mutex_unlock(&p->lock);
	return n;
}

void rb_sim_pool_release(struct rb_sim_pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->quit = true;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->started; i++) {
		pthread_join(p->threads[i]->tid, NULL);
		free(p->threads[i]);
	}
	free(p->threads);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->lock);
	*p = (struct rb_sim_pool){0};
}
