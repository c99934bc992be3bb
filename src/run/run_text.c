/* What run shows (run/run_text.h). */
#include <string.h>
#include <unistd.h>

#include "core/stats.h"
#include "run/run_text.h"

#define SHAPE_FIXED_WORK 1e7 /* planning, buffers, a few runs of a tiny shape */

static double shape_work(const struct rb_shape *s)
{
	return 2.0 * (double)s->m * (double)s->k * (double)s->n + SHAPE_FIXED_WORK;
}

void rb_run_progress_start(struct rb_progress *p, FILE *out, const struct rb_shape_list *l)
{
	double work = 0;

	for (size_t i = 0; i < l->count; i++)
		work += shape_work(&l->entries[i].shape);
	rb_progress_init(p, out, isatty(fileno(out)) != 0, l->count, work, rb_now_us() / 1e6);
}

void rb_run_progress_shape(struct rb_progress *p, const struct rb_shape_entry *entry,
			   const char *device)
{
	char label[160];

	snprintf(label, sizeof(label), "%s (%lldx%lldx%lld %s) on %s", entry->names[0],
		 (long long)entry->shape.m, (long long)entry->shape.k, (long long)entry->shape.n,
		 rb_dtype_name(entry->shape.dtype), device);
	rb_progress_item(p, label, shape_work(&entry->shape), rb_now_us() / 1e6);
}

void rb_run_progress_result(struct rb_progress *p, const struct rb_result *r)
{
	char text[160];

	snprintf(text, sizeof(text), "%.1f µs%s, %s", r->stats.median_us,
		 r->phase     ? " (one phase, host)"
		 : r->modeled ? " (modeled)"
			      : "",
		 rb_verify_status_name(r->verify.status));
	rb_progress_item_done(p, text, rb_now_us() / 1e6);
}

void rb_engine_driver_text(const struct rb_engine *e, char *buf, size_t size)
{
	cJSON *config = e->ops->config ? e->ops->config(e) : NULL;
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(config, "driver");
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(config, "driver_version");

	if (cJSON_IsString(name) && cJSON_IsNumber(version)) {
		long v = (long)version->valuedouble; /* major·10000 + minor·100 + patch */

		snprintf(buf, size, "%s %ld.%ld.%ld%s", name->valuestring, v / 10000, v / 100 % 100,
			 v % 100, e->ops->modeled ? " (emulated)" : "");
	} else {
		snprintf(buf, size, "none (%s)", e->ops->name);
	}
	cJSON_Delete(config);
}
