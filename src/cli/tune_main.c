/* rknn-bench tune, the run: engines, cache, SIGINT, every unique shape, the summary. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/tune_cli.h"
#include "core/error.h"
#include "core/ref.h"
#include "core/report.h"
#include "core/version.h"

/* ---- engines ---- */

static int open_engines(struct tune_run *t)
{
	const struct tune_opts *o = t->o;
	struct rb_engine_opts mo = o->engine, scratch = o->engine;
	/* The model of the kernel the device runs under: rocket serializes an fd's jobs. */
	const struct rb_engine_ops *sim =
	    rb_engine_find(strstr(o->device->name, "rocket") ? "sim:rocket" : "sim", &scratch);
	const struct rb_engine_ops *cpu = rb_engine_find("cpu", &scratch);

	if (rb_engine_open(&t->device, o->device, &o->engine) < 0)
		return rb_error("cannot open device '%s': %s", o->device->name, rb_last_error()),
		       RB_EXIT_DEVICE;
	if (rb_engine_open(&t->cpu, cpu, &o->engine) < 0)
		return rb_error("cannot open the CPU reference: %s", rb_last_error()),
		       RB_EXIT_DEVICE;
	t->cpu_open = true;
	if (o->strategy != TUNE_MODEL)
		return 0;
	mo.sim.model_only = true;
	if (rb_engine_open(&t->model, sim, &mo) < 0)
		return rb_error("cannot open the timing model: %s", rb_last_error()),
		       RB_EXIT_DEVICE;
	t->model_open = true;
	return 0;
}

static void close_engines(struct tune_run *t)
{
	if (t->model_open)
		rb_engine_close(&t->model);
	if (t->cpu_open)
		rb_engine_close(&t->cpu);
	rb_engine_close(&t->device);
}

/* ---- the cache header: what the numbers depend on ---- */

/* Driver version and, on the emulator, the hardware profile its times come from (the
 * engine's "timing_model"); on a board, the SoC. */
static void device_facts(struct rb_engine *e, struct rb_tune_header *h)
{
	cJSON *cfg = e->ops->config(e);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, "driver_version");
	const cJSON *model = cJSON_GetObjectItemCaseSensitive(cfg, "timing_model");
	unsigned code = cJSON_IsNumber(v) ? (unsigned)v->valuedouble : 0;

	snprintf(h->driver, sizeof(h->driver), "%u.%u.%u", code / 10000, code / 100 % 100,
		 code % 100);
	if (e->ops->modeled)
		snprintf(h->soc, sizeof(h->soc), "%s",
			 cJSON_IsString(model) ? model->valuestring : "unknown");
	else
		rb_cpu_model_read(h->soc, sizeof(h->soc), "/proc/cpuinfo",
				  "/proc/device-tree/compatible");
	cJSON_Delete(cfg);
}

static void fill_header(struct tune_run *t, struct rb_tune_header *h)
{
	const struct tune_opts *o = t->o;

	memset(h, 0, sizeof(*h));
	snprintf(h->tool_version, sizeof(h->tool_version), "%s", RB_VERSION);
	snprintf(h->device, sizeof(h->device), "%s%s%s", o->device->name, o->engine.path ? ":" : "",
		 o->engine.path ? o->engine.path : "");
	device_facts(&t->device, h);
	snprintf(h->space, sizeof(h->space), "%016llx",
		 (unsigned long long)rb_tune_space_hash(&o->space));
	rb_tune_space_describe(&o->space, h->space_desc, sizeof(h->space_desc));
	snprintf(h->measure, sizeof(h->measure),
		 "seed=%llu data=%s verify=%s samples=%lld atol=%g rtol=%g warmup=%d iters=%d "
		 "cpu_threads=%d",
		 (unsigned long long)o->seed, rb_data_kind_name(o->data),
		 rb_verify_mode_name(o->verify.mode), (long long)o->verify.samples, o->verify.atol,
		 o->verify.rtol, o->measure.warmup, o->measure.iters,
		 rb_ref_threads(o->engine.threads));
}

static int open_cache(struct tune_run *t)
{
	fill_header(t, &t->header);
	if (rb_tune_cache_open(&t->cache, t->o->cache_path, &t->header) < 0)
		return cli_fail(RB_EXIT_USAGE, "%s", rb_last_error());
	if (t->cache.resumed && !t->o->quiet && !cli_quiet)
		fprintf(stderr, "rknn-bench: resuming from '%s': %zu results%s\n", t->o->cache_path,
			t->cache.resumed,
			t->cache.dropped_last_line ? " (a truncated last line was dropped)" : "");
	return 0;
}

/* ---- shapes ---- */

/* The entry tuned for an identical shape earlier in the list, or i itself. */
static size_t first_same(const struct rb_shape_list *l, size_t i)
{
	const struct rb_shape *s = &l->entries[i].shape;

	for (size_t j = 0; j < i; j++) {
		const struct rb_shape *p = &l->entries[j].shape;

		if (p->m == s->m && p->k == s->k && p->n == s->n && p->dtype == s->dtype)
			return j;
	}
	return i;
}

static int tune_all(struct tune_run *t, struct tune_best *best)
{
	const struct rb_shape_list *l = &t->o->shapes;
	int ret = 0;

	for (size_t i = 0; i < l->count; i++)
		t->n_shapes += first_same(l, i) == i;
	for (size_t i = 0; ret == 0 && i < l->count; i++) {
		size_t j = first_same(l, i);

		if (j != i) {
			best[i] = best[j];
			continue;
		}
		ret = tune_shape(t, &l->entries[i].shape, l->entries[i].names[0], &best[i]);
		t->shape_index++;
	}
	return ret;
}

/* stdout: one row per unique shape. */
static void print_summary(const struct tune_run *t, const struct tune_best *best)
{
	const struct rb_shape_list *l = &t->o->shapes;
	bool modeled = t->device.ops->modeled;

	printf("%-16s %-15s %-9s %12s %12s %8s  %s\n", "name", "shape", "launch",
	       modeled ? "modeled µs" : "median µs", "default µs", "speedup", "config");
	for (size_t i = 0; i < l->count; i++) {
		const struct tune_best *b = &best[i];
		char shape[48];

		if (first_same(l, i) != i)
			continue;
		snprintf(shape, sizeof(shape), "%lldx%lldx%lld", (long long)b->shape.m,
			 (long long)b->shape.k, (long long)b->shape.n);
		if (!b->found) {
			printf("%-16s %-15s no verified config (%zu failed)\n",
			       l->entries[i].names[0], shape, b->n_failed);
			continue;
		}
		printf("%-16s %-15s %-9s %12.1f %12.1f %7.2fx  %s\n", l->entries[i].names[0], shape,
		       rb_npu_launch_name(b->point.launch), b->median_us, b->default_us,
		       b->default_us / b->median_us, b->point.text);
	}
	if (modeled)
		printf("\nmodeled: times come from the emulator's timing model, not a clock\n");
}

static int finish(struct tune_run *t, struct tune_best *best, int ret)
{
	const struct tune_opts *o = t->o;

	if (ret == TUNE_INTERRUPTED) {
		rb_error("interrupted: %zu results are kept in '%s'; run the same command again to "
			 "resume; '%s' was not written",
			 t->cache.count, o->cache_path, o->out_path);
		return 128 + cli_stop_signal; /* 130 for SIGINT, 143 for SIGTERM */
	}
	if (ret)
		return ret;
	print_summary(t, best);
	ret = tune_write_output(t, best);
	for (size_t i = 0; ret == 0 && i < o->shapes.count; i++)
		if (!best[i].found)
			ret = RB_EXIT_FAIL;
	return ret;
}

int tune_main(const struct tune_opts *o)
{
	struct tune_run *t = calloc(1, sizeof(*t));
	struct tune_best *best = calloc(o->shapes.count, sizeof(*best));
	int ret = t && best ? 0 : RB_EXIT_USAGE;

	if (ret == 0) {
		t->o = o;
		t->tty = isatty(STDERR_FILENO);
		t->t0_us = rb_now_us();
		ret = open_engines(t);
	}
	if (ret == 0)
		ret = open_cache(t);
	if (ret == 0) {
		cli_catch_stop(true);
		ret = tune_all(t, best);
		cli_catch_stop(false);
		ret = finish(t, best, ret);
	}
	if (t) {
		rb_tune_cache_close(&t->cache);
		close_engines(t);
	}
	free(best);
	free(t);
	return ret;
}
