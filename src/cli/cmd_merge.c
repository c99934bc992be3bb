/* rknn-bench merge: join the tuned JSONs (and caches) of tune --shard I/N. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/error.h"
#include "tune/merge.h"

/* Boards of one kind whose medians differ by more than this are reported: above the
 * run-to-run spread of a pinned board (docs/scale-out.md). */
#define MERGE_DEFAULT_SPREAD_PCT 5.0

static const char merge_usage[] =
    "usage: rknn-bench merge [options] OUT.json SHARD.json...\n"
    "\n"
    "Join the tuned JSONs that `rknn-bench tune --shard I/N` wrote, one per shard, into\n"
    "one tuned JSON: per shape the best verified config over the shards (and the slices of\n"
    "a shape's space), the default and CPU baselines, and the per-model totals, as an\n"
    "unsharded tune writes them. The input order does not matter; an input given twice\n"
    "counts once. Shards of several boards of one kind (the same shard from other hosts)\n"
    "are joined per pair: the config most boards chose at the median of their times, each\n"
    "board's choice in \"measured.boards\" (docs/scale-out.md).\n"
    "\n"
    "options:\n"
    "  --cache FILE      also join the shards' caches (each found where its shard's\n"
    "                    \"shard.cache\" says, beside the shard) into FILE: a later tune of\n"
    "                    the same setup with --cache FILE resumes from every result\n"
    "  --spread PCT      report pairs whose boards' times spread by more than PCT %\n"
    "                    (default 5)\n"
    "  --quiet           no notes on stderr\n"
    "  -h, --help        this help\n"
    "\n"
    "Every shard must come from the same tool version, device, driver, SoC profile,\n"
    "strategy, target, space and measurement settings, with the same pairs; a difference\n"
    "is refused naming the key and both files. Exit codes: 0 ok, 1 a pair has no verified\n"
    "config in any shard, 2 usage or input error (a missing shard, slice or cache, shards\n"
    "of different tunes).\n";

enum { OPT_CACHE = 1000, OPT_SPREAD, OPT_QUIET };

static const struct option merge_options[] = {
    {"cache", required_argument, NULL, OPT_CACHE},
    {"spread", required_argument, NULL, OPT_SPREAD},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct merge_args {
	struct rb_merge_opts opts;
	bool quiet;
};

static void print_note(void *ctx, const char *text)
{
	const struct merge_args *a = ctx;

	if (!a->quiet && !cli_quiet)
		fprintf(stderr, "rknn-bench: merge: %s\n", text);
}

/* 0, 100 for --help, or an exit code. */
static int parse_args(struct merge_args *a, int argc, char **argv)
{
	int c;

	while ((c = getopt_long(argc, argv, "h", merge_options, NULL)) != -1) {
		if (c == 'h') {
			fputs(merge_usage, stdout);
			return 100;
		}
		if (c == OPT_CACHE)
			a->opts.cache_out = optarg;
		else if (c == OPT_QUIET)
			a->quiet = true;
		else if (c != OPT_SPREAD ||
			 cli_parse_double("--spread", optarg, 0, &a->opts.spread_pct) < 0) {
			fputs("see 'rknn-bench merge --help'\n", stderr);
			return RB_EXIT_USAGE;
		}
	}
	if (argc - optind < 2)
		return cli_fail(RB_EXIT_USAGE,
				"merge needs OUT.json and at least one SHARD.json (see --help)");
	a->opts.out_path = argv[optind];
	a->opts.inputs = (const char *const *)argv + optind + 1;
	a->opts.n_inputs = (size_t)(argc - optind - 1);
	return 0;
}

/* The outputs are none of the inputs, nor each other. */
static int check_outputs(const struct merge_args *a)
{
	const struct rb_merge_opts *o = &a->opts;
	const char **inputs = calloc(o->n_inputs + 1, sizeof(*inputs));
	int ret;

	if (!inputs)
		return rb_error("out of memory");
	memcpy(inputs, o->inputs, o->n_inputs * sizeof(*inputs));
	ret = cli_check_output("OUT.json", o->out_path, inputs, o->n_inputs);
	if (ret == 0 && o->cache_out) {
		inputs[o->n_inputs] = o->out_path;
		ret = cli_check_output("--cache", o->cache_out, inputs, o->n_inputs + 1);
	}
	free(inputs);
	return ret;
}

int cmd_merge(int argc, char **argv)
{
	struct merge_args a = {.opts = {.spread_pct = MERGE_DEFAULT_SPREAD_PCT}};
	struct rb_merge_result r;
	int ret = parse_args(&a, argc, argv);

	if (ret)
		return ret == 100 ? RB_EXIT_OK : ret;
	if (check_outputs(&a) < 0)
		return RB_EXIT_USAGE;
	a.opts.note = print_note;
	a.opts.note_ctx = &a;
	ret = rb_tune_merge(&a.opts, &r);
	if (ret < 0)
		return cli_fail(RB_EXIT_USAGE, "merge: %s", rb_last_error());
	if (!a.quiet && !cli_quiet) {
		fprintf(stderr,
			"rknn-bench: merge: %zu pairs from %zu shard%s of %zu board%s%s into '%s'",
			r.pairs, r.shards, r.shards == 1 ? "" : "s", r.boards,
			r.boards == 1 ? "" : "s",
			r.duplicates ? " (repeated inputs counted once)" : "", a.opts.out_path);
		if (a.opts.cache_out)
			fprintf(stderr, ", %zu cache records into '%s'", r.records,
				a.opts.cache_out);
		fputc('\n', stderr);
	}
	if (r.untuned) {
		rb_error("merge: %zu pairs have no verified config in any shard (\"tuned\": null)",
			 r.untuned);
		return RB_EXIT_FAIL;
	}
	return RB_EXIT_OK;
}
