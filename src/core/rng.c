#include "core/rng.h"

#include <assert.h>

void rb_rng_init(struct rb_rng *rng, uint64_t seed)
{
	rng->state = seed;
}

uint64_t rb_rng_next(struct rb_rng *rng)
{
	rng->state += RB_RNG_GAMMA;
	return rb_rng_mix(rng->state);
}

int64_t rb_rng_range(struct rb_rng *rng, int64_t lo, int64_t hi)
{
	uint64_t span, limit, r;

	assert(lo <= hi);
	/* Unsigned arithmetic: hi - lo can exceed INT64_MAX. */
	span = (uint64_t)hi - (uint64_t)lo + 1;
	if (span == 0) /* the whole 64-bit range */
		return (int64_t)rb_rng_next(rng);
	/*
	 * Reject the top 2^64 mod span values so that every residue is equally likely;
	 * (0 - span) % span is 2^64 mod span computed in 64 bits.
	 */
	limit = (0 - span) % span;
	do
		r = rb_rng_next(rng);
	while (r < limit);
	return (int64_t)((uint64_t)lo + r % span);
}

double rb_rng_unit(struct rb_rng *rng)
{
	/* The top 53 bits fill a double's significand exactly. */
	return (double)(rb_rng_next(rng) >> 11) * 0x1.0p-53;
}
