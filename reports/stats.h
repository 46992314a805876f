/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Statistics for comparing two small samples (the repetitions of two arms):
 * summaries, the exact Mann-Whitney U test with ties, and a bootstrap
 * confidence interval of the ratio of medians. Pure C, no I/O, no globals;
 * docs/compare.md explains each choice.
 *
 * Undefined results are NAN (e.g. the standard deviation of one value), never
 * a made-up number. Functions that allocate return -ENOMEM on failure and
 * -EINVAL for arguments they cannot use (empty sample, NAN input).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest n1 + n2 for which stats_mann_whitney() enumerates the exact
 * distribution; above it, the normal approximation with tie correction. */
#define STATS_MWU_EXACT_MAX 100

/* The bootstrap's fixed seed and default iteration count (documented). */
#define STATS_BOOTSTRAP_SEED 0x736e617062656e63ULL /* "snapbenc" */
#define STATS_BOOTSTRAP_ITERATIONS 10000

struct stats_summary {
	size_t n;
	double median; /* mean of the two middle values when n is even */
	double min, max;
	double mean;
	double stddev; /* sample standard deviation (n - 1); NAN when n < 2 */
	double cv;     /* stddev / |mean|; NAN when stddev is NAN or mean is 0 */
};

/* Summarizes v[0..n); v is not modified. n must be >= 1. */
int stats_summarize(const double *v, size_t n, struct stats_summary *out);

/* Median and type-7 quantile (linear interpolation between order
 * statistics, as R's default and numpy's 'linear') of a sorted array. */
double stats_median_sorted(const double *sorted, size_t n);
double stats_quantile_sorted(const double *sorted, size_t n, double q);

/* Sorts ascending in place (qsort with a total order; no NAN expected). */
void stats_sort(double *v, size_t n);

enum stats_mwu_method {
	STATS_MWU_EXACT,  /* permutation distribution of the mid-rank sum */
	STATS_MWU_NORMAL, /* normal approximation, tie and continuity corrected */
};

struct stats_mwu {
	double u1;       /* U of the first sample: pairs (x > y) + 0.5 * pairs (x == y) */
	double u2;       /* n1 * n2 - u1 */
	double p;        /* two-sided p-value */
	double p_floor;  /* the smallest two-sided p any data of these sizes can give
			  * (no ties, complete separation): 2 / C(n1 + n2, n1), at most 1 */
	bool ties;       /* some values occur in both or the same sample more than once */
	enum stats_mwu_method method;
};

/*
 * Two-sided Mann-Whitney U (Wilcoxon rank-sum) test of x against y.
 * Ties get mid-ranks; the exact p-value is then taken from the permutation
 * distribution of the mid-rank sum given the observed ties (every way of
 * splitting the pooled mid-ranks into groups of n1 and n2 equally likely),
 * so it stays exact with ties. p = P(|W - E W| >= |w - E W|).
 */
int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, struct stats_mwu *out);

/* 2 / C(n1 + n2, n1), capped at 1: see struct stats_mwu.p_floor. */
double stats_mwu_p_floor(size_t n1, size_t n2);

/* xoshiro256** seeded through splitmix64: a small, well-known PRNG whose
 * stream is the same on every machine, so bootstrap results are reproducible. */
struct stats_rng {
	uint64_t s[4];
};

void stats_rng_seed(struct stats_rng *rng, uint64_t seed);
uint64_t stats_rng_next(struct stats_rng *rng);
/* Uniform in [0, bound), without modulo bias; bound >= 1. */
uint64_t stats_rng_below(struct stats_rng *rng, uint64_t bound);

struct stats_bootstrap {
	double low, high;    /* percentile interval of median(y*) / median(x*) */
	double confidence;   /* e.g. 0.95 */
	unsigned iterations; /* resamples drawn */
	unsigned used;       /* resamples whose median(x*) was not 0 */
	uint64_t seed;
};

/*
 * Percentile bootstrap interval of median(y) / median(x): each iteration
 * resamples x and y with replacement (x first, then y, from one PRNG stream),
 * takes the ratio of the medians, skips it when median(x*) is 0; low and high
 * are the type-7 quantiles (1 - confidence) / 2 and (1 + confidence) / 2 of
 * the kept ratios. low/high are NAN when fewer than half the iterations
 * could be used.
 */
int stats_bootstrap_median_ratio(const double *x, size_t nx, const double *y, size_t ny,
				 unsigned iterations, uint64_t seed, double confidence,
				 struct stats_bootstrap *out);
