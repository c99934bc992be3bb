/* The planner (plan.h): cuts a matmul into per-core lists of NPU tasks. */
#include "numeric/layout.h"
#include "npu/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "host/limits.h"

#define BANK  RB_NPU_CBUF_BANK_BYTES
#define BANKS RB_NPU_CBUF_BANKS
/* FEATURE_GRAINS holds rows + 1 in 10 bits (§a.5 #2), so rows ≤ 1022; tasks keep to whole
 * 4-row groups, the unit the CNA fetches (§b.2). DATAIN_HEIGHT (11 bits) and the DPU
 * height (13 bits) allow more. */
#define MAX_ROWS 1020
/* DPU DATA_CUBE_CHANNEL and WDMA CHANNEL hold N − 1 in 13 bits (§a.5 #62, #69). */
#define MAX_KERNELS 8192
/* DATA_SIZE1 DATAIN_CHANNEL_REAL holds K − 1 in 14 bits (§a.5 #5). */
#define MAX_CHANNELS 16384
/* One kernel (K·bpe, WEIGHT_BYTES_PER_KERNEL) must fit one bank: MTX's check (§c). */
#define MAX_KERNEL_BYTES BANK
/* Auto K-slices stop at 8192 channels: the largest K run in one task on silicon (MTX
 * 1×8192×8192, §c) and the vendor runtime's per-context K (perf-anchors §1.5). */
#define AUTO_K_SLICE 8192
/* Every NPU-visible buffer lies below 4 GiB of IOVA (§b.5). */
#define ADDR_SPACE (UINT64_C(1) << 32)
/* The fixed cost of one task in bytes of DDR traffic, for the auto bank split only: a
 * heuristic (a few µs at ~10-20 GB/s) so that it does not trade a little traffic for many
 * more tasks. 32 KiB was enough while every M tile re-read its weights; once reused
 * weights cost nothing, it split one-core int8 prefill into 52 small tasks where 32
 * are faster (bench/calibration.md A2-A11 went from -2..+22 % to +15..+33 %). The tuner
 * measures instead. */
#define TASK_COST_BYTES 65536.0
/* The CBUF stores a feature row in whole 64-byte entries (CBUF_CON1 DATA_ENTRIES =
 * ceil(row bytes / 64), §c), so a row takes that much even when int8 K % 64 = 32. */
#define ENTRY_BYTES 64
/* Channel padding of A and B (§b.5). */
#define K_ALIGN 32

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static uint64_t round_up(uint64_t a, uint64_t b)
{
	return div_up(a, b) * b;
}

static uint64_t round_down(uint64_t a, uint64_t b)
{
	return a / b * b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static unsigned popcount(unsigned x)
{
	unsigned n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
}

/* Kernels per weight block and per DPU output group: 16 fp16, 32 int8 (§b.3, §b.4). */
static uint32_t kernel_group(enum rb_dtype dtype)
{
	return (uint32_t)rb_layout_kernel_group(dtype);
}

/* ---- names ---------------------------------------------------------------------- */

static const char *const axis_names[] = {
    [RB_PLAN_AXIS_AUTO] = "auto",
    [RB_PLAN_AXIS_N] = "n",
    [RB_PLAN_AXIS_M] = "m",
};

static const char *const residency_names[] = {
    [RB_PLAN_RESIDENT] = "resident",
    [RB_PLAN_STREAMED] = "streamed",
};

static const char *const out_names[] = {
    [RB_PLAN_OUT_AUTO] = "auto",
    [RB_PLAN_OUT_FP32] = "fp32",
    [RB_PLAN_OUT_FP16] = "fp16",
    [RB_PLAN_OUT_INT32] = "int32",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *name_of(const char *const *names, size_t n, unsigned i)
{
	return i < n && names[i] ? names[i] : "unknown";
}

/* Index of text in names, or -1. */
static int index_of(const char *const *names, size_t n, const char *text)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && strcmp(names[i], text) == 0)
			return (int)i;
	return -1;
}

const char *rb_plan_axis_name(enum rb_plan_axis axis)
{
	return name_of(axis_names, ARRAY_SIZE(axis_names), axis);
}

const char *rb_plan_residency_name(enum rb_plan_residency res)
{
	return name_of(residency_names, ARRAY_SIZE(residency_names), res);
}

const char *rb_plan_out_name(enum rb_plan_out out)
{
	return name_of(out_names, ARRAY_SIZE(out_names), out);
}

const char *rb_plan_prec_name(enum rb_npu_prec prec)
{
	static const char *const names[] = {
	    [RB_PREC_INT8] = "int8", [RB_PREC_INT16] = "int16", [RB_PREC_FP16] = "fp16",
	    [RB_PREC_BF16] = "bf16", [RB_PREC_INT32] = "int32", [RB_PREC_FP32] = "fp32",
	};

	return name_of(names, ARRAY_SIZE(names), prec);
}

/* ---- configs -------------------------------------------------------------------- */

void rb_plan_config_init(struct rb_plan_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->core_mask = 0x7;
	cfg->residency = RB_PLAN_RESIDENT;
	cfg->chain = true;
	cfg->weight_reuse = true;
}

/* Prefill shapes with more rows than kernels split M: each core then reads all of B
 * but only its rows of A, which moves less when A is the bigger operand. */
static enum rb_plan_axis auto_axis(const struct rb_shape *s)
{
	uint64_t n_pad = round_up((uint64_t)s->n, kernel_group(s->dtype));

	return (uint64_t)s->m > n_pad ? RB_PLAN_AXIS_M : RB_PLAN_AXIS_N;
}

static enum rb_plan_out auto_out(enum rb_dtype dtype)
{
	return dtype == RB_DTYPE_INT8 ? RB_PLAN_OUT_INT32 : RB_PLAN_OUT_FP32;
}

void rb_plan_config_default(struct rb_plan_config *cfg, const struct rb_shape *shape,
			    unsigned core_mask)
{
	rb_plan_config_init(cfg);
	cfg->core_mask = core_mask;
	cfg->axis = auto_axis(shape);
	cfg->align = kernel_group(shape->dtype);
	cfg->out = auto_out(shape->dtype);
}

/* A decimal (or, with base 0, 0x-hex) number from min to max, nothing else. */
static int parse_uint(const char *key, const char *text, int base, unsigned long min,
		      unsigned long max, unsigned *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(text, &end, base);
	if (text[0] < '0' || text[0] > '9' || errno || *end || v < min || v > max)
		return rb_set_error(-EINVAL, "%s '%s' must be an integer from %lu to %lu", key,
				    text, min, max);
	*out = (unsigned)v;
	return 0;
}

static int parse_bool(const char *key, const char *text, bool *out)
{
	if (strcmp(text, "1") == 0 || strcmp(text, "yes") == 0 || strcmp(text, "true") == 0)
		*out = true;
	else if (strcmp(text, "0") == 0 || strcmp(text, "no") == 0 || strcmp(text, "false") == 0)
		*out = false;
	else
		return rb_set_error(-EINVAL, "%s '%s' must be 1 or 0", key, text);
	return 0;
}

static int set_mask(struct rb_plan_config *cfg, const char *v)
{
	unsigned mask;

	if (parse_uint("core mask", v, 0, 0, 0xffff, &mask) < 0 || mask < 1 || mask > 7)
		return rb_set_error(-EINVAL,
				    "core mask '%s' must be 0x1 to 0x7 (a bit per NPU "
				    "core, 3 cores)",
				    v);
	cfg->core_mask = mask;
	return 0;
}

static int set_axis(struct rb_plan_config *cfg, const char *v)
{
	int i = index_of(axis_names, ARRAY_SIZE(axis_names), v);

	if (i < 0)
		return rb_set_error(-EINVAL, "split axis '%s' must be n, m or auto", v);
	cfg->axis = (enum rb_plan_axis)i;
	return 0;
}

/* "2,1,1": one weight per core; "even" (or "") for an even split. */
static int set_weights(struct rb_plan_config *cfg, const char *v)
{
	unsigned w[RB_PLAN_MAX_CORES], n = 0;
	char item[16];
	const char *p = v;

	if (strcmp(v, "even") == 0 || v[0] == '\0') {
		cfg->n_weights = 0;
		return 0;
	}
	for (; n < RB_PLAN_MAX_CORES; n++) {
		size_t len = strcspn(p, ",");

		if (len >= sizeof(item))
			len = sizeof(item) - 1;
		memcpy(item, p, len);
		item[len] = '\0';
		if (parse_uint("split weight", item, 10, 1, RB_PLAN_WEIGHT_MAX, &w[n]) < 0)
			return -EINVAL;
		p += strcspn(p, ",");
		if (*p++ == '\0')
			break;
	}
	if (n == RB_PLAN_MAX_CORES)
		return rb_set_error(-EINVAL, "split weights '%s': at most %d, one per core", v,
				    RB_PLAN_MAX_CORES);
	cfg->n_weights = n + 1;
	memcpy(cfg->weights, w, sizeof(w[0]) * cfg->n_weights);
	return 0;
}

/* "n", "m:2,1,1", "auto": the axis and, after a colon, the weights (none: even). */
static int set_split(struct rb_plan_config *cfg, const char *v)
{
	struct rb_plan_config tmp = *cfg;
	const char *colon = strchr(v, ':');
	char axis[8];
	size_t len = colon ? (size_t)(colon - v) : strlen(v);

	if (len >= sizeof(axis))
		return rb_set_error(-EINVAL, "split '%s' must be AXIS[:W,W,W], AXIS n, m or auto",
				    v);
	memcpy(axis, v, len);
	axis[len] = '\0';
	if (set_axis(&tmp, axis) < 0 || set_weights(&tmp, colon ? colon + 1 : "") < 0)
		return -EINVAL;
	*cfg = tmp;
	return 0;
}

static int set_align(struct rb_plan_config *cfg, const char *v)
{
	unsigned a;

	if (strcmp(v, "auto") == 0)
		v = "0";
	if (parse_uint("alignment", v, 10, 0, 64, &a) < 0 ||
	    (a != 0 && a != 16 && a != 32 && a != 64))
		return rb_set_error(-EINVAL, "alignment '%s' must be 16, 32, 64 or 0 (auto)", v);
	cfg->align = a;
	return 0;
}

static int set_dbanks(struct rb_plan_config *cfg, const char *v)
{
	return parse_uint("data banks", v, 10, 0, BANKS, &cfg->data_banks);
}

static int set_wbanks(struct rb_plan_config *cfg, const char *v)
{
	return parse_uint("weight banks", v, 10, 0, BANKS, &cfg->weight_banks);
}

/* "D:W", "auto" = "0:0". */
static int set_banks(struct rb_plan_config *cfg, const char *v)
{
	struct rb_plan_config tmp = *cfg;
	const char *colon = strchr(v, ':');
	char d[8];

	if (strcmp(v, "auto") == 0) {
		v = "0:0";
		colon = v + 1;
	}
	if (!colon || colon - v >= (long)sizeof(d))
		return rb_set_error(-EINVAL, "banks '%s' must be DATA:WEIGHT, e.g. 4:8 (0 auto)",
				    v);
	memcpy(d, v, (size_t)(colon - v));
	d[colon - v] = '\0';
	if (set_dbanks(&tmp, d) < 0 || set_wbanks(&tmp, colon + 1) < 0)
		return -EINVAL;
	*cfg = tmp;
	return 0;
}

static int set_kslice(struct rb_plan_config *cfg, const char *v)
{
	unsigned k;

	if (strcmp(v, "auto") == 0)
		v = "0";
	if (parse_uint("k-slice", v, 10, 0, (unsigned long)RB_SHAPE_DIM_MAX, &k) < 0 || k % K_ALIGN)
		return rb_set_error(-EINVAL,
				    "k-slice '%s' must be 0 (auto) or a multiple of %d "
				    "channels",
				    v, K_ALIGN);
	cfg->k_slice = k;
	return 0;
}

static int set_res(struct rb_plan_config *cfg, const char *v)
{
	int i = index_of(residency_names, ARRAY_SIZE(residency_names), v);

	if (i < 0)
		return rb_set_error(-EINVAL, "residency '%s' must be resident or streamed", v);
	cfg->residency = (enum rb_plan_residency)i;
	return 0;
}

static int set_out(struct rb_plan_config *cfg, const char *v)
{
	int i = index_of(out_names, ARRAY_SIZE(out_names), v);

	if (i < 0)
		return rb_set_error(-EINVAL, "output '%s' must be fp32, fp16, int32 or auto", v);
	cfg->out = (enum rb_plan_out)i;
	return 0;
}

static int set_chain(struct rb_plan_config *cfg, const char *v)
{
	return parse_bool("chain", v, &cfg->chain);
}

static int set_mainline(struct rb_plan_config *cfg, const char *v)
{
	return parse_bool("mainline", v, &cfg->mainline);
}

static int set_wreuse(struct rb_plan_config *cfg, const char *v)
{
	return parse_bool("wreuse", v, &cfg->weight_reuse);
}

static const struct {
	const char *key;
	int (*set)(struct rb_plan_config *cfg, const char *value);
} setters[] = {
    {"mask", set_mask},         {"split", set_split},   {"axis", set_axis},
    {"weights", set_weights},   {"align", set_align},   {"banks", set_banks},
    {"dbanks", set_dbanks},     {"wbanks", set_wbanks}, {"kslice", set_kslice},
    {"res", set_res},           {"chain", set_chain},   {"out", set_out},
    {"mainline", set_mainline}, {"wreuse", set_wreuse},
};

int rb_plan_config_set(struct rb_plan_config *cfg, const char *key, const char *value)
{
	char keys[160];
	size_t used = 0;

	for (size_t i = 0; i < ARRAY_SIZE(setters); i++)
		if (strcmp(setters[i].key, key) == 0)
			return setters[i].set(cfg, value);
	for (size_t i = 0; i < ARRAY_SIZE(setters) && used < sizeof(keys); i++) /* the table's */
		used += (size_t)snprintf(keys + used, sizeof(keys) - used, "%s%s", i ? ", " : "",
					 setters[i].key);
	return rb_set_error(-EINVAL, "config key '%.40s' is unknown; keys are %s", key, keys);
}

/* One "key=value" token of a config string. */
static int parse_token(struct rb_plan_config *cfg, const char *tok, size_t len)
{
	char buf[128];
	char *eq;

	if (len >= sizeof(buf))
		return rb_set_error(-EINVAL, "config item '%.40s...' is too long", tok);
	memcpy(buf, tok, len);
	buf[len] = '\0';
	eq = strchr(buf, '=');
	if (!eq)
		return rb_set_error(-EINVAL, "config item '%s' must be key=value", buf);
	*eq = '\0';
	return rb_plan_config_set(cfg, buf, eq + 1);
}

int rb_plan_config_parse(struct rb_plan_config *cfg, const char *text)
{
	struct rb_plan_config tmp = *cfg;
	const char *ws = " \t\n";
	const char *p = text + strspn(text, ws);

	while (*p) {
		size_t len = strcspn(p, ws);

		if (parse_token(&tmp, p, len) < 0)
			return -EINVAL;
		p += len;
		p += strspn(p, ws);
	}
	*cfg = tmp;
	return 0;
}

int rb_plan_config_format(const struct rb_plan_config *cfg, char *buf, size_t size)
{
	char w[48] = "";
	size_t o = 0;

	for (unsigned i = 0; i < cfg->n_weights && i < RB_PLAN_MAX_CORES; i++)
		o += (size_t)snprintf(w + o, sizeof(w) - o, "%c%u", i ? ',' : ':', cfg->weights[i]);
	return snprintf(buf, size,
			"mask=0x%x split=%s%s align=%u banks=%u:%u kslice=%u res=%s chain=%d "
			"out=%s mainline=%d wreuse=%d",
			cfg->core_mask, rb_plan_axis_name(cfg->axis), w, cfg->align,
			cfg->data_banks, cfg->weight_banks, cfg->k_slice,
			rb_plan_residency_name(cfg->residency), cfg->chain ? 1 : 0,
			rb_plan_out_name(cfg->out), cfg->mainline ? 1 : 0,
			cfg->weight_reuse ? 1 : 0);
}

/* ---- checks --------------------------------------------------------------------- */

static int check_shape(const struct rb_shape *s)
{
	if (s->dtype != RB_DTYPE_FP16 && s->dtype != RB_DTYPE_INT8)
		return rb_set_error(-EINVAL, "dtype %d cannot be planned: fp16 or int8",
				    (int)s->dtype);
	if (s->m < 1 || s->k < 1 || s->n < 1 || s->m > RB_SHAPE_DIM_MAX ||
	    s->k > RB_SHAPE_DIM_MAX || s->n > RB_SHAPE_DIM_MAX)
		return rb_set_error(-EINVAL,
				    "shape %lldx%lldx%lld: every dimension must be 1 to "
				    "%lld",
				    (long long)s->m, (long long)s->k, (long long)s->n,
				    (long long)RB_SHAPE_DIM_MAX);
	return 0;
}

static uint32_t out_c2(enum rb_plan_out out)
{
	return out == RB_PLAN_OUT_FP16 ? 8 : 4;
}

/* The output cube's strides are 32-bit register values that grow with M (§a.5): CNA
 * SURF_STRIDE = M − 4 in 28 signed bits (#25), DPU DST_SURF_STRIDE = 16·M in bits 31:4
 * (#58) and SURFACE_ADD = (KG / C2_out)·16·M bytes in bits 31:4 (#90, §b.4). */
static int check_rows(const struct rb_shape *s, enum rb_plan_out out)
{
	uint64_t m = (uint64_t)s->m;
	uint64_t surface_add = kernel_group(s->dtype) / out_c2(out) * 16 * m;

	if (m > (UINT64_C(1) << 27) + 3)
		return rb_set_error(-EINVAL,
				    "M %llu rows: the A cube's SURF_STRIDE (M - 4) does "
				    "not fit its 28-bit field",
				    (unsigned long long)m);
	if (surface_add > ADDR_SPACE - 16)
		return rb_set_error(-EINVAL,
				    "M %llu rows: the C cube's SURFACE_ADD (%llu bytes) "
				    "does not fit its 32-bit field",
				    (unsigned long long)m, (unsigned long long)surface_add);
	return 0;
}

static int check_out(const struct rb_plan_config *cfg, enum rb_dtype dtype)
{
	if (cfg->out == RB_PLAN_OUT_AUTO)
		return 0;
	if (dtype == RB_DTYPE_INT8 && cfg->out != RB_PLAN_OUT_INT32)
		return rb_set_error(-EINVAL, "output %s needs fp16 input; int8 input gives int32",
				    rb_plan_out_name(cfg->out));
	if (dtype == RB_DTYPE_FP16 && cfg->out == RB_PLAN_OUT_INT32)
		return rb_set_error(-EINVAL, "output int32 needs int8 input; fp16 input gives "
					     "fp32 or fp16");
	if ((unsigned)cfg->out >= ARRAY_SIZE(out_names))
		return rb_set_error(-EINVAL, "output %d is unknown", (int)cfg->out);
	return 0;
}

static int check_split(const struct rb_plan_config *cfg, enum rb_dtype dtype)
{
	unsigned cores = popcount(cfg->core_mask), kg = kernel_group(dtype);

	if (cfg->core_mask < 1 || cfg->core_mask > 7)
		return rb_set_error(-EINVAL,
				    "core mask 0x%x must be 0x1 to 0x7 (a bit per NPU "
				    "core, 3 cores)",
				    cfg->core_mask);
	if ((unsigned)cfg->axis >= ARRAY_SIZE(axis_names))
		return rb_set_error(-EINVAL, "split axis %d is unknown", (int)cfg->axis);
	if (cfg->n_weights && cfg->n_weights != cores)
		return rb_set_error(-EINVAL,
				    "split weights: %u given for %u cores (mask 0x%x); "
				    "give one weight per core",
				    cfg->n_weights, cores, cfg->core_mask);
	for (unsigned i = 0; i < cfg->n_weights; i++)
		if (cfg->weights[i] < 1 || cfg->weights[i] > RB_PLAN_WEIGHT_MAX)
			return rb_set_error(-EINVAL, "split weight %u must be 1 to %d",
					    cfg->weights[i], RB_PLAN_WEIGHT_MAX);
	if (cfg->align != 0 && cfg->align != 16 && cfg->align != 32 && cfg->align != 64)
		return rb_set_error(-EINVAL, "alignment %u must be 16, 32 or 64", cfg->align);
	/* N cut points must start whole kernel groups of B and of the output (§b.3, §b.4). */
	if (cfg->axis != RB_PLAN_AXIS_M && cfg->align % kg)
		return rb_set_error(-EINVAL,
				    "alignment %u is not a multiple of the %s kernel "
				    "group (%u kernels); use %u or 64",
				    cfg->align, rb_dtype_name(dtype), kg, kg);
	return 0;
}

/* D + W ≤ 12 and each at least one bank once resolved (§c). */
static int check_banks(const struct rb_plan_config *cfg)
{
	unsigned d = cfg->data_banks, w = cfg->weight_banks;

	if (d + w > BANKS)
		return rb_set_error(-EINVAL,
				    "data banks %u + weight banks %u = %u exceed the %d "
				    "CBUF banks",
				    d, w, d + w, BANKS);
	if (d == BANKS || w == BANKS)
		return rb_set_error(-EINVAL, "%s banks %u leave no %s bank; use at most %d",
				    d == BANKS ? "data" : "weight", BANKS,
				    d == BANKS ? "weight" : "data", BANKS - 1);
	return 0;
}

/* Field limits of an explicit K-slice; what fits the banks is checked per bank split. */
static int check_kslice(const struct rb_plan_config *cfg, enum rb_dtype dtype)
{
	uint64_t bpe = rb_dtype_in_size(dtype);

	if (cfg->k_slice % K_ALIGN)
		return rb_set_error(-EINVAL, "k-slice %u must be a multiple of %d channels",
				    cfg->k_slice, K_ALIGN);
	if (cfg->k_slice > MAX_CHANNELS)
		return rb_set_error(-EINVAL,
				    "k-slice %u exceeds %d channels (DATA_SIZE1 "
				    "DATAIN_CHANNEL_REAL holds K - 1 in 14 bits)",
				    cfg->k_slice, MAX_CHANNELS);
	if (cfg->k_slice * bpe > MAX_KERNEL_BYTES)
		return rb_set_error(-EINVAL,
				    "k-slice %u of %s is %llu bytes per kernel, more "
				    "than one %d-byte CBUF bank",
				    cfg->k_slice, rb_dtype_name(dtype),
				    (unsigned long long)(cfg->k_slice * bpe), BANK);
	return 0;
}

int rb_plan_config_check(const struct rb_plan_config *cfg, const struct rb_shape *shape)
{
	enum rb_plan_out out;
	int ret = check_shape(shape);

	if (!ret)
		ret = check_split(cfg, shape->dtype);
	if (!ret)
		ret = check_out(cfg, shape->dtype);
	if (!ret)
		ret = check_banks(cfg);
	if (!ret)
		ret = check_kslice(cfg, shape->dtype);
	if (!ret && (unsigned)cfg->residency >= ARRAY_SIZE(residency_names))
		ret = rb_set_error(-EINVAL, "residency %d is unknown", (int)cfg->residency);
	if (ret)
		return ret;
	out = cfg->out == RB_PLAN_OUT_AUTO ? auto_out(shape->dtype) : cfg->out;
	return check_rows(shape, out);
}

/* ---- geometry ------------------------------------------------------------------- */

/* What one bank split gives. */
struct geom {
	uint32_t d, w;
	uint32_t k_slice, n_slices;
	uint32_t m_cap, n_cap;
};

static enum rb_npu_prec npu_out(enum rb_plan_out out)
{
	switch (out) {
	case RB_PLAN_OUT_FP16:
		return RB_PREC_FP16;
	case RB_PLAN_OUT_INT32:
		return RB_PREC_INT32;
	default:
		return RB_PREC_FP32;
	}
}

/* Cut points of the split axis: core i starts at the weighted share of the cores
 * before it, rounded to the nearest multiple of the alignment. */
static void cut_axis(struct rb_plan *p)
{
	const struct rb_plan_config *c = &p->config;
	uint64_t total = c->axis == RB_PLAN_AXIS_M ? p->m : p->n_pad;
	uint64_t sum = 0, cum = 0, prev = 0;

	for (unsigned i = 0; i < p->n_cores; i++)
		sum += c->weights[i];
	for (unsigned i = 0; i < p->n_cores; i++) {
		uint64_t cut = (2 * total * cum + sum * c->align) / (2 * sum * c->align) * c->align;

		cut = cut < prev ? prev : cut > total ? total : cut;
		p->cores[i].begin = (uint32_t)cut;
		if (i)
			p->cores[i - 1].end = (uint32_t)cut;
		prev = cut;
		cum += c->weights[i];
	}
	p->cores[p->n_cores - 1].end = (uint32_t)total;
}

/* Everything that follows from the shape and the config alone. */
static void resolve_basics(struct rb_plan *p, const struct rb_shape *s,
			   const struct rb_plan_config *cfg)
{
	struct rb_plan_config *c = &p->config;
	unsigned n = 0;

	p->shape = *s;
	p->requested = *cfg;
	*c = *cfg;
	c->axis = c->axis == RB_PLAN_AXIS_AUTO ? auto_axis(s) : c->axis;
	c->align = c->align ? c->align : kernel_group(s->dtype);
	c->out = c->out == RB_PLAN_OUT_AUTO ? auto_out(s->dtype) : c->out;
	p->out = npu_out(c->out);
	p->bpe = (uint32_t)rb_dtype_in_size(s->dtype);
	p->out_bpe = c->out == RB_PLAN_OUT_FP16 ? 2 : 4;
	p->kernel_group = kernel_group(s->dtype);
	p->c2_in = 16 / p->bpe;
	p->c2_out = 16 / p->out_bpe;
	p->m = (uint32_t)s->m;
	/* The mainline variant computes at least 4 rows (hw/task.h): rows past M are zero
	 * in A and ignored in C. The vendor variant keeps MTX's M = 1 cube and its
	 * SURF_STRIDE of -3, which runs on the vendor kernel. */
	if (c->mainline && p->m < RB_NPU_MAINLINE_MIN_ROWS)
		p->m = RB_NPU_MAINLINE_MIN_ROWS;
	p->k_pad = (uint32_t)round_up((uint64_t)s->k, K_ALIGN);
	p->n_pad = (uint32_t)round_up((uint64_t)s->n, p->kernel_group);
	/* saturated: the 4 GiB check refuses what does not fit 64 bits either */
	p->a_bytes = rb_mul_sat(rb_mul_sat(p->k_pad, p->m), p->bpe);
	p->b_bytes = rb_mul_sat(rb_mul_sat(p->n_pad, p->k_pad), p->bpe);
	p->c_cube_bytes = rb_mul_sat(rb_mul_sat(p->n_pad, p->m), p->out_bpe);
	for (unsigned core = 0; core < RB_PLAN_MAX_CORES; core++)
		if (c->core_mask & (1u << core))
			p->cores[n++].core = core;
	p->n_cores = n;
	for (unsigned i = 0; !cfg->n_weights && i < n; i++)
		c->weights[i] = 1;
	c->n_weights = n;
	cut_axis(p);
}

/* Rows (M) and kernels (N) of core i's part of C. */
static void core_extent(const struct rb_plan *p, unsigned i, uint32_t *rows, uint32_t *cols)
{
	const struct rb_plan_core *c = &p->cores[i];

	*rows = p->config.axis == RB_PLAN_AXIS_M ? c->end - c->begin : p->m;
	*cols = p->config.axis == RB_PLAN_AXIS_M ? p->n_pad : c->end - c->begin;
}

/* Auto K-slice: the fewest slices of at most 8192 channels, one kernel per bank, one
 * row in the data banks and (resident) one kernel group in the weight banks; then the
 * slices are evened out. */
static void auto_k_slice(const struct rb_plan *p, struct geom *g)
{
	uint64_t kg_bytes = (uint64_t)p->kernel_group * p->bpe;
	uint64_t cap = min_u64(AUTO_K_SLICE, MAX_KERNEL_BYTES / p->bpe);
	uint64_t n;

	cap = min_u64(cap, round_down((uint64_t)g->d * BANK / p->bpe, K_ALIGN));
	if (p->config.residency == RB_PLAN_RESIDENT)
		cap = min_u64(cap, round_down((uint64_t)g->w * BANK / kg_bytes, K_ALIGN));
	n = div_up(p->k_pad, cap);
	g->k_slice = (uint32_t)round_up(div_up(p->k_pad, n), K_ALIGN);
}

/* One row of the widest K-slice must fit the data banks; resident, one kernel group
 * of it must fit the weight banks. */
static int geom_fits(const struct rb_plan *p, const struct geom *g)
{
	uint64_t row = round_up((uint64_t)g->k_slice * p->bpe, ENTRY_BYTES);
	uint64_t group = (uint64_t)p->kernel_group * g->k_slice * p->bpe;
	const char *dt = rb_dtype_name(p->shape.dtype);

	if (row > (uint64_t)g->d * BANK)
		return rb_set_error(-EINVAL,
				    "data banks %u cannot hold one row of %u %s "
				    "channels (%llu bytes > %llu bytes); use more data banks or a "
				    "smaller k-slice",
				    g->d, g->k_slice, dt, (unsigned long long)row,
				    (unsigned long long)g->d * BANK);
	if (p->config.residency == RB_PLAN_RESIDENT && group > (uint64_t)g->w * BANK)
		return rb_set_error(-EINVAL,
				    "weight banks %u cannot hold one kernel group of %u "
				    "kernels x %u %s channels (%llu bytes > %llu bytes); use more "
				    "weight banks, a smaller k-slice or res=streamed",
				    g->w, p->kernel_group, g->k_slice, dt,
				    (unsigned long long)group, (unsigned long long)g->w * BANK);
	return 0;
}

/* Even tiles of at most cap, in whole units (4 rows, or a kernel group) when cap
 * allows: count tiles, all of size *size but the last. */
static uint32_t tile(uint32_t extent, uint32_t cap, uint32_t unit, uint32_t *size)
{
	uint64_t count = div_up(extent, cap);
	uint64_t t;

	if (count == 0) {
		*size = 0;
		return 0;
	}
	t = div_up(extent, count);
	if (cap >= unit)
		t = min_u64(round_up(t, unit), cap);
	*size = (uint32_t)t;
	return (uint32_t)div_up(extent, t);
}

/* Tasks of a geometry over all cores. */
static uint64_t count_tasks(const struct rb_plan *p, const struct geom *g)
{
	uint64_t total = 0;
	uint32_t rows, cols, size;

	for (unsigned i = 0; i < p->n_cores; i++) {
		core_extent(p, i, &rows, &cols);
		total += (uint64_t)tile(rows, g->m_cap, 4, &size) *
			 tile(cols, g->n_cap, p->kernel_group, &size) * g->n_slices;
	}
	return total;
}

/* The buffers, one C cube per K-slice, must fit the 4 GiB NPU address space (§b.5);
 * the task lists must stay a sane size. */
static int geom_limits(const struct rb_plan *p, const struct geom *g)
{
	uint64_t c = rb_mul_sat(p->c_cube_bytes, g->n_slices);
	uint64_t total = rb_add_sat(rb_add_sat(p->a_bytes, p->b_bytes), c);
	uint64_t tasks;

	if (total > ADDR_SPACE)
		return rb_set_error(-EINVAL,
				    "buffers need %llu bytes (A %llu + B %llu + C %llu "
				    "in %u K-slice cube%s), more than the 4 GiB (%llu bytes) NPU "
				    "address space",
				    (unsigned long long)total, (unsigned long long)p->a_bytes,
				    (unsigned long long)p->b_bytes, (unsigned long long)c,
				    g->n_slices, g->n_slices == 1 ? "" : "s",
				    (unsigned long long)ADDR_SPACE);
	tasks = count_tasks(p, g); /* buffers ≤ 4 GiB keep this well inside 64 bits */
	if (tasks > RB_PLAN_MAX_TASKS)
		return rb_set_error(-EINVAL,
				    "the plan needs %llu tasks, more than the %u a plan "
				    "may hold; use more banks or a larger k-slice",
				    (unsigned long long)tasks, RB_PLAN_MAX_TASKS);
	return 0;
}

/* The geometry of bank split d:w, or -EINVAL naming what does not fit. */
static int geom_for(const struct rb_plan *p, uint32_t d, uint32_t w, struct geom *g)
{
	uint64_t row, cap;
	int ret;

	g->d = d;
	g->w = w;
	if (p->requested.k_slice)
		g->k_slice = (uint32_t)min_u64(p->requested.k_slice, p->k_pad);
	else
		auto_k_slice(p, g);
	g->n_slices = (uint32_t)div_up(p->k_pad, g->k_slice);
	ret = geom_fits(p, g);
	if (ret)
		return ret;
	row = round_up((uint64_t)g->k_slice * p->bpe, ENTRY_BYTES);
	cap = min_u64(MAX_ROWS, (uint64_t)d * BANK / row);
	g->m_cap = (uint32_t)(cap >= 4 ? round_down(cap, 4) : cap);
	cap = MAX_KERNELS;
	if (p->config.residency == RB_PLAN_RESIDENT)
		cap = min_u64(cap, round_down((uint64_t)w * BANK / ((uint64_t)g->k_slice * p->bpe),
					      p->kernel_group));
	g->n_cap = (uint32_t)cap;
	return geom_limits(p, g);
}

/* DDR bytes plus task costs of the busiest core: what the auto bank split minimises.
 * With several K-slices the host reads every partial C cube back to add them. With
 * weight reuse (resident weights, chained) each N tile's weights are read once, not
 * once per M tile. */
static double geom_cost(const struct rb_plan *p, const struct geom *g)
{
	double worst = 0, kb = (double)p->k_pad * p->bpe;
	double out = (double)p->out_bpe * g->n_slices * (g->n_slices > 1 ? 2 : 1);
	bool reuse =
	    p->config.weight_reuse && p->config.chain && p->config.residency == RB_PLAN_RESIDENT;

	for (unsigned i = 0; i < p->n_cores; i++) {
		uint32_t rows, cols;
		double nm, nn, cost;

		core_extent(p, i, &rows, &cols);
		nm = (double)div_up(rows, g->m_cap);
		nn = (double)div_up(cols, g->n_cap);
		cost = nn * rows * kb + (reuse ? 1 : nm) * cols * kb + out * rows * cols +
		       nm * nn * g->n_slices * TASK_COST_BYTES;
		worst = cost > worst ? cost : worst;
	}
	return worst;
}

/* The bank split: as given, or the cheapest of 1:11 .. 11:1 that fits everything
 * (ties: fewer data banks). */
static int choose_geom(struct rb_plan *p, struct geom *best)
{
	uint32_t d = p->requested.data_banks, w = p->requested.weight_banks;
	uint32_t lo = d ? d : w ? BANKS - w : 1, hi = d ? d : w ? BANKS - w : BANKS - 1;
	double best_cost = 0;

	for (uint32_t dd = lo; dd <= hi; dd++) {
		struct geom g;
		double cost;

		if (geom_for(p, dd, w ? w : BANKS - dd, &g) < 0)
			continue;
		cost = geom_cost(p, &g);
		if (best->d == 0 || cost < best_cost) {
			*best = g;
			best_cost = cost;
		}
	}
	if (best->d == 0) /* nothing fits: the split with most weight banks names why */
		return geom_for(p, lo, w ? w : BANKS - lo, best);
	return 0;
}

static void apply_geom(struct rb_plan *p, const struct geom *g)
{
	p->config.data_banks = g->d;
	p->config.weight_banks = g->w;
	p->config.k_slice = g->k_slice;
	p->k_slice = g->k_slice;
	p->n_kslices = g->n_slices;
	p->m_cap = g->m_cap;
	p->n_cap = g->n_cap;
	p->c_bytes = p->c_cube_bytes * g->n_slices;
}

/* ---- tasks ---------------------------------------------------------------------- */

/* A tile of one core: rows [m0, m0+m), kernels [n0, n0+n). */
struct tile_pos {
	uint32_t m0, m, n0, n;
};

/* The task computing one tile of K-slice s; offsets as in plan.h. */
static void make_task(const struct rb_plan *p, const struct tile_pos *t, uint32_t s,
		      struct rb_plan_task *out)
{
	uint64_t k0 = (uint64_t)s * p->k_slice, m = p->m;
	uint32_t ks = (uint32_t)min_u64(p->k_slice, p->k_pad - k0);
	struct rb_npu_task *npu = &out->npu;

	memset(out, 0, sizeof(*out));
	npu->dtype = p->shape.dtype;
	npu->out = p->out;
	npu->m = t->m;
	npu->k = ks;
	npu->n = t->n;
	npu->a_height = p->m;
	npu->c_height = p->m;
	npu->data_banks = p->config.data_banks;
	npu->weight_banks = p->config.weight_banks;
	npu->a_addr = (uint32_t)(k0 / p->c2_in * m * 16 + (uint64_t)t->m0 * 16);
	npu->b_addr = (uint32_t)(k0 * p->n_pad * p->bpe + (uint64_t)t->n0 * ks * p->bpe);
	npu->c_addr = (uint32_t)(s * p->c_cube_bytes + (uint64_t)t->n0 / p->c2_out * m * 16 +
				 (uint64_t)t->m0 * 16);
	npu->mainline = p->config.mainline;
	out->m0 = t->m0;
	out->k0 = (uint32_t)k0;
	out->n0 = t->n0;
	out->kslice = s;
	out->feature_bytes = (uint64_t)t->m * ks * p->bpe;
	out->weight_bytes = (uint64_t)t->n * ks * p->bpe;
	out->output_bytes = (uint64_t)t->m * t->n * p->out_bpe;
	out->streamed = out->weight_bytes > (uint64_t)p->config.weight_banks * BANK;
}

/* Tile counts of core i; returns its task count. */
static uint64_t core_tiles(const struct rb_plan *p, unsigned i, uint32_t *mt, uint32_t *nt,
			   uint32_t *nm, uint32_t *nn)
{
	uint32_t rows, cols;

	core_extent(p, i, &rows, &cols);
	*nm = tile(rows, p->m_cap, 4, mt);
	*nn = tile(cols, p->n_cap, p->kernel_group, nt);
	return (uint64_t)*nm * *nn * p->n_kslices;
}

/* Task order: K-slice, then N tile, then M tile. */
static int build_core(struct rb_plan *p, unsigned i)
{
	struct rb_plan_core *c = &p->cores[i];
	uint32_t rows, cols, mt, nt, nm, nn;
	uint32_t m_base = p->config.axis == RB_PLAN_AXIS_M ? c->begin : 0;
	uint32_t n_base = p->config.axis == RB_PLAN_AXIS_M ? 0 : c->begin;
	size_t n = (size_t)core_tiles(p, i, &mt, &nt, &nm, &nn);

	core_extent(p, i, &rows, &cols);
	c->tasks = n ? calloc(n, sizeof(*c->tasks)) : NULL;
	if (n && !c->tasks)
		return rb_set_error(-ENOMEM, "out of memory for %zu tasks", n);
	for (uint32_t s = 0; s < p->n_kslices; s++) {
		for (uint32_t j = 0; j < nn; j++) {
			for (uint32_t k = 0; k < nm; k++) {
				struct tile_pos t = {
				    .m0 = m_base + k * mt,
				    .m = (uint32_t)min_u64(mt, rows - k * mt),
				    .n0 = n_base + j * nt,
				    .n = (uint32_t)min_u64(nt, cols - j * nt),
				};

				make_task(p, &t, s, &c->tasks[c->n_tasks++]);
			}
		}
	}
	return 0;
}

/* §c: the previous task left these very weights in the CBUF: the same packed range
 * (address, kernels, channels), resident in both (a streamed task keeps only its last
 * kernels), under the plan's one bank split. */
static bool keeps_weights(const struct rb_plan_task *prev, const struct rb_plan_task *t)
{
	return prev->npu.b_addr == t->npu.b_addr && prev->npu.n == t->npu.n &&
	       prev->npu.k == t->npu.k && !prev->streamed && !t->streamed;
}

/* WEIGHT_REUSE where the weights do not change, as the public users of the bit do:
 * Mesa's rocket driver sets it on every task but the first of an operation whose
 * weights fit the CBUF, rocket-userspace on every task but the first of a job that
 * keeps the (N tile, K slice) of the one before. The first task of a submit never
 * reuses: it cannot count on what another job left. build_core puts the M tiles
 * innermost, so the tasks of one (K-slice, N tile) follow each other. */
static void mark_weight_reuse(const struct rb_plan *p, struct rb_plan_core *c)
{
	if (!p->config.weight_reuse || !p->config.chain)
		return;
	for (size_t t = 1; t < c->n_tasks; t++) {
		struct rb_plan_task *task = &c->tasks[t];

		if (t % RB_PLAN_TASKS_PER_SUBMIT == 0 || !keeps_weights(&c->tasks[t - 1], task))
			continue;
		task->npu.weight_reuse = true;
		task->weight_bytes = 0; /* not read from B again */
	}
}

static void sum_core(struct rb_plan *p, struct rb_plan_core *c)
{
	uint64_t bytes;

	for (size_t t = 0; t < c->n_tasks; t++) {
		c->feature_bytes += c->tasks[t].feature_bytes;
		c->weight_bytes += c->tasks[t].weight_bytes;
		c->output_bytes += c->tasks[t].output_bytes;
		p->streamed |= c->tasks[t].streamed;
		p->weight_reuse |= c->tasks[t].npu.weight_reuse;
	}
	c->n_submits = p->config.chain ? div_up(c->n_tasks, RB_PLAN_TASKS_PER_SUBMIT) : c->n_tasks;
	p->n_tasks += c->n_tasks;
	p->n_submits += c->n_submits;
	p->feature_bytes += c->feature_bytes;
	p->weight_bytes += c->weight_bytes;
	p->output_bytes += c->output_bytes;
	bytes = c->feature_bytes + c->weight_bytes + c->output_bytes;
	p->max_core_bytes = bytes > p->max_core_bytes ? bytes : p->max_core_bytes;
}

static int build_tasks(struct rb_plan *p)
{
	int ret;

	for (unsigned i = 0; i < p->n_cores; i++) {
		ret = build_core(p, i);
		if (ret)
			return ret;
		mark_weight_reuse(p, &p->cores[i]);
		sum_core(p, &p->cores[i]);
	}
	return 0;
}

int rb_plan_init(struct rb_plan *plan, const struct rb_shape *shape,
		 const struct rb_plan_config *cfg)
{
	struct geom g = {0};
	int ret;

	memset(plan, 0, sizeof(*plan));
	ret = rb_plan_config_check(cfg, shape);
	if (ret)
		return ret;
	resolve_basics(plan, shape, cfg);
	ret = choose_geom(plan, &g);
	if (!ret) {
		apply_geom(plan, &g);
		ret = build_tasks(plan);
	}
	if (ret)
		rb_plan_release(plan);
	return ret;
}

bool rb_plan_unproven(const struct rb_plan *plan)
{
	return plan->streamed || plan->weight_reuse;
}

bool rb_plan_config_equal(const struct rb_plan_config *a, const struct rb_plan_config *b)
{
	if (a->n_weights != b->n_weights)
		return false;
	for (unsigned i = 0; i < a->n_weights && i < RB_PLAN_MAX_CORES; i++)
		if (a->weights[i] != b->weights[i])
			return false;
	return a->core_mask == b->core_mask && a->axis == b->axis && a->align == b->align &&
	       a->data_banks == b->data_banks && a->weight_banks == b->weight_banks &&
	       a->k_slice == b->k_slice && a->residency == b->residency && a->chain == b->chain &&
	       a->out == b->out && a->mainline == b->mainline && a->weight_reuse == b->weight_reuse;
}

bool rb_plan_native_b(const struct rb_plan *p)
{
	const struct rb_shape *s = &p->shape;

	if ((int64_t)p->k_pad != s->k || (int64_t)p->n_pad != s->n)
		return false;
	return s->k <= RB_LAYOUT_RKNN_K_SEGMENT ? p->n_kslices == 1
						: p->k_slice == RB_LAYOUT_RKNN_K_SEGMENT;
}

void rb_plan_release(struct rb_plan *plan)
{
	for (unsigned i = 0; i < RB_PLAN_MAX_CORES; i++)
		free(plan->cores[i].tasks);
	memset(plan, 0, sizeof(*plan));
}

/* ---- addresses ------------------------------------------------------------------ */

/* Channel groups and rows span (groups − 1) whole surfaces of the M-row cube plus the
 * tile's rows in the last one (§b.2, §b.4). */
static uint64_t cube_span(uint32_t channels, uint32_t c2, uint32_t height, uint32_t rows)
{
	return ((uint64_t)channels / c2 - 1) * height * 16 + (uint64_t)rows * 16;
}

uint64_t rb_plan_task_a_span(const struct rb_plan *plan, const struct rb_plan_task *task)
{
	return cube_span(task->npu.k, plan->c2_in, task->npu.a_height, task->npu.m);
}

uint64_t rb_plan_task_b_span(const struct rb_plan *plan, const struct rb_plan_task *task)
{
	return (uint64_t)task->npu.n * task->npu.k * plan->bpe;
}

uint64_t rb_plan_task_c_span(const struct rb_plan *plan, const struct rb_plan_task *task)
{
	return cube_span(task->npu.n, plan->c2_out, task->npu.c_height, task->npu.m);
}

int rb_plan_task_resolve(const struct rb_plan *plan, const struct rb_plan_task *task,
			 const struct rb_plan_bases *bases, struct rb_npu_task *out)
{
	if ((bases->a | bases->b | bases->c) & 15)
		return rb_set_error(-EINVAL,
				    "buffer bases 0x%x, 0x%x, 0x%x must be 16-byte "
				    "aligned",
				    bases->a, bases->b, bases->c);
	if (bases->a + plan->a_bytes > ADDR_SPACE || bases->b + plan->b_bytes > ADDR_SPACE ||
	    bases->c + plan->c_bytes > ADDR_SPACE)
		return rb_set_error(-ERANGE,
				    "buffers at 0x%x, 0x%x, 0x%x end past the 4 GiB NPU "
				    "address space",
				    bases->a, bases->b, bases->c);
	*out = task->npu;
	out->a_addr += bases->a;
	out->b_addr += bases->b;
	out->c_addr += bases->c;
	return 0;
}
