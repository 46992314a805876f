/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The BPF probes (bpf/) as a source of report counters: which counter
 * names they feed, where each comes from (recorded in the report's
 * "probes"), and their cumulative values. docs/report-format.md lists the
 * names.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "report.h"

struct bpf_source;

typedef int (*counter_emit_fn)(void *userdata, const char *name, uint64_t cumulative);

/*
 * Opens and attaches the probes for QEMU pid and records each counter's
 * probe in r. zap_causes: count SPTE zaps by cause (bpf.sptes_zapped.CAUSE),
 * which costs every invalidation (sb_probe_options.zap_causes).
 */
int bpf_source_open(pid_t pid, struct report *r, bool zap_causes, struct bpf_source **ret, struct sb_error *err);

/*
 * Points the open probes at the next repetition's QEMU (pid): loading and
 * verifying the programs again for each repetition cost about 0.3 s of CPU.
 * The cumulative values go on; the sampler takes deltas from its baseline.
 */
int bpf_source_retarget(struct bpf_source *s, pid_t pid, struct sb_error *err);

/* Emits every available counter's cumulative value. */
int bpf_source_read(struct bpf_source *s, counter_emit_fn emit, void *userdata, struct sb_error *err);

void bpf_source_close(struct bpf_source *s);

/* Records every BPF counter as unavailable, with reason (probes off, or they could not load). */
int bpf_source_report_unavailable(struct report *r, const char *reason);
