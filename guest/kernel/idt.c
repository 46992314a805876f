// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CPU exceptions: the IDT over boot.S's stubs, loaded by the BSP and by
 * each AP, and the handler every stub ends in, which reports the fault
 * and stops the guest.
 */
#include "kernel.h"

struct idt_entry {
	uint16_t off_lo, sel;
	uint8_t ist, type;
	uint16_t off_mid;
	uint32_t off_hi, reserved;
} __attribute__((packed));

static struct idt_entry idt[32] __attribute__((aligned(16)));

void idt_load(void)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) ptr = { sizeof(idt) - 1, (uint64_t)(uintptr_t)idt };

	__asm__ volatile("lidt %0" : : "m"(ptr));
}

void idt_init(void)
{
	for (unsigned v = 0; v < 32; v++) {
		uint64_t a = exc_stubs[v];

		idt[v] = (struct idt_entry){
			.off_lo = (uint16_t)a,
			.sel = 0x08,
			.type = 0x8e, /* present, interrupt gate */
			.off_mid = (uint16_t)(a >> 16),
			.off_hi = (uint32_t)(a >> 32),
		};
	}
}

struct exc_frame {
	uint64_t vector, error, rip, cs, rflags, rsp, ss;
};

void exception_handler(const struct exc_frame *f);
void exception_handler(const struct exc_frame *f)
{
	fatal("vCPU with APIC ID %u: CPU exception %lu, error code %lx, rip %lx, rsp %lx, cr2 %lx", cpuid(1, 0).ebx >> 24,
	      (unsigned long)f->vector, (unsigned long)f->error, (unsigned long)f->rip, (unsigned long)f->rsp,
	      (unsigned long)read_cr2());
}
