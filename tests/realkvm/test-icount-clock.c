// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Runs inside `hostvm-exec --icount` (test hostvm-icount): the guest's
 * clock counts the instructions it executes, one ns each, so a loop of a
 * known number of instructions takes that many ns of CLOCK_MONOTONIC (plus
 * the timer interrupts that land in it), and the same every time. That is
 * what makes `bench/probe-cost`'s per-event figures in such a host VM
 * instruction counts (docs/probes.md, "Instruction counts").
 *
 * Under plain TCG or KVM the loop's ns follow the host's speed: a ratio far
 * from 1, and a spread between runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "check.h"
#include "clock.h"

#define LOOPS 50000000ull /* two instructions each: 100 M instructions, 0.1 s under -icount */
#define RUNS 5

static void spin(uint64_t n)
{
	__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

int main(void)
{
	double ratio[RUNS], lo = 1e9, hi = 0;

	spin(LOOPS / 10); /* translated once before the runs */
	for (int i = 0; i < RUNS; i++) {
		uint64_t t0 = mono_ns();

		spin(LOOPS);
		ratio[i] = (double)(mono_ns() - t0) / (2.0 * LOOPS);
		lo = ratio[i] < lo ? ratio[i] : lo;
		hi = ratio[i] > hi ? ratio[i] : hi;
		printf("icount-clock: run %d: %.4f ns per instruction\n", i + 1, ratio[i]);
	}
	/* the loop's own instructions, and the few thousand of each timer tick inside it */
	CHECK_MSG(lo >= 0.999 && hi <= 1.03,
		  "the loop took %.4f-%.4f ns per instruction, not 1: is QEMU running with -icount shift=0?", lo, hi);
	CHECK_MSG(hi - lo <= 0.01, "runs of the same loop differ by %.4f ns per instruction: the clock is not counting "
				   "instructions", hi - lo);
	printf("icount-clock: %.4f-%.4f ns per instruction over %d runs of %llu instructions\n", lo, hi, RUNS,
	       2 * LOOPS);
	return 0;
}
