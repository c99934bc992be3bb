/* The selftest report: a run report of rung 7's results plus the ladder (selftest.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "selftest/selftest.h"

static cJSON *case_json(const struct rb_selftest_case *c)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "what", c->what);
	rb_json_add_shape(o, &c->shape);
	cJSON_AddStringToObject(o, "plan", c->plan);
	cJSON_AddStringToObject(o, "launch", rb_npu_launch_name(c->launch));
	cJSON_AddStringToObject(o, "status", c->err ? "error" : c->wrong ? "wrong" : "ok");
	if (c->err)
		cJSON_AddStringToObject(o, "error", strerror(-c->err));
	if (c->us > 0)
		cJSON_AddNumberToObject(o, "us", c->us);
	if (c->model_us > 0) {
		cJSON_AddNumberToObject(o, "model_us", c->model_us);
		cJSON_AddNumberToObject(o, "measured_over_modeled", c->us / c->model_us);
		cJSON_AddBoolToObject(o, "flagged", c->flagged);
	}
	return o;
}

static cJSON *rung_json(const struct rb_selftest_rung *r, int i)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *notes = cJSON_AddArrayToObject(o, "notes");
	cJSON *cases = cJSON_AddArrayToObject(o, "cases");

	cJSON_AddNumberToObject(o, "rung", i);
	cJSON_AddStringToObject(o, "name", r->name);
	cJSON_AddStringToObject(o, "proves", r->proves);
	cJSON_AddStringToObject(o, "status", !r->ran ? "not run" : r->passed ? "passed" : "failed");
	cJSON_AddNumberToObject(o, "seconds", r->seconds);
	for (size_t n = 0; n < r->n_notes; n++)
		cJSON_AddItemToArray(notes, cJSON_CreateString(r->notes[n]));
	for (size_t n = 0; n < r->n_cases; n++)
		cJSON_AddItemToArray(cases, case_json(&r->cases[n]));
	return o;
}

static cJSON *failure_json(const struct rb_selftest_failure *f)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *programs = cJSON_AddArrayToObject(o, "programs");

	cJSON_AddNumberToObject(o, "rung", f->rung);
	cJSON_AddStringToObject(o, "cause", f->cause);
	cJSON_AddStringToObject(o, "message", f->message);
	cJSON_AddStringToObject(o, "hint", f->hint);
	cJSON_AddStringToObject(o, "error",
				f->err == -EBADMSG ? "wrong result" : strerror(-f->err));
	cJSON_AddItemToObject(o, "failing", case_json(&f->failing));
	cJSON_AddItemToObject(o, "smallest", case_json(&f->smallest));
	cJSON_AddNumberToObject(o, "bisect_runs", f->bisect_steps);
	if (f->int_status_read)
		cJSON_AddNumberToObject(o, "int_status", f->int_status);
	cJSON_AddBoolToObject(o, "output_written", f->output_written);
	cJSON_AddStringToObject(o, "kernel_log", f->kernel_log);
	for (size_t i = 0; i < f->n_programs; i++) {
		cJSON *p = cJSON_CreateObject();

		cJSON_AddNumberToObject(p, "core", f->program_core[i]);
		cJSON_AddStringToObject(p, "hex", f->programs[i]);
		cJSON_AddItemToArray(programs, p);
	}
	return o;
}

static cJSON *system_json(const struct rb_selftest *st)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *w = cJSON_AddArrayToObject(o, "warnings");

	cJSON_AddStringToObject(o, "mode", st->mode);
	cJSON_AddStringToObject(o, "driver", st->driver);
	cJSON_AddStringToObject(o, "node", st->node);
	if (st->npu_read) {
		cJSON_AddItemToObject(o, "npu", rb_npu_info_json(&st->npu, NULL));
		cJSON_AddItemToObject(o, "host", rb_host_info_json(&st->host));
	}
	for (size_t i = 0; i < st->warnings.n; i++)
		cJSON_AddItemToArray(w, cJSON_CreateString(st->warnings.text[i]));
	cJSON_AddNumberToObject(o, "cma_total_kb", (double)st->cma_total_kb);
	cJSON_AddNumberToObject(o, "cma_free_kb", (double)st->cma_free_kb);
	cJSON_AddNumberToObject(o, "mem_available_kb", (double)st->mem_available_kb);
	cJSON_AddStringToObject(o, "other_holders", st->holders);
	return o;
}

cJSON *rb_selftest_json(const struct rb_selftest *st, const struct rb_context *ctx)
{
	cJSON *doc = rb_report_json(ctx, st->results, st->n_results);
	cJSON *o = cJSON_CreateObject(), *rungs;

	if (!doc || !o) {
		cJSON_Delete(doc);
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddItemToObject(doc, "selftest", o);
	cJSON_AddStringToObject(o, "device", st->opts.device);
	cJSON_AddBoolToObject(o, "passed", st->failure.rung < 0);
	cJSON_AddNumberToObject(o, "seconds", st->seconds);
	cJSON_AddNumberToObject(o, "soak_s", st->opts.soak_s);
	cJSON_AddNumberToObject(o, "seed", (double)st->opts.seed);
	cJSON_AddNumberToObject(o, "band_lo", RB_SELFTEST_BAND_LO);
	cJSON_AddNumberToObject(o, "band_hi", RB_SELFTEST_BAND_HI);
	cJSON_AddItemToObject(o, "system", system_json(st));
	rungs = cJSON_AddArrayToObject(o, "rungs");
	for (int i = 0; i < RB_SELFTEST_RUNGS; i++)
		cJSON_AddItemToArray(rungs, rung_json(&st->rungs[i], i));
	if (st->failure.rung >= 0)
		cJSON_AddItemToObject(o, "failure", failure_json(&st->failure));
	return doc;
}
