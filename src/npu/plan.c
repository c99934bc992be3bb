/* The planner (plan.h): cuts a matmul into per-core lists of NPU tasks. Configs, their
 * text form and checks are in plan_config.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "host/limits.h"
#include "npu/plan_internal.h"

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
	c->axis = c->axis == RB_PLAN_AXIS_AUTO ? rb_plan_auto_axis(s) : c->axis;
	c->align = c->align ? c->align : kernel_group(s->dtype);
	c->out = c->out == RB_PLAN_OUT_AUTO ? rb_plan_auto_out(s->dtype) : c->out;
	p->out = npu_out(c->out);
	p->bpe = (uint32_t)rb_dtype_in_size(s->dtype);
	p->out_bpe = c->out == RB_PLAN_OUT_FP16 ? 2 : 4;
	p->kernel_group = kernel_group(s->dtype);
	p->c2_in = 16 / p->bpe;
	p->c2_out = 16 / p->out_bpe;
	p->m = (uint32_t)s->m;
	/* The mainline variant computes rows in fours (hw/task.h): rocket-userspace, the
	 * mainline matmul validated on silicon, takes M % 4 == 0 only, so M is padded to
	 * it (rows past M are zero in A and ignored in C) and every tile is then a
	 * multiple of 4 rows. The vendor variant keeps MTX's M = 1 cube and its
	 * SURF_STRIDE of -3, which runs on the vendor kernel. */
	if (c->mainline)
		p->m = (uint32_t)round_up(p->m, RB_NPU_MAINLINE_MIN_ROWS);
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
	n = DIV_UP(p->k_pad, cap);
	g->k_slice = (uint32_t)round_up(DIV_UP(p->k_pad, n), K_ALIGN);
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
	uint64_t count = DIV_UP(extent, cap);
	uint64_t t;

	if (count == 0) {
		*size = 0;
		return 0;
	}
	t = DIV_UP(extent, count);
	if (cap >= unit)
		t = min_u64(round_up(t, unit), cap);
	*size = (uint32_t)t;
	return (uint32_t)DIV_UP(extent, t);
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
	g->n_slices = (uint32_t)DIV_UP(p->k_pad, g->k_slice);
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
		nm = (double)DIV_UP(rows, g->m_cap);
		nn = (double)DIV_UP(cols, g->n_cap);
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
	size_t listed = p->head && n > p->head ? p->head : n;

	core_extent(p, i, &rows, &cols);
	c->tasks = listed ? calloc(listed, sizeof(*c->tasks)) : NULL;
	if (listed && !c->tasks)
		return rb_set_error(-ENOMEM, "out of memory for %zu tasks", listed);
	for (uint32_t s = 0; s < p->n_kslices && c->n_listed < listed; s++) {
		for (uint32_t j = 0; j < nn && c->n_listed < listed; j++) {
			for (uint32_t k = 0; k < nm && c->n_listed < listed; k++) {
				struct tile_pos t = {
				    .m0 = m_base + k * mt,
				    .m = (uint32_t)min_u64(mt, rows - k * mt),
				    .n0 = n_base + j * nt,
				    .n = (uint32_t)min_u64(nt, cols - j * nt),
				};

				make_task(p, &t, s, &c->tasks[c->n_listed++]);
			}
		}
	}
	c->n_tasks = n;
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
	for (size_t t = 1; t < c->n_listed; t++) {
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

	for (size_t t = 0; t < c->n_listed; t++) {
		c->feature_bytes += c->tasks[t].feature_bytes;
		c->weight_bytes += c->tasks[t].weight_bytes;
		c->output_bytes += c->tasks[t].output_bytes;
		p->streamed |= c->tasks[t].streamed;
		p->weight_reuse |= c->tasks[t].npu.weight_reuse;
	}
	c->n_submits = p->config.chain ? DIV_UP(c->n_tasks, RB_PLAN_TASKS_PER_SUBMIT) : c->n_tasks;
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
	return rb_plan_init_head(plan, shape, cfg, 0);
}

int rb_plan_init_head(struct rb_plan *plan, const struct rb_shape *shape,
		      const struct rb_plan_config *cfg, size_t head)
{
	struct geom g = {0};
	int ret;

	memset(plan, 0, sizeof(*plan));
	ret = rb_plan_config_check(cfg, shape);
	if (ret)
		return ret;
	plan->head = head;
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
	for (unsigned i = 0; i < RB_PLAN_MAX_CORES; i++) {
		free(plan->cores[i].tasks);
		free(plan->cores[i].submit_ends); /* rb_plan_fit_timeout's */
	}
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
