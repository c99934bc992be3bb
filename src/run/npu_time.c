/* The NPU time of a process (npu_time.h): the union of its runs' device-clock windows. */
#include "run/npu_time.h"

#include <stdlib.h>
#include <string.h>

void rb_npu_time_init(struct rb_npu_time *t)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
}

void rb_npu_time_release(struct rb_npu_time *t)
{
	pthread_mutex_destroy(&t->lock);
}

static int by_begin(const void *a, const void *b)
{
	const struct rb_npu_time_span *x = a, *y = b;

	return (x->begin > y->begin) - (x->begin < y->begin);
}

/* Sorts the spans and merges those that overlap or touch: they become disjoint. */
static size_t merge(struct rb_npu_time_span *s, size_t n)
{
	size_t out = 0;

	qsort(s, n, sizeof(*s), by_begin);
	for (size_t i = 0; i < n; i++) {
		if (out && s[i].begin <= s[out - 1].end) {
			if (s[i].end > s[out - 1].end)
				s[out - 1].end = s[i].end;
		} else {
			s[out++] = s[i];
		}
	}
	return out;
}

/* With the lock held and the array full: merge, then fold the oldest spans (all but
 * a quarter of the array) into folded_ns. */
static void fold(struct rb_npu_time *t)
{
	size_t keep = RB_NPU_TIME_SPANS / 4, drop;

	t->n = merge(t->spans, t->n);
	if (t->n <= RB_NPU_TIME_SPANS - keep)
		return;
	drop = t->n - keep;
	for (size_t i = 0; i < drop; i++)
		t->folded_ns += t->spans[i].end - t->spans[i].begin;
	t->folded_end = t->spans[drop - 1].end;
	memmove(t->spans, t->spans + drop, keep * sizeof(*t->spans));
	t->n = keep;
}

void rb_npu_time_add(struct rb_npu_time *t, uint64_t begin_ns, uint64_t end_ns, bool tuned)
{
	pthread_mutex_lock(&t->lock);
	t->runs++;
	t->tuned_runs += tuned;
	if (begin_ns < t->folded_end)
		begin_ns = t->folded_end;
	if (end_ns > begin_ns) {
		if (t->n == RB_NPU_TIME_SPANS)
			fold(t);
		t->spans[t->n++] = (struct rb_npu_time_span){begin_ns, end_ns};
	}
	pthread_mutex_unlock(&t->lock);
}

uint64_t rb_npu_time_ns(struct rb_npu_time *t, unsigned long *runs, unsigned long *tuned_runs)
{
	uint64_t ns;

	pthread_mutex_lock(&t->lock);
	t->n = merge(t->spans, t->n);
	ns = t->folded_ns;
	for (size_t i = 0; i < t->n; i++)
		ns += t->spans[i].end - t->spans[i].begin;
	if (runs)
		*runs = t->runs;
	if (tuned_runs)
		*tuned_runs = t->tuned_runs;
	pthread_mutex_unlock(&t->lock);
	return ns;
}
