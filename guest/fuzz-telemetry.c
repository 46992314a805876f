// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the telemetry decoder. The first input byte picks
 * the feed chunk size (low 7 bits) and whether to fix up checksums (high
 * bit), the rest is the stream. Mutations rarely keep a CRC-32 valid, so
 * with the fix-up every record found in the input gets correct checksums
 * first, and the fuzzer reaches the checks behind them. Every record that
 * comes out is used the way the runner uses it (percentiles, rates,
 * windows; a FAULT's pass time and touch histogram), so whatever the
 * decoder accepts must be safe to compute with.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true && meson compile -C build-fuzz
 *   build-fuzz/guest/fuzz-telemetry -max_total_time=60 corpus/
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "telemetry.h"
#include "wire-crc32.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct guest_sample prev;
static uint8_t fixed[1 << 20];
static struct wire_crc32 crc;

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Correct CRCs for every frame that starts with the magic and fits. */
static void fix_checksums(uint8_t *p, size_t n)
{
	for (size_t i = 0; i + GUEST_WIRE_HEADER_SIZE <= n; i++) {
		uint32_t len;

		if (get32(p + i) != GUEST_WIRE_MAGIC)
			continue;
		put32(p + i + 16, wire_crc32(&crc, p + i, 16));
		len = get32(p + i + 12);
		if (len <= GUEST_WIRE_MAX_PAYLOAD &&
		    i + GUEST_WIRE_HEADER_SIZE + len + GUEST_WIRE_TRAILER_SIZE <= n) {
			put32(p + i + GUEST_WIRE_HEADER_SIZE + len, wire_crc32(&crc, p + i + GUEST_WIRE_HEADER_SIZE, len));
			i += GUEST_WIRE_HEADER_SIZE + len + GUEST_WIRE_TRAILER_SIZE - 1;
		}
	}
}
static uint64_t window[GUEST_HIST_BUCKETS];

/* A FAULT as the postcopy scenario takes it: the pass's time, the touches summed, the buckets in ns. */
static void use_fault(const struct guest_fault *f)
{
	static uint64_t touches[GUEST_FAULT_HIST_BUCKETS];
	double lo, width;

	(void)guest_fault_pass_ns(f);
	for (unsigned b = 0; b < GUEST_FAULT_HIST_BUCKETS; b++) {
		touches[b] += f->touch_hist[b];
		if (f->touch_hist[b] && guest_fault_hist_ns(f->tsc_hz, b, &lo, &width) < 0)
			abort(); /* the decoder let a FAULT without a TSC rate through */
	}
}

static void use(struct guest_decoder *d, const struct guest_record *rec, int *have_prev)
{
	static const double pct[] = { 50, 99, 99.9, 100 };
	const struct guest_hello *h = guest_decoder_hello(d);
	double ns[4];

	if (rec->type == GUEST_RECORD_FAULT)
		use_fault(&rec->fault);
	if (rec->type != GUEST_RECORD_SAMPLE || !h)
		return;
	(void)guest_hist_percentiles(rec->sample.hist, h->tsc_hz, pct, 4, ns, NULL);
	if (*have_prev) {
		for (unsigned i = 0; i < rec->sample.vcpus; i++)
			(void)guest_ops_per_sec(h, &prev, &rec->sample, i);
		if (guest_hist_window(rec->sample.hist, prev.hist, window, NULL) == 0)
			(void)guest_hist_percentiles(window, h->tsc_hz, pct, 4, ns, NULL);
	}
	(void)guest_cycles_to_ns(h, (double)rec->sample.probe_max_cycles);
	prev = rec->sample;
	*have_prev = 1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	wire_crc32_init(&crc);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guest_decoder *d;
	size_t chunk, off = 1;
	int have_prev = 0;

	if (size < 1 || size > sizeof(fixed) || guest_decoder_new(&d) < 0)
		return 0;
	chunk = (size_t)(data[0] & 0x7f) * 37 + 1;
	if (data[0] & 0x80) {
		memcpy(fixed, data, size);
		fix_checksums(fixed + 1, size - 1);
		data = fixed;
	}
	while (off < size) {
		size_t want = size - off < chunk ? size - off : chunk;
		size_t took = guest_decoder_feed(d, data + off, want);
		const struct guest_record *rec;
		struct sb_error err;
		int r;

		off += took;
		while ((r = guest_decoder_next(d, &rec, &err)) != 0)
			if (r > 0)
				use(d, rec, &have_prev);
			else if (!err.msg[0] || err.code != r)
				abort(); /* an error must say what it is */
	}
	guest_decoder_free(d);
	return 0;
}
