/* A tuned JSON on the report page: roofline points, per-layer bars, totals, provenance.
 * The file is checked by the tuned reader (rknn_bench/tuned.h) first; the numbers it
 * does not keep (the default config's time, the totals) are read from the JSON. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "hw/soc.h"
#include "page/page_internal.h"
#include "rknn_bench/tuned.h"

/* The ceilings of the whole SoC (every core), computed as the engines compute those of
 * the cores a plan uses (run/engine_npu.c): 2 flops per MAC per cycle; DDR the cores'
 * streams capped by the total. */
static void profile_ceilings(struct rb_page_roofline *r, const char *soc_label)
{
	const struct rb_soc_profile *soc = rb_soc_default();
	double ddr;

	if (!soc || r->ceilings[0])
		return;
	r->peak_gflops[0] =
	    2.0 * (double)soc->fp16_macs * (double)soc->cores * soc->clock_mhz / 1e3;
	r->peak_gflops[1] =
	    2.0 * (double)soc->int8_macs * (double)soc->cores * soc->clock_mhz / 1e3;
	ddr = (double)soc->cores * soc->ddr_core_gbps;
	r->ddr_gbps = ddr < soc->ddr_total_gbps ? ddr : soc->ddr_total_gbps;
	if (soc_label && *soc_label && strcmp(soc_label, soc->label) != 0)
		snprintf(r->ceilings, sizeof(r->ceilings),
			 "the embedded profile %s with %lld cores (the file names another, '%s', "
			 "whose numbers it does not record)",
			 soc->label, (long long)soc->cores, soc_label);
	else
		snprintf(r->ceilings, sizeof(r->ceilings),
			 "the embedded profile %s with %lld cores", soc->label,
			 (long long)soc->cores);
}

/* One point per tuned shape: intensity = GFLOP/s over GB/s of A+B+C. */
static int tuned_points(struct rb_page *page, const struct rb_tuned_db *db, const char *path)
{
	for (size_t i = 0; i < rb_tuned_count(db); i++) {
		const struct rb_tuned_config *t = rb_tuned_at(db, i);
		struct rb_page_roofline *r = page_roofline(page, t->device, t->modeled);
		char shape[64], label[RB_PAGE_TEXT];
		bool seen = false;

		if (!r)
			return -ENOMEM;
		profile_ceilings(r, rb_tuned_info(db, "soc"));
		for (size_t j = 0; j < i; j++) {
			const struct rb_tuned_config *o = rb_tuned_at(db, j);

			seen = seen || (rb_shape_equal(&o->shape, &t->shape) &&
					strcmp(o->device, t->device) == 0);
		}
		if (seen || !(t->gbps > 0))
			continue;
		page_shape_text(&t->shape, shape, sizeof(shape));
		snprintf(label, sizeof(label), "%s tuned (%s)", shape, path);
		if (page_point(r, label, t->shape.dtype == RB_DTYPE_INT8, t->gflops / t->gbps,
			       t->gflops) < 0)
			return -ENOMEM;
	}
	return 0;
}

static double number_at(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* "core 0: n 0..672, core 1: ..., threads" */
static void api_note(char *buf, size_t size, const struct rb_tuned_api *api)
{
	size_t used = 0;

	for (unsigned i = 0; i < api->n_contexts && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "core %u: n [%u, %u), ",
					 api->contexts[i].core, api->contexts[i].n_begin,
					 api->contexts[i].n_end);
	if (used < size)
		snprintf(buf + used, size - used, "%u blocking thread%s (%s)", api->n_contexts,
			 api->n_contexts == 1 ? "" : "s", api->config ? api->config : "");
}

/* A time with its host part (modeled for the board's CPU, docs/tuned-json.md): the sum,
 * what tune ranks by; files written before the host part count as device time alone. */
static double with_host(double device_us, const cJSON *o, const char *host_key)
{
	double host = number_at(o, host_key);

	return device_us + (isfinite(host) ? host : 0);
}

/* One bar group per pair with a tuned config: default, tuned, rknn_matmul_api; each bar
 * device + host time, the parts in its note. */
static int tuned_bars(struct rb_page *page, const struct rb_tuned_db *db, const cJSON *doc,
		      const char *path, bool modeled)
{
	const cJSON *pair, *pairs = cJSON_GetObjectItemCaseSensitive(doc, "pairs");
	char title[2 * RB_PAGE_TEXT];
	struct rb_page_bars *c;
	size_t j = 0;

	snprintf(title, sizeof(title), "Time per layer before and after tuning (%s)", path);
	c = page_chart(page, title, modeled);
	if (!c)
		return -ENOMEM;
	snprintf(c->series[0], sizeof(c->series[0]), "default");
	snprintf(c->series[1], sizeof(c->series[1]), "tuned");
	snprintf(c->series[2], sizeof(c->series[2]), "rknn_matmul_api");
	cJSON_ArrayForEach(pair, pairs)
	{
		const cJSON *tuned = cJSON_GetObjectItemCaseSensitive(pair, "tuned"), *meas, *api;
		const struct rb_tuned_config *t;
		struct rb_page_bar *b;
		char shape[64];

		if (!cJSON_IsObject(tuned) || j >= rb_tuned_count(db))
			continue; /* the reader leaves out pairs without a config, so do we */
		t = rb_tuned_at(db, j++);
		page_shape_text(&t->shape, shape, sizeof(shape));
		b = page_bar(c, t->name, shape);
		if (!b)
			return -ENOMEM;
		meas = cJSON_GetObjectItemCaseSensitive(pair, "measured");
		api = cJSON_GetObjectItemCaseSensitive(pair, "rknn_matmul_api");
		b->us[0] = with_host(number_at(meas, "default_us"), meas, "default_host_us");
		snprintf(b->note[0], sizeof(b->note[0]), "all auto, three cores, fences");
		b->us[1] = with_host(t->median_us, tuned, "host_us");
		snprintf(b->note[1], sizeof(b->note[1]),
			 "%s (%s): device %.1f µs + host %.1f µs (modeled, Cortex-A76)", t->config,
			 t->launch, t->median_us, b->us[1] - t->median_us);
		if (t->api.present) {
			b->us[2] = with_host(t->api.median_us, api, "host_us");
			api_note(b->note[2], sizeof(b->note[2]), &t->api);
		}
	}
	return 0;
}

static int tuned_totals(struct rb_page *page, const cJSON *doc, const char *path, bool modeled)
{
	static const char *const which[] = {"default", "tuned", "rknn_matmul_api", "backend",
					    "best_overall"};
	const cJSON *totals = cJSON_GetObjectItemCaseSensitive(doc, "totals");
	int ret = 0;

	if (totals && !cJSON_IsObject(totals))
		return rb_set_error(-EINVAL, "%s: totals is not an object", path);
	for (size_t i = 0; i < sizeof(which) / sizeof(which[0]) && ret == 0; i++)
		ret = page_totals(page, path, which[i],
				  cJSON_GetObjectItemCaseSensitive(totals, which[i]), modeled);
	return ret;
}

int rb_page_add_tuned(struct rb_page *page, const char *path, const char *text, size_t len)
{
	static const char *const skip[] = {"schema", "pairs", "totals"};
	struct rb_tuned_db *db = NULL;
	struct rb_page_source *s;
	const cJSON *m;
	cJSON *doc = NULL;
	bool modeled;
	int ret = rb_tuned_load_string(&db, text, len, path);

	if (ret == 0)
		ret = rb_json_load(text, len, path, NULL, &doc);
	if (ret < 0) {
		rb_tuned_free(db);
		return ret;
	}
	m = cJSON_GetObjectItemCaseSensitive(doc, "modeled");
	modeled = cJSON_IsTrue(m) || strncmp(rb_tuned_info(db, "device"), "sim", 3) == 0;
	s = page_source(page, path, "tuned JSON", modeled);
	ret = s ? page_facts(s, doc, "", skip, 3) : -ENOMEM;
	for (size_t i = 0; s && ret == 0 && i < rb_tuned_warning_count(db); i++)
		ret = page_fact(s, "warning", rb_tuned_warning(db, i), true);
	if (ret == 0)
		ret = tuned_points(page, db, path);
	if (ret == 0)
		ret = tuned_bars(page, db, doc, path, modeled);
	if (ret == 0)
		ret = tuned_totals(page, doc, path, modeled);
	cJSON_Delete(doc);
	rb_tuned_free(db);
	return ret;
}
