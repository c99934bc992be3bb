/* rknn-bench plan: print how a matmul is cut into NPU tasks per core. */
#include <stdlib.h>

#include "cli/cli.h"
#include "core/json.h"
#include "hw/board.h"
#include "hw/soc.h"
#include "npu/job.h"
#include "npu/plan_text.h"
#include "run/plan_model.h"

#define DEFAULT_SHOWN_TASKS 16

struct plan_opts {
	struct cli_list specs;
	struct rb_shape_list shapes;
	struct rb_plan_config config;
	enum rb_dtype dtype;
	int json; /* --format: text 0, json 1 */
	long shown_tasks;
	struct rb_plan_ranking *rankings; /* per entry, without config flags */
};

/* The candidates of the model-guided default, best marked. */
static void print_ranking(FILE *out, const void *ctx)
{
	const struct rb_plan_ranking *r = ctx;
	char line[320];

	if (!r || !r->count)
		return;
	fprintf(out,
		"  ranked  %zu candidate%s by the timing model (modeled; %zu planned the same "
		"program, %zu refused):\n",
		r->count, r->count == 1 ? "" : "s", r->duplicates, r->rejected);
	for (size_t i = 0; i < r->count; i++) {
		rb_plan_candidate_format(r, i, line, sizeof(line));
		fprintf(out, "    %s\n", line);
	}
}

/* The config of entry i: the flags', or the model's choice over them (ranked once per
 * shape: a model file repeats its shapes). */
static void entry_config(const struct plan_opts *o, size_t i, struct rb_plan_config *cfg)
{
	const struct rb_shape *s = &o->shapes.entries[i].shape;
	struct rb_plan_ranking *r = &o->rankings[i];
	enum rb_npu_launch launch;

	*cfg = o->config;
	if (cli_plan_flags_given)
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
	struct rb_soc_profile soc; /* the driver's clock: rocket's for a mainline plan */

	if (rb_soc_choose(&soc, rb_board_dt_root()) < 0)
		return cli_fail(RB_EXIT_USAGE, "%s", rb_last_error());
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
		if (rb_plan_entry_spec(e, spec, sizeof(spec)))
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
		rb_plan_print(stdout, &plans[i], &o->shapes.entries[i], o->shown_tasks,
			      print_ranking, &o->rankings[i]);
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
	o->rankings = calloc(o->shapes.count, sizeof(*o->rankings));
	ret = plans && o->rankings ? plan_all(o, plans) : cli_fail(RB_EXIT_USAGE, "out of memory");
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
	free(o->rankings);
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
	     "CBUF banks, buffer offsets, bytes moved), then totals. Without config flags the\n"
	     "config is the model-guided default: the candidates the timing model ranked are\n"
	     "listed with their modeled device and host times (the launch is run's choice).\n",
    .groups = {CLI_GROUP(plan_opts, 0), CLI_PLAN_GROUP(struct plan_opts, config)},
    .pos = {{"SHAPES.json", CLI_IN, 0, -1}},
    .size = sizeof(struct plan_opts),
    .init = plan_init,
    .run = plan_run,
    .release = plan_release,
};
