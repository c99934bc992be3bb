/* bench-calibrate: the emulator's timing model against the published measurements
 * ("anchors") that describe the NPU itself, through the real path — plan with the
 * anchor's core mask, the job runner, the emulated rknpu kernel, the emulated NPU — on a
 * hardware profile (default: the embedded configs/soc/rk3588.json).
 *
 * Each anchor is compared like with like: its source published a minimum (best of N
 * calls) or a mean, and the row takes the same statistic of the modeled runs.
 *
 * Prints a Markdown report (the model, every anchor's modeled and published time and
 * the error, the mean absolute error, the anchors left out and why, the profiles per
 * memory type, the profile with its sources); `make calibrate` writes it to
 * bench/calibration.md.
 *
 * Usage: bench-calibrate [--soc FILE] [-o FILE]
 * Exit status: 0 when every row meets its target, 1 when one does not, 2 on errors. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core/error.h"
#include "core/fileio.h"
#include "numeric/inputs.h"
#include "core/stats.h"
#include "npu/job.h"
#include "npu/plan.h"
#include "sim/sim.h"
#include "hw/soc.h"

/* What a row must meet. */
enum target {
	T_NONE,   /* reported only */
	T_TIME20, /* modeled time within 20 % of the published one */
	T_TIME30, /* within 30 % */
	T_GBPS,   /* B streamed at 24..30 GB/s */
};

/* Which statistic of its calls a source published. */
enum statistic {
	S_MIN20,   /* the minimum of 20 calls after 5 warm-ups (rknpu2-matmul-layout-bench.c) */
	S_MEAN64,  /* the mean of 64 calls after 4 warm-ups (rknpu2-coop-decode-probe.c) */
	S_UNKNOWN, /* not stated */
	S_DERIVED, /* arithmetic on other anchors, no calls */
};

/* The boards the anchors were measured on. */
#define OPI5U    "Orange Pi 5 Ultra, LPDDR5"
#define UNSTATED "not stated"

struct anchor {
	const char *id;
	int64_t m, k, n;
	enum rb_dtype dtype;
	unsigned mask;
	double published_us;
	enum target target;
	bool measured; /* a published measurement (counted in the mean error), else derived */
	enum statistic stat;
	const char *board;
	const char *note;
};

#define INT8 RB_DTYPE_INT8
#define FP16 RB_DTYPE_FP16

/* perf-anchors.md §4. int4 anchors run as int8 with the same bytes of B (K×N/2 int4 =
 * K×(N/2) int8), so their time and GB/s compare directly; the NPU streams bytes. */
static const struct anchor anchors[] = {
    {"A2", 128, 1024, 8192, INT8, 0x1, 1144, T_TIME30, true, S_MIN20, OPI5U, "A/C native"},
    {"A5", 128, 2048, 2048, INT8, 0x1, 797, T_TIME30, true, S_MIN20, OPI5U, "A/C native"},
    {"A7", 128, 2048, 8192, INT8, 0x1, 3102, T_TIME30, true, S_MIN20, OPI5U, "A/C native"},
    {"A11", 128, 1024, 8192, FP16, 0x1, 2386, T_TIME30, true, S_UNKNOWN, UNSTATED,
     "900 GFLOPS, best of MARTY's sweep"},
    {"A9", 1, 2048, 2048, INT8, 0x1, 390, T_TIME20, true, S_MIN20, OPI5U, "10.8 GB/s"},
    {"A10", 1, 2048, 1024, INT8, 0x1, 203, T_TIME20, true, S_MIN20, OPI5U,
     "int4 1x2048x2048 as int8 with the same 2 MiB of B"},
    {"A13", 1, 32, 16, FP16, 0x1, 30, T_TIME30, true, S_UNKNOWN, UNSTATED,
     "per-call floor; librknnrt's own share unknown"},
    {"A15", 1, 2048, 8192, INT8, 0x7, 587, T_GBPS, true, S_MEAN64, OPI5U,
     "int4 1x2048x16384 as int8, same 16 MiB of B"},
    {"A16", 1, 8192, 1024, INT8, 0x7, 325, T_GBPS, true, S_MEAN64, OPI5U,
     "int4 1x8192x2048 as int8"},
    {"A16", 1, 4096, 2048, INT8, 0x7, 315, T_GBPS, true, S_MEAN64, OPI5U,
     "int4 1x4096x4096 as int8"},
    {"A16", 1, 2048, 1024, INT8, 0x7, 123, T_TIME30, true, S_MEAN64, OPI5U,
     "int4 1x2048x2048 as int8; 17 GB/s: per-call costs dominate"},
    {"derived", 1, 2048, 8192, FP16, 0x1, 3200, T_TIME20, false, S_DERIVED, OPI5U,
     "ffn_up at ~10.5 GB/s (from A9)"},
    {"derived", 1, 2048, 8192, FP16, 0x7, 1300, T_GBPS, false, S_DERIVED, OPI5U,
     "ffn_up at ~26 GB/s (from A15, A16)"},
    {"derived", 1, 8192, 2048, FP16, 0x7, 1300, T_GBPS, false, S_DERIVED, OPI5U,
     "ffn_out at ~26 GB/s (from A15, A16)"},
    {"JAS1", 512, 512, 512, FP16, 0x1, 1000, T_NONE, false, S_UNKNOWN, UNSTATED,
     "raw regcmd, 2 tasks: reference only (see below)"},
};

#define N_ANCHORS (sizeof(anchors) / sizeof(anchors[0]))

static const char *const excluded[][2] = {
    {"A1, A5 norm, A7 norm", "normal (row-major) A/C layouts: librknnrt converts them on "
			     "the CPU or in extra passes; our DPU writes the native cube"},
    {"A3, A4, A6, A8", "int4 compute (2x the int8 MAC rate): the emulator models fp16 and "
		       "int8 only; the int4 decode anchors A10, A15, A16 are used as bytes"},
    {"A12", "a summary (~1.8 / ~4 TOPS at the best shapes), no shape to run"},
    {"A14", "an average over the many shapes of one decode step with librknnrt per run; "
	    "no single shape (its ~26 GB/s agrees with A15/A16)"},
    {"A17, A18, A19",
     "DDR throttled to 528 MHz (oRKLLM/ork-driver FEASIBILITY-LOG M15); A19 also includes ggml's "
     "conversions"},
    {"A20", "W4A8 with CPU quantize/pack/reduce inside the timed call"},
    {"A21, E1-E9", "model-level tok/s, not one matmul"},
    {"RUS (gregordinary/rocket-userspace)",
     "mainline rocket kernel at 600 MHz, throughput of resident "
     "tiles over many jobs"},
};

/* Modeled runs per anchor (after one untimed run): enough to take a minimum and a mean
 * and to see that they agree. */
#define MODELED_RUNS 3

struct row {
	const struct anchor *a;
	double modeled_us;     /* the anchor's statistic of the modeled runs */
	double modeled_spread; /* (max - min) / min of the modeled runs: 0 when deterministic */
	double error;          /* (modeled - published) / published */
	double pub_gbps, model_gbps;
	size_t tasks;
	bool ok;
};

/* ---- running one anchor through plan → job → emulated kernel → emulated NPU ---- */

/* The statistic the anchor's source published, of the modeled samples: like with like. */
static double statistic_of(enum statistic stat, const struct rb_stats *st)
{
	switch (stat) {
	case S_MIN20:
		return st->min_us;
	case S_MEAN64:
		return st->mean_us;
	default:
		return st->median_us;
	}
}

/* One untimed run (as the sources warm up), then MODELED_RUNS timed ones. */
static int run_job(struct rb_npu_device *dev, const struct rb_plan *plan,
		   const struct rb_inputs *in, enum statistic stat, struct row *r)
{
	struct rb_npu_job *job;
	struct rb_npu_job_times t;
	struct rb_stats st = {0};
	double us[MODELED_RUNS];
	void *c = rb_output_alloc(&in->shape);
	int ret = c ? rb_npu_job_new(&job, dev, plan, in, RB_LAUNCH_FENCES) : -ENOMEM;

	if (ret == 0) {
		ret = rb_npu_job_run(job, c, &t);
		for (int i = 0; ret == 0 && i < MODELED_RUNS; i++) {
			ret = rb_npu_job_run(job, c, &t);
			us[i] = t.device_us;
		}
		rb_npu_job_free(job);
	}
	if (ret == 0)
		ret = rb_stats_compute(&st, us, MODELED_RUNS);
	if (ret == 0) {
		r->modeled_us = statistic_of(stat, &st);
		r->modeled_spread = (st.max_us - st.min_us) / st.min_us;
	}
	rb_stats_release(&st);
	free(c);
	return ret;
}

static int run_anchor(const struct rb_sim_config *sim, const struct anchor *a, struct row *r)
{
	struct rb_shape s = {a->m, a->k, a->n, a->dtype};
	struct rb_plan_config cfg;
	struct rb_npu_device dev;
	struct rb_inputs in;
	struct rb_plan plan;
	int ret;

	rb_plan_config_default(&cfg, &s, a->mask);
	ret = rb_plan_init(&plan, &s, &cfg);
	if (ret)
		return ret;
	ret = rb_inputs_init(&in, &s, 1, RB_DATA_EXACT);
	if (ret == 0) {
		ret = rb_npu_device_open_sim(&dev, sim);
		if (ret == 0) {
			ret = run_job(&dev, &plan, &in, a->stat, r);
			rb_npu_device_close(&dev);
		}
		rb_inputs_release(&in);
	}
	r->tasks = plan.n_tasks;
	rb_plan_release(&plan);
	return ret;
}

static void judge(struct row *r)
{
	const struct anchor *a = r->a;
	double b_bytes = (double)a->k * (double)a->n * (double)rb_dtype_in_size(a->dtype);

	r->error = (r->modeled_us - a->published_us) / a->published_us;
	r->pub_gbps = b_bytes / a->published_us / 1e3;
	r->model_gbps = b_bytes / r->modeled_us / 1e3;
	switch (a->target) {
	case T_TIME20:
		r->ok = fabs(r->error) <= 0.20;
		break;
	case T_TIME30:
		r->ok = fabs(r->error) <= 0.30;
		break;
	case T_GBPS:
		r->ok = r->model_gbps >= 24.0 && r->model_gbps <= 30.0;
		break;
	default:
		r->ok = true;
	}
}

/* ---- the report ---- */

struct report {
	const struct rb_soc_profile *soc;
	const char *soc_text; /* the profile's JSON, for the sources */
	size_t soc_len;
	struct row rows[N_ANCHORS];
	double max_spread; /* of the modeled runs of any row */
	/* M = 1 rows on rk3588-lpddr4x [0] and rk3588-lpddr5 [1] (default profile only) */
	double memory_us[2][N_ANCHORS];
	bool have_memory;
	double mae;
	int measured; /* rows in the mean */
	int failed;
};

static const char *target_name(enum target t)
{
	static const char *const names[] = {"reported", "±20 %", "±30 %", "24-30 GB/s"};

	return names[t];
}

static const char model_text[] =
    "## The model\n"
    "\n"
    "Every task the emulated NPU executes is timed from its registers (src/sim/timing.c):\n"
    "\n"
    "- **MAC array**: one row's 32-channel atom against a kernel group (512/32 = 16 fp16,\n"
    "  1024/32 = 32 int8 kernels) per cycle at 1 GHz; partial atoms and groups waste\n"
    "  lanes. A block of weights serves all rows of the task but takes kernel-group cycles\n"
    "  to load, so a task of fewer rows than that (M = 1) is bound by loading weights.\n"
    "- **DDR**: the bytes each task really moves — its feature tile (unless DATA_REUSE),\n"
    "  its weights (unless WEIGHT_REUSE; the planner re-reads features per N tile and\n"
    "  weights per M tile), its output. Every DMA is a stream; streams of all cores in\n"
    "  flight share the bandwidth max-min fairly: one stream ≤ `ddr.gbps_per_stream`, one\n"
    "  core ≤ `ddr.gbps_per_core`, all cores ≤ `ddr.gbps_total`.\n"
    "- **Pipeline**: a core runs fetch + feature load (stage A) and weights ∥ MACs ∥ output\n"
    "  writes + fill/drain (stage B). Chained tasks with ping-pong register groups load\n"
    "  task i+1 while task i executes; otherwise stages do not overlap. Fetch costs\n"
    "  `task.fetch_ns` + words × `task.ns_per_word`; fill/drain `task.pipeline_ns` is never\n"
    "  hidden.\n"
    "- **Kernel**: every submit costs `submit.ioctl_ns` on the host clock, then a commit\n"
    "  (`commit_ns`), the job, the interrupt (`irq_ns`) and the waiter's wake-up (`wake_ns`);\n"
    "  cores kicked together are simulated together from their own kick times.\n"
    "\n"
    "Times are modeled through the real path: the default plan for the anchor's core mask,\n"
    "the job runner (non-blocking submits with fences), the emulated rknpu kernel and the\n"
    "emulated NPU; the time is the job runner's device time (first submit to last\n"
    "completion), as `rknn-bench run --device sim` reports it.\n";

static const char *statistic_name(const struct anchor *a)
{
	static const char *const names[] = {"min of 20", "mean of 64", "not stated", "derived"};

	return names[a->stat];
}

static void write_row(FILE *f, const struct row *r)
{
	const struct anchor *a = r->a;
	char gbps[32] = "– | –";

	if (a->m == 1 && a->k * a->n >= 1 << 20)
		snprintf(gbps, sizeof(gbps), "%.1f | %.1f", r->pub_gbps, r->model_gbps);
	fprintf(
	    f,
	    "| %s | %lld,%lld,%lld | %s | %u | %zu | %s | %s | %.0f | %.1f | %+.1f %% | %s | %s "
	    "| %s | %s |\n",
	    a->id, (long long)a->m, (long long)a->k, (long long)a->n, rb_dtype_name(a->dtype),
	    (unsigned)__builtin_popcount(a->mask), r->tasks, a->board, statistic_name(a),
	    a->published_us, r->modeled_us, 100 * r->error, gbps, target_name(a->target),
	    r->ok ? "ok" : "**missed**", a->note);
}

static const char like_text[] =
    "## Like with like\n"
    "\n"
    "The sources publish different statistics of their calls. A2–A10 are the **minimum of\n"
    "20** calls after 5 warm-ups (rknpu2-matmul-layout-bench.c); A15 and A16 the **mean of\n"
    "64** calls after 4 warm-ups, each call including the driver work of a backend node\n"
    "(rknpu2-coop-decode-probe.c, 64 by default); A11 and A13 do not say. Each row compares the "
    "published\n"
    "statistic with the same statistic of the modeled runs (one untimed run, then %d\n"
    "timed): the minimum for \"min of 20\" rows, the mean for \"mean of 64\" rows, the\n"
    "median otherwise. %s\n"
    "\n"
    "On a board, `rknn-bench run` reports the **median** as its headline (the table and\n"
    "`stats.median_us`); its JSON also keeps `stats.min_us` and `stats.mean_us`. Compare a\n"
    "board's `min_us` with the \"min of 20\" rows and its `mean_us` with the \"mean of 64\"\n"
    "rows: a median lies at or above the minimum, so holding a board's median against\n"
    "A2–A10 would read a right model as too fast.\n";

static void write_like(FILE *f, const struct report *rep)
{
	char det[256];

	if (rep->max_spread == 0)
		snprintf(
		    det, sizeof(det),
		    "The emulator's clock is virtual: every row's modeled runs took exactly the "
		    "same time (min = max), so its minimum, median and mean are one number.");
	else
		snprintf(det, sizeof(det),
			 "The modeled runs of a row differ by up to %.2f %%, so the statistic "
			 "matters for the modeled side too.",
			 100 * rep->max_spread);
	fprintf(f, like_text, MODELED_RUNS, det);
	fputc('\n', f);
}

static void write_rows(FILE *f, const struct report *rep)
{
	fprintf(f, "## Anchors\n\n"
		   "| anchor | M,K,N | dtype | cores | tasks | board | published statistic "
		   "| published µs | modeled µs (same statistic) | error | published GB/s of B "
		   "| modeled GB/s of B | target | | note |\n"
		   "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < N_ANCHORS; i++)
		write_row(f, &rep->rows[i]);
	fprintf(f,
		"\nMean absolute error over the %d measured anchors: **%.1f %%**. Rows not "
		"marked A… (derived expectations, and JAS1) are not in the mean. GB/s "
		"are given for M = 1 only. %s\n\n",
		rep->measured, 100 * rep->mae,
		rep->failed ? "**Some targets are missed.**" : "Every target is met.");
}

static const char sources_text[] =
    "## Sources\n"
    "\n"
    "Published numbers only; nothing here was measured by this project.\n"
    "\n"
    "- A2, A5, A7, A9, A10: https://github.com/unimatrix099/rk-llama.cpp,\n"
    "  `docs/backend/rknpu2-matmul-layout-bench.c` (`rknn_matmul_run` on core 0, B and\n"
    "  A/C native, the best of 20 after 5 warm-ups) and `RKNPU2-int4-research.md`; measured\n"
    "  on an Orange Pi 5 Ultra (LPDDR5) with pinned clocks.\n"
    "- A15, A16: the same repository, `docs/backend/rknpu2-coop-decode-probe.c` and\n"
    "  `RKNPU2-decode-research.md` (int4 M = 1 with N split over 3 cores, GB/s from the\n"
    "  mean node time of 64 nodes, 4 weight sets cycled); the same board.\n"
    "- A11: marty1885, https://github.com/marty1885/rk3588-matmul-bench and the\n"
    "  2024-02-14 post on clehaxze.tw (~900 GFLOPS fp16, the best point of a sweep).\n"
    "- A13: https://github.com/airockchip/rknn-toolkit2/issues/154 (the demo's 0.03 ms\n"
    "  for 1x32x16).\n"
    "- JAS1: jas-hacks.blogspot.com, 2024/02 (raw regcmd on the vendor kernel).\n"
    "- Memory peaks: LPDDR4x-4224 on 4 x 16 bit = 33.8 GB/s at the 2112 MHz DDR clock that\n"
    "  https://github.com/airockchip/rknn-llm `scripts/fix_freq_rk3588.sh` pins; LPDDR5-5500\n"
    "  = 44 GB/s (https://github.com/armbian/linux-rockchip/pull/352).\n"
    "\n";

/* The decode rows (M = 1) again on the built-in profile of each memory type. */
static void write_memory(FILE *f, const struct report *rep)
{
	const struct rb_soc_profile *l4 = rb_soc_builtin("rk3588-lpddr4x");
	const struct rb_soc_profile *l5 = rb_soc_builtin("rk3588-lpddr5");

	if (!rep->have_memory)
		return;
	fprintf(f,
		"## Profiles per memory type\n\n"
		"A board the device tree names gets the built-in profile of its memory "
		"(`configs/soc/rk3588-lpddr4x.json` or `rk3588-lpddr5.json`; `rknn-bench run` "
		"names it in the table header and the JSON). Every anchor above was measured on "
		"LPDDR5 or on a board whose memory is not stated, so **%s** has the default's "
		"numbers and **%s** extrapolates its shared DDR bandwidth (%.0f GB/s instead of "
		"%.0f, the profile says why): its rows below are **modeled, not measured on "
		"LPDDR4x**, and no LPDDR4x anchor exists to hold them against.\n\n"
		"| anchor | M,K,N | dtype | cores | LPDDR5 modeled µs | LPDDR4x modeled µs | "
		"LPDDR4x / LPDDR5 |\n|---|---|---|---|---|---|---|\n",
		l5->label, l4->label, l4->ddr_total_gbps, l5->ddr_total_gbps);
	for (size_t i = 0; i < N_ANCHORS; i++) {
		const struct anchor *a = rep->rows[i].a;

		if (a->m != 1)
			continue;
		fprintf(f, "| %s | %lld,%lld,%lld | %s | %u | %.1f | %.1f | %.2f |\n", a->id,
			(long long)a->m, (long long)a->k, (long long)a->n, rb_dtype_name(a->dtype),
			(unsigned)__builtin_popcount(a->mask), rep->memory_us[1][i],
			rep->memory_us[0][i], rep->memory_us[0][i] / rep->memory_us[1][i]);
	}
	fputc('\n', f);
}

static void write_excluded(FILE *f)
{
	fprintf(f, "## Anchors left out\n\n| anchor | why |\n|---|---|\n");
	for (size_t i = 0; i < sizeof(excluded) / sizeof(excluded[0]); i++)
		fprintf(f, "| %s | %s |\n", excluded[i][0], excluded[i][1]);
	fprintf(f, "\nJAS1's 512×512×512 fp16 (≈ 1 ms on one core, 2 tasks) is "
		   "shown as a reference only: a single report without its timing method, at "
		   "26 %% of the MAC peak where A11 reaches 88 %% on a larger shape; it most "
		   "likely includes host-side work.\n\n");
}

/* One "- path = value — source" line per sourced number of the profile's JSON. */
static void write_sources(FILE *f, const cJSON *obj, const char *path)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, obj)
	{
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "value");
		const cJSON *src = cJSON_GetObjectItemCaseSensitive(it, "source");
		char full[128];

		if (!cJSON_IsObject(it))
			continue;
		snprintf(full, sizeof(full), "%s%s%s", path, *path ? "." : "", it->string);
		if (cJSON_IsNumber(v) && cJSON_IsString(src))
			fprintf(f, "- `%s` = %g — %s\n", full, v->valuedouble, src->valuestring);
		else
			write_sources(f, it, full);
	}
}

static int write_report(FILE *f, void *ctx)
{
	const struct report *rep = ctx;
	cJSON *json = cJSON_ParseWithLength(rep->soc_text, rep->soc_len);

	fprintf(f,
		"# Calibration of the emulator's timing model\n\n"
		"Generated by `make calibrate` (bench/calibrate.c) on the hardware profile "
		"**%s**. Do not edit: change the profile or the model and run `make calibrate`."
		" Published numbers are those of the sources below; modeled "
		"numbers are the emulator's, never measurements.\n\n",
		rep->soc->label);
	fputs(model_text, f);
	fputc('\n', f);
	write_like(f, rep);
	write_rows(f, rep);
	fputs(sources_text, f);
	write_excluded(f);
	write_memory(f, rep);
	fprintf(f, "## The profile\n\n");
	if (json)
		write_sources(f, json, "");
	cJSON_Delete(json);
	return ferror(f) ? -EIO : 0;
}

/* ---- main ---- */

static int run_all(const struct rb_sim_config *sim, struct report *rep)
{
	double sum = 0;
	int measured = 0;

	for (size_t i = 0; i < N_ANCHORS; i++) {
		struct row *r = &rep->rows[i];
		int ret;

		r->a = &anchors[i];
		ret = run_anchor(sim, r->a, r);
		if (ret < 0)
			return fprintf(stderr, "bench-calibrate: %s %lldx%lldx%lld: %s\n", r->a->id,
				       (long long)r->a->m, (long long)r->a->k, (long long)r->a->n,
				       rb_last_error()),
			       ret;
		judge(r);
		if (r->modeled_spread > rep->max_spread)
			rep->max_spread = r->modeled_spread;
		rep->failed += !r->ok;
		if (r->a->measured) {
			sum += fabs(r->error);
			measured++;
		}
	}
	rep->mae = measured ? sum / measured : 0;
	rep->measured = measured;
	return 0;
}

/* The M = 1 rows on the built-in profile of each memory type (write_memory). */
static int run_memory(struct report *rep)
{
	static const char *const names[2] = {"rk3588-lpddr4x", "rk3588-lpddr5"};

	for (int p = 0; p < 2; p++) {
		struct rb_sim_config sim;

		rb_sim_config_init(&sim);
		sim.soc = rb_soc_builtin(names[p]);
		if (!sim.soc)
			return -ENOENT;
		for (size_t i = 0; i < N_ANCHORS; i++) {
			struct row r = {.a = &anchors[i]};
			int ret;

			if (anchors[i].m != 1)
				continue;
			ret = run_anchor(&sim, &anchors[i], &r);
			if (ret < 0)
				return ret;
			rep->memory_us[p][i] = r.modeled_us;
		}
	}
	rep->have_memory = true;
	return 0;
}

static int load_profile(const char *path, struct rb_soc_profile *soc, char **text, size_t *len)
{
	int ret;

	if (!path) {
		const char *t = rb_soc_default_text(len);

		*soc = *rb_soc_default();
		*text = strndup(t, *len);
		return *text ? 0 : -ENOMEM;
	}
	ret = rb_file_read(path, text, len);
	if (ret == 0)
		ret = rb_soc_load_string(soc, *text, *len, path);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"soc", required_argument, NULL, 's'},
					     {"output", required_argument, NULL, 'o'},
					     {NULL, 0, NULL, 0}};
	const char *soc_path = NULL, *out = NULL;
	struct rb_soc_profile soc;
	struct rb_sim_config sim;
	struct report rep = {.soc = &soc};
	char *text = NULL;
	int c, ret;

	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		if (c == 's')
			soc_path = optarg;
		else if (c == 'o')
			out = optarg;
		else
			return fprintf(stderr, "usage: bench-calibrate [--soc FILE] [-o FILE]\n"),
			       2;
	}
	ret = load_profile(soc_path, &soc, &text, &rep.soc_len);
	if (ret < 0)
		return fprintf(stderr, "bench-calibrate: %s\n", rb_last_error()), 2;
	rep.soc_text = text;
	rb_sim_config_init(&sim);
	sim.soc = &soc;
	ret = run_all(&sim, &rep);
	if (ret == 0 && !soc_path)
		ret = run_memory(&rep);
	if (ret == 0)
		ret = write_report(stdout, &rep);
	if (ret == 0 && out)
		ret = rb_file_write_atomic(out, write_report, &rep);
	free(text);
	if (ret < 0)
		return 2;
	return rep.failed ? 1 : 0;
}
