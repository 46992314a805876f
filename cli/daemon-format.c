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
	else if (!compare_figure_printable(v)) /* in a report, not of a run */
		snprintf(buf, len, "n/a");
	else if (fabs(v) >= 1000) /* full digits grouped, as the tables write them: 950,015, never 950.0k */
		compare_format_number(v, buf, len);
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
	else if (s >= 1e9) /* 31 years: not of a run, and (int) of it would overflow */
		snprintf(buf, len, "n/a");
	else if (s >= 3600)
		snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
	else if (s >= 60)
		snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
	else
		snprintf(buf, len, "%.1fs", s);
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

enum { SUM_ID, SUM_STATE, SUM_SCENARIO, SUM_LABELS, SUM_REPS, SUM_CREATED, SUM_COLUMNS };

/* A run summary's cells, as `snapbench list` and status's queue print them. */
static void summary_cells(struct json_object *sum, char cell[SUM_COLUMNS][128])
{
	struct json_object *r = client_get(sum, "repetitions", NULL, NULL);

	snprintf(cell[SUM_ID], 128, "%s", client_get_string(sum, "id", "?"));
	snprintf(cell[SUM_STATE], 128, "%s",
		 client_get_string(sum, "state", client_get(sum, "problem", NULL, NULL) ? "unreadable" : "?"));
	snprintf(cell[SUM_SCENARIO], 128, "%s", client_get_string(sum, "scenario", "-"));
	labels_string(sum, cell[SUM_LABELS], 128);
	if (r)
		snprintf(cell[SUM_REPS], 128, "%d/%d", json_object_get_int(client_get(r, "completed", NULL, NULL)),
			 json_object_get_int(client_get(r, "total", NULL, NULL)));
	else
		snprintf(cell[SUM_REPS], 128, "-");
	snprintf(cell[SUM_CREATED], 128, "%s", client_get_string(sum, "created", "-"));
}

static void summary_line(FILE *out, char cell[SUM_COLUMNS][128], const size_t *w, size_t n_columns)
{
	for (size_t c = 0; c < n_columns; c++) {
		if (c + 1 == n_columns)
			fprintf(out, "%s\n", cell[c]);
		else
			fprintf(out, "%s%*s  ", cell[c], (int)(w[c] - compare_text_width(cell[c])), "");
	}
}

void print_summary_table(FILE *out, struct json_object *runs, size_t width)
{
	static const char *const heads[SUM_COLUMNS] = { "ID", "STATE", "SCENARIO", "LABELS", "REPS", "CREATED" };
	size_t n = runs && json_object_is_type(runs, json_type_array) ? json_object_array_length(runs) : 0;
	size_t w[SUM_COLUMNS], total = 0, columns = SUM_COLUMNS;
	char cell[SUM_COLUMNS][128];

	for (size_t c = 0; c < SUM_COLUMNS; c++)
		w[c] = strlen(heads[c]);
	for (size_t i = 0; i < n; i++) {
		summary_cells(json_object_array_get_idx(runs, i), cell);
		for (size_t c = 0; c < SUM_COLUMNS; c++)
			w[c] = compare_text_width(cell[c]) > w[c] ? compare_text_width(cell[c]) : w[c];
	}
	for (size_t c = 0; c < SUM_COLUMNS; c++)
		total += w[c] + (c ? 2 : 0);
	/* the creation time is in the run ID snapbenchd gives (20261207T055946Z-...): dropped first */
	if (width && total > width)
		columns = SUM_CREATED;
	for (size_t c = 0; c < SUM_COLUMNS; c++)
		snprintf(cell[c], sizeof(cell[c]), "%s", heads[c]);
	summary_line(out, cell, w, columns);
	for (size_t i = 0; i < n; i++) {
		summary_cells(json_object_array_get_idx(runs, i), cell);
		summary_line(out, cell, w, columns);
	}
}

void print_wrapped(FILE *out, const char *head, const char *text, size_t width)
{
	print_wrapped_at(out, head, text, width, strspn(head, " ") + 4);
}

void print_wrapped_at(FILE *out, const char *head, const char *text, size_t width, size_t indent)
{
	size_t col = compare_text_width(head);

	if (!text)
		text = "";
	fputs(head, out);
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, " ");
		size_t k = n < 511 ? n : 511;
		char word[512];
		memcpy(word, p, k);
		word[k] = '\0';
		size_t w = compare_text_width(word);
		if (p != text && col + 1 + w > width && col > indent) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
		} else if (p != text) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, n, out);
		col += w;
		p += n;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}

/* One piece of print_fields() after sep, or at the start of the next line when it does not fit. */
static void put_piece(FILE *out, const char *piece, size_t n, const char *sep, bool first, size_t width,
		      size_t indent, size_t *col)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%.*s", (int)n, piece);
	size_t w = compare_text_width(buf);

	if (!first && *col + strlen(sep) + w > width && *col > indent) {
		fprintf(out, "\n%*s", (int)indent, "");
		*col = indent;
	} else if (!first) {
		fputs(sep, out);
		*col += strlen(sep);
	}
	fwrite(piece, 1, n, out);
	*col += w;
}

void print_fields(FILE *out, const char *head, const char *text, size_t width, size_t indent)
{
	size_t col = compare_text_width(head), hl = strlen(head);
	char first[512];

	snprintf(first, sizeof(first), "%.*s", (int)(strstr(text, "  ") ? strstr(text, "  ") - text : (int)strlen(text)),
		 text);
	if (col + compare_text_width(first) > width && col > indent) { /* a long head: its fields start below it */
		while (hl && head[hl - 1] == ' ')
			hl--;
		fprintf(out, "%.*s\n%*s", (int)hl, head, (int)indent, "");
		col = indent;
	} else {
		fputs(head, out);
	}
	for (const char *p = text; *p;) {
		const char *sep = strstr(p, "  ");
		size_t n = sep ? (size_t)(sep - p) : strlen(p);
		char field[512];
		snprintf(field, sizeof(field), "%.*s", (int)n, p);
		if (compare_text_width(field) + indent <= width || n >= sizeof(field)) {
			put_piece(out, p, n, "  ", p == text, width, indent, &col);
		} else {
			/* a field no line holds (an error's message): its words wrapped as prose */
			for (const char *q = p; q < p + n;) {
				size_t k = strcspn(q, " ");
				k = q + k > p + n ? (size_t)(p + n - q) : k;
				put_piece(out, q, k, q == p ? "  " : " ", p == text && q == p, width, indent, &col);
				q += k;
				while (q < p + n && *q == ' ')
					q++;
			}
		}
		p += n;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
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

	char head[192], times[160];

	if (desc) {
		snprintf(head, sizeof(head), "%s  description: ", indent);
		print_wrapped(out, head, desc, output_width());
	}
	snprintf(head, sizeof(head), "%s  created ", indent);
	snprintf(times, sizeof(times), "%s, started %s, finished %s", client_get_string(sum, "created", "-"),
		 client_get_string(sum, "started", "-"), client_get_string(sum, "finished", "-"));
	print_wrapped(out, head, times, output_width());
	if (reps)
		fprintf(out, "%s  repetitions: %d of %d completed, %d failed\n", indent,
			json_object_get_int(client_get(reps, "completed", NULL, NULL)),
			json_object_get_int(client_get(reps, "total", NULL, NULL)),
			json_object_get_int(client_get(reps, "failed", NULL, NULL)));
	if (msg) {
		snprintf(head, sizeof(head), "%s  error%s%s%s: ", indent, phase ? " (" : "", phase ? phase : "", phase ? ")" : "");
		print_lines_under(out, head, msg);
	}
	/* the medians of the scenario's window, under its name (docs/protocol.md "Run summary") */
	const char *scenario = client_get_string(sum, "scenario", NULL), *w = report_scenario_window(scenario);
	const struct report_window_summary *ws = report_window_summary(w);
	for (size_t i = 0; arms && json_object_is_type(arms, json_type_array) && i < json_object_array_length(arms); i++) {
		struct json_object *a = json_object_array_get_idx(arms, i), *s = client_get(a, w, NULL, NULL);
		char pf[16], tlb[16], inv[16], ops[16], p99[16], dur[16], flushes[48] = "";

		fmt_json_rate(pf, sizeof(pf), client_get(s, "pf_per_s", NULL, NULL));
		fmt_json_rate(tlb, sizeof(tlb), client_get(s, "tlb_per_s", NULL, NULL));
		fmt_json_rate(inv, sizeof(inv), client_get(s, "invalidations_per_s", NULL, NULL));
		fmt_json_rate(ops, sizeof(ops), client_get(s, "guest_ops_per_s", NULL, NULL));
		fmt_json_rate(p99, sizeof(p99), client_get(s, "latency_p99_ns", NULL, NULL));
		fmt_json_rate(dur, sizeof(dur), client_get(s, ws->duration_key, NULL, NULL));
		if (ws->count) {
			char n[16];
			fmt_json_rate(n, sizeof(n), client_get(s, ws->count, NULL, NULL));
			snprintf(flushes, sizeof(flushes), "  %s %s", ws->count_label, n);
		}
		char text[256];
		snprintf(head, sizeof(head), "%s  arm %s, %s (medians): ", indent, client_get_string(a, "label", "?"),
			 report_scenario_window_title(scenario));
		snprintf(text, sizeof(text), "pf/s %s  tlb/s %s  inval/s %s  ops/s %s  p99 %s ns  %s %s s%s", pf, tlb, inv,
			 ops, p99, w, dur, flushes);
		print_fields(out, head, text, output_width(), strlen(indent) + 6);
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
