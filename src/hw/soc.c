/* Hardware profiles (see soc.h): a strict loader driven by one table of the keys the
 * model uses, and the embedded default. */
#include "hw/soc.h"
#include "hw/board.h"
#include "hw/task.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core/error.h"
#include "core/fileio.h"
#include "core/json.h"

/* build/gen/soc_rk3588.c, made by the Makefile from configs/soc/rk3588*.json */
extern const unsigned char rb_soc_rk3588_json[], rb_soc_rk3588_lpddr4x_json[],
    rb_soc_rk3588_lpddr5_json[];
extern const size_t rb_soc_rk3588_json_len, rb_soc_rk3588_lpddr4x_json_len,
    rb_soc_rk3588_lpddr5_json_len;

#define DEFAULT_NAME "rk3588"
#define NS_MAX       1e9 /* a fixed cost above 1 s is a typo */

/* The physical ranges of an RK3588 (docs/reliability.md says why each): a number outside
 * is a typo or a broken fit, and some would break the timing model (a clock that rounds
 * to 0 Hz divides by zero; an efficiency near 0 overflows the cycle count). */
#define CLOCK_MHZ_MIN 100  /* mainline's default is 200 MHz, the OPP table starts at 300 */
#define CLOCK_MHZ_MAX 1000 /* the top of the NPU's OPP table; vendor kernels pin it */
#define GBPS_MIN      0.1  /* far below any DDR rate the RK3588's controller runs */
#define GBPS_MAX      51.2 /* LPDDR5-6400 on the 64-bit bus: all the DRAM can give */
#define EFF_MIN       0.01 /* 100 times below the TRM's MAC rate */
#define EFF_MAX       2.0  /* above 1 only as a fit's slack (calibrate fits it per board) */

enum kind { KIND_INT, KIND_REAL };

/* One number the model uses: where it is, what it may be, where it goes. */
struct key {
	const char *path;
	enum kind kind;
	double min, max; /* inclusive, except min when min_open */
	bool min_open;
	const char *rule; /* "must be <rule>" */
	size_t off;
};

#define FIELD(f) offsetof(struct rb_soc_profile, f)
#define RANGE(p, f, lo, hi, rule)                                                                  \
	{                                                                                          \
		p, KIND_REAL, lo, hi, false, rule, FIELD(f)                                        \
	}
#define COST(p, f)                                                                                 \
	{                                                                                          \
		p, KIND_REAL, 0, NS_MAX, false, "a number of ns from 0 to 1e9", FIELD(f)           \
	}
#define COUNT(p, f, lo, hi, rule)                                                                  \
	{                                                                                          \
		p, KIND_INT, lo, hi, false, rule, FIELD(f)                                         \
	}
#define GBPS_RULE "from 0.1 to 51.2 GB/s (51.2: LPDDR5-6400 on the RK3588's 64-bit bus)"
#define EFF_RULE  "from 0.01 to 2 (1: the TRM's MAC rate)"

static const struct key keys[] = {
    COUNT("cores", cores, RB_HW_MAX_CORES, RB_HW_MAX_CORES,
	  "3: the RK3588 has three NPU cores, and plans use all of them"),
    RANGE("clock_mhz", clock_mhz, CLOCK_MHZ_MIN, CLOCK_MHZ_MAX,
	  "from 100 to 1000 MHz (the RK3588 NPU's clock range)"),
    COUNT("mac.fp16_per_cycle", fp16_macs, 1, 1 << 20, "an integer from 1 to 1048576"),
    COUNT("mac.int8_per_cycle", int8_macs, 1, 1 << 20, "an integer from 1 to 1048576"),
    RANGE("mac.fp16_efficiency", fp16_efficiency, EFF_MIN, EFF_MAX, EFF_RULE),
    RANGE("mac.int8_efficiency", int8_efficiency, EFF_MIN, EFF_MAX, EFF_RULE),
    COUNT("mac.channel_atom", channel_atom, 1, 1024, "an integer from 1 to 1024"),
    COUNT("mac.weight_load_cycles_per_kernel", weight_load_cycles, 0, 1024,
	  "an integer from 0 to 1024"),
    /* DATA_BANK and WEIGHT_BANK are 4-bit fields (npu-facts §c) */
    COUNT("cbuf.banks", cbuf_banks, 1, 15, "an integer from 1 to 15"),
    COUNT("cbuf.bank_bytes", cbuf_bank_bytes, 64, 1 << 24, "an integer from 64 to 16777216"),
    RANGE("ddr.gbps_per_stream", ddr_stream_gbps, GBPS_MIN, GBPS_MAX, GBPS_RULE),
    RANGE("ddr.gbps_per_core", ddr_core_gbps, GBPS_MIN, GBPS_MAX, GBPS_RULE),
    RANGE("ddr.gbps_total", ddr_total_gbps, GBPS_MIN, GBPS_MAX, GBPS_RULE),
    COST("task.fetch_ns", task_fetch_ns),
    COST("task.ns_per_word", task_word_ns),
    COST("task.pipeline_ns", task_pipeline_ns),
    COST("submit.ioctl_ns", submit_ioctl_ns),
    COST("submit.commit_ns", submit_commit_ns),
    COST("submit.irq_ns", submit_irq_ns),
    COST("submit.wake_ns", submit_wake_ns),
};

static int fail(const char *label, const char *fmt, ...) RB_PRINTF(2, 3);
static int fail(const char *label, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return rb_set_error(-EINVAL, "%s: %s", label, msg);
}

static const char *describe(const cJSON *v)
{
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsArray(v))
		return "an array";
	return "an object";
}

/* A member by exact name; a name given twice is refused (parsers disagree on which
 * one wins). *out is NULL if absent. */
static int member(const char *label, const cJSON *obj, const char *path, const char *name,
		  const cJSON **out)
{
	const cJSON *it;

	*out = NULL;
	cJSON_ArrayForEach(it, obj)
	{
		if (!it->string || strcmp(it->string, name) != 0)
			continue;
		if (*out)
			return fail(label, "%s%s%s appears twice", path, *path ? "." : "", name);
		*out = it;
	}
	return 0;
}

/* Walks "a.b.c" from the root; every step but the last must be an object. */
static int lookup(const char *label, const cJSON *root, const char *path, const cJSON **out)
{
	char done[128] = "", name[64];
	const char *p = path;
	const cJSON *v = root;

	while (*p) {
		size_t n = strcspn(p, ".");
		int ret;

		if (!cJSON_IsObject(v))
			return fail(label, "%s must be an object, not %s", done, describe(v));
		snprintf(name, sizeof(name), "%.*s", (int)n, p);
		ret = member(label, v, done, name, &v);
		if (ret)
			return ret;
		snprintf(done + strlen(done), sizeof(done) - strlen(done), "%s%s", *done ? "." : "",
			 name);
		if (!v)
			return fail(label, "%s is missing", done);
		p += n + (p[n] == '.');
	}
	*out = v;
	return 0;
}

/* {"value": N, "source": "..."}: the number, with a source that says where it is from. */
static int sourced_number(const char *label, const cJSON *item, const char *path, double *out)
{
	const cJSON *value, *source;
	int ret;

	if (!cJSON_IsObject(item))
		return fail(label,
			    "%s must be an object like {\"value\": 1, \"source\": \"perf-anchors "
			    "§4 A9\"}, not %s",
			    path, describe(item));
	ret = member(label, item, path, "value", &value);
	if (!ret)
		ret = member(label, item, path, "source", &source);
	if (ret)
		return ret;
	if (!value)
		return fail(label, "%s.value is missing", path);
	if (!cJSON_IsNumber(value))
		return fail(label, "%s.value must be a number, not %s", path, describe(value));
	if (!source)
		return fail(
		    label,
		    "%s.source is missing: every number says where it comes from (a "
		    "perf-anchors or npu-facts section, \"fitted to ...\" or \"assumed ...\")",
		    path);
	if (!cJSON_IsString(source) || !source->valuestring[0])
		return fail(label, "%s.source must be a non-empty string, not %s", path,
			    cJSON_IsString(source) ? "an empty string" : describe(source));
	*out = value->valuedouble;
	return 0;
}

static bool in_range(const struct key *k, double d)
{
	if (d != d || d > k->max)
		return false;
	return k->min_open ? d > k->min : d >= k->min;
}

static int load_key(const char *label, const cJSON *root, const struct key *k,
		    struct rb_soc_profile *p)
{
	const cJSON *item;
	double d = 0;
	int ret = lookup(label, root, k->path, &item);

	if (!ret)
		ret = sourced_number(label, item, k->path, &d);
	if (ret)
		return ret;
	if (!in_range(k, d) || (k->kind == KIND_INT && d != floor(d)))
		return fail(label, "%s is %.15g: must be %s", k->path, d, k->rule);
	if (k->kind == KIND_INT)
		*(int64_t *)((char *)p + k->off) = (int64_t)d;
	else
		*(double *)((char *)p + k->off) = d;
	return 0;
}

static int load_string_key(const char *label, const cJSON *root, const char *key, char *buf,
			   size_t size)
{
	const cJSON *item;
	int ret = lookup(label, root, key, &item);

	if (ret)
		return ret;
	if (!cJSON_IsString(item) || !item->valuestring[0])
		return fail(label, "%s must be a non-empty string, not %s", key,
			    cJSON_IsString(item) ? "an empty string" : describe(item));
	if (strlen(item->valuestring) >= size)
		return fail(label, "%s is longer than %zu bytes", key, size - 1);
	snprintf(buf, size, "%s", item->valuestring);
	return 0;
}

#define SOC_SCHEMA "rknn-bench/soc-1"

static int load_identity(const char *label, const cJSON *root, struct rb_soc_profile *p)
{
	const cJSON *v;
	int ret = lookup(label, root, "schema", &v);

	if (!ret && (!cJSON_IsString(v) || strcmp(v->valuestring, SOC_SCHEMA) != 0))
		return fail(label, "schema must be \"" SOC_SCHEMA "\" (a hardware profile like "
				   "configs/soc/rk3588.json)");
	if (!ret)
		ret = load_string_key(label, root, "name", p->name, sizeof(p->name));

	if (!ret)
		ret = load_string_key(label, root, "status", p->status, sizeof(p->status));
	if (!ret)
		ret = lookup(label, root, "version", &v);
	if (ret)
		return ret;
	if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 1e6 ||
	    v->valuedouble != floor(v->valuedouble))
		return fail(label, "version must be a positive integer");
	p->version = (int64_t)v->valuedouble;
	return 0;
}

/* Keys the profile does not use are allowed (notes, provenance), but not a near miss of
 * one it uses: "bank" for "banks" would leave the real value unread. */
static int check_spelling(const char *label, const cJSON *root)
{
	static const char *const top[] = {"schema", "name",  "version",   "status",
					  "about",  "cores", "clock_mhz", "mac",
					  "cbuf",   "ddr",   "task",      "submit"};
	const char *known[16], *typo, *meant;
	char section[32];

	if (rb_json_misspelled_key(root, top, sizeof(top) / sizeof(top[0]), &typo, &meant))
		return fail(label, "unknown key '%s'; did you mean '%s'?", typo, meant);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *dot = strchr(keys[i].path, '.');
		size_t n = 0;

		if (!dot)
			continue;
		snprintf(section, sizeof(section), "%.*s", (int)(dot - keys[i].path), keys[i].path);
		for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]) && n < 16; j++)
			if (strncmp(keys[j].path, section, strlen(section)) == 0 &&
			    keys[j].path[strlen(section)] == '.')
				known[n++] = keys[j].path + strlen(section) + 1;
		if (rb_json_misspelled_key(cJSON_GetObjectItemCaseSensitive(root, section), known,
					   n, &typo, &meant))
			return fail(label, "%s: unknown key '%s'; did you mean '%s'?", section,
				    typo, meant);
	}
	return 0;
}

/* The array takes channel_atom channels of a row against macs / channel_atom kernels
 * per cycle (timing.c), so both MAC counts must split that way. */
static int check_array(const char *label, const struct rb_soc_profile *p)
{
	/* The planner, the encoder and the program validator are built for this CBUF; a
	 * profile of another one would be accepted and then fail every job. */
	if (p->cbuf_banks != RB_NPU_CBUF_BANKS || p->cbuf_bank_bytes != RB_NPU_CBUF_BANK_BYTES)
		return fail(label,
			    "cbuf is %lld banks of %lld bytes: the planner and the programs are "
			    "made for the RK3588's %d banks of %d bytes, which a profile cannot "
			    "change (it describes timing)",
			    (long long)p->cbuf_banks, (long long)p->cbuf_bank_bytes,
			    RB_NPU_CBUF_BANKS, RB_NPU_CBUF_BANK_BYTES);
	if (p->fp16_macs % p->channel_atom)
		return fail(label,
			    "mac.fp16_per_cycle is %lld: must be a multiple of "
			    "mac.channel_atom (%lld)",
			    (long long)p->fp16_macs, (long long)p->channel_atom);
	if (p->int8_macs % p->channel_atom)
		return fail(label,
			    "mac.int8_per_cycle is %lld: must be a multiple of "
			    "mac.channel_atom (%lld)",
			    (long long)p->int8_macs, (long long)p->channel_atom);
	return 0;
}

static void make_label(struct rb_soc_profile *p, const char *label)
{
	const char *base = strrchr(label, '/');

	base = base ? base + 1 : label;
	snprintf(p->label, sizeof(p->label), "%.32s v%d (%.40s)", base, (int)p->version, p->status);
}

/* One JSON object and nothing but white space after it (core/json.h). */
static int parse(const char *label, const char *json, size_t len, cJSON **root)
{
	int ret = rb_json_load(json, len, label, "a hardware profile object", root);

	if (ret == 0 && !cJSON_IsObject(*root)) {
		cJSON_Delete(*root);
		*root = NULL;
		return fail(label, "the top level must be an object");
	}
	return ret;
}

int rb_soc_load_string(struct rb_soc_profile *out, const char *json, size_t len, const char *label)
{
	struct rb_soc_profile p;
	cJSON *root;
	int ret;

	label = label ? label : "<string>";
	memset(&p, 0, sizeof(p));
	if (!json || !len)
		return fail(label,
			    "no data: expected a hardware profile like configs/soc/rk3588.json");
	ret = parse(label, json, len, &root);
	if (ret)
		return ret;
	ret = check_spelling(label, root);
	if (!ret)
		ret = load_identity(label, root, &p);
	for (size_t i = 0; !ret && i < sizeof(keys) / sizeof(keys[0]); i++)
		ret = load_key(label, root, &keys[i], &p);
	if (!ret)
		ret = check_array(label, &p);
	cJSON_Delete(root);
	if (ret)
		return ret;
	make_label(&p, label);
	*out = p;
	return 0;
}

int rb_soc_load_file(struct rb_soc_profile *out, const char *path)
{
	char *data;
	size_t len;
	int ret = rb_file_read(path, &data, &len);

	if (ret)
		return ret;
	ret = rb_soc_load_string(out, data, len, path);
	free(data);
	return ret;
}

/* ---- the embedded profiles ---- */

struct builtin {
	const char *name; /* configs/soc/NAME.json */
	const unsigned char *text;
	const size_t *len;
	struct rb_soc_profile profile;
	bool ok;
};

static struct builtin builtins[] = {
    {.name = DEFAULT_NAME, .text = rb_soc_rk3588_json, .len = &rb_soc_rk3588_json_len},
    {.name = "rk3588-lpddr4x",
     .text = rb_soc_rk3588_lpddr4x_json,
     .len = &rb_soc_rk3588_lpddr4x_json_len},
    {.name = "rk3588-lpddr5",
     .text = rb_soc_rk3588_lpddr5_json,
     .len = &rb_soc_rk3588_lpddr5_json_len},
};

#define N_BUILTINS (sizeof(builtins) / sizeof(builtins[0]))

static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;

static void load_builtins(void)
{
	for (size_t i = 0; i < N_BUILTINS; i++) {
		struct builtin *b = &builtins[i];
		char label[64];

		snprintf(label, sizeof(label), "%s.json", b->name);
		b->ok = rb_soc_load_string(&b->profile, (const char *)b->text, *b->len, label) == 0;
	}
}

static struct builtin *builtin_named(const char *name)
{
	for (size_t i = 0; i < N_BUILTINS; i++)
		if (name && strcmp(builtins[i].name, name) == 0)
			return &builtins[i];
	return NULL;
}

const struct rb_soc_profile *rb_soc_builtin(const char *name)
{
	const struct builtin *b = builtin_named(name);

	pthread_once(&builtins_once, load_builtins);
	return b && b->ok ? &b->profile : NULL;
}

const char *rb_soc_builtin_text(const char *name, size_t *len)
{
	const struct builtin *b = builtin_named(name);

	if (!b)
		return NULL;
	*len = *b->len;
	return (const char *)b->text;
}

const struct rb_soc_profile *rb_soc_default(void)
{
	return rb_soc_builtin(DEFAULT_NAME);
}

const char *rb_soc_default_text(size_t *len)
{
	return rb_soc_builtin_text(DEFAULT_NAME, len);
}

/* The board's name as the device tree gives it, for messages. */
static const char *board_text(const struct rb_board *b)
{
	return b->model[0] ? b->model : b->compatible;
}

int rb_soc_choose(struct rb_soc_profile *out, const char *dt_root)
{
	struct rb_board board;
	char name[32];
	const struct rb_soc_profile *p;

	rb_board_detect(&board, dt_root);
	if (board.ddr != RB_DDR_UNKNOWN) {
		snprintf(name, sizeof(name), DEFAULT_NAME "-%s", rb_ddr_type_key(board.ddr));
		p = rb_soc_builtin(name);
	} else {
		p = rb_soc_default();
	}
	if (!p)
		return rb_set_error(-ENOENT, "the built-in hardware profile does not load");
	*out = *p;
	if (board.ddr != RB_DDR_UNKNOWN)
		snprintf(out->chosen_by, sizeof(out->chosen_by), "board '%.80s' (%s, by its %s)",
			 board_text(&board), rb_ddr_type_name(board.ddr), board.matched_by);
	else if (board_text(&board)[0])
		snprintf(out->chosen_by, sizeof(out->chosen_by),
			 "built-in default: board '%.80s' is not one whose memory is known",
			 board_text(&board));
	else
		snprintf(out->chosen_by, sizeof(out->chosen_by),
			 "built-in default: no board in the device tree");
	return 0;
}

/* ---- the clock the kernel runs the NPU at ---- */

/* A clock file's rate in Hz, or 0 when it is absent or outside the range a profile
 * may have (the root is the environment's RKNN_BENCH_SYSFS: a reading of 1 Hz divided
 * by zero in the timing model, a FIFO must not hang, hence the bounded reader). */
static int64_t read_hz(const char *root, const char *rel, char *from, size_t size)
{
	char path[512], buf[64];
	char *end;
	long long v;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (rb_file_read_prefix(path, buf, sizeof(buf)) <= 0)
		return 0;
	v = strtoll(buf, &end, 10);
	if (end == buf || v < (long long)CLOCK_MHZ_MIN * 1000000 ||
	    v > (long long)CLOCK_MHZ_MAX * 1000000)
		return 0;
	snprintf(from, size, "%s", path);
	return v;
}

int64_t rb_soc_read_npu_clock_hz(const char *sysfs_root, char *from, size_t size)
{
	static const char *const files[] = {
	    "class/devfreq/fdab0000.npu/cur_freq",    /* vendor kernel: devfreq */
	    "kernel/debug/clk/scmi_clk_npu/clk_rate", /* mainline: the SCMI clock */
	    "kernel/debug/clk/clk_npu/clk_rate",
	};
	const char *root = sysfs_root ? sysfs_root : "/sys";

	if (size)
		from[0] = '\0';
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int64_t hz = read_hz(root, files[i], from, size);

		if (hz)
			return hz;
	}
	return 0;
}

/* Appends text to a string buffer, cutting what does not fit. */
static void append(char *buf, size_t size, const char *text)
{
	size_t used = strlen(buf), n = strlen(text);

	if (used + 1 >= size)
		return;
	if (n > size - used - 1)
		n = size - used - 1;
	memcpy(buf + used, text, n);
	buf[used + n] = '\0';
}

void rb_soc_for_driver(struct rb_soc_profile *p, bool mainline, const char *sysfs_root)
{
	char from[256], note[320], at[48];
	int64_t hz = rb_soc_read_npu_clock_hz(sysfs_root, from, sizeof(from));

	if (p->pinned || (!hz && !mainline))
		return;
	if (hz) {
		p->clock_mhz = (double)hz / 1e6;
		snprintf(note, sizeof(note), "; NPU clock %.0f MHz read from %.200s", p->clock_mhz,
			 from);
	} else {
		p->clock_mhz = RB_SOC_MAINLINE_CLOCK_MHZ;
		snprintf(note, sizeof(note),
			 "; NPU clock %.0f MHz: the mainline device tree's assigned-clock-rates "
			 "(rocket has no NPU frequency scaling)",
			 p->clock_mhz);
	}
	snprintf(at, sizeof(at), " at %.0f MHz", p->clock_mhz);
	append(p->label, sizeof(p->label), at);
	append(p->chosen_by, sizeof(p->chosen_by), note);
}
