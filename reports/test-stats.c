// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Statistics against values computed independently when this test was
 * written: exact p-values by brute-force enumeration of every split of the
 * pooled sample (Python itertools.combinations with Fractions, mid-ranks for
 * ties), summaries with Python's statistics module, the normal approximation
 * with math.erfc, and the bootstrap with a separate Python implementation of
 * splitmix64 + xoshiro256** and the same resampling order. Exact fractions
 * are kept where there is one.
 */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "macro.h"
#include "stats.h"

static bool CLOSE(double a, double b)
{
	return fabs(a - b) <= 1e-12 * fmax(1.0, fabs(b));
}

#define CHECK_CLOSE(a, b) CHECK_MSG(CLOSE(a, b), "%.17g != %.17g", (double)(a), (double)(b))

static void test_summary(void)
{
	struct stats_summary s;
	const double pf[] = { 950015, 901000, 990000, 940000, 960000 };
	const double four[] = { 4, 1, 3, 2 };
	const double one[] = { 5 };
	const double small[] = { 0.1, 0.3, 0.2 };
	const double zeros[] = { 0, 0, 0 };

	CHECK(stats_summarize(pf, ARRAY_SIZE(pf), &s) == 0);
	CHECK(s.n == 5 && s.median == 950015 && s.min == 901000 && s.max == 990000);
	CHECK_CLOSE(s.mean, 948203);
	CHECK_CLOSE(s.stddev, 32345.224454314735);
	CHECK_CLOSE(s.cv, 0.034112130476611796);

	CHECK(stats_summarize(four, ARRAY_SIZE(four), &s) == 0);
	CHECK(s.median == 2.5 && s.min == 1 && s.max == 4);
	CHECK_CLOSE(s.stddev, 1.2909944487358056);
	CHECK_CLOSE(s.cv, 0.5163977794943222);
	CHECK(four[0] == 4); /* input untouched */

	/* n = 1: no spread can be estimated */
	CHECK(stats_summarize(one, 1, &s) == 0);
	CHECK(s.n == 1 && s.median == 5 && s.min == 5 && s.max == 5 && s.mean == 5);
	CHECK(isnan(s.stddev) && isnan(s.cv));

	CHECK(stats_summarize(small, ARRAY_SIZE(small), &s) == 0);
	CHECK_CLOSE(s.median, 0.2);
	CHECK_CLOSE(s.stddev, 0.1);

	/* mean 0: no coefficient of variation */
	CHECK(stats_summarize(zeros, ARRAY_SIZE(zeros), &s) == 0);
	CHECK(s.stddev == 0 && isnan(s.cv));

	CHECK(stats_summarize(pf, 0, &s) == -EINVAL);
	const double bad[] = { 1, NAN };
	CHECK(stats_summarize(bad, 2, &s) == -EINVAL);
}

static void test_quantile(void)
{
	const double s[] = { 1, 2, 3, 4 };

	CHECK_CLOSE(stats_quantile_sorted(s, 4, 0.25), 1.75);
	CHECK_CLOSE(stats_quantile_sorted(s, 4, 0.5), 2.5);
	CHECK(stats_quantile_sorted(s, 4, 0.0) == 1 && stats_quantile_sorted(s, 4, 1.0) == 4);
	CHECK(stats_quantile_sorted(s, 1, 0.3) == 1);
	CHECK(isnan(stats_quantile_sorted(s, 0, 0.5)) && isnan(stats_quantile_sorted(s, 4, 1.5)));
	CHECK(isnan(stats_median_sorted(s, 0)));
}

struct mwu_case {
	const char *name;
	double x[12], y[12];
	size_t nx, ny;
	double u1;
	double p; /* from enumeration: the fraction is in the comment */
	bool ties;
};

static const struct mwu_case mwu_cases[] = {
	/* n = 2 vs 2, complete separation: the best these sizes can do */
	{ "2v2", { 1, 2 }, { 3, 4 }, 2, 2, 0, 2.0 / 6, false },
	/* seed 000's p99 spread, complete separation: 2/252 */
	{ "5v5", { 19789, 16885, 20200, 19000, 19900 }, { 5207, 4076, 5638, 5100, 5300 }, 5, 5, 25,
	  2.0 / 252, false },
	/* ties within and across arms: 56/252 */
	{ "ties", { 1, 2, 2, 3, 5 }, { 2, 3, 4, 4, 6 }, 5, 5, 6.5, 56.0 / 252, true },
	/* identical arms: every split is as extreme: 20/20 */
	{ "identical", { 7, 7, 7 }, { 7, 7, 7 }, 3, 3, 4.5, 1.0, true },
	/* n = 1: 2/5 */
	{ "1v4", { 10 }, { 1, 2, 3, 4 }, 1, 4, 4, 2.0 / 5, false },
	/* unequal sizes with ties: 461/1716 */
	{ "6v7", { 3, 3, 5, 8, 9, 9 }, { 1, 3, 4, 4, 9, 2, 7 }, 6, 7, 29, 461.0 / 1716, true },
	/* 10 vs 12, ties, overlapping: 3342/646646 */
	{ "10v12",
	  { 12.5, 13.1, 11.9, 14.0, 12.5, 13.3, 12.8, 12.5, 13.9, 12.0 },
	  { 13.0, 14.2, 13.8, 12.5, 14.9, 13.6, 15.1, 14.0, 13.3, 14.4, 13.9, 15.5 }, 10, 12, 19,
	  3342.0 / 646646, true },
	/* the larger sample second: same p, u1 of x */
	{ "4v1", { 1, 2, 3, 4 }, { 10 }, 4, 1, 0, 2.0 / 5, false },
};

static void test_mann_whitney(void)
{
	struct stats_mwu r;

	for (size_t i = 0; i < ARRAY_SIZE(mwu_cases); i++) {
		const struct mwu_case *c = &mwu_cases[i];

		CHECK(stats_mann_whitney(c->x, c->nx, c->y, c->ny, &r) == 0);
		CHECK_MSG(r.method == STATS_MWU_EXACT, "%s", c->name);
		CHECK_MSG(CLOSE(r.u1, c->u1), "%s: u1 %g != %g", c->name, r.u1, c->u1);
		CHECK_MSG(CLOSE(r.u2, (double)(c->nx * c->ny) - c->u1), "%s: u2 %g", c->name, r.u2);
		CHECK_MSG(CLOSE(r.p, c->p), "%s: p %.17g != %.17g", c->name, r.p, c->p);
		CHECK_MSG(r.ties == c->ties, "%s: ties", c->name);
		/* the test is symmetric in its arguments */
		struct stats_mwu s;
		CHECK(stats_mann_whitney(c->y, c->ny, c->x, c->nx, &s) == 0);
		CHECK_MSG(CLOSE(s.p, r.p) && CLOSE(s.u1, r.u2), "%s: swapped", c->name);
	}

	CHECK(stats_mann_whitney(mwu_cases[0].x, 0, mwu_cases[0].y, 2, &r) == -EINVAL);
	const double bad[] = { INFINITY };
	CHECK(stats_mann_whitney(bad, 1, mwu_cases[0].y, 2, &r) == -EINVAL);
}

static void test_p_floor(void)
{
	CHECK_CLOSE(stats_mwu_p_floor(2, 2), 1.0 / 3);
	CHECK_CLOSE(stats_mwu_p_floor(3, 3), 0.1);
	CHECK_CLOSE(stats_mwu_p_floor(4, 4), 2.0 / 70);
	CHECK_CLOSE(stats_mwu_p_floor(5, 5), 2.0 / 252);
	CHECK_CLOSE(stats_mwu_p_floor(3, 4), 2.0 / 35);
	CHECK(stats_mwu_p_floor(1, 1) == 1.0 && stats_mwu_p_floor(1, 4) == 0.4);
	CHECK(stats_mwu_p_floor(0, 4) == 1.0);
}

static void test_normal_approximation(void)
{
	double x[70], y[60];
	struct stats_mwu r;

	/* 130 values in pairs of ties: over STATS_MWU_EXACT_MAX */
	for (size_t i = 0; i < ARRAY_SIZE(x); i++)
		x[i] = (double)(i / 2);
	for (size_t i = 0; i < ARRAY_SIZE(y); i++)
		y[i] = (double)(i / 2 + 5);
	CHECK(stats_mann_whitney(x, ARRAY_SIZE(x), y, ARRAY_SIZE(y), &r) == 0);
	CHECK(r.method == STATS_MWU_NORMAL && r.ties);
	CHECK_CLOSE(r.u1, 1800);
	CHECK_MSG(fabs(r.p - 0.1617256643477627) < 1e-12, "p %.17g", r.p);

	/* all tied: no evidence at all */
	for (size_t i = 0; i < ARRAY_SIZE(x); i++)
		x[i] = 1;
	for (size_t i = 0; i < ARRAY_SIZE(y); i++)
		y[i] = 1;
	CHECK(stats_mann_whitney(x, ARRAY_SIZE(x), y, ARRAY_SIZE(y), &r) == 0);
	CHECK(r.p == 1.0);
}

static void test_exact_limit(void)
{
	/* 50 vs 50 at the exact limit: separated arms give p = 2 / C(100, 50) */
	double x[50], y[50];
	struct stats_mwu r;

	for (size_t i = 0; i < 50; i++) {
		x[i] = (double)i;
		y[i] = 100.0 + (double)i;
	}
	CHECK(stats_mann_whitney(x, 50, y, 50, &r) == 0);
	CHECK(r.method == STATS_MWU_EXACT);
	CHECK_MSG(fabs(r.p / 1.9823306042836678e-29 /* 2 / C(100, 50) */ - 1) < 1e-9, "p %.17g", r.p);
	CHECK_MSG(fabs(r.p_floor / r.p - 1) < 1e-9, "p_floor %.17g", r.p_floor);
}

static void test_rng(void)
{
	struct stats_rng rng;

	stats_rng_seed(&rng, STATS_BOOTSTRAP_SEED);
	CHECK(stats_rng_next(&rng) == 0xed27cb83c1a55a02ULL);
	CHECK(stats_rng_next(&rng) == 0xf7f0b7a1f0dfce59ULL);
	CHECK(stats_rng_next(&rng) == 0x0d08d95969054e0fULL);
	for (int i = 0; i < 1000; i++)
		CHECK(stats_rng_below(&rng, 7) < 7);
}

static void test_bootstrap(void)
{
	const double p99_base[] = { 19789, 16885, 20200, 19000, 19900 };
	const double p99_patch[] = { 5207, 4076, 5638, 5100, 5300 };
	const double p50_base[] = { 340, 270, 380, 300, 350 };
	const double p50_patch[] = { 260, 250, 260, 255, 262 };
	const double zeros[] = { 0, 0, 0, 1 }, some[] = { 1, 2, 3 };
	const double same[] = { 3, 3, 3 };
	struct stats_bootstrap b, b2;

	CHECK(stats_bootstrap_median_ratio(p99_base, 5, p99_patch, 5, STATS_BOOTSTRAP_ITERATIONS,
					   STATS_BOOTSTRAP_SEED, 0.95, &b) == 0);
	CHECK(b.used == 10000 && b.iterations == 10000 && b.seed == STATS_BOOTSTRAP_SEED);
	CHECK_CLOSE(b.low, 0.20597301531153672);
	CHECK_CLOSE(b.high, 0.30838021912940478);
	/* fixed seed: the same interval every time */
	CHECK(stats_bootstrap_median_ratio(p99_base, 5, p99_patch, 5, STATS_BOOTSTRAP_ITERATIONS,
					   STATS_BOOTSTRAP_SEED, 0.95, &b2) == 0);
	CHECK(b2.low == b.low && b2.high == b.high);

	CHECK(stats_bootstrap_median_ratio(p50_base, 5, p50_patch, 5, 1000, 42, 0.9, &b) == 0);
	CHECK_CLOSE(b.low, 0.71304511278195459);
	CHECK_CLOSE(b.high, 0.94444444444444442);

	/* even sizes on both sides: medians of the two middle values */
	const double even_x[] = { 12.5, 13.1, 11.9, 14.0, 12.5, 13.3 }, even_y[] = { 13.0, 14.2, 13.8, 12.5 };
	CHECK(stats_bootstrap_median_ratio(even_x, 6, even_y, 4, 2000, 99, 0.9, &b) == 0);
	CHECK(b.used == 2000);
	CHECK_CLOSE(b.low, 0.96590909090909094);
	CHECK_CLOSE(b.high, 1.1200000000000001);

	/* a baseline median of 0 in most resamples: 257 of 1000 usable, no interval */
	CHECK(stats_bootstrap_median_ratio(zeros, 4, some, 3, 1000, 7, 0.95, &b) == 0);
	CHECK(b.used == 257 && isnan(b.low) && isnan(b.high));

	/* identical constant arms: exactly 1 */
	CHECK(stats_bootstrap_median_ratio(same, 3, same, 3, 100, 1, 0.95, &b) == 0);
	CHECK(b.low == 1.0 && b.high == 1.0);

	CHECK(stats_bootstrap_median_ratio(same, 3, same, 3, 0, 1, 0.95, &b) == -EINVAL);
	CHECK(stats_bootstrap_median_ratio(same, 3, same, 3, 10, 1, 1.0, &b) == -EINVAL);
}

int main(void)
{
	test_summary();
	test_quantile();
	test_mann_whitney();
	test_p_floor();
	test_normal_approximation();
	test_exact_limit();
	test_rng();
	test_bootstrap();
	printf("ok\n");
	return 0;
}
