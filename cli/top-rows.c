// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench top's rows of one VM for a refresh: each counter of the
 * probes, each cause and each VM exit reason that happened, with its total
 * since top took the VM, its share of its group and its rate over the last
 * interval; then KVM's own stats (kvm.NAME) as a group of their own. Those
 * --filter takes, sorted by --sort.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit-reasons.h"
#include "kvm-flavour.h"
#include "top.h"

static uint64_t counter_events(const struct sb_probe_snapshot *s, int c)
{
	uint64_t n = 0;

	for (int x = 0; x < SB_CTX_MAX; x++)
		n += s->c.count[c][x].events;
	return n;
}

static uint64_t cause_events(const struct sb_probe_snapshot *s, int at, int k)
{
	uint64_t n = 0;

	for (int x = 0; x < SB_CTX_MAX; x++)
		n += s->c.cause[at][x][k];
	return n;
}

static size_t filter_rows(const struct top_args *a, struct row *rows, size_t n)
{
	size_t kept = 0;

	if (!a->have_re)
		return n;
	/* the name without the VM's prefix: 'unmap|tlb' works alike on one VM and on all */
	for (size_t i = 0; i < n; i++)
		if (regexec(&a->re, rows[i].name, 0, NULL, 0) == 0)
			rows[kept++] = rows[i];
	return kept;
}

/* The probes' rows between first (the start), prev and cur (the last interval); those the filter takes. */
static size_t make_bpf_rows(struct sb_probes *p, const struct top_args *a, const struct sb_probe_snapshot *first,
			    const struct sb_probe_snapshot *prev, const struct sb_probe_snapshot *cur, struct row *rows)
{
	double dt = (double)(cur->mono_ns - prev->mono_ns) / 1e9;
	uint64_t counters_total = 0;
	size_t n = 0;

	if (dt <= 0)
		dt = 1e-9;
	for (int c = 0; c < SB_C_MAX; c++) {
		const struct sb_counter_info *ci = sb_probes_counter(p, c);
		struct row *r = &rows[n];

		if (!ci->available)
			continue;
		snprintf(r->name, sizeof(r->name), "%s", ci->name);
		r->group = "counter";
		r->total = counter_events(cur, c) - counter_events(first, c);
		r->current = (double)(counter_events(cur, c) - counter_events(prev, c)) / dt;
		r->value = -1;
		counters_total += r->total;
		n++;
	}
	for (size_t i = 0; i < n; i++)
		rows[i].share = counters_total ? (double)rows[i].total / (double)counters_total : 0;
	if (sb_probes_attribution(p))
		for (int at = 0; at < SB_ATTR_MAX; at++) {
			uint64_t sum = 0;
			size_t start = n;

			for (int k = 0; k < SB_CAUSE_MAX; k++) {
				uint64_t t = cause_events(cur, at, k) - cause_events(first, at, k);
				struct row *r = &rows[n];

				if (!t)
					continue; /* a cause that never happened is no row (kvm_stat leaves out zeros too) */
				snprintf(r->name, sizeof(r->name), "%s.%s", sb_attr_name(at), sb_cause_name(k));
				r->group = "cause";
				r->total = t;
				r->current = (double)(cause_events(cur, at, k) - cause_events(prev, at, k)) / dt;
				r->value = -1;
				sum += t;
				n++;
			}
			for (size_t i = start; i < n; i++)
				rows[i].share = sum ? (double)rows[i].total / (double)sum : 0;
		}
	/* the target's exits by reason, as perf kvm stat groups them; %Total of its exits */
	if (sb_probes_counter(p, SB_C_KVM_EXIT)->available) {
		enum sb_exit_isa isa = sb_exit_isa_of_module(kvm_flavour_host()->module);
		uint64_t sum = 0;
		size_t start = n;
		char name[64];

		for (unsigned slot = 0; slot < SB_EXIT_SLOTS; slot++) {
			uint64_t t = cur->c.exit_reason[slot] - first->c.exit_reason[slot];
			struct row *r = &rows[n];

			if (!t)
				continue;
			snprintf(r->name, sizeof(r->name), "kvm_exit.%s", sb_exit_slot_name(slot, isa, name, sizeof(name)));
			r->group = "exit_reason";
			r->total = t;
			r->current = (double)(cur->c.exit_reason[slot] - prev->c.exit_reason[slot]) / dt;
			r->value = -1;
			sum += t;
			n++;
		}
		for (size_t i = start; i < n; i++)
			rows[i].share = sum ? (double)rows[i].total / (double)sum : 0;
	}
	return filter_rows(a, rows, n);
}

/* KVM's nanosecond totals (halt_wait_ns ...): shown, but no events to share a total with the counters */
static bool is_duration(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && !strcmp(name + n - 3, "_ns");
}

/* The kvm.* rows of v, as kvm_stat shows them: those that counted something since the start. */
static size_t make_kvm_rows(struct top_vm *v, const struct top_args *a, struct row *rows)
{
	double dt = (double)(v->kcur.mono_ns - v->kprev.mono_ns) / 1e9;
	uint64_t sum = 0;
	size_t n = 0;

	if (!v->kvm)
		return 0;
	if (dt <= 0)
		dt = 1e-9;
	for (size_t i = 0; i < top_kvm_count(v->kvm); i++) {
		int64_t f = v->kfirst.values[i], c = v->kcur.values[i], p = v->kprev.values[i];
		struct row *r = &rows[n];

		/* a stat missing from a read, or a counter gone back (none should), makes no row */
		if (f < 0 || c <= f)
			continue;
		snprintf(r->name, sizeof(r->name), "%s", top_kvm_name(v->kvm, i));
		r->group = "kvm";
		r->total = (uint64_t)(c - f);
		r->current = p >= 0 && c >= p ? (double)(c - p) / dt : 0;
		r->value = c;
		if (!is_duration(r->name))
			sum += r->total;
		n++;
	}
	for (size_t i = 0; i < n; i++)
		rows[i].share = is_duration(rows[i].name) ? -1 : sum ? (double)rows[i].total / (double)sum : 0;
	return filter_rows(a, rows, n);
}

/* qsort() takes no argument for its comparison: the order of the rows being sorted */
static enum top_sort sort_by;

static int cmp_rows(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	switch (sort_by) {
	case TOP_SORT_TOTAL:
		if (a->total != b->total)
			return a->total < b->total ? 1 : -1;
		break;
	case TOP_SORT_CURRENT:
		if (a->current != b->current)
			return a->current < b->current ? 1 : -1;
		if (a->total != b->total)
			return a->total < b->total ? 1 : -1;
		break;
	case TOP_SORT_NAME:
		break;
	}
	return strcmp(a->name, b->name);
}

/* v's rows for this refresh: the probes' sorted, then KVM's sorted, a group of their own */
void top_make_rows(struct top_vm *v, const struct top_args *a)
{
	sort_by = a->sort;
	v->nbpf = make_bpf_rows(v->p, a, &v->first, &v->prev, &v->cur, v->rows);
	v->nrows = v->nbpf + make_kvm_rows(v, a, v->rows + v->nbpf);
	qsort(v->rows, v->nbpf, sizeof(*v->rows), cmp_rows);
	qsort(v->rows + v->nbpf, v->nrows - v->nbpf, sizeof(*v->rows), cmp_rows);
}

bool top_filter_takes(const struct top_args *a, const char *name)
{
	return !a->have_re || regexec(&a->re, name, 0, NULL, 0) == 0;
}
