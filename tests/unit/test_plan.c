/* The planner: every shape of configs/ with the default config and every core mask,
 * hand-computed offsets, a seeded property test over thousands of random shapes and
 * configs, compact config strings, and the named-constraint errors. Run from the top of
 * the tree (configs/ is read by relative path).
 *
 * check_plan() re-derives everything from npu-facts.md independently of plan.c: the
 * CBUF fits (§c), the field widths of the §a.5 program, exact coverage of C per K-slice
 * and of K by the K-slices, buffer bounds, the offset formulas of plan.h, and that the
 * bytes add up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "numeric/layout.h"
#include "core/rng.h"
#include "core/util.h"
#include "npu/plan.h"
#include "npu/regcmd.h"
#include "rknn_bench/shape.h"

#define BANK 32768u
#define GiB4 (UINT64_C(1) << 32)

/* assert_true with the values in the message. */
#define expect(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			print_error("%s:%d: %s: ", __FILE__, __LINE__, #cond);                     \
			print_error(__VA_ARGS__);                                                  \
			print_error("\n");                                                         \
			fail();                                                                    \
		}                                                                                  \
	} while (0)

static uint64_t up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b * b;
}

static uint32_t kg_of(enum rb_dtype dt)
{
	return dt == RB_DTYPE_INT8 ? 32 : 16;
}

/* ---- field widths of the §a.5 program ------------------------------------------ */

static bool fits(uint64_t v, unsigned bits)
{
	return v < (UINT64_C(1) << bits);
}

static void check_fields(const struct rb_plan *p, const struct rb_npu_task *t)
{
	uint64_t bpe = p->bpe, c2_out = t->out == RB_PREC_FP16 ? 8 : 4;
	uint64_t surf_add = kg_of(t->dtype) / c2_out * 16 * t->c_height;
	int64_t surf_stride = (int64_t)t->a_height - 4;

	expect(t->m >= 1 && t->k >= 32 && t->n >= 16, "m %u k %u n %u", t->m, t->k, t->n);
	expect(t->k % 32 == 0 && t->n % kg_of(t->dtype) == 0, "k %u n %u", t->k, t->n);
	expect(fits(t->m, 11), "DATAIN_HEIGHT / DMA_HEIGHT %u", t->m);
	expect(fits(t->m + 1, 10), "FEATURE_GRAINS %u", t->m + 1);
	expect(fits(t->k, 16) && fits(t->k - 1, 14), "DATAIN_CHANNEL(_REAL) %u", t->k);
	expect(fits(t->m, 22), "DATAOUT_ATOMICS %u", t->m);
	expect(fits(t->k * bpe * t->n, 32), "WEIGHT_BYTES %u x %u", t->k, t->n);
	expect(t->k * bpe <= BANK && fits(t->k * bpe, 19), "WEIGHT_BYTES_PER_KERNEL %u", t->k);
	expect(fits(t->n, 14), "WEIGHT_KERNELS %u", t->n);
	expect(fits(t->data_banks, 4) && fits(t->weight_banks, 4), "banks");
	expect(t->data_banks >= 1 && t->weight_banks >= 1 && t->data_banks + t->weight_banks <= 12,
	       "banks %u:%u", t->data_banks, t->weight_banks);
	expect(fits((t->k * bpe + 63) / 64, 13), "DATA_ENTRIES");
	expect(surf_stride >= -(INT64_C(1) << 27) && surf_stride < (INT64_C(1) << 27),
	       "CNA SURF_STRIDE %lld", (long long)surf_stride);
	expect(fits(t->m - 1, 16) && fits(t->n - 1, 16), "CORE DATAOUT_*");
	expect(fits(t->m - 1, 13) && fits(t->n - 1, 13), "DPU HEIGHT %u / CHANNEL %u", t->m, t->n);
	expect(fits(16ull * t->c_height, 32) && fits(surf_add, 32), "DST_SURF_STRIDE/SURFACE_ADD");
	expect(t->a_addr % 16 == 0 && t->c_addr % 16 == 0, "16-byte aligned A/C");
}

/* ---- one task ----------------------------------------------------------------- */

/* Rows of the A and C cubes: M, or 4 for a mainline plan of M < 4 (rocket-userspace's
 * padding, npu-facts §b.2). */
static uint64_t cube_rows(const struct rb_plan *p)
{
	/* the mainline variant pads M to a multiple of 4, as rocket-userspace takes it */
	return p->config.mainline ? up((uint64_t)p->shape.m, 4) : (uint64_t)p->shape.m;
}

static void check_task(const struct rb_plan *p, const struct rb_plan_task *pt)
{
	const struct rb_npu_task *t = &pt->npu;
	uint64_t bpe = p->bpe, M = cube_rows(p), obpe = p->out_bpe;
	uint64_t c2_in = 16 / bpe, c2_out = 16 / obpe, wbytes = (uint64_t)t->n * t->k * bpe;
	uint64_t slice_b = (uint64_t)pt->k0 * p->n_pad * bpe;
	uint64_t cube = (uint64_t)p->n_pad * M * obpe;
	size_t b_off;
	int64_t b_ks;

	check_fields(p, t);
	expect(t->dtype == p->shape.dtype && t->a_height == M && t->c_height == M, "heights");
	expect(t->mainline == p->config.mainline, "mainline");
	/* CBUF (§c): the feature rows fit the data banks; resident weights fit theirs */
	expect((uint64_t)t->m * t->k * bpe <= (uint64_t)t->data_banks * BANK, "feature %u x %u",
	       t->m, t->k);
	expect(pt->streamed == (wbytes > (uint64_t)t->weight_banks * BANK), "streamed flag");
	if (p->config.residency == RB_PLAN_RESIDENT)
		expect(!pt->streamed, "resident plan streams %llu bytes",
		       (unsigned long long)wbytes);
	/* offsets (plan.h) */
	expect(t->a_addr == pt->k0 / c2_in * M * 16 + (uint64_t)pt->m0 * 16, "a_addr");
	expect(t->b_addr == slice_b + (uint64_t)pt->n0 * t->k * bpe, "b_addr");
	expect(t->c_addr == pt->kslice * cube + pt->n0 / c2_out * M * 16 + (uint64_t)pt->m0 * 16,
	       "c_addr");
	/* every byte the task touches lies in its buffer / slice / cube */
	expect(t->a_addr + ((uint64_t)t->k / c2_in - 1) * M * 16 + (uint64_t)t->m * 16 <=
		       p->a_bytes &&
		   t->a_addr + rb_plan_task_a_span(p, pt) <= p->a_bytes,
	       "A range");
	expect(t->b_addr + wbytes <= slice_b + (uint64_t)p->n_pad * t->k * bpe &&
		   t->b_addr + rb_plan_task_b_span(p, pt) <= p->b_bytes,
	       "B range");
	expect(t->c_addr + ((uint64_t)t->n / c2_out - 1) * M * 16 + (uint64_t)t->m * 16 <=
		       (pt->kslice + 1) * cube &&
		   t->c_addr >= pt->kslice * cube &&
		   t->c_addr + rb_plan_task_c_span(p, pt) <= p->c_bytes,
	       "C range");
	/* the packing agrees (numeric/layout.h) */
	expect(rb_layout_b_locate(p->shape.dtype, p->k_pad, p->n_pad, p->k_slice, pt->kslice,
				  pt->n0, &b_off, &b_ks) == 0 &&
		   b_off == t->b_addr && b_ks == t->k,
	       "rb_layout_b_locate: %s", rb_last_error());
	expect(pt->feature_bytes == (uint64_t)t->m * t->k * bpe &&
		   pt->weight_bytes == (t->weight_reuse ? 0 : wbytes) &&
		   pt->output_bytes == (uint64_t)t->m * t->n * obpe,
	       "bytes");
}

/* ---- coverage ----------------------------------------------------------------- */

/* The grid of every task edge: idx[x] = which edge coordinate x is (-1: none). */
struct grid {
	int32_t *mi, *ni;
	size_t em, en; /* edges along M and N */
};

static size_t index_edges(int32_t *idx, size_t n)
{
	size_t e = 0;

	for (size_t x = 0; x < n; x++)
		idx[x] = idx[x] ? (int32_t)e++ : -1;
	return e;
}

static void grid_init(struct grid *g, const struct rb_plan *p)
{
	g->mi = calloc((size_t)p->m + 1, sizeof(*g->mi));
	g->ni = calloc((size_t)p->n_pad + 1, sizeof(*g->ni));
	assert_non_null(g->mi);
	assert_non_null(g->ni);
	g->mi[0] = g->mi[p->m] = g->ni[0] = g->ni[p->n_pad] = 1;
	for (unsigned c = 0; c < p->n_cores; c++)
		for (size_t i = 0; i < p->cores[c].n_tasks; i++) {
			const struct rb_plan_task *t = &p->cores[c].tasks[i];

			expect((uint64_t)t->m0 + t->npu.m <= p->m &&
				   (uint64_t)t->n0 + t->npu.n <= p->n_pad,
			       "task beyond C");
			g->mi[t->m0] = g->mi[t->m0 + t->npu.m] = 1;
			g->ni[t->n0] = g->ni[t->n0 + t->npu.n] = 1;
		}
	g->em = index_edges(g->mi, (size_t)p->m + 1);
	g->en = index_edges(g->ni, (size_t)p->n_pad + 1);
}

/* The tasks of one K-slice tile C: every cell of the grid is covered exactly once. */
static void check_cover_slice(const struct grid *g, uint8_t *cell, const struct rb_plan_task **t,
			      size_t n)
{
	size_t w = g->en - 1, ncell = (g->em - 1) * w;

	memset(cell, 0, ncell);
	for (size_t i = 0; i < n; i++) {
		size_t m0 = (size_t)g->mi[t[i]->m0], m1 = (size_t)g->mi[t[i]->m0 + t[i]->npu.m];
		size_t n0 = (size_t)g->ni[t[i]->n0], n1 = (size_t)g->ni[t[i]->n0 + t[i]->npu.n];

		for (size_t a = m0; a < m1; a++)
			for (size_t b = n0; b < n1; b++)
				cell[a * w + b]++;
	}
	for (size_t i = 0; i < ncell; i++)
		expect(cell[i] == 1, "slice %u cell %zu covered %u times", t[0]->kslice, i,
		       cell[i]);
}

/* The tasks bucketed by K-slice (counting sort), each bucket checked for cover. */
static void check_cover_c(const struct rb_plan *p)
{
	size_t *start = calloc(p->n_kslices + 1, sizeof(*start));
	const struct rb_plan_task **by = malloc((p->n_tasks + 1) * sizeof(*by));
	struct grid g;
	uint8_t *cell;

	assert_non_null(start);
	assert_non_null(by);
	grid_init(&g, p);
	cell = malloc((g.em - 1) * (g.en - 1) + 1); /* + 1: never a zero-size allocation */
	assert_non_null(cell);
	for (unsigned c = 0; c < p->n_cores; c++)
		for (size_t i = 0; i < p->cores[c].n_tasks; i++)
			start[p->cores[c].tasks[i].kslice + 1]++;
	for (uint32_t s = 0; s < p->n_kslices; s++) {
		expect(start[s + 1] > 0, "K-slice %u has no task", s);
		start[s + 1] += start[s];
	}
	for (unsigned c = 0; c < p->n_cores; c++)
		for (size_t i = 0; i < p->cores[c].n_tasks; i++)
			by[start[p->cores[c].tasks[i].kslice]++] = &p->cores[c].tasks[i];
	for (uint32_t s = 0, at = 0; s < p->n_kslices; at = (uint32_t)start[s++])
		check_cover_slice(&g, cell, by + at, start[s] - at);
	free(cell);
	free(g.mi);
	free(g.ni);
	free(by);
	free(start);
}

/* K-slices cover [0, K_pad) once, in order, and every task agrees with its slice. */
static void check_cover_k(const struct rb_plan *p)
{
	uint64_t k = 0;

	for (uint32_t s = 0; s < p->n_kslices; s++) {
		uint32_t w = s + 1 < p->n_kslices ? p->k_slice : p->k_pad - s * p->k_slice;

		expect(w >= 32 && w <= p->k_slice, "slice %u is %u wide", s, w);
		k += w;
	}
	expect(k == p->k_pad, "K-slices cover %llu of %u", (unsigned long long)k, p->k_pad);
	for (unsigned c = 0; c < p->n_cores; c++)
		for (size_t i = 0; i < p->cores[c].n_tasks; i++) {
			const struct rb_plan_task *t = &p->cores[c].tasks[i];
			uint32_t w = t->kslice + 1 < p->n_kslices
					 ? p->k_slice
					 : p->k_pad - t->kslice * p->k_slice;

			expect(t->kslice < p->n_kslices && t->k0 == t->kslice * p->k_slice &&
				   t->npu.k == w,
			       "task k [%u,+%u) in slice %u", t->k0, t->npu.k, t->kslice);
		}
}

/* ---- the plan ------------------------------------------------------------------- */

static void check_sizes(const struct rb_plan *p)
{
	const struct rb_shape *s = &p->shape;
	uint64_t kg = kg_of(s->dtype), bpe = rb_dtype_in_size(s->dtype);
	const struct rb_plan_config *c = &p->config;

	expect(p->k_pad == up(s->k, 32) && p->n_pad == up(s->n, kg) && p->m == cube_rows(p),
	       "padding");
	expect(p->bpe == bpe && p->out_bpe == (c->out == RB_PLAN_OUT_FP16 ? 2u : 4u), "bpe");
	expect(p->a_bytes == (uint64_t)p->k_pad * p->m * bpe, "A bytes");
	expect(p->b_bytes == (uint64_t)p->n_pad * p->k_pad * bpe, "B bytes");
	expect(p->c_cube_bytes == (uint64_t)p->n_pad * p->m * p->out_bpe &&
		   p->c_bytes == p->c_cube_bytes * p->n_kslices,
	       "C bytes");
	expect(p->a_bytes + p->b_bytes + p->c_bytes <= GiB4, "4 GiB");
	expect(p->a_bytes == rb_layout_a_bytes(s->dtype, p->m, p->k_pad) &&
		   p->b_bytes == rb_layout_b_bytes(s->dtype, p->k_pad, p->n_pad) &&
		   p->c_cube_bytes == rb_layout_c_bytes(p->out_bpe, p->m, p->n_pad),
	       "sizes of numeric/layout.h");
	expect(c->axis != RB_PLAN_AXIS_AUTO && c->out != RB_PLAN_OUT_AUTO && c->align &&
		   c->data_banks && c->weight_banks && c->k_slice == p->k_slice &&
		   c->data_banks + c->weight_banks <= 12,
	       "resolved config");
	expect(p->n_kslices == (p->k_pad + p->k_slice - 1) / p->k_slice, "slice count");
	expect(c->k_slice <= 16384 && c->k_slice * bpe <= BANK, "k-slice limits");
	if (!p->requested.k_slice)
		expect(p->k_slice <= 8192, "auto K-slice %u", p->k_slice);
}

/* Core ranges: contiguous, cover the axis, on aligned cut points, tasks inside. */
static void check_cores(const struct rb_plan *p)
{
	const struct rb_plan_config *c = &p->config;
	uint32_t total = c->axis == RB_PLAN_AXIS_M ? p->m : p->n_pad, at = 0;
	unsigned prev = 0;

	expect(p->n_cores == (unsigned)__builtin_popcount(c->core_mask), "core count");
	for (unsigned i = 0; i < p->n_cores; i++) {
		const struct rb_plan_core *r = &p->cores[i];

		expect(c->core_mask & (1u << r->core) && (i == 0 || r->core > prev), "cores");
		prev = r->core;
		expect(r->begin == at && r->end >= r->begin, "range %u", i);
		expect(r->begin % c->align == 0 || r->begin == total, "aligned cut %u", r->begin);
		at = r->end;
		for (size_t t = 0; t < r->n_tasks; t++) {
			const struct rb_plan_task *k = &r->tasks[t];
			uint32_t lo = c->axis == RB_PLAN_AXIS_M ? k->m0 : k->n0;
			uint32_t len = c->axis == RB_PLAN_AXIS_M ? k->npu.m : k->npu.n;

			expect(lo >= r->begin && lo + len <= r->end, "task outside its core");
		}
	}
	expect(at == total, "ranges end at %u of %u", at, total);
}

static void check_totals(const struct rb_plan *p)
{
	uint64_t f = 0, w = 0, o = 0, worst = 0;
	size_t n = 0, sub = 0;
	bool streamed = false;

	for (unsigned i = 0; i < p->n_cores; i++) {
		const struct rb_plan_core *r = &p->cores[i];
		uint64_t cf = 0, cw = 0, co = 0;

		for (size_t t = 0; t < r->n_tasks; t++) {
			cf += r->tasks[t].feature_bytes;
			cw += r->tasks[t].weight_bytes;
			co += r->tasks[t].output_bytes;
			streamed |= r->tasks[t].streamed;
		}
		expect(cf == r->feature_bytes && cw == r->weight_bytes && co == r->output_bytes,
		       "core %u bytes", r->core);
		expect(r->n_submits == (p->config.chain ? (r->n_tasks + 4094) / 4095 : r->n_tasks),
		       "submits");
		f += cf, w += cw, o += co, n += r->n_tasks, sub += r->n_submits;
		worst = cf + cw + co > worst ? cf + cw + co : worst;
	}
	expect(f == p->feature_bytes && w == p->weight_bytes && o == p->output_bytes, "totals");
	expect(n == p->n_tasks && sub == p->n_submits && worst == p->max_core_bytes, "counts");
	expect(streamed == p->streamed, "plan streamed flag");
	/* every element of every K-slice's C is written exactly once */
	expect(o == (uint64_t)p->m * p->n_pad * p->out_bpe * p->n_kslices, "output bytes");
}

/* §c WEIGHT_REUSE: on exactly the chained tasks, not first in their submit, whose
 * weights (address, kernels, channels) are the resident ones of the task before. */
static void check_weight_reuse(const struct rb_plan *p)
{
	bool any = false;

	for (unsigned c = 0; c < p->n_cores; c++)
		for (size_t i = 0; i < p->cores[c].n_tasks; i++) {
			const struct rb_plan_task *t = &p->cores[c].tasks[i];
			const struct rb_plan_task *prev = i ? t - 1 : t;
			bool want = p->config.weight_reuse && p->config.chain && i % 4095 != 0 &&
				    prev->npu.b_addr == t->npu.b_addr && prev->npu.n == t->npu.n &&
				    prev->npu.k == t->npu.k && !prev->streamed && !t->streamed;

			expect(t->npu.weight_reuse == want, "core %u task %zu: weight_reuse %d", c,
			       i, t->npu.weight_reuse);
			any |= want;
		}
	expect(p->weight_reuse == any && rb_plan_unproven(p) == (any || p->streamed),
	       "plan weight_reuse flag");
}

static void check_plan(const struct rb_plan *p)
{
	check_sizes(p);
	check_weight_reuse(p);
	check_cores(p);
	check_totals(p);
	for (unsigned c = 0; c < p->n_cores; c++)
		for (size_t i = 0; i < p->cores[c].n_tasks; i++)
			check_task(p, &p->cores[c].tasks[i]);
	check_cover_k(p);
	check_cover_c(p);
}

/* The regcmd encoder (which checks every field width) takes the tasks with NPU
 * addresses: the buffers packed from 0. Plans with many tasks: the first and last
 * `ends` of each core. */
static void encode_tasks(const struct rb_plan *p, size_t ends)
{
	struct rb_plan_bases b = {0, (uint32_t)p->a_bytes, (uint32_t)(p->a_bytes + p->b_bytes)};
	struct rb_regcmd rc;
	struct rb_npu_task t;

	if (p->a_bytes + p->b_bytes + p->c_bytes > GiB4 - 1) /* one base would wrap */
		return;
	rb_regcmd_init(&rc);
	for (unsigned c = 0; c < p->n_cores; c++) {
		const struct rb_plan_core *r = &p->cores[c];

		for (size_t i = 0; i < r->n_tasks; i++) {
			if (i == ends && r->n_tasks > 2 * ends)
				i = r->n_tasks - ends;
			expect(rb_plan_task_resolve(p, &r->tasks[i], &b, &t) == 0, "%s",
			       rb_last_error());
			rc.count = 0;
			expect(rb_regcmd_emit_task(&rc, &t) == 0, "core %u task %zu: %s", r->core,
			       i, rb_last_error());
		}
	}
	rb_regcmd_release(&rc);
}

static int plan_str(struct rb_plan *p, int64_t m, int64_t k, int64_t n, enum rb_dtype dt,
		    const char *cfg_text)
{
	struct rb_shape s = {.m = m, .k = k, .n = n, .dtype = dt};
	struct rb_plan_config cfg;

	rb_plan_config_init(&cfg);
	assert_int_equal(rb_plan_config_parse(&cfg, cfg_text), 0);
	return rb_plan_init(p, &s, &cfg);
}

/* ---- shapes of configs/ ---------------------------------------------------------- */

/* The shapes of the three files in configs/, should they move: M × K × N. */
static const int64_t known_shapes[][3] = {
    {1, 2048, 8192},   {1, 8192, 2048},     {1, 2048, 128256}, {128, 2048, 512}, {128, 2048, 2048},
    {128, 2048, 8192}, {128, 2048, 128256}, {128, 8192, 2048}, {512, 2048, 512}, {512, 2048, 2048},
    {512, 2048, 8192}, {512, 2048, 128256}, {512, 8192, 2048}, {1, 1536, 256},   {1, 1536, 1536},
    {1, 1536, 8960},   {1, 1536, 151936},   {1, 8960, 1536},
};

static void plan_default_all_masks(const struct rb_shape *s)
{
	for (unsigned mask = 1; mask <= 7; mask++) {
		struct rb_plan_config cfg;
		struct rb_plan p;
		int ret;

		rb_plan_config_default(&cfg, s, mask);
		ret = rb_plan_init(&p, s, &cfg);
		expect(ret == 0, "%lldx%lldx%lld %s mask 0x%x: %s", (long long)s->m,
		       (long long)s->k, (long long)s->n, rb_dtype_name(s->dtype), mask,
		       rb_last_error());
		check_plan(&p);
		encode_tasks(&p, SIZE_MAX);
		expect(p.n_tasks > 0 && !p.streamed, "tasks");
		rb_plan_release(&p);
	}
}

static void test_known_shapes(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(known_shapes); i++) {
		for (int dt = RB_DTYPE_FP16; dt <= RB_DTYPE_INT8; dt++) {
			struct rb_shape s = {known_shapes[i][0], known_shapes[i][1],
					     known_shapes[i][2], (enum rb_dtype)dt};

			plan_default_all_masks(&s);
		}
	}
}

static void test_config_files(void **state)
{
	static const char *const files[] = {
	    "configs/mat_kernel_size.json",
	    "configs/llama-3.2-1b-prefill.json",
	    "configs/qwen2.5-1.5b.json",
	};
	size_t planned = 0;

	(void)state;
	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		struct rb_shape_list l;

		rb_shape_list_init(&l);
		expect(rb_shape_list_load_file(&l, files[f]) == 0, "%s", rb_last_error());
		for (size_t i = 0; i < l.count; i++, planned++)
			plan_default_all_masks(&l.entries[i].shape);
		rb_shape_list_release(&l);
	}
	assert_int_equal(planned, 16); /* 3 + 10 + 3 distinct shapes */
}

/* rb_plan_config_default and an all-auto config give the same plan. */
static void test_default_equals_auto(void **state)
{
	struct rb_shape s = {.m = 512, .k = 2048, .n = 8192, .dtype = RB_DTYPE_FP16};
	struct rb_plan_config d, a;
	struct rb_plan p, q;

	(void)state;
	rb_plan_config_default(&d, &s, 0x7);
	rb_plan_config_init(&a);
	assert_int_equal(d.axis, RB_PLAN_AXIS_N);
	assert_int_equal(d.align, 16);
	assert_int_equal(d.out, RB_PLAN_OUT_FP32);
	assert_int_equal(rb_plan_init(&p, &s, &d), 0);
	assert_int_equal(rb_plan_init(&q, &s, &a), 0);
	assert_int_equal(p.n_tasks, q.n_tasks);
	for (unsigned c = 0; c < p.n_cores; c++)
		assert_memory_equal(p.cores[c].tasks, q.cores[c].tasks,
				    p.cores[c].n_tasks * sizeof(*p.cores[c].tasks));
	rb_plan_release(&p);
	rb_plan_release(&q);
	s.m = 3000, s.n = 100;
	rb_plan_config_default(&d, &s, 0x7);
	assert_int_equal(d.axis, RB_PLAN_AXIS_M); /* more rows than kernels */
	s.dtype = RB_DTYPE_INT8;
	rb_plan_config_default(&d, &s, 0x5);
	assert_int_equal(d.align, 32);
	assert_int_equal(d.out, RB_PLAN_OUT_INT32);
	assert_int_equal(d.core_mask, 0x5);
}

/* ---- hand-computed plans -------------------------------------------------------- */

/* 100×100×100 fp16 on one core, K-slices of 64: K_pad 128, N_pad 112, two slices. */
static void test_offsets_kslices(void **state)
{
	struct rb_plan p;
	const struct rb_plan_task *t;

	(void)state;
	assert_int_equal(plan_str(&p, 100, 100, 100, RB_DTYPE_FP16,
				  "mask=0x1 banks=1:11 "
				  "kslice=64"),
			 0);
	check_plan(&p);
	assert_int_equal(p.k_pad, 128);
	assert_int_equal(p.n_pad, 112);
	assert_int_equal(p.n_kslices, 2);
	assert_int_equal(p.a_bytes, 128 * 100 * 2);
	assert_int_equal(p.b_bytes, 112 * 128 * 2);
	assert_int_equal(p.c_cube_bytes, 112 * 100 * 4);
	assert_int_equal(p.n_tasks, 2);
	t = &p.cores[0].tasks[1];
	assert_int_equal(t->kslice, 1);
	assert_int_equal(t->npu.a_addr, 64 / 8 * 100 * 16); /* channel group 8, M = 100 */
	assert_int_equal(t->npu.b_addr, 64 * 112 * 2);      /* slice 1 after 112×64 fp16 */
	assert_int_equal(t->npu.c_addr, 112 * 100 * 4);     /* the second C cube */
	assert_int_equal(t->npu.m, 100);
	assert_int_equal(t->npu.k, 64);
	assert_int_equal(t->npu.n, 112);
	rb_plan_release(&p);
}

/* M split 2:1:1 on 64-row cut points, N tiles of 32 kernels with 1 weight bank. */
static void test_weighted_m_split(void **state)
{
	struct rb_plan p;
	const struct rb_plan_task *t;

	(void)state;
	assert_int_equal(plan_str(&p, 512, 1024, 96, RB_DTYPE_FP16,
				  "split=m:2,1,1 align=64 "
				  "banks=11:1"),
			 0);
	check_plan(&p);
	assert_int_equal(p.cores[0].begin, 0);
	assert_int_equal(p.cores[1].begin, 256);
	assert_int_equal(p.cores[2].begin, 384);
	assert_int_equal(p.cores[2].end, 512);
	/* 1 bank holds 16 kernels of 1024 fp16 channels; 11 banks hold 176 rows → 4-row
	 * multiple, 256 rows in two tiles of 128 */
	assert_int_equal(p.n_cap, 16);
	assert_int_equal(p.m_cap, 176);
	assert_int_equal(p.cores[0].n_tasks, 2 * 6);
	t = &p.cores[1].tasks[1]; /* core 1: rows [256,384) in one tile; second N tile */
	assert_int_equal(t->m0, 256);
	assert_int_equal(t->npu.m, 128);
	assert_int_equal(t->n0, 16);
	assert_int_equal(t->npu.a_addr, 256 * 16);
	assert_int_equal(t->npu.b_addr, 16 * 1024 * 2);
	assert_int_equal(t->npu.c_addr, 16 / 4 * 512 * 16 + 256 * 16);
	rb_plan_release(&p);
}

/* Masks 0x5 and 0x6 plan two cores; int8 N tiles start on 32-kernel groups. */
static void test_sparse_masks(void **state)
{
	struct rb_plan p;

	(void)state;
	assert_int_equal(plan_str(&p, 1, 4096, 8192, RB_DTYPE_FP16, "mask=0x5"), 0);
	check_plan(&p);
	assert_int_equal(p.n_cores, 2);
	assert_int_equal(p.cores[0].core, 0);
	assert_int_equal(p.cores[1].core, 2);
	assert_int_equal(p.cores[1].begin, 4096);
	rb_plan_release(&p);
	assert_int_equal(plan_str(&p, 7, 100, 1000, RB_DTYPE_INT8, "mask=0x6 align=64"), 0);
	check_plan(&p);
	assert_int_equal(p.cores[0].core, 1);
	assert_int_equal(p.n_pad, 1024);
	assert_int_equal(p.cores[1].begin, 512);
	assert_int_equal(p.out, RB_PREC_INT32);
	rb_plan_release(&p);
}

/* K > 8192 is cut into even K-slices; one row and one kernel group still fit. */
static void test_auto_kslice(void **state)
{
	struct rb_plan p;

	(void)state;
	assert_int_equal(plan_str(&p, 3, 20000, 64, RB_DTYPE_FP16, ""), 0);
	check_plan(&p);
	assert_int_equal(p.k_pad, 20000);
	assert_int_equal(p.n_kslices, 3);
	assert_int_equal(p.k_slice, 6688);
	rb_plan_release(&p);
	/* 2 weight banks hold 16 kernels of at most 2048 fp16 channels */
	assert_int_equal(plan_str(&p, 1, 8192, 64, RB_DTYPE_FP16, "banks=10:2"), 0);
	check_plan(&p);
	assert_int_equal(p.k_slice, 2048);
	assert_int_equal(p.n_kslices, 4);
	rb_plan_release(&p);
}

/* MTX's 1×8192×8192 single task: weights stream through the banks, unproven. */
static void test_streamed(void **state)
{
	struct rb_plan p;

	(void)state;
	assert_int_equal(plan_str(&p, 1, 8192, 8192, RB_DTYPE_FP16, "mask=0x1 res=streamed"), 0);
	check_plan(&p);
	assert_int_equal(p.n_tasks, 1);
	assert_true(p.streamed);
	assert_true(p.cores[0].tasks[0].streamed);
	assert_int_equal(p.cores[0].tasks[0].npu.n, 8192);
	rb_plan_release(&p);
	/* streamed mode whose tasks happen to fit is not marked */
	assert_int_equal(plan_str(&p, 1, 64, 64, RB_DTYPE_FP16, "res=streamed"), 0);
	assert_false(p.streamed);
	rb_plan_release(&p);
}

/* §c WEIGHT_REUSE on the M tiles that follow the first of each (K-slice, N tile), not
 * with --no-weight-reuse, not unchained, never on a streamed task. */
static void test_weight_reuse(void **state)
{
	struct rb_plan p;
	const struct rb_plan_task *t;

	(void)state;
	assert_int_equal(plan_str(&p, 512, 2048, 8192, RB_DTYPE_FP16, ""), 0);
	check_plan(&p);
	t = p.cores[0].tasks;
	assert_true(p.weight_reuse && rb_plan_unproven(&p) && !p.streamed);
	assert_false(t[0].npu.weight_reuse);
	assert_true(t[1].npu.weight_reuse && t[1].m0 > t[0].m0 &&
		    t[1].npu.b_addr == t[0].npu.b_addr);
	assert_int_equal(t[1].weight_bytes, 0);
	assert_true(p.weight_bytes < p.b_bytes * 2); /* once per N tile, not per M tile */
	rb_plan_release(&p);
	assert_int_equal(plan_str(&p, 512, 2048, 8192, RB_DTYPE_FP16, "wreuse=0"), 0);
	check_plan(&p);
	assert_false(p.weight_reuse || rb_plan_unproven(&p));
	assert_int_equal(p.weight_bytes, p.b_bytes * (p.m / p.m_cap + (p.m % p.m_cap != 0)));
	rb_plan_release(&p);
	assert_int_equal(plan_str(&p, 512, 2048, 8192, RB_DTYPE_FP16, "chain=0"), 0);
	check_plan(&p);
	assert_false(p.weight_reuse);
	rb_plan_release(&p);
	/* decode: one M tile, nothing to reuse */
	assert_int_equal(plan_str(&p, 1, 2048, 8192, RB_DTYPE_FP16, ""), 0);
	check_plan(&p);
	assert_false(p.weight_reuse);
	rb_plan_release(&p);
	/* streamed weights do not stay in the banks */
	assert_int_equal(plan_str(&p, 8, 8192, 8192, RB_DTYPE_FP16,
				  "mask=0x1 res=streamed kslice=8192 banks=1:11"),
			 0);
	check_plan(&p);
	assert_true(p.streamed);
	assert_false(p.weight_reuse);
	rb_plan_release(&p);
}

static void test_resolve(void **state)
{
	struct rb_plan p;
	struct rb_npu_task t;
	struct rb_plan_bases b = {.a = 0x1000, .b = 0x100000, .c = 0x2000000};
	const struct rb_plan_task *pt;

	(void)state;
	assert_int_equal(plan_str(&p, 100, 100, 100, RB_DTYPE_FP16, "mask=0x1 kslice=64"), 0);
	pt = &p.cores[0].tasks[1];
	assert_int_equal(rb_plan_task_resolve(&p, pt, &b, &t), 0);
	assert_int_equal(t.a_addr, 0x1000 + pt->npu.a_addr);
	assert_int_equal(t.b_addr, 0x100000 + pt->npu.b_addr);
	assert_int_equal(t.c_addr, 0x2000000 + pt->npu.c_addr);
	assert_int_equal(t.m, pt->npu.m);
	b.c = 0x2000008;
	assert_int_equal(rb_plan_task_resolve(&p, pt, &b, &t), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "16-byte aligned"));
	b.c = 0xfffffff0;
	assert_int_equal(rb_plan_task_resolve(&p, pt, &b, &t), -ERANGE);
	assert_non_null(strstr(rb_last_error(), "4 GiB"));
	rb_plan_release(&p);
}

/* ---- the property test ---------------------------------------------------------- */

static int64_t rnd_dim(struct rb_rng *r, int64_t max)
{
	int64_t v;

	switch (rb_rng_range(r, 0, 3)) {
	case 0:
		return rb_rng_range(r, 1, 64);
	case 1: /* around powers of two */
		v = ((int64_t)1 << rb_rng_range(r, 4, 13)) + rb_rng_range(r, -3, 3);
		return v < max ? v : max;
	default:
		return rb_rng_range(r, 1, max);
	}
}

static void rnd_banks(struct rb_rng *r, struct rb_plan_config *c, unsigned *w_max)
{
	unsigned d = (unsigned)rb_rng_range(r, 1, 11);
	unsigned w = (unsigned)rb_rng_range(r, 1, 12 - d);

	switch (rb_rng_range(r, 0, 3)) {
	case 0:
		*w_max = 11;
		break;
	case 1:
		c->data_banks = d;
		*w_max = 12 - d;
		break;
	case 2:
		c->weight_banks = w;
		*w_max = w;
		break;
	default:
		c->data_banks = d;
		c->weight_banks = w;
		*w_max = w;
	}
}

/* A random config that must plan (only the 4 GiB and task-count limits may refuse). */
static void rnd_config(struct rb_rng *r, const struct rb_shape *s, struct rb_plan_config *c)
{
	unsigned cores, kg = kg_of(s->dtype), bpe = (unsigned)rb_dtype_in_size(s->dtype), w_max;
	static const unsigned aligns[] = {0, 16, 32, 64};

	rb_plan_config_init(c);
	c->core_mask = (unsigned)rb_rng_range(r, 1, 7);
	cores = (unsigned)__builtin_popcount(c->core_mask);
	c->axis = (enum rb_plan_axis)rb_rng_range(r, 0, 2);
	if (rb_rng_range(r, 0, 1)) {
		c->n_weights = cores;
		for (unsigned i = 0; i < cores; i++)
			c->weights[i] = (unsigned)rb_rng_range(r, 1, 5);
	}
	do
		c->align = aligns[rb_rng_range(r, 0, 3)];
	while (c->align % kg && c->axis != RB_PLAN_AXIS_M);
	rnd_banks(r, c, &w_max);
	c->residency = (enum rb_plan_residency)rb_rng_range(r, 0, 1);
	if (rb_rng_range(r, 0, 2) == 0) { /* explicit K-slice that fits (§c) */
		unsigned max = 16384;

		if (c->residency == RB_PLAN_RESIDENT && w_max * BANK / (kg * bpe) < max)
			max = w_max * BANK / (kg * bpe) / 32 * 32;
		c->k_slice = 32 * (unsigned)rb_rng_range(r, max >= 1024 ? 8 : 1, max / 32);
	}
	c->chain = rb_rng_range(r, 0, 1);
	c->mainline = rb_rng_range(r, 0, 1);
	if (s->dtype == RB_DTYPE_FP16)
		c->out = (enum rb_plan_out)rb_rng_range(r, 0, 2);
	else
		c->out = rb_rng_range(r, 0, 1) ? RB_PLAN_OUT_INT32 : RB_PLAN_OUT_AUTO;
}

/* Reads the text `lit` then a decimal number at *pos, and moves *pos past them; false
 * if *pos does not start so. */
static bool scan_number(const char **pos, const char *lit, unsigned long long *v)
{
	size_t len = strlen(lit);
	char *end;

	if (strncmp(*pos, lit, len) != 0)
		return false;
	errno = 0;
	*v = strtoull(*pos + len, &end, 10);
	if (errno || end == *pos + len)
		return false;
	*pos = end;
	return true;
}

/* A refusal is only right for buffers past 4 GiB or too many tasks; check the numbers
 * it names. */
static void check_refusal(const struct rb_shape *s, const char *msg)
{
	unsigned long long total = 0, a = 0, b = 0, c = 0, tasks, slices = 0;
	uint64_t bpe = rb_dtype_in_size(s->dtype), kp = up(s->k, 32),
		 np = up(s->n, kg_of(s->dtype));
	const char *p = msg;

	if (scan_number(&p, "the plan needs ", &tasks)) {
		expect(tasks > RB_PLAN_MAX_TASKS, "%s", msg);
		return;
	}
	expect(scan_number(&p, "buffers need ", &total) && scan_number(&p, " bytes (A ", &a) &&
		   scan_number(&p, " + B ", &b) && scan_number(&p, " + C ", &c) &&
		   scan_number(&p, " in ", &slices),
	       "unexpected refusal of %lldx%lldx%lld: %s", (long long)s->m, (long long)s->k,
	       (long long)s->n, msg);
	/* (a mainline plan pads M to a multiple of 4) */
	expect((a == kp * (uint64_t)s->m * bpe || a == kp * up((uint64_t)s->m, 4) * bpe) &&
		   b == np * kp * bpe && total == a + b + c && total > GiB4 &&
		   slices >= (kp + 16383) / 16384 && c % slices == 0,
	       "%s", msg);
}

/* Planning the planned (resolved) config again gives the same tasks. */
static void check_replay(const struct rb_plan *p)
{
	struct rb_plan q;

	expect(rb_plan_init(&q, &p->shape, &p->config) == 0, "replay: %s", rb_last_error());
	expect(q.n_tasks == p->n_tasks, "replay task count");
	for (unsigned c = 0; c < p->n_cores; c++)
		expect(q.cores[c].n_tasks == p->cores[c].n_tasks &&
			   (p->cores[c].n_tasks == 0 ||
			    memcmp(q.cores[c].tasks, p->cores[c].tasks,
				   p->cores[c].n_tasks * sizeof(*p->cores[c].tasks)) == 0),
		       "replay tasks");
	rb_plan_release(&q);
}

static void test_property(void **state)
{
	struct rb_rng r;
	unsigned planned = 0, refused = 0, streamed = 0;
	size_t total_tasks = 0;
	const unsigned cases = 2000;

	(void)state;
	rb_rng_init(&r, 20240601);
	for (unsigned i = 0; i < cases; i++) {
		struct rb_shape s = {
		    .m = rnd_dim(&r, 3000), .k = rnd_dim(&r, 20000), .n = rnd_dim(&r, 140000)};
		struct rb_plan_config c;
		struct rb_plan p;

		s.dtype = rb_rng_range(&r, 0, 1) ? RB_DTYPE_INT8 : RB_DTYPE_FP16;
		rnd_config(&r, &s, &c);
		if (rb_plan_init(&p, &s, &c) < 0) {
			check_refusal(&s, rb_last_error());
			refused++;
			continue;
		}
		check_plan(&p);
		encode_tasks(&p, 64);
		if (i % 4 == 0)
			check_replay(&p);
		streamed += p.streamed;
		total_tasks += p.n_tasks;
		planned++;
		rb_plan_release(&p);
	}
	print_message("# %u planned (%u streamed, %zu tasks), %u refused past 4 GiB or the "
		      "task limit\n",
		      planned, streamed, total_tasks, refused);
	assert_true(planned > cases * 3 / 4);
	assert_true(streamed > 0);
}

/* ---- config strings ------------------------------------------------------------- */

static void test_config_string(void **state)
{
	struct rb_plan_config c, d;
	char a[256], b[256];
	struct rb_rng r;

	(void)state;
	rb_plan_config_init(&c);
	assert_int_equal(rb_plan_config_parse(&c, "mask=0x7 split=n:1,1,1 align=32 banks=4:8 "
						  "kslice=0 res=resident chain=1"),
			 0);
	rb_plan_config_format(&c, a, sizeof(a));
	assert_string_equal(a, "mask=0x7 split=n:1,1,1 align=32 banks=4:8 kslice=0 res=resident "
			       "chain=1 out=auto mainline=0 wreuse=1");
	assert_int_equal(
	    rb_plan_config_parse(&c, "  split=m  out=fp16\tmainline=1 chain=0 wreuse=0 "), 0);
	assert_int_equal(c.n_weights, 0);
	assert_int_equal(c.axis, RB_PLAN_AXIS_M);
	rb_plan_config_format(&c, a, sizeof(a));
	assert_string_equal(a, "mask=0x7 split=m align=32 banks=4:8 kslice=0 res=resident "
			       "chain=0 out=fp16 mainline=1 wreuse=0");
	/* random configs survive format → parse → format */
	rb_rng_init(&r, 7);
	for (int i = 0; i < 500; i++) {
		struct rb_shape s = {.m = 1, .k = 64, .n = 64};

		s.dtype = (enum rb_dtype)rb_rng_range(&r, 0, 1);
		rnd_config(&r, &s, &c);
		rb_plan_config_format(&c, a, sizeof(a));
		rb_plan_config_init(&d);
		expect(rb_plan_config_parse(&d, a) == 0, "'%s': %s", a, rb_last_error());
		rb_plan_config_format(&d, b, sizeof(b));
		assert_string_equal(a, b);
	}
}

struct bad_string {
	const char *text;
	const char *message;
};

static void test_config_string_errors(void **state)
{
	static const struct bad_string bad[] = {
	    {"mask=0x9", "core mask '0x9' must be 0x1 to 0x7"},
	    {"mask=0", "core mask '0' must be 0x1 to 0x7"},
	    {"mask=x", "core mask 'x' must be 0x1 to 0x7"},
	    {"split=q", "split axis 'q' must be n, m or auto"},
	    {"split=n:1,0,1", "split weight '0' must be an integer from 1 to 1000"},
	    {"split=n:1,1,1,1", "at most 3, one per core"},
	    {"align=48", "alignment '48' must be 16, 32, 64 or 0 (auto)"},
	    {"banks=4", "banks '4' must be DATA:WEIGHT"},
	    {"banks=13:0", "data banks '13' must be an integer from 0 to 12"},
	    {"kslice=100", "k-slice '100' must be 0 (auto) or a multiple of 32"},
	    {"res=maybe", "residency 'maybe' must be resident or streamed"},
	    {"chain=2", "chain '2' must be 1 or 0"},
	    {"out=bf16", "output 'bf16' must be fp32, fp16, int32 or auto"},
	    {"foo=1", "config key 'foo' is unknown"},
	    {"mask", "config item 'mask' must be key=value"},
	};
	struct rb_plan_config c, before;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		rb_plan_config_init(&c);
		before = c;
		expect(rb_plan_config_parse(&c, bad[i].text) == -EINVAL, "'%s' parsed",
		       bad[i].text);
		expect(strstr(rb_last_error(), bad[i].message), "'%s': got '%s'", bad[i].text,
		       rb_last_error());
		/* the mask key of "mask=0x2 foo=1" must not stick */
		assert_memory_equal(&c, &before, sizeof(c));
	}
	assert_int_equal(rb_plan_config_parse(&c, "mask=0x2 foo=1"), -EINVAL);
	assert_int_equal(c.core_mask, 0x7);
}

/* ---- named constraints ----------------------------------------------------------- */

struct bad_plan {
	int64_t m, k, n;
	enum rb_dtype dtype;
	const char *config;
	const char *message;
};

static void test_plan_errors(void **state)
{
	static const struct bad_plan bad[] = {
	    {1, 2048, 8192, RB_DTYPE_FP16, "banks=6:8",
	     "data banks 6 + weight banks 8 = 14 exceed the 12 CBUF banks"},
	    {1, 2048, 8192, RB_DTYPE_FP16, "banks=12:0", "data banks 12 leave no weight bank"},
	    {1, 2048, 8192, RB_DTYPE_FP16, "banks=0:12", "weight banks 12 leave no data bank"},
	    {1, 2048, 8192, RB_DTYPE_FP16, "split=n:2,1",
	     "split weights: 2 given for 3 cores (mask 0x7)"},
	    {1, 2048, 8192, RB_DTYPE_FP16, "mask=0x3 split=n:2,1,1",
	     "split weights: 3 given for 2 cores (mask 0x3)"},
	    {1, 2048, 8192, RB_DTYPE_INT8, "align=16",
	     "alignment 16 is not a multiple of the int8 kernel group (32 kernels)"},
	    {1, 16384, 8192, RB_DTYPE_FP16, "kslice=16384 banks=0:4",
	     "weight banks 4 cannot hold one kernel group of 16 kernels x 16384 fp16 channels "
	     "(524288 bytes > 131072 bytes)"},
	    {1, 20000, 64, RB_DTYPE_FP16, "kslice=16384",
	     "weight banks 11 cannot hold one kernel group"},
	    {1, 20000, 64, RB_DTYPE_FP16, "kslice=16416",
	     "k-slice 16416 exceeds 16384 channels (DATA_SIZE1 DATAIN_CHANNEL_REAL"},
	    {1, 64, 64, RB_DTYPE_FP16, "out=int32", "output int32 needs int8 input"},
	    {1, 64, 64, RB_DTYPE_INT8, "out=fp16", "output fp16 needs fp16 input"},
	    {4096, 65536, 65536, RB_DTYPE_FP16, "", "(A 536870912 + B 8589934592 + C "},
	    {4096, 65536, 65536, RB_DTYPE_FP16, "kslice=8192",
	     "buffers need 17716740096 bytes (A 536870912 + B 8589934592 + C 8589934592 in 8 "
	     "K-slice cubes), more than the 4 GiB (4294967296 bytes) NPU address space"},
	    {RB_SHAPE_DIM_MAX, 1, 1, RB_DTYPE_FP16, "",
	     "M 2147483648 rows: the A cube's SURF_STRIDE (M - 4) does not fit its 28-bit"},
	    {1 << 26, 32, 32, RB_DTYPE_INT8, "",
	     "M 67108864 rows: the C cube's SURFACE_ADD (8589934592 bytes) does not fit"},
	    {1, 1, RB_SHAPE_DIM_MAX, RB_DTYPE_FP16, "", "NPU address space"},
	    {0, 1, 1, RB_DTYPE_FP16, "", "every dimension must be 1 to 2147483648"},
	    {16384, 1024, 20000, RB_DTYPE_FP16, "banks=1:1",
	     "the plan needs 1280000 tasks, more than the 1048576 a plan may hold"},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct rb_plan p;
		int ret = plan_str(&p, bad[i].m, bad[i].k, bad[i].n, bad[i].dtype, bad[i].config);

		expect(ret == -EINVAL, "case %zu planned", i);
		expect(strstr(rb_last_error(), bad[i].message), "case %zu: got '%s'", i,
		       rb_last_error());
		expect(p.n_tasks == 0 && p.cores[0].tasks == NULL, "failed plan holds nothing");
	}
}

/* Configs built in code (not parsed) are checked too. */
static void test_struct_errors(void **state)
{
	struct rb_shape s = {.m = 1, .k = 64, .n = 64, .dtype = RB_DTYPE_FP16};
	struct rb_plan_config c;
	struct rb_plan p;

	(void)state;
	rb_plan_config_init(&c);
	c.core_mask = 0;
	assert_int_equal(rb_plan_init(&p, &s, &c), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "core mask 0x0 must be 0x1 to 0x7"));
	c.core_mask = 8;
	assert_int_equal(rb_plan_init(&p, &s, &c), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "core mask 0x8"));
	rb_plan_config_init(&c);
	c.k_slice = 48;
	assert_int_equal(rb_plan_init(&p, &s, &c), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "k-slice 48 must be a multiple of 32"));
	rb_plan_config_init(&c);
	c.align = 8;
	assert_int_equal(rb_plan_init(&p, &s, &c), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "alignment 8 must be 16, 32 or 64"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_known_shapes),
	    cmocka_unit_test(test_config_files),
	    cmocka_unit_test(test_default_equals_auto),
	    cmocka_unit_test(test_offsets_kslices),
	    cmocka_unit_test(test_weighted_m_split),
	    cmocka_unit_test(test_sparse_masks),
	    cmocka_unit_test(test_auto_kslice),
	    cmocka_unit_test(test_streamed),
	    cmocka_unit_test(test_weight_reuse),
	    cmocka_unit_test(test_resolve),
	    cmocka_unit_test(test_property),
	    cmocka_unit_test(test_config_string),
	    cmocka_unit_test(test_config_string_errors),
	    cmocka_unit_test(test_plan_errors),
	    cmocka_unit_test(test_struct_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
