/* Rungs 4-8 of the selftest: plans through the job runner (the engine of the device),
 * each case verified; a failing case is bisected to the smallest that fails alike. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/rng.h"
#include "core/stats.h"
#include "npu/plan.h"
#include "npu/regcmd.h"
#include "run/measure.h"
#include "selftest/selftest.h"

/* ---- running one case ---- */

struct runner {
	struct rb_selftest *st;
	int rung;
	struct rb_engine e;
	bool open;
	struct rb_measure_opts measure;
	struct rb_verify_opts verify;
	enum rb_verify_mode mode;
};

static int runner_open(struct runner *r)
{
	int err;

	if (r->open)
		return 0;
	err = rb_engine_open(&r->e, r->st->ops, &r->st->opts.engine);
	if (err)
		return rb_selftest_fail(r->st, r->rung, err, "device-error", NULL,
					"cannot open the device: %s", rb_last_error());
	r->open = true;
	return 0;
}

static void runner_close(struct runner *r)
{
	if (r->open)
		rb_engine_close(&r->e);
	r->open = false;
}

/* Runs case c (filling err, wrong, us); the result goes to *keep when it is not NULL
 * (else it is released). Returns 0 when the case ran at all (c->err says how), or the
 * error of opening the device. A device error closes the engine: the next case opens
 * a fresh one, as after a reset. */
static int run_case(struct runner *r, struct rb_selftest_case *c, struct rb_result *keep, char *why,
		    size_t why_size)
{
	char name[] = "selftest", *names[] = {name};
	struct rb_shape_entry entry = {.shape = c->shape, .names = names, .n_names = 1};
	struct rb_shape_measure m = {.measure = &r->measure, .verify = &r->verify};
	struct rb_result res;
	int err = runner_open(r);

	if (err)
		return err;
	memset(&res, 0, sizeof(res));
	rb_verify_opts_init(&r->verify, c->shape.dtype);
	r->verify.mode = r->mode;
	err = rb_engine_configure(&r->e, c->plan, c->launch);
	if (!err)
		err = rb_measure_entry(&m, &r->e, &entry, r->st->opts.seed, RB_DATA_EXACT, &res);
	c->err = err;
	c->wrong = err == 0 && res.verify.status == RB_VERIFY_FAILED;
	c->us = res.stats.median_us;
	if (err)
		snprintf(why, why_size, "%s", m.reason[0] ? m.reason : rb_last_error());
	else if (c->wrong)
		snprintf(why, why_size,
			 "%" PRId64 " of %" PRId64 " elements differ, the first at [%" PRId64
			 "][%" PRId64 "] (%g, expected %g)",
			 res.verify.mismatches, res.verify.checked, res.verify.first[0].i,
			 res.verify.first[0].j, res.verify.first[0].got,
			 res.verify.first[0].expected);
	else
		why[0] = '\0';
	if (keep && !err)
		*keep = res;
	else
		rb_result_release(&res);
	if (err && err != -EINVAL)
		runner_close(r);
	return 0;
}

static bool failed(const struct rb_selftest_case *c)
{
	return c->err || c->wrong;
}

static bool fails_alike(const struct rb_selftest_case *a, const struct rb_selftest_case *b)
{
	return a->wrong == b->wrong && a->err == b->err;
}

static bool same_case(const struct rb_selftest_case *a, const struct rb_selftest_case *b)
{
	return rb_shape_equal(&a->shape, &b->shape) && strcmp(a->plan, b->plan) == 0 &&
	       a->launch == b->launch;
}

static void describe(const struct rb_selftest_case *c, char *buf, size_t size)
{
	snprintf(buf, size, "%.60s %" PRId64 "x%" PRId64 "x%" PRId64 " %s (%.120s, %s)", c->what,
		 c->shape.m, c->shape.k, c->shape.n, rb_dtype_name(c->shape.dtype), c->plan,
		 rb_npu_launch_name(c->launch));
}

/* ---- bisecting ---- */

#define BISECT_MAX 24

/* The i-th smaller or simpler variant of c; false when there is no such variant. */
static bool variant(const struct rb_selftest_case *c, int i, struct rb_selftest_case *v)
{
	struct rb_plan_config cfg;

	*v = *c;
	rb_plan_config_init(&cfg);
	if (rb_plan_config_parse(&cfg, c->plan))
		return false;
	switch (i) {
	case 0: /* one core of several: the lowest, then the others */
	case 1:
	case 2:
		if (__builtin_popcount(cfg.core_mask) < 2 || !(cfg.core_mask & (1u << i)) ||
		    c->launch == RB_LAUNCH_MULTICORE)
			return false;
		snprintf(v->plan + strlen(v->plan), sizeof(v->plan) - strlen(v->plan), " mask=0x%x",
			 1u << i);
		return true;
	case 3:
		v->shape.m = (c->shape.m + 1) / 2;
		return v->shape.m < c->shape.m;
	case 4:
		v->shape.n = (c->shape.n + 1) / 2;
		return v->shape.n < c->shape.n;
	case 5:
		v->shape.k = (c->shape.k + 1) / 2;
		return v->shape.k < c->shape.k;
	default:
		return false;
	}
}

/* Walks to smaller failing variants until none fails alike (or BISECT_MAX runs). */
static void bisect(struct runner *r)
{
	struct rb_selftest_failure *f = &r->st->failure;
	struct rb_selftest_case v;
	char why[RB_SELFTEST_TEXT];
	bool smaller = true;

	f->smallest = f->failing;
	while (smaller && f->bisect_steps < BISECT_MAX) {
		smaller = false;
		for (int i = 0; !smaller && f->bisect_steps < BISECT_MAX && i < 6; i++) {
			if (!variant(&f->smallest, i, &v))
				continue;
			f->bisect_steps++;
			if (run_case(r, &v, NULL, why, sizeof(why)))
				return;
			if (failed(&v) && fails_alike(&v, &f->failing)) {
				f->smallest = v;
				smaller = true;
			}
		}
	}
}

/* ---- diagnosing ---- */

/* An IOMMU fault as the emulated kernel logs it ("iommu fault") or a board's IOMMU
 * driver does ("Page fault at 0x... of type read"). */
static bool says_iommu_fault(const char *text)
{
	return strcasestr(text, "iommu fault") || strcasestr(text, "page fault");
}

void rb_selftest_classify(int err, const char *text, const char **cause, const char **hint)
{
	if (says_iommu_fault(text) || err == -EFAULT) {
		*cause = "iommu-fault";
		*hint = "an NPU access outside every buffer: the program's addresses or the "
			"driver's IOMMU mapping; send the bug report (its programs name every "
			"address register)";
	} else if (err == -ETIMEDOUT) {
		*cause = "hang";
		*hint = "the job never finished: send the bug report; try the same shape on one "
			"core (--core-mask 0x1) and without chains (--no-chain)";
	} else if (err == -ENOMEM || err == -E2BIG) {
		*cause = "dma-memory";
		*hint = "too little memory for NPU buffers: free memory or raise CMA "
			"(docs/boards.md section 2)";
	} else if (err == -EACCES || err == -EPERM) {
		*cause = "permission";
		*hint = "docs/boards.md section 3";
	} else if (err == -EBUSY) {
		*cause = "busy";
		*hint = "another process holds the NPU: stop it and run again";
	} else {
		*cause = "device-error";
		*hint = "send the bug report (rknn-bench bugreport -o bug.tar.gz)";
	}
}

static const char *what_next(const struct rb_selftest_failure *f)
{
	if (f->smallest.wrong)
		return "send the bug report: its program is the smallest that gives a wrong "
		       "result; 'rknn-bench dump' decodes it, and the same shape on another "
		       "core or without the feature tells silicon from generator";
	return NULL;
}

/* The smallest case once more, changed one way (`how`, a plan suffix, or fences for
 * another launch): when that passes, the change tells what fails, said in `out`. */
static void contrast(struct runner *r, const char *how, bool fences, const char *meaning, char *out,
		     size_t size)
{
	struct rb_selftest_case v = r->st->failure.smallest;
	char why[RB_SELFTEST_TEXT];
	size_t n = strlen(out);

	if (how)
		snprintf(v.plan + strlen(v.plan), sizeof(v.plan) - strlen(v.plan), " %s", how);
	if (fences)
		v.launch = RB_LAUNCH_FENCES;
	if (run_case(r, &v, NULL, why, sizeof(why)) == 0 && !failed(&v) && n < size)
		snprintf(out + n, size - n, "; %s", meaning);
}

/* What one more run each can tell about the smallest case: a core that differs from
 * core 0, a launch mode that differs from fences. */
static void contrasts(struct runner *r, char *out, size_t size)
{
	const struct rb_selftest_case *c = &r->st->failure.smallest;
	struct rb_plan_config cfg;
	char text[160];

	rb_plan_config_init(&cfg);
	if (rb_plan_config_parse(&cfg, c->plan))
		return;
	if (__builtin_popcount(cfg.core_mask) == 1 && cfg.core_mask != 0x1) {
		snprintf(text, sizeof(text),
			 "the same case on core 0 is right: core %d computes it otherwise",
			 __builtin_ctz(cfg.core_mask));
		contrast(r, "mask=0x1", false, text, out, size);
	}
	if (c->launch != RB_LAUNCH_FENCES) {
		snprintf(text, sizeof(text),
			 "the same plan launched with fences is right: the %s launch fails",
			 rb_npu_launch_name(c->launch));
		contrast(r, NULL, true, text, out, size);
	}
}

/* The failure of a case: bisected, diagnosed, its programs kept. */
static int case_failure(struct runner *r, const struct rb_selftest_case *c, const char *why)
{
	struct rb_selftest *st = r->st;
	struct rb_selftest_failure *f = &st->failure;
	const char *cause, *hint;
	char first[RB_SELFTEST_TEXT], small[256], again[RB_SELFTEST_TEXT] = "";
	int err = c->err ? c->err : -EBADMSG;

	snprintf(first, sizeof(first), "%s", why);
	rb_selftest_kernel_log(st, NULL); /* before bisecting: its runs log more */
	f->failing = *c;
	bisect(r);
	if (f->bisect_steps && !same_case(&f->smallest, &f->failing))
		run_case(r, &f->smallest, NULL, again, sizeof(again));
	contrasts(r, again, sizeof(again));
	rb_selftest_classify(c->err, first, &cause, &hint);
	if (c->wrong) {
		cause = "wrong-result";
		hint = what_next(f);
	}
	describe(&f->smallest, small, sizeof(small));
	rb_selftest_programs(st, &f->smallest);
	rb_selftest_fail(st, r->rung, err, cause, hint,
			 "%s %s: %s; smallest failing alike after %d runs: %s%s%s", c->what,
			 c->wrong ? "gives a wrong result" : "fails", first, f->bisect_steps, small,
			 again[0] && again[0] != ';' ? ": " : "", again);
	return err;
}

/* ---- the programs of a case, as `dump` reads them ---- */

/* Where the programs of a kept case are laid out: the run's own addresses come from the
 * kernel and differ, every other field is what ran. */
#define PROG_A   0x10000000u
#define PROG_B   0x20000000u
#define PROG_C   0x40000000u
#define PROG_CMD 0x60000000u

static char *core_program(const struct rb_plan *plan, const struct rb_plan_core *core,
			  const char *title)
{
	struct rb_plan_bases bases = {PROG_A, PROG_B, PROG_C};
	struct rb_npu_task *tasks = calloc(core->n_tasks ? core->n_tasks : 1, sizeof(*tasks));
	struct rb_regcmd rc;
	char *text = NULL;
	size_t size, n;
	int err = tasks ? 0 : -ENOMEM;

	rb_regcmd_init(&rc);
	for (size_t i = 0; !err && i < core->n_tasks; i++)
		err = rb_plan_task_resolve(plan, &core->tasks[i], &bases, &tasks[i]);
	if (!err)
		err = rb_regcmd_build_chain(&rc, tasks, core->n_tasks, PROG_CMD, NULL);
	size = rc.count * 17 + 512;
	if (!err)
		text = malloc(size);
	if (text) {
		n = (size_t)snprintf(text, size,
				     "# %s: core %u, %zu tasks; A at 0x%08x, B at 0x%08x, C at "
				     "0x%08x, the program at 0x%08x (the run's own addresses "
				     "differ)\n",
				     title, core->core, core->n_tasks, PROG_A, PROG_B, PROG_C,
				     PROG_CMD);
		for (size_t i = 0; i < rc.count && n < size; i++)
			n += (size_t)snprintf(text + n, size - n, "%016" PRIx64 "\n", rc.words[i]);
	}
	rb_regcmd_release(&rc);
	free(tasks);
	return text;
}

int rb_selftest_programs(struct rb_selftest *st, const struct rb_selftest_case *c)
{
	struct rb_selftest_failure *f = &st->failure;
	struct rb_plan_config cfg;
	struct rb_plan plan;
	char title[300];

	rb_plan_config_init(&cfg);
	if (rb_plan_config_parse(&cfg, c->plan))
		return -EINVAL;
	cfg.mainline = cfg.mainline || strcmp(st->driver, "rocket") == 0;
	if (rb_plan_init(&plan, &c->shape, &cfg))
		return -EINVAL;
	describe(c, title, sizeof(title));
	for (unsigned i = 0; i < plan.n_cores && f->n_programs < RB_HW_MAX_CORES; i++) {
		char *text = core_program(&plan, &plan.cores[i], title);

		if (!text)
			continue;
		f->program_core[f->n_programs] = plan.cores[i].core;
		f->programs[f->n_programs++] = text;
	}
	rb_plan_release(&plan);
	return 0;
}

/* ---- the rungs' cases ---- */

struct spec {
	const char *what;
	int64_t m, k, n;
	enum rb_dtype dtype;
	const char *plan;
};

#define FP16 RB_DTYPE_FP16
#define INT8 RB_DTYPE_INT8

/* Rung 4: the tiling regimes, each run on each core alone. */
static const struct spec single[] = {
    {"one task", 4, 64, 16, FP16, ""},
    {"int8", 8, 64, 64, INT8, ""},
    {"M tiles", 96, 256, 32, FP16, "axis=m dbanks=1"},
    {"N tiles", 1, 256, 512, FP16, "wbanks=1"},
    {"K-slices", 2, 1024, 64, FP16, "kslice=256"},
    {"bank split", 16, 512, 128, FP16, "banks=4:8"},
    {"no chain", 1, 256, 512, FP16, "wbanks=1 chain=0"},
};

/* Rung 5: all three cores, every launch mode. */
static const struct spec multi[] = {
    {"N split", 1, 256, 768, FP16, "mask=0x7"},
    {"M split", 96, 128, 96, FP16, "mask=0x7 axis=m"},
    {"chains per core", 4, 512, 1536, FP16, "mask=0x7 wbanks=2"},
};

static int add_and_check(struct runner *r, struct rb_selftest_case *c, struct rb_result *keep)
{
	char why[RB_SELFTEST_TEXT];
	int err = run_case(r, c, keep, why, sizeof(why));

	if (err)
		return err;
	err = rb_selftest_add_case(&r->st->rungs[r->rung], c);
	if (err)
		return err;
	return failed(c) ? case_failure(r, c, why) : 0;
}

static void make_case(struct rb_selftest_case *c, const struct spec *s, const char *plan,
		      enum rb_npu_launch launch)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->what, sizeof(c->what), "%s", s->what);
	c->shape = (struct rb_shape){.m = s->m, .k = s->k, .n = s->n, .dtype = s->dtype};
	snprintf(c->plan, sizeof(c->plan), "%s", plan);
	c->launch = launch;
}

static bool is_rocket(const struct rb_selftest *st)
{
	return strcmp(st->driver, "rocket") == 0;
}

static int rung_single(struct runner *r)
{
	struct rb_selftest_case c;
	int err = 0;

	for (unsigned core = 0; err == 0 && core < 3; core++)
		for (size_t i = 0; err == 0 && i < sizeof(single) / sizeof(single[0]); i++) {
			char plan[256];

			snprintf(plan, sizeof(plan), "mask=0x%x%s%s", 1u << core,
				 single[i].plan[0] ? " " : "", single[i].plan);
			make_case(&c, &single[i], plan, RB_LAUNCH_FENCES);
			err = add_and_check(r, &c, NULL);
		}
	if (!err && is_rocket(r->st))
		rb_selftest_note(&r->st->rungs[4], "rocket has no core masks: its scheduler picks "
						   "the core of each run");
	return err;
}

static int rung_multi(struct runner *r)
{
	enum rb_npu_launch modes[] = {RB_LAUNCH_FENCES, RB_LAUNCH_THREADS, RB_LAUNCH_MULTICORE};
	struct rb_selftest_case c;
	int err = 0;

	for (size_t l = 0; err == 0 && l < 3; l++) {
		if (modes[l] == RB_LAUNCH_MULTICORE && is_rocket(r->st)) {
			rb_selftest_note(&r->st->rungs[5], "rocket has no multicore launch");
			continue;
		}
		for (size_t i = 0; err == 0 && i < sizeof(multi) / sizeof(multi[0]); i++) {
			make_case(&c, &multi[i], multi[i].plan, modes[l]);
			err = add_and_check(r, &c, NULL);
		}
	}
	return err;
}

/* ---- rung 6: features unproven on silicon, each with and without ---- */

struct feature {
	const char *name;
	struct spec s;
	const char *with, *without;
	bool (*used)(const struct rb_plan *plan);
};

static bool uses_wreuse(const struct rb_plan *p)
{
	return p->weight_reuse;
}

static bool uses_fp16_out(const struct rb_plan *p)
{
	return p->out == RB_PREC_FP16;
}

static bool uses_mainline(const struct rb_plan *p)
{
	return p->config.mainline;
}

static bool uses_streamed(const struct rb_plan *p)
{
	return p->streamed;
}

static const struct feature features[] = {
    {"weight reuse",
     {"weight reuse", 256, 512, 64, FP16, NULL},
     "mask=0x1 axis=m dbanks=1 wreuse=1",
     "mask=0x1 axis=m dbanks=1 wreuse=0",
     uses_wreuse},
    {"fp16 output",
     {"fp16 output", 4, 64, 64, FP16, NULL},
     "mask=0x1 out=fp16",
     "mask=0x1 out=fp32",
     uses_fp16_out},
    {"mainline program variant",
     {"mainline program variant", 4, 64, 64, FP16, NULL},
     "mask=0x1 mainline=1",
     "mask=0x1 mainline=0",
     uses_mainline},
    {"streamed weights",
     {"streamed weights", 1, 2048, 64, FP16, NULL},
     "mask=0x1 res=streamed wbanks=1",
     "mask=0x1 res=resident wbanks=1",
     uses_streamed},
};

/* Whether the plan of `text` for s uses the feature (else the case proves nothing). */
static bool plan_uses(const struct rb_selftest *st, const struct feature *f, const char *text)
{
	struct rb_shape shape = {f->s.m, f->s.k, f->s.n, f->s.dtype};
	struct rb_plan_config cfg;
	struct rb_plan plan;
	bool used;

	rb_plan_config_init(&cfg);
	if (rb_plan_config_parse(&cfg, text))
		return false;
	cfg.mainline = cfg.mainline || is_rocket(st);
	if (rb_plan_init(&plan, &shape, &cfg))
		return false;
	used = f->used(&plan);
	rb_plan_release(&plan);
	return used;
}

static int feature_failure(struct runner *r, const struct feature *f,
			   const struct rb_selftest_case *with, const struct rb_selftest_case *base,
			   const char *why)
{
	struct rb_selftest_failure *fl = &r->st->failure;
	char hint[512];

	fl->failing = fl->smallest = *with;
	rb_selftest_programs(r->st, with);
	snprintf(hint, sizeof(hint),
		 "leave the feature out of tuning (the tune space's '%s' knob) and send the bug "
		 "report: its program has the feature, the same plan without it ran right",
		 f->without);
	return rb_selftest_fail(r->st, 6, with->err ? with->err : -EBADMSG, "feature", hint,
				"%s fails on this device: %s (%s) %s: %s; the same plan without it "
				"(%s) is right",
				f->name, with->what, with->plan,
				with->wrong ? "gives a wrong result" : "fails", why, base->plan);
}

static int one_feature(struct runner *r, const struct feature *f)
{
	struct rb_selftest_case with, base;
	char why[RB_SELFTEST_TEXT], base_why[RB_SELFTEST_TEXT];
	bool rocket = is_rocket(r->st);
	int err;

	if (!plan_uses(r->st, f, f->with)) {
		rb_selftest_note(&r->st->rungs[6],
				 "%s: the planner does not use it for %" PRId64 "x%" PRId64
				 "x%" PRId64 ": not tested",
				 f->name, f->s.m, f->s.k, f->s.n);
		return 0;
	}
	make_case(&base, &f->s, f->without, RB_LAUNCH_FENCES);
	make_case(&with, &f->s, f->with, RB_LAUNCH_FENCES);
	snprintf(with.what, sizeof(with.what), "%s", f->name);
	snprintf(base.what, sizeof(base.what), "without %s", f->name);
	if (rocket && f->used == uses_mainline) { /* rocket runs nothing else */
		rb_selftest_note(&r->st->rungs[6], "rocket needs the mainline variant: every "
						   "rung ran it, there is no plan without it");
		return add_and_check(r, &with, NULL);
	}
	err = run_case(r, &base, NULL, base_why, sizeof(base_why));
	if (!err)
		err = rb_selftest_add_case(&r->st->rungs[6], &base);
	if (!err && failed(&base))
		return case_failure(r, &base, base_why);
	if (!err)
		err = run_case(r, &with, NULL, why, sizeof(why));
	if (!err)
		err = rb_selftest_add_case(&r->st->rungs[6], &with);
	if (!err && failed(&with))
		return feature_failure(r, f, &with, &base, why);
	return err;
}

static int rung_features(struct runner *r)
{
	int err = 0;

	for (size_t i = 0; err == 0 && i < sizeof(features) / sizeof(features[0]); i++)
		err = one_feature(r, &features[i]);
	return err;
}

/* ---- rung 7: timing, the runs calibrate fits (docs/boards.md section 6) ---- */

struct timing_run {
	const char *plan;
	enum rb_npu_launch launch;
	bool rknpu_only;
	struct {
		int64_t m, k, n;
		enum rb_dtype dtype;
	} shapes[4];
};

static const struct timing_run timing[] = {
    {"mask=0x1",
     RB_LAUNCH_FENCES,
     false,
     {{1, 64, 64, FP16}, {1, 1024, 4096, FP16}, {256, 512, 1024, FP16}, {64, 512, 4096, FP16}}},
    {"mask=0x1", RB_LAUNCH_FENCES, true, {{256, 1024, 1024, INT8}, {512, 512, 1024, INT8}}},
    {"mask=0x7", RB_LAUNCH_FENCES, false, {{1, 64, 192, FP16}, {1, 1024, 4096, FP16}}},
    {"mask=0x1 wbanks=1", RB_LAUNCH_FENCES, false, {{1, 64, 8192, FP16}}},
    {"mask=0x1 wbanks=1 chain=0", RB_LAUNCH_FENCES, false, {{1, 64, 8192, FP16}}},
    {"mask=0x1 chain=0", RB_LAUNCH_FENCES, false, {{1, 1024, 4096, FP16}}},
    {"mask=0x1 dbanks=1", RB_LAUNCH_FENCES, false, {{512, 1024, 16, FP16}, {512, 64, 16, FP16}}},
    {"mask=0x7 wbanks=1", RB_LAUNCH_MULTICORE, true, {{1, 64, 8192, FP16}}},
    {"mask=0x7", RB_LAUNCH_THREADS, true, {{1, 1024, 4096, FP16}}},
};

static int keep_result(struct rb_selftest *st, struct rb_result *res,
		       const struct rb_selftest_case *c, size_t run)
{
	struct rb_result *v = realloc(st->results, (st->n_results + 1) * sizeof(*v));
	char **names = realloc(st->result_names, (st->n_results + 1) * sizeof(*names));
	char name[64];

	if (v)
		st->results = v;
	if (names)
		st->result_names = names;
	if (!v || !names)
		return rb_set_error(-ENOMEM, "out of memory");
	snprintf(name, sizeof(name), "calib-%zu %" PRId64 "x%" PRId64 "x%" PRId64, run + 1,
		 c->shape.m, c->shape.k, c->shape.n);
	st->result_names[st->n_results] = strdup(name);
	if (!st->result_names[st->n_results])
		return rb_set_error(-ENOMEM, "out of memory");
	res->names = NULL; /* set once the array stops moving (rung_timing) */
	res->n_names = 1;
	st->results[st->n_results++] = *res;
	return 0;
}

static int timing_case(struct runner *r, struct rb_engine *model, const struct timing_run *t,
		       size_t run, size_t i)
{
	struct rb_selftest_case c;
	struct rb_result res;
	struct spec s = {"timing",       t->shapes[i].m,     t->shapes[i].k,
			 t->shapes[i].n, t->shapes[i].dtype, NULL};
	int err;

	make_case(&c, &s, t->plan, t->launch);
	memset(&res, 0, sizeof(res));
	/* the modeled time on the built-in profile: a model-only emulator of the same kernel */
	err = rb_engine_model_us(model, &c.shape, c.plan, c.launch, &c.model_us);
	if (err)
		return rb_selftest_fail(r->st, 7, err, "device-error", NULL,
					"the model cannot run %s: %s", t->plan, rb_last_error());
	err = add_and_check(r, &c, &res);
	if (err)
		return err;
	c.flagged =
	    !(c.us >= RB_SELFTEST_BAND_LO * c.model_us && c.us <= RB_SELFTEST_BAND_HI * c.model_us);
	r->st->rungs[7].cases[r->st->rungs[7].n_cases - 1] = c;
	if (c.flagged)
		rb_selftest_note(&r->st->rungs[7],
				 "%" PRId64 "x%" PRId64 "x%" PRId64 " (%s, %s): %.1f us is %.2fx "
				 "the model's %.1f us, outside %.1f-%.1fx: pin the clocks (info), "
				 "then calibrate",
				 c.shape.m, c.shape.k, c.shape.n, c.plan,
				 rb_npu_launch_name(c.launch), c.us, c.us / c.model_us, c.model_us,
				 RB_SELFTEST_BAND_LO, RB_SELFTEST_BAND_HI);
	return keep_result(r->st, &res, &c, run);
}

static int rung_timing(struct runner *r)
{
	struct rb_engine_opts mopts = r->st->opts.engine;
	struct rb_engine model;
	int err;

	mopts.sim.model_only = true;
	mopts.sim.soc = NULL; /* the built-in profile: what boards are held against */
	err = rb_engine_open(&model, is_rocket(r->st) ? &rb_engine_sim_rocket : &rb_engine_sim,
			     &mopts);
	if (err)
		return rb_selftest_fail(r->st, 7, err, "device-error", NULL,
					"cannot open the model: %s", rb_last_error());
	r->mode = RB_VERIFY_SAMPLE;
	if (!r->st->ops->modeled) {
		r->measure.iters = r->st->opts.iters;
		r->measure.warmup = 3;
	}
	for (size_t t = 0; err == 0 && t < sizeof(timing) / sizeof(timing[0]); t++) {
		if (timing[t].rknpu_only && is_rocket(r->st))
			continue;
		for (size_t i = 0; err == 0 && i < 4 && timing[t].shapes[i].m; i++)
			err = timing_case(r, &model, &timing[t], t, i);
	}
	rb_engine_close(&model);
	for (size_t i = 0; i < r->st->n_results; i++)
		r->st->results[i].names = &r->st->result_names[i];
	return err;
}

/* ---- rung 8: the soak ---- */

static void soak_case(struct rb_rng *rng, bool rocket, struct rb_selftest_case *c)
{
	static const unsigned masks[] = {0x1, 0x2, 0x4, 0x3, 0x7};
	unsigned mask = masks[rb_rng_range(rng, 0, 4)];
	bool int8 = rb_rng_range(rng, 0, 3) == 0;
	int64_t m =
	    rb_rng_range(rng, 0, 3) == 0 ? rb_rng_range(rng, 1, 256) : rb_rng_range(rng, 1, 16);
	int chain = (int)rb_rng_range(rng, 0, 1), wreuse = (int)rb_rng_range(rng, 0, 1);

	memset(c, 0, sizeof(*c));
	snprintf(c->what, sizeof(c->what), "soak");
	c->shape = (struct rb_shape){.m = m,
				     .k = rb_rng_range(rng, 1, 1024),
				     .n = rb_rng_range(rng, 1, 1024),
				     .dtype = int8 ? INT8 : FP16};
	c->launch = (enum rb_npu_launch)rb_rng_range(rng, 0, rocket ? 1 : 2);
	if (c->launch == RB_LAUNCH_MULTICORE && __builtin_popcount(mask) == 1)
		c->launch = RB_LAUNCH_FENCES;
	snprintf(c->plan, sizeof(c->plan), "mask=0x%x chain=%d wreuse=%d%s", mask, chain, wreuse,
		 !int8 && rb_rng_range(rng, 0, 2) == 0 ? " out=fp16" : "");
}

static int rung_soak(struct runner *r)
{
	struct rb_rng rng;
	struct rb_selftest_case c;
	double end = rb_now_us() + r->st->opts.soak_s * 1e6;
	size_t n = 0;
	int err = 0;

	rb_rng_init(&rng, r->st->opts.seed);
	while (err == 0 && (n == 0 || rb_now_us() < end)) {
		soak_case(&rng, is_rocket(r->st), &c);
		err = add_and_check(r, &c, NULL);
		n++;
	}
	if (!err)
		rb_selftest_note(&r->st->rungs[8],
				 "%zu random shapes and configs in %.0f s (seed %" PRIu64
				 "), every one verified",
				 n, r->st->opts.soak_s, r->st->opts.seed);
	return err;
}

int rb_selftest_plans(struct rb_selftest *st, int rung)
{
	struct runner r = {.st = st, .rung = rung, .mode = RB_VERIFY_FULL};
	int err;

	rb_measure_opts_init(&r.measure);
	r.measure.iters = 1;
	r.measure.warmup = 0;
	switch (rung) {
	case 4:
		err = rung_single(&r);
		break;
	case 5:
		err = rung_multi(&r);
		break;
	case 6:
		err = rung_features(&r);
		break;
	case 7:
		err = rung_timing(&r);
		break;
	default:
		err = rung_soak(&r);
		break;
	}
	runner_close(&r);
	return err;
}
