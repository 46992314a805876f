// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The micro guest's bootstrap processor: read the command line, learn the
 * TSC rate, map memory, start the other vCPUs, say HELLO, then run its own
 * role with the controller in between: telemetry every interval, a look at
 * the serial port for a stop request, and the run length.
 */
#include "fmt.h"
#include "kernel.h"

#define POLL_US 10000           /* serial port check for GUEST_CMD_STOP */
#define STOP_WAIT_US 2000000ull /* how long workers get to stop */
#define SERIAL_LSR 5
#define LSR_DATA_READY 0x01

struct vcpu vcpus[GUEST_MAX_VCPUS];
unsigned nr_vcpus;
unsigned slot_of_index[GUEST_MAX_VCPUS];
struct guest_config cfg;
volatile int stop_requested;
volatile int fault_requested;
volatile uint64_t ctl_deadline = UINT64_MAX;

static uint64_t next_sample, next_poll, run_end, interval_cycles, poll_cycles;
static unsigned end_reason;

/* ---- exceptions ---------------------------------------------------------- */

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

static void idt_init(void)
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

/* ---- controller ---------------------------------------------------------- */

/* GUEST_CMD_FAULT starts the fault-linear passes; 1 when GUEST_CMD_STOP came. */
static int stop_byte_received(void)
{
	/* bounded: a host that floods the port cannot keep us here */
	for (int i = 0; i < 64 && (inb(GUEST_PORT_SERIAL + SERIAL_LSR) & LSR_DATA_READY); i++) {
		uint8_t c = inb(GUEST_PORT_SERIAL);

		if (c == GUEST_CMD_STOP)
			return 1;
		if (c == GUEST_CMD_FAULT)
			WRITE_ONCE(fault_requested, 1);
	}
	return 0;
}

static void request_stop(unsigned reason)
{
	if (!end_reason)
		end_reason = reason;
	WRITE_ONCE(stop_requested, 1);
}

void controller_tick(uint64_t now)
{
	uint64_t d;

	if (now >= next_poll) {
		next_poll = now + poll_cycles;
		if (stop_byte_received())
			request_stop(GUEST_END_HOST_REQUEST);
	}
	if (run_end && now >= run_end)
		request_stop(GUEST_END_RUN_LENGTH);
	if (now >= next_sample) {
		tel_sample(now);
		next_sample += interval_cycles;
		if (next_sample <= now) /* fell behind: skip, do not burst */
			next_sample = now + interval_cycles;
	}
	d = next_poll < next_sample ? next_poll : next_sample;
	if (run_end && run_end < d)
		d = run_end;
	ctl_deadline = d;
}

/* Every other vCPU gets STOP_WAIT_US to publish its final count. */
static unsigned wait_for_workers(void)
{
	uint64_t deadline = rdtsc() + us_to_cycles(STOP_WAIT_US);
	unsigned stopped;

	for (;;) {
		stopped = 1;
		for (unsigned s = 1; s < nr_vcpus; s++)
			if (READ_ONCE(vcpus[s].state) == VCPU_STOPPED)
				stopped++;
		if (stopped == nr_vcpus || rdtsc() > deadline)
			return stopped;
		cpu_relax();
	}
}

/* ---- boot ---------------------------------------------------------------- */

void kmain(void);
void kmain(void)
{
	char err[GUEST_WIRE_MAX_LOG];
	uint64_t now;
	int n;

	idt_init();
	idt_load();
	crc32_init();

	if (multiboot_read(err, sizeof(err)) < 0)
		fatal("%s", err);
	if (guest_cmdline_parse(cmdline_copy, &cfg, err, sizeof(err)) < 0)
		bad_params("%s", err);
	if (clock_init(cfg.clock, err, sizeof(err)) < 0) {
		if (cfg.clock)
			bad_params("%s", err);
		fatal("%s", err);
	}
	n = fw_cfg_nr_cpus();
	if (n < 1)
		fatal("no QEMU fw_cfg device to count vCPUs: run the guest on QEMU's pc or q35 machine");
	if (n > GUEST_MAX_VCPUS)
		bad_params("the VM has %d vCPUs; the guest starts at most %u: lower -smp", n, GUEST_MAX_VCPUS);
	nr_vcpus = (unsigned)n;

	paging_init(cfg.page_shift);
	if (smp_start(nr_vcpus, err, sizeof(err)) < 0)
		fatal("%s", err);
	if (region_init(&cfg, err, sizeof(err)) < 0)
		bad_params("%s", err);
	smp_assign_indexes();
	if (workload_assign(err, sizeof(err)) < 0)
		bad_params("%s", err);
	probe_measure_overhead();
	if (cfg.populate)
		region_populate();

	now = rdtsc();
	interval_cycles = us_to_cycles((uint64_t)cfg.interval_ms * 1000);
	poll_cycles = us_to_cycles(POLL_US);
	next_sample = now + interval_cycles;
	next_poll = now;
	run_end = cfg.run_ms ? now + us_to_cycles(cfg.run_ms * 1000) : 0;
	ctl_deadline = now;
	tel_hello(now);

	for (unsigned s = 0; s < nr_vcpus; s++)
		WRITE_ONCE(vcpus[s].state, VCPU_RUNNING);
	run_role(&vcpus[0]);

	/* run_role returns on the BSP once stop_requested is set */
	unsigned stopped = wait_for_workers();

	now = rdtsc();
	tel_sample(now);
	tel_end(now, end_reason, stopped);
	guest_exit(GUEST_EXIT_STOPPED);
}
