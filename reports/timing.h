/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whether a report's times are the hardware's or QEMU's emulator's
 * (docs/report-format.md#accelerators). Under TCG at any layer (the guest,
 * or the host VM a kernel arm ran in) counts are the kernel's own, but
 * times, rates and latencies are emulated: QEMU's nested SVM flushes its
 * emulated TLB on every VMRUN and ignores FLUSH_ASID. show, compare and the
 * exports mark such figures (docs/compare.md#emulated-timing).
 */
#pragma once

#include <stdbool.h>

#include <json-c/json.h>

struct report_timing {
	bool emulated;
	/* where it was read: "accel.timing"; "arms[].kernel.host_vm.accel" in a
	 * report written before accel; "none recorded" (native) */
	const char *source;
	/* why, for messages: accel.reason, or "arm LABEL's host VM ran under TCG" */
	char why[256];
};

/*
 * The timing of report's repetitions of arm label (NULL: of any arm):
 * accel.timing when the report has it; else emulated when the arm's (any
 * arm's) kernel.host_vm.accel is "tcg"; else native.
 */
void report_timing_of(struct json_object *report, const char *label, struct report_timing *out);

/*
 * Whether a metric's figure depends on time, so that it is emulated under
 * TCG: its unit (metric_info) is a time (ns, us, µs, ms, s) or a rate (ends
 * in "/s", ops/s too); without a unit, its name (before a '.' cause) ends in
 * _per_s, _ns, _ms or _s. Counts (unit "1"), bytes and pages are not.
 */
bool report_metric_time_based(const char *metric, const char *unit);

/* report_metric_time_based() with the unit from report's metric_info
 * (the metric's own entry, else its base name's before the '.'). */
bool report_metric_time_based_in(struct json_object *report, const char *metric);
