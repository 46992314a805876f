// SPDX-License-Identifier: GPL-2.0-or-later
/* CSV exports (RFC 4180): a run's per-repetition window figures, a comparison's per-side statistics. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "export-private.h"
#include "json-util.h"
#include "strv.h"
#include "timing.h"

/* Reasons this long and longer are written in one row; the later rows name it ("as row 7"). */
#define CSV_REASON_ONCE 120

/* The long reasons written so far and the rows (1: the header) that hold them. */
struct csv_reasons {
	char **text;
	size_t *row, n;
	size_t rows; /* rows written, the header included */
	bool oom;
};

/* why as a row's unavailable column: itself, or "as row N" for a long reason already written. */
static const char *reason_cell(struct csv_reasons *r, const char *why, char *buf, size_t size)
{
	r->rows++;
	if (!why || !*why || strlen(why) < CSV_REASON_ONCE)
		return why;
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->text[i], why)) {
			snprintf(buf, size, "as row %zu", r->row[i]);
			return buf;
		}
	size_t *nrow = realloc(r->row, (r->n + 1) * sizeof(*nrow));
	if (nrow)
		r->row = nrow;
	if (!nrow || strv_push(&r->text, why) < 0) {
		r->oom = true;
		return why;
	}
	r->row[r->n++] = r->rows;
	return why;
}

/* A repetition's fields, as every row of it starts. */
struct csv_rep {
	struct strbuf *b;
	const char *id, *arm, *index, *state;
	bool emulated; /* the repetition's timing */
	struct csv_reasons *reasons;
};

/* A repetition's figure's row: its window (migration, fault-in), its name as the metric (pass.2.duration_s). */
static void figure_row(const struct export_rep_figure *f, void *userdata)
{
	const struct csv_rep *c = userdata;
	char num[EXPORT_NUMBER_MAX] = "";

	export_format_number(f->value, num);
	char as[32];
	const char *row[] = { c->id, c->arm, c->index, c->state, f->window, f->name, f->unit, num,
			      reason_cell(c->reasons, num[0] ? "" : f->unavailable, as, sizeof(as)),
			      c->emulated && report_metric_time_based(f->name, f->unit) ? "true" : "false" };
	export_append_csv_row(c->b, row, ARRAY_SIZE(row));
}

int export_report_csv(struct json_object *report, char **ret, struct sb_error *err)
{
	static const char *const header[] = { "run", "arm", "repetition", "state", "window",
					      "metric", "unit", "value", "unavailable", "emulated" };
	_cleanup_strbuf_ struct strbuf b = {};
	struct json_object *reps;
	const char *id, *report_windows[EXPORT_REPORT_WINDOWS];
	struct csv_reasons reasons = { .rows = 1 };
	int r = export_report_parts(report, &id, &reps, err);

	if (r < 0)
		return r;

	export_report_windows(report, report_windows);
	export_append_csv_row(&b, header, ARRAY_SIZE(header));
	for (size_t i = 0; reps && i < json_object_array_length(reps); i++) {
		struct json_object *rep = json_object_array_get_idx(reps, i);
		struct json_object *windows = json_lookup(rep, "windows");
		char index[24];

		snprintf(index, sizeof(index), "%lld", (long long)json_object_get_int64(json_lookup(rep, "index")));
		struct report_timing timing;
		report_timing_of(report, json_lookup_string(rep, "arm"), &timing);
		for (size_t w = 0; w < EXPORT_REPORT_WINDOWS; w++) {
			struct json_object *win = json_lookup(windows, report_windows[w]);
			struct json_object *metrics = json_lookup(win, "metrics");
			struct json_object *unavailable = json_lookup(win, "unavailable");

			if (!json_object_is_type(metrics, json_type_object))
				continue;
			json_object_object_foreach(metrics, name, value) {
				char num[EXPORT_NUMBER_MAX] = "";
				const char *why = json_lookup_string(unavailable, name);

				if (value && json_is_number(value))
					export_format_number(json_object_get_double(value), num);
				else if (!why)
					why = "not measured";
				char as[32];
				const char *row[] = { id, json_lookup_string(rep, "arm"), index,
						      json_lookup_string(rep, "state"), report_windows[w], name,
						      export_metric_unit(report, name), num,
						      reason_cell(&reasons, num[0] ? "" : why, as, sizeof(as)),
						      timing.emulated && report_metric_time_based(name, export_metric_unit(report, name))
							      ? "true"
							      : "false" };
				export_append_csv_row(&b, row, ARRAY_SIZE(row));
			}
			struct csv_rep c = { &b, id, json_lookup_string(rep, "arm"), index, json_lookup_string(rep, "state"),
					     timing.emulated, &reasons };
			export_rep_figures(report, rep, report_windows[w], figure_row, &c);
		}
	}
	strv_free(reasons.text);
	free(reasons.row);
	char *text = reasons.oom ? NULL : strbuf_steal(&b);
	if (!text)
		return sb_error_set(err, -ENOMEM, "out of memory writing the CSV of run %s", id);
	*ret = text;
	return 0;
}

char *export_compare_csv(const struct compare_result *r)
{
	static const char *const header[] = { "window", "metric", "unit", "better", "side", "label", "n",
					      "missing", "median", "min", "max", "mean", "stddev", "cv",
					      "ratio", "pct_change", "from_zero", "p", "alpha", "threshold_pct",
					      "verdict", "ci_low", "ci_high", "emulated", "change", "change_ci" };
	_cleanup_strbuf_ struct strbuf b = {};
	char alpha[EXPORT_NUMBER_MAX];

	export_format_number(r->opts.alpha, alpha);
	export_append_csv_row(&b, header, ARRAY_SIZE(header));
	for (size_t i = 0; i < r->n_metrics; i++) {
		const struct compare_metric *m = &r->metrics[i];
		char ratio[EXPORT_NUMBER_MAX], pct[EXPORT_NUMBER_MAX], p[EXPORT_NUMBER_MAX],
			threshold[EXPORT_NUMBER_MAX], ci_low[EXPORT_NUMBER_MAX] = "", ci_high[EXPORT_NUMBER_MAX] = "";
		char change[32], change_ci[72]; /* as the tables write them: -23.5%, 1/380x [1/414x 1/348x] */

		compare_format_change(m, change, sizeof(change));
		compare_format_ci(m, change_ci, sizeof(change_ci));

		export_format_number(m->ratio, ratio);
		export_format_number(m->pct_change, pct);
		export_format_number(m->mwu.p, p);
		export_format_number(m->threshold_pct, threshold);
		if (m->have_ci) { /* the bootstrap interval of the ratio; empty without one */
			export_format_number(m->ci.low, ci_low);
			export_format_number(m->ci.high, ci_high);
		}
		for (size_t s = 0; s < 2; s++) {
			const struct compare_arm_stats *a = &m->arm[s];
			char n[24], missing[24], med[EXPORT_NUMBER_MAX], min[EXPORT_NUMBER_MAX],
				max[EXPORT_NUMBER_MAX], mean[EXPORT_NUMBER_MAX], sd[EXPORT_NUMBER_MAX],
				cv[EXPORT_NUMBER_MAX];

			snprintf(n, sizeof(n), "%zu", a->n);
			snprintf(missing, sizeof(missing), "%zu", a->n_missing);
			export_format_number(a->s.median, med);
			export_format_number(a->s.min, min);
			export_format_number(a->s.max, max);
			export_format_number(a->s.mean, mean);
			export_format_number(a->s.stddev, sd);
			export_format_number(a->s.cv, cv);
			const char *row[] = { m->window, m->name, m->unit, compare_better_name(m->better),
					      r->side[s]->role, r->side[s]->label, n, missing, med, min, max, mean,
					      sd, cv, ratio, pct, m->from_zero ? "true" : "false", p, alpha,
					      threshold, compare_verdict_name(m->verdict), ci_low, ci_high,
					      m->emulated ? "true" : "false", change, change_ci };
			export_append_csv_row(&b, row, ARRAY_SIZE(row));
		}
	}
	return strbuf_steal(&b);
}
