// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * TSC frequency, which the host needs to turn cycles into nanoseconds and
 * the guest needs for its own pacing. In order of preference: kvmclock
 * (KVM publishes tsc_to_system_mul/tsc_shift for the vCPU's TSC rate),
 * CPUID 0x15/0x16, then a 50 ms calibration against PIT channel 2.
 */
#include "fmt.h"
#include "kernel.h"

#define KVM_CPUID_SIGNATURE 0x40000000
#define KVM_CPUID_FEATURES 0x40000001
#define KVM_FEATURE_CLOCKSOURCE (1u << 0)
#define KVM_FEATURE_CLOCKSOURCE2 (1u << 3)
#define MSR_KVM_SYSTEM_TIME 0x12
#define MSR_KVM_SYSTEM_TIME_NEW 0x4b564d01

#define PIT_HZ 1193182ull
#define PIT_CALIBRATE_MS 50

uint64_t tsc_hz;
uint32_t pvclock_mul;
int8_t pvclock_shift;
uint8_t clock_source;

/* KVM's pvclock_vcpu_time_info */
struct pvclock {
	uint32_t version;
	uint32_t pad0;
	uint64_t tsc_timestamp;
	uint64_t system_time;
	uint32_t tsc_to_system_mul;
	int8_t tsc_shift;
	uint8_t flags;
	uint8_t pad[2];
} __attribute__((packed));

static struct pvclock pvti __attribute__((aligned(64)));

static int clock_kvm(void)
{
	struct cpuid_regs r = cpuid(KVM_CPUID_SIGNATURE, 0);
	uint32_t features, msr, version;
	uint64_t hz;

	/* "KVMKVMKVM\0\0\0" */
	if (r.ebx != 0x4b4d564b || r.ecx != 0x564b4d56 || r.edx != 0x4d)
		return -1;
	features = cpuid(KVM_CPUID_FEATURES, 0).eax;
	if (features & KVM_FEATURE_CLOCKSOURCE2)
		msr = MSR_KVM_SYSTEM_TIME_NEW;
	else if (features & KVM_FEATURE_CLOCKSOURCE)
		msr = MSR_KVM_SYSTEM_TIME;
	else
		return -1;

	wrmsr(msr, (uint64_t)(uintptr_t)&pvti | 1);
	for (int tries = 0; tries < 1000000; tries++) {
		version = READ_ONCE(pvti.version);
		barrier();
		pvclock_mul = READ_ONCE(pvti.tsc_to_system_mul);
		pvclock_shift = READ_ONCE(pvti.tsc_shift);
		barrier();
		if (version && !(version & 1) && version == READ_ONCE(pvti.version))
			break;
		cpu_relax();
	}
	wrmsr(msr, 0); /* we read it once; KVM need not keep it current */
	if (!pvclock_mul)
		return -1;

	/* ns = ((cycles << shift) * mul) >> 32, so hz = 1e9 * 2^32 / (mul << shift) */
	hz = (1000000000ull << 32) / pvclock_mul;
	hz = pvclock_shift >= 0 ? hz >> pvclock_shift : hz << -pvclock_shift;
	tsc_hz = hz;
	return 0;
}

static int clock_cpuid(void)
{
	uint32_t max = cpuid(0, 0).eax;
	struct cpuid_regs r;

	if (max >= 0x15) {
		r = cpuid(0x15, 0);
		if (r.eax && r.ebx && r.ecx) {
			tsc_hz = (uint64_t)r.ecx * r.ebx / r.eax;
			return 0;
		}
	}
	if (max >= 0x16) {
		r = cpuid(0x16, 0);
		if (r.eax & 0xffff) {
			tsc_hz = (uint64_t)(r.eax & 0xffff) * 1000000;
			return 0;
		}
	}
	return -1;
}

static int clock_pit(void)
{
	uint32_t count = (uint32_t)(PIT_HZ * PIT_CALIBRATE_MS / 1000);
	uint64_t t0, t1;
	uint32_t spins = 0;

	/* channel 2 gate on, speaker off; mode 0 counts down once and raises OUT2 */
	outb(0x61, (uint8_t)((inb(0x61) & ~0x02) | 0x01));
	outb(0x43, 0xb0);
	outb(0x42, (uint8_t)count);
	outb(0x42, (uint8_t)(count >> 8));
	t0 = rdtsc_ordered();
	while (!(inb(0x61) & 0x20))
		if (++spins == 0)
			return -1; /* no PIT */
	t1 = rdtsc_ordered();
	if (t1 <= t0)
		return -1;
	tsc_hz = (t1 - t0) * PIT_HZ / count;
	return 0;
}

int clock_init(uint8_t wanted, char *err, size_t errlen)
{
	static const char *const names[] = {
		[GUEST_CLOCK_KVMCLOCK] = "kvmclock",
		[GUEST_CLOCK_CPUID] = "cpuid",
		[GUEST_CLOCK_PIT] = "pit",
	};
	int (*const fns[])(void) = {
		[GUEST_CLOCK_KVMCLOCK] = clock_kvm,
		[GUEST_CLOCK_CPUID] = clock_cpuid,
		[GUEST_CLOCK_PIT] = clock_pit,
	};

	if (wanted) {
		if (fns[wanted]() == 0 && tsc_hz) {
			clock_source = wanted;
			return 0;
		}
		k_snprintf(err, errlen, "clock=%s: this vCPU model does not offer it; use clock=auto", names[wanted]);
		return -1;
	}
	for (uint8_t s = GUEST_CLOCK_KVMCLOCK; s <= GUEST_CLOCK_PIT; s++) {
		if (fns[s]() == 0 && tsc_hz) {
			clock_source = s;
			return 0;
		}
	}
	k_snprintf(err, errlen, "no TSC frequency from kvmclock, CPUID or the PIT");
	return -1;
}

uint64_t us_to_cycles(uint64_t us)
{
	/* split so nothing overflows for any run length we accept */
	return us / 1000000 * tsc_hz + us % 1000000 * tsc_hz / 1000000;
}

void delay_us(uint64_t us)
{
	uint64_t end = rdtsc() + us_to_cycles(us);

	while (rdtsc() < end)
		cpu_relax();
}
