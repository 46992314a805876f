/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A token bucket: at most `burst` bytes at once, `rate` bytes per second on
 * average. It fills with time (never beyond burst) and is emptied by what
 * is taken, so over any interval of t seconds at most burst + rate * t
 * bytes get through: the lower bound on a transfer's duration that the
 * throttled snapshot sink (sink-throttle.h) guarantees.
 *
 * Pure arithmetic on the caller's clock (nanoseconds), no sleeping: the
 * caller asks how long to wait. Tokens are kept in nano-bytes (bytes x 1e9)
 * so nothing is lost to rounding however often it is asked.
 */
#pragma once

#include <stdint.h>

#define TOKEN_BUCKET_MAX_RATE (1ull << 50)  /* bytes/s; ~1.1e15, above spec.snapshot.max_bandwidth's limit */
#define TOKEN_BUCKET_MAX_BURST (1ull << 32) /* bytes; keeps burst x 1e9 well inside 64 bits */

struct token_bucket {
	uint64_t rate;   /* bytes per second, 1 .. TOKEN_BUCKET_MAX_RATE */
	uint64_t burst;  /* bytes, 1 .. TOKEN_BUCKET_MAX_BURST */
	uint64_t tokens; /* nano-bytes, <= burst * 1e9 */
	uint64_t last_ns;
};

/* A full bucket at now_ns; rate and burst are clamped to their ranges. */
void token_bucket_init(struct token_bucket *tb, uint64_t rate, uint64_t burst, uint64_t now_ns);

/* Whole bytes that may pass at now_ns (refills first). */
uint64_t token_bucket_available(struct token_bucket *tb, uint64_t now_ns);

/* Nanoseconds from now_ns until min(want, burst) bytes are available; 0 when they are. */
uint64_t token_bucket_wait_ns(struct token_bucket *tb, uint64_t want, uint64_t now_ns);

/*
 * The bytes that may pass now when they are at least step (step is capped
 * at burst); otherwise 0, and *wait_ns says when step bytes will be there.
 * Waiting for a step rather than a byte keeps the caller from waking for
 * every byte at low rates.
 */
uint64_t token_bucket_grant(struct token_bucket *tb, uint64_t step, uint64_t now_ns, uint64_t *wait_ns);

/* Takes n bytes that passed (at most what was available: the excess is not counted). */
void token_bucket_take(struct token_bucket *tb, uint64_t n);

/*
 * Sizes for a rate: the burst (50 ms of it, at least 64 KiB, at most
 * 4 MiB) and the step to wait for (10 ms of it, at least 1 byte, at most
 * the burst).
 */
void token_bucket_sizes(uint64_t rate, uint64_t *burst, uint64_t *step);
