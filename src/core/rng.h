/* Seeded pseudo-random numbers (splitmix64): the same seed gives the same inputs and
 * the same verification sample on every machine. */
#ifndef RB_CORE_RNG_H
#define RB_CORE_RNG_H

#include <stdint.h>

struct rb_rng {
	uint64_t state;
};

/* splitmix64 steps its state by this odd constant (2^64 / golden ratio). */
#define RB_RNG_GAMMA UINT64_C(0x9e3779b97f4a7c15)

/* The splitmix64 output function: rb_rng_next() returns rb_rng_mix(state += GAMMA).
 * Exposed so hot loops (input fills) can generate the same stream without a call per
 * element. */
static inline uint64_t rb_rng_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void rb_rng_init(struct rb_rng *rng, uint64_t seed);
uint64_t rb_rng_next(struct rb_rng *rng);
/* Uniform integer in [lo, hi] (lo <= hi), without modulo bias. */
int64_t rb_rng_range(struct rb_rng *rng, int64_t lo, int64_t hi);
/* Uniform double in [0, 1), a multiple of 2^-53. */
double rb_rng_unit(struct rb_rng *rng);

#endif
