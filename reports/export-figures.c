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

static void emit_figure(struct emit *e, const char *window, const char *group, long long pass, const char *field,
			const char *counter, const char *unit, double value, const char *why, double start_s,
			double duration_s)
{
	char name[256];
	struct export_rep_figure f = {
		.name = name, .group = group, .window = window, .pass = pass, .counter = counter, .unit = unit,
		.value = value, .start_s = start_s, .duration_s = duration_s,
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
		emit_figure(e, "migration", "pass", json_object_get_int64(n), fields[i].field, NULL, fields[i].unit, value, why,
			    start_s, duration_s);
	}
	if (!json_object_is_type(counters, json_type_object))
		return;
	json_object_object_foreach(counters, counter, value) {
		char field[160];
		size_t len = strlen(counter);
		const char *why = counter_unavailable(report, counter);

		snprintf(field, sizeof(field), "counters.%s", counter);
		emit_figure(e, "migration", "pass", json_object_get_int64(n), field, counter,
			    len > 3 && !strcmp(counter + len - 3, "_ns") ? "ns" : "1", why ? NAN : number_or_nan(value),
			    why, start_s, duration_s);
	}
}

struct figure_field {
	const char *field; /* a key of the block, or "OBJECT.KEY" one level down ("pass.ms", "kvm.pf_taken") */
	const char *unit;
	const char *unavailable; /* why it is missing; NULL: the block's why_key's text */
};

/* A repetition's block of figures beside its window summary: repetitions[].KEY, of one window. */
struct figure_block {
	const char *key, *group, *window;
	const struct figure_field *fields;
	size_t n_fields;
	const char *why_key; /* the block's string that says why the fields without a reason of their own are missing */
};

/* postcopy-restore: the switch-over, the chunk, the destination's pass and the page requests. */
static const struct figure_field postcopy_fields[] = {
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

/* uffd-restore: the guest's pass over the region, the handler's requests and KVM's counts during it. */
static const struct figure_field uffd_restore_fields[] = {
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

static const struct figure_block blocks[] = {
	{ "postcopy", "postcopy", "migration", postcopy_fields, ARRAY_SIZE(postcopy_fields), NULL },
	{ "uffd_restore", "uffd_restore", "fault-in", uffd_restore_fields, ARRAY_SIZE(uffd_restore_fields),
	  "kvm_unavailable" },
};

/* A block's figures over its window's span. */
static void block_figures(struct emit *e, const struct figure_block *b, struct json_object *o, struct json_object *window)
{
	double start_s = number_or_nan(json_lookup(window, "start_s"));
	double duration_s = number_or_nan(json_lookup(window, "duration_s"));
	const char *block_why = b->why_key ? json_lookup_string(o, b->why_key) : NULL;

	for (size_t i = 0; i < b->n_fields; i++) {
		const char *f = b->fields[i].field, *dot = strchr(f, '.');
		char outer[32];
		struct json_object *v;

		if (dot) {
			snprintf(outer, sizeof(outer), "%.*s", (int)(dot - f), f);
			v = json_lookup(json_lookup(o, outer), dot + 1);
		} else {
			v = json_lookup(o, f);
		}
		emit_figure(e, b->window, b->group, -1, f, NULL, b->fields[i].unit, number_or_nan(v),
			    b->fields[i].unavailable ? b->fields[i].unavailable : block_why ? block_why : "not counted",
			    start_s, duration_s);
	}
}

void export_rep_figures(struct json_object *report, struct json_object *rep, const char *window,
			void (*fn)(const struct export_rep_figure *f, void *userdata), void *userdata)
{
	struct emit e = { .fn = fn, .userdata = userdata };
	struct json_object *passes = json_lookup(json_lookup(rep, "migration"), "iterations");

	if (!strcmp(window, "migration") && json_object_is_type(passes, json_type_array))
		for (size_t i = 0; i < json_object_array_length(passes); i++)
			pass_figures(&e, report, json_object_array_get_idx(passes, i));
	for (size_t i = 0; i < ARRAY_SIZE(blocks); i++) {
		struct json_object *o = json_lookup(rep, blocks[i].key);

		if (!strcmp(window, blocks[i].window) && json_object_is_type(o, json_type_object))
			block_figures(&e, &blocks[i], o, json_lookup(json_lookup(rep, "windows"), window));
	}
}
