/* rknn-bench plan: print how a matmul is cut into NPU tasks per core. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "cli/cli.h"
#include "core/error.h"
#include "core/version.h"
#include "hw/board.h"
#include "hw/soc.h"
#include "npu/job.h"
#include "npu/plan.h"
#include "run/plan_model.h"
#include "rknn_bench/shape.h"

#define DEFAULT_SHOWN_TASKS 16

static const char plan_usage[] =
    "usage: rknn-bench plan [options] [config flags] [SHAPES.json ...]\n"
    "\n"
    "Print the plan of C = A·B for every shape: the config as planned, the buffers, and\n"
    "per NPU core its range of the split axis and its tasks (rows, channels and kernels,\n"
    "CBUF banks, buffer offsets, bytes moved), then totals. Without config flags the\n"
    "config is the model-guided default: the candidates the timing model ranked are\n"
    "listed with their modeled device and host times (the launch is run's choice).\n"
    "\n"
    "shapes:\n"
    "  --shape MxKxN        a shape on the command line, e.g. 1x2048x8192 (repeatable)\n"
    "  --dtype fp16|int8    dtype of --shape shapes (default fp16)\n"
    "output:\n"
    "  --format text|json   text (default) or JSON on stdout\n"
    "  --tasks N            text: tasks shown per core (default 16, 0 = all)\n"
    "\n";

enum {
	OPT_SHAPE = 256,
	OPT_DTYPE,
	OPT_FORMAT,
	OPT_TASKS,
};

static const struct option plan_own_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"shape", required_argument, NULL, OPT_SHAPE},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"tasks", required_argument, NULL, OPT_TASKS},
    {NULL, 0, NULL, 0},
};

struct plan_opts {
	struct rb_shape_list shapes;
	struct rb_plan_config config;
	enum rb_dtype dtype;
	bool json;
	long shown_tasks;
	bool config_given;                /* a config flag: no model-guided default */
	struct rb_plan_ranking *rankings; /* per entry, without config flags */
};

static int parse_format(struct plan_opts *o, const char *arg)
{
	if (strcmp(arg, "text") == 0 || strcmp(arg, "json") == 0) {
		o->json = arg[0] == 'j';
		return 0;
	}
	return rb_error("--format '%s' must be text or json", arg);
}

static int parse_option(struct plan_opts *o, int c, const char *arg, const char **specs,
			size_t *n_specs)
{
	long v;

	switch (c) {
	case OPT_SHAPE:
		specs[(*n_specs)++] = arg;
		return 0;
	case OPT_DTYPE:
		if (rb_dtype_parse(arg, &o->dtype) < 0)
			return rb_error("--dtype '%s' must be fp16 or int8", arg);
		return 0;
	case OPT_FORMAT:
		return parse_format(o, arg);
	case OPT_TASKS:
		if (cli_parse_int("--tasks", arg, 0, 1L << 30, &v) < 0)
			return -1;
		o->shown_tasks = v;
		return 0;
	default:
		o->config_given = true;
		return cli_plan_option(&o->config, c, arg);
	}
}

/* 0 to go on, -1 on a usage error, 1 when help was printed. */
static int parse_args(struct plan_opts *o, int argc, char **argv)
{
	struct option *opts = cli_plan_options_join(plan_own_options);
	const char **specs = calloc((size_t)argc + 1, sizeof(*specs));
	size_t n_specs = 0;
	int c, ret = opts && specs ? 0 : rb_error("out of memory");

	while (ret == 0 && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(plan_usage, stdout);
			fputs(cli_plan_usage, stdout);
			ret = 1;
		} else if (c == '?') {
			fputs("see 'rknn-bench plan --help'\n", stderr);
			ret = -1;
		} else {
			ret = parse_option(o, c, optarg, specs, &n_specs);
		}
	}
	if (ret == 0)
		ret = cli_load_shapes(&o->shapes, argv + optind, argc - optind, specs, n_specs,
				      o->dtype, "plan", false);
	free(specs);
	free(opts);
	return ret;
}

/* ---- text ----------------------------------------------------------------------- */

static void print_task(const struct rb_plan_task *t, size_t i)
{
	const struct rb_npu_task *n = &t->npu;
	char m[32], k[32], kn[32];

	snprintf(m, sizeof(m), "[%u,%u)", t->m0, t->m0 + n->m);
	snprintf(k, sizeof(k), "[%u,%u)", t->k0, t->k0 + n->k);
	snprintf(kn, sizeof(kn), "[%u,%u)", t->n0, t->n0 + n->n);
	printf("    %-6zu %-13s %-13s %-15s %2u:%-2u  0x%08x 0x%08x 0x%08x %9llu %9llu %9llu%s%s\n",
	       i, m, k, kn, n->data_banks, n->weight_banks, n->a_addr, n->b_addr, n->c_addr,
	       (unsigned long long)t->feature_bytes, (unsigned long long)t->weight_bytes,
	       (unsigned long long)t->output_bytes, t->streamed ? "  streamed" : "",
	       n->weight_reuse ? "  WEIGHT_REUSE" : "");
}

static void print_core(const struct rb_plan *p, const struct rb_plan_core *c, long shown)
{
	size_t n = shown == 0 || (size_t)shown > c->n_tasks ? c->n_tasks : (size_t)shown;

	printf("  core %u  %s [%u,%u): %zu task%s, %zu submit%s; feature %llu B, weights %llu B, "
	       "output %llu B\n",
	       c->core, rb_plan_axis_name(p->config.axis), c->begin, c->end, c->n_tasks,
	       c->n_tasks == 1 ? "" : "s", c->n_submits, c->n_submits == 1 ? "" : "s",
	       (unsigned long long)c->feature_bytes, (unsigned long long)c->weight_bytes,
	       (unsigned long long)c->output_bytes);
	if (n)
		printf("    %-6s %-13s %-13s %-15s %-6s %-10s %-10s %-10s %9s %9s %9s\n", "task",
		       "m", "k", "n", "banks", "a_off", "b_off", "c_off", "feature", "weights",
		       "output");
	for (size_t i = 0; i < n; i++)
		print_task(&c->tasks[i], i);
	if (n < c->n_tasks)
		printf("    ... %zu more task%s (--tasks 0 shows all)\n", c->n_tasks - n,
		       c->n_tasks - n == 1 ? "" : "s");
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

/* "MxKxN", and whether the entry has a name of its own (from a shapes file). */
static bool spec_of(const struct rb_shape_entry *e, char *buf, size_t size)
{
	snprintf(buf, size, "%lldx%lldx%lld", (long long)e->shape.m, (long long)e->shape.k,
		 (long long)e->shape.n);
	return e->n_names > 1 || strcmp(e->names[0], buf) != 0;
}

static void print_head(const struct rb_plan *p, const struct rb_shape_entry *e)
{
	char cfg[256], spec[80], names[128] = "";

	rb_plan_config_format(&p->config, cfg, sizeof(cfg));
	if (spec_of(e, spec, sizeof(spec)) && e->n_names > 1)
		snprintf(names, sizeof(names), " (%s and %zu more)", e->names[0], e->n_names - 1);
	else if (spec_of(e, spec, sizeof(spec)))
		snprintf(names, sizeof(names), " (%s)", e->names[0]);
	printf("plan %s %s -> %s%s\n", spec, rb_dtype_name(p->shape.dtype),
	       rb_plan_prec_name(p->out), names);
	printf("  config  %s%s\n", cfg, rb_plan_unproven(p) ? "  [unproven on silicon]" : "");
	printf("  padded  M %u, K %u, N %u; %u K-slice%s of %u channels; a task takes up to %u "
	       "rows x %u kernels\n",
	       p->m, p->k_pad, p->n_pad, p->n_kslices, p->n_kslices == 1 ? "" : "s", p->k_slice,
	       p->m_cap, p->n_cap);
	printf("  buffers A %llu B, B %llu B, C %llu B (%u cube%s of %llu B)\n",
	       (unsigned long long)p->a_bytes, (unsigned long long)p->b_bytes,
	       (unsigned long long)p->c_bytes, p->n_kslices, p->n_kslices == 1 ? "" : "s",
	       (unsigned long long)p->c_cube_bytes);
}

/* The candidates of the model-guided default, best marked. */
static void print_ranking(const struct rb_plan_ranking *r)
{
	char line[320];

	if (!r || !r->count)
		return;
	printf("  ranked  %zu candidate%s by the timing model (modeled; %zu planned the same "
	       "program, %zu refused):\n",
	       r->count, r->count == 1 ? "" : "s", r->duplicates, r->rejected);
	for (size_t i = 0; i < r->count; i++) {
		rb_plan_candidate_format(r, i, line, sizeof(line));
		printf("    %s\n", line);
	}
}

static void print_plan(const struct rb_plan *p, const struct rb_shape_entry *e, long shown,
		       const struct rb_plan_ranking *r)
{
	char note[320];
	uint64_t moved = p->feature_bytes + p->weight_bytes + p->output_bytes;

	print_head(p, e);
	print_ranking(r);
	for (unsigned i = 0; i < p->n_cores; i++)
		print_core(p, &p->cores[i], shown);
	printf("  total   %zu task%s, %zu submit%s; feature %llu B, weights %llu B, output %llu "
	       "B; %llu B moved (%.2f MiB), busiest core %llu B\n",
	       p->n_tasks, p->n_tasks == 1 ? "" : "s", p->n_submits, p->n_submits == 1 ? "" : "s",
	       (unsigned long long)p->feature_bytes, (unsigned long long)p->weight_bytes,
	       (unsigned long long)p->output_bytes, (unsigned long long)moved, mib(moved),
	       (unsigned long long)p->max_core_bytes);
	if (p->streamed)
		printf("  note    streamed weights (a task's weights exceed its %u weight banks) "
		       "are unproven on silicon\n",
		       p->config.weight_banks);
	if (p->weight_reuse)
		printf(
		    "  note    WEIGHT_REUSE (a chained task keeps the weights of the task before "
		    "in the CBUF) is unproven on silicon\n");
	rb_plan_timeout_note(p, p->config.mainline ? "rocket" : "rknpu", note, sizeof(note));
	printf("  submits %s (modeled)\n", note);
}

static int print_json(const struct rb_plan *plans, const struct plan_opts *o)
{
	cJSON *doc = rb_plans_json(plans, &o->shapes);
	char *text = doc ? cJSON_Print(doc) : NULL;

	cJSON_Delete(doc);
	if (!text)
		return rb_error("out of memory for the JSON plan");
	puts(text);
	free(text);
	return 0;
}

/* ---- command -------------------------------------------------------------------- */

/* The config of entry i: the flags', or the model's choice over them (ranked once per
 * shape: a model file repeats its shapes). */
static void entry_config(const struct plan_opts *o, size_t i, struct rb_plan_config *cfg)
{
	const struct rb_shape *s = &o->shapes.entries[i].shape;
	struct rb_plan_ranking *r = &o->rankings[i];
	enum rb_npu_launch launch;

	*cfg = o->config;
	if (o->config_given)
		return;
	for (size_t j = 0; j < i; j++)
		if (rb_shape_equal(&o->shapes.entries[j].shape, s) && o->rankings[j].count) {
			*r = o->rankings[j];
			*cfg = r->items[r->best].config;
			return;
		}
	if (rb_plan_model_default(s, &o->config, false, RB_PLAN_RANK_ALL_LAUNCHES, NULL, cfg,
				  &launch, r) < 0)
		*cfg = o->config; /* planning it says why */
}

static int plan_all(const struct plan_opts *o, struct rb_plan *plans)
{
	struct rb_soc_profile soc; /* the driver's clock: rocket's for a mainline plan */

	if (rb_soc_choose(&soc, rb_board_dt_root()) < 0)
		return rb_error("%s", rb_last_error());
	rb_soc_for_driver(&soc, o->config.mainline, NULL);
	for (size_t i = 0; i < o->shapes.count; i++) {
		const struct rb_shape_entry *e = &o->shapes.entries[i];
		struct rb_npu_job_bytes bytes;
		struct rb_plan_config cfg;
		char spec[80];

		entry_config(o, i, &cfg);
		/* the buffers a job allocates must fit too, as run and tune would find */
		if (rb_plan_init(&plans[i], &e->shape, &cfg) == 0 &&
		    rb_npu_job_check_limits(&plans[i], 0, &bytes) == 0 &&
		    rb_plan_fit_driver(&plans[i], &soc) == 0)
			continue;
		if (spec_of(e, spec, sizeof(spec)))
			return rb_error("%s (%s %s): %s", e->names[0], spec,
					rb_dtype_name(e->shape.dtype), rb_last_error());
		return rb_error("%s %s: %s", spec, rb_dtype_name(e->shape.dtype), rb_last_error());
	}
	return 0;
}

static int print_all(const struct plan_opts *o, const struct rb_plan *plans)
{
	if (o->json)
		return print_json(plans, o);
	for (size_t i = 0; i < o->shapes.count; i++) {
		if (i)
			putchar('\n');
		print_plan(&plans[i], &o->shapes.entries[i], o->shown_tasks,
			   o->rankings ? &o->rankings[i] : NULL);
	}
	return 0;
}

int cmd_plan(int argc, char **argv)
{
	struct plan_opts o = {.dtype = RB_DTYPE_FP16, .shown_tasks = DEFAULT_SHOWN_TASKS};
	struct rb_plan *plans = NULL;
	int ret;

	rb_shape_list_init(&o.shapes);
	rb_plan_config_init(&o.config);
	ret = parse_args(&o, argc, argv);
	if (ret == 0) {
		plans = calloc(o.shapes.count, sizeof(*plans));
		o.rankings = calloc(o.shapes.count, sizeof(*o.rankings));
		ret = plans && o.rankings ? plan_all(&o, plans) : rb_error("out of memory");
	}
	if (ret == 0)
		ret = print_all(&o, plans);
	for (size_t i = 0; plans && i < o.shapes.count; i++)
		rb_plan_release(&plans[i]);
	free(plans);
	free(o.rankings);
	rb_shape_list_release(&o.shapes);
	if (ret == 1)
		return RB_EXIT_OK;
	return ret < 0 ? RB_EXIT_USAGE : RB_EXIT_OK;
}
