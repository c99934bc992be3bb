/* tune --shard I/N: which unique shapes, and which slice of a shape's config space, one
 * shard of a tune takes (shard.h). The split depends on the shapes list alone, never on
 * the machine or the time, so the same I/N of the same input is always the same work. */
#include "tune/shard.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tune/search.h"

int rb_tune_shard_parse(const char *text, struct rb_tune_shard *out)
{
	char *end = NULL;
	unsigned long i, n;

	errno = 0;
	i = strtoul(text, &end, 10);
	if (!isdigit((unsigned char)text[0]) || *end != '/' || !isdigit((unsigned char)end[1]))
		goto bad;
	n = strtoul(end + 1, &end, 10);
	if (*end || errno)
		goto bad;
	if (n < 1 || n > RB_TUNE_MAX_SHARDS || i < 1 || i > n)
		return rb_set_error(-EINVAL,
				    "--shard %lu/%lu: I must be 1..N and N 1..%u (shard 1/4 is the "
				    "first of four)",
				    i, n, RB_TUNE_MAX_SHARDS);
	out->index = (unsigned)i;
	out->count = (unsigned)n;
	return 0;
bad:
	return rb_set_error(-EINVAL, "--shard '%s': give I/N, e.g. 2/4 (the second of four)", text);
}

/* The work of one unique shape, the measure the greedy split balances: multiply-adds,
 * which both the emulator's and a board's time follow for the shapes of one model. */
static double shape_cost(const struct rb_shape *s)
{
	return (double)s->m * (double)s->k * (double)s->n;
}

struct unit {
	size_t entry; /* first entry of the unique shape */
	double cost;
};

static int by_cost(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* More shards than shapes: shard s (0-based) takes unique shape s mod U, as slice
 * s div U of however many shards share that shape. */
static void assign_slices(struct rb_tune_shard_work *w, const struct unit *units, size_t n_units,
			  const struct rb_tune_shard *shard)
{
	size_t s = shard->index - 1, u = s % n_units;
	struct rb_tune_shard_work *mine = &w[units[u].entry];

	mine->mine = true;
	mine->slice = (unsigned)(s / n_units);
	mine->slices = (unsigned)(shard->count / n_units + (u < shard->count % n_units));
}

/* At least as many shapes as shards: the longest-processing-time rule. Shapes in
 * decreasing cost (ties in input order) go one by one to the shard with the least work
 * so far (ties to the lowest shard). */
static int assign_shapes(struct rb_tune_shard_work *w, struct unit *units, size_t n_units,
			 const struct rb_tune_shard *shard)
{
	double *load = calloc(shard->count, sizeof(*load));

	if (!load)
		return rb_set_error(-ENOMEM, "out of memory");
	qsort(units, n_units, sizeof(*units), by_cost);
	for (size_t u = 0; u < n_units; u++) {
		unsigned least = 0;

		for (unsigned s = 1; s < shard->count; s++)
			if (load[s] < load[least])
				least = s;
		load[least] += units[u].cost;
		if (least == shard->index - 1)
			w[units[u].entry] = (struct rb_tune_shard_work){true, 0, 1};
	}
	free(load);
	return 0;
}

int rb_tune_shard_split(const struct rb_shape_list *shapes, const struct rb_tune_shard *shard,
			struct rb_tune_shard_work *work)
{
	struct unit *units = calloc(shapes->count ? shapes->count : 1, sizeof(*units));
	size_t n_units = 0;
	int ret = 0;

	if (!units)
		return rb_set_error(-ENOMEM, "out of memory");
	memset(work, 0, shapes->count * sizeof(*work));
	for (size_t i = 0; i < shapes->count; i++)
		if (rb_tune_first_same(shapes, i) == i)
			units[n_units++] = (struct unit){i, shape_cost(&shapes->entries[i].shape)};
	if (n_units && shard->count > n_units)
		assign_slices(work, units, n_units, shard);
	else if (n_units)
		ret = assign_shapes(work, units, n_units, shard);
	free(units);
	return ret;
}

bool rb_tune_shard_active(const struct rb_tune_shard *shard)
{
	return shard->count > 0;
}
