// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The telemetry decoder and the histogram. Records are built here by an
 * encoder written from the format description, independently of the
 * guest's, so both have to agree with wire.h.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "telemetry.h"

/* ---- a test encoder -------------------------------------------------------- */

struct buf {
	uint8_t b[1 << 20];
	size_t n;
};

static void put(struct buf *b, uint64_t v, unsigned bytes)
{
	CHECK(b->n + bytes <= sizeof(b->b));
	for (unsigned i = 0; i < bytes; i++)
		b->b[b->n++] = (uint8_t)(v >> (8 * i));
}

static uint32_t crc32_ref(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

static void patch32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Appends one frame around payload; returns its offset in out. */
static size_t frame(struct buf *out, unsigned version, unsigned type, uint32_t seq, const struct buf *payload)
{
	size_t at = out->n;

	put(out, GUEST_WIRE_MAGIC, 4);
	put(out, version, 1);
	put(out, type, 1);
	put(out, 0, 2);
	put(out, seq, 4);
	put(out, payload->n, 4);
	put(out, crc32_ref(out->b + at, 16), 4);
	CHECK(out->n + payload->n <= sizeof(out->b));
	memcpy(out->b + out->n, payload->b, payload->n);
	out->n += payload->n;
	put(out, crc32_ref(payload->b, payload->n), 4);
	return at;
}

#define HZ 2500000000ull

static struct buf pl; /* scratch payload */
static unsigned hello_flags = GUEST_HELLO_POPULATED;

static void hello(struct buf *out, uint32_t seq, unsigned vcpus, unsigned vcpus_announced)
{
	pl.n = 0;
	put(&pl, vcpus_announced, 2);
	put(&pl, 12, 1);
	put(&pl, GUEST_CLOCK_KVMCLOCK, 1);
	put(&pl, 100, 4);
	put(&pl, HZ, 8);
	put(&pl, 3435973837u, 4);
	put(&pl, (uint8_t)-1, 1);
	put(&pl, hello_flags, 1);
	put(&pl, 0, 2);
	put(&pl, 128ull << 20, 8);
	put(&pl, 2ull << 20, 8);
	put(&pl, 62ull << 20, 8);
	put(&pl, 0, 2); /* probe on vCPU 0 */
	put(&pl, 0, 2);
	put(&pl, 100, 4);
	put(&pl, 0, 8);
	put(&pl, 1, 8);
	put(&pl, 1000, 8);
	put(&pl, 5000, 8);
	put(&pl, 40, 4);
	put(&pl, GUEST_HIST_BUCKETS, 2);
	put(&pl, GUEST_HIST_SUB_BITS, 1);
	put(&pl, 0, 1);
	CHECK(pl.n == GUEST_WIRE_HELLO_FIXED);
	for (unsigned i = 0; i < vcpus; i++) {
		put(&pl, i == 0 ? GUEST_PATTERN_PROBE : GUEST_PATTERN_WRITE64, 1);
		put(&pl, 0, 1);
		put(&pl, i, 2);
		put(&pl, i == 0 ? 0 : (2ull << 20) + (i - 1) * (64ull << 10), 8);
		put(&pl, i == 0 ? 0 : 64ull << 10, 8);
	}
	frame(out, GUEST_WIRE_VERSION, GUEST_RECORD_HELLO, seq, &pl);
}

/* ops[i] = k * (i + 1) * 1000, and k reads spread over buckets 100..100+k-1 */
static size_t sample(struct buf *out, uint32_t seq, unsigned vcpus, unsigned k)
{
	pl.n = 0;
	put(&pl, 5000 + (uint64_t)k * 250000000, 8);
	put(&pl, vcpus, 2);
	put(&pl, k, 2);
	put(&pl, 0, 4);
	for (unsigned i = 0; i < vcpus; i++)
		put(&pl, (uint64_t)k * (i + 1) * 1000, 8);
	put(&pl, (uint64_t)k * (k + 1) / 2, 8); /* reads */
	put(&pl, 12345, 8);
	put(&pl, 999, 8);
	for (unsigned b = 0; b < k; b++) {
		put(&pl, 100 + b, 2);
		put(&pl, k - b, 8);
	}
	return frame(out, GUEST_WIRE_VERSION, GUEST_RECORD_SAMPLE, seq, &pl);
}

static void end(struct buf *out, uint32_t seq, unsigned reason, unsigned stopped)
{
	pl.n = 0;
	put(&pl, 99999999999ull, 8);
	put(&pl, reason, 1);
	put(&pl, 0, 1);
	put(&pl, stopped, 2);
	frame(out, GUEST_WIRE_VERSION, GUEST_RECORD_END, seq, &pl);
}

static void logrec(struct buf *out, uint32_t seq, unsigned level, const char *text)
{
	pl.n = 0;
	put(&pl, level, 1);
	put(&pl, 0, 1);
	put(&pl, strlen(text), 2);
	for (const char *p = text; *p; p++)
		put(&pl, (uint8_t)*p, 1);
	frame(out, GUEST_WIRE_VERSION, GUEST_RECORD_LOG, seq, &pl);
}

/* A FAULT of vCPU vcpu over pages pages from 2 MiB, its touches as hist
 * (nbuckets of them) says; returns the frame's offset in out. */
static size_t fault_hist(struct buf *out, uint32_t seq, unsigned vcpu, uint64_t t0, uint64_t t1, uint64_t pages,
			 uint64_t mismatches, uint64_t first, unsigned access, const uint64_t *hist, unsigned nbuckets)
{
	pl.n = 0;
	put(&pl, t0, 8);
	put(&pl, t1, 8);
	put(&pl, HZ, 8);
	put(&pl, 2ull << 20, 8);
	put(&pl, pages * 4096, 8);
	put(&pl, pages, 8);
	put(&pl, mismatches, 8);
	put(&pl, first, 8);
	put(&pl, vcpu, 2);
	put(&pl, access, 1);
	put(&pl, nbuckets, 1);
	put(&pl, 0, 4);
	CHECK(pl.n == GUEST_WIRE_FAULT_FIXED);
	for (unsigned b = 0; b < nbuckets; b++)
		put(&pl, hist[b], 8);
	return frame(out, GUEST_WIRE_VERSION, GUEST_RECORD_FAULT, seq, &pl);
}

/* A FAULT of vCPU 1 whose touches all took (t1 - t0) / pages cycles */
static void fault(struct buf *out, uint32_t seq, uint64_t t0, uint64_t t1, uint64_t pages, uint64_t mismatches,
		  uint64_t first, unsigned access)
{
	uint64_t hist[GUEST_FAULT_HIST_BUCKETS] = { 0 };

	hist[guest_fault_hist_index(pages ? (t1 - t0) / pages : 0)] = pages;
	fault_hist(out, seq, 1, t0, t1, pages, mismatches, first, access, hist, GUEST_FAULT_HIST_BUCKETS);
	CHECK(pl.n == GUEST_WIRE_FAULT_SIZE);
}

/*
 * A pass of pages touches, slow ones (a demand fault: 40000 cycles) every
 * slow_every pages and fast ones (100 cycles) between: its histogram in
 * hist, its time returned.
 */
static uint64_t touches(uint64_t pages, uint64_t slow_every, uint64_t hist[GUEST_FAULT_HIST_BUCKETS])
{
	uint64_t span = 0;

	memset(hist, 0, GUEST_FAULT_HIST_BUCKETS * sizeof(hist[0]));
	for (uint64_t i = 0; i < pages; i++) {
		uint64_t d = i % slow_every ? 100 : 40000;

		hist[guest_fault_hist_index(d)]++;
		span += d;
	}
	return span;
}

/* ---- a test reader ----------------------------------------------------------- */

struct seen {
	int types[64];
	uint32_t seqs[64], lost[64];
	int n, errors, last_error;
	char first_error[SB_ERROR_MAX];
};

/* Feeds data in chunks of chunk bytes (0: all at once), collecting records. */
static void run(struct guest_decoder *d, const uint8_t *data, size_t len, size_t chunk, struct seen *s)
{
	size_t off = 0;

	while (off < len) {
		size_t want = chunk ? chunk : len - off, took;
		int progress = 0;

		if (want > len - off)
			want = len - off;
		took = guest_decoder_feed(d, data + off, want);
		off += took;
		for (;; progress = 1) {
			const struct guest_record *rec;
			struct sb_error err = { 0 };
			int r = guest_decoder_next(d, &rec, &err);

			if (r == 0)
				break;
			if (r < 0) {
				CHECK(err.code == r && err.msg[0]);
				if (!s->errors++)
					snprintf(s->first_error, sizeof(s->first_error), "%s", err.msg);
				s->last_error = r;
				continue;
			}
			CHECK(r == 1);
			CHECK(s->n < 64);
			s->types[s->n] = rec->type;
			s->seqs[s->n] = rec->seq;
			s->lost[s->n] = rec->lost;
			s->n++;
		}
		/* a full decoder always has a record or garbage to give back */
		CHECK(took > 0 || progress);
	}
}

static struct buf stream, other;

static void took_record(void *userdata, const struct guest_record *rec)
{
	struct seen *s = userdata;

	CHECK(s->n < 64);
	s->types[s->n] = rec->type;
	s->seqs[s->n] = rec->seq;
	s->lost[s->n] = rec->lost;
	s->n++;
}

static void took_error(void *userdata, const struct sb_error *err)
{
	struct seen *s = userdata;

	CHECK(err->code < 0 && err->msg[0]);
	if (!s->errors++)
		snprintf(s->first_error, sizeof(s->first_error), "%s", err->msg);
	s->last_error = err->code;
}

static struct guest_decoder *decoder(void)
{
	struct guest_decoder *d;

	CHECK(guest_decoder_new(&d) == 0);
	return d;
}

/* ---- decoder tests ------------------------------------------------------------ */

static void test_valid_stream_any_split(void)
{
	static const size_t chunks[] = { 0, 1, 2, 3, 7, 19, 20, 21, 24, 100, 4096 };

	stream.n = 0;
	hello(&stream, 0, 4, 4);
	sample(&stream, 1, 4, 1);
	sample(&stream, 2, 4, 5);
	logrec(&stream, 3, GUEST_LOG_INFO, "hello\tworld\x01");
	sample(&stream, 4, 4, 9);
	end(&stream, 5, GUEST_END_HOST_REQUEST, 4);

	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };

		run(d, stream.b, stream.n, chunks[c], &s);
		CHECK_MSG(s.errors == 0, "chunk %zu: %s", chunks[c], s.first_error);
		CHECK(s.n == 6);
		CHECK(s.types[0] == GUEST_RECORD_HELLO && s.types[3] == GUEST_RECORD_LOG && s.types[5] == GUEST_RECORD_END);
		for (int i = 0; i < 6; i++)
			CHECK(s.seqs[i] == (uint32_t)i && s.lost[i] == 0);
		CHECK(guest_decoder_pending(d) == 0);
		CHECK(guest_decoder_skipped(d) == 0);
		CHECK(guest_decoder_offset(d) == stream.n);
	}
}

/* guest_decoder_take(): the records of any split of the stream, in order; garbage between them reported, then passed */
static void test_take(void)
{
	static const size_t chunks[] = { 1, 7, 24, 4096 };

	stream.n = 0;
	hello(&stream, 0, 4, 4);
	sample(&stream, 1, 4, 1);
	logrec(&stream, 2, GUEST_LOG_INFO, "take");
	end(&stream, 3, GUEST_END_HOST_REQUEST, 4);
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };

		for (size_t off = 0; off < stream.n; off += chunks[c])
			guest_decoder_take(d, stream.b + off, stream.n - off < chunks[c] ? stream.n - off : chunks[c],
					   took_record, took_error, &s);
		CHECK_MSG(s.errors == 0 && s.n == 4, "chunk %zu: %d records, %d errors: %s", chunks[c], s.n, s.errors,
			  s.first_error);
		CHECK(s.types[0] == GUEST_RECORD_HELLO && s.types[2] == GUEST_RECORD_LOG && s.types[3] == GUEST_RECORD_END);
	}
	{
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };
		static struct buf g;

		g.n = 0;
		hello(&g, 0, 4, 4);
		for (int i = 0; i < 40; i++)
			g.b[g.n++] = 0x5a; /* not a frame */
		sample(&g, 1, 4, 1);
		guest_decoder_take(d, g.b, g.n, took_record, took_error, &s);
		CHECK_MSG(s.n == 2 && s.errors >= 1 && s.types[1] == GUEST_RECORD_SAMPLE, "%d records, %d errors", s.n,
			  s.errors);
		s = (struct seen){ 0 };
		guest_decoder_take(d, g.b, 0, took_record, NULL, &s); /* nothing: nothing called */
		CHECK(s.n == 0);
	}
}

static void test_contents(void)
{
	_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
	const struct guest_record *rec;
	struct sb_error err = { 0 };

	stream.n = 0;
	hello(&stream, 0, 3, 3);
	sample(&stream, 1, 3, 4);
	logrec(&stream, 2, GUEST_LOG_ERROR, "bad\nthing");
	end(&stream, 3, GUEST_END_RUN_LENGTH, 3);
	CHECK(guest_decoder_feed(d, stream.b, stream.n) == stream.n);

	CHECK(guest_decoder_next(d, &rec, &err) == 1 && rec->type == GUEST_RECORD_HELLO);
	CHECK(rec->hello.vcpus == 3 && rec->hello.page_size == 4096 && rec->hello.tsc_hz == HZ);
	CHECK(rec->hello.clock_source == GUEST_CLOCK_KVMCLOCK && rec->hello.pvclock_shift == -1);
	CHECK(rec->hello.probe_vcpu == 0 && rec->hello.vcpu[0].pattern == GUEST_PATTERN_PROBE);
	CHECK(rec->hello.vcpu[2].pattern == GUEST_PATTERN_WRITE64 && rec->hello.vcpu[2].apic_id == 2);
	CHECK(rec->hello.vcpu[2].slice_base == (2ull << 20) + (64 << 10) && rec->hello.vcpu[2].slice_bytes == (64 << 10));
	CHECK(rec->hello.region_bytes == (62ull << 20) && rec->hello.probe_overhead_cycles == 40);
	CHECK(rec->hello.populated);
	CHECK(guest_decoder_hello(d) && guest_decoder_hello(d)->vcpus == 3);

	CHECK(guest_decoder_next(d, &rec, &err) == 1 && rec->type == GUEST_RECORD_SAMPLE);
	CHECK(rec->sample.vcpus == 3 && rec->sample.ops[2] == 12000 && rec->sample.probe_reads == 10);
	CHECK(rec->sample.hist[100] == 4 && rec->sample.hist[103] == 1 && rec->sample.hist[104] == 0);
	CHECK(rec->sample.probe_max_cycles == 999);

	CHECK(guest_decoder_next(d, &rec, &err) == 1 && rec->type == GUEST_RECORD_LOG);
	CHECK(rec->log.level == GUEST_LOG_ERROR && !strcmp(rec->log.text, "bad?thing"));

	CHECK(guest_decoder_next(d, &rec, &err) == 1 && rec->type == GUEST_RECORD_END);
	CHECK(rec->end.reason == GUEST_END_RUN_LENGTH && rec->end.vcpus_stopped == 3);
	CHECK(guest_decoder_next(d, &rec, &err) == 0);
}

static void test_truncated(void)
{
	/* a record cut short, then the stream goes on */
	for (size_t cut = 1; cut < 60; cut += 3) {
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };
		size_t at;

		stream.n = 0;
		hello(&stream, 0, 2, 2);
		at = sample(&stream, 1, 2, 3);
		stream.n = at + cut;
		sample(&stream, 2, 2, 4);
		sample(&stream, 3, 2, 5);
		run(d, stream.b, stream.n, 0, &s);
		CHECK_MSG(s.errors >= 1, "cut %zu: no error", cut);
		CHECK(s.n >= 2 && s.types[0] == GUEST_RECORD_HELLO);
		CHECK_MSG(s.types[s.n - 1] == GUEST_RECORD_SAMPLE && s.seqs[s.n - 1] == 3, "cut %zu", cut);
		CHECK(guest_decoder_skipped(d) > 0);
	}
	/* the stream ends inside a record: nothing, and pending says so */
	{
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };

		stream.n = 0;
		hello(&stream, 0, 2, 2);
		sample(&stream, 1, 2, 3);
		run(d, stream.b, stream.n - 5, 0, &s);
		CHECK(s.errors == 0 && s.n == 1);
		CHECK(guest_decoder_pending(d) > 0);
	}
}

static void test_wrong_version(void)
{
	_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
	struct seen s = { 0 };
	char want[96];

	stream.n = 0;
	hello(&stream, 0, 2, 2);
	pl.n = 0;
	put(&pl, 7, 8);
	frame(&stream, GUEST_WIRE_VERSION + 1, GUEST_RECORD_SAMPLE, 1, &pl);
	sample(&stream, 2, 2, 1);
	run(d, stream.b, stream.n, 0, &s);
	CHECK(s.errors == 1 && s.last_error == -EPROTONOSUPPORT);
	snprintf(want, sizeof(want), "is version %d; this snapbench reads version %d", GUEST_WIRE_VERSION + 1,
		 GUEST_WIRE_VERSION);
	CHECK_MSG(strstr(s.first_error, want), "%s", s.first_error);
	CHECK(s.n == 2 && s.seqs[1] == 2 && s.lost[1] == 1);

	/* a version 1 FAULT (72 bytes, no touch histogram) from an older guest image */
	{
		_cleanup_guest_decoder_ struct guest_decoder *d1 = decoder();
		struct seen s1 = { 0 };

		stream.n = 0;
		fault(&stream, 0, 1000, 2000, 16, 0, 0, GUEST_FAULT_READ);
		pl.n = GUEST_WIRE_FAULT_FIXED;
		pl.b[GUEST_WIRE_FAULT_FIXED - 5] = 0; /* version 1's pad */
		frame(&stream, 1, GUEST_RECORD_FAULT, 1, &pl);
		run(d1, stream.b, stream.n, 0, &s1);
		CHECK(s1.n == 1 && s1.errors == 1 && s1.last_error == -EPROTONOSUPPORT);
		CHECK_MSG(strstr(s1.first_error, "is version 1;"), "%s", s1.first_error);
	}
}

static void test_absurd_lengths(void)
{
	/* a header (with a valid CRC) claiming 1 GiB */
	{
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };
		size_t at;

		stream.n = 0;
		hello(&stream, 0, 2, 2);
		at = stream.n;
		pl.n = 0;
		frame(&stream, GUEST_WIRE_VERSION, GUEST_RECORD_SAMPLE, 1, &pl);
		patch32(stream.b + at + 12, 1u << 30);
		patch32(stream.b + at + 16, crc32_ref(stream.b + at, 16));
		sample(&stream, 2, 2, 1);
		run(d, stream.b, stream.n, 0, &s);
		CHECK(s.errors >= 1 && s.last_error == -EBADMSG);
		CHECK_MSG(strstr(s.first_error, "claims 1073741824 bytes"), "%s", s.first_error);
		CHECK(s.n == 2 && s.seqs[1] == 2);
	}
	/* HELLO announcing 60000 vCPUs; SAMPLE with more buckets than exist; LOG too long */
	{
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };

		stream.n = 0;
		hello(&stream, 0, 2, 60000);
		run(d, stream.b, stream.n, 0, &s);
		CHECK(s.errors == 1 && s.n == 0);
		CHECK_MSG(strstr(s.first_error, "60000 vCPUs"), "%s", s.first_error);
	}
	{
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };
		size_t at;

		stream.n = 0;
		hello(&stream, 0, 2, 2);
		at = sample(&stream, 1, 2, 2);
		/* nonzero_buckets = 65535, CRCs fixed up so only the contents are wrong */
		stream.b[at + 20 + 10] = 0xff;
		stream.b[at + 20 + 11] = 0xff;
		patch32(stream.b + stream.n - 4, crc32_ref(stream.b + at + 20, stream.n - 4 - at - 20));
		run(d, stream.b, stream.n, 0, &s);
		CHECK(s.errors == 1 && s.n == 1);
		CHECK_MSG(strstr(s.first_error, "65535 histogram buckets"), "%s", s.first_error);
	}
	{
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };
		char text[GUEST_WIRE_MAX_LOG + 2];

		memset(text, 'x', sizeof(text) - 1);
		text[sizeof(text) - 1] = '\0';
		stream.n = 0;
		logrec(&stream, 0, GUEST_LOG_INFO, text);
		logrec(&stream, 1, GUEST_LOG_INFO, text + 1); /* exactly the maximum */
		run(d, stream.b, stream.n, 0, &s);
		CHECK(s.errors == 1 && s.n == 1 && s.types[0] == GUEST_RECORD_LOG);
	}
}

static void test_flipped_bits(void)
{
	uint64_t hist[GUEST_FAULT_HIST_BUCKETS], span;
	size_t at, len;

	/* a FAULT between two others: each of its bits */
	span = touches(512, 8, hist);
	other.n = 0;
	fault_hist(&other, 0, 0, 1000, 1000 + span, 512, 0, 0, GUEST_FAULT_READ, hist, GUEST_FAULT_HIST_BUCKETS);
	at = fault_hist(&other, 1, 1, 1000, 1000 + span, 512, 0, 0, GUEST_FAULT_READ, hist, GUEST_FAULT_HIST_BUCKETS);
	len = other.n - at;
	fault_hist(&other, 2, 2, 1000, 1000 + span, 512, 0, 0, GUEST_FAULT_READ, hist, GUEST_FAULT_HIST_BUCKETS);
	for (size_t bit = 0; bit < len * 8; bit++) {
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };

		memcpy(stream.b, other.b, other.n);
		stream.n = other.n;
		stream.b[at + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		run(d, stream.b, stream.n, bit % 2 ? 0 : 13, &s);
		CHECK_MSG(s.errors >= 1, "FAULT bit %zu: not detected", bit);
		CHECK_MSG(s.n == 2 && s.seqs[1] == 2 && s.lost[1] == 1, "FAULT bit %zu: %d records", bit, s.n);
	}

	other.n = 0;
	hello(&other, 0, 2, 2);
	at = sample(&other, 1, 2, 6);
	len = other.n - at;
	sample(&other, 2, 2, 7);
	end(&other, 3, GUEST_END_HOST_REQUEST, 2);

	/* every single-bit error in a record is caught, and the stream recovers */
	for (size_t bit = 0; bit < len * 8; bit++) {
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };

		memcpy(stream.b, other.b, other.n);
		stream.n = other.n;
		stream.b[at + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		run(d, stream.b, stream.n, bit % 2 ? 0 : 13, &s);
		CHECK_MSG(s.errors >= 1, "bit %zu: not detected", bit);
		CHECK_MSG(s.n == 3, "bit %zu: %d records", bit, s.n);
		CHECK(s.types[0] == GUEST_RECORD_HELLO && s.seqs[1] == 2 && s.lost[1] == 1 && s.types[2] == GUEST_RECORD_END);
	}
}

static void test_garbage(void)
{
	_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
	struct seen s = { 0 };
	uint64_t x = 88172645463325252ull;

	stream.n = 0;
	/* garbage with a stray magic inside */
	for (int i = 0; i < 5000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		put(&stream, x, 1);
	}
	put(&stream, GUEST_WIRE_MAGIC, 4);
	put(&stream, GUEST_WIRE_VERSION, 1);
	hello(&stream, 0, 2, 2);
	for (int i = 0; i < 300; i++)
		put(&stream, 0xa5, 1);
	sample(&stream, 1, 2, 1);
	sample(&stream, 2, 2, 2);
	run(d, stream.b, stream.n, 64, &s);
	CHECK(s.n == 3 && s.types[0] == GUEST_RECORD_HELLO && s.seqs[2] == 2);
	/* one error per stretch of garbage, not one per byte */
	CHECK_MSG(s.errors >= 2 && s.errors <= 4, "%d errors", s.errors);
	CHECK(guest_decoder_skipped(d) >= 5300);
}

static void test_semantics(void)
{
	/* SAMPLE before HELLO */
	{
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };

		stream.n = 0;
		sample(&stream, 0, 2, 1);
		run(d, stream.b, stream.n, 0, &s);
		CHECK(s.errors == 1 && s.n == 0 && strstr(s.first_error, "before HELLO"));
	}
	/* HELLO flags this decoder does not know */
	{
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };

		stream.n = 0;
		hello_flags = 0x80;
		hello(&stream, 0, 2, 2);
		hello_flags = GUEST_HELLO_POPULATED;
		run(d, stream.b, stream.n, 0, &s);
		CHECK(s.errors == 1 && s.n == 0 && strstr(s.first_error, "unknown flags 0x80"));
	}
	/* vCPU count disagreeing with HELLO; a second HELLO */
	{
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };

		stream.n = 0;
		hello(&stream, 0, 2, 2);
		sample(&stream, 1, 3, 1);
		hello(&stream, 2, 2, 2);
		run(d, stream.b, stream.n, 0, &s);
		CHECK(s.errors == 2 && s.n == 1);
		CHECK_MSG(strstr(s.first_error, "SAMPLE for 3 vCPUs, HELLO said 2"), "%s", s.first_error);
	}
	/* counters going backwards; sequence going backwards; a gap */
	{
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };

		stream.n = 0;
		hello(&stream, 0, 2, 2);
		sample(&stream, 1, 2, 5);
		sample(&stream, 2, 2, 4);
		sample(&stream, 1, 2, 6);
		sample(&stream, 9, 2, 7);
		run(d, stream.b, stream.n, 0, &s);
		CHECK(s.errors == 2 && s.n == 3);
		CHECK(s.seqs[2] == 9 && s.lost[2] == 7);
	}
	/* bucket sum disagreeing with probe_reads, and descending bucket indexes */
	{
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };
		size_t at;

		stream.n = 0;
		hello(&stream, 0, 1, 1);
		at = sample(&stream, 1, 1, 3);
		stream.b[at + 20 + 16 + 8] ^= 1; /* probe_reads */
		patch32(stream.b + stream.n - 4, crc32_ref(stream.b + at + 20, stream.n - 4 - at - 20));
		at = sample(&stream, 2, 1, 3);
		stream.b[at + 20 + 16 + 8 + 24] = 200; /* first bucket index above the second */
		patch32(stream.b + stream.n - 4, crc32_ref(stream.b + at + 20, stream.n - 4 - at - 20));
		run(d, stream.b, stream.n, 0, &s);
		CHECK(s.errors == 2 && s.n == 1);
		CHECK_MSG(strstr(s.first_error, "add up to"), "%s", s.first_error);
	}
}

static void test_feed_backpressure(void)
{
	_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
	struct seen s = { 0 };
	size_t took;

	stream.n = 0;
	hello(&stream, 0, GUEST_MAX_VCPUS, GUEST_MAX_VCPUS);
	for (uint32_t i = 1; i < 40; i++)
		sample(&stream, i, GUEST_MAX_VCPUS, i);
	CHECK(stream.n > 70000);
	took = guest_decoder_feed(d, stream.b, stream.n);
	CHECK(took < stream.n && took >= GUEST_WIRE_HEADER_SIZE + GUEST_WIRE_MAX_PAYLOAD + GUEST_WIRE_TRAILER_SIZE);
	CHECK(guest_decoder_feed(d, stream.b + took, stream.n - took) == 0);
	run(d, stream.b + took, stream.n - took, 0, &s);
	CHECK_MSG(s.errors == 0, "%s", s.first_error);
	CHECK(s.n == 40 && s.seqs[39] == 39);
}

/* ---- histogram ------------------------------------------------------------- */

static void check_bucket(uint64_t v)
{
	unsigned i = guest_hist_index(v);

	CHECK(i < GUEST_HIST_BUCKETS);
	if (i == GUEST_HIST_BUCKETS - 1 && v >= guest_hist_high(i))
		return; /* the open-ended last bucket */
	CHECK_MSG(guest_hist_low(i) <= v && v < guest_hist_high(i), "v %llu bucket %u [%llu, %llu)", (unsigned long long)v,
		  i, (unsigned long long)guest_hist_low(i), (unsigned long long)guest_hist_high(i));
	CHECK(i < 64 || (guest_hist_high(i) - guest_hist_low(i)) * 32 <= guest_hist_low(i));
}

static void test_hist_layout(void)
{
	uint64_t x = 1;

	CHECK(GUEST_HIST_BUCKETS == 1152);
	for (uint64_t v = 0; v < 100000; v++)
		check_bucket(v);
	for (int e = 0; e < 64; e++) {
		check_bucket(1ull << e);
		check_bucket((1ull << e) - 1);
		check_bucket((1ull << e) + 1);
	}
	check_bucket(UINT64_MAX);
	for (int i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		check_bucket(x >> (x % 40));
	}
	/* buckets tile the line: each starts where the previous ends */
	for (unsigned i = 1; i < GUEST_HIST_BUCKETS; i++)
		CHECK(guest_hist_low(i) == guest_hist_high(i - 1));
	CHECK(guest_hist_index(63) == 63 && guest_hist_index(64) == 64 && guest_hist_index(1ull << 40) == 1151);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_percentiles(void)
{
	enum { N = 200000 };
	static uint64_t v[N], hist[GUEST_HIST_BUCKETS], earlier[GUEST_HIST_BUCKETS], window[GUEST_HIST_BUCKETS];
	static const double pct[] = { 50, 90, 99, 99.9, 100 };
	double ns[5];
	uint64_t x = 12345;
	struct sb_error err = { 0 };

	/* a long-tailed mix: most reads ~300 cycles, some ~20000, a few ~2M */
	for (int i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t base = x % 100 < 97 ? 300 : x % 1000 < 999 ? 20000 : 2000000;
		v[i] = base + (x >> 20) % (base / 2 + 1);
		hist[guest_hist_index(v[i])]++;
	}
	qsort(v, N, sizeof(v[0]), cmp_u64);
	CHECK(guest_hist_percentiles(hist, 1000000000, pct, 5, ns, &err) == 0);
	for (int i = 0; i < 5; i++) {
		size_t rank = (size_t)ceil(pct[i] / 100.0 * N);
		double exact = (double)v[rank - 1];

		/* 1 GHz: ns == cycles */
		CHECK_MSG(fabs(ns[i] - exact) <= exact * 0.032, "p%g: %.1f vs exact %.1f", pct[i], ns[i], exact);
	}
	/* cycles to ns follows tsc_hz */
	CHECK(guest_hist_percentiles(hist, 2000000000, pct, 1, ns + 1, &err) == 0);
	CHECK(fabs(ns[1] * 2 - ns[0]) < 1e-6 * ns[0]);

	/* a window is the difference of two cumulative samples */
	memcpy(earlier, hist, sizeof(hist));
	hist[guest_hist_index(1000)] += 10;
	CHECK(guest_hist_window(hist, earlier, window, &err) == 0);
	CHECK(window[guest_hist_index(1000)] == 10);
	CHECK(guest_hist_percentiles(window, 1000000000, pct, 1, ns, &err) == 0);
	CHECK(fabs(ns[0] - 1000) <= 1000 * 0.032);
	CHECK(guest_hist_window(earlier, hist, window, &err) == -EINVAL && strstr(err.msg, "went down"));

	memset(window, 0, sizeof(window));
	CHECK(guest_hist_percentiles(window, 1000000000, pct, 1, ns, &err) == -ENODATA);
	{
		const double bad[] = { 0 }, bad2[] = { 100.5 };

		CHECK(guest_hist_percentiles(hist, 1000000000, bad, 1, ns, &err) == -EINVAL);
		CHECK(guest_hist_percentiles(hist, 1000000000, bad2, 1, ns, &err) == -EINVAL);
		CHECK(guest_hist_percentiles(hist, 0, pct, 1, ns, &err) == -EINVAL);
	}
}

/* FAULT: decoded without a HELLO (a destination's stream starts mid-way), checked for what cannot be */
static void test_fault(void)
{
	_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
	const struct guest_record *rec;
	struct sb_error err = { 0 };

	stream.n = 0;
	fault(&stream, 40, 1000, 1000 + HZ / 4, 32768, 0, 0, GUEST_FAULT_WRITE);
	fault(&stream, 41, 1000, 2000, 16, 2, (2ull << 20) + 3 * 4096, GUEST_FAULT_READ);
	fault(&stream, 42, 2000, 1000, 16, 0, 0, GUEST_FAULT_READ);             /* ends before it starts */
	fault(&stream, 43, 1000, 2000, 16, 17, 2ull << 20, GUEST_FAULT_READ);   /* more mismatches than pages */
	fault(&stream, 44, 1000, 2000, 16, 1, 1ull << 20, GUEST_FAULT_READ);    /* a mismatch outside the slice */
	fault(&stream, 45, 1000, 2000, 16, 0, 0, 7);                            /* an unknown access */
	CHECK(guest_decoder_feed(d, stream.b, stream.n) == stream.n);

	CHECK(guest_decoder_next(d, &rec, &err) == 1 && rec->type == GUEST_RECORD_FAULT && rec->lost == 40);
	CHECK(rec->fault.pages == 32768 && rec->fault.bytes == 128ull << 20 && rec->fault.base == 2ull << 20);
	CHECK(rec->fault.vcpu == 1 && rec->fault.access == GUEST_FAULT_WRITE && rec->fault.mismatches == 0);
	CHECK(fabs(guest_fault_pass_ns(&rec->fault) - 250e6) < 1);
	/* 625e6 cycles over 32768 touches: 19073 each, bucket 14 */
	CHECK(rec->fault.touch_hist[14] == 32768 && rec->fault.touch_hist[13] == 0 && rec->fault.touch_hist[15] == 0);
	CHECK(guest_decoder_next(d, &rec, &err) == 1 && rec->fault.mismatches == 2);
	CHECK(rec->fault.first_mismatch == (2ull << 20) + 3 * 4096 && rec->fault.access == GUEST_FAULT_READ);
	CHECK(guest_decoder_next(d, &rec, &err) == -EBADMSG && strstr(err.msg, "before it starts"));
	CHECK(guest_decoder_next(d, &rec, &err) == -EBADMSG && strstr(err.msg, "mismatches"));
	CHECK(guest_decoder_next(d, &rec, &err) == -EBADMSG && strstr(err.msg, "mismatches"));
	CHECK(guest_decoder_next(d, &rec, &err) == -EBADMSG && strstr(err.msg, "unknown access 7"));
	CHECK(guest_decoder_next(d, &rec, &err) == 0);

	/* after a HELLO, the vCPU must be one of its */
	{
		_cleanup_guest_decoder_ struct guest_decoder *d2 = decoder();

		stream.n = 0;
		hello(&stream, 0, 1, 1);
		fault(&stream, 1, 1000, 2000, 16, 0, 0, GUEST_FAULT_READ);
		CHECK(guest_decoder_feed(d2, stream.b, stream.n) == stream.n);
		CHECK(guest_decoder_next(d2, &rec, &err) == 1 && rec->type == GUEST_RECORD_HELLO);
		CHECK(guest_decoder_next(d2, &rec, &err) == -EBADMSG && strstr(err.msg, "vCPU 1 of 1"));
	}
	CHECK(!strcmp(guest_fault_access_to_string(GUEST_FAULT_WRITE), "write") && !guest_fault_access_to_string(2));
	CHECK(!strcmp(guest_record_type_to_string(GUEST_RECORD_FAULT), "fault"));
}

/* FAULT's touch histogram: decoded bucket by bucket, checked against the pages and the pass's time */
static void test_fault_hist(void)
{
	_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
	uint64_t hist[GUEST_FAULT_HIST_BUCKETS], bad[GUEST_FAULT_HIST_BUCKETS], span;
	const struct guest_record *rec;
	struct sb_error err = { 0 };
	double lo, width;

	/* 32768 pages, one in 16 a demand fault of 40000 cycles, the others 100 */
	span = touches(32768, 16, hist);
	CHECK(span == 2048 * 40000ull + 30720 * 100ull);
	CHECK(hist[6] == 30720 && hist[15] == 2048);
	stream.n = 0;
	fault_hist(&stream, 0, 0, 5000, 5000 + span, 32768, 0, 0, GUEST_FAULT_READ, hist, GUEST_FAULT_HIST_BUCKETS);
	/* the counts add up to one touch less than the pages */
	memcpy(bad, hist, sizeof(bad));
	bad[6]--;
	fault_hist(&stream, 1, 0, 5000, 5000 + span, 32768, 0, 0, GUEST_FAULT_READ, bad, GUEST_FAULT_HIST_BUCKETS);
	/* ... and one more */
	bad[6] += 2;
	fault_hist(&stream, 2, 0, 5000, 5000 + span, 32768, 0, 0, GUEST_FAULT_READ, bad, GUEST_FAULT_HIST_BUCKETS);
	/* touches slower than the whole pass allows */
	memset(bad, 0, sizeof(bad));
	bad[30] = 16;
	fault_hist(&stream, 3, 0, 5000, 6000, 16, 0, 0, GUEST_FAULT_READ, bad, GUEST_FAULT_HIST_BUCKETS);
	/* touches too fast to fill the pass */
	memset(bad, 0, sizeof(bad));
	bad[1] = 16;
	fault_hist(&stream, 4, 0, 5000, 6000, 16, 0, 0, GUEST_FAULT_READ, bad, GUEST_FAULT_HIST_BUCKETS);
	/* a histogram of another layout */
	fault_hist(&stream, 5, 0, 5000, 5000 + span, 32768, 0, 0, GUEST_FAULT_READ, hist, 32);
	/* counts that overflow */
	memset(bad, 0, sizeof(bad));
	bad[0] = UINT64_MAX;
	bad[1] = 2;
	fault_hist(&stream, 6, 0, 5000, 6000, 1, 0, 0, GUEST_FAULT_READ, bad, GUEST_FAULT_HIST_BUCKETS);
	/* the open-ended last bucket: no upper bound to check */
	memset(bad, 0, sizeof(bad));
	bad[GUEST_FAULT_HIST_BUCKETS - 1] = 1;
	fault_hist(&stream, 7, 0, 0, 3ull << 40, 1, 0, 0, GUEST_FAULT_WRITE, bad, GUEST_FAULT_HIST_BUCKETS);
	CHECK(guest_decoder_feed(d, stream.b, stream.n) == stream.n);

	CHECK_MSG(guest_decoder_next(d, &rec, &err) == 1, "%s", err.msg);
	CHECK(rec->type == GUEST_RECORD_FAULT && rec->fault.vcpu == 0);
	for (unsigned b = 0; b < GUEST_FAULT_HIST_BUCKETS; b++)
		CHECK(rec->fault.touch_hist[b] == hist[b]);
	CHECK(guest_fault_hist_ns(rec->fault.tsc_hz, 15, &lo, &width) == 0);
	CHECK(fabs(lo - 32768 * 1e9 / HZ) < 1e-6 && fabs(width - 32768 * 1e9 / HZ) < 1e-6);
	CHECK(guest_fault_hist_ns(rec->fault.tsc_hz, 0, &lo, &width) == 0 && lo == 0 && fabs(width - 2e9 / HZ) < 1e-9);
	CHECK(guest_fault_hist_ns(rec->fault.tsc_hz, GUEST_FAULT_HIST_BUCKETS, &lo, &width) == -EINVAL);
	CHECK(guest_fault_hist_ns(0, 1, &lo, &width) == -EINVAL);

	CHECK(guest_decoder_next(d, &rec, &err) == -EBADMSG);
	CHECK_MSG(strstr(err.msg, "record 1 at stream offset") &&
			  strstr(err.msg, "FAULT's touch histogram holds 32767 touches, the record says 32768 pages"),
		  "%s", err.msg);
	CHECK(guest_decoder_next(d, &rec, &err) == -EBADMSG && strstr(err.msg, "holds 32769 touches"));
	CHECK(guest_decoder_next(d, &rec, &err) == -EBADMSG);
	CHECK_MSG(strstr(err.msg, "does not fit its pass of 1000 cycles: its touches take at least 17179869184"), "%s",
		  err.msg);
	CHECK(guest_decoder_next(d, &rec, &err) == -EBADMSG);
	CHECK_MSG(strstr(err.msg, "does not fill its pass of 1000 cycles: its touches take less than 64"), "%s", err.msg);
	CHECK(guest_decoder_next(d, &rec, &err) == -EBADMSG);
	CHECK_MSG(strstr(err.msg, "FAULT with a touch histogram of 32 buckets; this snapbench reads 40"), "%s", err.msg);
	CHECK(guest_decoder_next(d, &rec, &err) == -EBADMSG && strstr(err.msg, "counts overflow"));
	CHECK_MSG(guest_decoder_next(d, &rec, &err) == 1, "%s", err.msg);
	CHECK(rec->seq == 7 && rec->fault.touch_hist[GUEST_FAULT_HIST_BUCKETS - 1] == 1);
	CHECK(guest_decoder_next(d, &rec, &err) == 0);
}

/* FAULT records cut short: by their length (the frame intact), and in the stream */
static void test_fault_truncated(void)
{
	uint64_t hist[GUEST_FAULT_HIST_BUCKETS], span = touches(64, 4, hist);

	/* the payload ends early, the frame's checksums hold: named and skipped */
	{
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		const struct guest_record *rec;
		struct sb_error err = { 0 };

		stream.n = 0;
		fault_hist(&stream, 0, 0, 0, span, 64, 0, 0, GUEST_FAULT_READ, hist, GUEST_FAULT_HIST_BUCKETS);
		pl.n -= 8; /* the last bucket gone */
		frame(&stream, GUEST_WIRE_VERSION, GUEST_RECORD_FAULT, 1, &pl);
		pl.n = GUEST_WIRE_FAULT_FIXED - 1;
		frame(&stream, GUEST_WIRE_VERSION, GUEST_RECORD_FAULT, 2, &pl);
		fault_hist(&stream, 3, 0, 0, span, 64, 0, 0, GUEST_FAULT_READ, hist, GUEST_FAULT_HIST_BUCKETS);
		CHECK(guest_decoder_feed(d, stream.b, stream.n) == stream.n);
		CHECK(guest_decoder_next(d, &rec, &err) == 1 && rec->type == GUEST_RECORD_FAULT);
		CHECK(guest_decoder_next(d, &rec, &err) == -EBADMSG);
		CHECK_MSG(strstr(err.msg, "record 1 at") && strstr(err.msg, "FAULT of 384 bytes for 40 buckets, expected 392"),
			  "%s", err.msg);
		CHECK(guest_decoder_next(d, &rec, &err) == -EBADMSG);
		CHECK_MSG(strstr(err.msg, "FAULT of 71 bytes, shorter than its fixed 72"), "%s", err.msg);
		CHECK(guest_decoder_next(d, &rec, &err) == 1 && rec->seq == 3 && rec->fault.touch_hist[6] == 48);
		CHECK(guest_decoder_next(d, &rec, &err) == 0 && guest_decoder_pending(d) == 0);
	}
	/* the stream cut inside a FAULT, then going on: the next FAULT decodes */
	for (size_t cut = 1; cut < GUEST_WIRE_HEADER_SIZE + GUEST_WIRE_FAULT_SIZE + GUEST_WIRE_TRAILER_SIZE; cut += 17) {
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };
		size_t at;

		stream.n = 0;
		at = fault_hist(&stream, 0, 0, 0, span, 64, 0, 0, GUEST_FAULT_READ, hist, GUEST_FAULT_HIST_BUCKETS);
		stream.n = at + cut;
		fault_hist(&stream, 1, 1, 0, span, 64, 0, 0, GUEST_FAULT_READ, hist, GUEST_FAULT_HIST_BUCKETS);
		fault_hist(&stream, 2, 2, 0, span, 64, 0, 0, GUEST_FAULT_READ, hist, GUEST_FAULT_HIST_BUCKETS);
		run(d, stream.b, stream.n, 0, &s);
		CHECK_MSG(s.errors >= 1, "cut %zu: no error", cut);
		CHECK_MSG(s.n >= 1 && s.types[s.n - 1] == GUEST_RECORD_FAULT && s.seqs[s.n - 1] == 2, "cut %zu", cut);
	}
	/* the stream ends inside a FAULT: nothing yet, and pending says so */
	{
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		struct seen s = { 0 };

		stream.n = 0;
		fault_hist(&stream, 0, 0, 0, span, 64, 0, 0, GUEST_FAULT_READ, hist, GUEST_FAULT_HIST_BUCKETS);
		run(d, stream.b, stream.n - 100, 0, &s);
		CHECK(s.errors == 0 && s.n == 0 && guest_decoder_pending(d) == stream.n - 100);
	}
}

static void test_fault_hist_layout(void)
{
	CHECK(guest_fault_hist_index(0) == 0 && guest_fault_hist_index(1) == 0 && guest_fault_hist_index(2) == 1);
	CHECK(guest_fault_hist_index(3) == 1 && guest_fault_hist_index(4) == 2 && guest_fault_hist_index(40000) == 15);
	CHECK(guest_fault_hist_index((1ull << 39) - 1) == 38 && guest_fault_hist_index(1ull << 39) == 39);
	CHECK(guest_fault_hist_index(UINT64_MAX) == GUEST_FAULT_HIST_BUCKETS - 1);
	for (unsigned b = 0; b < GUEST_FAULT_HIST_BUCKETS; b++) {
		CHECK(guest_fault_hist_index(guest_fault_hist_low(b)) == b);
		CHECK(b == GUEST_FAULT_HIST_BUCKETS - 1 || guest_fault_hist_index(guest_fault_hist_high(b) - 1) == b);
		CHECK(!b || guest_fault_hist_low(b) == guest_fault_hist_high(b - 1));
	}
}

/* ---- the fuzz corpus ---------------------------------------------------------- */
/*
 * guest/fuzz-corpus/ seeds the libFuzzer target (fuzz-telemetry.c), which
 * only a clang build has; here every seed is replayed through the decoder
 * in the normal build. An entry is one byte (the feed chunk size in its low
 * 7 bits, (b & 0x7f) * 37 + 1; the high bit: the fuzzer fixes checksums up,
 * which none of these needs) and a stream. The fault-* seeds come from this
 * file's encoder (`test-telemetry --write-corpus DIR` writes them), and the
 * replay checks they still match it; real-3vcpu-* are a real guest's stream.
 */

/* A destination's stream after a postcopy switch-over: SAMPLEs without a
 * HELLO, a FAULT per fault-linear vCPU. Returns the second FAULT's offset. */
static size_t corpus_fault_dest(struct buf *out, uint8_t first)
{
	uint64_t hist[GUEST_FAULT_HIST_BUCKETS], span;
	size_t at;

	out->n = 0;
	put(out, first, 1);
	sample(out, 40, 2, 3);
	span = touches(16384, 16, hist);
	fault_hist(out, 41, 0, 7000, 7000 + span, 16384, 0, 0, GUEST_FAULT_READ, hist, GUEST_FAULT_HIST_BUCKETS);
	span = touches(16384, 64, hist);
	at = fault_hist(out, 42, 1, 9000, 9000 + span, 16384, 1, (2ull << 20) + 4096, GUEST_FAULT_READ, hist,
			GUEST_FAULT_HIST_BUCKETS);
	sample(out, 43, 2, 4);
	return at;
}

static const struct corpus_entry {
	const char *name;
	int records, errors; /* what the replay must see */
	int faults;
	int pending;         /* the stream stops inside a record */
} corpus[] = {
	{ "real-3vcpu-run350", 6, 0, 0, 0 },
	{ "real-3vcpu-run350-fixup", 6, 0, 0, 0 },
	{ "real-3vcpu-cut", 3, 0, 0, 1 },
	{ "fault-dest", 2, 2, 2, 0 },
	{ "fault-dest-fixup", 2, 2, 2, 0 },
	{ "fault-dest-cut", 1, 1, 1, 1 },
};

static void corpus_make(const char *name, struct buf *out)
{
	if (!strcmp(name, "fault-dest"))
		corpus_fault_dest(out, 0x05);
	else if (!strcmp(name, "fault-dest-fixup"))
		corpus_fault_dest(out, 0x85);
	else if (!strcmp(name, "fault-dest-cut")) /* the stream stops in the second FAULT's touches */
		out->n = corpus_fault_dest(out, 0x05) + GUEST_WIRE_HEADER_SIZE + GUEST_WIRE_FAULT_FIXED + 20 * 8;
	else
		out->n = 0;
}

static int corpus_generated(const char *name)
{
	return !strncmp(name, "fault-", 6);
}

static void write_corpus(const char *dir)
{
	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
		char path[4096];
		FILE *f;

		if (!corpus_generated(corpus[i].name))
			continue;
		corpus_make(corpus[i].name, &other);
		snprintf(path, sizeof(path), "%s/%s", dir, corpus[i].name);
		f = fopen(path, "wb");
		CHECK_MSG(f, "%s", path);
		CHECK(fwrite(other.b, 1, other.n, f) == other.n);
		CHECK(fclose(f) == 0);
		printf("%s: %zu bytes\n", path, other.n);
	}
}

static void replay_corpus(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	int seen = 0;

	CHECK_MSG(dp, "the corpus %s", dir);
	while ((de = readdir(dp))) {
		_cleanup_guest_decoder_ struct guest_decoder *d = decoder();
		const struct corpus_entry *e = NULL;
		struct seen s = { 0 };
		char path[4096];
		FILE *f;
		int faults = 0;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		CHECK_MSG(f, "%s", path);
		stream.n = fread(stream.b, 1, sizeof(stream.b), f);
		CHECK(!ferror(f) && fclose(f) == 0);
		if (!stream.n)
			continue;
		run(d, stream.b + 1, stream.n - 1, (size_t)(stream.b[0] & 0x7f) * 37 + 1, &s);
		for (int i = 0; i < s.n; i++)
			faults += s.types[i] == GUEST_RECORD_FAULT;
		for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++)
			if (!strcmp(corpus[i].name, de->d_name))
				e = &corpus[i];
		if (!e)
			continue; /* an input the fuzzer found: decoding it without a crash is all */
		seen++;
		CHECK_MSG(s.n == e->records && s.errors == e->errors && faults == e->faults,
			  "%s: %d records, %d FAULT, %d errors (%s)", path, s.n, faults, s.errors, s.first_error);
		CHECK_MSG(!guest_decoder_pending(d) == !e->pending, "%s: %zu bytes pending", path, guest_decoder_pending(d));
		if (corpus_generated(e->name)) {
			corpus_make(e->name, &other);
			CHECK_MSG(other.n == stream.n && !memcmp(other.b, stream.b, other.n),
				  "%s differs from what this encoder writes: test-telemetry --write-corpus %s", path, dir);
		}
	}
	closedir(dp);
	CHECK_MSG(seen == (int)(sizeof(corpus) / sizeof(corpus[0])), "%s: %d of the %zu seeds", dir, seen,
		  sizeof(corpus) / sizeof(corpus[0]));
	printf("telemetry: the corpus in %s replayed\n", dir);
}

static void test_strings(void)
{
	CHECK(!strcmp(guest_exit_status_to_string(33), "the guest stopped cleanly"));
	CHECK(GUEST_EXIT_STATUS(GUEST_EXIT_BAD_PARAMS) == 35 && GUEST_EXIT_STATUS(GUEST_EXIT_FATAL) == 37);
	CHECK(strstr(guest_exit_status_to_string(1), "QEMU"));
	CHECK(!strcmp(guest_record_type_to_string(GUEST_RECORD_SAMPLE), "sample"));
	CHECK(!strcmp(guest_clock_source_to_string(GUEST_CLOCK_PIT), "pit"));
	CHECK(!strcmp(guest_end_reason_to_string(99), "unknown"));
}

/*
 * test-telemetry [--corpus DIR]: the checks, and a replay of the fuzz corpus in DIR
 * test-telemetry --write-corpus DIR: (re)writes the corpus entries made here
 */
int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write-corpus")) {
		write_corpus(argv[2]);
		return 0;
	}
	CHECK_MSG(argc == 1 || (argc == 3 && !strcmp(argv[1], "--corpus")),
		  "usage: test-telemetry [--corpus DIR | --write-corpus DIR]");
	test_valid_stream_any_split();
	test_take();
	test_contents();
	test_truncated();
	test_wrong_version();
	test_absurd_lengths();
	test_flipped_bits();
	test_garbage();
	test_semantics();
	test_feed_backpressure();
	test_hist_layout();
	test_percentiles();
	test_fault();
	test_fault_hist();
	test_fault_truncated();
	test_fault_hist_layout();
	test_strings();
	if (argc == 3)
		replay_corpus(argv[2]);
	printf("telemetry: all checks passed\n");
	return 0;
}
