/* The timing model (see timing.h): an event-driven simulation of every core's two
 * stages with DDR bandwidth shared between all streams in flight. Time is in
 * picoseconds and bandwidth in bytes per second, both integers, so the result does
 * not depend on the host's floating point. */
#include "sim/timing.h"

#include <math.h>
#include <string.h>

#include "core/util.h"
#include "sim/sim.h"

#define PS_PER_S  UINT64_C(1000000000000)
#define PS_PER_NS UINT64_C(1000)
#define NEVER     UINT64_MAX

enum stream { FEATURE, WEIGHT, OUTPUT, STREAMS };

/* The profile in the simulation's units. */
struct units {
	uint64_t stream_bps, core_bps, total_bps; /* bytes per second */
	uint64_t clock_hz;
	uint64_t fetch_ps, word_ps, pipeline_ps;
};

/* One core: stage A (fetch, then the feature load) and stage B (weights, MACs and
 * output together, then fill/drain) with what is left of each. */
struct core {
	struct rb_timing_core *in;
	uint64_t start_ps;
	size_t a_done, b_done; /* tasks past each stage */
	bool a_busy, b_busy;
	uint64_t a_fixed_ps, b_mac_ps, b_fixed_ps;
	uint64_t bytes[STREAMS];
	uint64_t rate[STREAMS]; /* bytes per second, while the stream is active */
	uint64_t done_ps;
};

struct sim {
	struct units u;
	struct core *c;
	size_t n;
	uint64_t now_ps;
};

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* What is left of a limit, shared by n streams. */
static uint64_t left(uint64_t cap, uint64_t used, size_t n)
{
	return cap > used ? (cap - used) / n : 0;
}

/* a·b/c rounded down or up, without overflow (a·b may pass 2^64). */
static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t c, bool up)
{
#ifdef __SIZEOF_INT128__
	unsigned __int128 p = (unsigned __int128)a * b + (up ? c - 1 : 0);

	/* The 128-bit division is a library call; most products fit 64 bits. */
	if (!(uint64_t)(p >> 64))
		return (uint64_t)p / c;
	return (uint64_t)(p / c);
#else
	long double q = (long double)a * b / c;

	return (uint64_t)(up ? ceill(q) : floorl(q));
#endif
}

static uint64_t to_ps(double ns)
{
	return (uint64_t)llround(ns * (double)PS_PER_NS);
}

static uint64_t to_bps(double gbps)
{
	return (uint64_t)llround(gbps * 1e9);
}

static void units_init(struct units *u, const struct rb_soc_profile *soc)
{
	u->stream_bps = to_bps(soc->ddr_stream_gbps);
	u->core_bps = to_bps(soc->ddr_core_gbps);
	u->total_bps = to_bps(soc->ddr_total_gbps);
	u->clock_hz = (uint64_t)llround(soc->clock_mhz * 1e6);
	u->fetch_ps = to_ps(soc->task_fetch_ns);
	u->word_ps = to_ps(soc->task_word_ns);
	u->pipeline_ps = to_ps(soc->task_pipeline_ns);
}

uint64_t rb_timing_cycles(const struct rb_soc_profile *soc, bool int8, uint64_t rows,
			  uint64_t channels, uint64_t kernels)
{
	uint64_t atom = (uint64_t)soc->channel_atom;
	uint64_t group = (uint64_t)(int8 ? soc->int8_macs : soc->fp16_macs) / atom;
	uint64_t load = group * (uint64_t)soc->weight_load_cycles;
	uint64_t blocks = DIV_UP(channels, atom) * DIV_UP(kernels, group);
	double eff = int8 ? soc->int8_efficiency : soc->fp16_efficiency;
	uint64_t ideal = blocks * max_u64(rows, load);

	/* a block of weights serves every row; the next block loads meanwhile; the array
	 * reaches `eff` of that rate (exactly the ideal cycles at 1) */
	return eff == 1.0 || !(eff > 0) ? ideal : (uint64_t)ceil((double)ideal / eff);
}

/* ---- stages ---- */

static const struct rb_timing_task *task(const struct core *c, size_t i)
{
	return &c->in->tasks[i];
}

/* Stage A of the next task may start once A of the previous task is done and, as the
 * register groups allow, B of the task two (ping-pong) or one before it is. */
static bool start_a(const struct sim *s, struct core *c)
{
	size_t i = c->a_done;
	const struct rb_timing_task *t;

	if (c->a_busy || i == c->in->n_tasks || s->now_ps < c->start_ps)
		return false;
	t = task(c, i);
	if (c->b_done + (t->overlap ? 1 : 0) < i)
		return false;
	c->a_busy = true;
	c->a_fixed_ps = s->u.fetch_ps + t->fetch_words * s->u.word_ps;
	c->bytes[FEATURE] = t->feature_bytes;
	return true;
}

static bool start_b(const struct sim *s, struct core *c)
{
	const struct rb_timing_task *t;

	if (c->b_busy || c->b_done == c->a_done)
		return false;
	t = task(c, c->b_done);
	c->b_busy = true;
	c->b_mac_ps = muldiv(t->cycles, PS_PER_S, s->u.clock_hz, true);
	c->b_fixed_ps = s->u.pipeline_ps;
	c->bytes[WEIGHT] = t->weight_bytes;
	c->bytes[OUTPUT] = t->output_bytes;
	return true;
}

static bool a_streaming(const struct core *c)
{
	return c->a_busy && c->a_fixed_ps == 0;
}

/* B's concurrent part (weights, MACs, output) is over: fill/drain runs. */
static bool b_draining(const struct core *c)
{
	return c->b_busy && !c->bytes[WEIGHT] && !c->b_mac_ps && !c->bytes[OUTPUT];
}

static bool finish(const struct sim *s, struct core *c)
{
	bool changed = false;

	if (a_streaming(c) && !c->bytes[FEATURE]) {
		c->a_busy = false;
		c->a_done++;
		changed = true;
	}
	if (b_draining(c) && !c->b_fixed_ps) {
		c->b_busy = false;
		c->b_done++;
		if (c->b_done == c->in->n_tasks)
			c->done_ps = s->now_ps;
		changed = true;
	}
	return changed;
}

/* Starts and ends what can at the current time, until nothing changes (empty demands
 * end at once). */
static void settle(struct sim *s)
{
	bool changed = true;

	while (changed) {
		changed = false;
		for (size_t i = 0; i < s->n; i++) {
			struct core *c = &s->c[i];

			changed |= finish(s, c);
			changed |= start_a(s, c);
			changed |= start_b(s, c);
		}
	}
}

/* ---- DDR: max-min fair shares ---- */

static bool active(const struct core *c, int k)
{
	if (k == FEATURE)
		return a_streaming(c) && c->bytes[FEATURE];
	return c->b_busy && c->bytes[k];
}

/* Progressive filling: every unfixed stream rises to the lowest limit that binds
 * (one stream, its core's streams, all streams), the streams under that limit are
 * fixed there, and the rest go on with what is left. */
static void share(struct sim *s)
{
	bool fixed[RB_SIM_MAX_CORES][STREAMS] = {{false}};
	uint64_t used_all = 0, used[RB_SIM_MAX_CORES] = {0};

	for (;;) {
		size_t open_all = 0, open[RB_SIM_MAX_CORES] = {0};
		uint64_t level;
		bool all_bind;

		for (size_t i = 0; i < s->n; i++)
			for (int k = 0; k < STREAMS; k++)
				if (active(&s->c[i], k) && !fixed[i][k]) {
					open[i]++;
					open_all++;
				}
		if (!open_all)
			return;
		level = min_u64(s->u.stream_bps, left(s->u.total_bps, used_all, open_all));
		for (size_t i = 0; i < s->n; i++)
			if (open[i])
				level = min_u64(level, left(s->u.core_bps, used[i], open[i]));
		all_bind =
		    level == s->u.stream_bps || left(s->u.total_bps, used_all, open_all) == level;
		for (size_t i = 0; i < s->n; i++) {
			if (!all_bind &&
			    (!open[i] || left(s->u.core_bps, used[i], open[i]) != level))
				continue;
			for (int k = 0; k < STREAMS; k++)
				if (active(&s->c[i], k) && !fixed[i][k]) {
					fixed[i][k] = true;
					/* a stream never stalls: at least one byte per second */
					s->c[i].rate[k] = max_u64(level, 1);
					used[i] += level;
					used_all += level;
				}
		}
	}
}

/* ---- time ---- */

/* Time to the next event: a demand that ends or a core that starts. */
static uint64_t next_event(const struct sim *s)
{
	uint64_t dt = NEVER;

	for (size_t i = 0; i < s->n; i++) {
		const struct core *c = &s->c[i];

		if (c->start_ps > s->now_ps && c->a_done < c->in->n_tasks)
			dt = min_u64(dt, c->start_ps - s->now_ps);
		if (c->a_busy && c->a_fixed_ps)
			dt = min_u64(dt, c->a_fixed_ps);
		if (c->b_busy && c->b_mac_ps)
			dt = min_u64(dt, c->b_mac_ps);
		if (b_draining(c) && c->b_fixed_ps)
			dt = min_u64(dt, c->b_fixed_ps);
		for (int k = 0; k < STREAMS; k++)
			if (active(c, k))
				dt = min_u64(dt, muldiv(c->bytes[k], PS_PER_S, c->rate[k], true));
	}
	return dt;
}

static void advance_core(struct core *c, uint64_t dt)
{
	bool drain = b_draining(c);

	for (int k = 0; k < STREAMS; k++)
		if (active(c, k)) {
			uint64_t moved = muldiv(c->rate[k], dt, PS_PER_S, false);

			/* the stream that defined dt ends exactly */
			if (muldiv(c->bytes[k], PS_PER_S, c->rate[k], true) <= dt)
				moved = c->bytes[k];
			c->bytes[k] -= min_u64(moved, c->bytes[k]);
		}
	if (c->a_busy && c->a_fixed_ps)
		c->a_fixed_ps -= min_u64(dt, c->a_fixed_ps);
	if (c->b_busy && c->b_mac_ps)
		c->b_mac_ps -= min_u64(dt, c->b_mac_ps);
	if (drain)
		c->b_fixed_ps -= min_u64(dt, c->b_fixed_ps);
}

static bool all_done(const struct sim *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i].b_done < s->c[i].in->n_tasks)
			return false;
	return true;
}

static void simulate(struct sim *s)
{
	for (;;) {
		uint64_t dt;

		settle(s);
		if (all_done(s))
			return;
		share(s);
		dt = next_event(s);
		if (dt == NEVER)
			return; /* cannot happen: a busy stage always has a demand left */
		for (size_t i = 0; i < s->n; i++)
			advance_core(&s->c[i], dt);
		s->now_ps += dt;
	}
}

void rb_timing_run(const struct rb_soc_profile *soc, struct rb_timing_core *cores, size_t n)
{
	struct core c[RB_SIM_MAX_CORES];
	struct sim s = {.c = c, .n = 0, .now_ps = NEVER};

	units_init(&s.u, soc);
	memset(c, 0, sizeof(c));
	for (size_t i = 0; i < n && s.n < RB_SIM_MAX_CORES; i++) {
		cores[i].elapsed_ns = 0;
		if (!cores[i].n_tasks)
			continue;
		c[s.n].in = &cores[i];
		c[s.n].start_ps = cores[i].start_ns * PS_PER_NS;
		s.now_ps = min_u64(s.now_ps, c[s.n].start_ps);
		s.n++;
	}
	if (!s.n)
		return;
	simulate(&s);
	for (size_t i = 0; i < s.n; i++) {
		c[i].in->elapsed_ns = DIV_UP(c[i].done_ps - c[i].start_ps, PS_PER_NS);
	}
}
