/* tune: the search space (enumeration, the space file) and the resumable cache. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/error.h"
#include "npu/plan.h"
#include "model/ggml_rknn.h"
#include "tune/tune.h"

static const struct rb_shape decode = {1, 2048, 8192, RB_DTYPE_FP16};

/* ---- space ---- */

static void load(struct rb_tune_space *s, const char *json)
{
	rb_tune_space_default(s);
	assert_int_equal(rb_tune_space_load_string(s, json, strlen(json), "space.json"), 0);
}

/* Every point plans, no two plan to the same program, and the default space stays in
 * the hundreds per shape. */
static void test_default_space(void **state)
{
	struct rb_tune_space s;
	struct rb_tune_points pts;

	(void)state;
	rb_tune_space_default(&s);
	assert_int_equal(rb_tune_space_enumerate(&s, &decode, &pts), 0);
	assert_true(pts.count >= 50 && pts.count <= 1000);
	for (size_t i = 0; i < pts.count; i++) {
		struct rb_plan plan;
		uint64_t sig;

		assert_int_equal(rb_plan_init(&plan, &decode, &pts.items[i].plan), 0);
		sig = rb_tune_plan_signature(&plan, pts.items[i].launch);
		rb_plan_release(&plan);
		for (size_t j = 0; j < i; j++) {
			struct rb_plan other;

			assert_int_equal(rb_plan_init(&other, &decode, &pts.items[j].plan), 0);
			assert_true(rb_tune_plan_signature(&other, pts.items[j].launch) != sig);
			rb_plan_release(&other);
		}
	}
	rb_tune_points_release(&pts);
}

static bool has_mask(const struct rb_tune_points *pts, unsigned mask)
{
	for (size_t i = 0; i < pts->count; i++)
		if (pts->items[i].plan.core_mask == mask)
			return true;
	return false;
}

/* Masks 0x5 and 0x6 stay (the job runner submits one single-core job per core); one
 * core makes alignments and weights irrelevant: one point per launch mode. */
static void test_masks_and_dedup(void **state)
{
	struct rb_tune_space s;
	struct rb_tune_points pts;

	(void)state;
	rb_tune_space_default(&s);
	assert_int_equal(rb_tune_space_enumerate(&s, &decode, &pts), 0);
	for (unsigned m = 1; m <= 7; m++)
		assert_true(has_mask(&pts, m));
	rb_tune_points_release(&pts);
	load(&s,
	     "{\"mask\":[\"0x1\"],\"banks\":[\"1:11\"],\"kslice\":[\"auto\"],\"split\":[\"n\"]}");
	assert_int_equal(rb_tune_space_enumerate(&s, &decode, &pts), 0);
	assert_int_equal(pts.count, 3);
	assert_true(pts.duplicates > 0);
	assert_int_equal(pts.items[0].launch, RB_LAUNCH_FENCES);
	assert_int_equal(pts.items[1].launch, RB_LAUNCH_THREADS);
	assert_int_equal(pts.items[2].launch, RB_LAUNCH_MULTICORE);
	rb_tune_points_release(&pts);
}

/* Known failures leave the default space: a multicore launch with mask 0x5 or 0x6
 * never runs on the vendor driver. Masks 0x5 and 0x6 stay with the other launches; a
 * space file naming the masks gets the multicore ones back, and is another space. */
static size_t multicore_5_6(const struct rb_tune_points *pts, size_t *other_5_6)
{
	size_t n = 0;

	*other_5_6 = 0;
	for (size_t i = 0; i < pts->count; i++) {
		unsigned m = pts->items[i].plan.core_mask;

		if (m != 0x5 && m != 0x6)
			continue;
		if (pts->items[i].launch == RB_LAUNCH_MULTICORE)
			n++;
		else
			(*other_5_6)++;
	}
	return n;
}

static void test_known_failures(void **state)
{
	struct rb_tune_space def, asked;
	struct rb_tune_points pts;
	size_t others;

	(void)state;
	rb_tune_space_default(&def);
	assert_int_equal(rb_tune_space_enumerate(&def, &decode, &pts), 0);
	assert_int_equal(multicore_5_6(&pts, &others), 0);
	assert_true(others > 0);
	rb_tune_points_release(&pts);
	load(&asked, "{\"mode\":\"extend\",\"mask\":[\"0x5\"]}");
	assert_int_equal(rb_tune_space_enumerate(&asked, &decode, &pts), 0);
	assert_true(multicore_5_6(&pts, &others) > 0);
	rb_tune_points_release(&pts);
	assert_true(rb_tune_space_hash(&asked) != rb_tune_space_hash(&def));
	load(&asked, "{\"launch\":[\"multicore\"]}"); /* the masks not named: still out */
	assert_int_equal(rb_tune_space_enumerate(&asked, &decode, &pts), 0);
	assert_true(pts.count > 0);
	assert_int_equal(multicore_5_6(&pts, &others), 0);
	rb_tune_points_release(&pts);
}

/* What the planner refuses is not in the space: one weight bank (11:1) cannot hold a
 * kernel group of 16 fp16 kernels x a K-slice of 2048 channels. */
static void test_rejected(void **state)
{
	struct rb_tune_space s;
	struct rb_tune_points pts;

	(void)state;
	load(&s,
	     "{\"mask\":[7],\"weights\":[\"even\"],\"align\":[16],\"banks\":[\"11:1\",\"1:11\"],"
	     "\"kslice\":[2048],\"launch\":[\"fences\"],\"split\":[\"n\"]}");
	assert_int_equal(rb_tune_space_enumerate(&s, &decode, &pts), 0);
	assert_int_equal(pts.count, 1);
	assert_int_equal(pts.rejected, 1);
	assert_int_equal(pts.items[0].plan.data_banks, 1);
	rb_tune_points_release(&pts);
}

static void test_space_extend(void **state)
{
	struct rb_tune_space s, d;
	char desc[4096];

	(void)state;
	rb_tune_space_default(&d);
	load(&s, "{\"mode\":\"extend\",\"res\":[\"streamed\"],\"chain\":[false]}");
	assert_int_equal(s.n[RB_KNOB_RES], 2);
	assert_int_equal(s.n[RB_KNOB_CHAIN], 2);
	assert_int_equal(s.n[RB_KNOB_MASK], d.n[RB_KNOB_MASK]);
	assert_true(rb_tune_space_hash(&s) != rb_tune_space_hash(&d));
	assert_int_equal(rb_tune_space_describe(&s, desc, sizeof(desc)), 0);
	assert_non_null(strstr(desc, "res=resident|streamed"));
	assert_non_null(strstr(desc, "chain=1|0"));
}

/* Bad space files: the file, the path and the problem. */
static void test_space_errors(void **state)
{
	static const struct {
		const char *json, *message;
	} cases[] = {
	    {"[1]", "space.json: the space must be a JSON object"},
	    {"{\"masks\":[1]}", "space.json: key 'masks' is unknown"},
	    {"{\"mask\":[1],\"mask\":[2]}", "space.json: key 'mask' is given twice"},
	    {"{\"mask\":[]}", "space.json: mask must be a non-empty array"},
	    {"{\"mask\":[8]}", "space.json: mask[0]: core mask '8' must be 0x1 to 0x7"},
	    {"{\"align\":[16,48]}", "space.json: align[1]: alignment '48' must be"},
	    {"{\"banks\":[\"4-8\"]}", "space.json: banks[0]: banks '4-8' must be DATA:WEIGHT"},
	    {"{\"launch\":[\"async\"]}", "space.json: launch[0]: launch mode 'async'"},
	    {"{\"weights\":[{}]}", "space.json: weights[0] must be a string or a number"},
	    {"{\"mode\":\"merge\"}", "space.json: mode must be"},
	    {"{\"mask\":[1]} x",
	     "space.json: extra text after the JSON value at line 1, column 14"},
	};
	struct rb_tune_space s, before;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rb_tune_space_default(&s);
		before = s;
		assert_int_equal(rb_tune_space_load_string(&s, cases[i].json, strlen(cases[i].json),
							   "space.json"),
				 -EINVAL);
		if (!strstr(rb_last_error(), cases[i].message))
			fail_msg("case %zu: '%s' lacks '%s'", i, rb_last_error(), cases[i].message);
		assert_memory_equal(&s, &before, sizeof(s));
	}
}

/* The rknn_matmul_api space: every point splits N into one range per core, each cut at
 * a multiple of 32 (the backend's 32-column blocks), the ranges back to back from 0 to
 * the end of N, launched by threads. */
static void test_api_space(void **state)
{
	static const int64_t ns[] = {8192, 2048, 1000, 128256, 96, 64, 48, 8200};
	static const enum rb_dtype dtypes[] = {RB_DTYPE_FP16, RB_DTYPE_INT8};
	struct rb_tune_space space;

	(void)state;
	rb_tune_space_rknn_api(&space);
	for (size_t d = 0; d < 2; d++)
		for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
			struct rb_shape shape = {i % 2 ? 1 : 128, 2048, ns[i], dtypes[d]};
			struct rb_tune_points pts;

			assert_int_equal(rb_tune_space_enumerate(&space, &shape, &pts), 0);
			assert_true(pts.count >= 3); /* at least the three single cores */
			for (size_t p = 0; p < pts.count; p++) {
				struct rb_plan plan;
				uint32_t at = 0;

				assert_int_equal(pts.items[p].launch, RB_LAUNCH_THREADS);
				assert_int_equal(rb_plan_init(&plan, &shape, &pts.items[p].plan),
						 0);
				assert_int_equal(plan.config.axis, RB_PLAN_AXIS_N);
				for (unsigned c = 0; c < plan.n_cores; c++) {
					const struct rb_plan_core *core = &plan.cores[c];

					assert_int_equal(core->begin, at);
					assert_int_equal(core->begin % 32, 0);
					at = core->end;
				}
				assert_true(at >= shape.n && at < shape.n + 32);
				rb_plan_release(&plan);
			}
			rb_tune_points_release(&pts);
		}
}

static void test_shuffle(void **state)
{
	size_t *a = rb_tune_shuffle(100, 7), *b = rb_tune_shuffle(100, 7);
	size_t seen[100] = {0};

	(void)state;
	assert_memory_equal(a, b, 100 * sizeof(*a));
	for (size_t i = 0; i < 100; i++)
		seen[a[i]]++;
	for (size_t i = 0; i < 100; i++)
		assert_int_equal(seen[i], 1);
	free(a);
	free(b);
}

/* ---- cache ---- */

static int setup(void **state)
{
	char *path = strdup("/tmp/test_tune.XXXXXX");
	int fd = path ? mkstemp(path) : -1;

	if (fd < 0) {
		free(path);
		return -1;
	}
	close(fd);
	unlink(path);
	*state = path;
	return 0;
}

static int teardown(void **state)
{
	unlink(*state);
	free(*state);
	return 0;
}

static void header(struct rb_tune_header *h, const char *device)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->tool_version, sizeof(h->tool_version), "0.1.0");
	snprintf(h->device, sizeof(h->device), "%s", device);
	snprintf(h->driver, sizeof(h->driver), "0.9.8");
	snprintf(h->soc, sizeof(h->soc), "rk3588");
	snprintf(h->space, sizeof(h->space), "0123456789abcdef");
	snprintf(h->measure, sizeof(h->measure), "seed=1");
}

static void record(struct rb_tune_record *r, enum rb_tune_kind kind, const char *config, double us)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	snprintf(r->shape, sizeof(r->shape), "1x2048x8192 fp16");
	snprintf(r->config, sizeof(r->config), "%s", config);
	snprintf(r->launch, sizeof(r->launch), "fences");
	r->ok = isfinite(us);
	r->median_us = us;
	/* the timing model verifies nothing */
	if (kind != RB_TUNE_MODEL)
		snprintf(r->verify, sizeof(r->verify), "%s", r->ok ? "verified" : "failed");
	if (!r->ok)
		snprintf(r->reason, sizeof(r->reason), "verification failed: 1 of 8192");
}

static size_t lines(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;
	int c;

	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

/* Records survive a reopen exactly (the time bit for bit) and are found again. */
static void test_cache_resume(void **state)
{
	const char *path = *state;
	struct rb_tune_header h;
	struct rb_tune_cache c;
	struct rb_tune_record r;
	const struct rb_tune_record *hit;

	header(&h, "sim");
	assert_int_equal(rb_tune_cache_open(&c, path, &h), 0);
	record(&r, RB_TUNE_RUN, "mask=0x7", 1169.902);
	assert_int_equal(rb_tune_cache_append(&c, &r), 0);
	record(&r, RB_TUNE_RUN, "mask=0x5", NAN);
	assert_int_equal(rb_tune_cache_append(&c, &r), 0);
	record(&r, RB_TUNE_MODEL, "mask=0x7", 0.1 + 0.2);
	assert_int_equal(rb_tune_cache_append(&c, &r), 0);
	rb_tune_cache_close(&c);
	assert_int_equal(lines(path), 4);

	assert_int_equal(rb_tune_cache_open(&c, path, &h), 0);
	{ /* a second opener (another tune) is refused while this one holds it */
		struct rb_tune_cache other;

		assert_int_equal(rb_tune_cache_open(&other, path, &h), -ETXTBSY);
		assert_non_null(strstr(rb_last_error(), "in use by another rknn-bench tune"));
	}
	assert_int_equal(c.resumed, 3);
	hit = rb_tune_cache_find(&c, RB_TUNE_RUN, "1x2048x8192 fp16", "mask=0x7", "fences");
	assert_non_null(hit);
	assert_true(hit->ok && hit->median_us == 1169.902);
	hit = rb_tune_cache_find(&c, RB_TUNE_MODEL, "1x2048x8192 fp16", "mask=0x7", "fences");
	assert_true(hit && hit->median_us == 0.1 + 0.2);
	hit = rb_tune_cache_find(&c, RB_TUNE_RUN, "1x2048x8192 fp16", "mask=0x5", "fences");
	assert_true(hit && !hit->ok && strstr(hit->reason, "verification failed"));
	assert_null(rb_tune_cache_find(&c, RB_TUNE_RUN, "1x2048x8192 fp16", "mask=0x7", "threads"));
	rb_tune_cache_close(&c);
}

/* A crash mid-write leaves a last line without its newline: dropped, then appended
 * after cleanly. */
static void test_cache_truncated(void **state)
{
	const char *path = *state;
	struct rb_tune_header h;
	struct rb_tune_cache c;
	struct rb_tune_record r;
	FILE *f;

	header(&h, "sim");
	assert_int_equal(rb_tune_cache_open(&c, path, &h), 0);
	record(&r, RB_TUNE_RUN, "mask=0x1", 10.0);
	assert_int_equal(rb_tune_cache_append(&c, &r), 0);
	rb_tune_cache_close(&c);
	f = fopen(path, "a");
	fputs("{\"kind\":\"run\",\"shape\":\"1x2048x8192 fp16\",\"conf", f);
	fclose(f);

	assert_int_equal(rb_tune_cache_open(&c, path, &h), 0);
	assert_true(c.dropped_last_line);
	assert_int_equal(c.resumed, 1);
	record(&r, RB_TUNE_RUN, "mask=0x2", 20.0);
	assert_int_equal(rb_tune_cache_append(&c, &r), 0);
	rb_tune_cache_close(&c);
	assert_int_equal(lines(path), 3);
	assert_int_equal(rb_tune_cache_open(&c, path, &h), 0);
	assert_int_equal(c.resumed, 2);
	assert_false(c.dropped_last_line);
	rb_tune_cache_close(&c);
}

/* Another device (or space, driver, ...) is refused, naming the field. */
static void test_cache_mismatch(void **state)
{
	const char *path = *state;
	struct rb_tune_header h, other;
	struct rb_tune_cache c;
	FILE *f;

	header(&h, "sim");
	assert_int_equal(rb_tune_cache_open(&c, path, &h), 0);
	rb_tune_cache_close(&c);
	header(&other, "rknpu:/dev/dri/card1");
	assert_int_equal(rb_tune_cache_open(&c, path, &other), -ESTALE);
	assert_non_null(strstr(rb_last_error(), "written for device 'sim'"));
	assert_non_null(strstr(rb_last_error(), "delete it or give another --cache"));
	header(&other, "sim");
	snprintf(other.space, sizeof(other.space), "fedcba9876543210");
	assert_int_equal(rb_tune_cache_open(&c, path, &other), -ESTALE);
	assert_non_null(strstr(rb_last_error(), "space"));

	/* a shard resumes its own cache only; a whole tune resumes any */
	header(&other, "sim");
	snprintf(other.shard, sizeof(other.shard), "1/2");
	assert_int_equal(rb_tune_cache_open(&c, path, &other), -ESTALE);
	assert_non_null(strstr(rb_last_error(), "written by a whole tune, this tune is shard 1/2"));
	unlink(path);
	assert_int_equal(rb_tune_cache_open(&c, path, &other), 0);
	rb_tune_cache_close(&c);
	snprintf(other.shard, sizeof(other.shard), "2/2");
	assert_int_equal(rb_tune_cache_open(&c, path, &other), -ESTALE);
	assert_non_null(strstr(rb_last_error(), "written by shard 1/2, this tune is shard 2/2"));
	assert_int_equal(rb_tune_cache_open(&c, path, &h), 0); /* a whole tune resumes it */
	rb_tune_cache_close(&c);

	f = fopen(path, "w");
	fputs("{\"hello\":1}\n", f);
	fclose(f);
	assert_int_equal(rb_tune_cache_open(&c, path, &h), -ESTALE);
	assert_non_null(strstr(rb_last_error(), "is not a tune cache"));
}

/* A broken line in the middle is not a crash artefact: refused. */
static void test_cache_corrupt(void **state)
{
	const char *path = *state;
	struct rb_tune_header h;
	struct rb_tune_cache c;
	struct rb_tune_record r;
	FILE *f;

	header(&h, "sim");
	assert_int_equal(rb_tune_cache_open(&c, path, &h), 0);
	rb_tune_cache_close(&c);
	f = fopen(path, "a");
	fputs("garbage\n", f);
	fclose(f);
	assert_int_equal(rb_tune_cache_open(&c, path, &h), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "line 2: invalid JSON at line 1, column"));
	f = fopen(path, "w");
	fclose(f);
	assert_int_equal(rb_tune_cache_open(&c, path, &h), 0); /* empty: a fresh cache */
	record(&r, RB_TUNE_CPU, "cpu", 5.0);
	assert_int_equal(rb_tune_cache_append(&c, &r), 0);
	rb_tune_cache_close(&c);
	assert_int_equal(lines(path), 2);
}

/* The in-memory reader _open uses: records, the valid prefix, a dropped last line. */
static void test_cache_parse(void **state)
{
	static const char text[] =
	    "{\"schema\":\"rknn-bench-tune-cache/1\",\"tool_version\":\"0.1.0\",\"device\":"
	    "\"sim\",\"driver\":\"0.9.8\",\"soc\":\"rk3588\",\"space\":\"0123456789abcdef\","
	    "\"space_desc\":\"\",\"measure\":\"seed=1\"}\n"
	    "{\"kind\":\"cpu\",\"shape\":\"1x2048x8192 fp16\",\"config\":\"cpu\",\"launch\":"
	    "\"-\",\"status\":\"ok\",\"median_us\":5,\"verify\":\"verified\",\"reason\":\"\"}\n"
	    "{\"kind\":\"run\"";
	struct rb_tune_header h;
	struct rb_tune_cache c;
	size_t valid;

	(void)state;
	header(&h, "sim");
	assert_int_equal(rb_tune_cache_parse(&c, "mem", text, sizeof(text) - 1, &h, &valid), 0);
	assert_int_equal(c.count, 1);
	assert_true(c.dropped_last_line);
	assert_int_equal(valid, strrchr(text, '\n') - text + 1);
	assert_non_null(rb_tune_cache_find(&c, RB_TUNE_CPU, "1x2048x8192 fp16", "cpu", "-"));
	assert_null(c.f);
	rb_tune_cache_close(&c);
	{ /* a record out of range (a negative time) is not trusted */
		char bad[sizeof(text) + 256];
		const char *rec = strstr(text, "{\"kind\":\"cpu\"");
		size_t head = (size_t)(rec - text), n;

		n = (size_t)snprintf(
		    bad, sizeof(bad), "%.*s%s%s", (int)head, text,
		    "{\"kind\":\"run\",\"shape\":\"s\",\"config\":\"c\",\"launch\":"
		    "\"fences\",\"status\":\"ok\",\"median_us\":-5,\"verify\":\"\","
		    "\"reason\":\"\"}\n",
		    rec);
		assert_int_equal(rb_tune_cache_parse(&c, "mem", bad, n, &h, &valid), -EINVAL);
		rb_tune_cache_close(&c);
	}
	assert_int_equal(rb_tune_cache_parse(&c, "mem", "{\"kind\"", 8, &h, &valid), -ESTALE);
	assert_non_null(strstr(rb_last_error(), "cache 'mem' has no complete header line"));
	rb_tune_cache_close(&c);
}

/* Records a resume must not trust (docs/reliability.md): each alone after a valid
 * header is refused, naming the line and the rule, and never becomes a result. */
static void test_cache_impossible(void **state)
{
	static const char head[] =
	    "{\"schema\":\"rknn-bench-tune-cache/1\",\"tool_version\":\"0.1.0\",\"device\":"
	    "\"sim\",\"driver\":\"0.9.8\",\"soc\":\"rk3588\",\"space\":\"0123456789abcdef\","
	    "\"measure\":\"seed=1\"}\n";
	static const struct {
		const char *kind, *status, *median, *verify, *rule;
	} cases[] = {
	    {"run", "ok", "-5", "verified", "a time above 0"},
	    {"run", "ok", "0", "verified", "a time above 0"},
	    {"run", "ok", "1e300", "verified", "at most an hour"},
	    {"run", "ok", "null", "verified", "a time above 0"},
	    {"run", "ok", "12", "failed", "verified or skipped"},
	    {"run", "ok", "12", "", "verified or skipped"},
	    {"cpu", "ok", "12", "maybe", "verified or skipped"},
	    {"run", "failed", "12", "failed", "a failed record has no time"},
	    {"run", "failed", "null", "verified", "a failed run's verify"},
	    {"model", "ok", "12", "verified", "a model record is never verified"},
	    {"model", "ok", "\"fast\"", "", "median_us is a number or null"},
	    {"run", "great", "12", "verified", "status is ok or failed"},
	};
	char text[1024];
	struct rb_tune_header h;
	struct rb_tune_cache c;
	size_t valid;

	(void)state;
	header(&h, "sim");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = snprintf(text, sizeof(text),
				 "%s{\"kind\":\"%s\",\"shape\":\"1x64x64 fp16\",\"config\":\"c\","
				 "\"launch\":\"fences\",\"status\":\"%s\",\"median_us\":%s,"
				 "\"verify\":\"%s\",\"reason\":\"r\"}\n",
				 head, cases[i].kind, cases[i].status, cases[i].median,
				 cases[i].verify);

		assert_int_equal(rb_tune_cache_parse(&c, "mem", text, (size_t)n, &h, &valid),
				 -EINVAL);
		assert_non_null(strstr(rb_last_error(), "cache 'mem' line 2 is not a tune record"));
		if (!strstr(rb_last_error(), cases[i].rule))
			fail_msg("case %zu: '%s' does not name '%s'", i, rb_last_error(),
				 cases[i].rule);
		rb_tune_cache_close(&c);
	}
}

/* The backend's own split: cores 0, 1, 2 with N/32/3*32 columns each and the rest on
 * core 2, launched by threads; for every N the planner cuts exactly there. */
static void expect_backend_cuts(int64_t n)
{
	struct rb_shape s = {1, 2048, n, RB_DTYPE_FP16};
	struct rb_tune_point p;
	struct rb_plan plan;
	int64_t slice = n / 32 / 3 * 32;

	assert_int_equal(rb_tune_backend_point(&s, 0, &p), 0);
	assert_int_equal(rb_ggml_rknn_init_share(n), slice);
	assert_int_equal(p.launch, RB_LAUNCH_THREADS);
	assert_int_equal(p.plan.core_mask, 0x7);
	assert_true(isfinite(p.host_us) && p.host_us > 0);
	assert_int_equal(rb_plan_init(&plan, &s, &p.plan), 0);
	assert_int_equal(plan.n_cores, 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(plan.cores[i].core, i);
	assert_int_equal(plan.cores[0].begin, 0);
	assert_int_equal(plan.cores[0].end, slice);
	assert_int_equal(plan.cores[1].begin, slice);
	assert_int_equal(plan.cores[1].end, 2 * slice);
	assert_int_equal(plan.cores[2].begin, 2 * slice);
	assert_true(plan.cores[2].end >= n);
	rb_plan_release(&plan);
}

static void test_backend_point(void **state)
{
	static const int64_t ns[] = {96, 128, 256, 320, 336, 2048, 8192, 128256, 151936};
	struct rb_shape small = {1, 2048, 64, RB_DTYPE_FP16};
	struct rb_tune_point p;

	(void)state;
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		expect_backend_cuts(ns[i]);
	/* 8192: the 85,85,86 blocks of the example */
	assert_int_equal(
	    rb_tune_backend_point(&(struct rb_shape){1, 2048, 8192, RB_DTYPE_FP16}, 0, &p), 0);
	assert_non_null(strstr(p.text, "split=n:85,85,86 align=32"));
	/* N < 96: the backend cannot create the pair */
	assert_int_equal(rb_tune_backend_point(&small, 0, &p), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "N < 96"));
	/* weights of at most 1000 cannot cut 800000 columns at 266656 and 533312: said so,
	 * not approximated */
	assert_int_equal(
	    rb_tune_backend_point(&(struct rb_shape){1, 64, 800000, RB_DTYPE_FP16}, 0, &p),
	    -EINVAL);
	assert_non_null(strstr(rb_last_error(), "no weighted split"));
}

/* The host model: bytes over the A76 bandwidth; every K-slice past the first adds its
 * cube and a pass over C (the 64x4096x4096 kslice=2048 example). */
static void test_host_model(void **state)
{
	struct rb_shape s = {64, 4096, 4096, RB_DTYPE_FP16};
	struct rb_plan_config one, two;
	struct rb_plan p1, p2;
	struct rb_tune_host h1, h2;
	double c_bytes = 64.0 * 4096 * 4, per_us = RB_TUNE_HOST_GBPS * 1e3; /* bytes per µs */

	(void)state;
	rb_plan_config_init(&one);
	assert_int_equal(rb_plan_config_parse(&one, "kslice=4096"), 0);
	two = one;
	assert_int_equal(rb_plan_config_parse(&two, "kslice=2048"), 0);
	assert_int_equal(rb_plan_init(&p1, &s, &one), 0);
	assert_int_equal(rb_plan_init(&p2, &s, &two), 0);
	assert_int_equal(p1.n_kslices, 1);
	assert_int_equal(p2.n_kslices, 2);
	rb_tune_host_model(&p1, &h1);
	rb_tune_host_model(&p2, &h2);
	/* pack A: read M·K fp16, write the cube (K_pad·M fp16) */
	assert_float_equal(h1.pack_a_us, 2 * 64.0 * 4096 * 2 / per_us, 1e-3); /* whole ns */
	/* unpack: read the fp32 cube, write C */
	assert_float_equal(h1.unpack_us, 2 * c_bytes / per_us, 1e-3);
	assert_float_equal(h1.kslice_us, 0, 0);
	/* the second slice: its cube, then C read and written */
	assert_float_equal(h2.kslice_us, 3 * c_bytes / per_us, 1e-3);
	assert_float_equal(rb_tune_host_us(&p2) - rb_tune_host_us(&p1), h2.kslice_us, 1e-9);
	rb_plan_release(&p1);
	rb_plan_release(&p2);
}

/* Enumerated points carry their host part, and it is the plan's. */
static void test_points_host(void **state)
{
	struct rb_tune_space sp;
	struct rb_tune_points pts;
	struct rb_shape s = {64, 8192, 2048, RB_DTYPE_FP16};
	size_t sliced = 0;

	(void)state;
	rb_tune_space_default(&sp);
	assert_int_equal(rb_tune_space_enumerate(&sp, &s, &pts), 0);
	for (size_t i = 0; i < pts.count; i++) {
		struct rb_tune_point q = pts.items[i];
		struct rb_plan plan;

		rb_tune_point_host(&q, &s);
		assert_float_equal(q.host_us, pts.items[i].host_us, 0);
		assert_int_equal(rb_plan_init(&plan, &s, &q.plan), 0);
		sliced += plan.n_kslices > 1;
		rb_plan_release(&plan);
	}
	assert_true(sliced > 0);
	rb_tune_points_release(&pts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default_space),
	    cmocka_unit_test(test_masks_and_dedup),
	    cmocka_unit_test(test_known_failures),
	    cmocka_unit_test(test_rejected),
	    cmocka_unit_test(test_space_extend),
	    cmocka_unit_test(test_space_errors),
	    cmocka_unit_test(test_api_space),
	    cmocka_unit_test(test_shuffle),
	    cmocka_unit_test(test_backend_point),
	    cmocka_unit_test(test_host_model),
	    cmocka_unit_test(test_points_host),
	    cmocka_unit_test(test_cache_parse),
	    cmocka_unit_test(test_cache_impossible),
	    cmocka_unit_test_setup_teardown(test_cache_resume, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cache_truncated, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cache_mismatch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cache_corrupt, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
