#include "core/engine.h"

#include <errno.h>
#include <string.h>

#include "core/error.h"

extern const struct rb_engine_ops rb_engine_cpu;

/* Adding a device is a line here (and its ops in a file of its own). */
static const struct rb_engine_ops *const engines[] = {
	&rb_engine_cpu,
	NULL,
};

const struct rb_engine_ops *rb_engine_find(const char *name)
{
	for (size_t i = 0; engines[i]; i++)
		if (strcmp(engines[i]->name, name) == 0)
			return engines[i];
	return NULL;
}

const struct rb_engine_ops *rb_engine_default(void)
{
	/* No NPU device exists yet, so the CPU reference is what `auto` can run. */
	return &rb_engine_cpu;
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
