#include "npu/engine.h"

#include <errno.h>
#include <string.h>

#include "core/error.h"
#include "dev/discover.h"

extern const struct rb_engine_ops rb_engine_cpu;
extern const struct rb_engine_ops rb_engine_sim;
extern const struct rb_engine_ops rb_engine_rknpu;
extern const struct rb_engine_ops rb_engine_sim_rocket;
extern const struct rb_engine_ops rb_engine_rocket;

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

/* auto: the vendor driver when this machine has one, else the emulator. */
static const struct rb_engine_ops *find_auto(struct rb_engine_opts *opts)
{
	static char path[64];

	if (rb_discover_rknpu(path, sizeof(path)) == 0) {
		opts->path = path;
		return &rb_engine_rknpu;
	}
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
		    strncmp(engines[i]->name, device, len))
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
