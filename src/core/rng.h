/* Seeded pseudo-random numbers (splitmix64): the same seed gives the same inputs and
 * the same verification sample on every machine. */
#ifndef RB_CORE_RNG_H
#define RB_CORE_RNG_H

#include <stdint.h>

struct rb_rng {
	uint64_t state;
};

void rb_rng_init(struct rb_rng *rng, uint64_t seed);
uint64_t rb_rng_next(struct rb_rng *rng);
/* Uniform integer in [lo, hi]. */
int64_t rb_rng_range(struct rb_rng *rng, int64_t lo, int64_t hi);
/* Uniform double in [0, 1). */
double rb_rng_unit(struct rb_rng *rng);

#endif
