/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The fuzzers' PRNG (vhca_fuzz, vhca_fuzz_net): splitmix64, one stream
 * per process, seeded from the command line, so that a seed replays the
 * same sequence of choices.
 */
#ifndef VHCA_FUZZ_RNG_H
#define VHCA_FUZZ_RNG_H

#include <stdbool.h>
#include <stdint.h>

static uint64_t rng_state;

static inline uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); 0 when n is 0. */
static inline uint32_t below(uint32_t n)
{
	return (uint32_t)((rnd() >> 32) * n >> 32);
}

static inline bool chance(uint32_t percent)
{
	return below(100) < percent;
}

#endif /* VHCA_FUZZ_RNG_H */
