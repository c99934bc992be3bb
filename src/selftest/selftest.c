/* The ladder of rknn-bench selftest (see selftest.h): the rungs in order, the failure
 * record, and the report. */
#include "selftest/selftest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/stats.h"

static const struct {
	const char *name, *proves;
} rung_text[RB_SELFTEST_RUNGS] = {
    {"system", "the kernel driver, its node and permissions, memory, clocks, no other holder"},
    {"buffers", "buffers are created, mapped, synced both ways and destroyed, data intact"},
    {"submit", "the smallest job (one task) completes through the driver: interrupt, fence "
	       "or wait, output"},
    {"golden", "the golden set's one-task programs (word for word) give the right result"},
    {"single-core", "plans across the tiling regimes are right on each core alone"},
    {"multi-core", "every launch mode is right on all three cores"},
    {"features", "each feature unproven on silicon is right, against the same plan without"},
    {"timing", "measured times against the model, and the runs calibrate fits"},
    {"soak", "random shapes and configs stay right for the whole soak"},
};

void rb_selftest_opts_init(struct rb_selftest_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->device = "auto";
	rb_engine_opts_init(&o->engine);
	o->soak_s = RB_SELFTEST_SOAK_S;
	o->seed = 1;
	o->iters = 20;
}

void rb_selftest_note(struct rb_selftest_rung *r, const char *fmt, ...)
{
	va_list ap;

	if (r->n_notes == RB_SELFTEST_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(r->notes[r->n_notes++], sizeof(r->notes[0]), fmt, ap);
	va_end(ap);
}

int rb_selftest_add_case(struct rb_selftest_rung *r, const struct rb_selftest_case *c)
{
	struct rb_selftest_case *v = realloc(r->cases, (r->n_cases + 1) * sizeof(*v));

	if (!v)
		return rb_set_error(-ENOMEM, "out of memory");
	r->cases = v;
	r->cases[r->n_cases++] = *c;
	return 0;
}

int rb_selftest_fail(struct rb_selftest *st, int rung, int err, const char *cause, const char *hint,
		     const char *fmt, ...)
{
	struct rb_selftest_failure *f = &st->failure;
	va_list ap;

	f->rung = rung;
	f->err = err;
	snprintf(f->cause, sizeof(f->cause), "%s", cause);
	snprintf(f->hint, sizeof(f->hint), "%s", hint ? hint : "");
	va_start(ap, fmt);
	vsnprintf(f->message, sizeof(f->message), fmt, ap);
	va_end(ap);
	return rb_set_error(err, "rung %d (%s): %s", rung, rung_text[rung].name, f->message);
}

static int run_rung(struct rb_selftest *st, int i)
{
	switch (i) {
	case 0:
		return rb_selftest_system(st);
	case 1:
		return rb_selftest_buffers(st);
	case 2:
		return rb_selftest_submit(st);
	case 3:
		return rb_selftest_golden(st);
	default:
		return rb_selftest_plans(st, i);
	}
}

static int check_opts(const struct rb_selftest_opts *o)
{
	if (!(o->soak_s >= 0))
		return rb_set_error(-EINVAL, "the soak length must be 0 or more seconds");
	if (o->iters < 1)
		return rb_set_error(-EINVAL, "--iters must be 1 or more");
	return 0;
}

int rb_selftest_run(struct rb_selftest *st, const struct rb_selftest_opts *o,
		    rb_selftest_progress_fn progress, void *ctx)
{
	double t0 = rb_now_us();
	int ret = check_opts(o);

	memset(st, 0, sizeof(*st));
	st->opts = *o;
	st->failure.rung = -1;
	st->kmsg_fd = -1;
	if (ret)
		return ret;
	for (int i = 0; i < RB_SELFTEST_RUNGS; i++) {
		st->rungs[i].name = rung_text[i].name;
		st->rungs[i].proves = rung_text[i].proves;
	}
	rb_selftest_kmsg_open(st);
	for (int i = 0; ret == 0 && i < RB_SELFTEST_RUNGS; i++) {
		double r0 = rb_now_us();

		if (progress)
			progress(ctx, st, i, false);
		ret = run_rung(st, i);
		st->rungs[i].ran = true;
		st->rungs[i].passed = ret == 0;
		st->rungs[i].seconds = (rb_now_us() - r0) / 1e6;
		if (ret && st->failure.rung < 0) /* an error that is not a diagnosis */
			rb_selftest_fail(st, i, ret, "device-error", NULL, "%s", rb_last_error());
		if (ret)
			rb_selftest_kernel_log(st, NULL);
		if (progress)
			progress(ctx, st, i, true);
	}
	if (st->kmsg_fd >= 0)
		close(st->kmsg_fd);
	st->kmsg_fd = -1;
	st->seconds = (rb_now_us() - t0) / 1e6;
	return ret;
}

void rb_selftest_release(struct rb_selftest *st)
{
	for (int i = 0; i < RB_SELFTEST_RUNGS; i++)
		free(st->rungs[i].cases);
	for (size_t i = 0; i < st->failure.n_programs; i++)
		free(st->failure.programs[i]);
	for (size_t i = 0; i < st->n_results; i++) {
		rb_result_release(&st->results[i]);
		free(st->result_names[i]);
	}
	free(st->results);
	free(st->result_names);
	if (st->kmsg_fd >= 0)
		close(st->kmsg_fd);
	memset(st, 0, sizeof(*st));
	st->kmsg_fd = -1;
}
