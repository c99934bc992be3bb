/* A tuned JSON on the report page: roofline points, per-layer bars, totals, provenance,
 * all read by the tuned reader (rknn_bench/tuned.h and tune/tuned_doc.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "hw/soc.h"
#include "page/page_internal.h"
#include "rknn_bench/tuned.h"
#include "tune/tuned_doc.h"

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
		profile_ceilings(r, rb_tuned_soc(db));
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
static double with_host(double device_us, double host_us)
{
	return device_us + (isfinite(host_us) ? host_us : 0);
}

/* The bar of an earlier pair with the same shape (and so the same configs and times:
 * tune measures each unique shape once), or NULL. */
static struct rb_page_bar *same_shape(struct rb_page_bars *c, const char *shape)
{
	for (size_t i = 0; i < c->n_bars; i++)
		if (strcmp(c->bars[i].shape, shape) == 0)
			return &c->bars[i];
	return NULL;
}

/* Another pair of the bar's shape: counted, and named while the list is short (the
 * rest stand as "…": the count says how many). */
#define PAIR_NAMES 72
static void add_name(struct rb_page_bar *b, const char *name)
{
	size_t used = strlen(b->names);

	if (!used)
		used = (size_t)snprintf(b->names, sizeof(b->names), "%s", b->name);
	if (used + strlen(name) < PAIR_NAMES)
		snprintf(b->names + used, sizeof(b->names) - used, ", %s", name);
	else if (!strstr(b->names, ", …"))
		snprintf(b->names + used, sizeof(b->names) - used, ", …");
	b->count++;
}

/* Each shape's share of the total at its M: count x its time (tuned, else default)
 * over the sum of those at the same M. */
static void bar_shares(struct rb_page_bars *c)
{
	for (size_t i = 0; i < c->n_bars; i++) {
		struct rb_page_bar *b = &c->bars[i];
		int s = isfinite(b->us[1]) ? 1 : 0;
		double sum = 0;

		for (size_t j = 0; j < c->n_bars; j++)
			if (c->bars[j].m == b->m && isfinite(c->bars[j].us[s]))
				sum += (double)c->bars[j].count * c->bars[j].us[s];
		b->share = sum > 0 && isfinite(b->us[s]) ? (double)b->count * b->us[s] / sum : NAN;
	}
}

/* The bars of a pair: default, tuned, rknn_matmul_api; each device + host time, the
 * parts in its note. */
static void pair_bars(struct rb_page_bar *b, const struct rb_tuned_config *t,
		      const struct rb_tuned_times *times)
{
	b->m = (long long)t->shape.m;
	b->us[0] = with_host(times->default_us, times->default_host_us);
	snprintf(b->note[0], sizeof(b->note[0]), "all auto, three cores, fences");
	b->us[1] = with_host(t->median_us, times->host_us);
	snprintf(b->note[1], sizeof(b->note[1]),
		 "%s (%s): device %.1f µs + host %.1f µs (modeled, Cortex-A76)", t->config,
		 t->launch, t->median_us, b->us[1] - t->median_us);
	if (t->api.present) {
		b->us[2] = with_host(t->api.median_us, times->api_host_us);
		api_note(b->note[2], sizeof(b->note[2]), &t->api);
	}
}

/* One bar group per unique shape with a tuned config, its pairs counted and named. */
static int tuned_bars(struct rb_page *page, const struct rb_tuned_db *db, const char *path,
		      bool modeled)
{
	char title[2 * RB_PAGE_TEXT];
	struct rb_page_bars *c;

	snprintf(title, sizeof(title), "Time per unique shape before and after tuning (%s)", path);
	c = page_chart(page, title, modeled);
	if (!c)
		return -ENOMEM;
	snprintf(c->series[0], sizeof(c->series[0]), "default");
	snprintf(c->series[1], sizeof(c->series[1]), "tuned");
	snprintf(c->series[2], sizeof(c->series[2]), "rknn_matmul_api");
	snprintf(c->notes, sizeof(c->notes), "configs");
	for (size_t j = 0; j < rb_tuned_count(db); j++) {
		const struct rb_tuned_config *t = rb_tuned_at(db, j);
		struct rb_page_bar *b;
		char shape[64];

		page_shape_text(&t->shape, shape, sizeof(shape));
		b = same_shape(c, shape);
		if (b) {
			add_name(b, t->name);
			continue;
		}
		b = page_bar(c, t->name, shape);
		if (!b)
			return -ENOMEM;
		pair_bars(b, t, rb_tuned_times_at(db, j));
	}
	bar_shares(c);
	return 0;
}

static int tuned_totals(struct rb_page *page, const struct rb_tuned_db *db, const char *path,
			bool modeled)
{
	struct rb_total totals[RB_TOTALS_MAX];
	size_t n;
	int ret = 0;

	for (int of = 0; of < RB_TUNED_TOTALS_OF && ret == 0; of++) {
		ret = rb_tuned_totals(db, path, (enum rb_tuned_totals_of)of, totals, RB_TOTALS_MAX,
				      &n);
		if (ret == 0)
			ret = page_totals(page, path,
					  rb_tuned_totals_name((enum rb_tuned_totals_of)of), totals,
					  n, modeled);
	}
	return ret;
}

int rb_page_add_tuned(struct rb_page *page, const char *path, const char *text, size_t len)
{
	struct rb_tuned_db *db = NULL;
	struct rb_page_source *s;
	bool modeled;
	int ret = rb_tuned_load_string(&db, text, len, path);

	if (ret < 0)
		return ret;
	modeled = rb_tuned_modeled(db);
	s = page_source(page, path, "tuned JSON", modeled);
	ret = s && rb_tuned_facts(db) ? page_facts(s, rb_tuned_facts(db), "", NULL, 0) : -ENOMEM;
	for (size_t i = 0; s && ret == 0 && i < rb_tuned_warning_count(db); i++)
		ret = page_fact(s, "warning", rb_tuned_warning(db, i), true);
	if (ret == 0)
		ret = tuned_points(page, db, path);
	if (ret == 0)
		ret = tuned_bars(page, db, path, modeled);
	if (ret == 0)
		ret = tuned_totals(page, db, path, modeled);
	rb_tuned_free(db);
	return ret;
}
