/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "report.h"

/*
 * A repetition's self-check (docs/report-format.md#self-check): where a BPF
 * counter and a KVM statistic count the same event (remote TLB flush
 * requests: bpf.kvm_remote_flush and kvm.remote_tlb_flush_requests; page
 * faults: bpf.page_fault, the kvm:kvm_page_fault tracepoint, which also
 * sees the MMIO faults pf_taken leaves out, and kvm.pf_taken), their totals
 * over the repetition's rows are compared. A BPF counter that saw fewer
 * events than KVM counted is partial: its probes entry, and those of its
 * causes (COUNTER.CAUSE), get a "partial" text naming the repetition, the
 * two numbers and the attach point, added to for each repetition found
 * so. A pair either side of which is missing or unavailable is not
 * checked. 0, or -ENOMEM.
 */
int report_rep_selfcheck(struct report *r, const struct report_rep *rep);
