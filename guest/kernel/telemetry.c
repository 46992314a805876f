// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The telemetry stream (format in ../wire.h): records are built in one
 * buffer and leave through a single rep outsb to isa-debugcon, which costs
 * one exit per page instead of one per byte. The BSP sends everything in
 * normal operation; a vCPU that takes an exception sends its LOG and END
 * itself, so sending is serialised by a lock.
 */
#include "fmt.h"
#include "kernel.h"
#include "wire-crc32.h"

static struct wire_crc32 crc;
static uint8_t tx[GUEST_WIRE_HEADER_SIZE + GUEST_WIRE_MAX_PAYLOAD + GUEST_WIRE_TRAILER_SIZE];
static uint32_t tx_len, tx_seq;
static volatile uint32_t tx_owner; /* APIC ID + 1 of the sender, 0 when free */

void crc32_init(void)
{
	wire_crc32_init(&crc);
}

static void put8(uint8_t v)
{
	tx[tx_len++] = v;
}

static void put16(uint16_t v)
{
	put8((uint8_t)v);
	put8((uint8_t)(v >> 8));
}

static void put32(uint32_t v)
{
	put16((uint16_t)v);
	put16((uint16_t)(v >> 16));
}

static void put64(uint64_t v)
{
	put32((uint32_t)v);
	put32((uint32_t)(v >> 32));
}

static void wr32(uint32_t off, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		tx[off + i] = (uint8_t)(v >> (8 * i));
}

/* Re-entry from an exception on the same vCPU steals the lock: a fatal
 * message matters more than the record it interrupted. */
static void tx_lock(void)
{
	uint32_t me = (cpuid(1, 0).ebx >> 24) + 1, expected;

	if (READ_ONCE(tx_owner) == me)
		return;
	for (;;) {
		expected = 0;
		if (__atomic_compare_exchange_n(&tx_owner, &expected, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		cpu_relax();
	}
}

static void tx_unlock(void)
{
	__atomic_store_n(&tx_owner, 0, __ATOMIC_RELEASE);
}

static void begin(unsigned type)
{
	tx_len = 0;
	put32(GUEST_WIRE_MAGIC);
	put8(GUEST_WIRE_VERSION);
	put8((uint8_t)type);
	put16(0);
	put32(tx_seq++);
	put32(0); /* length, filled in by send() */
	put32(0); /* header CRC */
}

static void send(void)
{
	uint32_t len = tx_len - GUEST_WIRE_HEADER_SIZE;

	wr32(12, len);
	wr32(16, wire_crc32(&crc, tx, 16));
	put32(wire_crc32(&crc, tx + GUEST_WIRE_HEADER_SIZE, len));
	outsb(GUEST_PORT_TELEMETRY, tx, tx_len);
}

void tel_hello(uint64_t now)
{
	tx_lock();
	begin(GUEST_RECORD_HELLO);
	put16((uint16_t)nr_vcpus);
	put8(cfg.page_shift);
	put8(clock_source);
	put32(cfg.interval_ms);
	put64(tsc_hz);
	put32(pvclock_mul);
	put8((uint8_t)pvclock_shift);
	put8(cfg.populate ? GUEST_HELLO_POPULATED : 0);
	put16(0);
	put64(ram_bytes);
	put64(region_base);
	put64(region_bytes);
	put16(cfg.probe_vcpu < 0 ? 0xffff : (uint16_t)cfg.probe_vcpu);
	put16(0);
	put32(cfg.probe_gap_us);
	put64(cfg.run_ms);
	put64(cfg.seed);
	put64(boot_tsc);
	put64(now);
	put32(probe_overhead_cycles);
	put16(GUEST_HIST_BUCKETS);
	put8(GUEST_HIST_SUB_BITS);
	put8(0);
	for (unsigned i = 0; i < nr_vcpus; i++) {
		const struct vcpu *v = &vcpus[slot_of_index[i]];

		put8(v->pattern);
		put8(0);
		put16((uint16_t)v->apic_id);
		put64(v->slice_base);
		put64(v->slice_bytes);
	}
	send();
	tx_unlock();
}

void tel_sample(uint64_t now)
{
	uint32_t count_at;
	uint16_t nonzero = 0;
	uint64_t reads = 0;

	tx_lock();
	begin(GUEST_RECORD_SAMPLE);
	put64(now);
	put16((uint16_t)nr_vcpus);
	count_at = tx_len;
	put16(0); /* nonzero buckets, below */
	put32(0);
	for (unsigned i = 0; i < nr_vcpus; i++)
		put64(vcpus[slot_of_index[i]].ops);
	/* probe_reads is the sum of what we send, so the two always agree even
	 * while the probe keeps counting on another vCPU. */
	uint32_t reads_at = tx_len;

	put64(0);
	put64(probe_sum_cycles);
	put64(probe_max_cycles);
	for (unsigned b = 0; b < GUEST_HIST_BUCKETS; b++) {
		uint64_t c = READ_ONCE(probe_hist[b]);

		if (!c)
			continue;
		put16((uint16_t)b);
		put64(c);
		reads += c;
		nonzero++;
	}
	tx[count_at] = (uint8_t)nonzero;
	tx[count_at + 1] = (uint8_t)(nonzero >> 8);
	for (int i = 0; i < 8; i++)
		tx[reads_at + i] = (uint8_t)(reads >> (8 * i));
	send();
	tx_unlock();
}

void tel_end(uint64_t now, unsigned reason, unsigned stopped)
{
	tx_lock();
	begin(GUEST_RECORD_END);
	put64(now);
	put8((uint8_t)reason);
	put8(0);
	put16((uint16_t)stopped);
	send();
	tx_unlock();
}

void tel_fault(const struct vcpu *v, uint64_t tsc_start, uint64_t tsc_end, uint64_t pages, uint64_t mismatches,
	       uint64_t first_mismatch, const uint64_t touch[GUEST_FAULT_HIST_BUCKETS])
{
	tx_lock();
	begin(GUEST_RECORD_FAULT);
	put64(tsc_start);
	put64(tsc_end);
	put64(tsc_hz);
	put64(v->slice_base);
	put64(v->slice_bytes);
	put64(pages);
	put64(mismatches);
	put64(first_mismatch);
	put16((uint16_t)v->index);
	put8(cfg.fault_access);
	put8(GUEST_FAULT_HIST_BUCKETS);
	put32(0);
	for (unsigned b = 0; b < GUEST_FAULT_HIST_BUCKETS; b++)
		put64(touch[b]);
	send();
	tx_unlock();
}

static void tel_vlog(unsigned level, const char *fmt, va_list ap)
{
	char text[GUEST_WIRE_MAX_LOG + 1];
	size_t n = k_vsnprintf(text, sizeof(text), fmt, ap);

	if (n > GUEST_WIRE_MAX_LOG)
		n = GUEST_WIRE_MAX_LOG;
	tx_lock();
	begin(GUEST_RECORD_LOG);
	put8((uint8_t)level);
	put8(0);
	put16((uint16_t)n);
	for (size_t i = 0; i < n; i++)
		put8((uint8_t)text[i]);
	send();
	tx_unlock();
}

void tel_log(unsigned level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tel_vlog(level, fmt, ap);
	va_end(ap);
}

void guest_exit(unsigned code)
{
	outl(GUEST_PORT_EXIT, code);
	halt_forever(); /* without isa-debug-exit: park */
}

void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tel_vlog(GUEST_LOG_ERROR, fmt, ap);
	va_end(ap);
	tel_end(rdtsc(), GUEST_END_FATAL, 0);
	guest_exit(GUEST_EXIT_FATAL);
}

void bad_params(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tel_vlog(GUEST_LOG_ERROR, fmt, ap);
	va_end(ap);
	tel_end(rdtsc(), GUEST_END_BAD_PARAMS, 0);
	guest_exit(GUEST_EXIT_BAD_PARAMS);
}
