// SPDX-License-Identifier: GPL-2.0-or-later
/* Text output for the daemon verbs. */
#include <json-c/json.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "client.h"
#include "compare.h"
#include "daemon-format.h"
#include "macro.h"
#include "parse-number.h"
#include "report.h"
#include "run-progress.h"
#include "timing.h"

void fmt_rate(char *buf, size_t len, double v)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (fabs(v) >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (fabs(v) >= 1e4)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.4g", v);
}

void fmt_json_rate(char *buf, size_t len, struct json_object *v)
{
	if (!v || !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		snprintf(buf, len, "-");
	else
		fmt_rate(buf, len, json_object_get_double(v));
}

void fmt_duration(char *buf, size_t len, double s)
{
	if (!isfinite(s) || s < 0)
		snprintf(buf, len, "-");
	else if (s >= 3600)
		snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
	else if (s >= 60)
		snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
	else
		snprintf(buf, len, "%.1fs", s);
}

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
static void fmt_stat(struct json_object *st, const char *metric, bool compact, char *buf, size_t len)
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
	compare_format_side(&m, 0, compact, output_ascii(), buf, len);
}

size_t output_width(void)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	uint64_t v;

	if (env && parse_uint64(env, 20, 10000, &v, NULL) >= 0)
		return (size_t)v;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return COMPARE_TEXT_WIDTH_DEFAULT;
}

bool output_ascii(void)
{
	static int ascii = -1;
	const char *codeset;

	if (ascii < 0) {
		codeset = setlocale(LC_CTYPE, "") ? nl_langinfo(CODESET) : NULL;
		ascii = !codeset || (strcasecmp(codeset, "UTF-8") && strcasecmp(codeset, "utf8"));
	}
	return ascii;
}

static void print_padded(FILE *out, const char *s, size_t width)
{
	size_t w = compare_text_width(s);

	fprintf(out, "%s%*s", s, (int)(width > w ? width - w : 0), "");
}

#define ARM_TABLE_MAX_WINDOWS 3
#define ARM_TABLE_CELL 80
#define EMULATED_MARK "  emulated"

/* An arm table's cells and column widths in one layout (compact numbers or not, one line per row or two). */
struct arm_table {
	char cell[ARRAY_SIZE(metric_rows)][ARM_TABLE_MAX_WINDOWS][ARM_TABLE_CELL];
	char range[ARRAY_SIZE(metric_rows)][ARM_TABLE_MAX_WINDOWS][ARM_TABLE_CELL]; /* two lines: "(min max)" */
	char label[ARRAY_SIZE(metric_rows)][64];
	bool shown[ARRAY_SIZE(metric_rows)], mark[ARRAY_SIZE(metric_rows)];
	size_t wlabel, wcol[ARM_TABLE_MAX_WINDOWS], n_windows;
};

/* Fills t for one layout; returns the width of its widest line. */
static size_t arm_table_fill(struct arm_table *t, struct json_object *arm, const char *const *windows,
			     const char *const *titles, bool emulated, bool compact, bool two_lines)
{
	size_t total, n = t->n_windows;
	bool any_mark = false;

	t->wlabel = 20;
	for (size_t w = 0; w < n; w++)
		t->wcol[w] = compare_text_width(titles[w]);
	for (size_t i = 0; i < n_metric_rows; i++) {
		bool here = !metric_rows[i].window;

		t->shown[i] = false;
		for (size_t w = 0; w < n; w++)
			here |= metric_rows[i].window && !strcmp(windows[w], metric_rows[i].window);
		/* a time metric's figures each carry their unit, as compare's do: its label has none */
		struct compare_scale sc = compare_time_scale(metric_rows[i].metric, NULL, 1);
		const char *paren = strstr(metric_rows[i].label, " (");
		if (sc.unit && paren)
			snprintf(t->label[i], sizeof(t->label[i]), "%.*s", (int)(paren - metric_rows[i].label),
				 metric_rows[i].label);
		else
			snprintf(t->label[i], sizeof(t->label[i]), "%s", metric_rows[i].label);
		for (size_t w = 0; w < n; w++) {
			struct json_object *st = client_get(arm, "windows", windows[w], metric_rows[i].metric);
			char *cut;

			t->shown[i] |= st != NULL && here;
			fmt_stat(st, metric_rows[i].metric, compact, t->cell[i][w], sizeof(t->cell[i][w]));
			t->range[i][w][0] = '\0';
			if (two_lines && (cut = strstr(t->cell[i][w], " ("))) {
				snprintf(t->range[i][w], sizeof(t->range[i][w]), "%s", cut + 1);
				*cut = '\0';
			}
		}
		if (!t->shown[i])
			continue;
		t->mark[i] = emulated && report_metric_time_based(metric_rows[i].metric, NULL);
		any_mark |= t->mark[i];
		if (compare_text_width(t->label[i]) > t->wlabel)
			t->wlabel = compare_text_width(t->label[i]);
		for (size_t w = 0; w < n; w++) {
			size_t cw = compare_text_width(t->cell[i][w]), rw = compare_text_width(t->range[i][w]);
			cw = cw > rw ? cw : rw;
			t->wcol[w] = t->wcol[w] > cw ? t->wcol[w] : cw;
		}
	}
	/* two lines: the mark is in the label's column of the second line; else it ends the first */
	total = 2 + t->wlabel + (any_mark && !two_lines ? strlen(EMULATED_MARK) : 0);
	for (size_t w = 0; w < n; w++)
		total += 2 + t->wcol[w];
	return total;
}

void print_arm_windows(FILE *out, struct json_object *arm, const char *const *windows, const char *const *titles,
		       size_t n_windows, bool emulated, size_t width)
{
	static const struct {
		bool compact, two_lines;
	} layouts[] = { { false, false }, { true, false }, { true, true } };
	_cleanup_free_ struct arm_table *t = calloc(1, sizeof(*t));
	size_t l = 0;

	if (!t)
		return;
	t->n_windows = n_windows > ARM_TABLE_MAX_WINDOWS ? ARM_TABLE_MAX_WINDOWS : n_windows;
	/* full digits on one line when they fit; else 950k, 1.00M; else min and max on a line of their own */
	while (arm_table_fill(t, arm, windows, titles, emulated, layouts[l].compact, layouts[l].two_lines) > width &&
	       width && l + 1 < ARRAY_SIZE(layouts))
		l++;
	fprintf(out, "  %-*s", (int)t->wlabel, "");
	for (size_t w = 0; w < t->n_windows; w++)
		fprintf(out, "  %-*s", w + 1 < t->n_windows ? (int)t->wcol[w] : 0, titles[w]);
	fprintf(out, "\n");
	for (size_t i = 0; i < n_metric_rows; i++) {
		if (!t->shown[i])
			continue;
		fprintf(out, "  ");
		print_padded(out, t->label[i], t->wlabel);
		/* no blanks at the end of a line: cells up to the last that has text, padded only before more */
		bool end_mark = t->mark[i] && !layouts[l].two_lines;
		size_t end = 0;
		for (size_t w = 0; w < t->n_windows; w++)
			if (t->cell[i][w][0] || end_mark)
				end = w + 1;
		for (size_t w = 0; w < end; w++) {
			fprintf(out, "  ");
			print_padded(out, t->cell[i][w], w + 1 < end || end_mark ? t->wcol[w] : 0);
		}
		/* a time, rate or latency under TCG: the emulator's (reports/timing.h) */
		bool two = layouts[l].two_lines;
		fprintf(out, "%s\n", end_mark ? EMULATED_MARK : "");
		size_t last = SIZE_MAX;
		for (size_t w = 0; two && w < t->n_windows; w++)
			if (t->range[i][w][0])
				last = w;
		if (!two || (last == SIZE_MAX && !t->mark[i]))
			continue;
		fprintf(out, "  ");
		print_padded(out, t->mark[i] ? "  emulated" : "", last == SIZE_MAX ? 0 : t->wlabel);
		for (size_t w = 0; last != SIZE_MAX && w <= last; w++) {
			fprintf(out, "  ");
			print_padded(out, t->range[i][w], w < last ? t->wcol[w] : 0);
		}
		fprintf(out, "\n");
	}
}


static double num(struct json_object *o, const char *key)
{
	struct json_object *v = client_get(o, key, NULL, NULL);

	if (!v || !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return NAN;
	return json_object_get_double(v);
}

/* A step that is a sampled window (warmup, pre, snapshot, migration, steady, post), not one between them. */
static bool is_window(const char *step)
{
	for (int w = 0; w < _REPORT_WINDOW_MAX; w++)
		if (!strcmp(step, report_window_to_string((enum report_window)w)))
			return true;
	return false;
}

/* Whether the progress's rates are of its own step's window, or there are none to be: no "waiting" line. */
static bool rates_current(struct json_object *p)
{
	const char *step = client_get_string(p, "step", "-"), *win = client_get_string(p, "sample_window", NULL);

	return !is_window(step) || (win && !strcmp(win, step));
}

void fmt_progress(char *buf, size_t len, struct json_object *p)
{
	char pf[16], tlb[16], inv[16], ops[16], el[16];
	const char *step = client_get_string(p, "step", "-"), *win = client_get_string(p, "sample_window", NULL);
	double frac = num(p, "fraction"), snap = num(p, "snapshot_fraction");
	struct run_progress_buf b;
	size_t n;

	fmt_duration(el, sizeof(el), num(p, "elapsed_s"));
	/* run-level steps, before or after every repetition: no rep, arm or figures yet */
	if (!strcmp(step, "preflight") || !strcmp(step, "knobs") || !strcmp(step, "done")) {
		snprintf(buf, len, "[%s] %s", el, step);
		return;
	}
	/* the rates through the progress codec (run-progress.h); the text fields above are made safe for a terminal */
	if (run_progress_from_json(p, &b) < 0)
		b.p.rates = RUN_RATES_NONE;
	fmt_rate(pf, sizeof(pf), b.p.rates.pf_per_s);
	fmt_rate(tlb, sizeof(tlb), b.p.rates.tlb_per_s);
	fmt_rate(inv, sizeof(inv), b.p.rates.invalidations_per_s);
	fmt_rate(ops, sizeof(ops), b.p.rates.guest_ops_per_s);
	/* the time left, from the fraction done so far: once there is enough of it to go by */
	char eta[24] = "";
	double elapsed = num(p, "elapsed_s");
	if (isfinite(frac) && frac >= 0.02 && frac < 1 && isfinite(elapsed)) {
		char left[16];
		fmt_duration(left, sizeof(left), elapsed * (1 - frac) / frac);
		snprintf(eta, sizeof(eta), " ETA %s", left);
	}
	n = (size_t)snprintf(buf, len, "[%s %3.0f%%%s] rep %d/%d %s: %-8s ", el, isfinite(frac) ? frac * 100 : 0.0, eta,
			     (int)num(p, "rep") + 1, (int)num(p, "reps"), client_get_string(p, "arm", ""), step);
	if (n >= len)
		return;
	if (!rates_current(p))
		/* a window's first lines would carry the previous window's sample: none of this one's yet */
		snprintf(buf + n, len - n, "waiting for the first %s sample", step);
	else if (win && strcmp(win, step))
		/* between windows (stop): the last window's figures, said whose */
		snprintf(buf + n, len - n, "%s: pf/s %s  tlb/s %s  inval/s %s  ops/s %s", win, pf, tlb, inv, ops);
	else
		snprintf(buf + n, len - n, "pf/s %s  tlb/s %s  inval/s %s  ops/s %s", pf, tlb, inv, ops);
	n = strlen(buf);
	if (isfinite(snap) && n < len)
		snprintf(buf + n, len - n, "  %s %.0f%%", step, snap * 100); /* the scenario's window: snapshot, migration */
	const char *waiting = client_get_string(p, "waiting_for", NULL);
	n = strlen(buf);
	if (waiting && n < len)
		snprintf(buf + n, len - n, "  waiting %.0f s for QEMU to answer %s", num(p, "waiting_s"), waiting);
}

void progress_printer_init(struct progress_printer *p, FILE *out)
{
	*p = (struct progress_printer){ .out = out, .tty = isatty(fileno(out)) };
}

void progress_printer_update(struct progress_printer *p, const char *run, struct json_object *progress)
{
	char line[256], key[96];

	if (!progress)
		return;
	const char *placement = client_get_string(progress, "placement", NULL);
	if (placement && !p->placement_shown) {
		/* where the run went when it is not this host's KVM: once, on a line of its own */
		p->placement_shown = true;
		progress_printer_note(p, "snapbench: %s", placement);
	}
	fmt_progress(line, sizeof(line), progress);
	if (p->tty) {
		/* a bar of the whole run's fraction, then the line, cut to a terminal's width */
		double frac = num(progress, "fraction");
		char bar[21];
		int fill = isfinite(frac) ? (int)(frac * 20 + 0.5) : 0;
		if (fill > 20)
			fill = 20;
		for (int i = 0; i < 20; i++)
			bar[i] = i < fill ? '#' : '.';
		bar[20] = '\0';
		fprintf(p->out, "\r\033[K[%s] %.*s", bar, 110, line);
		fflush(p->out);
		p->drawn = true;
		return;
	}
	/* a window's step gets a second line once its first sample is in: its own rates, not the waiting */
	snprintf(key, sizeof(key), "%d/%s/%d", (int)num(progress, "rep"), client_get_string(progress, "step", "-"),
		 rates_current(progress));
	if (!strcmp(key, p->last_key))
		return;
	snprintf(p->last_key, sizeof(p->last_key), "%s", key);
	fprintf(p->out, "%s%s%s\n", run ? run : "", run ? " " : "", line);
	fflush(p->out);
}

void progress_printer_note(struct progress_printer *p, const char *fmt, ...)
{
	va_list ap;

	progress_printer_done(p);
	va_start(ap, fmt);
	vfprintf(p->out, fmt, ap);
	va_end(ap);
	fputc('\n', p->out);
	fflush(p->out);
}

void progress_printer_done(struct progress_printer *p)
{
	if (p->drawn) {
		fputc('\n', p->out);
		p->drawn = false;
	}
}

static void labels_string(struct json_object *sum, char *buf, size_t len)
{
	struct json_object *l = client_get(sum, "labels", NULL, NULL);

	buf[0] = '\0';
	for (size_t i = 0; l && json_object_is_type(l, json_type_array) && i < json_object_array_length(l); i++) {
		size_t n = strlen(buf);
		snprintf(buf + n, len - n, "%s%s", i ? "," : "", client_terminal_text(json_object_array_get_idx(l, i)) ?: "?");
	}
	if (!buf[0])
		snprintf(buf, len, "-");
}

void print_summary_header(FILE *out)
{
	fprintf(out, "%-24s %-10s %-20s %-24s %-9s %s\n", "ID", "STATE", "SCENARIO", "LABELS", "REPS", "CREATED");
}

void print_summary_row(FILE *out, struct json_object *sum)
{
	char labels[128], reps[32];
	struct json_object *r = client_get(sum, "repetitions", NULL, NULL);

	labels_string(sum, labels, sizeof(labels));
	if (r)
		snprintf(reps, sizeof(reps), "%d/%d", json_object_get_int(client_get(r, "completed", NULL, NULL)),
			 json_object_get_int(client_get(r, "total", NULL, NULL)));
	else
		snprintf(reps, sizeof(reps), "-");
	fprintf(out, "%-24s %-10s %-20s %-24s %-9s %s\n", client_get_string(sum, "id", "?"),
		client_get_string(sum, "state", client_get(sum, "problem", NULL, NULL) ? "unreadable" : "?"),
		client_get_string(sum, "scenario", "-"), labels, reps, client_get_string(sum, "created", "-"));
}

void print_lines_under(FILE *out, const char *head, const char *text)
{
	int pad = (int)strlen(head);

	fputs(head, out);
	for (const char *l = text;;) {
		size_t n = strcspn(l, "\n");

		fprintf(out, "%*s%.*s\n", l == text ? 0 : pad, "", (int)n, l);
		if (!l[n] || !l[n + 1])
			break;
		l += n + 1;
	}
}

void print_rep_retried(FILE *out, const char *indent, int index, const char *arm, const char *after)
{
	char head[160];

	snprintf(head, sizeof(head), "%s  rep %d (arm %s): retried on a fresh host VM after: ", indent, index, arm);
	print_lines_under(out, head, after);
}

void print_report_retried(FILE *out, struct json_object *report)
{
	struct json_object *reps = client_get(report, "repetitions", NULL, NULL);
	bool first = true;

	for (size_t i = 0; reps && json_object_is_type(reps, json_type_array) && i < json_object_array_length(reps); i++) {
		struct json_object *rep = json_object_array_get_idx(reps, i);
		const char *after = client_get_string(client_get(rep, "host_vm", NULL, NULL), "retried_after", NULL);

		if (!after)
			continue;
		if (first)
			fputc('\n', out);
		first = false;
		print_rep_retried(out, "", json_object_get_int(client_get(rep, "index", NULL, NULL)),
				  client_get_string(rep, "arm", "?"), after);
	}
}

void print_summary_block(FILE *out, struct json_object *sum, const char *indent)
{
	fprintf(out, "%srun %s: %s\n", indent, client_get_string(sum, "id", "?"), client_get_string(sum, "state", "?"));
	print_summary_details(out, sum, indent);
}

void print_summary_details(FILE *out, struct json_object *sum, const char *indent)
{
	struct json_object *arms = client_get(sum, "arms", NULL, NULL), *reps = client_get(sum, "repetitions", NULL, NULL);
	const char *msg = client_get_string(client_get(sum, "error", NULL, NULL), "message", NULL);
	const char *phase = client_get_string(client_get(sum, "error", NULL, NULL), "phase", NULL);
	const char *desc = client_get_string(sum, "description", NULL);
	struct json_object *progress = client_get(sum, "progress", NULL, NULL);

	if (desc)
		fprintf(out, "%s  description: %s\n", indent, desc);
	fprintf(out, "%s  created %s, started %s, finished %s\n", indent, client_get_string(sum, "created", "-"),
		client_get_string(sum, "started", "-"), client_get_string(sum, "finished", "-"));
	if (reps)
		fprintf(out, "%s  repetitions: %d of %d completed, %d failed\n", indent,
			json_object_get_int(client_get(reps, "completed", NULL, NULL)),
			json_object_get_int(client_get(reps, "total", NULL, NULL)),
			json_object_get_int(client_get(reps, "failed", NULL, NULL)));
	if (msg) {
		char head[96];

		snprintf(head, sizeof(head), "%s  error%s%s%s: ", indent, phase ? " (" : "", phase ? phase : "", phase ? ")" : "");
		print_lines_under(out, head, msg);
	}
	/* the medians of the scenario's window, under its name (docs/protocol.md "Run summary") */
	const char *scenario = client_get_string(sum, "scenario", NULL), *w = report_scenario_window(scenario);
	bool migrates = !strcmp(w, "migration"), steady = !strcmp(w, "steady");
	for (size_t i = 0; arms && json_object_is_type(arms, json_type_array) && i < json_object_array_length(arms); i++) {
		struct json_object *a = json_object_array_get_idx(arms, i), *s = client_get(a, w, NULL, NULL);
		char pf[16], tlb[16], inv[16], ops[16], p99[16], dur[16], flushes[48] = "";

		fmt_json_rate(pf, sizeof(pf), client_get(s, "pf_per_s", NULL, NULL));
		fmt_json_rate(tlb, sizeof(tlb), client_get(s, "tlb_per_s", NULL, NULL));
		fmt_json_rate(inv, sizeof(inv), client_get(s, "invalidations_per_s", NULL, NULL));
		fmt_json_rate(ops, sizeof(ops), client_get(s, "guest_ops_per_s", NULL, NULL));
		fmt_json_rate(p99, sizeof(p99), client_get(s, "latency_p99_ns", NULL, NULL));
		fmt_json_rate(dur, sizeof(dur),
			      client_get(s, migrates ? "migration_duration_s" : steady ? "steady_duration_s" : "snapshot_duration_s",
					 NULL, NULL));
		if (steady) {
			char n[16];
			fmt_json_rate(n, sizeof(n), client_get(s, "numa_kvm_flushes", NULL, NULL));
			snprintf(flushes, sizeof(flushes), "  KVM flushes for NUMA hinting %s", n);
		}
		fprintf(out, "%s  arm %s, %s (medians): pf/s %s  tlb/s %s  inval/s %s  ops/s %s  p99 %s ns  %s %s s%s\n",
			indent, client_get_string(a, "label", "?"), report_scenario_window_title(scenario), pf, tlb, inv,
			ops, p99, migrates ? "migration" : steady ? "steady" : "snapshot", dur, flushes);
	}
	struct json_object *retried = client_get(sum, "retried", NULL, NULL);
	for (size_t i = 0; retried && json_object_is_type(retried, json_type_array) &&
			   i < json_object_array_length(retried); i++) {
		struct json_object *r = json_object_array_get_idx(retried, i);

		print_rep_retried(out, indent, json_object_get_int(client_get(r, "index", NULL, NULL)),
				  client_get_string(r, "arm", "?"), client_get_string(r, "after", "?"));
	}
	if (progress) {
		char line[256];
		fmt_progress(line, sizeof(line), progress);
		fprintf(out, "%s  progress: %s\n", indent, line);
	}
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
				fprintf(out, "  %s: unavailable: %s\n", metric_rows[i].label, client_terminal_text(why));
				break;
			}
		}
	}
}
