/* rknn-bench plan: print how a matmul is cut into NPU tasks per core. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "cli/cli.h"
#include "core/error.h"
#include "core/json.h"
#include "core/version.h"
#include "npu/job.h"
#include "npu/plan.h"
#include "rknn_bench/shape.h"

#define DEFAULT_SHOWN_TASKS 16

struct plan_opts {
	struct cli_list specs;
	struct rb_shape_list shapes;
	struct rb_plan_config config;
	enum rb_dtype dtype;
	int json; /* --format: text 0, json 1 */
	long shown_tasks;
};

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

static void print_plan(const struct rb_plan *p, const struct rb_shape_entry *e, long shown)
{
	uint64_t moved = p->feature_bytes + p->weight_bytes + p->output_bytes;

	print_head(p, e);
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
}

static int print_json(const struct rb_plan *plans, const struct plan_opts *o)
{
	cJSON *doc = rb_plans_json(plans, &o->shapes);
	int ret = doc ? cli_write_file("-", rb_json_write, doc)
		      : cli_fail(RB_EXIT_USAGE, "out of memory for the JSON plan");

	cJSON_Delete(doc);
	return ret;
}

/* ---- command -------------------------------------------------------------------- */

static int plan_all(const struct plan_opts *o, struct rb_plan *plans)
{
	for (size_t i = 0; i < o->shapes.count; i++) {
		const struct rb_shape_entry *e = &o->shapes.entries[i];
		struct rb_npu_job_bytes bytes;
		char spec[80];

		/* the buffers a job allocates must fit too, as run and tune would find */
		if (rb_plan_init(&plans[i], &e->shape, &o->config) == 0 &&
		    rb_npu_job_check_limits(&plans[i], 0, &bytes) == 0)
			continue;
		if (spec_of(e, spec, sizeof(spec)))
			return cli_fail(RB_EXIT_USAGE, "%s (%s %s): %s", e->names[0], spec,
					rb_dtype_name(e->shape.dtype), rb_last_error());
		return cli_fail(RB_EXIT_USAGE, "%s %s: %s", spec, rb_dtype_name(e->shape.dtype),
				rb_last_error());
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
		print_plan(&plans[i], &o->shapes.entries[i], o->shown_tasks);
	}
	return RB_EXIT_OK;
}

static int plan_run(void *opts, const struct cli_args *a)
{
	struct plan_opts *o = opts;
	struct rb_plan *plans = NULL;
	int ret = cli_load_shapes(&o->shapes, a->v, a->n, NULL, &o->specs, o->dtype, "plan", false);

	if (ret < 0)
		return RB_EXIT_USAGE;
	plans = calloc(o->shapes.count, sizeof(*plans));
	ret = plans ? plan_all(o, plans) : cli_fail(RB_EXIT_USAGE, "out of memory");
	if (ret == 0)
		ret = print_all(o, plans);
	for (size_t i = 0; plans && i < o->shapes.count; i++)
		rb_plan_release(&plans[i]);
	free(plans);
	return ret;
}

static void plan_init(void *opts)
{
	struct plan_opts *o = opts;

	o->dtype = RB_DTYPE_FP16;
	o->shown_tasks = DEFAULT_SHOWN_TASKS;
	rb_shape_list_init(&o->shapes);
	rb_plan_config_init(&o->config);
}

static void plan_release(void *opts)
{
	struct plan_opts *o = opts;

	rb_shape_list_release(&o->shapes);
	free(o->specs.items);
}

#define P(field) offsetof(struct plan_opts, field)

static const struct cli_opt plan_opts[] = {
    {"shape", 0, CLI_LIST, "MxKxN", .offset = P(specs), .section = CLI_SEC_SHAPES,
     .help = "a shape on the command line, e.g. 1x2048x8192 (repeatable)"},
    {"dtype", 0, CLI_ENUM, "fp16|int8", "fp16|int8", P(dtype), .set = cli_set_dtype,
     .section = CLI_SEC_SHAPES, .help = "dtype of --shape shapes (default fp16)"},
    {"format", 0, CLI_ENUM, "text|json", "text|json", P(json), .section = CLI_SEC_OUTPUT,
     .help = "text (default) or JSON on stdout"},
    {"tasks", 0, CLI_LONG, "N", .offset = P(shown_tasks), .max = 1L << 30,
     .section = CLI_SEC_OUTPUT, .help = "text: tasks shown per core (default 16, 0 = all)"},
    {NULL},
};

const struct cli_command cli_cmd_plan = {
    .name = "plan",
    .summary = "show how a matmul is cut into NPU tasks per core",
    .synopsis = "[options] [config flags] [SHAPES.json ...]",
    .about = "Print the plan of C = A·B for every shape: the config as planned, the buffers, and\n"
	     "per NPU core its range of the split axis and its tasks (rows, channels and kernels,\n"
	     "CBUF banks, buffer offsets, bytes moved), then totals.\n",
    .groups = {CLI_GROUP(plan_opts, 0), CLI_PLAN_GROUP(struct plan_opts, config)},
    .pos = {{"SHAPES.json", CLI_IN, 0, -1}},
    .size = sizeof(struct plan_opts),
    .init = plan_init,
    .run = plan_run,
    .release = plan_release,
};
