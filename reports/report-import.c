// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A repetition read back from another report's JSON into the model: a
 * kernel arm's repetition runs in a host VM whose run engine writes its own
 * report (docs/kernel-arms.md); the outer run takes that repetition over.
 * The reverse of b_rep() in report-json.c for the fields the model holds.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "report.h"
#include "selfcheck.h"
#include "strv.h"

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static double get_num(struct json_object *o, const char *key, double dflt)
{
	struct json_object *v = get(o, key);

	return v && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))
		       ? json_object_get_double(v)
		       : dflt;
}

static int64_t get_i64(struct json_object *o, const char *key, int64_t dflt)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : dflt;
}

static uint64_t get_u64(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_int) ? json_object_get_uint64(v) : 0;
}

static int dup_str(char **field, const char *s)
{
	free(*field);
	*field = s ? strdup(s) : NULL;
	return s && !*field ? -ENOMEM : 0;
}

static int window_from(const char *s)
{
	for (int w = 0; w < _REPORT_WINDOW_MAX; w++)
		if (s && !strcmp(s, report_window_to_string((enum report_window)w)))
			return w;
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The histogram layout: every bucket any row names, by lower bound. */
static int import_layout(struct report_rep *rep, struct json_object *tl)
{
	size_t n = 0, cap = 0, rows = json_object_array_length(tl);
	_cleanup_free_ double *pairs = NULL; /* lower, width */
	_cleanup_free_ double *lo = NULL, *wi = NULL;

	for (size_t i = 0; i < rows; i++) {
		struct json_object *h = get(json_object_array_get_idx(tl, i), "latency_hist");
		struct json_object *bl = get(h, "bucket_ns"), *bw = get(h, "width_ns");
		size_t k = bl && bw ? json_object_array_length(bl) : 0;
		for (size_t j = 0; j < k && j < json_object_array_length(bw); j++) {
			double l = json_object_get_double(json_object_array_get_idx(bl, j));
			bool seen = false;
			for (size_t m = 0; m < n && !seen; m++)
				seen = pairs[2 * m] == l;
			if (seen)
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				double *np = realloc(pairs, cap * 2 * sizeof(*np));
				if (!np)
					return -ENOMEM;
				pairs = np;
			}
			pairs[2 * n] = l;
			pairs[2 * n + 1] = json_object_get_double(json_object_array_get_idx(bw, j));
			n++;
		}
	}
	if (n == 0)
		return 0;
	qsort(pairs, n, 2 * sizeof(double), cmp_double);
	lo = malloc(n * sizeof(*lo));
	wi = malloc(n * sizeof(*wi));
	if (!lo || !wi)
		return -ENOMEM;
	for (size_t m = 0; m < n; m++) {
		lo[m] = pairs[2 * m];
		wi[m] = pairs[2 * m + 1];
	}
	return report_rep_set_hist_layout(rep, n, lo, wi);
}

static int import_row(struct report_rep *rep, struct json_object *row)
{
	struct json_object *c = get(row, "counters"), *h = get(row, "latency_hist"), *m = get(row, "migration");
	struct report_row *r;
	int w = window_from(get_str(row, "window")), k;

	if (w < 0)
		return -EINVAL;
	k = report_rep_append_row(rep, get_num(row, "t_s", 0), get_num(row, "dt_s", 0), (enum report_window)w, &r);
	if (k < 0)
		return k;
	if (c && json_object_is_type(c, json_type_object)) {
		json_object_object_foreach(c, name, v) {
			k = report_row_set(rep, r, name, json_object_get_uint64(v));
			if (k < 0)
				return k;
		}
	}
	if (h) {
		struct json_object *bl = get(h, "bucket_ns"), *cnt = get(h, "counts");
		size_t nb = bl && cnt ? json_object_array_length(bl) : 0;
		for (size_t j = 0; j < nb && j < json_object_array_length(cnt); j++) {
			double l = json_object_get_double(json_object_array_get_idx(bl, j));
			size_t idx = 0;
			while (idx < rep->hist.n && rep->hist.lower_ns[idx] != l)
				idx++;
			if (idx == rep->hist.n)
				return -EINVAL;
			k = report_row_add_hist(rep, r, (uint32_t)idx, json_object_get_uint64(json_object_array_get_idx(cnt, j)));
			if (k < 0)
				return k;
		}
	}
	if (m) {
		r->has_migration = true;
		snprintf(r->migration.status, sizeof(r->migration.status), "%s", get_str(m, "status") ? get_str(m, "status") : "");
		r->migration.transferred = get_u64(m, "transferred");
		r->migration.remaining = get_u64(m, "remaining");
		r->migration.pages_per_s = get_num(m, "pages_per_s", 0);
		r->migration.dirty_pages_rate = get_num(m, "dirty_pages_rate", -1);
		if (get(m, "dirty_sync_count")) {
			r->migration.precopy = true;
			r->migration.dirty_sync_count = get_u64(m, "dirty_sync_count");
			r->migration.pages = get_u64(m, "pages");
		}
	}
	return 0;
}

/* A migration's "destination" (b_dest()) */
static int import_dest(struct report_dest *dest, struct json_object *d)
{
	dest->pid = (int)get_i64(d, "pid", 0);
	if (dup_str(&dest->exit, get_str(d, "exit")) < 0 || dup_str(&dest->log, get_str(d, "log")) < 0)
		return -ENOMEM;
	return 0;
}

/* rep.migration (dirty-log); its iterations are derived from the timeline again */
static int import_live_migration(struct report_live_migration *lm, struct json_object *m)
{
	struct json_object *d = get(m, "destination");

	if (!m)
		return 0;
	lm->set = true;
	snprintf(lm->status, sizeof(lm->status), "%s", get_str(m, "status") ? get_str(m, "status") : "");
	snprintf(lm->completion, sizeof(lm->completion), "%s", get_str(m, "completion") ? get_str(m, "completion") : "");
	snprintf(lm->tracking, sizeof(lm->tracking), "%s", get_str(m, "tracking") ? get_str(m, "tracking") : "");
	lm->started_s = get_num(m, "started_s", -1);
	lm->iterating_s = get_num(m, "iterating_s", -1);
	lm->ring_size = (unsigned)get_u64(m, "ring_size");
	lm->max_bandwidth = get_u64(m, "max_bandwidth");
	lm->downtime_limit_ms = (unsigned)get_u64(m, "downtime_limit_ms");
	lm->page_size = get_u64(m, "page_size");
	if (import_dest(&lm->dest, d) < 0 || dup_str(&lm->error, get_str(m, "error")) < 0)
		return -ENOMEM;
	return 0;
}

/* rep.postcopy.pass.touch_hist: three arrays of one length, at most REPORT_TOUCH_BUCKETS_MAX; else none */
static void import_touch_hist(struct report_postcopy *pc, struct json_object *h)
{
	struct json_object *lo = get(h, "bucket_ns"), *wi = get(h, "width_ns"), *cnt = get(h, "counts");
	size_t n;

	pc->n_touch = 0;
	if (!lo || !wi || !cnt || !json_object_is_type(lo, json_type_array) || !json_object_is_type(wi, json_type_array) ||
	    !json_object_is_type(cnt, json_type_array))
		return;
	n = json_object_array_length(lo);
	if (n > REPORT_TOUCH_BUCKETS_MAX || json_object_array_length(wi) != n || json_object_array_length(cnt) != n)
		return;
	for (size_t k = 0; k < n; k++) {
		pc->touch_lower_ns[k] = json_object_get_double(json_object_array_get_idx(lo, k));
		pc->touch_width_ns[k] = json_object_get_double(json_object_array_get_idx(wi, k));
		pc->touch_count[k] = json_object_get_uint64(json_object_array_get_idx(cnt, k));
	}
	pc->n_touch = n;
}

/* rep.postcopy (postcopy-restore) */
static int import_postcopy(struct report_postcopy *pc, struct json_object *m)
{
	struct json_object *d = get(m, "destination"), *p = get(m, "pass");

	if (!m)
		return 0;
	pc->set = true;
	snprintf(pc->status, sizeof(pc->status), "%s", get_str(m, "status") ? get_str(m, "status") : "");
	snprintf(pc->access, sizeof(pc->access), "%s", get_str(m, "access") ? get_str(m, "access") : "");
	snprintf(pc->backing, sizeof(pc->backing), "%s", get_str(m, "backing") ? get_str(m, "backing") : "");
	pc->started_s = get_num(m, "started_s", -1);
	pc->switchover_s = get_num(m, "switchover_s", -1);
	pc->pass_started_s = get_num(m, "pass_started_s", -1);
	pc->preempt = json_object_get_boolean(get(m, "preempt"));
	pc->chunk_bytes = get_u64(m, "chunk_bytes");
	pc->pass_ns = p ? get_num(p, "ms", -1) * 1e6 : -1;
	if (pc->pass_ns < 0)
		pc->pass_ns = -1;
	pc->pass_vcpus = (unsigned)get_u64(p, "vcpus");
	pc->pass_pages = get_u64(p, "pages");
	pc->pass_bytes = get_u64(p, "bytes");
	pc->mismatches = get_u64(p, "mismatches");
	pc->first_mismatch = get_u64(p, "first_mismatch");
	import_touch_hist(pc, get(p, "touch_hist"));
	pc->postcopy_requests = get_i64(m, "postcopy_requests", -1);
	pc->dest_pf_taken = get_i64(m, "dest_pf_taken", -1);
	pc->probes_on_destination = json_object_get_boolean(get(m, "probes_on_destination"));
	if (import_dest(&pc->dest, d) < 0 || dup_str(&pc->error, get_str(m, "error")) < 0 ||
	    dup_str(&pc->probes_error, get_str(m, "probes_error")) < 0)
		return -ENOMEM;
	return 0;
}

/* rep.uffd_restore (uffd-restore) */
static int import_uffd_restore(struct report_uffd_restore *u, struct json_object *m)
{
	struct json_object *k = get(m, "kvm");

	if (!m)
		return 0;
	u->set = true;
	u->region_bytes = get_u64(m, "region_bytes");
	u->chunk_bytes = get_u64(m, "chunk_bytes");
	u->pages = get_u64(m, "pages");
	snprintf(u->access, sizeof(u->access), "%s", get_str(m, "access") ? get_str(m, "access") : "");
	u->pass_ms = get_num(m, "pass_ms", -1);
	if (u->pass_ms < 0)
		u->pass_ms = -1;
	u->uffd_requests = get_i64(m, "uffd_requests", -1);
	u->uffd_woken = get_i64(m, "uffd_woken", -1);
	u->uffd_bytes = get_i64(m, "uffd_bytes", -1);
	u->mismatches = get_u64(m, "mismatches");
	u->pf_taken = get_i64(k, "pf_taken", -1);
	u->pf_fixed = get_i64(k, "pf_fixed", -1);
	u->pf_spurious = get_i64(k, "pf_spurious", -1);
	u->pf_prefetched = get_i64(k, "pf_prefetched", -1);
	u->exit_status = (int)get_i64(m, "exit_status", -1);
	return dup_str(&u->error, get_str(m, "error")) < 0 ? -ENOMEM
									: dup_str(&u->kvm_unavailable, get_str(m, "kvm_unavailable"));
}

/* rep.numa (numa-hinting) */
static int import_numa(struct report_numa *nm, struct json_object *m)
{
	struct json_object *v = get(m, "vcpu_nodes"), *p = get(m, "guest_pages_by_node");

	if (!m)
		return 0;
	nm->set = true;
	nm->nodes = (unsigned)get_u64(m, "nodes");
	snprintf(nm->numa_balancing, sizeof(nm->numa_balancing), "%s",
		 get_str(m, "numa_balancing") ? get_str(m, "numa_balancing") : "");
	nm->started_s = get_num(m, "steady_started_s", -1);
	nm->ended_s = get_num(m, "steady_ended_s", -1);
	if (json_object_is_type(v, json_type_array))
		for (size_t i = 0; i < json_object_array_length(v) && nm->n_vcpus < REPORT_NUMA_VCPUS_MAX; i++)
			nm->vcpu_node[nm->n_vcpus++] = (int)json_object_get_int64(json_object_array_get_idx(v, i));
	if (p) {
		struct json_object *a = get(p, "start"), *z = get(p, "end");
		nm->pages_known = json_object_is_type(a, json_type_array) && json_object_is_type(z, json_type_array);
		if (nm->pages_known)
			nm->node_slots = (unsigned)json_object_array_length(a);
		for (unsigned n = 0; nm->pages_known && n < nm->node_slots && n < REPORT_NUMA_NODES_MAX; n++) {
			nm->pages_start[n] = (uint64_t)json_object_get_int64(json_object_array_get_idx(a, n));
			nm->pages_end[n] = (uint64_t)json_object_get_int64(json_object_array_get_idx(z, n));
		}
	}
	return dup_str(&nm->error, get_str(m, "error"));
}

static int import_snapshot(struct report_snapshot *sn, struct json_object *s)
{
	const char *st = get_str(s, "status");
	struct json_object *t = get(s, "throttle");

	if (!s)
		return 0;
	for (int i = 0; i <= REPORT_SNAPSHOT_CANCELLED; i++)
		if (st && !strcmp(st, report_snapshot_status_to_string((enum report_snapshot_status)i)))
			sn->status = (enum report_snapshot_status)i;
	sn->started_s = get_num(s, "started_s", -1);
	sn->duration_s = get_num(s, "duration_s", -1);
	sn->bytes = get_i64(s, "bytes", -1);
	sn->pages = get_i64(s, "pages", -1);
	sn->file_bytes = get_i64(s, "file_bytes", -1);
	sn->kept = json_object_get_boolean(get(s, "kept"));
	if (get_str(s, "sink"))
		sn->sink_null = !strcmp(get_str(s, "sink"), "null");
	if (t) {
		sn->throttle_rate = get_u64(t, "rate");
		sn->throttle_burst = get_u64(t, "burst");
		sn->throttle_bytes = get_i64(t, "bytes", -1);
		sn->throttle_waited_s = get_num(t, "waited_s", 0);
	}
	if (dup_str(&sn->path, get_str(s, "path")) < 0 || dup_str(&sn->error, get_str(s, "error")) < 0)
		return -ENOMEM;
	return 0;
}

int report_rep_import(struct report *r, struct report_rep *rep, struct json_object *inner_report, size_t inner_rep,
		      struct sb_error *err)
{
	struct json_object *reps = get(inner_report, "repetitions"), *src, *vm, *g, *e, *tl, *probes, *argv;
	const char *st;
	int k;

	if (!reps || !json_object_is_type(reps, json_type_array) || inner_rep >= json_object_array_length(reps))
		return sb_error_set(err, -ENOENT, "the host VM's report has no repetition %zu", inner_rep);
	src = json_object_array_get_idx(reps, inner_rep);
	st = get_str(src, "state");
	for (int i = 0; i <= REPORT_REP_CANCELLED; i++)
		if (st && !strcmp(st, report_rep_state_to_string((enum report_rep_state)i)))
			rep->state = (enum report_rep_state)i;
	e = get(src, "error");
	if (get_str(e, "message"))
		report_error_set(&rep->error, get_str(e, "phase"), get_str(e, "message"));

	vm = get(src, "vm");
	rep->pid = (int)get_i64(vm, "pid", 0);
	rep->memory_bytes = get_u64(vm, "memory_bytes");
	rep->vcpus = (unsigned)get_u64(vm, "vcpus");
	rep->pinned_pages = get(vm, "pinned_pages") ? get_i64(vm, "pinned_pages", -1) : -1;
	argv = get(vm, "argv");
	if (argv && json_object_is_type(argv, json_type_array)) {
		size_t n = json_object_array_length(argv);
		char **v = calloc(n + 1, sizeof(*v));
		for (size_t i = 0; v && i < n; i++)
			v[i] = strdup(json_object_get_string(json_object_array_get_idx(argv, i)));
		strv_free(rep->argv);
		rep->argv = v;
	}
	g = get(src, "guest");
	rep->tsc_khz = (uint32_t)get_u64(g, "tsc_khz");
	if (dup_str(&rep->vm_exit, get_str(vm, "exit")) < 0 || dup_str(&rep->backend, get_str(vm, "backend")) < 0 ||
	    dup_str(&rep->guest_kind, get_str(g, "kind")) < 0 || dup_str(&rep->guest_clock, get_str(g, "clock")) < 0 ||
	    dup_str(&rep->pattern, get_str(g, "pattern")) < 0 || import_snapshot(&rep->snapshot, get(src, "snapshot")) < 0 ||
	    import_live_migration(&rep->migration, get(src, "migration")) < 0 ||
	    import_postcopy(&rep->postcopy, get(src, "postcopy")) < 0 || import_numa(&rep->numa, get(src, "numa")) < 0 ||
	    import_uffd_restore(&rep->uffd_restore, get(src, "uffd_restore")) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");

	tl = get(src, "timeline");
	if (tl && json_object_is_type(tl, json_type_array)) {
		k = import_layout(rep, tl);
		for (size_t i = 0; k >= 0 && i < json_object_array_length(tl); i++)
			k = import_row(rep, json_object_array_get_idx(tl, i));
		if (k < 0)
			return sb_error_set(err, k, "the host VM's report: repetition %zu's timeline does not read back (%s)",
					    inner_rep, strerror(-k));
	}

	probes = get(inner_report, "probes");
	if (probes && json_object_is_type(probes, json_type_object)) {
		json_object_object_foreach(probes, counter, p) {
			k = report_set_probe(r, counter, json_object_get_boolean(get(p, "available")), get_str(p, "source"),
					     get_str(p, "backend"), get_str(p, "reason"));
			if (k < 0)
				return sb_error_set(err, k, "out of memory");
		}
	}
	/* the inner report's own check named its repetition; this one names ours */
	if (rep->state == REPORT_REP_COMPLETED && report_rep_selfcheck(r, rep) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	return 0;
}
