// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Starting the other vCPUs: QEMU's fw_cfg says how many there are, a
 * broadcast INIT-SIPI-SIPI starts them all through the real-mode
 * trampoline, and each reports its APIC ID. Indexes follow APIC ID order,
 * which is QEMU's cpu-index order, so vCPU i here is vCPU i in QMP.
 */
#include "fmt.h"
#include "kernel.h"

#define FW_CFG_PORT_SEL 0x510
#define FW_CFG_PORT_DATA 0x511
#define FW_CFG_SIGNATURE 0x0000
#define FW_CFG_NB_CPUS 0x0005

#define MSR_APIC_BASE 0x1b
#define APIC_BASE_ENABLE (1u << 11)
#define APIC_SVR 0xf0
#define APIC_ICR_LO 0x300
#define APIC_ICR_HI 0x310
#define ICR_BUSY (1u << 12)
#define ICR_ALL_BUT_SELF (3u << 18)
#define ICR_ASSERT (1u << 14)
#define ICR_INIT (5u << 8)
#define ICR_STARTUP (6u << 8)

#define AP_START_TIMEOUT_US 10000000ull

static volatile uint32_t *lapic;
static volatile uint32_t aps_arrived;

int fw_cfg_nr_cpus(void)
{
	char sig[4];
	uint16_t n;

	outw(FW_CFG_PORT_SEL, FW_CFG_SIGNATURE);
	for (int i = 0; i < 4; i++)
		sig[i] = (char)inb(FW_CFG_PORT_DATA);
	if (sig[0] != 'Q' || sig[1] != 'E' || sig[2] != 'M' || sig[3] != 'U')
		return -1;
	outw(FW_CFG_PORT_SEL, FW_CFG_NB_CPUS);
	n = inb(FW_CFG_PORT_DATA);
	n |= (uint16_t)(inb(FW_CFG_PORT_DATA) << 8);
	return n;
}

static void apic_write(unsigned reg, uint32_t v)
{
	lapic[reg / 4] = v;
}

static void apic_ipi(uint32_t icr_lo)
{
	apic_write(APIC_ICR_HI, 0);
	apic_write(APIC_ICR_LO, icr_lo);
	for (int i = 0; i < 1000000 && (lapic[APIC_ICR_LO / 4] & ICR_BUSY); i++)
		cpu_relax();
}

static unsigned my_apic_id(void)
{
	return cpuid(1, 0).ebx >> 24;
}

/* Called by boot.S on each AP, on its own stack, with the final page tables. */
void ap_main(uint32_t slot);
void ap_main(uint32_t slot)
{
	struct vcpu *v = &vcpus[slot];

	idt_load();
	v->apic_id = my_apic_id();
	WRITE_ONCE(v->state, VCPU_ARRIVED);
	__atomic_fetch_add(&aps_arrived, 1, __ATOMIC_SEQ_CST);
	while (READ_ONCE(v->state) != VCPU_RUNNING)
		cpu_relax();
	run_role(v);
	WRITE_ONCE(v->state, VCPU_STOPPED);
	halt_forever();
}

int smp_start(unsigned nr, char *err, size_t errlen)
{
	uint64_t base = rdmsr(MSR_APIC_BASE), deadline;
	size_t tramp_len = (size_t)(trampoline_end - trampoline_start);

	vcpus[0].apic_id = my_apic_id();
	vcpus[0].state = VCPU_ARRIVED;
	if (nr == 1)
		return 0;

	lapic = (volatile uint32_t *)(uintptr_t)(base & 0xfffff000u);
	if (!(base & APIC_BASE_ENABLE))
		wrmsr(MSR_APIC_BASE, base | APIC_BASE_ENABLE);
	apic_write(APIC_SVR, 0x1ff); /* software-enable, spurious vector 0xff */

	ap_max_slot = nr - 1;
	ap_stack_base = (uint64_t)(uintptr_t)alloc_pages((uint64_t)(nr - 1) * STACK_SIZE);
	__builtin_memcpy((void *)(uintptr_t)TRAMPOLINE_BASE, trampoline_start, tramp_len);

	apic_ipi(ICR_ALL_BUT_SELF | ICR_ASSERT | ICR_INIT);
	delay_us(10000);
	for (int sipi = 0; sipi < 2 && READ_ONCE(aps_arrived) < nr - 1; sipi++) {
		apic_ipi(ICR_ALL_BUT_SELF | ICR_STARTUP | (TRAMPOLINE_BASE >> 12));
		delay_us(200);
	}

	deadline = rdtsc() + us_to_cycles(AP_START_TIMEOUT_US);
	while (READ_ONCE(aps_arrived) < nr - 1) {
		if (rdtsc() > deadline) {
			k_snprintf(err, errlen, "only %u of %u vCPUs started within %lu s",
				   READ_ONCE(aps_arrived) + 1, nr, (unsigned long)(AP_START_TIMEOUT_US / 1000000));
			return -1;
		}
		cpu_relax();
	}
	return 0;
}

void smp_assign_indexes(void)
{
	for (unsigned s = 0; s < nr_vcpus; s++) {
		unsigned rank = 0;

		for (unsigned t = 0; t < nr_vcpus; t++)
			if (vcpus[t].apic_id < vcpus[s].apic_id)
				rank++;
		vcpus[s].index = rank;
		slot_of_index[rank] = s;
	}
}
