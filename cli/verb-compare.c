// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench compare: baseline against patched, with verdicts for CI. */
#include <assert.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "compare.h"
#include "exit-codes.h"
#include "export.h"
#include "export-html.h"
#include "daemon-format.h"
#include "macro.h"
#include "parse-number.h"
#include "runner.h"
#include "strv.h"
#include "verb-args.h"
#include "verb-compare-grid.h"
#include "verb-compare.h"
#include "verbs.h"

static_assert(COMPARE_EXIT_OK == EXIT_OK, "compare.h and exit-codes.h disagree on EXIT_OK");
static_assert(COMPARE_EXIT_REGRESSION == EXIT_REGRESSION, "compare.h and exit-codes.h disagree on EXIT_REGRESSION");

/* Where runs live when --store is not given: where snapbench run puts them. */
static const char *default_store(void)
{
	return runner_default_results_dir();
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench compare [OPTIONS] BASELINE.json PATCHED.json\n"
		"       snapbench compare [OPTIONS] TWO-ARM-REPORT.json\n"
		"       snapbench compare [OPTIONS] --baseline SEL --patched SEL [REPORT...]\n"
		"       snapbench compare [OPTIONS] --aa SEL [REPORT...]\n"
		"       snapbench compare [OPTIONS] --grid ROWS,COLUMNS REPORT...\n"
		"\n"
		"Compares the repetitions of two arms metric by metric: median (min max) of\n"
		"each, the change of medians, an exact Mann-Whitney U test and a verdict.\n"
		"\n"
		"Selecting runs:\n"
		"  REPORT                a report.json or a run directory\n"
		"  --baseline SEL, --patched SEL\n"
		"                        SEL is TERM[,TERM...]: label=NAME, id=RUN_ID (a run in\n"
		"                        the store), file=PATH (or a bare PATH). Without id= or\n"
		"                        file= a label is looked up in the REPORTs given, else in\n"
		"                        every run of the store; several runs pool their\n"
		"                        repetitions\n"
		"  --aa SEL              A/A: split one selection's repetitions in two to show\n"
		"                        the noise floor\n"
		"  --aa-split HOW        alternate (default: 1st, 3rd, ... vs 2nd, 4th, ...) or\n"
		"                        halves (first half vs second half)\n"
		"  --grid ROWS,COLUMNS   a table per metric: rows one parameter of the arms,\n"
		"                        columns another (from labels like chunk-512K+nr_pages-8,\n"
		"                        arm knobs, or spec.FIELD), each cell an arm against its\n"
		"                        row's baseline (the arm without a COLUMNS value);\n"
		"                        formats text, json, markdown, csv\n"
		"  --grid-baseline VALUE with --grid: the baseline is the arm whose COLUMNS is\n"
		"                        VALUE\n"
		"  --store DIR           results store: one directory per run holding\n"
		"                        report.json (default %s)\n"
		"\n"
		"Statistics and verdicts:\n"
		"  --window NAME         pre, snapshot, migration, steady, fault-in or post;\n"
		"                        repeatable (default snapshot; dirty-log and\n"
		"                        postcopy-restore runs: migration; numa-hinting\n"
		"                        runs: steady; uffd-restore runs: fault-in)\n"
		"  --metric NAME         a metric or a glob such as 'invalidations_per_s.*', or\n"
		"                        the name the tables print (pf/s, latency p99);\n"
		"                        repeatable (default: pf_per_s tlb_per_s\n"
		"                        invalidations_per_s[.*] guest_ops_per_s latency_p50_ns\n"
		"                        latency_p99_ns latency_p999_ns; dirty-log runs: the\n"
		"                        seed's clear_log_ns_per_iteration tlb_per_iteration\n"
		"                        tlb_per_s dirty_pages_per_s first; postcopy-restore\n"
		"                        runs: fault_pass_ms postcopy_chunk_bytes\n"
		"                        postcopy_requests first; numa-hinting runs:\n"
		"                        numa_kvm_flushes numa_sptes_zapped first,\n"
		"                        docs/compare.md)\n"
		"  --alpha P             significance level of the two-sided test (default 0.05;\n"
		"                        5%% is the same)\n"
		"  --threshold PCT       smallest |change of medians| in %% that earns a verdict\n"
		"                        (default 5; 5%% is the same)\n"
		"  --threshold METRIC=PCT  the same for metrics matching METRIC; repeatable\n"
		"  --bootstrap N         bootstrap iterations for the median-ratio interval\n"
		"                        (default %d, 0: none)\n"
		"  --verdict-on-emulated better/worse verdicts for times, rates and latencies\n"
		"                        measured under emulation (TCG) too (default: 'changed'\n"
		"                        at most, marked, the rates' counts compared instead)\n"
		"  --verdict-on-fixed-count\n"
		"                        better/worse verdicts for a rate whose count the\n"
		"                        workload fixes (the same in every repetition) too\n"
		"  --force               compare runs whose scenario, VM size, guest or timing\n"
		"                        differ (the differences are listed as warnings)\n"
		"\n"
		"Output:\n"
		"  --format FMT          text (default; 'table' is the same), json, markdown, csv\n"
		"                        (one row per metric and side), junit (JUnit XML for CI\n"
		"                        test reports), html (one self-contained page, plots\n"
		"                        inline) or kcidb (KCIDB JSON for KernelCI) on stdout\n"
		"  --wide                the text table one line per metric, however wide\n"
		"                        (default: so when it fits the terminal, else two lines\n"
		"                        per metric within 80 columns or $COLUMNS)\n"
		"  --kcidb-origin NAME   with --format kcidb: the origin of the ids (a-z, 0-9,\n"
		"                        '_'; default %s)\n"
		"  --json                same as --format json\n"
		"  --output DIR          also write compare.json, compare.txt, compare.md,\n"
		"                        compare.csv, compare-junit.xml, compare.html and SVG\n"
		"                        plots (one per metric, timeline.svg) into DIR\n"
		"  --all                 keep metrics that are 0 in every repetition of both\n"
		"                        sides in the tables and the plots (default: left out,\n"
		"                        named)\n"
		"  -q, --quiet           nothing on stdout\n"
		"\n"
		"Exit codes: 0 no significant regression, 3 a significant regression beyond\n"
		"the threshold, 2 invalid input or incomparable runs, 1 output not written.\n"
		"docs/compare.md explains the statistics and the verdict rules.\n",
		default_store(), STATS_BOOTSTRAP_ITERATIONS, EXPORT_KCIDB_ORIGIN_DEFAULT);
}

enum {
	OPT_BASELINE = 0x100,
	OPT_PATCHED,
	OPT_AA,
	OPT_AA_SPLIT,
	OPT_STORE,
	OPT_WINDOW,
	OPT_METRIC,
	OPT_ALPHA,
	OPT_THRESHOLD,
	OPT_BOOTSTRAP,
	OPT_FORCE,
	OPT_FORMAT,
	OPT_JSON,
	OPT_OUTPUT,
	OPT_ALL,
	OPT_KCIDB_ORIGIN,
	OPT_WIDE,
	OPT_GRID,
	OPT_GRID_BASELINE,
	OPT_VERDICT_ON_EMULATED,
	OPT_VERDICT_ON_FIXED_COUNT,
};

enum format { FORMAT_TABLE, FORMAT_JSON, FORMAT_MARKDOWN, FORMAT_CSV, FORMAT_JUNIT, FORMAT_HTML, FORMAT_KCIDB, _FORMAT_MAX };

static const char *const format_names[_FORMAT_MAX] = {
	[FORMAT_TABLE] = "text",
	[FORMAT_JSON] = "json",
	[FORMAT_MARKDOWN] = "markdown",
	[FORMAT_CSV] = "csv",
	[FORMAT_JUNIT] = "junit",
	[FORMAT_HTML] = "html",
	[FORMAT_KCIDB] = "kcidb",
};

struct args {
	const char *baseline, *patched, *aa, *store, *output, *kcidb_origin, *grid, *grid_baseline;
	enum format format;
	bool quiet, wide;
	char **windows, **metrics;
	size_t n_windows, n_metrics;
	struct compare_threshold *thresholds;
	size_t n_thresholds;
};

static void args_done(struct args *a)
{
	free(a->windows);
	free(a->metrics);
	free(a->thresholds);
}

static int push_ptr(char ***v, size_t *n, char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

/* A number with an optional '%' after it (5 or 5%: the same); out of [min, max] or not one: -EINVAL. */
static int parse_percent(const char *s, double min, double max, double *ret)
{
	size_t len = strlen(s);
	char num[64];

	if (len && s[len - 1] == '%')
		len--;
	if (!len || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, len);
	num[len] = '\0';
	return parse_double(num, min, max, ret, NULL);
}

static int parse_threshold(struct args *a, struct compare_options *o, char *arg)
{
	char *eq = strrchr(arg, '=');
	double pct;

	if (parse_percent(eq ? eq + 1 : arg, 0, DBL_MAX, &pct) < 0) {
		verb_error("--threshold %s: give a percentage >= 0 (e.g. 5 or 5%%) or METRIC=PCT "
			"(e.g. latency_p99_ns=10%%)", arg);
		return -EINVAL;
	}
	if (!eq) {
		o->threshold_pct = pct;
		return 0;
	}
	if (eq == arg) {
		verb_error("--threshold %s: the metric name before '=' is missing", arg);
		return -EINVAL;
	}
	struct compare_threshold *nv = realloc(a->thresholds, (a->n_thresholds + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	*eq = '\0'; /* argv strings are ours to split */
	nv[a->n_thresholds++] = (struct compare_threshold){ .pattern = arg, .pct = pct };
	a->thresholds = nv;
	return 0;
}

/* An option whose value is checked; 0, -EINVAL (said why on stderr) or -ENOMEM. */
static int parse_checked_option(int c, char *arg, struct args *a, struct compare_options *o)
{
	double d;

	switch (c) {
	case OPT_AA_SPLIT:
		if (!strcmp(arg, "alternate"))
			o->aa_split = COMPARE_AA_ALTERNATE;
		else if (!strcmp(arg, "halves"))
			o->aa_split = COMPARE_AA_HALVES;
		else {
			verb_error("--aa-split %s: use alternate or halves", arg);
			return -EINVAL;
		}
		break;
	case OPT_WINDOW:
		if (strcmp(arg, "pre") && strcmp(arg, "snapshot") && strcmp(arg, "migration") && strcmp(arg, "steady") &&
		    strcmp(arg, "fault-in") && strcmp(arg, "post")) {
			verb_error("--window %s: use pre, snapshot, migration (dirty-log, postcopy-restore), steady (numa-hinting), fault-in (uffd-restore) or post", arg);
			return -EINVAL;
		}
		if (push_ptr(&a->windows, &a->n_windows, arg) < 0)
			return -ENOMEM;
		break;
	case OPT_METRIC:
		if (!*arg) {
			verb_error("--metric needs a name such as pf_per_s");
			return -EINVAL;
		}
		if (push_ptr(&a->metrics, &a->n_metrics, arg) < 0)
			return -ENOMEM;
		break;
	case OPT_ALPHA:
		/* a level (0.05) or a percentage (5%) */
		if (arg[0] && arg[strlen(arg) - 1] == '%' ? parse_percent(arg, 0, 100, &d) < 0 || !((d /= 100) > 0 && d < 1)
							   : parse_double(arg, 0, 1, &d, NULL) < 0 || d == 0 || d == 1) {
			verb_error("--alpha %s: give a level between 0 and 1 (e.g. 0.05) or a percentage (5%%)", arg);
			return -EINVAL;
		}
		o->alpha = d;
		break;
	case OPT_THRESHOLD:
		if (parse_threshold(a, o, arg) < 0)
			return -EINVAL;
		break;
	case OPT_BOOTSTRAP:
		if (parse_double(arg, 0, 1000000, &d, NULL) < 0 || d != floor(d)) {
			verb_error("--bootstrap %s: give a whole number of iterations from 0 to 1000000", arg);
			return -EINVAL;
		}
		o->bootstrap_iterations = (unsigned)d;
		break;
	case OPT_FORMAT:
		if (!strcmp(arg, "table")) { /* the word before "text", which show uses too */
			a->format = FORMAT_TABLE;
			return 0;
		}
		for (size_t f = 0; f < _FORMAT_MAX; f++)
			if (!strcmp(arg, format_names[f])) {
				a->format = (enum format)f;
				return 0;
			}
		verb_error("--format %s: unknown format; use text, json, markdown, csv, junit, html or kcidb", arg);
		return -EINVAL;
	case OPT_KCIDB_ORIGIN:
		if (!export_kcidb_origin_valid(arg)) {
			verb_error("--kcidb-origin %s: use lowercase letters, digits and '_' "
				"(e.g. %s)", arg, EXPORT_KCIDB_ORIGIN_DEFAULT);
			return -EINVAL;
		}
		a->kcidb_origin = arg;
		break;
	}
	return 0;
}

/* What the options given set of the comparison, and their one exclusion. */
static int finish_options(struct args *a, struct compare_options *o)
{
	if (a->n_windows) {
		o->windows = a->windows;
		o->n_windows = a->n_windows;
	}
	if (a->n_metrics) {
		o->metrics = a->metrics;
		o->n_metrics = a->n_metrics;
		o->metrics_explicit = true;
	}
	o->thresholds = a->thresholds;
	o->n_thresholds = a->n_thresholds;
	if (!a->store)
		a->store = default_store();
	if (a->kcidb_origin && a->format != FORMAT_KCIDB) {
		verb_error("--kcidb-origin goes with --format kcidb");
		return -EINVAL;
	}
	return 0;
}

static const struct option compare_longopts[] = {
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "patched", required_argument, NULL, OPT_PATCHED },
	{ "aa", required_argument, NULL, OPT_AA },
	{ "aa-split", required_argument, NULL, OPT_AA_SPLIT },
	{ "store", required_argument, NULL, OPT_STORE },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "alpha", required_argument, NULL, OPT_ALPHA },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "bootstrap", required_argument, NULL, OPT_BOOTSTRAP },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "wide", no_argument, NULL, OPT_WIDE },
	{ "verdict-on-emulated", no_argument, NULL, OPT_VERDICT_ON_EMULATED },
	{ "verdict-on-fixed-count", no_argument, NULL, OPT_VERDICT_ON_FIXED_COUNT },
	{ "kcidb-origin", required_argument, NULL, OPT_KCIDB_ORIGIN },
	{ "grid", required_argument, NULL, OPT_GRID },
	{ "grid-baseline", required_argument, NULL, OPT_GRID_BASELINE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* Fills *a and *o; 0, 1 after --help (help printed with usage_fn), or -EINVAL/-ENOMEM (said why on stderr). */
static int parse_argv(int argc, char **argv, struct args *a, struct compare_options *o, const char *verb,
		      void (*usage_fn)(FILE *))
{
	int c, r;

	optind = 1;
	opterr = 0; /* verb_option_error() says what is wrong */
	while ((c = getopt_long(argc, argv, ":qh", compare_longopts, NULL)) != -1) {
		switch (c) {
		case OPT_BASELINE:
			a->baseline = optarg;
			break;
		case OPT_PATCHED:
			a->patched = optarg;
			break;
		case OPT_AA:
			a->aa = optarg;
			break;
		case OPT_STORE:
			a->store = optarg;
			break;
		case OPT_GRID:
			a->grid = optarg;
			break;
		case OPT_GRID_BASELINE:
			a->grid_baseline = optarg;
			break;
		case OPT_AA_SPLIT:
		case OPT_WINDOW:
		case OPT_METRIC:
		case OPT_ALPHA:
		case OPT_THRESHOLD:
		case OPT_BOOTSTRAP:
		case OPT_FORMAT:
		case OPT_KCIDB_ORIGIN:
			r = parse_checked_option(c, optarg, a, o);
			if (r < 0)
				return r;
			break;
		case OPT_FORCE:
			o->force = true;
			break;
		case OPT_JSON:
			a->format = FORMAT_JSON;
			break;
		case OPT_OUTPUT:
			a->output = optarg;
			break;
		case OPT_ALL:
			o->show_all = true;
			break;
		case OPT_WIDE:
			a->wide = true;
			break;
		case OPT_VERDICT_ON_EMULATED:
			o->verdict_on_emulated = true;
			break;
		case OPT_VERDICT_ON_FIXED_COUNT:
			o->verdict_on_fixed_count = true;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'h':
			usage_fn(stdout);
			return 1;
		default:
			verb_option_error(verb, c, argv, compare_longopts);
			return -EINVAL;
		}
	}
	return finish_options(a, o);
}

static int write_file(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *path = NULL;
	struct sb_error err = { 0 };

	if (asprintf(&path, "%s/%s", dir, name) < 0) {
		path = NULL;
		verb_error("out of memory");
		return -ENOMEM;
	}
	if (atomic_file_write(path, text, strlen(text), 0644, &err) < 0) {
		verb_error("%s", err.msg);
		return err.code;
	}
	return 0;
}

/*
 * The outputs of one comparison but the Markdown (indexed by enum format),
 * and the plots; *md_flags gets the plots written, for compare.md's links.
 */
static int write_outputs(const char *dir, const struct compare_result *res, char *const text[static _FORMAT_MAX],
			 unsigned *md_flags)
{
	int r;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		verb_error("--output %s: cannot create the directory: %s", dir, strerror(-r));
		return r;
	}
	if ((r = write_file(dir, "compare.json", text[FORMAT_JSON])) < 0 ||
	    (r = write_file(dir, "compare.txt", text[FORMAT_TABLE])) < 0 ||
	    (r = write_file(dir, "compare.csv", text[FORMAT_CSV])) < 0 ||
	    (r = write_file(dir, "compare-junit.xml", text[FORMAT_JUNIT])) < 0 ||
	    (r = write_file(dir, "compare.html", text[FORMAT_HTML])) < 0)
		return r;
	for (size_t i = 0; i < res->n_metrics; i++) {
		if (!compare_metric_shown(res, i)) /* 0 everywhere: compare.md names it */
			continue;
		_cleanup_free_ char *svg = compare_plot_metric_svg(res, i);
		_cleanup_free_ char *name = compare_plot_file_name(&res->metrics[i]);
		if (!svg || !name) {
			verb_error("out of memory drawing %s", res->metrics[i].name);
			return -ENOMEM;
		}
		if ((r = write_file(dir, name, svg)) < 0)
			return r;
		*md_flags |= COMPARE_MD_PLOTS;
	}
	const char *why = NULL;
	_cleanup_free_ char *timeline = compare_plot_timeline_svg(res, &why);
	if (timeline) {
		if ((r = write_file(dir, "timeline.svg", timeline)) < 0)
			return r;
		*md_flags |= COMPARE_MD_TIMELINE;
		return 0;
	}
	/* a report without timelines is valid input: say why the plot is missing */
	verb_error("no timeline.svg: %s", why ? why : "unknown reason");
	return 0;
}

static int select_sides(const struct args *a, char **positional, size_t n_pos, const struct compare_options *o,
			struct compare_pool *pool, struct compare_side *base, struct compare_side *patch,
			struct sb_error *err)
{
	int r;

	if (a->aa) {
		struct compare_side all;
		if (a->baseline || a->patched)
			return sb_error_set(err, -EINVAL, "--aa compares one selection with itself; drop --baseline "
					    "and --patched");
		r = compare_select(pool, "aa", a->aa, positional, n_pos, a->store, &all, err);
		if (r < 0)
			return r;
		r = compare_split_aa(&all, o->aa_split, base, patch, err);
		compare_side_done(&all);
		return r;
	}
	if (a->baseline || a->patched) {
		if (!a->baseline || !a->patched)
			return sb_error_set(err, -EINVAL, "give both --baseline and --patched (or two report files)");
		r = compare_select(pool, "baseline", a->baseline, positional, n_pos, a->store, base, err);
		if (r < 0)
			return r;
		r = compare_select(pool, "patched", a->patched, positional, n_pos, a->store, patch, err);
		if (r < 0)
			compare_side_done(base);
		return r;
	}
	for (size_t i = 0; i < n_pos; i++)
		if (access(positional[i], R_OK) < 0)
			return sb_error_set(err, -errno, "cannot open report %s: %s", positional[i], strerror(errno));
	if (n_pos == 1)
		return compare_select_two_arms(pool, positional[0], base, patch, err);
	if (n_pos != 2)
		return sb_error_set(err, -EINVAL, "%s: give a baseline and a patched report, one report with two "
				    "arms, or --baseline SEL --patched SEL (see --help)",
				    n_pos ? "too many reports" : "nothing to compare");
	r = compare_select(pool, "baseline", positional[0], NULL, 0, a->store, base, err);
	if (r < 0)
		return r;
	r = compare_select(pool, "patched", positional[1], NULL, 0, a->store, patch, err);
	if (r < 0)
		compare_side_done(base);
	return r;
}

/* compare --grid: the selections it does not take refused, the rest handed to verb-compare-grid.c. */
static int compare_grid_run(const struct args *a, char **reports, size_t n_reports, const struct compare_options *o,
			    bool bisect)
{
	if (bisect) {
		verb_error("--grid is compare's: bisect-step judges one baseline against one patched side");
		return EXIT_USAGE;
	}
	if (!a->grid) {
		verb_error("--grid-baseline goes with --grid ROWS,COLUMNS: add it");
		return EXIT_USAGE;
	}
	if (a->baseline || a->patched || a->aa) {
		verb_error("--grid takes the reports whose arms make the grid, without --baseline, --patched or --aa "
			   "(each row's baseline is an arm of it)");
		return EXIT_USAGE;
	}
	const struct compare_grid_cli c = {
		.grid = a->grid,
		.baseline = a->grid_baseline,
		.format = format_names[a->format],
		.output = a->output,
		.quiet = a->quiet,
		.reports = reports,
		.n_reports = n_reports,
	};
	return compare_grid_verb(&c, o);
}

/* The comparison in every format but Markdown (text[]), and the table for stdout; EXIT_OK or EXIT_FAIL. */
static int render_formats(struct compare_result *res, const struct args *a, char **text, char **table_out)
{
	text[FORMAT_JSON] = compare_json_string(res);
	/* compare.txt fits 80 columns (or is wide when asked), for mail; stdout the terminal */
	const struct compare_text_options file_text = { .wide = a->wide };
	const struct compare_text_options out_text = { .width = output_width(), .wide = a->wide, .ascii = output_ascii() };
	text[FORMAT_TABLE] = compare_format_table(res, &file_text);
	*table_out = a->format == FORMAT_TABLE ? compare_format_table(res, &out_text) : NULL;
	if (a->format == FORMAT_TABLE && !*table_out) {
		verb_error("out of memory");
		return EXIT_FAIL;
	}
	text[FORMAT_CSV] = export_compare_csv(res);
	text[FORMAT_JUNIT] = export_compare_junit(res);
	text[FORMAT_HTML] = export_compare_html(res);
	text[FORMAT_KCIDB] = export_compare_kcidb(res, a->kcidb_origin ? a->kcidb_origin : EXPORT_KCIDB_ORIGIN_DEFAULT);
	for (size_t f = 0; f < _FORMAT_MAX; f++)
		if (f != FORMAT_MARKDOWN && !text[f]) {
			verb_error("out of memory");
			return EXIT_FAIL;
		}
	return EXIT_OK;
}

/* The files of --output (compare.md after the plots it links), then stdout; EXIT_OK or EXIT_FAIL. */
static int emit(struct compare_result *res, const struct args *a, char **text, const char *table_out)
{
	unsigned md_flags = 0;

	if (a->output && write_outputs(a->output, res, text, &md_flags) < 0)
		return EXIT_FAIL;
	text[FORMAT_MARKDOWN] = compare_format_markdown(res, md_flags);
	if (!text[FORMAT_MARKDOWN]) {
		verb_error("out of memory");
		return EXIT_FAIL;
	}
	if (a->output && write_file(a->output, "compare.md", text[FORMAT_MARKDOWN]) < 0)
		return EXIT_FAIL;
	if (!a->quiet) {
		fputs(a->format == FORMAT_TABLE ? table_out : text[a->format], stdout);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			verb_error("cannot write to stdout: %s", strerror(errno));
			return EXIT_FAIL;
		}
	}
	return EXIT_OK;
}

int compare_run(int argc, char **argv, void (*usage_fn)(FILE *), struct compare_outcome *outcome)
{
	struct compare_options o;
	struct args a = { 0 };
	struct compare_pool pool = { 0 };
	struct compare_side base = { 0 }, patch = { 0 };
	struct compare_result *res = NULL;
	struct sb_error err = { 0 };
	char *text[_FORMAT_MAX] = { 0 }, *table_out = NULL;
	int r, ret = EXIT_USAGE;

	compare_options_init(&o);
	r = parse_argv(argc, argv, &a, &o, argv[0], usage_fn);
	if (r != 0) {
		ret = r > 0 ? EXIT_OK : r == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
		goto out;
	}
	o.aa = a.aa != NULL;
	if (a.grid || a.grid_baseline) { /* reports/compare-grid.h: a table of arms, cli/verb-compare-grid.c */
		ret = compare_grid_run(&a, argv + optind, (size_t)(argc - optind), &o, outcome != NULL);
		goto out;
	}

	r = select_sides(&a, argv + optind, (size_t)(argc - optind), &o, &pool, &base, &patch, &err);
	if (r >= 0)
		r = compare_compute(&base, &patch, &o, &res, &err);
	if (r < 0) {
		verb_error("%s", err.msg);
		if (outcome)
			outcome->no_repetitions = r == -ENODATA;
		ret = r == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
		goto out;
	}

	if (outcome) {
		outcome->judge(res, outcome);
		res->exit_code = outcome->code;
	}
	ret = render_formats(res, &a, text, &table_out);
	if (ret == EXIT_OK)
		ret = emit(res, &a, text, table_out);
	if (ret != EXIT_OK)
		goto out;
	ret = res->exit_code;
out:
	for (size_t f = 0; f < _FORMAT_MAX; f++)
		free(text[f]);
	free(table_out);
	compare_result_free(res);
	compare_side_done(&base);
	compare_side_done(&patch);
	compare_pool_done(&pool);
	args_done(&a);
	return ret;
}

static int run_compare(int argc, char **argv)
{
	return compare_run(argc, argv, usage, NULL);
}

const struct verb verb_compare = {
	.name = "compare",
	.summary = "compare baseline and patched runs: statistics, verdicts, tables, plots",
	.run = run_compare,
};
