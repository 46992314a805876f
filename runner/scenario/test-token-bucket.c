// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The token bucket on a simulated clock: starts full, refills at the rate,
 * never beyond the burst, wait times exact to the nanosecond (rounded up),
 * no overflow at the extremes, and a greedy consumer driven by grant()
 * moves between rate * t - step and burst + rate * t bytes in t seconds.
 */
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "token-bucket.h"

#define SEC 1000000000ull
#define MS 1000000ull

static void test_basics(void)
{
	struct token_bucket tb;
	uint64_t t = 5 * SEC, wait;

	token_bucket_init(&tb, 1000000, 100000, t); /* 1 MB/s, 100 kB burst */
	CHECK(token_bucket_available(&tb, t) == 100000);
	token_bucket_take(&tb, 100000);
	CHECK(token_bucket_available(&tb, t) == 0);
	/* 1 byte per microsecond */
	CHECK(token_bucket_wait_ns(&tb, 1000, t) == 1 * MS);
	CHECK(token_bucket_wait_ns(&tb, 1, t) == 1000);
	CHECK(token_bucket_available(&tb, t + 999) == 0);
	CHECK(token_bucket_available(&tb, t + 1000) == 1);
	CHECK(token_bucket_available(&tb, t + 50 * MS) == 50000);
	/* asking often loses nothing to rounding */
	token_bucket_init(&tb, 3, 10, 0);
	token_bucket_take(&tb, 10);
	for (uint64_t ns = 1; ns <= SEC; ns += 7)
		token_bucket_available(&tb, ns);
	CHECK(token_bucket_available(&tb, SEC) == 3);
	/* never beyond the burst, however long idle */
	token_bucket_init(&tb, 1000000, 100000, t);
	token_bucket_take(&tb, 100000);
	CHECK(token_bucket_available(&tb, t + 3600 * SEC) == 100000);
	/* want beyond the burst waits for the burst, not forever */
	token_bucket_take(&tb, 100000);
	t += 3600 * SEC;
	CHECK(token_bucket_wait_ns(&tb, 1u << 30, t) == 100 * MS);
	/* a clock going back adds nothing and breaks nothing */
	CHECK(token_bucket_available(&tb, t - SEC) == 0);
	CHECK(token_bucket_available(&tb, t + 10 * MS) == 10000);
	/* taking more than there is empties it */
	token_bucket_take(&tb, 1u << 20);
	CHECK(token_bucket_available(&tb, t + 10 * MS) == 0);
	/* grant: nothing below the step, then all that is there */
	token_bucket_init(&tb, 1000000, 100000, 0);
	token_bucket_take(&tb, 100000);
	CHECK(token_bucket_grant(&tb, 10000, 5 * MS, &wait) == 0 && wait == 5 * MS);
	CHECK(token_bucket_grant(&tb, 10000, 10 * MS, &wait) == 10000 && wait == 0);
	CHECK(token_bucket_grant(&tb, 10000, 12 * MS, &wait) == 12000 && wait == 0);
	/* a step above the burst is the burst */
	token_bucket_take(&tb, 12000);
	CHECK(token_bucket_grant(&tb, 1u << 30, 12 * MS, &wait) == 0 && wait == 100 * MS);
}

static void test_extremes(void)
{
	struct token_bucket tb;
	uint64_t burst, step;

	/* rates and bursts out of range are clamped, not trusted */
	token_bucket_init(&tb, 0, 0, 0);
	CHECK(tb.rate == 1 && tb.burst == 1);
	CHECK(token_bucket_available(&tb, 0) == 1);
	token_bucket_take(&tb, 1);
	CHECK(token_bucket_wait_ns(&tb, 1, 0) == SEC);
	token_bucket_init(&tb, UINT64_MAX, UINT64_MAX, 0);
	CHECK(tb.rate == TOKEN_BUCKET_MAX_RATE && tb.burst == TOKEN_BUCKET_MAX_BURST);
	token_bucket_take(&tb, TOKEN_BUCKET_MAX_BURST);
	CHECK(token_bucket_available(&tb, 0) == 0);
	/* the largest rate over a long interval: full, no overflow */
	CHECK(token_bucket_available(&tb, UINT64_MAX) == TOKEN_BUCKET_MAX_BURST);
	token_bucket_take(&tb, TOKEN_BUCKET_MAX_BURST);
	CHECK(token_bucket_wait_ns(&tb, TOKEN_BUCKET_MAX_BURST, UINT64_MAX) ==
	      (TOKEN_BUCKET_MAX_BURST * SEC + TOKEN_BUCKET_MAX_RATE - 1) / TOKEN_BUCKET_MAX_RATE);
	/* the slowest rate with the largest burst: a very long wait, exact */
	token_bucket_init(&tb, 1, TOKEN_BUCKET_MAX_BURST, 0);
	token_bucket_take(&tb, TOKEN_BUCKET_MAX_BURST);
	CHECK(token_bucket_wait_ns(&tb, TOKEN_BUCKET_MAX_BURST, 0) == TOKEN_BUCKET_MAX_BURST * SEC);
	CHECK(token_bucket_available(&tb, 1000 * SEC) == 1000);
	CHECK(token_bucket_available(&tb, UINT64_MAX) == TOKEN_BUCKET_MAX_BURST);

	token_bucket_sizes(1, &burst, &step);
	CHECK(burst == 64u << 10 && step == 1);
	token_bucket_sizes(8u << 20, &burst, &step); /* 8 MiB/s: 50 ms and 10 ms of it */
	CHECK(burst == (8u << 20) / 20 && step == (8u << 20) / 100);
	token_bucket_sizes(UINT64_MAX, &burst, &step);
	CHECK(burst == 4u << 20 && step == 4u << 20);
}

/*
 * A consumer that takes everything granted, as the sink's thread does, on
 * a clock that advances by the waits grant() asks for plus a jitter (the
 * scheduler), and sometimes takes less than granted (a short read).
 */
static void test_greedy_consumer(uint64_t rate)
{
	struct token_bucket tb;
	uint64_t burst, step, now = 1000 * SEC, start = now, moved = 0, seed = rate;

	token_bucket_sizes(rate, &burst, &step);
	token_bucket_init(&tb, rate, burst, now);
	while (now - start < 10 * SEC) {
		uint64_t wait, g = token_bucket_grant(&tb, step, now, &wait);
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		if (g) {
			uint64_t n = (seed >> 33) % 4 == 0 ? g / 2 + 1 : g;
			token_bucket_take(&tb, n);
			moved += n;
			now += (seed >> 40) % (50 * 1000); /* the write itself: up to 50 us */
		} else {
			CHECK(wait > 0);
			now += wait + (seed >> 40) % (100 * 1000); /* woken up to 100 us late */
		}
		double t = (double)(now - start) / 1e9;
		CHECK_MSG((double)moved <= (double)burst + (double)rate * t + 1,
			  "rate %llu: %llu bytes in %.6f s is above burst + rate * t", (unsigned long long)rate,
			  (unsigned long long)moved, t);
	}
	double t = (double)(now - start) / 1e9;
	/* greedy: lags the rate by at most a step, the jitter and the short reads */
	CHECK_MSG((double)moved >= 0.95 * (double)rate * t - (double)step, "rate %llu: only %llu bytes in %.3f s",
		  (unsigned long long)rate, (unsigned long long)moved, t);
	printf("rate %llu B/s: %llu bytes in %.3f s (burst %llu, step %llu)\n", (unsigned long long)rate,
	       (unsigned long long)moved, t, (unsigned long long)burst, (unsigned long long)step);
}

int main(void)
{
	test_basics();
	test_extremes();
	test_greedy_consumer(1000);
	test_greedy_consumer(4u << 20);
	test_greedy_consumer(100u << 20);
	return 0;
}
