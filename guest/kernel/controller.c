// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The controller, run on the BSP between chunks of its own role
 * (controller_tick() from workload.c): telemetry every interval, a look at
 * the serial port for a stop or fault request, and the run length.
 */
#include "kernel.h"

#define POLL_US 10000           /* serial port check for GUEST_CMD_STOP */
#define SERIAL_LSR 5
#define LSR_DATA_READY 0x01

volatile uint64_t ctl_deadline = UINT64_MAX;

static uint64_t next_sample, next_poll, run_end, interval_cycles, poll_cycles;
static unsigned end_reason;

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

void controller_start(uint64_t now)
{
	interval_cycles = us_to_cycles((uint64_t)cfg.interval_ms * 1000);
	poll_cycles = us_to_cycles(POLL_US);
	next_sample = now + interval_cycles;
	next_poll = now;
	run_end = cfg.run_ms ? now + us_to_cycles(cfg.run_ms * 1000) : 0;
	ctl_deadline = now;
}

unsigned controller_end_reason(void)
{
	return end_reason;
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
