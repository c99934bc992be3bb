#include "run/engine.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "numeric/ref.h"
#include "dev/discover.h"

/* Adding a device is a line here (and its ops in a file of its own). */
static const struct rb_engine_ops *const engines[] = {
    &rb_engine_sim,    &rb_engine_rknpu, &rb_engine_sim_rocket,
    &rb_engine_rocket, &rb_engine_cpu,   NULL,
};

void rb_engine_opts_init(struct rb_engine_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	rb_plan_config_init(&opts->plan);
	opts->launch = RB_LAUNCH_FENCES;
	rb_sim_config_init(&opts->sim);
}

/* The engine of each NPU driver discovery knows; adding one is a line here. */
static const struct {
	enum rb_npu_driver driver;
	const struct rb_engine_ops *ops;
} driver_engines[] = {
    {RB_DRIVER_RKNPU, &rb_engine_rknpu},
    {RB_DRIVER_ROCKET, &rb_engine_rocket},
};

static const struct rb_engine_ops *driver_engine(enum rb_npu_driver driver)
{
	for (size_t i = 0; i < sizeof(driver_engines) / sizeof(driver_engines[0]); i++)
		if (driver_engines[i].driver == driver)
			return driver_engines[i].ops;
	return NULL;
}

/* auto: the NPU when this machine has one, else the emulator, with a note saying why. */
static const struct rb_engine_ops *find_auto(struct rb_engine_opts *opts)
{
	static struct rb_npu_node node; /* opts->path points into it */
	static char note[1200];
	const char *root = rb_discover_devroot();
	int err = rb_discover_npu(&node);

	if (err == 0) {
		opts->path = node.path;
		return driver_engine(node.driver);
	}
	if (err == -ENOENT)
		snprintf(note, sizeof(note),
			 "no NPU device node found under %s/dri or %s/accel: using the emulator "
			 "(--device sim)",
			 root, root);
	else
		snprintf(note, sizeof(note), "%s (using the emulator meanwhile)", rb_last_error());
	opts->note = note;
	return &rb_engine_sim;
}

/* The drivers of a board, which take a device node as NAME:PATH. */
static bool takes_path(const struct rb_engine_ops *ops)
{
	return ops == &rb_engine_rknpu || ops == &rb_engine_rocket;
}

const struct rb_engine_ops *rb_engine_find(const char *device, struct rb_engine_opts *opts)
{
	size_t len = strcspn(device, ":");

	if (strcmp(device, "auto") == 0)
		return find_auto(opts);
	if (strcmp(device, "sim:rknpu") == 0) /* the explicit name of sim */
		return &rb_engine_sim;
	for (size_t i = 0; engines[i]; i++)
		if (strcmp(engines[i]->name, device) == 0)
			return engines[i];
	for (size_t i = 0; device[len] == ':' && engines[i]; i++) {
		if (!takes_path(engines[i]) || strlen(engines[i]->name) != len ||
		    strncmp(engines[i]->name, device, len) != 0)
			continue;
		opts->path = device + len + 1;
		return engines[i];
	}
	rb_set_error(-EINVAL,
		     "--device '%s' is not a device: use auto, sim, sim:rknpu, sim:rocket, cpu, "
		     "rknpu, rknpu:PATH, rocket or rocket:PATH",
		     device);
	return NULL;
}

const struct rb_engine_ops *const *rb_engine_list(void)
{
	return engines;
}

int rb_engine_open(struct rb_engine *engine, const struct rb_engine_ops *ops,
		   const struct rb_engine_opts *opts)
{
	memset(engine, 0, sizeof(*engine));
	engine->ops = ops;
	engine->opts = *opts;
	return ops->open ? ops->open(engine) : 0;
}

void rb_engine_close(struct rb_engine *engine)
{
	if (engine->ops && engine->ops->close)
		engine->ops->close(engine);
	memset(engine, 0, sizeof(*engine));
}

int rb_engine_configure(struct rb_engine *e, const char *plan, enum rb_npu_launch launch)
{
	rb_plan_config_init(&e->opts.plan);
	e->opts.launch = launch;
	return rb_plan_config_parse(&e->opts.plan, plan);
}

int rb_engine_model_us(struct rb_engine *e, const struct rb_shape *shape, const char *plan,
		       enum rb_npu_launch launch, double *us)
{
	struct rb_inputs shape_only = {.shape = *shape};
	int err = rb_engine_configure(e, plan, launch);

	if (!err)
		err = e->ops->prepare(e, &shape_only);
	if (!err)
		err = e->ops->run(e, NULL, us);
	return err;
}

void rb_engine_reproducer(const struct rb_engine *e, const struct rb_result *r, uint64_t seed,
			  enum rb_data_kind data, enum rb_verify_mode verify, char *buf,
			  size_t size)
{
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(r->config, "plan");
	const struct rb_shape *s = &r->shape;
	int len;

	len = snprintf(buf, size,
		       "rknn-bench run --device %s%s%s --shape %lldx%lldx%lld --dtype %s "
		       "--seed %llu --data %s --verify %s",
		       e->ops->name, e->opts.path ? ":" : "", e->opts.path ? e->opts.path : "",
		       (long long)s->m, (long long)s->k, (long long)s->n, rb_dtype_name(s->dtype),
		       (unsigned long long)seed, rb_data_kind_name(data),
		       rb_verify_mode_name(verify));
	if (len < 0 || (size_t)len >= size)
		return;
	if (cJSON_IsString(plan))
		snprintf(buf + len, size - (size_t)len, " --launch %s --config '%s'",
			 rb_npu_launch_name(e->opts.launch), plan->valuestring);
	else
		snprintf(buf + len, size - (size_t)len, " --threads %d",
			 rb_ref_threads(e->opts.threads));
}
