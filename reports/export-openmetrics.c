// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A run's figures as metrics: OpenMetrics 1.0 text, or the Prometheus text
 * format 0.0.4 that promtool and node_exporter's textfile collector read.
 * The samples are the same in both; the dialects differ in the metadata
 * lines: OpenMetrics names a counter family without its _total (and an info
 * family without its _info), writes # UNIT and ends with # EOF.
 *
 *   snapbench_run_info{run, state, scenario, timing}     1
 *   snapbench_repetition_info{arm, rep, state, timing}   1 (timing: native, or emulated under TCG)
 *   snapbench_<metric>{arm, rep, window[, cause]}        the window summaries (gauges)
 *   snapbench_migration_pass_<field>{..., pass}          a dirty-log pass's figures (gauges)
 *   snapbench_migration_postcopy_<field>{...}            the postcopy migration's figures (gauges)
 *   snapbench_uffd_restore_<field>{..., window fault-in}  the userfaultfd restore's figures (gauges)
 *   snapbench_<counter>_total{arm, rep[, cause]}         the repetitions' counter totals
 *
 * Names follow Prometheus' conventions: snake_case, base units (latencies
 * in seconds), "_per_second" for rates. docs/exports.md lists the mapping.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export.h"
#include "export-private.h"
#include "json-util.h"
#include "report.h"
#include "timing.h"

#define NAME_MAX_LEN 200

enum family_type { FAMILY_GAUGE, FAMILY_COUNTER, FAMILY_INFO };

struct family {
	char name[NAME_MAX_LEN];   /* the OpenMetrics family name */
	enum family_type type;
	char *help;
	const char *unit;          /* "seconds", or NULL */
	const char *run;           /* every sample's first label run="...", or NULL */
	struct strbuf samples;
};

struct families {
	struct family *v;
	size_t n;
	bool oom;
	const char *run;           /* a run's export: its id on every series (two runs in one collector stay apart) */
};

static void families_done(struct families *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].help);
		strbuf_free(&f->v[i].samples);
	}
	free(f->v);
}

/*
 * The family called name, added (with help) when new; NULL on out-of-memory,
 * and when a family of that name has another type (a report's metric named
 * like one of ours: its samples are left out rather than mixed in).
 */
static struct family *family_get(struct families *f, const char *name, enum family_type type, const char *unit,
				 const char *help)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].name, name))
			return f->v[i].type == type ? &f->v[i] : NULL;
	struct family *nv = realloc(f->v, (f->n + 1) * sizeof(*nv));
	if (!nv) {
		f->oom = true;
		return NULL;
	}
	f->v = nv;
	struct family *fam = &f->v[f->n];
	*fam = (struct family){ .type = type, .unit = unit, .run = f->run, .help = strdup(help ? help : "") };
	snprintf(fam->name, sizeof(fam->name), "%s", name);
	if (!fam->help) {
		f->oom = true;
		return NULL;
	}
	f->n++;
	return fam;
}

/* Appends s to name as a metric name part: [a-z0-9_], anything else as '_'. */
static void name_append(char *name, size_t size, const char *s, size_t len)
{
	size_t j = strlen(name);

	for (size_t i = 0; i < len && s[i] && j + 1 < size; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		name[j++] = ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) ? c : '_';
	}
	name[j] = '\0';
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

/* The label that tells a per-cause series apart: the kernel's flush "reason", else "cause". */
static const char *sub_label(const char *base)
{
	return strstr(base, "host_tlb_flush") ? "reason" : "cause";
}

/*
 * Window metric name (pf_per_s, invalidations_per_s.uffd-wp, latency_p99_ns,
 * fault_pass_ms) to its family: snapbench_pf_per_second,
 * snapbench_invalidations_by_cause_per_second with cause="uffd-wp",
 * snapbench_latency_p99_seconds, snapbench_fault_pass_seconds (values in seconds).
 */
static void window_metric_family(const char *prefix, const char *metric, char name[static NAME_MAX_LEN],
				 const char **label, const char **sub, const char **unit, int *pow10)
{
	const char *dot = strchr(metric, '.');
	size_t len = dot ? (size_t)(dot - metric) : strlen(metric);
	const char *suffix = "";

	*sub = dot ? dot + 1 : NULL;
	*label = dot ? sub_label(metric) : NULL;
	*unit = NULL;
	*pow10 = 0;
	if (ends_with(metric, len, "_per_s")) {
		len -= 6, suffix = "_per_second";
	} else if (ends_with(metric, len, "_ns")) {
		len -= 3, suffix = "_seconds", *unit = "seconds", *pow10 = 9; /* the point moved: no 1.6885000000000002e-05 */
	} else if (ends_with(metric, len, "_ms")) {
		len -= 3, suffix = "_seconds", *unit = "seconds", *pow10 = 3;
	} else if (ends_with(metric, len, "_s")) {
		len -= 2, suffix = "_seconds", *unit = "seconds";
	} else if (ends_with(metric, len, "_count")) {
		len -= 6; /* a gauge's _count reads as a summary's: set_spte_count is snapbench_set_spte */
	}
	snprintf(name, NAME_MAX_LEN, "%s", prefix);
	name_append(name, NAME_MAX_LEN, metric, len);
	if (*label) {
		name_append(name, NAME_MAX_LEN, "_by_", 4);
		name_append(name, NAME_MAX_LEN, *label, strlen(*label));
	}
	name_append(name, NAME_MAX_LEN, suffix, strlen(suffix));
}

/*
 * Counter name (kvm.pf_taken, bpf.invalidations.uffd-wp, guest.ops.vcpu1) to
 * its family: snapbench_kvm_pf_taken, snapbench_bpf_invalidations_by_cause
 * with cause="uffd-wp", snapbench_guest_ops_by_vcpu with vcpu="1".
 */
static void counter_family(const char *prefix, const char *counter, char name[static NAME_MAX_LEN],
			   const char **label, const char **sub, const char **unit, int *pow10)
{
	const char *first = strchr(counter, '.');
	const char *second = first ? strchr(first + 1, '.') : NULL;
	size_t len = second ? (size_t)(second - counter) : strlen(counter);
	/* time in nanoseconds (bpf.clear_dirty_log_ns, KVM's halt_poll_success_ns): seconds, as Prometheus wants */
	bool ns = ends_with(counter, len, "_ns");

	*sub = second ? second + 1 : NULL;
	*label = NULL;
	*unit = ns ? "seconds" : NULL;
	*pow10 = ns ? 9 : 0;
	snprintf(name, NAME_MAX_LEN, "%s", prefix);
	name_append(name, NAME_MAX_LEN, counter, ns ? len - 3 : len);
	if (!second) {
		if (ns)
			name_append(name, NAME_MAX_LEN, "_seconds", 8);
		return;
	}
	if (!strncmp(counter, "guest.ops.vcpu", 14) && second == counter + 9) {
		*label = "vcpu";
		*sub += 4;
	} else {
		*label = sub_label(counter);
	}
	name_append(name, NAME_MAX_LEN, "_by_", 4);
	name_append(name, NAME_MAX_LEN, *label, strlen(*label));
	if (ns)
		name_append(name, NAME_MAX_LEN, "_seconds", 8);
}

static void label(struct strbuf *b, bool *first, const char *key, const char *value)
{
	strbuf_appendf(b, "%s%s=\"", *first ? "{" : ",", key);
	export_append_text(b, value ? value : "", EXPORT_ESCAPE_LABEL);
	strbuf_append(b, "\"");
	*first = false;
}

/* One sample: NAME{run="...", labels[0]="labels[1]", ...} VALUE / 10^pow10; a NULL key ends the labels early. */
static void sample_scaled(struct family *fam, const char *const *labels, size_t n, double v, int pow10)
{
	struct strbuf *b = &fam->samples;
	char num[EXPORT_NUMBER_MAX];
	bool first = true;

	strbuf_append(b, fam->name);
	strbuf_append(b, fam->type == FAMILY_COUNTER ? "_total" : fam->type == FAMILY_INFO ? "_info" : "");
	if (fam->run && !(n && labels[0] && !strcmp(labels[0], "run")))
		label(b, &first, "run", fam->run);
	for (size_t i = 0; i + 1 < n && labels[i]; i += 2)
		label(b, &first, labels[i], labels[i + 1]);
	export_format_scaled(v, pow10, num);
	strbuf_appendf(b, "%s %s\n", first ? "" : "}", num);
}

static void sample_labels(struct family *fam, const char *const *labels, size_t n, double v)
{
	sample_scaled(fam, labels, n, v, 0);
}

/* One sample of a repetition: NAME{run, arm, rep[, window][, extra]} VALUE / 10^pow10. */
static void sample(struct family *fam, const char *arm, const char *rep, const char *window, const char *extra_key,
		   const char *extra_value, double v, int pow10)
{
	const char *labels[8] = { "arm", arm, "rep", rep };
	size_t n = 4;

	if (window)
		labels[n++] = "window", labels[n++] = window;
	if (extra_key)
		labels[n++] = extra_key, labels[n++] = extra_value;
	sample_scaled(fam, labels, n, v, pow10);
}

static const char *metric_help(struct json_object *report, const char *metric)
{
	struct json_object *info = json_lookup(report, "metric_info");
	const char *dot = strchr(metric, '.');
	char base[128];

	if (dot) { /* the family is per cause: the base metric's words */
		snprintf(base, sizeof(base), "%.*s", (int)(dot - metric), metric);
		const char *d = json_lookup_string(json_lookup(info, base), "description");
		if (d)
			return d;
	}
	return json_lookup_string(json_lookup(info, metric), "description");
}

struct figure_ctx {
	struct families *f;
	const char *arm, *index;
};

/*
 * A repetition's figure as a gauge of its window: a dirty-log pass's
 * field or counter, snapbench_migration_pass_FIELD{pass="N"} (counters named
 * as their totals are: snapbench_migration_pass_kvm_pf_taken), a postcopy
 * field snapbench_migration_postcopy_FIELD (postcopy_requests:
 * snapbench_migration_postcopy_requests); a userfaultfd restore's, of the
 * fault-in window, snapbench_uffd_restore_FIELD (kvm.pf_taken:
 * snapbench_uffd_restore_kvm_pf_taken).
 */
static void figure_sample(const struct export_rep_figure *fig, void *userdata)
{
	const struct figure_ctx *c = userdata;
	char name[NAME_MAX_LEN], prefix[64], flat[128], pass[24], help[512];
	const char *lab, *sub, *unit = NULL, *field = fig->field;
	int pow10 = 0;
	size_t glen = strlen(fig->group);

	if (!isfinite(fig->value))
		return; /* unavailable: no sample (the CSV says why) */
	if (!strcmp(fig->window, "migration"))
		snprintf(prefix, sizeof(prefix), "snapbench_migration_%s_", fig->group);
	else
		snprintf(prefix, sizeof(prefix), "snapbench_%s_", fig->group);
	if (fig->counter) {
		counter_family(prefix, fig->counter, name, &lab, &sub, &unit, &pow10);
		snprintf(help, sizeof(help), "counter %s summed over a dirty-log pass's timeline rows, by pass%s%s",
			 fig->counter, lab ? " and " : "", lab ? lab : "");
	} else {
		if (!strncmp(field, fig->group, glen) && field[glen] == '_')
			field += glen + 1; /* postcopy_requests: snapbench_migration_postcopy_requests */
		snprintf(flat, sizeof(flat), "%s", field);
		for (char *p = flat; *p; p++)
			if (*p == '.')
				*p = '_'; /* pass.ms: one name, not a cause label */
		window_metric_family(prefix, flat, name, &lab, &sub, &unit, &pow10);
		if (fig->pass >= 0)
			snprintf(help, sizeof(help), "a dirty-log pass's %s (repetitions[].migration.iterations[].%s), "
				 "by pass", fig->field, fig->field);
		else if (strcmp(fig->window, "migration"))
			snprintf(help, sizeof(help), "the userfaultfd restore's %s (repetitions[].uffd_restore.%s)",
				 fig->field, fig->field);
		else
			snprintf(help, sizeof(help), "the postcopy migration's %s (repetitions[].postcopy.%s)",
				 fig->field, fig->field);
	}
	struct family *fam = family_get(c->f, name, FAMILY_GAUGE, unit, help);
	if (!fam)
		return;
	const char *labels[10] = { "arm", c->arm, "rep", c->index, "window", fig->window };
	size_t n = 6;
	if (fig->pass >= 0) {
		snprintf(pass, sizeof(pass), "%lld", fig->pass);
		labels[n++] = "pass", labels[n++] = pass;
	}
	if (lab)
		labels[n++] = lab, labels[n++] = sub;
	sample_scaled(fam, labels, n, fig->value, pow10);
}

static void rep_windows(struct families *f, struct json_object *report, struct json_object *rep, const char *arm,
			const char *index)
{
	const char *windows[EXPORT_REPORT_WINDOWS];

	export_report_windows(report, windows);
	for (size_t w = 0; w < EXPORT_REPORT_WINDOWS; w++) {
		struct json_object *metrics = json_lookup(json_lookup(json_lookup(rep, "windows"), windows[w]), "metrics");

		if (!json_object_is_type(metrics, json_type_object))
			continue;
		json_object_object_foreach(metrics, metric, value) {
			char name[NAME_MAX_LEN], help[512];
			const char *lab, *sub, *unit;
			int pow10;

			if (!value || !json_is_number(value))
				continue; /* unavailable: no sample (the CSV and JSON say why) */
			window_metric_family("snapbench_", metric, name, &lab, &sub, &unit, &pow10);
			const char *desc = metric_help(report, metric);
			if (sub)
				snprintf(help, sizeof(help), "%s (report metrics %.*s.*, by %s)",
					 desc ? desc : "a window summary", (int)(sub - metric - 1), metric, lab);
			else
				snprintf(help, sizeof(help), "%s (report metric %s)", desc ? desc : "a window summary",
					 metric);
			struct family *fam = family_get(f, name, FAMILY_GAUGE, unit, help);
			if (fam)
				sample(fam, arm, index, windows[w], lab, sub, json_object_get_double(value), pow10);
		}
		struct figure_ctx c = { f, arm, index };
		export_rep_figures(report, rep, windows[w], figure_sample, &c);
	}
}

static void rep_totals(struct families *f, struct json_object *rep, const char *arm, const char *index)
{
	struct json_object *totals = json_lookup(rep, "totals");

	if (!json_object_is_type(totals, json_type_object))
		return;
	json_object_object_foreach(totals, counter, value) {
		char name[NAME_MAX_LEN], help[256];
		const char *lab, *sub, *unit;
		int pow10;

		if (!value || !json_is_number(value))
			continue;
		counter_family("snapbench_", counter, name, &lab, &sub, &unit, &pow10);
		if (lab)
			snprintf(help, sizeof(help), "counter %.*s.* summed over the repetition's timeline, by %s",
				 (int)(sub - counter - 1), counter, lab);
		else
			snprintf(help, sizeof(help), "counter %s summed over the repetition's timeline", counter);
		struct family *fam = family_get(f, name, FAMILY_COUNTER, unit, help);
		if (fam)
			sample(fam, arm, index, NULL, lab, sub, json_object_get_double(value), pow10);
	}
}

/* HELP text: backslashes escaped; OpenMetrics also escapes quotes, the Prometheus format may not. */
static void help_text(struct strbuf *b, const char *help, enum export_metrics_dialect d)
{
	_cleanup_strbuf_ struct strbuf clean = {};

	export_append_text(&clean, help, EXPORT_ESCAPE_NONE);
	for (const char *p = clean.s; p && *p; p++) {
		if (*p == '\\' || (*p == '"' && d == EXPORT_OPENMETRICS))
			strbuf_append_repeat(b, '\\', 1);
		strbuf_append_mem(b, p, 1);
	}
}

static void family_write(struct strbuf *b, const struct family *fam, enum export_metrics_dialect d)
{
	static const char *const types[] = { "gauge", "counter", "info" };
	char meta[NAME_MAX_LEN + 8];

	if (d == EXPORT_OPENMETRICS)
		snprintf(meta, sizeof(meta), "%s", fam->name);
	else /* the Prometheus format names the family by its samples */
		snprintf(meta, sizeof(meta), "%s%s", fam->name,
			 fam->type == FAMILY_COUNTER ? "_total" : fam->type == FAMILY_INFO ? "_info" : "");
	strbuf_appendf(b, "# HELP %s ", meta);
	help_text(b, fam->help, d);
	strbuf_appendf(b, "\n# TYPE %s %s\n", meta,
		       d == EXPORT_PROMETHEUS && fam->type == FAMILY_INFO ? "gauge" : types[fam->type]);
	if (d == EXPORT_OPENMETRICS && fam->unit)
		strbuf_appendf(b, "# UNIT %s %s\n", meta, fam->unit);
	if (fam->samples.s)
		strbuf_append(b, fam->samples.s);
}

static int families_render(struct families *f, enum export_metrics_dialect dialect, char **ret, struct sb_error *err,
			   const char *what);

int export_report_metrics(struct json_object *report, enum export_metrics_dialect dialect, char **ret,
			  struct sb_error *err)
{
	struct families f = {};
	struct json_object *reps;
	const char *id;
	int r = export_report_parts(report, &id, &reps, err);

	if (r < 0)
		return r;
	f.run = id;

	/* the info families first (indexes 0 and 1: family_get() may move the array), so that they lead */
	struct report_timing timing;
	report_timing_of(report, NULL, &timing);
	if (family_get(&f, "snapbench_run", FAMILY_INFO, NULL,
		       "the run: its id, state, scenario and timing (emulated under TCG: its times, rates and "
		       "latencies are the emulator's)") &&
	    family_get(&f, "snapbench_repetition", FAMILY_INFO, NULL,
		       "a repetition of the run: its arm, index, state and timing")) {
		const char *labels[] = { "run", id, "state", json_lookup_string(report, "state"), "scenario",
					 json_lookup_string(json_lookup(report, "spec"), "scenario"), "timing",
					 timing.emulated ? "emulated" : "native" };
		sample_labels(&f.v[0], labels, ARRAY_SIZE(labels), 1);
	}
	for (size_t i = 0; !f.oom && reps && i < json_object_array_length(reps); i++) {
		struct json_object *rep = json_object_array_get_idx(reps, i);
		const char *arm = json_lookup_string(rep, "arm");
		char index[24];

		snprintf(index, sizeof(index), "%lld", (long long)json_object_get_int64(json_lookup(rep, "index")));
		struct report_timing rt;
		report_timing_of(report, arm, &rt);
		const char *info[] = { "arm", arm, "rep", index, "state", json_lookup_string(rep, "state"), "timing",
				       rt.emulated ? "emulated" : "native" };
		sample_labels(&f.v[1], info, ARRAY_SIZE(info), 1);
		rep_windows(&f, report, rep, arm, index);
	}
	/* counters after the gauges: a family's samples stay together */
	for (size_t i = 0; reps && i < json_object_array_length(reps); i++) {
		struct json_object *rep = json_object_array_get_idx(reps, i);
		char index[24];

		snprintf(index, sizeof(index), "%lld", (long long)json_object_get_int64(json_lookup(rep, "index")));
		rep_totals(&f, rep, json_lookup_string(rep, "arm"), index);
	}
	return families_render(&f, dialect, ret, err, id);
}

/* The text of the families that have samples; frees f. */
static int families_render(struct families *f, enum export_metrics_dialect dialect, char **ret, struct sb_error *err,
			   const char *what)
{
	_cleanup_strbuf_ struct strbuf b = {};

	for (size_t i = 0; i < f->n; i++) {
		b.oom |= f->v[i].samples.oom;
		if (f->v[i].samples.s) /* e.g. the repetition family while a run is queued */
			family_write(&b, &f->v[i], dialect);
	}
	if (dialect == EXPORT_OPENMETRICS)
		strbuf_append(&b, "# EOF\n");
	char *text = f->oom ? NULL : strbuf_steal(&b);
	families_done(f);
	if (!text)
		return sb_error_set(err, -ENOMEM, "out of memory writing the metrics of %s", what);
	*ret = text;
	return 0;
}

/* "2026-11-30T03:45:12Z" as seconds since the epoch; NAN when it is not one. */
static double rfc3339_seconds(const char *s)
{
	struct tm tm = {};
	const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;

	return end && !*end ? (double)timegm(&tm) : NAN;
}

/* The newest completed run of each arm label: its summary and that arm's entry. */
struct last_run {
	const char *label;
	struct json_object *run, *arm;
};

static int last_runs(struct json_object *summaries, struct last_run **ret, size_t *n)
{
	struct last_run *v = NULL;
	size_t k = 0;

	for (size_t i = 0; i < json_object_array_length(summaries); i++) {
		struct json_object *run = json_object_array_get_idx(summaries, i);
		struct json_object *arms = json_lookup(run, "arms");
		const char *state = json_lookup_string(run, "state");

		if (!state || strcmp(state, "completed") || !json_object_is_type(arms, json_type_array))
			continue;
		for (size_t a = 0; a < json_object_array_length(arms); a++) {
			struct json_object *arm = json_object_array_get_idx(arms, a);
			const char *label = json_lookup_string(arm, "label");
			size_t j = 0;

			if (!label)
				continue;
			while (j < k && strcmp(v[j].label, label))
				j++;
			if (j == k) {
				struct last_run *nv = realloc(v, (k + 1) * sizeof(*nv));
				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
				k++;
			}
			/* summaries come oldest first: a later run replaces an earlier one */
			v[j] = (struct last_run){ .label = label, .run = run, .arm = arm };
		}
	}
	*ret = v;
	*n = k;
	return 0;
}

int export_service_metrics(struct json_object *summaries, size_t queue_length, char **ret, struct sb_error *err)
{
	static const char *const states[] = { "queued", "running", "completed", "failed", "cancelled" };
	struct families f = {};
	_cleanup_free_ struct last_run *last = NULL;
	size_t n_last = 0;

	if (!json_object_is_type(summaries, json_type_array))
		return sb_error_set(err, -EINVAL, "the run summaries are %s, not an array", json_type_phrase(summaries));
	if (last_runs(summaries, &last, &n_last) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory writing the service metrics");

	struct family *fam = family_get(&f, "snapbench_queue_length", FAMILY_GAUGE, NULL,
					"runs waiting in snapbenchd's queue");
	if (fam)
		sample_labels(fam, NULL, 0, (double)queue_length);
	fam = family_get(&f, "snapbench_runs", FAMILY_GAUGE, NULL, "runs in the results store, by state");
	for (size_t s = 0; fam && s < ARRAY_SIZE(states); s++) {
		size_t count = 0;
		for (size_t i = 0; i < json_object_array_length(summaries); i++) {
			const char *state = json_lookup_string(json_object_array_get_idx(summaries, i), "state");
			count += state && !strcmp(state, states[s]);
		}
		sample_labels(fam, (const char *const[]){ "state", states[s] }, 2, (double)count);
	}
	for (size_t i = 0; i < n_last && !f.oom; i++) {
		const struct last_run *l = &last[i];
		const char *scenario = json_lookup_string(l->run, "scenario");
		const char *window = report_scenario_window(scenario); /* the summary's medians are that window's */
		struct json_object *reps = json_lookup(l->arm, "repetitions");
		struct json_object *medians = json_lookup(l->arm, window);
		const char *who[] = { "label", l->label };

		fam = family_get(&f, "snapbench_last_run", FAMILY_INFO, NULL,
				 "the newest completed run with an arm of this label");
		if (fam)
			sample_labels(fam, (const char *const[]){ "label", l->label, "run", json_lookup_string(l->run, "id"),
								  "scenario", scenario },
				      6, 1);
		double finished = rfc3339_seconds(json_lookup_string(l->run, "finished"));
		fam = family_get(&f, "snapbench_last_run_finished_timestamp_seconds", FAMILY_GAUGE, NULL,
				 "when the newest completed run of this label finished, seconds since the epoch");
		if (fam && isfinite(finished))
			sample_labels(fam, who, 2, finished);
		fam = family_get(&f, "snapbench_last_run_repetitions", FAMILY_GAUGE, NULL,
				 "the repetitions of this label's arm in its newest completed run, by result");
		for (size_t k = 0; fam && k < 2; k++) {
			const char *result = k ? "failed" : "completed";
			struct json_object *v = json_lookup(reps, result);
			if (json_is_number(v))
				sample_labels(fam, (const char *const[]){ "label", l->label, "result", result }, 4,
					      json_object_get_double(v));
		}
		if (!json_object_is_type(medians, json_type_object))
			continue;
		json_object_object_foreach(medians, metric, value) {
			char name[NAME_MAX_LEN], help[256];
			const char *lab, *sub, *unit;
			int pow10;

			if (!value || !json_is_number(value))
				continue;
			window_metric_family("snapbench_last_run_", metric, name, &lab, &sub, &unit, &pow10);
			snprintf(help, sizeof(help), "median of %s over the scenario's window (snapshot or migration) "
				 "of this label's newest completed run", metric);
			fam = family_get(&f, name, FAMILY_GAUGE, unit, help);
			if (fam)
				sample_scaled(fam, (const char *const[]){ "label", l->label, "window", window, lab, sub },
					      lab ? 6 : 4, json_object_get_double(value), pow10);
		}
	}
	return families_render(&f, EXPORT_PROMETHEUS, ret, err, "the service");
}
