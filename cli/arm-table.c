// SPDX-License-Identifier: GPL-2.0-or-later
/* The per-window tables of a report's arms (snapbench show, run --local) and why a row is n/a. */
#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "arm-table.h"
#include "client.h"
#include "compare.h"
#include "daemon-format.h"
#include "macro.h"
#include "report.h"
#include "timing.h"

const struct metric_row metric_rows[] = {
	{ "pf_per_s", "pf/s", NULL },
	{ "tlb_per_s", "tlb/s", NULL },
	{ "invalidations_per_s", "invalidations/s", NULL },
	{ "invalidations_per_s.uffd-wp", "  of which uffd-wp", "snapshot" },
	{ "guest_ops_per_s", "guest ops/s", NULL },
	{ "latency_p50_ns", "latency p50 (ns)", NULL },
	{ "latency_p99_ns", "latency p99 (ns)", NULL },
	{ "latency_p999_ns", "latency p99.9 (ns)", NULL },
	{ "snapshot_duration_s", "snapshot (s)", NULL },
	{ "snapshot_pages_per_s", "snapshot pages/s", NULL },
	{ "clear_log_ns_per_iteration", "clear-log ns/pass", NULL },
	{ "tlb_per_iteration", "tlb/pass", NULL },
	{ "dirty_pages_per_s", "dirty pages/s", NULL },
	{ "iteration_s", "pass (s)", NULL },
	{ "iterations", "passes", NULL },
	{ "fault_pass_ms", "fault pass (ms)", NULL },
	{ "postcopy_chunk_bytes", "postcopy chunk (bytes)", NULL },
	{ "postcopy_requests", "postcopy requests", NULL },
	{ "fault_mismatches", "pages lost", NULL },
	{ "numa_kvm_flushes", "KVM flushes, NUMA hinting", NULL },
	{ "numa_sptes_zapped", "SPTEs zapped, NUMA hinting", NULL },
	{ "numa_invalidations", "invalidations, NUMA hinting", NULL },
	{ "refaults", "refaults", NULL },
	{ "numa_pages_migrated", "NUMA pages migrated", NULL },
	{ "restore_pass_ms", "restore pass (ms)", "fault-in" },
	{ "restore_pf_taken", "restore pf_taken", "fault-in" },
	{ "restore_pf_prefetched", "  SPTEs prefetched", "fault-in" },
	{ "uffd_requests", "uffd requests", "fault-in" },
	{ "restore_mismatches", "pages lost", "fault-in" },
};
const size_t n_metric_rows = ARRAY_SIZE(metric_rows);

static double num_of(struct json_object *st, const char *key)
{
	struct json_object *v = client_get(st, key, NULL, NULL);

	if (!v || !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return NAN;
	return json_object_get_double(v);
}

/*
 * "median (min max)" of metric as compare writes it (compare_format_side():
 * a time figure with its own unit, 19.8µs; the median alone when every value
 * is the same, or for one value); "n/a" without a median, "" for NULL.
 */
static void fmt_stat(struct json_object *st, const char *metric, char *buf, size_t len)
{
	double med = num_of(st, "median");
	struct compare_metric m = { .name = (char *)metric, .unit = (char *)"" };

	if (!st || isnan(med)) {
		snprintf(buf, len, "%s", st ? "n/a" : "");
		return;
	}
	m.arm[0].s = (struct stats_summary){ .median = med, .min = med, .max = med };
	if (json_object_get_int(client_get(st, "n", NULL, NULL)) > 1) {
		m.arm[0].s.min = num_of(st, "min");
		m.arm[0].s.max = num_of(st, "max");
	}
	compare_format_side(&m, 0, output_ascii(), buf, len);
}

static void print_padded(FILE *out, const char *s, size_t width)
{
	size_t w = compare_text_width(s);

	fprintf(out, "%s%*s", s, (int)(width > w ? width - w : 0), "");
}

#define ARM_TABLE_MAX_WINDOWS 3
#define ARM_TABLE_CELL 80
#define EMULATED_MARK "  emulated"

/*
 * How an arm table is laid out, the first that fits the width taken: one
 * line a row, the windows' titles on one line, then wrapped within their
 * columns; each row's (min max) on a line under its median; each row's
 * label on a line of its own above its figures; under its label, a line per
 * window. Always full digits, as compare's tables write them (950,015 at
 * any width).
 */
struct arm_layout {
	bool two_lines, wrap_titles, label_alone;
	bool stacked; /* under its label, a line per window: its name (pre, snapshot, post) and its figures */
};

static const struct arm_layout arm_layouts[] = {
	{ false, false, false, false },
	{ false, true, false, false },
	{ true, true, false, false },
	{ true, true, true, false },
	{ false, false, true, true },
};

/* An arm table's cells and column widths in one layout. */
struct arm_table {
	char cell[ARRAY_SIZE(metric_rows)][ARM_TABLE_MAX_WINDOWS][ARM_TABLE_CELL];
	char range[ARRAY_SIZE(metric_rows)][ARM_TABLE_MAX_WINDOWS][ARM_TABLE_CELL]; /* two lines: "(min max)" */
	char label[ARRAY_SIZE(metric_rows)][64];
	bool shown[ARRAY_SIZE(metric_rows)], mark[ARRAY_SIZE(metric_rows)];
	size_t wlabel, wcol[ARM_TABLE_MAX_WINDOWS], n_windows, wkey;
	const struct arm_layout *l;
};

/* The width of the longest word of s: the narrowest a column can wrap it to. */
static size_t longest_word(const char *s)
{
	size_t best = 0;

	for (const char *p = s; *p;) {
		size_t n = strcspn(p, " ");
		char word[ARM_TABLE_CELL];
		snprintf(word, sizeof(word), "%.*s", (int)n, p);
		best = compare_text_width(word) > best ? compare_text_width(word) : best;
		p += n + strspn(p + n, " ");
	}
	return best;
}

/* Line k (from 0) of title wrapped at spaces to width columns; "" past its last line. */
static void title_line(const char *title, size_t width, size_t k, char *buf, size_t len)
{
	size_t line = 0, used = 0;

	buf[0] = '\0';
	for (const char *p = title; *p;) {
		size_t n = strcspn(p, " ");
		char word[ARM_TABLE_CELL];
		snprintf(word, sizeof(word), "%.*s", (int)n, p);
		size_t w = compare_text_width(word);
		if (used && used + 1 + w > width) {
			line++;
			used = 0;
		}
		if (line == k) {
			size_t o = strlen(buf);
			snprintf(buf + o, len - o, "%s%s", used ? " " : "", word);
		}
		used += (used ? 1 : 0) + w;
		p += n + strspn(p + n, " ");
	}
}

/* One row's cells, its label and whether its figures are the emulator's; adds to the column widths. */
static void arm_row_fill(struct arm_table *t, size_t i, struct json_object *arm, const char *const *windows,
			 bool emulated)
{
	bool here = !metric_rows[i].window;

	t->shown[i] = false;
	for (size_t w = 0; w < t->n_windows; w++)
		here |= metric_rows[i].window && !strcmp(windows[w], metric_rows[i].window);
	/* a time metric's figures each carry their unit, as compare's do: its label has none */
	struct compare_scale sc = compare_time_scale(metric_rows[i].metric, NULL, 1);
	const char *paren = strstr(metric_rows[i].label, " (");
	if (sc.unit && paren)
		snprintf(t->label[i], sizeof(t->label[i]), "%.*s", (int)(paren - metric_rows[i].label), metric_rows[i].label);
	else
		snprintf(t->label[i], sizeof(t->label[i]), "%s", metric_rows[i].label);
	for (size_t w = 0; w < t->n_windows; w++) {
		struct json_object *st = client_get(arm, "windows", windows[w], metric_rows[i].metric);
		char *cut;

		t->shown[i] |= st != NULL && here;
		fmt_stat(st, metric_rows[i].metric, t->cell[i][w], sizeof(t->cell[i][w]));
		t->range[i][w][0] = '\0';
		if (t->l->two_lines && (cut = strstr(t->cell[i][w], " ("))) {
			snprintf(t->range[i][w], sizeof(t->range[i][w]), "%s", cut + 1);
			*cut = '\0';
		}
	}
	if (!t->shown[i])
		return;
	t->mark[i] = emulated && report_metric_time_based(metric_rows[i].metric, NULL);
	if (compare_text_width(t->label[i]) > t->wlabel)
		t->wlabel = compare_text_width(t->label[i]);
	for (size_t w = 0; w < t->n_windows; w++) {
		size_t cw = compare_text_width(t->cell[i][w]), rw = compare_text_width(t->range[i][w]);
		cw = cw > rw ? cw : rw;
		t->wcol[w] = t->wcol[w] > cw ? t->wcol[w] : cw;
	}
}

/* Fills t for layout l; returns the width of its widest line. */
static size_t arm_table_fill(struct arm_table *t, struct json_object *arm, const char *const *windows,
			     const char *const *titles, bool emulated, const struct arm_layout *l)
{
	size_t total = 0, mark = 0;

	t->l = l;
	t->wkey = 0;
	t->wlabel = 20; /* the labels of the usual rows, so that tables of several arms line up */
	for (size_t w = 0; w < t->n_windows; w++)
		t->wcol[w] = l->wrap_titles ? longest_word(titles[w]) : compare_text_width(titles[w]);
	for (size_t i = 0; i < n_metric_rows; i++) {
		arm_row_fill(t, i, arm, windows, emulated);
		if (t->shown[i] && t->mark[i])
			mark = strlen(EMULATED_MARK);
	}
	for (size_t w = 0; w < t->n_windows; w++)
		total += 2 + t->wcol[w];
	if (l->stacked) {
		size_t cell = 0;
		for (size_t w = 0; w < t->n_windows; w++) {
			t->wkey = strlen(windows[w]) > t->wkey ? strlen(windows[w]) : t->wkey;
			for (size_t i = 0; i < n_metric_rows; i++)
				if (t->shown[i] && compare_text_width(t->cell[i][w]) > cell)
					cell = compare_text_width(t->cell[i][w]);
		}
		total = 2 + t->wkey + 2 + cell;
	}
	/* the mark ends the label's line when that is its own, else the row's first line unless it has two */
	if (l->label_alone)
		return 2 + total > 2 + t->wlabel + mark ? 2 + total : 2 + t->wlabel + mark;
	return 2 + t->wlabel + (l->two_lines ? 0 : mark) + total;
}

/* The columns' titles: on one line, or each wrapped within its column, as many lines as the longest needs. */
static void arm_table_titles(FILE *out, const struct arm_table *t, const char *const *titles)
{
	size_t lead = t->l->label_alone ? 0 : t->wlabel;

	if (t->l->stacked) /* each line names its window */
		return;

	for (size_t k = 0;; k++) {
		char part[ARM_TABLE_MAX_WINDOWS][ARM_TABLE_CELL];
		size_t end = 0;

		for (size_t w = 0; w < t->n_windows; w++) {
			if (t->l->wrap_titles)
				title_line(titles[w], t->wcol[w], k, part[w], sizeof(part[w]));
			else
				snprintf(part[w], sizeof(part[w]), "%s", k ? "" : titles[w]);
			if (part[w][0])
				end = w + 1;
		}
		if (!end)
			return;
		fprintf(out, "  %*s", (int)lead, "");
		for (size_t w = 0; w < end; w++) {
			fprintf(out, "  ");
			print_padded(out, part[w], w + 1 < end ? t->wcol[w] : 0);
		}
		fprintf(out, "\n");
	}
}

/* A row stacked: its label (and mark), then a line per window with a figure, "pre  1,220 (1,200 1,240)". */
static void arm_table_row_stacked(FILE *out, const struct arm_table *t, size_t i, const char *const *windows)
{
	fprintf(out, "  %s%s\n", t->label[i] + strspn(t->label[i], " "), t->mark[i] ? EMULATED_MARK : "");
	for (size_t w = 0; w < t->n_windows; w++)
		if (t->cell[i][w][0])
			fprintf(out, "    %-*s  %s\n", (int)t->wkey, windows[w], t->cell[i][w]);
}

/* A row's label and cells (its medians), then, in two lines, its (min max) under them. */
static void arm_table_row(FILE *out, const struct arm_table *t, size_t i)
{
	bool two = t->l->two_lines, alone = t->l->label_alone, end_mark = t->mark[i] && !two && !alone;
	size_t end = 0, last = SIZE_MAX, lead = alone ? 0 : t->wlabel;

	fprintf(out, "  ");
	if (alone) /* a sub-row's indent ("  of which uffd-wp") would put it among the figures: none */
		fprintf(out, "%s%s\n  ", t->label[i] + strspn(t->label[i], " "), t->mark[i] ? EMULATED_MARK : "");
	else
		print_padded(out, t->label[i], t->wlabel);
	/* no blanks at the end of a line: cells up to the last that has text, padded only before more */
	for (size_t w = 0; w < t->n_windows; w++)
		if (t->cell[i][w][0] || end_mark)
			end = w + 1;
	for (size_t w = 0; w < end; w++) {
		fprintf(out, "  ");
		print_padded(out, t->cell[i][w], w + 1 < end || end_mark ? t->wcol[w] : 0);
	}
	/* a time, rate or latency under TCG: the emulator's (reports/timing.h) */
	fprintf(out, "%s\n", end_mark ? EMULATED_MARK : "");
	for (size_t w = 0; two && w < t->n_windows; w++)
		if (t->range[i][w][0])
			last = w;
	if (!two || (last == SIZE_MAX && (!t->mark[i] || alone)))
		return;
	fprintf(out, "  ");
	print_padded(out, t->mark[i] && !alone ? "  emulated" : "", last == SIZE_MAX ? 0 : lead);
	for (size_t w = 0; last != SIZE_MAX && w <= last; w++) {
		fprintf(out, "  ");
		print_padded(out, t->range[i][w], w < last ? t->wcol[w] : 0);
	}
	fprintf(out, "\n");
}

/* The room left widens wrapped titles' columns, the title that needs least first: whole titles, fewer lines. */
static void widen_for_titles(struct arm_table *t, const char *const *titles, size_t left)
{
	for (bool done[ARM_TABLE_MAX_WINDOWS] = {};;) {
		size_t best = SIZE_MAX, need = SIZE_MAX;
		for (size_t w = 0; w < t->n_windows; w++) {
			size_t want = compare_text_width(titles[w]);
			if (!done[w] && want > t->wcol[w] && want - t->wcol[w] < need) {
				best = w;
				need = want - t->wcol[w];
			}
		}
		if (best == SIZE_MAX)
			return;
		done[best] = true;
		need = need < left ? need : left;
		t->wcol[best] += need;
		left -= need;
	}
}

void print_arm_windows(FILE *out, struct json_object *arm, const char *const *windows, const char *const *titles,
		       size_t n_windows, bool emulated, size_t width)
{
	_cleanup_free_ struct arm_table *t = calloc(1, sizeof(*t));
	size_t l = 0, total;

	if (!t)
		return;
	t->n_windows = n_windows > ARM_TABLE_MAX_WINDOWS ? ARM_TABLE_MAX_WINDOWS : n_windows;
	while ((total = arm_table_fill(t, arm, windows, titles, emulated, &arm_layouts[l])) > width && width &&
	       l + 1 < ARRAY_SIZE(arm_layouts))
		l++;
	if (arm_layouts[l].wrap_titles)
		widen_for_titles(t, titles, width > total ? width - total : 0);
	arm_table_titles(out, t, titles);
	for (size_t i = 0; i < n_metric_rows; i++)
		if (t->shown[i] && t->l->stacked)
			arm_table_row_stacked(out, t, i, windows);
		else if (t->shown[i])
			arm_table_row(out, t, i);
}

void print_arm_summary(FILE *out, struct json_object *report, struct json_object *arm, const char *const *windows,
		       const char *const *titles, size_t n_windows)
{
	const char *label = client_get_string(arm, "label", NULL);
	struct report_timing timing;
	char head[160], text[96];

	fputc('\n', out);
	snprintf(head, sizeof(head), "arm %s: ", label ? label : "?");
	snprintf(text, sizeof(text), "%d of %d repetitions completed; median (min max)",
		 json_object_get_int(client_get(arm, "repetitions", "completed", NULL)),
		 json_object_get_int(client_get(arm, "repetitions", "total", NULL)));
	print_wrapped_at(out, head, text, output_width(), 4);
	report_timing_of(report, label, &timing);
	print_arm_windows(out, arm, windows, titles, n_windows, timing.emulated, output_width());
	print_unavailable(out, report, arm);
}

/*
 * Why a row says n/a: the reason a repetition's snapshot window gives for a
 * metric the arm has no median of (a counter this host cannot count, e.g.
 * pf_taken on PVM), once per metric.
 */
const char *report_action_window(struct json_object *report)
{
	return report_scenario_window(client_get_string(client_get(report, "spec", NULL, NULL), "scenario", NULL));
}

void print_unavailable(FILE *out, struct json_object *report, struct json_object *arm)
{
	struct json_object *reps = client_get(report, "repetitions", NULL, NULL);
	const char *w = report_action_window(report);

	for (size_t i = 0; i < n_metric_rows; i++) {
		if (client_get(arm, "windows", w, metric_rows[i].metric) &&
		    client_get(client_get(arm, "windows", w, metric_rows[i].metric), "median", NULL, NULL))
			continue;
		for (size_t r = 0; reps && json_object_is_type(reps, json_type_array) && r < json_object_array_length(reps);
		     r++) {
			struct json_object *why =
				client_get(client_get(json_object_array_get_idx(reps, r), "windows", w, "unavailable"),
					   metric_rows[i].metric, NULL, NULL);
			if (why && json_object_is_type(why, json_type_string)) {
				char head[64];
				snprintf(head, sizeof(head), "  %s: unavailable: ", metric_rows[i].label);
				print_wrapped(out, head, client_terminal_text(why), output_width());
				break;
			}
		}
	}
}
