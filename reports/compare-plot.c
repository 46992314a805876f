// SPDX-License-Identifier: GPL-2.0-or-later
/* compare's plots, hand-written SVG: per-metric strip/box plots and a timeline. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "compare-private.h"
#include "svg.h"

static const char *const side_color[2] = { "#3b6fb6", "#d9782d" };
static const char *const side_fill[2] = { "#d6e2f3", "#f7dcc6" }; /* box fill */

struct axis {
	double lo, hi, step;
	bool log; /* decades from lo to hi (powers of ten); values at or below lo sit on the bottom */
};

/* Ticks at 1, 2 or 5 times a power of ten, about five of them. */
static struct axis nice_axis(double lo, double hi)
{
	struct axis a;

	if (!(hi > lo)) {
		double pad = fabs(lo) > 0 ? fabs(lo) * 0.1 : 1.0;
		lo -= pad;
		hi += pad;
	}
	double raw = (hi - lo) / 5.0;
	double mag = pow(10.0, floor(log10(raw)));
	double f = raw / mag;
	a.step = (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * mag;
	a.lo = floor(lo / a.step) * a.step;
	a.hi = ceil(hi / a.step) * a.step;
	if (a.hi <= a.lo)
		a.hi = a.lo + a.step;
	return a;
}

/* Decades around the positive values lo..hi: a change by orders of magnitude stays readable on both sides. */
static struct axis log_axis(double lo, double hi)
{
	struct axis a = { .log = true, .step = 10 };

	a.lo = pow(10, floor(log10(lo)));
	a.hi = pow(10, ceil(log10(hi)));
	if (a.hi <= a.lo)
		a.hi = a.lo * 10;
	return a;
}

static double scale(const struct axis *a, double v, double px_lo, double px_hi)
{
	if (a->log)
		return px_lo + (v > a->lo ? log10(v / a->lo) / log10(a->hi / a->lo) : 0) * (px_hi - px_lo);
	return px_lo + (v - a->lo) / (a->hi - a->lo) * (px_hi - px_lo);
}

static void y_axis(struct svg *s, const struct axis *a, double x0, double x1, double y_bottom, double y_top)
{
	char buf[40];
	size_t n = a->log ? (size_t)llround(log10(a->hi / a->lo)) : (size_t)llround((a->hi - a->lo) / a->step);

	svg_group_begin(s, "y-axis");
	for (size_t i = 0; i <= n && i <= 20; i++) {
		double v = a->log ? a->lo * pow(10, (double)i) : a->lo + (double)i * a->step;
		double y = scale(a, v, y_bottom, y_top);
		svg_line(s, x0, y, x1, y, "#e3e3e3", 1, NULL);
		compare_format_number(fabs(v) < a->step * 1e-9 ? 0.0 : v, buf, sizeof(buf));
		svg_text(s, x0 - 6, y + 4, "end", 11, "#333333", "%s", buf);
	}
	svg_line(s, x0, y_bottom, x0, y_top, "#555555", 1, NULL);
	svg_group_end(s);
}

/* The value axis of a metric's plot: linear, from 0 when the data reach down towards it; decades for a large change. */
static struct axis metric_axis(const struct compare_metric *m, double mult, bool *zeros)
{
	double lo = fmin(m->arm[0].s.min, m->arm[1].s.min) * mult, hi = fmax(m->arm[0].s.max, m->arm[1].s.max) * mult;
	/* Start at 0 when the data reach down towards it, so a bar height
	 * reads as a magnitude; otherwise zoom in on the spread. */
	if (lo >= 0 && lo <= hi / 2)
		lo = 0;
	struct axis ax = nice_axis(lo, hi);
	/* a change beyond 10x on a linear axis squeezes the smaller side's box onto 0: decades instead */
	bool orders = (isfinite(m->ratio) && m->ratio > 0 && (m->ratio > 10 || m->ratio < 0.1)) || m->from_zero;
	double min_pos = INFINITY;

	*zeros = false;
	for (int k = 0; k < 2; k++)
		for (size_t j = 0; j < m->arm[k].n; j++) {
			double v = m->arm[k].values[j] * mult;
			if (v > 0)
				min_pos = fmin(min_pos, v);
			*zeros |= v <= 0;
		}
	/* with zeros (0 drawn at the bottom) decades are drawn even when every
	 * positive value is the same one: a change from 0 to one value */
	if (orders && lo >= 0 && isfinite(min_pos) && (hi > min_pos || *zeros))
		ax = log_axis(*zeros ? min_pos / 10 : min_pos, hi);
	return ax;
}

/* Side k's box plot in its column (centred on cx): whiskers, box, median, each repetition, its label. */
static int draw_side(struct svg *s, const struct compare_result *r, const struct compare_metric *m, int k,
		     const struct axis *ax, const struct compare_scale *sc, double cx, double y_bottom, double y_top)
{
	const struct compare_arm_stats *a = &m->arm[k];
	const double mult = sc->mult;
	_cleanup_free_ double *sorted = malloc(a->n * sizeof(*sorted));
	char label[80], buf[64];

	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, a->values, a->n * sizeof(*sorted));
	stats_sort(sorted, a->n);
	double q1 = stats_quantile_sorted(sorted, a->n, 0.25) * mult, q3 = stats_quantile_sorted(sorted, a->n, 0.75) * mult;
	double bx = cx - 40, y_min = scale(ax, a->s.min * mult, y_bottom, y_top);
	double y_max = scale(ax, a->s.max * mult, y_bottom, y_top);

	snprintf(buf, sizeof(buf), "side-%s", k == 0 ? "baseline" : "patched");
	svg_group_begin(s, buf);
	/* whiskers: min to max */
	svg_line(s, bx + 30, y_min, bx + 30, y_max, side_color[k], 1.5, NULL);
	svg_line(s, bx + 18, y_min, bx + 42, y_min, side_color[k], 1.5, NULL);
	svg_line(s, bx + 18, y_max, bx + 42, y_max, side_color[k], 1.5, NULL);
	/* box: the middle half (type-7 quartiles), line at the median */
	double y_q3 = scale(ax, q3, y_bottom, y_top), y_q1 = scale(ax, q1, y_bottom, y_top);
	svg_rect(s, bx, y_q3, 60, y_q1 - y_q3, side_fill[k], side_color[k], 1.0);
	double y_med = scale(ax, a->s.median * mult, y_bottom, y_top);
	svg_line(s, bx, y_med, bx + 60, y_med, side_color[k], 3, NULL);
	/* every repetition as a point beside the box, spread so equal values stay visible */
	for (size_t j = 0; j < a->n; j++) {
		double px = cx + 44 + (double)(j % 5) * 7;
		svg_circle(s, px, scale(ax, a->values[j] * mult, y_bottom, y_top), 3.5, side_color[k], "white");
	}
	text_sanitize(r->side[k]->label, label, sizeof(label));
	svg_text(s, cx, y_bottom + 22, "middle", 13, side_color[k], "%s: %s", r->side[k]->role, label);
	compare_format_number(a->s.median * mult, buf, sizeof(buf));
	svg_text(s, cx, y_bottom + 40, "middle", 11, "#333333", "n = %zu, median %s%s%s", a->n, buf,
		 sc->unit ? " " : "", sc->unit ? sc->unit : "");
	svg_group_end(s);
	return 0;
}

char *compare_plot_metric_svg(const struct compare_result *r, size_t i)
{
	const struct compare_metric *m = &r->metrics[i];
	const double W = 640, H = 420, left = 90, right = 20, top = 56, bottom = 86;
	char name[96], change[32], ratio[72];
	struct svg s;

	if (i >= r->n_metrics)
		return NULL;
	/* a time metric is drawn in the unit the tables use (ns, µs, ms, s) */
	struct compare_scale sc = compare_metric_scale(m);
	const double mult = sc.mult;
	compare_metric_label(m->name, &sc, name, sizeof(name));
	bool zeros;
	struct axis ax = metric_axis(m, mult, &zeros);

	char title[200];
	snprintf(title, sizeof(title), "snapbench compare: %s, %s window, %s against %s", name, m->window,
		 r->side[0]->role, r->side[1]->role);
	if (svg_begin(&s, W, H, title) < 0)
		return NULL;
	svg_text(&s, W / 2, 24, "middle", 16, "#111111", "%s, %s window", name, m->window);
	compare_format_change(m, change, sizeof(change));
	compare_format_ci(m, ratio, sizeof(ratio));
	svg_text(&s, W / 2, 43, "middle", 12, "#444444", "change of medians %s%s%s, p = %.2g: %s", change,
		 ratio[0] ? " " : "", ratio, m->mwu.p, compare_verdict_name(m->verdict));
	y_axis(&s, &ax, left, W - right, H - bottom, top);
	if (sc.unit) {
		svg_text(&s, 16, top - 10, "start", 11, "#333333", "%s", sc.unit);
	} else if (m->unit[0]) {
		char unit[40];
		text_sanitize(m->unit, unit, sizeof(unit));
		svg_text(&s, 16, top - 10, "start", 11, "#333333", "%s", unit);
	}

	double colw = (W - left - right) / 2;
	for (int k = 0; k < 2; k++)
		if (draw_side(&s, r, m, k, &ax, &sc, left + colw * (k + 0.5), H - bottom, top) < 0) {
			svg_abort(&s);
			return NULL;
		}
	svg_text(&s, W / 2, H - 14, "middle", 10, "#666666", "box: quartiles; bar: median; whiskers: min and max; "
		 "dots: repetitions%s", !ax.log ? "" : zeros ? "; log scale, 0 drawn at the bottom" : "; log scale");
	return svg_end(&s);
}

/* ---- timeline ---- */

struct step {
	double t0, t1;   /* seconds relative to the start of the action window */
	double rate[COMPARE_TIMELINE_COUNTERS]; /* per second; NAN when the counter is absent */
};

struct series {
	struct step *steps;
	size_t n;
	double act_end;     /* end of the action window, relative */
	const char *window; /* the action window's name, the report's action_window */
	bool have[COMPARE_TIMELINE_COUNTERS];
	const struct compare_rep *rep;
};

static const char *const panel_id[COMPARE_TIMELINE_COUNTERS] = { "panel-pf", "panel-tlb", "panel-invalidations" };
static const char *const panel_name[COMPARE_TIMELINE_COUNTERS] = { "pf/s", "tlb/s", "invalidations/s" };

/* The repetition whose action-window pf_per_s is closest to the side's median. */
static size_t representative(const struct compare_side *side)
{
	_cleanup_free_ double *v = malloc(side->n_reps * sizeof(*v));
	size_t n = 0, best = 0;
	double best_d = INFINITY;

	if (!v)
		return 0;
	for (size_t i = 0; i < side->n_reps; i++) {
		const struct compare_rep *rp = &side->reps[i];
		struct json_object *w = json_lookup(json_lookup(rp->rep, "windows"), rp->report->action_window);
		struct json_object *x = json_lookup(json_lookup(w, "metrics"), "pf_per_s");
		v[i] = json_is_number(x) ? json_object_get_double(x) : NAN;
		if (!isnan(v[i]))
			n++;
	}
	if (!n)
		return 0;
	double *sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return 0;
	for (size_t i = 0, j = 0; i < side->n_reps; i++)
		if (!isnan(v[i]))
			sorted[j++] = v[i];
	stats_sort(sorted, n);
	double med = stats_median_sorted(sorted, n);
	free(sorted);
	for (size_t i = 0; i < side->n_reps; i++)
		if (!isnan(v[i]) && fabs(v[i] - med) < best_d) {
			best_d = fabs(v[i] - med);
			best = i;
		}
	return best;
}

static int series_from_rep(const struct compare_rep *rp, struct series *out)
{
	const struct compare_timeline *tl = rp->timeline;
	size_t n = tl ? tl->n : 0;
	double start = NAN, end = NAN;

	*out = (struct series){ .rep = rp, .window = rp->report->action_window };
	for (size_t i = 0; i < n; i++) {
		if (tl->window[i] != COMPARE_W_ACTION)
			continue;
		if (isnan(start))
			start = tl->t_s[i] - tl->dt_s[i];
		end = tl->t_s[i];
	}
	if (isnan(start))
		return -ENODATA;

	/* Merge runs of rows (within a window) so no plot has more than
	 * COMPARE_PLOT_MAX_STEPS steps; a merged step's rate is its total
	 * over its duration, so nothing is averaged away unfairly. */
	size_t k = (n + COMPARE_PLOT_MAX_STEPS - 1) / COMPARE_PLOT_MAX_STEPS;
	out->steps = calloc(n, sizeof(*out->steps));
	if (!out->steps)
		return -ENOMEM;
	out->act_end = end - start;
	for (size_t i = 0; i < n;) {
		double sum[COMPARE_TIMELINE_COUNTERS] = { 0 }, dur = 0;
		bool have[COMPARE_TIMELINE_COUNTERS] = { false };
		size_t j = i;

		for (; j < n && j < i + k && tl->window[j] == tl->window[i]; j++) {
			dur += tl->dt_s[j];
			for (int c = 0; c < COMPARE_TIMELINE_COUNTERS; c++)
				if (!isnan(tl->counter[c][j])) {
					sum[c] += tl->counter[c][j];
					have[c] = true;
				}
		}
		if (tl->window[i] != COMPARE_W_WARMUP && dur > 0) {
			struct step *st = &out->steps[out->n++];
			st->t0 = tl->t_s[i] - tl->dt_s[i] - start;
			st->t1 = tl->t_s[j - 1] - start;
			for (int c = 0; c < COMPARE_TIMELINE_COUNTERS; c++) {
				st->rate[c] = have[c] ? sum[c] / dur : NAN;
				out->have[c] |= have[c];
			}
		}
		i = j;
	}
	return out->n ? 0 : -ENODATA;
}

/* The timeline plot's geometry (px). */
static const struct {
	double W, left, right, top, panel_h, gap;
} tl_geom = { .W = 820, .left = 90, .right = 24, .top = 100, .panel_h = 170, .gap = 70 };

/* Every repetition of each side that has rows in its action window; the representative first in ser[k]. */
struct side_series {
	struct series *v;
	size_t n;
};

static void side_series_free(struct side_series *ss)
{
	for (size_t i = 0; i < ss->n; i++)
		free(ss->v[i].steps);
	free(ss->v);
	*ss = (struct side_series){ 0 };
}

static int pick_series(const struct compare_result *r, struct side_series ser[2], const char **why)
{
	for (int k = 0; k < 2; k++) {
		const struct compare_side *side = r->side[k];
		size_t first = representative(side);

		ser[k].v = calloc(side->n_reps ? side->n_reps : 1, sizeof(*ser[k].v));
		if (!ser[k].v) {
			*why = "out of memory";
			return -ENOMEM;
		}
		for (size_t t = 0; t <= side->n_reps; t++) {
			size_t idx = t == 0 ? first : t - 1;
			if ((t > 0 && idx == first) || idx >= side->n_reps)
				continue;
			int rr = series_from_rep(&side->reps[idx], &ser[k].v[ser[k].n]);
			if (rr == -ENOMEM) {
				free(ser[k].v[ser[k].n].steps);
				*why = "out of memory";
				return rr;
			}
			if (rr < 0) {
				free(ser[k].v[ser[k].n].steps);
				ser[k].v[ser[k].n] = (struct series){ 0 };
				continue;
			}
			ser[k].n++;
		}
		if (!ser[k].n) {
			*why = "no repetition has timeline rows in the window of its scenario's action";
			return -ENODATA;
		}
	}
	return 0;
}

/* One repetition's counter c as a step line; -ENOMEM. */
static int draw_series(struct svg *s, const struct series *se, int c, const struct axis *tx, const struct axis *ay,
		       double y_bottom, double y_top, const char *color, double width)
{
	const double W = tl_geom.W, left = tl_geom.left, right = tl_geom.right;
	_cleanup_free_ double *xy = malloc((se->n ? se->n : 1) * 4 * sizeof(*xy));
	size_t np = 0;

	if (!xy)
		return -ENOMEM;
	for (size_t i = 0; i < se->n; i++) {
		const struct step *st = &se->steps[i];
		if (isnan(st->rate[c]))
			continue;
		double y = scale(ay, st->rate[c], y_bottom, y_top);
		xy[2 * np] = scale(tx, st->t0, left, W - right);
		xy[2 * np++ + 1] = y;
		xy[2 * np] = scale(tx, st->t1, left, W - right);
		xy[2 * np++ + 1] = y;
	}
	svg_polyline(s, xy, np, color, width);
	return 0;
}

/* Panel c (counter c of every repetition of both sides over time tx), its bars marking the action windows named win; -ENOMEM. */
static int draw_panel(struct svg *s, const struct compare_result *r, const struct side_series ser[2], int c,
		      const struct axis *tx, const char *win)
{
	const double W = tl_geom.W, left = tl_geom.left, right = tl_geom.right;
	double y_top = tl_geom.top + (double)c * (tl_geom.panel_h + tl_geom.gap), y_bottom = y_top + tl_geom.panel_h;
	double max = 0;
	char buf[64];

	for (int k = 0; k < 2; k++)
		for (size_t j = 0; j < ser[k].n; j++)
			for (size_t i = 0; i < ser[k].v[j].n; i++)
				if (!isnan(ser[k].v[j].steps[i].rate[c]))
					max = fmax(max, ser[k].v[j].steps[i].rate[c]);
	struct axis ay = nice_axis(0, max > 0 ? max : 1);

	svg_group_begin(s, panel_id[c]);
	svg_text(s, left, y_top - 8, "start", 13, "#111111", "%s (%s per second)", panel_name[c],
		 compare_timeline_counters[c]);
	svg_text(s, W - right, y_top - 8, "end", 11, "#555555", "bars: %s window", win);
	y_axis(s, &ay, left, W - right, y_bottom, y_top);
	/* each side's action window (its representative repetition's): a bar along the top of the panel, in a
	 * group named for the window so that a reader of the SVG knows which */
	for (int k = 0; k < 2; k++) {
		double x0 = scale(tx, 0, left, W - right), x1 = scale(tx, ser[k].v[0].act_end, left, W - right);
		snprintf(buf, sizeof(buf), "window-%s", ser[k].v[0].window);
		svg_group_begin(s, buf);
		svg_rect(s, x0, y_top + 2 + 7 * (double)k, x1 - x0, 5, side_color[k], "none", 0.5);
		svg_group_end(s);
	}
	svg_line(s, scale(tx, 0, left, W - right), y_top, scale(tx, 0, left, W - right), y_bottom, "#888888", 1,
		 "4 3");
	for (int k = 0; k < 2; k++) {
		bool any = false;
		for (size_t j = 0; j < ser[k].n; j++)
			any |= ser[k].v[j].have[c];
		if (!any) {
			svg_text(s, W / 2, y_top + 20 + 16 * k, "middle", 11, side_color[k], "%s: %s not in the timeline",
				 r->side[k]->role, compare_timeline_counters[c]);
			continue;
		}
		/* every repetition: the others thin and light, the representative (the first) over them */
		snprintf(buf, sizeof(buf), "series-%s", k == 0 ? "baseline" : "patched");
		svg_group_begin(s, buf);
		for (size_t j = ser[k].n; j-- > 0;)
			if (ser[k].v[j].have[c] &&
			    draw_series(s, &ser[k].v[j], c, tx, &ay, y_bottom, y_top, j ? side_fill[k] : side_color[k],
					j ? 1.0 : 1.8) < 0)
				return -ENOMEM;
		svg_group_end(s);
	}
	/* time axis */
	size_t nt = (size_t)llround((tx->hi - tx->lo) / tx->step);
	for (size_t i = 0; i <= nt && i <= 40; i++) {
		double v = tx->lo + (double)i * tx->step, x = scale(tx, v, left, W - right);
		svg_line(s, x, y_bottom, x, y_bottom + 4, "#555555", 1, NULL);
		compare_format_number(fabs(v) < tx->step * 1e-9 ? 0.0 : v, buf, sizeof(buf));
		svg_text(s, x, y_bottom + 16, "middle", 10, "#333333", "%s", buf);
	}
	svg_line(s, left, y_bottom, W - right, y_bottom, "#555555", 1, NULL);
	svg_group_end(s);
	return 0;
}

char *compare_plot_timeline_svg(const struct compare_result *r, const char **why)
{
	const double W = tl_geom.W, left = tl_geom.left;
	struct side_series ser[2] = { 0 };
	char label[80], win[64], title[256];
	struct svg s;
	char *out = NULL;

	*why = NULL;
	if (pick_series(r, ser, why) < 0)
		goto out;

	double t_lo = 0, t_hi = 0;
	bool have_inv = false;
	for (int k = 0; k < 2; k++)
		for (size_t j = 0; j < ser[k].n; j++) {
			have_inv |= ser[k].v[j].have[2];
			for (size_t i = 0; i < ser[k].v[j].n; i++) {
				t_lo = fmin(t_lo, ser[k].v[j].steps[i].t0);
				t_hi = fmax(t_hi, ser[k].v[j].steps[i].t1);
			}
		}
	struct axis tx = nice_axis(t_lo, t_hi);
	compare_timeline_window(r, win, sizeof(win));
	/* pf/s and tlb/s always (a missing counter is said so in its panel);
	 * invalidations/s when either side measured them */
	int panels = 2 + have_inv;
	const double H = tl_geom.top + panels * (tl_geom.panel_h + tl_geom.gap) + 10;

	snprintf(title, sizeof(title), "snapbench compare: %s through the %s window, every repetition of both sides",
		 panels > 2 ? "pf/s, tlb/s and invalidations/s" : "pf/s and tlb/s", win);
	if (svg_begin(&s, W, H, title) < 0) {
		*why = "out of memory";
		goto out;
	}
	svg_text(&s, W / 2, 24, "middle", 16, "#111111", "%s through the %s window",
		 panels > 2 ? "pf/s, tlb/s and invalidations/s" : "pf/s and tlb/s", win);
	for (int k = 0; k < 2; k++) {
		text_sanitize(r->side[k]->label, label, sizeof(label));
		char id[80];
		text_sanitize(ser[k].v[0].rep->report->id, id, sizeof(id));
		double ly = 44 + 18 * (double)k;
		svg_rect(&s, left, ly - 9, 14, 10, side_color[k], "none", 1.0);
		svg_text(&s, left + 20, ly, "start", 12, "#222222",
			 "%s %s: %zu repetition%s (bold: run %s, repetition %lld, pf/s nearest the median)",
			 r->side[k]->role, label, ser[k].n, ser[k].n == 1 ? "" : "s", id, (long long)ser[k].v[0].rep->index);
	}
	for (int c = 0; c < panels; c++) {
		if (draw_panel(&s, r, ser, c, &tx, win) < 0) {
			svg_abort(&s);
			*why = "out of memory";
			goto out;
		}
	}
	svg_text(&s, W / 2, H - 12, "middle", 11, "#444444",
		 "seconds since the %s window started (dashed line); bars at the top: each side's %s window", win, win);
	out = svg_end(&s);
	if (!out)
		*why = "out of memory";
out:
	side_series_free(&ser[0]);
	side_series_free(&ser[1]);
	return out;
}
