/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A Linux guest's workload, driven through qemu-guest-agent (qga/): the
 * probe program (guest/linux-probe/) copied in with guest-file-write and
 * started with guest-exec, stress-ng --vm started next to it, and the
 * probe's telemetry read back with guest-file-read every interval by a
 * thread, into a pipe whose read end is the VM's telemetry stream: the
 * sampler decodes it exactly as the micro guest's (docs/linux-guests.md).
 *
 * The thread owns the agent client between linux_workload_start() and
 * linux_workload_stop(); nobody else may use it meanwhile.
 */
#pragma once

#include <stdint.h>

#include "error.h"
#include "spec.h"

struct qga_client;
struct linux_workload;

/* $SNAPBENCH_LINUX_PROBE, the build tree's guest/linux-probe/, or LIBEXECDIR/snapbench/. *ret is malloc'ed. */
int linux_probe_find(char **ret, struct sb_error *err);

/*
 * Waits up to timeout_ms for the agent to answer (a guest that is still
 * booting has none yet), then copies the probe in, starts stress-ng and
 * the probe, and the reader. *telemetry_fd (the caller owns it) is the
 * read end of the telemetry stream.
 */
int linux_workload_start(struct qga_client *agent, const struct run_spec *spec, const char *probe_path,
			 int timeout_ms, struct linux_workload **ret, int *telemetry_fd, struct sb_error *err);

/*
 * Stops the probe (SIGTERM: its last SAMPLE and END go out) and stress-ng,
 * reads the rest of the telemetry, closes the stream and removes the
 * probe's files from the guest. Returns < 0 when something could not be
 * stopped cleanly (err says what); the workload is stopped either way.
 */
int linux_workload_stop(struct linux_workload *w, int timeout_ms, struct sb_error *err);

/* stress-ng's own summary (--metrics-brief), once stopped; "" if none. */
const char *linux_workload_stress_output(const struct linux_workload *w);

/* Stops what still runs (best effort) and frees; NULL is fine. */
void linux_workload_free(struct linux_workload *w);
