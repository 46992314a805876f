/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compare: baseline against patched from snapbench.run/1 reports.
 *
 *   1. Load reports (compare_pool_*) and resolve each side's selector
 *      (compare_select): report files, run ids in a results store, labels.
 *   2. compare_compute(): refuse incomparable inputs unless forced, take each
 *      metric's per-repetition values from both sides, summarize them, test
 *      them (exact Mann-Whitney U, bootstrap interval of the median ratio) and
 *      give a verdict per metric and overall.
 *   3. Render: compare_to_json() (snapbench.compare/1,
 *      reports/schema/compare-1.schema.json), compare_format_table(),
 *      compare_format_markdown(), compare_plot_metric_svg(),
 *      compare_plot_timeline_svg().
 *
 * Library code: nothing is printed; errors come back as a negative errno and
 * a struct sb_error naming the input at fault and the fix. Everything a
 * report controls is bounded (file size, nesting, counts). docs/compare.md
 * gives the rules.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "error.h"
#include "stats.h"

#define COMPARE_SCHEMA "snapbench.compare/1"
#define COMPARE_RUN_SCHEMA "snapbench.run/1"

/* The exit codes a comparison ends in: the values of EXIT_OK and
 * EXIT_REGRESSION in cli/exit-codes.h (the CLI asserts they agree; reports/
 * does not include cli/ headers). */
#define COMPARE_EXIT_OK 0
#define COMPARE_EXIT_REGRESSION 3

/* Bounds on what the inputs may make compare do. */
#define COMPARE_REPORT_MAX_BYTES (256u << 20) /* one report file (json-c needs several times that) */
#define COMPARE_JSON_MAX_DEPTH 64
#define COMPARE_MAX_REPORTS 4096       /* reports loaded into one pool */
#define COMPARE_MAX_STORE_ENTRIES 100000
#define COMPARE_MAX_REPS 100000        /* repetitions on one side */
#define COMPARE_MAX_METRICS 4096       /* metrics compared */
#define COMPARE_BOOTSTRAP_MAX_N 2000   /* larger samples get no bootstrap (~0.5 s per metric) */
#define COMPARE_PLOT_MAX_STEPS 1000    /* timeline rows are merged down to this */

/* ---- loading ---- */

/* The part of a repetition's timeline compare draws, kept as arrays: the
 * JSON rows are dropped after loading (they are most of a report's size and
 * json-c needs many times that in memory). */
enum compare_window_code {
	COMPARE_W_WARMUP,
	COMPARE_W_PRE,
	COMPARE_W_ACTION, /* the window the report's scenario acts in (compare_report.action_window) */
	COMPARE_W_POST,
	COMPARE_W_OTHER,
};

#define COMPARE_TIMELINE_COUNTERS 3
/* kvm.pf_taken, kvm.remote_tlb_flush, bpf.invalidations */
extern const char *const compare_timeline_counters[COMPARE_TIMELINE_COUNTERS];

struct compare_timeline {
	size_t n;
	double *t_s, *dt_s;
	double *counter[COMPARE_TIMELINE_COUNTERS]; /* per-row deltas; NAN where absent */
	unsigned char *window; /* enum compare_window_code */
};

struct compare_report {
	char *path;                 /* as given or found in the store */
	const char *id;             /* points into root */
	const char *state;          /* points into root */
	const char *action_window;  /* report_scenario_window() of spec.scenario: "snapshot", "migration" */
	struct json_object *root;   /* the report without its timeline rows */
	struct compare_timeline *timelines; /* one per repetitions[] entry */
	size_t n_timelines;
	dev_t dev;                  /* the file's identity: each file is loaded once */
	ino_t ino;
};

/* Every report loaded for one comparison, each file once. */
struct compare_pool {
	struct compare_report **reports;
	size_t n;
	size_t n_parsed; /* reports parsed, also those dropped since */
};

void compare_pool_done(struct compare_pool *pool);

/* Loads PATH (a report.json or a run directory holding one) into the pool,
 * or returns the one already loaded from the same file. Checks the schema
 * string and the fields compare reads. */
int compare_pool_load(struct compare_pool *pool, const char *path, struct compare_report **out,
		      struct sb_error *err);

/* Frees the report loaded last and takes it out of the pool (one a scan loaded but does not use). */
void compare_pool_drop_last(struct compare_pool *pool);

/* ---- selecting the repetitions of each side ---- */

struct compare_rep {
	const struct compare_report *report;
	struct json_object *rep; /* the report's repetitions[i] */
	const struct compare_timeline *timeline;
	int64_t index;
};

struct compare_side {
	char *role;       /* "baseline", "patched", or "A"/"B" in A/A mode */
	char *selector;   /* what the user wrote, for the record */
	char *label;      /* the arm label all repetitions share */
	const struct compare_report **reports; /* distinct reports used, in id order */
	size_t n_reports;
	struct compare_rep *reps;  /* completed repetitions, report id then index order */
	size_t n_reps;
	char **notes;              /* e.g. runs skipped while scanning the store (NULL-terminated, may be NULL) */
	char **trouble;            /* the notes that name a host VM kernel in trouble (tainted), also in notes */
};

void compare_side_done(struct compare_side *side);

/*
 * Resolves SELECTOR into a side. A selector is TERM[,TERM...]:
 *   label=L      the arm labelled L
 *   id=ID        the run STORE/ID/report.json
 *   file=PATH    a report file or run directory (a bare PATH is the same)
 * file and id terms name the reports; without them the side uses
 * default_sources (the positional report arguments), and without those every
 * run in STORE that has an arm labelled L. A report with several arms needs a
 * label. Only completed repetitions are used; several reports pool theirs.
 */
int compare_select(struct compare_pool *pool, const char *role, const char *selector,
		   char *const *default_sources, size_t n_default_sources, const char *store,
		   struct compare_side *side, struct sb_error *err);

/* The sides a report with exactly two arms gives: baseline = first arm,
 * patched = second. */
int compare_select_two_arms(struct compare_pool *pool, const char *path, struct compare_side *baseline,
			    struct compare_side *patched, struct sb_error *err);

/* The side of arm label in reports (each must have the arm; their
 * completed repetitions pooled), as a label= selection of them would give:
 * for callers that pick arms themselves (reports/compare-grid.c). */
int compare_select_arm(const char *role, const char *label, const struct compare_report *const *reports,
		       size_t n_reports, struct compare_side *side, struct sb_error *err);

enum compare_aa_split {
	COMPARE_AA_ALTERNATE, /* repetitions 0, 2, 4 ... vs 1, 3, 5 ... */
	COMPARE_AA_HALVES,    /* first half vs second half */
};

/* A/A: splits one side's repetitions into two pseudo-arms A and B. */
int compare_split_aa(const struct compare_side *all, enum compare_aa_split split, struct compare_side *a,
		     struct compare_side *b, struct sb_error *err);

/* ---- computing ---- */

enum compare_better {
	COMPARE_BETTER_LOWER,
	COMPARE_BETTER_HIGHER,
	COMPARE_BETTER_NONE, /* no direction: a change is "changed", never a regression */
};

enum compare_verdict {
	COMPARE_INSUFFICIENT_DATA,
	COMPARE_NO_CHANGE,
	COMPARE_CHANGED,
	COMPARE_IMPROVED,
	COMPARE_REGRESSED,
};

const char *compare_verdict_name(enum compare_verdict v);
const char *compare_better_name(enum compare_better b);

struct compare_threshold {
	char *pattern; /* metric name or fnmatch(3) glob */
	double pct;
};

struct compare_options {
	double alpha;          /* significance level, (0, 1); default 0.05 */
	double threshold_pct;  /* minimum |% change| of medians for a verdict; default 5 */
	struct compare_threshold *thresholds; /* per-metric overrides, last match wins */
	size_t n_thresholds;
	char **windows;        /* default: {"snapshot"} */
	size_t n_windows;
	char **metrics;        /* names or globs; default: compare_default_metrics */
	size_t n_metrics;
	bool metrics_explicit; /* a name the user gave that matches nothing is an error */
	unsigned bootstrap_iterations; /* 0: no bootstrap; default STATS_BOOTSTRAP_ITERATIONS */
	uint64_t bootstrap_seed;       /* default STATS_BOOTSTRAP_SEED */
	bool force;            /* compare incomparable inputs anyway */
	bool aa;               /* the sides are halves of one label (A/A) */
	enum compare_aa_split aa_split;
	bool show_all;         /* Markdown and plots keep metrics that are 0 everywhere (--all) */
	bool verdict_on_emulated;    /* better/worse verdicts for time-based metrics under emulation too */
	bool verdict_on_fixed_count; /* ... and for rates whose count the workload fixes */
};

extern const char *const compare_default_metrics[];
extern const size_t compare_n_default_metrics;

void compare_options_init(struct compare_options *o);

struct compare_difference {
	char *field;       /* e.g. "spec.guest.pattern" */
	char *value_a;     /* JSON text, or "(absent)" */
	char *value_b;
	char *report_a;    /* run id (or path) holding value_a */
	char *report_b;
	char *where;       /* "baseline vs patched", "within baseline", ... */
};

struct compare_arm_stats {
	double *values; /* in repetition order */
	size_t n;
	size_t n_missing; /* repetitions in which the metric was null or absent */
	struct stats_summary s;
};

struct compare_metric {
	char *window;
	char *name;
	char *unit;                /* "" when metric_info has none */
	enum compare_better better;
	struct compare_arm_stats arm[2]; /* [0] baseline, [1] patched */
	double ratio;              /* patched median / baseline median; NAN when undefined */
	double pct_change;         /* (ratio - 1) * 100; NAN when undefined */
	bool from_zero;            /* baseline median 0, patched not: an unbounded change */
	struct stats_mwu mwu;
	bool have_ci;
	struct stats_bootstrap ci;
	double threshold_pct;
	enum compare_verdict verdict;
	bool emulated;             /* time-based (report_metric_time_based()) and a side's timing is emulated */
	/* Why the metric got no better/worse verdict (a change is "changed"), NULL when it could: emulated
	 * timing, or a rate whose count the workload fixes (the count is compared in a row of its own) */
	const char *unjudged;
	bool count_of_rate;        /* a row compare added: a rate's events counted in the window (rate x duration) */
	char **notes;                      /* NULL-terminated, may be NULL */
};

struct compare_skipped {
	char *window, *name, *reason;
	/* the baseline lacks it for a reason no commit changes: the reports say why it cannot be
	 * measured (windows.W.unavailable), the window is not there, or no report has the metric */
	bool recurs;
};

struct compare_result {
	struct compare_options opts;       /* copy; strings borrowed from the caller */
	const struct compare_side *side[2]; /* borrowed */
	struct compare_difference *diffs;
	size_t n_diffs;
	struct compare_metric *metrics;
	size_t n_metrics;
	struct compare_skipped *skipped;
	size_t n_skipped;
	char **warnings;                   /* NULL-terminated, may be NULL */
	bool emulated[2];                  /* per side: a report's timing is emulated (reports/timing.h) */
	enum compare_verdict verdict;
	int exit_code;                     /* COMPARE_EXIT_OK or COMPARE_EXIT_REGRESSION; bisect-step sets its own
					    * code here so that every rendering says the code it exits with */
};

void compare_result_free(struct compare_result *r);

/* Lists the fields that make the sides incomparable (see docs/compare.md): the
 * spec fields, and the timing (accel.timing, reports/timing.h) each side's
 * reports ran with. */
int compare_check_comparable(const struct compare_side *baseline, const struct compare_side *patched,
			     struct compare_difference **diffs, size_t *n_diffs, struct sb_error *err);

/*
 * Compares the sides. Incomparable sides fail with -EINVAL and a message
 * naming every differing field with both values, unless opts->force; a side
 * without a completed repetition (its runs failed) with -ENODATA. The
 * result borrows the sides and opts' strings: keep them alive until
 * compare_result_free().
 */
int compare_compute(const struct compare_side *baseline, const struct compare_side *patched,
		    const struct compare_options *opts, struct compare_result **out, struct sb_error *err);

/* ---- output ---- */

struct json_object *compare_to_json(const struct compare_result *r);
/* JSON text as written to files: pretty, newline-terminated; NULL on ENOMEM. */
char *compare_json_string(const struct compare_result *r);

/* What compare_format_markdown() links to: the plots written beside compare.md. */
enum {
	COMPARE_MD_PLOTS = 1 << 0,    /* the WINDOW-METRIC.svg of every metric compare_metric_shown() */
	COMPARE_MD_TIMELINE = 1 << 1, /* timeline.svg */
};

/*
 * How the text table is laid out (docs/compare.md#output). It fits width
 * columns: one line per metric (metric, each side's median (min max), the
 * change with its interval, p, n, verdict) when that fits, or wide asks for
 * it; else two lines per metric (the sides, then the change, interval, p, n
 * and verdict), the name on a line of its own when the sides do not fit
 * beside it, each side on its own when they do not fit side by side: the
 * same full digits in every layout; prose lines are wrapped at width. ascii: "us" for "µs"
 * (a terminal whose locale is not UTF-8).
 */
struct compare_text_options {
	size_t width; /* 0: 80 */
	bool wide;
	bool ascii;
};
#define COMPARE_TEXT_WIDTH_DEFAULT 80

/* Seed-style text table (the metrics compare_metric_shown(), the others named
 * on one line); Markdown for CI comments (the same, links to the plots in
 * flags). o NULL: the defaults. NULL on ENOMEM. */
char *compare_format_table(const struct compare_result *r, const struct compare_text_options *o);
char *compare_format_markdown(const struct compare_result *r, unsigned flags);

/* Whether metrics[i] is 0 in every repetition of both sides. */
bool compare_metric_all_zero(const struct compare_metric *m);
/* Whether Markdown and plots show metrics[i]: not all zero, or opts.show_all. */
bool compare_metric_shown(const struct compare_result *r, size_t i);

/* "1,234,567", "94", "0.3": how every figure in tables and plots is written. */
/*
 * Figures a report may hold but no run measures (1e23 faults a second, -1e308,
 * a NaN) print as "n/a" everywhere, rather than as 100,000,000P: a count, rate,
 * time or size of a real run stays far below this.
 */
#define COMPARE_FIGURE_MAX 1e18
static inline bool compare_figure_printable(double v)
{
	return v == v && v > -COMPARE_FIGURE_MAX && v < COMPARE_FIGURE_MAX;
}

void compare_format_number(double v, char *buf, size_t size);
/* "1,234,567 (1,200,000 1,300,000)": median (min max), as compare and show write them. */
void compare_format_median_range(double median, double min, double max, char *buf, size_t size);

/*
 * The unit a time metric's figures are written in. unit is the metric's
 * (ns, us, ms or s; NULL or "": the name's _ns or _s suffix says); its
 * values times mult are in the returned unit ("ns", "µs" (UTF-8), "ms" or
 * "s"): the largest whose 1 the magnitude (the larger |median|) reaches. A
 * metric of another unit gets mult 1 and unit NULL.
 */
struct compare_scale {
	double mult;
	const char *unit;
};
struct compare_scale compare_time_scale(const char *name, const char *unit, double magnitude);
/* compare_time_scale() of m by the larger of its medians. */
struct compare_scale compare_metric_scale(const struct compare_metric *m);
/* The columns s takes on a terminal: its UTF-8 characters ("µs" is two bytes, one column). */
size_t compare_text_width(const char *s);
/* Display name for tables and plots, "latency p99 (µs)", "pf/s", "invalidations/s (uffd-wp)": a time
 * metric with the unit of sc (NULL, or sc->unit NULL: the name's own). Report text is sanitized. */
void compare_metric_label(const char *metric, const struct compare_scale *sc, char *buf, size_t size);

/* "2.04x", "0.263x", "1/14,400x" (below 0.1), "n/a": patched median / baseline median (the HTML's details). */
void compare_format_ratio(const struct compare_metric *m, char *buf, size_t size);
/*
 * The change of the medians in one form everywhere (tables, Markdown, HTML):
 * within a factor of 2 as a percentage ("-23.5%", "+2.2%", "0.0%"); beyond it
 * as the factor ("3.80x", "14,400x"; a fall "1/3.80x", "1/380x"); "-100%"
 * when the patched median is 0, "from 0", "n/a".
 */
void compare_format_change(const struct compare_metric *m, char *buf, size_t size);
/* The bootstrap interval of the ratio in the change's form: "[-26.5% -20.6%]", "[1/410x 1/350x]"; "" without one. */
void compare_format_ci(const struct compare_metric *m, char *buf, size_t size);
/*
 * A figure of m as every table writes it, whatever its width (text, Markdown,
 * HTML, show's arm tables): a time metric's with its own unit ("19.8µs",
 * "340ns", "4.07s"; ascii: "us"), others as compare_format_number(), full
 * digits grouped ("950,015"): a narrow table takes more lines, never fewer
 * digits.
 */
void compare_format_value(const struct compare_metric *m, double v, bool ascii, char *buf, size_t size);
/* A side's "median (min max)" of m in compare_format_value()'s form; the median alone when min == max. */
void compare_format_side(const struct compare_metric *m, int side, bool ascii, char *buf, size_t size);
/* The metric's name for tables: "latency p99", "pf/s", "invalidations/s (uffd-wp)" (no time unit: each figure has its own). */
void compare_metric_name(const char *metric, char *buf, size_t size);

/* The mark of a row beside its verdict: why it was not judged (m->unjudged), "emulated", or NULL. */
const char *compare_metric_tag(const struct compare_metric *m);

/* SVG: the repetitions of each side of metrics[i] as a strip and box plot. */
char *compare_plot_metric_svg(const struct compare_result *r, size_t i);
/* SVG: pf/s and tlb/s (and invalidations/s when the reports have them)
 * through the action window of its scenario (compare_report.action_window:
 * snapshot, migration) of one repetition per side (the one whose pf_per_s
 * in that window is closest to its side's median), the window marked.
 * Returns NULL and sets *why when the reports hold no timeline to draw. */
char *compare_plot_timeline_svg(const struct compare_result *r, const char **why);
/* The window the timeline marks, for text about it: "snapshot", "migration",
 * or "snapshot/migration" when the sides' scenarios differ (--force). */
void compare_timeline_window(const struct compare_result *r, char *buf, size_t size);

/* A file name for metrics[i]'s plot: "WINDOW-METRIC.svg", unsafe bytes as '_'. */
char *compare_plot_file_name(const struct compare_metric *m);
