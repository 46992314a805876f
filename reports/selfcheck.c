// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The self-check of a repetition (selfcheck.h): a BPF counter against the
 * KVM statistic that counts the same event. The rows were read with the
 * guest paused at the baseline and at the last row, so where the kernel
 * pairs the two they are equal; fewer BPF events mean its attach point
 * misses some (a call the compiler inlined, a flush the architecture's hook
 * made without a request), and the counter, with its split by cause, is
 * marked partial rather than shown as if exact.
 */
#include "selfcheck.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "strbuf.h"

static const struct {
	const char *bpf, *kvm, *what;
} pairs[] = {
	{ "bpf.kvm_remote_flush", "kvm.remote_tlb_flush_requests", "remote TLB flush requests" },
	{ "bpf.page_fault", "kvm.pf_taken", "page faults" },
};

/* The index of counter name in rep's rows, or -1. */
static long counter_index(const struct report_rep *rep, const char *name)
{
	for (size_t i = 0; i < rep->n_counters; i++)
		if (!strcmp(rep->counters[i], name))
			return (long)i;
	return -1;
}

static bool available(const struct report *r, const char *counter)
{
	const struct report_probe *p = report_find_probe(r, counter);

	return p && p->available;
}

/* Appends text to the partial note of every probes entry that is counter or counter.SOMETHING. */
static int mark_partial(struct report *r, const char *counter, const char *text)
{
	size_t len = strlen(counter);

	for (size_t i = 0; i < r->n_probes; i++) {
		struct report_probe *p = &r->probes[i];
		struct strbuf b = { 0 };

		if (!p->available || strncmp(p->counter, counter, len) || (p->counter[len] && p->counter[len] != '.'))
			continue;
		if (p->partial)
			strbuf_appendf(&b, "%s; ", p->partial);
		strbuf_appendf(&b, "%s", text);
		char *s = strbuf_steal(&b);
		if (!s)
			return -ENOMEM;
		free(p->partial);
		p->partial = s;
	}
	return 0;
}

int report_rep_selfcheck(struct report *r, const struct report_rep *rep)
{
	for (size_t i = 0; i < ARRAY_SIZE(pairs); i++) {
		long b = counter_index(rep, pairs[i].bpf), k = counter_index(rep, pairs[i].kvm);
		const struct report_probe *p = report_find_probe(r, pairs[i].bpf);
		char text[512];
		uint64_t nb, nk;
		int e;

		if (b < 0 || k < 0 || !available(r, pairs[i].bpf) || !available(r, pairs[i].kvm))
			continue;
		nb = report_rep_counter_total(rep, (size_t)b, -1);
		nk = report_rep_counter_total(rep, (size_t)k, -1);
		if (nb >= nk)
			continue;
		snprintf(text, sizeof(text),
			 "repetition %u: %s counted %llu of the %llu %s KVM counted (%s): its attach point (%s) misses "
			 "some",
			 rep->index, pairs[i].bpf, (unsigned long long)nb, (unsigned long long)nk, pairs[i].what,
			 pairs[i].kvm, p->source);
		e = mark_partial(r, pairs[i].bpf, text);
		if (e < 0)
			return e;
	}
	return 0;
}
