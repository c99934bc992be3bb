/* The planner's configs (plan.h): names, defaults, the compact text form and the
 * checks a config passes before it is planned. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "host/limits.h"
#include "npu/plan_internal.h"

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
enum rb_plan_axis rb_plan_auto_axis(const struct rb_shape *s)
{
	uint64_t n_pad = round_up((uint64_t)s->n, kernel_group(s->dtype));

	return (uint64_t)s->m > n_pad ? RB_PLAN_AXIS_M : RB_PLAN_AXIS_N;
}

enum rb_plan_out rb_plan_auto_out(enum rb_dtype dtype)
{
	return dtype == RB_DTYPE_INT8 ? RB_PLAN_OUT_INT32 : RB_PLAN_OUT_FP32;
}

void rb_plan_config_default(struct rb_plan_config *cfg, const struct rb_shape *shape,
			    unsigned core_mask)
{
	rb_plan_config_init(cfg);
	cfg->core_mask = core_mask;
	cfg->axis = rb_plan_auto_axis(shape);
	cfg->align = kernel_group(shape->dtype);
	cfg->out = rb_plan_auto_out(shape->dtype);
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
	for (size_t i = 0; i < ARRAY_SIZE(setters); i++)
		if (strcmp(setters[i].key, key) == 0)
			return setters[i].set(cfg, value);
	return rb_set_error(-EINVAL,
			    "config key '%s' is unknown; keys are mask, split, align, "
			    "banks, kslice, res, chain, out, mainline, wreuse",
			    key);
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
	out = cfg->out == RB_PLAN_OUT_AUTO ? rb_plan_auto_out(shape->dtype) : cfg->out;
	return check_rows(shape, out);
}
