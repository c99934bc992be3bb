/* rknn-bench merge: join the tuned JSONs (and caches) of tune --shard I/N. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "tune/merge.h"

struct merge_args {
	struct rb_merge_opts opts;
	bool quiet;
	char **caches; /* the shards' caches --cache reads (for the output guard) */
	int n_caches;
};

/* Boards of one kind whose medians differ by more than this are reported: above the
 * run-to-run spread of a pinned board (docs/scale-out.md). */
static void merge_init(void *o)
{
	((struct merge_args *)o)->opts.spread_pct = 5.0;
}

static void print_note(void *ctx, const char *text)
{
	const struct merge_args *a = ctx;

	if (!a->quiet && !cli_quiet)
		fprintf(stderr, "rknn-bench: merge: %s\n", text);
}

/* The shards' caches are inputs too when --cache joins them. */
static int merge_prepare(void *o, const struct cli_args *a, struct cli_paths *p)
{
	struct merge_args *m = o;
	char path[4096];

	m->opts.out_path = a->v[0];
	m->opts.inputs = (const char *const *)a->v + 1;
	m->opts.n_inputs = (size_t)a->n - 1;
	if (m->opts.cache_out && !(m->caches = calloc((size_t)a->n, sizeof(*m->caches))))
		return cli_fail(RB_EXIT_USAGE, "out of memory");
	for (int i = 1; m->caches && i < a->n; i++) {
		if (rb_merge_shard_cache(a->v[i], path, sizeof(path)) < 0)
			continue; /* the merge says what is wrong with the shard */
		if (!(m->caches[m->n_caches] = strdup(path)) ||
		    cli_paths_add(p, "a shard's cache", m->caches[m->n_caches++], CLI_IN) < 0)
			return cli_fail(RB_EXIT_USAGE, "out of memory");
	}
	return 0;
}

static void merge_release(void *o)
{
	struct merge_args *m = o;

	for (int i = 0; i < m->n_caches; i++)
		free(m->caches[i]);
	free(m->caches);
}

static int merge_run(void *o, const struct cli_args *args)
{
	struct merge_args *a = o;
	struct rb_merge_result r;
	int ret;

	(void)args;
	a->opts.note = print_note;
	a->opts.note_ctx = a;
	ret = rb_tune_merge(&a->opts, &r);
	if (ret < 0)
		return cli_fail(RB_EXIT_USAGE, "merge: %s", rb_last_error());
	if (!a->quiet && !cli_quiet) {
		fprintf(stderr,
			"rknn-bench: merge: %zu pairs from %zu shard%s of %zu board%s%s into '%s'",
			r.pairs, r.shards, r.shards == 1 ? "" : "s", r.boards,
			r.boards == 1 ? "" : "s",
			r.duplicates ? " (repeated inputs counted once)" : "", a->opts.out_path);
		if (a->opts.cache_out)
			fprintf(stderr, ", %zu cache records into '%s'", r.records,
				a->opts.cache_out);
		fputc('\n', stderr);
	}
	if (r.untuned)
		return cli_fail(RB_EXIT_FAIL,
				"merge: %zu pairs have no verified config in any shard (\"tuned\": "
				"null)",
				r.untuned);
	return RB_EXIT_OK;
}

#define M(field) offsetof(struct merge_args, field)

static const struct cli_opt merge_opts[] = {
    {"cache", 0, CLI_STR, "FILE", .offset = M(opts.cache_out), .path = CLI_OUT,
     .help = "also join the shards' caches (each found where its shard's\n"
	     "\"shard.cache\" says, beside the shard) into FILE: a later tune of\n"
	     "the same setup with --cache FILE resumes from every result"},
    {"spread", 0, CLI_DOUBLE, "PCT", .offset = M(opts.spread_pct),
     .help = "report pairs whose boards' times spread by more than PCT %\n"
	     "(default 5)"},
    {"quiet", 0, CLI_BOOL, .offset = M(quiet), .help = "no notes on stderr"},
    {NULL},
};

const struct cli_command cli_cmd_merge = {
    .name = "merge",
    .summary = "join the tuned JSONs of tune --shard I/N into one",
    .synopsis = "[options] OUT.json SHARD.json...",
    .about = "Join the tuned JSONs that `rknn-bench tune --shard I/N` wrote, one per shard,\n"
	     "into one tuned JSON: per shape the best verified config over the shards (and the\n"
	     "slices of a shape's space), the default and CPU baselines, and the per-model\n"
	     "totals, as an unsharded tune writes them. The input order does not matter; an\n"
	     "input given twice counts once. Shards of several boards of one kind (the same\n"
	     "shard from other hosts) are joined per pair: the config most boards chose at the\n"
	     "median of their times, each board's choice in \"measured.boards\"\n"
	     "(docs/scale-out.md).\n",
    .notes = "Every shard must come from the same tool version, device, driver, SoC profile,\n"
	     "strategy, target, space and measurement settings, with the same pairs; a\n"
	     "difference is refused naming the key and both files. Exit codes: 0 ok, 1 a pair\n"
	     "has no verified config in any shard, 2 usage or input error (a missing shard,\n"
	     "slice or cache, shards of different tunes), or an output that cannot be written.\n",
    .groups = {CLI_GROUP(merge_opts, 0)},
    .pos = {{"OUT.json", CLI_OUT, 1, 1}, {"SHARD.json", CLI_IN, 1, -1}},
    .size = sizeof(struct merge_args),
    .init = merge_init,
    .prepare = merge_prepare,
    .run = merge_run,
    .release = merge_release,
};
