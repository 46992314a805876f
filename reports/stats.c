// SPDX-License-Identifier: GPL-2.0-or-later
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void stats_sort(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_double);
}

static bool all_finite(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

double stats_median_sorted(const double *sorted, size_t n)
{
	if (n == 0)
		return NAN;
	if (n % 2)
		return sorted[n / 2];
	return (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

double stats_quantile_sorted(const double *sorted, size_t n, double q)
{
	if (n == 0 || !(q >= 0.0 && q <= 1.0))
		return NAN;
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);
	if (lo >= n - 1)
		return sorted[n - 1];
	return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

int stats_summarize(const double *v, size_t n, struct stats_summary *out)
{
	_cleanup_free_ double *s = NULL;
	long double sum = 0, ss = 0;

	if (n == 0 || !v || !all_finite(v, n))
		return -EINVAL;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, v, n * sizeof(*s));
	stats_sort(s, n);

	for (size_t i = 0; i < n; i++)
		sum += s[i];
	long double mean = sum / (long double)n;
	for (size_t i = 0; i < n; i++)
		ss += (s[i] - mean) * (s[i] - mean);

	out->n = n;
	out->median = stats_median_sorted(s, n);
	out->min = s[0];
	out->max = s[n - 1];
	out->mean = (double)mean;
	out->stddev = n >= 2 ? (double)sqrtl(ss / (long double)(n - 1)) : NAN;
	out->cv = (isnan(out->stddev) || out->mean == 0.0) ? NAN : out->stddev / fabs(out->mean);
	return 0;
}

/* C(n, k) in double; exact while it fits in 53 bits, inf when it overflows. */
static double binomial(size_t n, size_t k)
{
	double c = 1.0;

	if (k > n)
		return 0.0;
	if (k > n - k)
		k = n - k;
	for (size_t i = 1; i <= k; i++)
		c = c * (double)(n - k + i) / (double)i; /* C(n - k + i, i): an integer */
	return c;
}

double stats_mwu_p_floor(size_t n1, size_t n2)
{
	if (n1 == 0 || n2 == 0)
		return 1.0;
	double p = 2.0 / binomial(n1 + n2, n1);
	return p > 1.0 ? 1.0 : p;
}

struct tagged {
	double v;
	int group; /* 0: x, 1: y */
};

static int cmp_tagged(const void *a, const void *b)
{
	const struct tagged *x = a, *y = b;

	return (x->v > y->v) - (x->v < y->v);
}

/*
 * Doubled mid-ranks of the sorted pool into rank2: a tie block at sorted
 * positions i..j (0-based) shares the mid-rank (i + j + 2) / 2; doubled,
 * that is the integer i + j + 2. Returns the doubled rank sum of group x;
 * *tie_term gets the sum of t^3 - t over tie blocks, *ties whether any.
 */
static uint64_t mwu_ranks(const struct tagged *pool, size_t n, unsigned *rank2, double *tie_term, bool *ties)
{
	uint64_t sum2_x = 0;

	*tie_term = 0.0;
	*ties = false;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && pool[j + 1].v == pool[i].v)
			j++;
		size_t t = j - i + 1;
		if (t > 1) {
			*ties = true;
			*tie_term += (double)t * (double)t * (double)t - (double)t;
		}
		for (size_t k = i; k <= j; k++) {
			rank2[k] = (unsigned)(i + j + 2);
			if (pool[k].group == 0)
				sum2_x += rank2[k];
		}
		i = j + 1;
	}
	return sum2_x;
}

/* The normal approximation with the tie correction and continuity correction. */
static double mwu_normal_p(double u1, size_t nx, size_t ny, double tie_term)
{
	size_t n = nx + ny;
	double mu = (double)nx * (double)ny / 2.0;
	double var = (double)nx * (double)ny / 12.0 * ((double)n + 1.0 - tie_term / ((double)n * ((double)n - 1.0)));
	double dev = fabs(u1 - mu) - 0.5;

	if (var <= 0.0 || dev <= 0.0)
		return 1.0;
	return fmin(1.0, erfc(dev / sqrt(var) / M_SQRT2));
}

/*
 * The exact p: the distribution of the doubled rank sum of the smaller group
 * over all C(n, m) ways to pick its members: cnt[k][s] counts the subsets of
 * k ranks (among those seen so far) whose doubled sum is s. The test is
 * symmetric, so the smaller group gives the same p with less work.
 */
static int mwu_exact_p(const unsigned *rank2, size_t nx, size_t ny, uint64_t sum2_x, double *p)
{
	_cleanup_free_ double *cnt = NULL;
	size_t n = nx + ny;
	size_t m = nx <= ny ? nx : ny;
	uint64_t t_obs = nx <= ny ? sum2_x : (uint64_t)n * (n + 1) - sum2_x;
	size_t smax = n * (n + 1); /* sum of all doubled ranks */
	size_t width = smax + 1;

	cnt = calloc((m + 1) * width, sizeof(*cnt));
	if (!cnt)
		return -ENOMEM;
	cnt[0] = 1.0;
	for (size_t i = 0; i < n; i++) {
		size_t r = rank2[i];
		size_t kmax = i + 1 < m ? i + 1 : m;
		for (size_t k = kmax; k >= 1; k--) {
			double *dst = cnt + k * width, *src = cnt + (k - 1) * width;
			for (size_t s = smax; s >= r; s--)
				dst[s] += src[s - r];
		}
	}

	/* E[2W] = m (n + 1); compare integer distances, so no rounding decides
	 * which outcomes count as at least as extreme. */
	int64_t center = (int64_t)(m * (n + 1));
	int64_t d_obs = llabs((int64_t)t_obs - center);
	double total = 0.0, extreme = 0.0;
	const double *row = cnt + m * width;
	for (size_t s = 0; s <= smax; s++) {
		if (row[s] == 0.0)
			continue;
		total += row[s];
		if (llabs((int64_t)s - center) >= d_obs)
			extreme += row[s];
	}
	*p = fmin(1.0, extreme / total);
	return 0;
}

int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, struct stats_mwu *out)
{
	_cleanup_free_ struct tagged *pool = NULL;
	_cleanup_free_ unsigned *rank2 = NULL; /* doubled mid-ranks: integers */
	size_t n = nx + ny;
	double tie_term, p;
	uint64_t sum2_x;
	bool ties;
	int r;

	if (nx == 0 || ny == 0 || !x || !y || !all_finite(x, nx) || !all_finite(y, ny))
		return -EINVAL;
	if (n > 1u << 20)
		return -E2BIG;
	pool = malloc(n * sizeof(*pool));
	rank2 = malloc(n * sizeof(*rank2));
	if (!pool || !rank2)
		return -ENOMEM;
	for (size_t i = 0; i < nx; i++)
		pool[i] = (struct tagged){ x[i], 0 };
	for (size_t i = 0; i < ny; i++)
		pool[nx + i] = (struct tagged){ y[i], 1 };
	qsort(pool, n, sizeof(*pool), cmp_tagged);
	sum2_x = mwu_ranks(pool, n, rank2, &tie_term, &ties);

	out->u1 = (double)sum2_x / 2.0 - (double)nx * ((double)nx + 1.0) / 2.0;
	out->u2 = (double)nx * (double)ny - out->u1;
	out->ties = ties;
	out->p_floor = stats_mwu_p_floor(nx, ny);

	if (n > STATS_MWU_EXACT_MAX) {
		out->method = STATS_MWU_NORMAL;
		out->p = mwu_normal_p(out->u1, nx, ny, tie_term);
		return 0;
	}
	r = mwu_exact_p(rank2, nx, ny, sum2_x, &p);
	if (r < 0)
		return r;
	out->method = STATS_MWU_EXACT;
	out->p = p;
	return 0;
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void stats_rng_seed(struct stats_rng *rng, uint64_t seed)
{
	for (size_t i = 0; i < ARRAY_SIZE(rng->s); i++)
		rng->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t stats_rng_next(struct stats_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t stats_rng_below(struct stats_rng *rng, uint64_t bound)
{
	/* Reject the top partial block so every residue is equally likely. */
	uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
	uint64_t r;

	do
		r = stats_rng_next(rng);
	while (r >= limit);
	return r % bound;
}

/* The k-th smallest of a[0..n) (0-based), by Hoare selection: a is
 * reordered so that a[0..k) <= a[k] <= a[k+1..n). */
static double select_kth(double *a, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;

	while (lo < hi) {
		double pivot = a[lo + (hi - lo) / 2];
		ptrdiff_t i = lo, j = hi;

		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				double t = a[i];
				a[i++] = a[j];
				a[j--] = t;
			}
		}
		if (kk <= j)
			hi = j;
		else if (kk >= i)
			lo = i;
		else
			break;
	}
	return a[kk];
}

/* Median of a resample of v, in O(n): the bootstrap's inner loop. */
static double resample_median(struct stats_rng *rng, const double *v, size_t n, double *scratch)
{
	for (size_t i = 0; i < n; i++)
		scratch[i] = v[stats_rng_below(rng, n)];
	double hi = select_kth(scratch, n, n / 2);
	if (n % 2)
		return hi;
	/* even n: the lower middle value is the largest of the lower part */
	double lo = scratch[0];
	for (size_t i = 1; i < n / 2; i++)
		if (scratch[i] > lo)
			lo = scratch[i];
	return (lo + hi) / 2.0;
}

int stats_bootstrap_median_ratio(const double *x, size_t nx, const double *y, size_t ny,
				 unsigned iterations, uint64_t seed, double confidence,
				 struct stats_bootstrap *out)
{
	_cleanup_free_ double *scratch = NULL, *ratios = NULL;
	struct stats_rng rng;
	unsigned used = 0;

	if (nx == 0 || ny == 0 || iterations == 0 || !(confidence > 0.0 && confidence < 1.0) ||
	    !all_finite(x, nx) || !all_finite(y, ny))
		return -EINVAL;
	scratch = malloc((nx > ny ? nx : ny) * sizeof(*scratch));
	ratios = malloc((size_t)iterations * sizeof(*ratios));
	if (!scratch || !ratios)
		return -ENOMEM;

	stats_rng_seed(&rng, seed);
	for (unsigned i = 0; i < iterations; i++) {
		double mx = resample_median(&rng, x, nx, scratch);
		double my = resample_median(&rng, y, ny, scratch);
		if (mx != 0.0)
			ratios[used++] = my / mx;
	}

	out->confidence = confidence;
	out->iterations = iterations;
	out->used = used;
	out->seed = seed;
	if (used == 0 || (uint64_t)used * 2 < iterations) {
		out->low = out->high = NAN;
		return 0;
	}
	stats_sort(ratios, used);
	out->low = stats_quantile_sorted(ratios, used, (1.0 - confidence) / 2.0);
	out->high = stats_quantile_sorted(ratios, used, (1.0 + confidence) / 2.0);
	return 0;
}
