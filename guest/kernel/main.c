// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The micro guest's bootstrap processor: read the command line, learn the
 * TSC rate, map memory, start the other vCPUs, say HELLO, then run its own
 * role with the controller in between (controller.c), and once stopped,
 * wait for the others and say END.
 */
#include "fmt.h"
#include "kernel.h"

#define STOP_WAIT_US 2000000ull /* how long workers get to stop */

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
	controller_start(now);
	tel_hello(now);

	for (unsigned s = 0; s < nr_vcpus; s++)
		WRITE_ONCE(vcpus[s].state, VCPU_RUNNING);
	run_role(&vcpus[0]);

	/* run_role returns on the BSP once stop_requested is set */
	unsigned stopped = wait_for_workers();

	now = rdtsc();
	tel_sample(now);
	tel_end(now, controller_end_reason(), stopped);
	guest_exit(GUEST_EXIT_STOPPED);
}
