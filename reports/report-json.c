// SPDX-License-Identifier: GPL-2.0-or-later
/* The run report as JSON: serialization, atomic write, and reading back. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "fileio.h"
#include "json-util.h"
#include "json-number.h"
#include "json-build.h"
#include "macro.h"
#include "report.h"

#define READ_MAX_DEPTH 64

/* The report's JSON is built through common's json_build (json-build.h),
 * which remembers the first allocation failure, so the serializer reads
 * straight through instead of checking every add. */
#define REPORT_JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

struct builder {
	struct json_build jb; /* what every b_*() function is given */
	bool rows_text;       /* rows from each repetition's rows_text (report_write()) */
};

static bool rows_text_of(struct json_build *b)
{
	return container_of(b, struct builder, jb)->rows_text;
}

static struct json_object *b_time(struct json_build *b, uint64_t ns)
{
	char buf[32];

	if (!ns)
		return NULL;
	report_format_time(ns, buf);
	return jb_str(b, buf);
}

static struct json_object *b_error(struct json_build *b, const struct report_error *e)
{
	struct json_object *o;

	if (!e->message)
		return NULL;
	o = jb_obj(b);
	jb_add(b, o, "message", jb_str(b, e->message));
	jb_add(b, o, "phase", jb_str(b, e->phase ? e->phase : "run"));
	return o;
}

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

static struct json_object *b_host(struct json_build *b, const struct report *r)
{
	const struct report_host *h = &r->host;
	struct json_object *o = jb_obj(b), *q = jb_obj(b);

	jb_add(b, o, "kernel_release", jb_str(b, str_or_empty(h->kernel_release)));
	jb_add(b, o, "kernel_version", jb_str(b, str_or_empty(h->kernel_version)));
	jb_add(b, o, "cmdline", jb_str(b, str_or_empty(h->cmdline)));
	jb_add(b, o, "cpu_model", jb_str(b, str_or_empty(h->cpu_model)));
	jb_add(b, o, "cpus", jb_u64(b, h->cpus ? h->cpus : 1));
	jb_add(b, o, "memory_bytes", jb_u64(b, h->memory_bytes));
	jb_add(b, o, "hostname", jb_str(b, str_or_empty(h->hostname)));
	jb_add(b, o, "virtualized", jb_bool(b, h->virtualized));
	if (h->kvm_module[0]) {
		struct json_object *k = jb_obj(b);

		jb_add(b, k, "module", jb_str(b, h->kvm_module));
		jb_add(b, k, "context", jb_str(b, h->kvm_context));
		jb_add(b, o, "kvm", k);
	}
	jb_add(b, q, "binary", jb_str(b, str_or_empty(h->qemu_binary)));
	jb_add(b, q, "version", jb_str(b, h->qemu_version));
	jb_add(b, q, "package", jb_str(b, h->qemu_package));
	if (h->qemu_features) {
		struct json_object *f = jb_arr(b);

		for (char **n = h->qemu_features; *n; n++)
			jb_push(b, f, jb_str(b, *n));
		jb_add(b, q, "features", f);
	}
	jb_add(b, o, "qemu", q);
	jb_add(b, o, "snapbench_version", jb_str(b, str_or_empty(r->snapbench_version)));
	return o;
}

static struct json_object *b_probes(struct json_build *b, const struct report *r)
{
	struct json_object *o = jb_obj(b);

	for (size_t i = 0; i < r->n_probes; i++) {
		const struct report_probe *p = &r->probes[i];
		struct json_object *e = jb_obj(b);

		jb_add(b, e, "available", jb_bool(b, p->available));
		if (p->source)
			jb_add(b, e, "source", jb_str(b, p->source));
		if (p->backend)
			jb_add(b, e, "backend", jb_str(b, p->backend));
		if (!p->available)
			jb_add(b, e, "reason", jb_str(b, p->reason ? p->reason : "unavailable"));
		else if (p->partial)
			jb_add(b, e, "partial", jb_str(b, p->partial));
		jb_add(b, o, p->counter, e);
	}
	return o;
}

static const enum report_window summary_windows[] = {
	REPORT_WINDOW_PRE,
	REPORT_WINDOW_SNAPSHOT,
	REPORT_WINDOW_MIGRATION,
	REPORT_WINDOW_STEADY,
	REPORT_WINDOW_FAULT_IN,
	REPORT_WINDOW_POST,
};
#define N_SUMMARY_WINDOWS ARRAY_SIZE(summary_windows)

/* metric name -> its table entry (exact, or family base before the dot) */
static const struct report_metric_def *metric_def_for(const char *name, const char **cause)
{
	size_t n;
	const struct report_metric_def *defs = report_metric_defs(&n);
	const char *dot = strchr(name, '.');

	*cause = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!dot && !defs[i].family && !strcmp(defs[i].name, name))
			return &defs[i];
		if (dot && defs[i].family && strlen(defs[i].name) == (size_t)(dot - name) &&
		    !strncmp(defs[i].name, name, (size_t)(dot - name))) {
			*cause = dot + 1;
			return &defs[i];
		}
	}
	return NULL;
}

static struct json_object *b_metric_info(struct json_build *b, struct json_object **summaries, size_t n)
{
	struct json_object *o = jb_obj(b);
	char desc[256];

	for (size_t i = 0; i < n; i++) {
		struct json_object *metrics;
		if (!summaries[i] || !json_object_object_get_ex(summaries[i], "metrics", &metrics))
			continue;
		json_object_object_foreach(metrics, name, v) {
			(void)v;
			const char *cause;
			const struct report_metric_def *def;
			struct json_object *e;

			if (json_object_object_get_ex(o, name, NULL))
				continue;
			def = metric_def_for(name, &cause);
			if (!def)
				continue;
			e = jb_obj(b);
			jb_add(b, e, "unit", jb_str(b, def->unit));
			jb_add(b, e, "better", jb_str(b, def->better));
			if (cause)
				snprintf(desc, sizeof(desc), "%s %s", def->description, cause);
			else
				snprintf(desc, sizeof(desc), "%s", def->description);
			jb_add(b, e, "description", jb_str(b, desc));
			jb_add(b, o, name, e);
		}
	}
	return o;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct json_object *b_stat(struct json_build *b, const double *values, size_t n)
{
	struct json_object *o = jb_obj(b), *a = jb_arr(b);
	_cleanup_free_ double *s = NULL;

	for (size_t i = 0; i < n; i++)
		jb_push(b, a, json_number_new(values[i]));
	jb_add(b, o, "n", jb_u64(b, n));
	if (n) {
		s = malloc(n * sizeof(*s));
		if (!s) {
			b->oom = true;
			n = 0;
		} else {
			memcpy(s, values, n * sizeof(*s));
			qsort(s, n, sizeof(*s), cmp_double);
		}
	}
	if (n) {
		double median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
		jb_add(b, o, "median", json_number_new(median));
		jb_add(b, o, "min", json_number_new(s[0]));
		jb_add(b, o, "max", json_number_new(s[n - 1]));
	} else {
		jb_add(b, o, "median", NULL);
		jb_add(b, o, "min", NULL);
		jb_add(b, o, "max", NULL);
	}
	jb_add(b, o, "values", a);
	return o;
}

/* summaries[rep * N_SUMMARY_WINDOWS + w] */
static struct json_object *b_kernel(struct json_build *b, const struct report_kernel *k)
{
	struct json_object *o = jb_obj(b), *h = jb_obj(b);

	jb_add(b, o, "image", jb_str(b, str_or_empty(k->id.image)));
	jb_add(b, o, "release", jb_str(b, str_or_empty(k->id.release)));
	jb_add(b, o, "version", jb_str(b, str_or_empty(k->id.version)));
	jb_add(b, o, "build_id", jb_str(b, k->id.build_id));
	jb_add(b, o, "config", jb_str(b, k->id.config_path));
	jb_add(b, o, "config_sha256", jb_str(b, k->id.config_sha256));
	jb_add(b, o, "modules", jb_str(b, k->modules));
	jb_add(b, o, "module_params", jb_str(b, k->module_params));
	jb_add(b, h, "cmdline", jb_str(b, str_or_empty(k->cmdline)));
	jb_add(b, h, "accel", jb_str(b, str_or_empty(k->accel)));
	jb_add(b, h, "accel_reason", jb_str(b, str_or_empty(k->accel_reason)));
	jb_add(b, h, "booted", jb_str(b, k->booted ? k->booted : "bzimage"));
	jb_add(b, h, "vcpus", jb_u64(b, k->vcpus));
	jb_add(b, h, "memory_bytes", jb_u64(b, k->memory_bytes));
	jb_add(b, h, "numa_nodes", jb_u64(b, k->numa_nodes));
	jb_add(b, o, "host_vm", h);
	return o;
}

static struct json_object *b_arms(struct json_build *b, const struct report *r, struct json_object **summaries)
{
	struct json_object *arr = jb_arr(b);
	_cleanup_free_ double *values = malloc((r->n_reps ? r->n_reps : 1) * sizeof(double));

	if (!values) {
		b->oom = true;
		return arr;
	}
	for (size_t a = 0; a < r->n_arms; a++) {
		const struct report_arm *arm = &r->arms[a];
		struct json_object *o = jb_obj(b), *reps = jb_obj(b), *windows = jb_obj(b);
		unsigned completed = 0, failed = 0;

		for (size_t i = 0; i < r->n_reps; i++) {
			if (r->reps[i]->arm != a)
				continue;
			if (r->reps[i]->state == REPORT_REP_COMPLETED)
				completed++;
			else if (r->reps[i]->state == REPORT_REP_FAILED)
				failed++;
		}
		for (size_t w = 0; w < N_SUMMARY_WINDOWS; w++) {
			struct json_object *win = jb_obj(b);

			/* metric names in order of first appearance among completed reps */
			for (size_t i = 0; i < r->n_reps; i++) {
				struct json_object *sum = summaries[i * N_SUMMARY_WINDOWS + w], *metrics;
				if (r->reps[i]->arm != a || r->reps[i]->state != REPORT_REP_COMPLETED || !sum ||
				    !json_object_object_get_ex(sum, "metrics", &metrics))
					continue;
				json_object_object_foreach(metrics, name, v0) {
					(void)v0;
					size_t n = 0;
					if (json_object_object_get_ex(win, name, NULL))
						continue;
					for (size_t j = 0; j < r->n_reps; j++) {
						struct json_object *s2 = summaries[j * N_SUMMARY_WINDOWS + w], *m2, *v;
						if (r->reps[j]->arm != a || r->reps[j]->state != REPORT_REP_COMPLETED ||
						    !s2 || !json_object_object_get_ex(s2, "metrics", &m2) ||
						    !json_object_object_get_ex(m2, name, &v) || !v)
							continue;
						values[n++] = json_object_get_double(v);
					}
					jb_add(b, win, name, b_stat(b, values, n));
				}
			}
			/* the migration, steady and fault-in windows only where a scenario has one: other reports stay as they were */
			if ((summary_windows[w] == REPORT_WINDOW_MIGRATION || summary_windows[w] == REPORT_WINDOW_STEADY ||
			     summary_windows[w] == REPORT_WINDOW_FAULT_IN) &&
			    !json_object_object_length(win))
				json_object_put(win);
			else
				jb_add(b, windows, report_window_to_string(summary_windows[w]), win);
		}
		jb_add(b, o, "label", jb_str(b, arm->label));
		jb_add(b, o, "knobs", json_object_get(arm->knobs));
		jb_add(b, reps, "total", jb_u64(b, arm->total));
		jb_add(b, reps, "completed", jb_u64(b, completed));
		jb_add(b, reps, "failed", jb_u64(b, failed));
		jb_add(b, o, "repetitions", reps);
		jb_add(b, o, "windows", windows);
		if (arm->kernel)
			jb_add(b, o, "kernel", b_kernel(b, arm->kernel));
		jb_push(b, arr, o);
	}
	return arr;
}

static struct json_object *b_row(struct json_build *b, const struct report_rep *rep, const struct report_row *row)
{
	struct json_object *o = jb_obj(b), *c = jb_obj(b);

	jb_add(b, o, "t_s", json_number_new(row->t_s < 0 ? 0 : row->t_s));
	jb_add(b, o, "dt_s", json_number_new(row->dt_s));
	jb_add(b, o, "window", jb_str(b, report_window_to_string(row->window)));
	for (size_t i = 0; i < rep->n_counters; i++)
		jb_add(b, c, rep->counters[i], jb_u64(b, i < row->n_values ? row->values[i] : 0));
	jb_add(b, o, "counters", c);
	if (row->n_hist) {
		struct json_object *h = jb_obj(b), *lo = jb_arr(b), *wi = jb_arr(b), *cnt = jb_arr(b);
		for (size_t k = 0; k < row->n_hist; k++) {
			jb_push(b, lo, json_number_new(rep->hist.lower_ns[row->hist_bucket[k]]));
			jb_push(b, wi, json_number_new(rep->hist.width_ns[row->hist_bucket[k]]));
			jb_push(b, cnt, jb_u64(b, row->hist_count[k]));
		}
		jb_add(b, h, "bucket_ns", lo);
		jb_add(b, h, "width_ns", wi);
		jb_add(b, h, "counts", cnt);
		jb_add(b, o, "latency_hist", h);
	}
	if (row->has_migration) {
		const struct report_migration *m = &row->migration;
		struct json_object *mo = jb_obj(b);
		jb_add(b, mo, "status", jb_str(b, m->status));
		jb_add(b, mo, "transferred", jb_u64(b, m->transferred));
		jb_add(b, mo, "remaining", jb_u64(b, m->remaining));
		jb_add(b, mo, "pages_per_s", json_number_new(m->pages_per_s < 0 ? 0 : m->pages_per_s));
		if (m->dirty_pages_rate >= 0)
			jb_add(b, mo, "dirty_pages_rate", json_number_new(m->dirty_pages_rate));
		if (m->precopy) {
			jb_add(b, mo, "dirty_sync_count", jb_u64(b, m->dirty_sync_count));
			jb_add(b, mo, "pages", jb_u64(b, m->pages));
		}
		jb_add(b, o, "migration", mo);
	}
	return o;
}

/*
 * The rows report_write() rendered already: a row does not change once the
 * next one is appended, and rewriting the report every few seconds built
 * and printed every row of the run again (most of the run engine's CPU at
 * 100 ms sampling). The text is what the row's object prints as, so the
 * report's bytes are the same.
 */
static int row_text_print(struct json_object *o, struct printbuf *pb, int level, int flags)
{
	const struct report_row_text *t = json_object_get_userdata(o);

	(void)level;
	(void)flags;
	return printbuf_memappend(pb, t->text, (int)t->len);
}

/* Renders rows t->n .. upto - 1 into t (b->oom and stops on failure). */
static void render_rows(struct json_build *b, struct report_rows_text *t, const struct report_rep *rep, size_t upto)
{
	while (t->n < upto) {
		struct json_object *row = b_row(b, rep, &rep->rows[t->n]);
		const char *text = row ? json_object_to_json_string_length(row, REPORT_JSON_FLAGS, NULL) : NULL;
		size_t len = text ? strlen(text) : 0;
		char *copy = text ? strndup(text, len) : NULL;

		json_object_put(row);
		if (copy && t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 64;
			struct report_row_text *n = realloc(t->rows, cap * sizeof(*n));
			if (n) {
				t->rows = n;
				t->cap = cap;
			}
		}
		if (!copy || t->n == t->cap) {
			free(copy);
			b->oom = true;
			return;
		}
		t->rows[t->n++] = (struct report_row_text){ .text = copy, .len = len };
	}
}

/* A node that prints as the rendered row rt (t->rows does not move until the report is printed). */
static struct json_object *b_row_text(struct json_build *b, const struct report_row_text *rt)
{
	struct json_object *o = json_object_new_int(0); /* any node: what it prints is the serializer's */

	if (!o) {
		b->oom = true;
		return NULL;
	}
	json_object_set_serializer(o, row_text_print, (void *)rt, NULL);
	return o;
}

/* rep's timeline: with rows_text each row rendered once (but for the last, which may still grow) */
static void b_timeline(struct json_build *b, struct json_object *tl, struct report_rep *rep)
{
	struct report_rows_text *t = rows_text_of(b) ? rep->rows_text : NULL;

	if (t && t->n_counters != rep->n_counters) {
		report_rows_text_free(t);
		t = rep->rows_text = NULL;
	}
	if (rows_text_of(b) && !t && rep->n_rows > 1) {
		t = rep->rows_text = calloc(1, sizeof(*t));
		if (t)
			t->n_counters = rep->n_counters;
	}
	if (t)
		render_rows(b, t, rep, rep->n_rows - 1);
	for (size_t i = 0; i < rep->n_rows; i++)
		jb_push(b, tl, t && i < t->n && i + 1 < rep->n_rows ? b_row_text(b, &t->rows[i]) : b_row(b, rep, &rep->rows[i]));
}

static struct json_object *b_num_or_null(double v)
{
	return v < 0 ? NULL : json_number_new(v);
}

/* rep.postcopy.pass's first-touch histogram, laid out as a row's latency_hist, and its percentiles */
static void b_touch_hist(struct json_build *b, struct json_object *p, const struct report_postcopy *m)
{
	struct json_object *h = jb_obj(b), *lo = jb_arr(b), *wi = jb_arr(b), *cnt = jb_arr(b);
	const struct report_hist_layout l = {
		.n = m->n_touch, .lower_ns = (double *)m->touch_lower_ns, .width_ns = (double *)m->touch_width_ns,
	};

	for (size_t k = 0; k < m->n_touch; k++) {
		jb_push(b, lo, json_number_new(m->touch_lower_ns[k]));
		jb_push(b, wi, json_number_new(m->touch_width_ns[k]));
		jb_push(b, cnt, jb_u64(b, m->touch_count[k]));
	}
	jb_add(b, h, "bucket_ns", lo);
	jb_add(b, h, "width_ns", wi);
	jb_add(b, h, "counts", cnt);
	jb_add(b, p, "touch_hist", h);
	jb_add(b, p, "touch_p50_ns", json_number_new(report_hist_percentile(&l, m->touch_count, 0.50)));
	jb_add(b, p, "touch_p99_ns", json_number_new(report_hist_percentile(&l, m->touch_count, 0.99)));
	jb_add(b, p, "touch_max_bucket_ns",
	      json_number_new(m->touch_lower_ns[m->n_touch - 1] + m->touch_width_ns[m->n_touch - 1]));
}

static struct json_object *b_node_pages(struct json_build *b, const uint64_t *pages, unsigned nodes)
{
	struct json_object *a = json_object_new_array();

	for (unsigned n = 0; a && n < nodes && n < REPORT_NUMA_NODES_MAX; n++)
		json_object_array_add(a, jb_u64(b, pages[n]));
	return a;
}

/* rep.numa (numa-hinting): where the guest RAM and vCPUs are, and when NUMA balancing scanned the RAM */
static struct json_object *b_numa(struct json_build *b, const struct report_rep *rep)
{
	const struct report_numa *m = &rep->numa;
	struct json_object *o = jb_obj(b), *v = json_object_new_array(), *p = NULL;

	jb_add(b, o, "nodes", jb_u64(b, m->nodes));
	jb_add(b, o, "numa_balancing", *m->numa_balancing ? jb_str(b, m->numa_balancing) : NULL);
	jb_add(b, o, "steady_started_s", b_num_or_null(m->started_s));
	jb_add(b, o, "steady_ended_s", b_num_or_null(m->ended_s));
	for (unsigned i = 0; v && i < m->n_vcpus && i < REPORT_NUMA_VCPUS_MAX; i++)
		json_object_array_add(v, jb_i64(b, m->vcpu_node[i]));
	jb_add(b, o, "vcpu_nodes", v);
	if (m->pages_known) {
		p = jb_obj(b);
		jb_add(b, p, "start", b_node_pages(b, m->pages_start, m->node_slots));
		jb_add(b, p, "end", b_node_pages(b, m->pages_end, m->node_slots));
	}
	jb_add(b, o, "guest_pages_by_node", p);
	jb_add(b, o, "error", jb_str(b, m->error));
	return o;
}

/* A migration's "destination": {"pid", "exit", "log"} */
static struct json_object *b_dest(struct json_build *b, const struct report_dest *dest)
{
	struct json_object *d = jb_obj(b);

	jb_add(b, d, "pid", dest->pid > 0 ? jb_i64(b, dest->pid) : NULL);
	jb_add(b, d, "exit", jb_str(b, dest->exit));
	jb_add(b, d, "log", jb_str(b, dest->log));
	return d;
}

static struct json_object *b_i64_or_null(struct json_build *b, int64_t v)
{
	return v >= 0 ? jb_i64(b, v) : NULL;
}

/* rep.uffd_restore (uffd-restore): snapbench-uffd-restore's pass */
static struct json_object *b_uffd_restore(struct json_build *b, const struct report_rep *rep)
{
	const struct report_uffd_restore *m = &rep->uffd_restore;
	struct json_object *o = jb_obj(b), *k = jb_obj(b);

	jb_add(b, o, "region_bytes", jb_u64(b, m->region_bytes));
	jb_add(b, o, "chunk_bytes", jb_u64(b, m->chunk_bytes));
	jb_add(b, o, "pages", jb_u64(b, m->pages));
	jb_add(b, o, "access", jb_str(b, m->access));
	jb_add(b, o, "pass_ms", m->pass_ms >= 0 ? json_number_new(m->pass_ms) : NULL);
	jb_add(b, o, "uffd_requests", b_i64_or_null(b, m->uffd_requests));
	jb_add(b, o, "uffd_woken", b_i64_or_null(b, m->uffd_woken));
	jb_add(b, o, "uffd_bytes", b_i64_or_null(b, m->uffd_bytes));
	jb_add(b, o, "mismatches", jb_u64(b, m->mismatches));
	jb_add(b, k, "pf_taken", b_i64_or_null(b, m->pf_taken));
	jb_add(b, k, "pf_fixed", b_i64_or_null(b, m->pf_fixed));
	jb_add(b, k, "pf_spurious", b_i64_or_null(b, m->pf_spurious));
	jb_add(b, k, "pf_prefetched", b_i64_or_null(b, m->pf_prefetched));
	jb_add(b, o, "kvm", k);
	jb_add(b, o, "kvm_unavailable", jb_str(b, m->kvm_unavailable));
	jb_add(b, o, "exit_status", m->exit_status >= 0 ? jb_i64(b, m->exit_status) : NULL);
	jb_add(b, o, "error", jb_str(b, m->error));
	return o;
}

/* rep.postcopy (postcopy-restore): the switch-over and the destination's pass */
static struct json_object *b_postcopy(struct json_build *b, const struct report_rep *rep)
{
	const struct report_postcopy *m = &rep->postcopy;
	struct json_object *o = jb_obj(b), *p = NULL;

	jb_add(b, o, "status", jb_str(b, *m->status ? m->status : "not-started"));
	jb_add(b, o, "started_s", b_num_or_null(m->started_s));
	jb_add(b, o, "switchover_s", b_num_or_null(m->switchover_s));
	jb_add(b, o, "pass_started_s", b_num_or_null(m->pass_started_s));
	jb_add(b, o, "access", jb_str(b, m->access));
	jb_add(b, o, "preempt", jb_bool(b, m->preempt));
	jb_add(b, o, "backing", jb_str(b, m->backing));
	jb_add(b, o, "chunk_bytes", jb_u64(b, m->chunk_bytes));
	if (m->pass_ns >= 0) {
		p = jb_obj(b);
		jb_add(b, p, "ms", json_number_new(m->pass_ns / 1e6));
		jb_add(b, p, "vcpus", jb_u64(b, m->pass_vcpus));
		jb_add(b, p, "pages", jb_u64(b, m->pass_pages));
		jb_add(b, p, "bytes", jb_u64(b, m->pass_bytes));
		jb_add(b, p, "mismatches", jb_u64(b, m->mismatches));
		jb_add(b, p, "first_mismatch", m->mismatches ? jb_u64(b, m->first_mismatch) : NULL);
		if (m->n_touch)
			b_touch_hist(b, p, m);
	}
	jb_add(b, o, "pass", p);
	jb_add(b, o, "postcopy_requests", m->postcopy_requests >= 0 ? jb_i64(b, m->postcopy_requests) : NULL);
	jb_add(b, o, "dest_pf_taken", m->dest_pf_taken >= 0 ? jb_i64(b, m->dest_pf_taken) : NULL);
	jb_add(b, o, "probes_on_destination", jb_bool(b, m->probes_on_destination));
	jb_add(b, o, "probes_error", jb_str(b, m->probes_error));
	jb_add(b, o, "destination", b_dest(b, &m->dest));
	jb_add(b, o, "error", jb_str(b, m->error));
	return o;
}

/* rep.migration (dirty-log): the migration and its passes, each with its counters summed over its rows */
static struct json_object *b_live_migration(struct json_build *b, const struct report_rep *rep)
{
	const struct report_live_migration *m = &rep->migration;
	struct json_object *o = jb_obj(b), *arr = jb_arr(b);
	struct report_iteration *it = NULL;
	size_t n = 0;

	jb_add(b, o, "status", jb_str(b, *m->status ? m->status : "not-started"));
	jb_add(b, o, "started_s", b_num_or_null(m->started_s));
	jb_add(b, o, "iterating_s", b_num_or_null(m->iterating_s));
	jb_add(b, o, "completion", jb_str(b, m->completion));
	jb_add(b, o, "tracking", jb_str(b, m->tracking));
	jb_add(b, o, "ring_size", !strcmp(m->tracking, "ring") ? jb_u64(b, m->ring_size) : NULL);
	jb_add(b, o, "max_bandwidth", jb_u64(b, m->max_bandwidth));
	jb_add(b, o, "downtime_limit_ms", jb_u64(b, m->downtime_limit_ms));
	jb_add(b, o, "page_size", m->page_size ? jb_u64(b, m->page_size) : NULL);
	jb_add(b, o, "destination", b_dest(b, &m->dest));
	jb_add(b, o, "error", jb_str(b, m->error));
	if (report_rep_iterations(rep, &it, &n) < 0)
		b->oom = true;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = jb_obj(b), *c = jb_obj(b);
		jb_add(b, e, "pass", jb_u64(b, it[i].pass));
		jb_add(b, e, "start_s", json_number_new(it[i].start_s < 0 ? 0 : it[i].start_s));
		jb_add(b, e, "duration_s", json_number_new(it[i].duration_s));
		jb_add(b, e, "complete", jb_bool(b, it[i].complete));
		jb_add(b, e, "rows", jb_u64(b, it[i].n_rows));
		jb_add(b, e, "pages_sent", it[i].pages_sent >= 0 ? jb_i64(b, it[i].pages_sent) : NULL);
		jb_add(b, e, "dirty_pages", it[i].dirty_pages >= 0 ? jb_i64(b, it[i].dirty_pages) : NULL);
		jb_add(b, e, "dirty_pages_per_s",
		      it[i].dirty_pages >= 0 && it[i].duration_s > 0
			      ? json_number_new((double)it[i].dirty_pages / it[i].duration_s)
			      : NULL);
		for (size_t k = 0; k < rep->n_counters; k++) {
			uint64_t sum = 0;
			for (size_t j = 0; j < it[i].n_rows; j++) {
				const struct report_row *row = &rep->rows[it[i].first_row + j];
				sum += k < row->n_values ? row->values[k] : 0;
			}
			jb_add(b, c, rep->counters[k], jb_u64(b, sum));
		}
		jb_add(b, e, "counters", c);
		jb_push(b, arr, e);
	}
	free(it);
	jb_add(b, o, "iterations", arr);
	return o;
}

/* A repetition's "vm": its QEMU, and the libvirt domain it ran as. */
static struct json_object *b_rep_vm(struct json_build *b, const struct report_rep *rep)
{
	struct json_object *vm = jb_obj(b), *argv = jb_arr(b);

	jb_add(b, vm, "backend", jb_str(b, rep->backend ? rep->backend : "qemu"));
	jb_add(b, vm, "pid", rep->pid > 0 ? jb_i64(b, rep->pid) : NULL);
	jb_add(b, vm, "memory_bytes", jb_u64(b, rep->memory_bytes));
	jb_add(b, vm, "vcpus", jb_u64(b, rep->vcpus ? rep->vcpus : 1));
	for (size_t i = 0; rep->argv && rep->argv[i]; i++)
		jb_push(b, argv, jb_str(b, rep->argv[i]));
	jb_add(b, vm, "argv", argv);
	jb_add(b, vm, "exit", jb_str(b, rep->vm_exit));
	if (rep->pinned_pages >= 0)
		jb_add(b, vm, "pinned_pages", jb_i64(b, rep->pinned_pages));
	if (rep->libvirt_domain) {
		struct json_object *lv = jb_obj(b), *taints = jb_arr(b);
		jb_add(b, lv, "uri", jb_str(b, str_or_empty(rep->libvirt_uri)));
		jb_add(b, lv, "domain", jb_str(b, rep->libvirt_domain));
		for (size_t i = 0; rep->libvirt_taints && rep->libvirt_taints[i]; i++)
			jb_push(b, taints, jb_str(b, rep->libvirt_taints[i]));
		jb_add(b, lv, "taints", taints);
		jb_add(b, vm, "libvirt", lv);
	}
	return vm;
}

/* A repetition's "snapshot": the background snapshot's outcome, and its sink's throttle. */
static struct json_object *b_snapshot(struct json_build *b, const struct report_snapshot *sn)
{
	struct json_object *s = jb_obj(b);

	jb_add(b, s, "status", jb_str(b, report_snapshot_status_to_string(sn->status)));
	jb_add(b, s, "started_s", b_num_or_null(sn->started_s));
	jb_add(b, s, "duration_s", b_num_or_null(sn->duration_s));
	jb_add(b, s, "bytes", sn->bytes >= 0 ? jb_i64(b, sn->bytes) : NULL);
	jb_add(b, s, "pages", sn->pages >= 0 ? jb_i64(b, sn->pages) : NULL);
	jb_add(b, s, "pages_per_s",
	      sn->pages >= 0 && sn->duration_s > 0 && sn->status == REPORT_SNAPSHOT_COMPLETED
		      ? json_number_new((double)sn->pages / sn->duration_s)
		      : NULL);
	jb_add(b, s, "sink", jb_str(b, sn->sink_null ? "null" : "file"));
	jb_add(b, s, "path", jb_str(b, sn->kept ? sn->path : NULL));
	jb_add(b, s, "kept", jb_bool(b, sn->kept));
	jb_add(b, s, "file_bytes", sn->file_bytes >= 0 ? jb_i64(b, sn->file_bytes) : NULL);
	jb_add(b, s, "error", jb_str(b, sn->error));
	if (sn->throttle_rate) {
		struct json_object *t = jb_obj(b);
		jb_add(b, t, "by", jb_str(b, "sink"));
		jb_add(b, t, "rate", jb_u64(b, sn->throttle_rate));
		jb_add(b, t, "burst", jb_u64(b, sn->throttle_burst));
		jb_add(b, t, "bytes", sn->throttle_bytes >= 0 ? jb_i64(b, sn->throttle_bytes) : NULL);
		jb_add(b, t, "waited_s", json_number_new(sn->throttle_waited_s));
		jb_add(b, s, "throttle", t);
	} else {
		jb_add(b, s, "throttle", NULL);
	}
	return s;
}

/* A kernel arm's repetition: the host VM it ran in. */
static struct json_object *b_rep_host_vm(struct json_build *b, const struct report_rep *rep)
{
	struct json_object *h = jb_obj(b);

	jb_add(b, h, "pid", rep->host_vm_pid > 0 ? jb_i64(b, rep->host_vm_pid) : NULL);
	jb_add(b, h, "boot_s", b_num_or_null(rep->host_vm_boot_s));
	jb_add(b, h, "console_log", jb_str(b, rep->host_vm_console));
	jb_add(b, h, "retried_after", jb_str(b, rep->host_vm_retried));
	if (rep->host_vm_taint >= 0) {
		char flags[REPORT_TAINT_FLAGS_LEN];
		struct json_object *w = jb_arr(b);
		jb_add(b, h, "kernel_taint", jb_i64(b, rep->host_vm_taint));
		jb_add(b, h, "kernel_taint_flags", jb_str(b, report_taint_flags(rep->host_vm_taint, flags)));
		for (size_t i = 0; rep->host_vm_kernel_warnings && rep->host_vm_kernel_warnings[i]; i++)
			jb_push(b, w, jb_str(b, rep->host_vm_kernel_warnings[i]));
		jb_add(b, h, "kernel_warnings", w);
	} else {
		jb_add(b, h, "kernel_taint", NULL);
		jb_add(b, h, "kernel_taint_flags", NULL);
		jb_add(b, h, "kernel_warnings", jb_arr(b));
	}
	return h;
}

static struct json_object *b_rep(struct json_build *b, const struct report *r, struct report_rep *rep,
				 struct json_object **summaries)
{
	struct json_object *o = jb_obj(b), *g = jb_obj(b), *windows = jb_obj(b), *tl = jb_arr(b), *totals = jb_obj(b);

	jb_add(b, o, "index", jb_u64(b, rep->index));
	jb_add(b, o, "arm", jb_str(b, r->arms[rep->arm].label));
	jb_add(b, o, "state", jb_str(b, report_rep_state_to_string(rep->state)));
	jb_add(b, o, "error", b_error(b, &rep->error));
	jb_add(b, o, "started", b_time(b, rep->started_ns));
	jb_add(b, o, "finished", b_time(b, rep->finished_ns));

	jb_add(b, o, "vm", b_rep_vm(b, rep));

	jb_add(b, g, "kind", jb_str(b, rep->guest_kind ? rep->guest_kind : "micro"));
	jb_add(b, g, "clock", jb_str(b, rep->guest_clock));
	jb_add(b, g, "tsc_khz", rep->tsc_khz ? jb_u64(b, rep->tsc_khz) : NULL);
	jb_add(b, g, "pattern", jb_str(b, str_or_empty(rep->pattern)));
	jb_add(b, o, "guest", g);

	jb_add(b, o, "snapshot", b_snapshot(b, &rep->snapshot));
	if (rep->migration.set)
		jb_add(b, o, "migration", b_live_migration(b, rep));
	if (rep->postcopy.set)
		jb_add(b, o, "postcopy", b_postcopy(b, rep));
	if (rep->numa.set)
		jb_add(b, o, "numa", b_numa(b, rep));
	if (rep->uffd_restore.set)
		jb_add(b, o, "uffd_restore", b_uffd_restore(b, rep));
	if (rep->host_vm)
		jb_add(b, o, "host_vm", b_rep_host_vm(b, rep));

	for (size_t w = 0; w < N_SUMMARY_WINDOWS; w++)
		if (summaries[w])
			jb_add(b, windows, report_window_to_string(summary_windows[w]), json_object_get(summaries[w]));
	jb_add(b, o, "windows", windows);

	b_timeline(b, tl, rep);
	jb_add(b, o, "timeline", tl);

	for (size_t c = 0; c < rep->n_counters; c++)
		jb_add(b, totals, rep->counters[c], jb_u64(b, report_rep_counter_total(rep, c, -1)));
	jb_add(b, o, "totals", totals);
	return o;
}

/* Where the run ran: "accel" (and timing), and "host_vm" when it went into one. */
static void b_placement(struct json_build *b, struct json_object *o, const struct report_placement *pl)
{
	struct json_object *a = jb_obj(b), *h = NULL;

	jb_add(b, a, "guest", jb_str(b, pl->guest_accel));
	jb_add(b, a, "host_vm", *pl->host_vm_accel ? jb_str(b, pl->host_vm_accel) : NULL);
	jb_add(b, a, "timing", jb_str(b, report_placement_emulated(pl) ? "emulated" : "native"));
	jb_add(b, a, "reason", jb_str(b, str_or_empty(pl->reason)));
	jb_add(b, o, "accel", a);
	if (pl->host_vm) {
		h = jb_obj(b);
		jb_add(b, h, "fallback", json_object_new_boolean(pl->fell_back));
		jb_add(b, h, "reason", jb_str(b, str_or_empty(pl->reason)));
		jb_add(b, h, "kernel", pl->kernel ? jb_str(b, pl->kernel) : NULL);
		jb_add(b, h, "kernel_source", pl->kernel_how ? jb_str(b, pl->kernel_how) : NULL);
	}
	jb_add(b, o, "host_vm", h);
}

/* "runner": what the run engine itself cost, its CPU split by part. */
static struct json_object *b_runner_usage(struct json_build *b, const struct report *r)
{
	struct json_object *u = jb_obj(b), *c;
	double other = r->usage.cpu_user_s + r->usage.cpu_system_s;

	jb_add(b, u, "cpu_user_s", json_number_new(r->usage.cpu_user_s));
	jb_add(b, u, "cpu_system_s", json_number_new(r->usage.cpu_system_s));
	jb_add(b, u, "wall_s", json_number_new(r->usage.wall_s));
	jb_add(b, u, "samples", jb_u64(b, r->usage.samples));
	c = jb_obj(b);
	for (int i = 0; i < REPORT_CPU_MAX; i++) {
		jb_add(b, c, report_cpu_to_string(i), json_number_new(r->usage.cpu_s[i]));
		other -= r->usage.cpu_s[i];
	}
	/* the per-thread clocks and getrusage() round apart by a few microseconds */
	jb_add(b, c, "other_s", json_number_new(other > 0 ? other : 0));
	jb_add(b, u, "cpu", c);
	jb_add(b, u, "wakeups", jb_u64(b, r->usage.wakeups));
	jb_add(b, u, "telemetry_reads", jb_u64(b, r->usage.telemetry_reads));
	return u;
}

/* rows_text: the rows as report_write() rendered them before (the object is only for printing) */
static int to_json(const struct report *r, bool rows_text, struct json_object **ret, struct sb_error *err)
{
	struct builder bl = { .rows_text = rows_text };
	struct json_build *b = &bl.jb;
	struct json_object *o, *reps;
	size_t n_sum = r->n_reps * N_SUMMARY_WINDOWS;
	struct json_object **summaries = calloc(n_sum ? n_sum : 1, sizeof(*summaries));
	int k;

	if (!summaries)
		return sb_error_set(err, -ENOMEM, "report %s: out of memory", r->id);
	for (size_t i = 0; i < r->n_reps; i++)
		for (size_t w = 0; w < N_SUMMARY_WINDOWS; w++) {
			k = report_rep_window_summary(r, r->reps[i], summary_windows[w],
						      &summaries[i * N_SUMMARY_WINDOWS + w]);
			if (k < 0)
				b->oom = true;
		}

	o = jb_obj(b);
	jb_add(b, o, "schema", jb_str(b, REPORT_SCHEMA));
	jb_add(b, o, "id", jb_str(b, r->id));
	jb_add(b, o, "state", jb_str(b, report_state_to_string(r->state)));
	jb_add(b, o, "error", b_error(b, &r->error));
	jb_add(b, o, "created", b_time(b, r->created_ns));
	jb_add(b, o, "started", b_time(b, r->started_ns));
	jb_add(b, o, "finished", b_time(b, r->finished_ns));
	jb_add(b, o, "spec", r->spec ? json_object_get(r->spec) : jb_obj(b));
	jb_add(b, o, "host", b_host(b, r));
	if (r->placement.set)
		b_placement(b, o, &r->placement);
	jb_add(b, o, "probes", b_probes(b, r));
	jb_add(b, o, "metric_info", b_metric_info(b, summaries, n_sum));
	jb_add(b, o, "arms", b_arms(b, r, summaries));
	reps = jb_arr(b);
	for (size_t i = 0; i < r->n_reps; i++)
		jb_push(b, reps, b_rep(b, r, r->reps[i], &summaries[i * N_SUMMARY_WINDOWS]));
	jb_add(b, o, "repetitions", reps);
	if (r->usage.set)
		jb_add(b, o, "runner", b_runner_usage(b, r));

	for (size_t i = 0; i < n_sum; i++)
		json_object_put(summaries[i]);
	free(summaries);
	if (b->oom) {
		json_object_put(o);
		return sb_error_set(err, -ENOMEM, "report %s: out of memory while serializing", r->id);
	}
	*ret = o;
	return 0;
}

int report_to_json(const struct report *r, struct json_object **ret, struct sb_error *err)
{
	return to_json(r, false, ret, err);
}

int report_write(const struct report *r, const char *path, struct sb_error *err)
{
	_cleanup_json_ struct json_object *o = NULL;
	const char *text;
	size_t len;
	int k;

	k = to_json(r, true, &o, err);
	if (k < 0)
		return k;
	text = json_object_to_json_string_length(o, REPORT_JSON_FLAGS, &len);
	if (!text)
		return sb_error_set(err, -ENOMEM, "report %s: out of memory while serializing", r->id);
	/* json-c's buffer as it is, and the newline after it: a report of MBs is not copied once more */
	const struct atomic_file_piece pieces[] = { { text, len }, { "\n", 1 } };

	return atomic_file_write_pieces(path, pieces, ARRAY_SIZE(pieces), 0644, err);
}

/* ---- reading ---- */

static int read_all(const char *path, char **ret, size_t *ret_len, struct sb_error *err)
{
	/*
	 * Not through a symlink, and without blocking: snapbenchd reads reports
	 * in its single-threaded loop, where a FIFO planted at a run's
	 * report.json would block open() until a writer came.
	 */
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	int r;

	if (fd < 0 && errno == ELOOP)
		return sb_error_set(err, -ELOOP, "report %s: a symbolic link; reports are read only from regular files",
				    path);
	if (fd < 0)
		return sb_error_set(err, -errno, "report %s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return sb_error_set(err, -errno, "report %s: cannot stat: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return sb_error_set(err, -EINVAL, "report %s: not a regular file; pass a report.json file", path);
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		return sb_error_set(err, -errno, "report %s: %s", path, strerror(errno));
	if ((uint64_t)st.st_size > REPORT_MAX_FILE_BYTES)
		return sb_error_set(err, -EFBIG, "report %s: %lld bytes, more than the %u bytes a report may have",
				    path, (long long)st.st_size, REPORT_MAX_FILE_BYTES);
	r = read_full_fd(fd, REPORT_MAX_FILE_BYTES, ret, ret_len);
	if (r == -EFBIG) /* it grew while being read */
		return sb_error_set(err, -EFBIG, "report %s: more than the %u bytes a report may have", path,
				    REPORT_MAX_FILE_BYTES);
	if (r == -ENOMEM)
		return sb_error_set(err, -ENOMEM, "report %s: out of memory", path);
	if (r < 0)
		return sb_error_set(err, r, "report %s: read failed: %s", path, strerror(-r));
	return 0;
}

/* partial: null in a partial report (top-level "partial", docs/report-format.md) */
static const struct {
	const char *name;
	json_type type;
	bool nullable, partial;
} top_fields[] = {
	{ "schema", json_type_string, false, false },   { "id", json_type_string, false, false },
	{ "state", json_type_string, false, false },    { "error", json_type_object, true, true },
	{ "created", json_type_string, false, true },   { "started", json_type_string, true, true },
	{ "finished", json_type_string, true, true },   { "spec", json_type_object, false, true },
	{ "host", json_type_object, false, true },      { "probes", json_type_object, false, false },
	{ "metric_info", json_type_object, false, false }, { "arms", json_type_array, false, false },
	{ "repetitions", json_type_array, false, false },
};

/*
 * Every repetition's window metrics are numbers or null, as compare reads
 * them: a report with a string there is refused by every reader alike.
 */
static int check_metric_types(const char *path, struct json_object *report, struct sb_error *err)
{
	struct json_object *reps = NULL;

	json_object_object_get_ex(report, "repetitions", &reps);
	for (size_t i = 0; json_object_is_type(reps, json_type_array) && i < json_object_array_length(reps); i++) {
		struct json_object *ws = NULL;
		json_object_object_get_ex(json_object_array_get_idx(reps, i), "windows", &ws);
		if (!json_object_is_type(ws, json_type_object))
			continue;
		json_object_object_foreach(ws, wname, w)
		{
			struct json_object *m = NULL;
			json_object_object_get_ex(w, "metrics", &m);
			if (!json_object_is_type(m, json_type_object))
				continue;
			json_object_object_foreach(m, name, val)
			{
				if (!val || json_object_is_type(val, json_type_double) || json_object_is_type(val, json_type_int))
					continue;
				return sb_error_set(err, -EBADMSG, "report %s: repetitions[%zu].windows.%.32s.metrics.%.64s is a "
						    "%s, expected a number or null", path, i, wname, name,
						    json_type_to_name(json_object_get_type(val)));
			}
		}
	}
	return 0;
}

bool report_text_not_json(const char *text, size_t len, char *buf, size_t size)
{
	size_t i = 0;

	while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'))
		i++;
	if (i == len) {
		snprintf(buf, size, "an empty file (%zu byte%s%s)", len, len == 1 ? "" : "s", len ? " of white space" : "");
		return true;
	}
	const char *nul = memchr(text, '\0', len < 4096 ? len : 4096);
	if (nul) { /* JSON text has no NUL: a gzip, an image, a core dump ... */
		snprintf(buf, size, "a binary file (a NUL byte at byte %zu)", (size_t)(nul - text));
		return true;
	}
	return false;
}

int report_read(const char *path, struct json_object **ret, struct sb_error *err)
{
	_cleanup_free_ char *buf = NULL;
	struct json_parse_info info;
	_cleanup_json_ struct json_object *o = NULL;
	struct json_object *v;
	size_t len = 0;
	int k;

	k = read_all(path, &buf, &len, err);
	if (k < 0)
		return k;
	char what[80];
	if (report_text_not_json(buf, len, what, sizeof(what)))
		return sb_error_set(err, -EBADMSG, "report %s: %s, not JSON; give a snapbench run report (a run "
				    "directory's report.json)", path, what);
	k = json_parse_text(buf, len, READ_MAX_DEPTH, 0, &o, &info);
	if (k == -ENOMEM)
		return sb_error_set(err, -ENOMEM, "report %s: out of memory", path);
	if (k < 0 && info.status == JSON_PARSE_TRAILING)
		return sb_error_set(err, -EBADMSG, "report %s: trailing data after the JSON document", path);
	if (k < 0)
		return sb_error_set(err, -EBADMSG, "report %s: not valid JSON (%s)", path,
				    info.status == JSON_PARSE_TRUNCATED ? "truncated" : info.reason);

	if (!json_object_is_type(o, json_type_object))
		return sb_error_set(err, -EBADMSG, "report %s: not a JSON object", path);
	if (!json_object_object_get_ex(o, "schema", &v) || !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), REPORT_SCHEMA)) {
		const char *got = v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
		return sb_error_set(err, -EPROTO,
				    "report %s: \"schema\" is %s%.64s%s, expected \"%s\"; this is not a run report of this version of snapbench",
				    path, got ? "\"" : "missing or not a string", got ? got : "", got ? "\"" : "",
				    REPORT_SCHEMA);
	}
	bool partial = json_object_object_get_ex(o, "partial", &v) && json_object_is_type(v, json_type_object);
	for (size_t i = 0; i < ARRAY_SIZE(top_fields); i++) {
		bool nullable = top_fields[i].nullable || (partial && top_fields[i].partial);
		if (!json_object_object_get_ex(o, top_fields[i].name, &v)) {
			return sb_error_set(err, -EBADMSG, "report %s: field \"%s\" is missing", path,
					    top_fields[i].name);
		}
		if ((!v && !nullable) || (v && !json_object_is_type(v, top_fields[i].type))) {
			return sb_error_set(err, -EBADMSG, "report %s: field \"%s\" must be %s%s", path,
					    top_fields[i].name, json_type_to_name(top_fields[i].type),
					    nullable ? " or null" : "");
		}
	}
	json_object_object_get_ex(o, "state", &v);
	if (report_state_from_string(json_object_get_string(v)) < 0)
		return sb_error_set(err, -EBADMSG, "report %s: unknown state \"%.64s\"", path, json_object_get_string(v));
	k = check_metric_types(path, o, err);
	if (k < 0)
		return k;
	*ret = TAKE_PTR(o);
	return 0;
}

int report_json_state(struct json_object *report)
{
	struct json_object *v;

	if (!json_object_object_get_ex(report, "state", &v) || !json_object_is_type(v, json_type_string))
		return -EINVAL;
	return report_state_from_string(json_object_get_string(v));
}
