// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the report exports of a run write: the windows of its scenario and
 * the figures of a repetition's migration or userfaultfd restore, read from
 * the report's JSON once here so that every format carries the same ones.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "export-private.h"
#include "json-util.h"
#include "report.h"

void export_report_windows(struct json_object *report, const char *windows[static EXPORT_REPORT_WINDOWS])
{
	windows[0] = "pre";
	windows[1] = report_scenario_window(json_lookup_string(json_lookup(report, "spec"), "scenario"));
	windows[2] = "post";
}

static double number_or_nan(struct json_object *v)
{
	return v && json_is_number(v) ? json_object_get_double(v) : NAN;
}

/* Why a counter of the report has no figure: its probe entry's reason (the counter's own, else its
 * family's: bpf.invalidations for bpf.invalidations.uffd-wp), or NULL when it is measured. */
static const char *counter_unavailable(struct json_object *report, const char *counter)
{
	struct json_object *probes = json_lookup(report, "probes");
	struct json_object *p = json_lookup(probes, counter);
	const char *dot = strrchr(counter, '.');

	if (!p && dot) {
		char base[128];
		snprintf(base, sizeof(base), "%.*s", (int)(dot - counter), counter);
		p = json_lookup(probes, base);
	}
	if (!p || json_object_get_boolean(json_lookup(p, "available")))
		return NULL;
	const char *why = json_lookup_string(p, "reason");
	return why ? why : "no probe";
}

struct emit {
	void (*fn)(const struct export_rep_figure *f, void *userdata);
	void *userdata;
};

static void emit_figure(struct emit *e, const char *group, long long pass, const char *field, const char *counter,
			const char *unit, double value, const char *why, double start_s, double duration_s)
{
	char name[256];
	struct export_rep_figure f = {
		.name = name, .group = group, .window = strcmp(group, "uffd_restore") ? "migration" : "fault-in",
		.pass = pass, .counter = counter, .unit = unit, .value = value, .start_s = start_s,
		.duration_s = duration_s,
	};

	if (pass >= 0)
		snprintf(name, sizeof(name), "%s.%lld.%s", group, pass, field);
	else
		snprintf(name, sizeof(name), "%s.%s", group, field);
	f.field = name + strlen(name) - strlen(field);
	if (!isfinite(value)) {
		f.value = NAN;
		f.unavailable = why ? why : "not measured";
	}
	e->fn(&f, e->userdata);
}

/* dirty-log: per pass its span, rows, pages, dirty set and counters (docs/report-format.md). */
static void pass_figures(struct emit *e, struct json_object *report, struct json_object *pass)
{
	static const struct {
		const char *field, *unit;
	} fields[] = {
		{ "start_s", "s" }, { "duration_s", "s" }, { "complete", "1" }, { "rows", "1" },
		{ "pages_sent", "1" }, { "dirty_pages", "1" }, { "dirty_pages_per_s", "1/s" },
	};
	struct json_object *n = json_lookup(pass, "pass"), *complete = json_lookup(pass, "complete");
	struct json_object *counters = json_lookup(pass, "counters");
	double start_s = number_or_nan(json_lookup(pass, "start_s"));
	double duration_s = number_or_nan(json_lookup(pass, "duration_s"));
	bool last_cut = json_object_is_type(complete, json_type_boolean) && !json_object_get_boolean(complete);

	if (!n || !json_object_is_type(n, json_type_int))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		struct json_object *v = json_lookup(pass, fields[i].field);
		double value = number_or_nan(v);
		const char *why = "not known";

		if (json_object_is_type(v, json_type_boolean))
			value = json_object_get_boolean(v);
		if (!strncmp(fields[i].field, "dirty_pages", 11) && last_cut)
			why = "the last pass: its dirty set was never collected";
		emit_figure(e, "pass", json_object_get_int64(n), fields[i].field, NULL, fields[i].unit, value, why,
			    start_s, duration_s);
	}
	if (!json_object_is_type(counters, json_type_object))
		return;
	json_object_object_foreach(counters, counter, value) {
		char field[160];
		size_t len = strlen(counter);
		const char *why = counter_unavailable(report, counter);

		snprintf(field, sizeof(field), "counters.%s", counter);
		emit_figure(e, "pass", json_object_get_int64(n), field, counter,
			    len > 3 && !strcmp(counter + len - 3, "_ns") ? "ns" : "1", why ? NAN : number_or_nan(value),
			    why, start_s, duration_s);
	}
}

/* postcopy-restore: the switch-over, the chunk, the destination's pass and the page requests. */
static void postcopy_figures(struct emit *e, struct json_object *pc, struct json_object *window)
{
	static const struct {
		const char *field, *unit, *unavailable;
	} fields[] = {
		{ "started_s", "s", "migrate was never issued" },
		{ "switchover_s", "s", "the destination's guest never resumed" },
		{ "pass_started_s", "s", "the destination's guest was never asked for its pass" },
		{ "chunk_bytes", "B", "not known" },
		{ "pass.ms", "ms", "no fault-linear vCPU reported" },
		{ "pass.vcpus", "1", "no fault-linear vCPU reported" },
		{ "pass.pages", "1", "no fault-linear vCPU reported" },
		{ "pass.bytes", "B", "no fault-linear vCPU reported" },
		{ "pass.mismatches", "1", "no fault-linear vCPU reported" },
		{ "postcopy_requests", "1", "QEMU's query-migrate gave no postcopy-requests" },
	};
	double start_s = number_or_nan(json_lookup(window, "start_s"));
	double duration_s = number_or_nan(json_lookup(window, "duration_s"));

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const char *f = fields[i].field;
		struct json_object *v = strncmp(f, "pass.", 5) ? json_lookup(pc, f)
							      : json_lookup(json_lookup(pc, "pass"), f + 5);

		emit_figure(e, "postcopy", -1, f, NULL, fields[i].unit, number_or_nan(v), fields[i].unavailable,
			    start_s, duration_s);
	}
}

/* uffd-restore: the guest's pass over the region, the handler's requests and KVM's counts during it. */
static void uffd_restore_figures(struct emit *e, struct json_object *ur, struct json_object *window)
{
	static const struct {
		const char *field, *unit, *unavailable;
	} fields[] = {
		{ "region_bytes", "B", "not known" },
		{ "chunk_bytes", "B", "not known" },
		{ "pages", "1", "not known" },
		{ "pass_ms", "ms", "the guest reported no pass" },
		{ "uffd_requests", "1", "the handler reported no figures" },
		{ "uffd_woken", "1", "the handler reported no figures" },
		{ "uffd_bytes", "B", "the handler reported no figures" },
		{ "mismatches", "1", "not known" },
		{ "kvm.pf_taken", "1", NULL },
		{ "kvm.pf_fixed", "1", NULL },
		{ "kvm.pf_spurious", "1", NULL },
		{ "kvm.pf_prefetched", "1", NULL },
	};
	double start_s = number_or_nan(json_lookup(window, "start_s"));
	double duration_s = number_or_nan(json_lookup(window, "duration_s"));
	const char *kvm_why = json_lookup_string(ur, "kvm_unavailable");

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const char *f = fields[i].field;
		struct json_object *v = strncmp(f, "kvm.", 4) ? json_lookup(ur, f) : json_lookup(json_lookup(ur, "kvm"), f + 4);

		emit_figure(e, "uffd_restore", -1, f, NULL, fields[i].unit, number_or_nan(v),
			    fields[i].unavailable ? fields[i].unavailable : kvm_why ? kvm_why : "not counted", start_s,
			    duration_s);
	}
}

void export_rep_figures(struct json_object *report, struct json_object *rep,
			void (*fn)(const struct export_rep_figure *f, void *userdata), void *userdata)
{
	struct emit e = { .fn = fn, .userdata = userdata };
	struct json_object *passes = json_lookup(json_lookup(rep, "migration"), "iterations");
	struct json_object *pc = json_lookup(rep, "postcopy"), *ur = json_lookup(rep, "uffd_restore");

	if (json_object_is_type(passes, json_type_array))
		for (size_t i = 0; i < json_object_array_length(passes); i++)
			pass_figures(&e, report, json_object_array_get_idx(passes, i));
	if (json_object_is_type(pc, json_type_object))
		postcopy_figures(&e, pc, json_lookup(json_lookup(rep, "windows"), "migration"));
	if (json_object_is_type(ur, json_type_object))
		uffd_restore_figures(&e, ur, json_lookup(json_lookup(rep, "windows"), "fault-in"));
}
