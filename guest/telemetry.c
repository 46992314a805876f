// SPDX-License-Identifier: GPL-2.0-or-later
#include "telemetry.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wire-crc32.h"

#define FRAME_MAX (GUEST_WIRE_HEADER_SIZE + GUEST_WIRE_MAX_PAYLOAD + GUEST_WIRE_TRAILER_SIZE)
#define BUF_SIZE (2 * FRAME_MAX)

struct guest_decoder {
	size_t start, end;  /* undecoded bytes: buf[start, end) */
	uint64_t consumed;  /* stream offset of buf[start] */
	uint64_t skipped;
	int scanning;       /* inside garbage already reported */
	int have_hello, have_seq, have_prev;
	uint32_t next_seq;
	struct guest_hello hello;
	struct guest_sample prev;
	struct guest_record rec;
	struct wire_crc32 crc;
	uint8_t buf[BUF_SIZE];
};

/* ---- little-endian reader ------------------------------------------------ */

struct reader {
	const uint8_t *p;
	size_t len, off;
};

static uint64_t rd(struct reader *r, unsigned bytes)
{
	uint64_t v = 0;

	/* callers check the payload length first; this only guards it */
	if (r->off + bytes > r->len)
		return 0;
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)r->p[r->off + i] << (8 * i);
	r->off += bytes;
	return v;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- decoder ------------------------------------------------------------- */

int guest_decoder_new(struct guest_decoder **out)
{
	struct guest_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	wire_crc32_init(&d->crc);
	*out = d;
	return 0;
}

void guest_decoder_free(struct guest_decoder *d)
{
	free(d);
}

size_t guest_decoder_feed(struct guest_decoder *d, const void *buf, size_t len)
{
	size_t room;

	if (d->start > 0 && d->end + len > BUF_SIZE) {
		memmove(d->buf, d->buf + d->start, d->end - d->start);
		d->end -= d->start;
		d->start = 0;
	}
	room = BUF_SIZE - d->end;
	if (len > room)
		len = room;
	memcpy(d->buf + d->end, buf, len);
	d->end += len;
	return len;
}

void guest_decoder_take(struct guest_decoder *d, const void *buf, size_t len,
			void (*on_record)(void *userdata, const struct guest_record *rec),
			void (*on_error)(void *userdata, const struct sb_error *err), void *userdata)
{
	const uint8_t *p = buf;

	for (size_t off = 0; off < len;) {
		off += guest_decoder_feed(d, p + off, len - off);
		for (;;) {
			const struct guest_record *rec;
			struct sb_error e = { 0 };
			int k = guest_decoder_next(d, &rec, &e);

			if (k == 0)
				break;
			if (k < 0 && on_error)
				on_error(userdata, &e);
			else if (k > 0)
				on_record(userdata, rec);
		}
	}
}

const struct guest_hello *guest_decoder_hello(const struct guest_decoder *d)
{
	return d->have_hello ? &d->hello : NULL;
}

uint64_t guest_decoder_offset(const struct guest_decoder *d)
{
	return d->consumed + (d->end - d->start);
}

uint64_t guest_decoder_skipped(const struct guest_decoder *d)
{
	return d->skipped;
}

size_t guest_decoder_pending(const struct guest_decoder *d)
{
	return d->end - d->start;
}

static void skip(struct guest_decoder *d, size_t n)
{
	d->start += n;
	d->consumed += n;
	d->skipped += n;
}

/* HELLO's entry of vCPU i: its pattern (the probe's on the probe vCPU alone) and its slice of the region. */
static int decode_hello_vcpu(struct guest_hello *h, struct reader *r, unsigned i, struct sb_error *err)
{
	struct guest_vcpu_info *v = &h->vcpu[i];

	v->pattern = (int)rd(r, 1);
	rd(r, 1);
	v->apic_id = (unsigned)rd(r, 2);
	v->slice_base = rd(r, 8);
	v->slice_bytes = rd(r, 8);
	if (v->pattern >= GUEST_PATTERN_COUNT)
		return sb_error_set(err, -EBADMSG, "HELLO gives vCPU %u the unknown pattern %d", i, v->pattern);
	if ((v->pattern == GUEST_PATTERN_PROBE) != ((int)i == h->probe_vcpu))
		return sb_error_set(err, -EBADMSG, "HELLO's vCPU %u pattern disagrees with the probe vCPU %d", i,
				    h->probe_vcpu);
	if (v->slice_bytes && (v->slice_base < h->region_base ||
			       v->slice_base + v->slice_bytes > h->region_base + h->region_bytes ||
			       v->slice_base + v->slice_bytes < v->slice_base))
		return sb_error_set(err, -EBADMSG, "HELLO gives vCPU %u a slice outside the region", i);
	return 0;
}

static int decode_hello(struct guest_decoder *d, struct reader *r, struct sb_error *err)
{
	struct guest_hello *h = &d->rec.hello;
	unsigned page_shift, buckets, sub_bits, probe, flags;

	if (d->have_hello)
		return sb_error_set(err, -EBADMSG, "a second HELLO: the stream holds more than one guest boot");
	if (r->len < GUEST_WIRE_HELLO_FIXED)
		return sb_error_set(err, -EBADMSG, "HELLO of %zu bytes, shorter than its fixed %d", r->len,
				    GUEST_WIRE_HELLO_FIXED);
	memset(h, 0, sizeof(*h));
	h->vcpus = (unsigned)rd(r, 2);
	page_shift = (unsigned)rd(r, 1);
	h->clock_source = (int)rd(r, 1);
	h->interval_ms = (unsigned)rd(r, 4);
	h->tsc_hz = rd(r, 8);
	h->pvclock_mul = (uint32_t)rd(r, 4);
	h->pvclock_shift = (int8_t)rd(r, 1);
	flags = (unsigned)rd(r, 1);
	rd(r, 2);
	h->ram_bytes = rd(r, 8);
	h->region_base = rd(r, 8);
	h->region_bytes = rd(r, 8);
	probe = (unsigned)rd(r, 2);
	rd(r, 2);
	h->probe_gap_us = (unsigned)rd(r, 4);
	h->run_ms = rd(r, 8);
	h->seed = rd(r, 8);
	h->boot_tsc = rd(r, 8);
	h->tsc = rd(r, 8);
	h->probe_overhead_cycles = (uint32_t)rd(r, 4);
	buckets = (unsigned)rd(r, 2);
	sub_bits = (unsigned)rd(r, 1);
	rd(r, 1);

	if (h->vcpus < 1 || h->vcpus > GUEST_MAX_VCPUS)
		return sb_error_set(err, -EBADMSG, "HELLO with %u vCPUs (1 to %d)", h->vcpus, GUEST_MAX_VCPUS);
	if (r->len != GUEST_WIRE_HELLO_FIXED + (size_t)h->vcpus * GUEST_WIRE_HELLO_PER_VCPU)
		return sb_error_set(err, -EBADMSG, "HELLO of %zu bytes for %u vCPUs, expected %zu", r->len, h->vcpus,
				    GUEST_WIRE_HELLO_FIXED + (size_t)h->vcpus * GUEST_WIRE_HELLO_PER_VCPU);
	if (buckets != GUEST_HIST_BUCKETS || sub_bits != GUEST_HIST_SUB_BITS)
		return sb_error_set(err, -EBADMSG,
				    "HELLO announces a histogram of %u buckets, %u sub-bucket bits; this snapbench reads %d and %d",
				    buckets, sub_bits, GUEST_HIST_BUCKETS, GUEST_HIST_SUB_BITS);
	if (flags & ~(unsigned)GUEST_HELLO_POPULATED)
		return sb_error_set(err, -EBADMSG, "HELLO with unknown flags %#x", flags);
	h->populated = flags & GUEST_HELLO_POPULATED;
	if (page_shift != 12 && page_shift != 21)
		return sb_error_set(err, -EBADMSG, "HELLO with page shift %u (12 or 21)", page_shift);
	h->page_size = 1u << page_shift;
	if (h->clock_source < GUEST_CLOCK_KVMCLOCK || h->clock_source > GUEST_CLOCK_OS)
		return sb_error_set(err, -EBADMSG, "HELLO with unknown clock source %d", h->clock_source);
	if (h->tsc_hz < 1000000 || h->tsc_hz > 100000000000ull)
		return sb_error_set(err, -EBADMSG, "HELLO with a TSC of %" PRIu64 " Hz (1 MHz to 100 GHz)", h->tsc_hz);
	if (h->interval_ms < 10 || h->interval_ms > 60000)
		return sb_error_set(err, -EBADMSG, "HELLO with a telemetry interval of %u ms", h->interval_ms);
	if (h->region_bytes == 0 || h->region_base + h->region_bytes < h->region_base)
		return sb_error_set(err, -EBADMSG, "HELLO with an empty or wrapping region");
	if (probe != 0xffff && probe >= h->vcpus)
		return sb_error_set(err, -EBADMSG, "HELLO puts the probe on vCPU %u of %u", probe, h->vcpus);
	h->probe_vcpu = probe == 0xffff ? -1 : (int)probe;

	for (unsigned i = 0; i < h->vcpus; i++) {
		int k = decode_hello_vcpu(h, r, i, err);
		if (k < 0)
			return k;
	}
	d->hello = *h;
	d->have_hello = 1;
	return 0;
}

static int decode_sample(struct guest_decoder *d, struct reader *r, struct sb_error *err)
{
	struct guest_sample *s = &d->rec.sample;
	unsigned nonzero;
	uint64_t sum = 0;
	int last = -1;

	if (!d->have_hello)
		return sb_error_set(err, -EBADMSG, "SAMPLE before HELLO: read the stream from the guest's start");
	if (r->len < GUEST_WIRE_SAMPLE_FIXED)
		return sb_error_set(err, -EBADMSG, "SAMPLE of %zu bytes, shorter than its fixed %d", r->len,
				    GUEST_WIRE_SAMPLE_FIXED);
	s->tsc = rd(r, 8);
	s->vcpus = (unsigned)rd(r, 2);
	nonzero = (unsigned)rd(r, 2);
	rd(r, 4);
	if (s->vcpus != d->hello.vcpus)
		return sb_error_set(err, -EBADMSG, "SAMPLE for %u vCPUs, HELLO said %u", s->vcpus, d->hello.vcpus);
	if (nonzero > GUEST_HIST_BUCKETS)
		return sb_error_set(err, -EBADMSG, "SAMPLE with %u histogram buckets, more than %d", nonzero,
				    GUEST_HIST_BUCKETS);
	if (r->len != GUEST_WIRE_SAMPLE_FIXED + (size_t)s->vcpus * 8 + (size_t)nonzero * GUEST_WIRE_SAMPLE_BUCKET)
		return sb_error_set(err, -EBADMSG, "SAMPLE of %zu bytes for %u vCPUs and %u buckets, expected %zu", r->len,
				    s->vcpus, nonzero,
				    GUEST_WIRE_SAMPLE_FIXED + (size_t)s->vcpus * 8 + (size_t)nonzero * GUEST_WIRE_SAMPLE_BUCKET);
	for (unsigned i = 0; i < s->vcpus; i++)
		s->ops[i] = rd(r, 8);
	s->probe_reads = rd(r, 8);
	s->probe_sum_cycles = rd(r, 8);
	s->probe_max_cycles = rd(r, 8);
	memset(s->hist, 0, sizeof(s->hist));
	for (unsigned i = 0; i < nonzero; i++) {
		unsigned idx = (unsigned)rd(r, 2);
		uint64_t c = rd(r, 8);

		if (idx >= GUEST_HIST_BUCKETS || (int)idx <= last || c == 0)
			return sb_error_set(err, -EBADMSG, "SAMPLE bucket %u (index %u, count %" PRIu64
					    "): indexes must ascend below %d and counts be nonzero",
					    i, idx, c, GUEST_HIST_BUCKETS);
		if (sum + c < sum)
			return sb_error_set(err, -EBADMSG, "SAMPLE bucket counts overflow");
		sum += c;
		s->hist[idx] = c;
		last = (int)idx;
	}
	if (sum != s->probe_reads)
		return sb_error_set(err, -EBADMSG, "SAMPLE buckets add up to %" PRIu64 " reads, the record says %" PRIu64,
				    sum, s->probe_reads);
	if (s->tsc < d->hello.tsc)
		return sb_error_set(err, -EBADMSG, "SAMPLE taken before HELLO (TSC %" PRIu64 " < %" PRIu64 ")", s->tsc,
				    d->hello.tsc);
	if (d->have_prev) {
		const struct guest_sample *p = &d->prev;

		if (s->tsc < p->tsc)
			return sb_error_set(err, -EBADMSG, "SAMPLE's TSC went back from %" PRIu64 " to %" PRIu64, p->tsc,
					    s->tsc);
		for (unsigned i = 0; i < s->vcpus; i++)
			if (s->ops[i] < p->ops[i])
				return sb_error_set(err, -EBADMSG,
						    "SAMPLE's op count of vCPU %u went back from %" PRIu64 " to %" PRIu64, i,
						    p->ops[i], s->ops[i]);
		for (unsigned b = 0; b < GUEST_HIST_BUCKETS; b++)
			if (s->hist[b] < p->hist[b])
				return sb_error_set(err, -EBADMSG, "SAMPLE's histogram bucket %u went back", b);
	}
	d->prev = *s;
	d->have_prev = 1;
	return 0;
}

static int decode_end(struct guest_decoder *d, struct reader *r, struct sb_error *err)
{
	struct guest_end *e = &d->rec.end;

	if (r->len != GUEST_WIRE_END_SIZE)
		return sb_error_set(err, -EBADMSG, "END of %zu bytes, expected %d", r->len, GUEST_WIRE_END_SIZE);
	e->tsc = rd(r, 8);
	e->reason = (int)rd(r, 1);
	rd(r, 1);
	e->vcpus_stopped = (unsigned)rd(r, 2);
	if (e->reason < GUEST_END_HOST_REQUEST || e->reason > GUEST_END_FATAL)
		return sb_error_set(err, -EBADMSG, "END with unknown reason %d", e->reason);
	if (d->have_hello && e->vcpus_stopped > d->hello.vcpus)
		return sb_error_set(err, -EBADMSG, "END says %u vCPUs stopped of %u", e->vcpus_stopped, d->hello.vcpus);
	return 0;
}

static int decode_log(struct guest_decoder *d, struct reader *r, struct sb_error *err)
{
	struct guest_log *l = &d->rec.log;
	size_t n;

	if (r->len < GUEST_WIRE_LOG_FIXED)
		return sb_error_set(err, -EBADMSG, "LOG of %zu bytes, shorter than its fixed %d", r->len, GUEST_WIRE_LOG_FIXED);
	l->level = (int)rd(r, 1);
	rd(r, 1);
	n = (size_t)rd(r, 2);
	if (l->level != GUEST_LOG_INFO && l->level != GUEST_LOG_ERROR)
		return sb_error_set(err, -EBADMSG, "LOG with unknown level %d", l->level);
	if (n > GUEST_WIRE_MAX_LOG || r->len != GUEST_WIRE_LOG_FIXED + n)
		return sb_error_set(err, -EBADMSG, "LOG of %zu bytes with %zu bytes of text (at most %d)", r->len, n,
				    GUEST_WIRE_MAX_LOG);
	/* text goes to terminals and JSON: keep it printable */
	for (size_t i = 0; i < n; i++) {
		uint8_t c = r->p[r->off + i];

		l->text[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	l->text[n] = '\0';
	return 0;
}

/*
 * The touch histogram tiles the pass (wire.h): its counts add up to the
 * pages, and the pass's time lies between what its buckets' bounds allow.
 */
static int check_touch_hist(const struct guest_fault *f, struct sb_error *err)
{
	uint64_t span = f->tsc_end - f->tsc_start, sum = 0, least = 0, most = 0;
	bool open_ended = false;

	for (unsigned b = 0; b < GUEST_FAULT_HIST_BUCKETS; b++) {
		uint64_t c = f->touch_hist[b], lo, hi;

		if (!c)
			continue;
		if (sum + c < sum)
			return sb_error_set(err, -EBADMSG, "FAULT's touch histogram counts overflow");
		sum += c;
		if (b == GUEST_FAULT_HIST_BUCKETS - 1)
			open_ended = true;
		if (__builtin_mul_overflow(c, guest_fault_hist_low(b), &lo) || __builtin_add_overflow(least, lo, &least))
			least = UINT64_MAX;
		if (__builtin_mul_overflow(c, guest_fault_hist_high(b), &hi) || __builtin_add_overflow(most, hi, &most))
			most = UINT64_MAX;
	}
	if (sum != f->pages)
		return sb_error_set(err, -EBADMSG,
				    "FAULT's touch histogram holds %" PRIu64 " touches, the record says %" PRIu64 " pages", sum,
				    f->pages);
	if (least > span)
		return sb_error_set(err, -EBADMSG,
				    "FAULT's touch histogram does not fit its pass of %" PRIu64
				    " cycles: its touches take at least %" PRIu64,
				    span, least);
	if (!open_ended && (sum ? most <= span : span != 0))
		return sb_error_set(err, -EBADMSG,
				    "FAULT's touch histogram does not fill its pass of %" PRIu64
				    " cycles: its touches take less than %" PRIu64,
				    span, most);
	return 0;
}

static int decode_fault(struct guest_decoder *d, struct reader *r, struct sb_error *err)
{
	struct guest_fault *f = &d->rec.fault;
	unsigned buckets;

	if (r->len < GUEST_WIRE_FAULT_FIXED)
		return sb_error_set(err, -EBADMSG, "FAULT of %zu bytes, shorter than its fixed %d", r->len,
				    GUEST_WIRE_FAULT_FIXED);
	f->tsc_start = rd(r, 8);
	f->tsc_end = rd(r, 8);
	f->tsc_hz = rd(r, 8);
	f->base = rd(r, 8);
	f->bytes = rd(r, 8);
	f->pages = rd(r, 8);
	f->mismatches = rd(r, 8);
	f->first_mismatch = rd(r, 8);
	f->vcpu = (unsigned)rd(r, 2);
	f->access = (int)rd(r, 1);
	buckets = (unsigned)rd(r, 1);
	rd(r, 4);
	if (buckets != GUEST_FAULT_HIST_BUCKETS)
		return sb_error_set(err, -EBADMSG, "FAULT with a touch histogram of %u buckets; this snapbench reads %d",
				    buckets, GUEST_FAULT_HIST_BUCKETS);
	if (r->len != GUEST_WIRE_FAULT_SIZE)
		return sb_error_set(err, -EBADMSG, "FAULT of %zu bytes for %u buckets, expected %d", r->len, buckets,
				    GUEST_WIRE_FAULT_SIZE);
	for (unsigned b = 0; b < GUEST_FAULT_HIST_BUCKETS; b++)
		f->touch_hist[b] = rd(r, 8);
	if (f->access != GUEST_FAULT_READ && f->access != GUEST_FAULT_WRITE)
		return sb_error_set(err, -EBADMSG, "FAULT with unknown access %d", f->access);
	if (!f->tsc_hz || f->tsc_end < f->tsc_start)
		return sb_error_set(err, -EBADMSG, "FAULT's pass ends (TSC %" PRIu64 ") before it starts (%" PRIu64
				    ") or has no TSC rate (%" PRIu64 " Hz)", f->tsc_end, f->tsc_start, f->tsc_hz);
	if (f->pages != (f->bytes + 4095) / 4096 || f->base + f->bytes < f->base)
		return sb_error_set(err, -EBADMSG, "FAULT touched %" PRIu64 " pages of a %" PRIu64 "-byte slice", f->pages,
				    f->bytes);
	if (f->mismatches > f->pages || (f->mismatches && (f->first_mismatch < f->base ||
							    f->first_mismatch >= f->base + f->bytes)))
		return sb_error_set(err, -EBADMSG, "FAULT's %" PRIu64 " mismatches (the first at %#" PRIx64
				    ") do not fit its %" PRIu64 " pages from %#" PRIx64, f->mismatches, f->first_mismatch,
				    f->pages, f->base);
	if (d->have_hello && f->vcpu >= d->hello.vcpus)
		return sb_error_set(err, -EBADMSG, "FAULT from vCPU %u of %u", f->vcpu, d->hello.vcpus);
	return check_touch_hist(f, err);
}

/* Skip to the next possible magic (keeping a partial one at the end);
 * report only the first error of a stretch of garbage. */
static int resync(struct guest_decoder *d, int code)
{
	size_t i;

	for (i = d->start + 1; i + 4 <= d->end; i++)
		if (le32(d->buf + i) == GUEST_WIRE_MAGIC)
			break;
	skip(d, i - d->start);
	if (d->scanning)
		return 0;
	d->scanning = 1;
	return code;
}

enum { HEADER_OK = 1, HEADER_MORE, HEADER_SKIPPED };

/*
 * The header at d->start: HEADER_OK (whole, its checksum holds), HEADER_MORE
 * (wait for more bytes), HEADER_SKIPPED (garbage skipped, already reported),
 * or a negative errno with err set (the decoder moved on to the next magic).
 */
static int check_header(struct guest_decoder *d, struct sb_error *err)
{
	const uint8_t *h = d->buf + d->start;
	size_t avail = d->end - d->start;
	uint64_t off = d->consumed;
	unsigned version;
	int ret;

	if (avail < 4)
		return HEADER_MORE;
	if (le32(h) != GUEST_WIRE_MAGIC) {
		uint8_t b[4] = { h[0], h[1], h[2], h[3] };

		ret = resync(d, -EBADMSG);
		if (ret < 0)
			return sb_error_set(err, ret,
					    "telemetry: no record at stream offset %" PRIu64
					    " (bytes %02x %02x %02x %02x); skipping to the next record",
					    off, b[0], b[1], b[2], b[3]);
		return HEADER_SKIPPED;
	}
	if (avail < 5)
		return HEADER_MORE;
	/* Another version may lay out even the header differently. */
	version = h[4];
	if (version != GUEST_WIRE_VERSION) {
		ret = resync(d, -EPROTONOSUPPORT);
		if (ret < 0)
			return sb_error_set(err, ret,
					    "telemetry: record at stream offset %" PRIu64
					    " is version %u; this snapbench reads version %d: boot the guest image built with it",
					    off, version, GUEST_WIRE_VERSION);
		return HEADER_SKIPPED;
	}
	if (avail < GUEST_WIRE_HEADER_SIZE)
		return HEADER_MORE;
	if (wire_crc32(&d->crc, h, 16) != le32(h + 16)) {
		ret = resync(d, -EBADMSG);
		if (ret < 0)
			return sb_error_set(err, ret,
					    "telemetry: record header at stream offset %" PRIu64
					    " fails its checksum; skipping to the next record",
					    off);
		return HEADER_SKIPPED;
	}
	return HEADER_OK;
}

/* The payload of a record of type into d->rec. */
static int decode_payload(struct guest_decoder *d, unsigned type, struct reader *r, struct sb_error *err)
{
	switch (type) {
	case GUEST_RECORD_HELLO:
		return decode_hello(d, r, err);
	case GUEST_RECORD_SAMPLE:
		return decode_sample(d, r, err);
	case GUEST_RECORD_END:
		return decode_end(d, r, err);
	case GUEST_RECORD_LOG:
		return decode_log(d, r, err);
	case GUEST_RECORD_FAULT:
		return decode_fault(d, r, err);
	default:
		return sb_error_set(err, -EBADMSG, "unknown record type %u", type);
	}
}

int guest_decoder_next(struct guest_decoder *d, const struct guest_record **rec, struct sb_error *err)
{
	for (;;) {
		const uint8_t *h = d->buf + d->start;
		size_t avail = d->end - d->start, frame;
		uint64_t off = d->consumed;
		uint32_t len, seq;
		unsigned type;
		struct reader r;
		int ret;

		ret = check_header(d, err);
		if (ret < 0)
			return ret;
		if (ret == HEADER_MORE)
			return 0;
		if (ret == HEADER_SKIPPED)
			continue;
		type = h[5];
		seq = le32(h + 8);
		len = le32(h + 12);
		if (len > GUEST_WIRE_MAX_PAYLOAD) {
			d->scanning = 0;
			(void)resync(d, -EBADMSG);
			return sb_error_set(err, -EBADMSG,
					    "telemetry: record at stream offset %" PRIu64 " claims %" PRIu32
					    " bytes, more than the %d any record has; skipping it",
					    off, len, GUEST_WIRE_MAX_PAYLOAD);
		}
		frame = GUEST_WIRE_HEADER_SIZE + (size_t)len + GUEST_WIRE_TRAILER_SIZE;
		if (avail < frame)
			return 0;

		/* The header checksum held, so the length is trusted: a bad
		 * record is skipped whole. */
		d->scanning = 0;
		if (wire_crc32(&d->crc, h + GUEST_WIRE_HEADER_SIZE, len) != le32(h + GUEST_WIRE_HEADER_SIZE + len)) {
			skip(d, frame);
			return sb_error_set(err, -EBADMSG,
					    "telemetry: record at stream offset %" PRIu64 " fails its payload checksum; skipped",
					    off);
		}

		r = (struct reader){ .p = h + GUEST_WIRE_HEADER_SIZE, .len = len };
		memset(&d->rec, 0, offsetof(struct guest_record, hello));
		if (d->have_seq && seq < d->next_seq) {
			skip(d, frame);
			return sb_error_set(err, -EBADMSG,
					    "telemetry: record %" PRIu32 " at stream offset %" PRIu64
					    " comes after record %" PRIu32 ": sequence numbers went back; skipped",
					    seq, off, d->next_seq - 1);
		}
		ret = decode_payload(d, type, &r, err);
		if (ret < 0) {
			skip(d, frame);
			sb_error_prefix(err, "telemetry: record %" PRIu32 " at stream offset %" PRIu64, seq, off);
			return ret;
		}

		d->rec.type = (int)type;
		d->rec.seq = seq;
		d->rec.offset = off;
		d->rec.lost = d->have_seq ? seq - d->next_seq : seq;
		d->have_seq = 1;
		d->next_seq = seq + 1;
		d->start += frame;
		d->consumed += frame;
		*rec = &d->rec;
		return 1;
	}
}

/* ---- figures ------------------------------------------------------------- */

double guest_cycles_to_ns(const struct guest_hello *h, double cycles)
{
	return cycles * 1e9 / (double)h->tsc_hz;
}

double guest_ops_per_sec(const struct guest_hello *h, const struct guest_sample *a, const struct guest_sample *b,
			 unsigned vcpu)
{
	if (vcpu >= h->vcpus || b->tsc <= a->tsc || b->ops[vcpu] < a->ops[vcpu])
		return 0.0;
	return (double)(b->ops[vcpu] - a->ops[vcpu]) * (double)h->tsc_hz / (double)(b->tsc - a->tsc);
}

int guest_hist_window(const uint64_t later[GUEST_HIST_BUCKETS], const uint64_t earlier[GUEST_HIST_BUCKETS],
		      uint64_t out[GUEST_HIST_BUCKETS], struct sb_error *err)
{
	for (unsigned b = 0; b < GUEST_HIST_BUCKETS; b++) {
		if (later[b] < earlier[b])
			return sb_error_set(err, -EINVAL,
					    "histogram bucket %u went down from %" PRIu64 " to %" PRIu64
					    ": pass the later sample first, both from the same run",
					    b, earlier[b], later[b]);
		out[b] = later[b] - earlier[b];
	}
	return 0;
}

int guest_hist_percentiles(const uint64_t hist[GUEST_HIST_BUCKETS], uint64_t tsc_hz, const double *pct, size_t n,
			   double *ns, struct sb_error *err)
{
	uint64_t total = 0;

	if (!tsc_hz)
		return sb_error_set(err, -EINVAL, "percentiles need the TSC frequency from HELLO, got 0");
	for (unsigned b = 0; b < GUEST_HIST_BUCKETS; b++)
		total += hist[b];
	if (!total)
		return sb_error_set(err, -ENODATA, "the latency histogram is empty: the probe made no reads in this window");

	for (size_t i = 0; i < n; i++) {
		uint64_t cum = 0;
		double rank;

		if (!(pct[i] > 0.0 && pct[i] <= 100.0))
			return sb_error_set(err, -EINVAL, "percentile %g out of range: give (0, 100]", pct[i]);
		/* the read whose rank is ceil(p * total), 1-based */
		rank = ceil(pct[i] / 100.0 * (double)total);
		if (rank < 1)
			rank = 1;
		for (unsigned b = 0; b < GUEST_HIST_BUCKETS; b++) {
			double lo, width, v;

			if (!hist[b] || (double)(cum + hist[b]) < rank) {
				cum += hist[b];
				continue;
			}
			/* spread the bucket's reads evenly over its width */
			lo = (double)guest_hist_low(b);
			width = (double)(guest_hist_high(b) - guest_hist_low(b));
			v = lo + width * (rank - (double)cum - 0.5) / (double)hist[b];
			ns[i] = v * 1e9 / (double)tsc_hz;
			break;
		}
	}
	return 0;
}

double guest_fault_pass_ns(const struct guest_fault *f)
{
	return f->tsc_hz ? (double)(f->tsc_end - f->tsc_start) * 1e9 / (double)f->tsc_hz : NAN;
}

int guest_fault_hist_ns(uint64_t tsc_hz, unsigned b, double *lower_ns, double *width_ns)
{
	if (b >= GUEST_FAULT_HIST_BUCKETS || !tsc_hz)
		return -EINVAL;
	*lower_ns = (double)guest_fault_hist_low(b) * 1e9 / (double)tsc_hz;
	*width_ns = (double)(guest_fault_hist_high(b) - guest_fault_hist_low(b)) * 1e9 / (double)tsc_hz;
	return 0;
}

const char *guest_fault_access_to_string(int access)
{
	switch (access) {
	case GUEST_FAULT_READ: return "read";
	case GUEST_FAULT_WRITE: return "write";
	default: return NULL;
	}
}

const char *guest_record_type_to_string(int type)
{
	switch (type) {
	case GUEST_RECORD_HELLO: return "hello";
	case GUEST_RECORD_SAMPLE: return "sample";
	case GUEST_RECORD_END: return "end";
	case GUEST_RECORD_LOG: return "log";
	case GUEST_RECORD_FAULT: return "fault";
	}
	return "unknown";
}

const char *guest_end_reason_to_string(int reason)
{
	switch (reason) {
	case GUEST_END_HOST_REQUEST: return "stopped on request";
	case GUEST_END_RUN_LENGTH: return "run length reached";
	case GUEST_END_BAD_PARAMS: return "bad parameters";
	case GUEST_END_FATAL: return "fatal error";
	}
	return "unknown";
}

const char *guest_clock_source_to_string(int source)
{
	switch (source) {
	case GUEST_CLOCK_KVMCLOCK: return "kvmclock";
	case GUEST_CLOCK_CPUID: return "cpuid";
	case GUEST_CLOCK_PIT: return "pit";
	case GUEST_CLOCK_OS: return "os";
	}
	return "unknown";
}

const char *guest_exit_status_to_string(int status)
{
	if (status == GUEST_EXIT_STATUS(GUEST_EXIT_STOPPED))
		return "the guest stopped cleanly";
	if (status == GUEST_EXIT_STATUS(GUEST_EXIT_BAD_PARAMS))
		return "the guest rejected its command line (its LOG record says why)";
	if (status == GUEST_EXIT_STATUS(GUEST_EXIT_FATAL))
		return "the guest failed (CPU exception or boot failure; its LOG record says what)";
	if (status == 0)
		return "the guest reset or triple-faulted (QEMU -no-reboot)";
	if (status == 1)
		return "QEMU failed to start or run the VM (see its stderr)";
	return "unexpected QEMU exit status";
}
