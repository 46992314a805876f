// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench-linux-probe: the micro guest's latency probe for Linux guests.
 * A static program the build produces; the runner copies it into the
 * guest with guest-file-write and starts it with guest-exec next to
 * stress-ng (docs/linux-guests.md).
 *
 * It maps and populates a region of its own, then reads one byte per
 * 4 KiB page across it, wrapping around, with a gap of spinning between
 * two reads, timing each read with the TSC exactly as the micro guest
 * does (lfence; rdtsc; lfence; load; lfence; rdtsc; lfence). Every
 * interval it appends a SAMPLE record to its output file in the micro
 * guest's telemetry format (guest/wire.h, docs/guest.md): the host reads
 * the file with guest-file-read and feeds it to the same decoder. It
 * reports itself as one "vCPU" whose role is the probe, its reads as that
 * vCPU's operations, and clock source "os" (the TSC calibrated against
 * CLOCK_MONOTONIC_RAW).
 *
 * It stops on SIGTERM or SIGINT, or after --duration-ms, with a final
 * SAMPLE and END. Exit status 0; 2 for bad arguments (a message on stderr
 * says which and what is accepted); 1 when it cannot run (no memory, the
 * output file).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "wire-crc32.h"
#include "wire.h"

#define PAGE 4096u

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static inline uint64_t rdtsc_ordered(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi)::"memory");
	return (uint64_t)hi << 32 | lo;
}

static uint64_t mono_raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- records ---- */

static struct wire_crc32 crc;

struct rec {
	uint8_t buf[GUEST_WIRE_HEADER_SIZE + GUEST_WIRE_MAX_PAYLOAD + GUEST_WIRE_TRAILER_SIZE];
	size_t len;
};

static void put(struct rec *r, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		r->buf[r->len++] = (uint8_t)(v >> (8 * i));
}

static void put_at(struct rec *r, size_t off, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		r->buf[off + i] = (uint8_t)(v >> (8 * i));
}

static int out_fd = -1;
static uint32_t seq;

static void begin(struct rec *r, int type)
{
	r->len = 0;
	put(r, GUEST_WIRE_MAGIC, 4);
	put(r, GUEST_WIRE_VERSION, 1);
	put(r, (uint64_t)type, 1);
	put(r, 0, 2);
	put(r, seq, 4);
	put(r, 0, 4); /* length, below */
	put(r, 0, 4); /* header CRC, below */
}

/* Finishes and appends the record with one write(), so a reader never sees half a record's header. */
static int send_rec(struct rec *r)
{
	uint32_t payload = (uint32_t)(r->len - GUEST_WIRE_HEADER_SIZE);

	put_at(r, 12, payload);
	put_at(r, 16, wire_crc32(&crc, r->buf, 16));
	put(r, wire_crc32(&crc, r->buf + GUEST_WIRE_HEADER_SIZE, payload), 4);
	seq++;
	for (size_t off = 0; off < r->len;) {
		ssize_t k = write(out_fd, r->buf + off, r->len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		off += (size_t)k;
	}
	return 0;
}

/* ---- the probe ---- */

struct state {
	uint64_t tsc_hz, boot_tsc;
	uint64_t reads, sum, max;
	uint64_t hist[GUEST_HIST_BUCKETS];
};

static int send_sample(struct rec *r, const struct state *s)
{
	unsigned nonzero = 0;

	for (unsigned b = 0; b < GUEST_HIST_BUCKETS; b++)
		nonzero += s->hist[b] != 0;
	begin(r, GUEST_RECORD_SAMPLE);
	put(r, rdtsc_ordered(), 8);
	put(r, 1, 2);
	put(r, nonzero, 2);
	put(r, 0, 4);
	put(r, s->reads, 8); /* ops[0]: the probe's reads */
	put(r, s->reads, 8);
	put(r, s->sum, 8);
	put(r, s->max, 8);
	for (unsigned b = 0; b < GUEST_HIST_BUCKETS; b++)
		if (s->hist[b]) {
			put(r, b, 2);
			put(r, s->hist[b], 8);
		}
	return send_rec(r);
}

static uint64_t calibrate_tsc(void)
{
	uint64_t t0 = mono_raw_ns(), c0 = rdtsc_ordered(), t1, c1;

	do
		t1 = mono_raw_ns();
	while (t1 - t0 < 100000000u);
	c1 = rdtsc_ordered();
	return (uint64_t)((double)(c1 - c0) * 1e9 / (double)(t1 - t0));
}

static int parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*ret = v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: snapbench-linux-probe --out FILE [--region-mib N] [--gap-us N] [--interval-ms N]\n"
		   "                             [--duration-ms N] [--seed N]\n"
		   "  --out FILE        telemetry records are appended here (snapbench's micro guest format)\n"
		   "  --region-mib N    memory the probe reads, 1 to 65536 MiB (default 64)\n"
		   "  --gap-us N        spinning between two reads, 0 to 10000000 (default 100)\n"
		   "  --interval-ms N   a SAMPLE record this often, 10 to 60000 (default 100)\n"
		   "  --duration-ms N   stop by itself after N ms, 0: at SIGTERM (default 0)\n"
		   "  --seed N          recorded in HELLO (default 1)\n");
}

struct args {
	uint64_t region_mib, gap_us, interval_ms, duration_ms, seed;
	const char *out;
};

/* Fills *ret; returns -1 to go on, else the exit code (0 after --help, 2 bad arguments). */
static int parse_argv(int argc, char **argv, struct args *ret)
{
	uint64_t region_mib = 64, gap_us = 100, interval_ms = 100, duration_ms = 0, seed = 1;
	const char *out = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0;
		if (!strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--out")) {
			out = v;
			bad = !v;
		} else if (!strcmp(a, "--region-mib")) {
			bad = parse_u64(v, 65536, &region_mib) < 0 || region_mib == 0;
		} else if (!strcmp(a, "--gap-us")) {
			bad = parse_u64(v, 10000000, &gap_us) < 0;
		} else if (!strcmp(a, "--interval-ms")) {
			bad = parse_u64(v, 60000, &interval_ms) < 0 || interval_ms < 10;
		} else if (!strcmp(a, "--duration-ms")) {
			bad = parse_u64(v, UINT32_MAX, &duration_ms) < 0;
		} else if (!strcmp(a, "--seed")) {
			bad = parse_u64(v, UINT64_MAX, &seed) < 0;
		} else {
			fprintf(stderr, "snapbench-linux-probe: unknown argument '%.64s'\n", a);
			usage(stderr);
			return 2;
		}
		if (bad) {
			fprintf(stderr, "snapbench-linux-probe: %s: bad or missing value '%.64s'\n", a, v ? v : "");
			usage(stderr);
			return 2;
		}
		i++;
	}
	if (!out) {
		fprintf(stderr, "snapbench-linux-probe: --out FILE is required\n");
		usage(stderr);
		return 2;
	}
	*ret = (struct args){ region_mib, gap_us, interval_ms, duration_ms, seed, out };
	return -1;
}

/* The HELLO record: the clock, the region, the probe's settings. */
static int send_hello(struct rec *r, const struct state *s, const struct args *a, volatile uint8_t *region,
		      size_t bytes)
{
	uint32_t overhead = UINT32_MAX;
	for (int i = 0; i < 1000; i++) {
		uint64_t t0 = rdtsc_ordered(), t1 = rdtsc_ordered();
		if (t1 - t0 < overhead)
			overhead = (uint32_t)(t1 - t0);
	}
	struct sysinfo si;
	uint64_t ram = sysinfo(&si) == 0 ? (uint64_t)si.totalram * si.mem_unit : 0;
	int cpu = sched_getcpu();

	begin(r, GUEST_RECORD_HELLO);
	put(r, 1, 2);                         /* vcpus: the probe alone */
	put(r, 12, 1);                        /* page shift */
	put(r, GUEST_CLOCK_OS, 1);
	put(r, a->interval_ms, 4);
	put(r, s->tsc_hz, 8);
	put(r, 0, 4);                         /* pvclock mul */
	put(r, 0, 1);                         /* pvclock shift */
	put(r, GUEST_HELLO_POPULATED, 1);
	put(r, 0, 2);
	put(r, ram, 8);
	put(r, (uint64_t)(uintptr_t)region, 8);
	put(r, bytes, 8);
	put(r, 0, 2);                         /* probe vCPU 0 */
	put(r, 0, 2);
	put(r, a->gap_us, 4);
	put(r, a->duration_ms, 8);
	put(r, a->seed, 8);
	put(r, s->boot_tsc, 8);
	put(r, rdtsc_ordered(), 8);
	put(r, overhead, 4);
	put(r, GUEST_HIST_BUCKETS, 2);
	put(r, GUEST_HIST_SUB_BITS, 1);
	put(r, 0, 1);
	put(r, GUEST_PATTERN_PROBE, 1);       /* vCPU 0 */
	put(r, 0, 1);
	put(r, cpu < 0 ? 0 : (uint64_t)cpu, 2); /* the CPU it started on, in place of an APIC ID */
	put(r, 0, 8);
	put(r, 0, 8);
	return send_rec(r);
}

/*
 * Reads a page of the region, spins gap, again, a SAMPLE every interval,
 * until SIGTERM or the duration: returns the END reason, or -1 when a
 * record could not be written.
 */
static int probe_loop(struct rec *r, struct state *s, const struct args *a, volatile uint8_t *region, size_t bytes)
{
	uint64_t interval = s->tsc_hz / 1000 * a->interval_ms, gap = s->tsc_hz / 1000000 * a->gap_us;
	uint64_t start = rdtsc_ordered(), next = start + interval;
	uint64_t end = a->duration_ms ? start + s->tsc_hz / 1000 * a->duration_ms : UINT64_MAX;
	size_t off = 0;

	for (;;) {
		uint64_t t0 = rdtsc_ordered();
		(void)region[off];
		uint64_t t1 = rdtsc_ordered(), d = t1 - t0;
		s->reads++;
		s->sum += d;
		if (d > s->max)
			s->max = d;
		s->hist[guest_hist_index(d)]++;
		off += PAGE;
		if (off >= bytes)
			off = 0;
		if (t1 >= next) {
			if (send_sample(r, s) < 0)
				return -1;
			next += interval;
			if (next <= t1)
				next = t1 + interval; /* fell a whole interval behind: skip */
		}
		if (stop_requested)
			return GUEST_END_HOST_REQUEST;
		if (t1 >= end)
			return GUEST_END_RUN_LENGTH;
		for (uint64_t t = rdtsc_ordered() + gap; gap && rdtsc_ordered() < t && !stop_requested;)
			__asm__ volatile("pause");
	}
}

static int run(const struct args *a)
{
	static struct state s;
	static struct rec r;
	int reason;

	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	wire_crc32_init(&crc);
	s.boot_tsc = rdtsc_ordered();
	out_fd = open(a->out, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (out_fd < 0) {
		fprintf(stderr, "snapbench-linux-probe: %s: %s\n", a->out, strerror(errno));
		return 1;
	}
	size_t bytes = (size_t)a->region_mib << 20;
	volatile uint8_t *region = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED) {
		fprintf(stderr, "snapbench-linux-probe: cannot map %llu MiB: %s; lower --region-mib\n",
			(unsigned long long)a->region_mib, strerror(errno));
		return 1;
	}
	/* populate: every page backed and holding data, as the micro guest's populate=on */
	for (size_t off = 0; off < bytes; off += PAGE)
		region[off] = (uint8_t)(off >> 12);

	s.tsc_hz = calibrate_tsc();
	if (send_hello(&r, &s, a, region, bytes) < 0) {
		fprintf(stderr, "snapbench-linux-probe: writing %s: %s\n", a->out, strerror(errno));
		return 1;
	}
	reason = probe_loop(&r, &s, a, region, bytes);
	if (reason < 0)
		return 1;
	if (send_sample(&r, &s) < 0)
		return 1;
	begin(&r, GUEST_RECORD_END);
	put(&r, rdtsc_ordered(), 8);
	put(&r, (uint64_t)reason, 1);
	put(&r, 0, 1);
	put(&r, 1, 2);
	if (send_rec(&r) < 0)
		return 1;
	close(out_fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct args a;
	int r;

	r = parse_argv(argc, argv, &a);
	if (r >= 0)
		return r;
	return run(&a);
}
