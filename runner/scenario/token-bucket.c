// SPDX-License-Identifier: GPL-2.0-or-later
/* Token bucket arithmetic (token-bucket.h). */
#include "token-bucket.h"

#define NANO 1000000000ull

static uint64_t clamp(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void token_bucket_init(struct token_bucket *tb, uint64_t rate, uint64_t burst, uint64_t now_ns)
{
	tb->rate = clamp(rate, 1, TOKEN_BUCKET_MAX_RATE);
	tb->burst = clamp(burst, 1, TOKEN_BUCKET_MAX_BURST);
	tb->tokens = tb->burst * NANO;
	tb->last_ns = now_ns;
}

static void refill(struct token_bucket *tb, uint64_t now_ns)
{
	uint64_t full = tb->burst * NANO, missing, dt;

	if (now_ns <= tb->last_ns)
		return; /* a clock that went back adds nothing */
	dt = now_ns - tb->last_ns;
	tb->last_ns = now_ns;
	missing = full - tb->tokens;
	/* rate * dt >= missing exactly when dt >= ceil(missing / rate); below that rate * dt < missing + rate: no overflow */
	if (dt >= (missing + tb->rate - 1) / tb->rate)
		tb->tokens = full;
	else
		tb->tokens += tb->rate * dt;
}

uint64_t token_bucket_available(struct token_bucket *tb, uint64_t now_ns)
{
	refill(tb, now_ns);
	return tb->tokens / NANO;
}

uint64_t token_bucket_wait_ns(struct token_bucket *tb, uint64_t want, uint64_t now_ns)
{
	uint64_t need;

	refill(tb, now_ns);
	if (want > tb->burst)
		want = tb->burst;
	need = want * NANO;
	if (tb->tokens >= need)
		return 0;
	return (need - tb->tokens + tb->rate - 1) / tb->rate;
}

uint64_t token_bucket_grant(struct token_bucket *tb, uint64_t step, uint64_t now_ns, uint64_t *wait_ns)
{
	uint64_t avail = token_bucket_available(tb, now_ns);

	if (step == 0)
		step = 1;
	if (step > tb->burst)
		step = tb->burst;
	if (avail >= step) {
		*wait_ns = 0;
		return avail;
	}
	*wait_ns = token_bucket_wait_ns(tb, step, now_ns);
	return 0;
}

void token_bucket_take(struct token_bucket *tb, uint64_t n)
{
	uint64_t have = tb->tokens / NANO;

	if (n > have)
		n = have;
	tb->tokens -= n * NANO;
}

void token_bucket_sizes(uint64_t rate, uint64_t *burst, uint64_t *step)
{
	rate = clamp(rate, 1, TOKEN_BUCKET_MAX_RATE);
	*burst = clamp(rate / 20, 64u << 10, 4u << 20);
	*step = clamp(rate / 100, 1, *burst);
}
