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
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "compare.h"
#include "exit-codes.h"
#include "macro.h"
#include "parse-number.h"
#include "runner.h"
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
		"  --store DIR           results store: one directory per run holding\n"
		"                        report.json (default %s)\n"
		"\n"
		"Statistics and verdicts:\n"
		"  --window NAME         pre, snapshot, migration or post; repeatable (default\n"
		"                        snapshot; dirty-log runs: migration)\n"
		"  --metric NAME         a metric or a glob such as 'invalidations_per_s.*';\n"
		"                        repeatable (default: pf_per_s tlb_per_s\n"
		"                        invalidations_per_s[.*] guest_ops_per_s latency_p50_ns\n"
		"                        latency_p99_ns latency_p999_ns; dirty-log runs: the\n"
		"                        seed's clear_log_ns_per_iteration tlb_per_iteration\n"
		"                        tlb_per_s dirty_pages_per_s first, docs/compare.md)\n"
		"  --alpha P             significance level of the two-sided test (default 0.05)\n"
		"  --threshold PCT       smallest |change of medians| in %% that earns a verdict\n"
		"                        (default 5)\n"
		"  --threshold METRIC=PCT  the same for metrics matching METRIC; repeatable\n"
		"  --bootstrap N         bootstrap iterations for the median-ratio interval\n"
		"                        (default %d, 0: none)\n"
		"  --force               compare runs whose scenario, VM size, guest or timing\n"
		"                        differ (the differences are listed as warnings)\n"
		"\n"
		"Output:\n"
		"  --format FMT          table (default), json or markdown on stdout\n"
		"  --json                same as --format json\n"
		"  --output DIR          also write compare.json, compare.txt, compare.md and SVG\n"
		"                        plots (one per metric, timeline.svg) into DIR\n"
		"  -q, --quiet           nothing on stdout\n"
		"\n"
		"Exit codes: 0 no significant regression, 3 a significant regression beyond\n"
		"the threshold, 2 invalid input or incomparable runs, 1 output not written.\n"
		"docs/compare.md explains the statistics and the verdict rules.\n",
		default_store(), STATS_BOOTSTRAP_ITERATIONS);
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
};

enum format { FORMAT_TABLE, FORMAT_JSON, FORMAT_MARKDOWN };

struct args {
	const char *baseline, *patched, *aa, *store, *output;
	enum format format;
	bool quiet;
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

static int parse_threshold(struct args *a, struct compare_options *o, char *arg)
{
	char *eq = strrchr(arg, '=');
	double pct;

	if (parse_double(eq ? eq + 1 : arg, 0, DBL_MAX, &pct, NULL) < 0) {
		fprintf(stderr, "snapbench compare: --threshold %s: give a percentage >= 0 (e.g. 5) or METRIC=PCT "
			"(e.g. latency_p99_ns=10)\n", arg);
		return -EINVAL;
	}
	if (!eq) {
		o->threshold_pct = pct;
		return 0;
	}
	if (eq == arg) {
		fprintf(stderr, "snapbench compare: --threshold %s: the metric name before '=' is missing\n", arg);
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
			fprintf(stderr, "snapbench compare: --aa-split %s: use alternate or halves\n", arg);
			return -EINVAL;
		}
		break;
	case OPT_WINDOW:
		if (strcmp(arg, "pre") && strcmp(arg, "snapshot") && strcmp(arg, "migration") && strcmp(arg, "post")) {
			fprintf(stderr, "snapbench compare: --window %s: use pre, snapshot, migration (dirty-log) or post\n", arg);
			return -EINVAL;
		}
		if (push_ptr(&a->windows, &a->n_windows, arg) < 0)
			return -ENOMEM;
		break;
	case OPT_METRIC:
		if (!*arg) {
			fprintf(stderr, "snapbench compare: --metric needs a name such as pf_per_s\n");
			return -EINVAL;
		}
		if (push_ptr(&a->metrics, &a->n_metrics, arg) < 0)
			return -ENOMEM;
		break;
	case OPT_ALPHA:
		if (parse_double(arg, 0, 1, &d, NULL) < 0 || d == 0 || d == 1) {
			fprintf(stderr, "snapbench compare: --alpha %s: give a level between 0 and 1 (e.g. 0.05)\n",
				arg);
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
			fprintf(stderr, "snapbench compare: --bootstrap %s: give a whole number of iterations "
				"from 0 to 1000000\n", arg);
			return -EINVAL;
		}
		o->bootstrap_iterations = (unsigned)d;
		break;
	case OPT_FORMAT:
		if (!strcmp(arg, "table"))
			a->format = FORMAT_TABLE;
		else if (!strcmp(arg, "json"))
			a->format = FORMAT_JSON;
		else if (!strcmp(arg, "markdown"))
			a->format = FORMAT_MARKDOWN;
		else {
			fprintf(stderr, "snapbench compare: --format %s: use table, json or markdown\n", arg);
			return -EINVAL;
		}
		break;
	}
	return 0;
}

/* Fills *a and *o; 0, 1 after --help, or -EINVAL/-ENOMEM (said why on stderr). */
static int parse_argv(int argc, char **argv, struct args *a, struct compare_options *o)
{
	static const struct option longopts[] = {
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
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
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
		case OPT_AA_SPLIT:
		case OPT_WINDOW:
		case OPT_METRIC:
		case OPT_ALPHA:
		case OPT_THRESHOLD:
		case OPT_BOOTSTRAP:
		case OPT_FORMAT:
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
		case 'q':
			a->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "Run 'snapbench compare --help' for the options.\n");
			return -EINVAL;
		}
	}
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
	return 0;
}

static int write_file(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *path = NULL;
	struct sb_error err = { 0 };

	if (asprintf(&path, "%s/%s", dir, name) < 0) {
		path = NULL;
		fprintf(stderr, "snapbench compare: out of memory\n");
		return -ENOMEM;
	}
	if (atomic_file_write(path, text, strlen(text), 0644, &err) < 0) {
		fprintf(stderr, "snapbench compare: %s\n", err.msg);
		return err.code;
	}
	return 0;
}

static int write_outputs(const char *dir, const struct compare_result *res, const char *json, const char *table,
			 const char *markdown)
{
	int r;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "snapbench compare: --output %s: cannot create the directory: %s\n", dir,
			strerror(errno));
		return -errno;
	}
	if ((r = write_file(dir, "compare.json", json)) < 0 || (r = write_file(dir, "compare.txt", table)) < 0 ||
	    (r = write_file(dir, "compare.md", markdown)) < 0)
		return r;
	for (size_t i = 0; i < res->n_metrics; i++) {
		_cleanup_free_ char *svg = compare_plot_metric_svg(res, i);
		_cleanup_free_ char *name = compare_plot_file_name(&res->metrics[i]);
		if (!svg || !name) {
			fprintf(stderr, "snapbench compare: out of memory drawing %s\n", res->metrics[i].name);
			return -ENOMEM;
		}
		if ((r = write_file(dir, name, svg)) < 0)
			return r;
	}
	const char *why = NULL;
	_cleanup_free_ char *timeline = compare_plot_timeline_svg(res, &why);
	if (timeline)
		return write_file(dir, "timeline.svg", timeline);
	/* a report without timelines is valid input: say why the plot is missing */
	fprintf(stderr, "snapbench compare: no timeline.svg: %s\n", why ? why : "unknown reason");
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

static int run_compare(int argc, char **argv)
{
	struct compare_options o;
	struct args a = { 0 };
	struct compare_pool pool = { 0 };
	struct compare_side base = { 0 }, patch = { 0 };
	struct compare_result *res = NULL;
	struct sb_error err = { 0 };
	_cleanup_free_ char *json = NULL, *table = NULL, *markdown = NULL;
	int r, ret = EXIT_USAGE;

	compare_options_init(&o);
	r = parse_argv(argc, argv, &a, &o);
	if (r != 0) {
		ret = r > 0 ? EXIT_OK : r == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
		goto out;
	}
	o.aa = a.aa != NULL;

	r = select_sides(&a, argv + optind, (size_t)(argc - optind), &o, &pool, &base, &patch, &err);
	if (r < 0) {
		fprintf(stderr, "snapbench compare: %s\n", err.msg);
		ret = r == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
		goto out;
	}
	r = compare_compute(&base, &patch, &o, &res, &err);
	if (r < 0) {
		fprintf(stderr, "snapbench compare: %s\n", err.msg);
		ret = r == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
		goto out;
	}

	json = compare_json_string(res);
	table = compare_format_table(res);
	markdown = compare_format_markdown(res);
	if (!json || !table || !markdown) {
		fprintf(stderr, "snapbench compare: out of memory\n");
		ret = EXIT_FAIL;
		goto out;
	}
	if (a.output && write_outputs(a.output, res, json, table, markdown) < 0) {
		ret = EXIT_FAIL;
		goto out;
	}
	if (!a.quiet) {
		fputs(a.format == FORMAT_JSON ? json : a.format == FORMAT_MARKDOWN ? markdown : table, stdout);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "snapbench compare: cannot write to stdout: %s\n", strerror(errno));
			ret = EXIT_FAIL;
			goto out;
		}
	}
	ret = res->exit_code;
out:
	compare_result_free(res);
	compare_side_done(&base);
	compare_side_done(&patch);
	compare_pool_done(&pool);
	args_done(&a);
	return ret;
}

const struct verb verb_compare = {
	.name = "compare",
	.summary = "compare baseline and patched runs: statistics, verdicts, tables, plots",
	.run = run_compare,
};
