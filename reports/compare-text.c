// SPDX-License-Identifier: GPL-2.0-or-later
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare-private.h"
#include "compare.h"
#include "report.h"

void text_sanitize(const char *in, char *out, size_t size)
{
	size_t i = 0, max = size - 1;
	const char *p = in;

	for (; *p && i < max; p++)
		out[i++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
	if (*p && max >= 3)
		memcpy(out + max - 3, "...", 3), i = max;
	out[i] = '\0';
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

size_t compare_text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80; /* UTF-8 continuation bytes take no column */
	return n;
}

/* The unit a metric's name ends in: "_ns" ns, "_s" (not "_per_s") s, else NULL. */
static const char *name_time_unit(const char *metric)
{
	const char *dot = strchr(metric, '.');
	size_t len = dot ? (size_t)(dot - metric) : strlen(metric);

	if (ends_with(metric, len, "_per_s"))
		return NULL;
	if (ends_with(metric, len, "_ns"))
		return "ns";
	if (ends_with(metric, len, "_ms"))
		return "ms";
	if (ends_with(metric, len, "_s"))
		return "s";
	return NULL;
}

/* time_unit: what a time metric's unit reads as ("µs"), or NULL for its own; bare: no time unit at all
 * (each figure carries its own, compare_format_value()). */
static void display_name(const char *metric, const char *time_unit, bool bare, char *buf, size_t size)
{
	char base[128], stem[128];
	const char *dot = strchr(metric, '.');
	size_t len = dot ? (size_t)(dot - metric) : strlen(metric);
	const char *unit = "";
	char unit_buf[16];

	if (len >= sizeof(base))
		len = sizeof(base) - 1;
	memcpy(base, metric, len);
	base[len] = '\0';

	if (ends_with(base, len, "_per_s")) {
		base[len - 6] = '\0';
		unit = "/s";
	} else if (ends_with(base, len, "_ns")) {
		base[len - 3] = '\0';
		unit = " (ns)";
	} else if (ends_with(base, len, "_ms")) {
		base[len - 3] = '\0';
		unit = " (ms)";
	} else if (ends_with(base, len, "_s")) {
		base[len - 2] = '\0';
		unit = " (s)";
	}
	if (bare && strcmp(unit, "/s")) {
		unit = "";
	} else if (time_unit && strcmp(unit, "/s")) {
		snprintf(unit_buf, sizeof(unit_buf), " (%s)", time_unit);
		unit = unit_buf;
	}

	/* "latency_p999" reads as p99.9, the seed's name for it */
	size_t j = 0;
	for (const char *p = base; *p && j + 2 < sizeof(stem); p++) {
		if (!strncmp(p, "p999", 4) && (p[4] == '\0' || p[4] == '_')) {
			if (j + 6 >= sizeof(stem))
				break;
			memcpy(stem + j, "p99.9", 5);
			j += 5;
			p += 3;
			continue;
		}
		stem[j++] = *p == '_' ? ' ' : *p;
	}
	stem[j] = '\0';

	/* the report's text is sanitized, the unit (ours, "µs" is UTF-8) is not */
	char clean_stem[128], cause[128] = "";
	text_sanitize(stem, clean_stem, sizeof(clean_stem));
	if (dot)
		text_sanitize(dot + 1, cause, sizeof(cause));
	int n = dot ? snprintf(buf, size, "%s%s (%s)", clean_stem, unit, cause)
		    : snprintf(buf, size, "%s%s", clean_stem, unit);
	if (n >= 0 && (size_t)n >= size && size >= 4)
		memcpy(buf + size - 4, "...", 4);
}

void compare_metric_label(const char *metric, const struct compare_scale *sc, char *buf, size_t size)
{
	display_name(metric, sc ? sc->unit : NULL, false, buf, size);
}

void compare_metric_name(const char *metric, char *buf, size_t size)
{
	display_name(metric, NULL, true, buf, size);
}

const char *compare_metric_tag(const struct compare_metric *m)
{
	return m->unjudged ? m->unjudged : m->emulated ? "emulated" : NULL;
}

struct compare_scale compare_time_scale(const char *name, const char *unit, double magnitude)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = { { "s", 1e9 }, { "ms", 1e6 }, { "\xc2\xb5s", 1e3 }, { "ns", 1 } };
	double factor = 0;

	if (!unit || !*unit)
		unit = name ? name_time_unit(name) : NULL;
	if (!unit)
		return (struct compare_scale){ 1.0, NULL };
	if (!strcmp(unit, "us"))
		unit = "\xc2\xb5s";
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(unit, units[i].name))
			factor = units[i].ns;
	if (factor == 0)
		return (struct compare_scale){ 1.0, NULL };
	double v = fabs(magnitude) * factor;
	if (!(v > 0) || !isfinite(v)) /* nothing to scale by: the metric's own unit */
		return (struct compare_scale){ 1.0, unit };
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (v >= units[i].ns || i + 1 == ARRAY_SIZE(units))
			return (struct compare_scale){ factor / units[i].ns, units[i].name };
	return (struct compare_scale){ 1.0, unit };
}

struct compare_scale compare_metric_scale(const struct compare_metric *m)
{
	double mag = fmax(fabs(m->arm[0].s.median), fabs(m->arm[1].s.median));

	if (!(mag > 0)) /* medians of 0: the largest value decides */
		for (int s = 0; s < 2; s++)
			mag = fmax(mag, fmax(fabs(m->arm[s].s.min), fabs(m->arm[s].s.max)));
	return compare_time_scale(m->name, m->unit, mag);
}

/* (here, not in compare-plot.c: the Markdown links the plots by it) */
char *compare_plot_file_name(const struct compare_metric *m)
{
	char *name = NULL;

	if (asprintf(&name, "%s-%s.svg", m->window, m->name) < 0)
		return NULL;
	for (char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("._-", *p)))
			*p = '_';
	if (name[0] == '.')
		name[0] = '_';
	if (strlen(name) > 200)
		strcpy(name + 196, ".svg");
	return name;
}

/* A kernel arm's "kernel" object in report root (docs/kernel-arms.md), or NULL: the arm ran on the report's host. */
struct json_object *compare_arm_kernel(struct json_object *root, const char *label)
{
	struct json_object *arms = json_lookup(root, "arms");
	size_t n = arms && json_object_is_type(arms, json_type_array) ? json_object_array_length(arms) : 0;

	for (size_t i = 0; i < n; i++) {
		struct json_object *a = json_object_array_get_idx(arms, i);
		const char *l = json_lookup_string(a, "label");
		if (l && label && !strcmp(l, label))
			return json_lookup(a, "kernel");
	}
	return NULL;
}

/* the release a side's repetitions ran on: its arm's host VM kernel, else the host's */
const char *compare_side_release(const struct compare_side *s, size_t i, bool *host_vm)
{
	struct json_object *k = compare_arm_kernel(s->reports[i]->root, s->label);

	*host_vm = k != NULL;
	return k ? json_lookup_string(k, "release") : json_lookup_string(json_lookup(s->reports[i]->root, "host"), "kernel_release");
}

bool compare_any_tcg(const struct compare_result *r)
{
	return r->emulated[0] || r->emulated[1];
}

/*
 * The sides' action window, of their first repetitions' reports; both when
 * they differ (a forced comparison of two scenarios), so that a caption
 * names what each side's bar marks.
 */
void compare_timeline_window(const struct compare_result *r, char *buf, size_t size)
{
	const char *w[2];

	for (int k = 0; k < 2; k++)
		w[k] = r->side[k]->n_reps ? r->side[k]->reps[0].report->action_window : report_scenario_window(NULL);
	if (!strcmp(w[0], w[1]))
		snprintf(buf, size, "%s", w[0]);
	else
		snprintf(buf, size, "%s/%s", w[0], w[1]);
}
