// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench bisect-step: compare's comparison (verb-compare.h) judged for
 * git bisect run, the judgement made before the comparison is rendered.
 */
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "exit-codes.h"
#include "macro.h"
#include "strv.h"
#include "verb-compare.h"
#include "verbs.h"

static void compare_outcome_done(struct compare_outcome *oc)
{
	strv_free(oc->trouble);
}

enum {
	BISECT_GOOD = 0,
	BISECT_BAD = 1,
	BISECT_SKIP = 125,
	BISECT_STOP = 128,
};

/* "latency p99 in snapshot +35.2%, ..." for the metrics with verdict v, or the skipped ones that recur. */
static void list_metrics(const struct compare_result *res, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < res->n_metrics && len < size; i++) {
		const struct compare_metric *m = &res->metrics[i];
		char change[32], name[96];

		if (m->verdict != COMPARE_REGRESSED)
			continue;
		compare_format_change(m, change, sizeof(change));
		compare_metric_name(m->name, name, sizeof(name)); /* the report's text, sanitized */
		len += (size_t)snprintf(buf + len, size - len, "%s%s in %s %s", len ? ", " : "", name, m->window, change);
	}
}

/* The skipped metrics that every commit would skip again ("pf_per_s in snapshot: REASON; ..."); how many. */
static size_t list_recurring(const struct compare_result *res, bool named_only, char *buf, size_t size)
{
	size_t len = 0, n = 0;
	char name[96];

	buf[0] = '\0';
	for (size_t i = 0; i < res->n_skipped; i++) {
		const struct compare_skipped *k = &res->skipped[i];
		if (!k->recurs || (named_only && !res->opts.metrics_explicit))
			continue;
		n++;
		compare_metric_name(k->name, name, sizeof(name)); /* the report's text, sanitized */
		if (len < size) /* the reason is sanitized where compare made it */
			len += (size_t)snprintf(buf + len, size - len, "%s%s in %s: %s", len ? "; " : "", name,
						k->window, k->reason);
	}
	return n;
}

/*
 * 1 a regression; 128 a metric the user named that the baseline can never
 * have (the host cannot count it, the window is not the scenario's), or no
 * metric compared and every one skipped so; 125 what this commit's
 * measurement could not decide; else 0.
 */
static void bisect_judge(const struct compare_result *res, struct compare_outcome *out)
{
	size_t regressed = 0, insufficient = 0, compared = res->n_metrics;
	char list[768];

	out->computed = true;
	out->trouble = strv_copy(res->side[1]->trouble);
	for (size_t i = 0; i < res->n_metrics; i++) {
		regressed += res->metrics[i].verdict == COMPARE_REGRESSED;
		insufficient += res->metrics[i].verdict == COMPARE_INSUFFICIENT_DATA;
	}
	if (list_recurring(res, true, list, sizeof(list)) ||
	    (!compared && res->n_skipped && list_recurring(res, false, list, sizeof(list)) == res->n_skipped)) {
		out->code = BISECT_STOP;
		snprintf(out->why, sizeof(out->why), "stop (128): no commit can be judged on this: %s; choose "
			 "metrics and windows these runs have (--metric, --window) and run the bisection again", list);
	} else if (regressed) {
		list_metrics(res, list, sizeof(list));
		out->code = BISECT_BAD;
		snprintf(out->why, sizeof(out->why), "bad (1): %zu of %zu metrics regressed: %s", regressed, compared,
			 list);
	} else if (!compared || insufficient) {
		out->code = BISECT_SKIP;
		snprintf(out->why, sizeof(out->why), "skip (125): %s",
			 !compared ? "no metric had values on both sides in this commit's runs"
				   : "too few repetitions for a verdict on some metric (insufficient-data)");
	} else {
		out->code = BISECT_GOOD;
		snprintf(out->why, sizeof(out->why), "good (0): none of %zu metrics regressed", compared);
	}
}

/*
 * snapbench bisect-step: compare for `git bisect run`, which reads the exit
 * code as good (0), bad (1-124, 126, 127), skip (125) or "stop the
 * bisection" (128 and above). It exits 0, 1, 125 or 128 only (docs/cli.md):
 * a measurement of this commit that cannot decide is a skip; a metric the
 * baseline can never have, and anything else that keeps the comparison from
 * being made (a typo in an option, a report that is not there or not one,
 * runs that cannot be compared) would be the same at every commit, so it
 * stops the bisection instead of skipping them all.
 */
static void bisect_usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench bisect-step [COMPARE OPTIONS] BASELINE.json PATCHED.json\n"
		"       snapbench bisect-step [COMPARE OPTIONS] TWO-ARM-REPORT.json\n"
		"       snapbench bisect-step [COMPARE OPTIONS] --baseline SEL --patched SEL\n"
		"                             [REPORT...]\n"
		"\n"
		"One step of 'git bisect run': compares the runs as 'snapbench compare' does\n"
		"(the same options, see 'snapbench compare --help'; the baseline is the good\n"
		"reference, the patched side the commit under test) and exits\n"
		"\n"
		"    0  good: no metric regressed, and every compared metric has enough\n"
		"       repetitions for a verdict\n"
		"    1  bad: a metric regressed (choose them with --metric)\n"
		"  125  skip: this commit cannot be tested: too few repetitions for a verdict\n"
		"       (insufficient-data), no metric with values on both sides in its runs,\n"
		"       or a side without a completed repetition (its run failed)\n"
		"  128  stop the bisection: what every commit would give again: a metric or\n"
		"       window the baseline can never have (the host cannot count it, the\n"
		"       scenario has no such window), a bad option, a report missing or not\n"
		"       one, runs that cannot be compared, outputs not written\n"
		"\n"
		"The verdict line of the table, the JSON's exit_code and the exit status are\n"
		"the same number; a host VM kernel of the commit that was tainted is named.\n"
		"and never anything else. With --json the comparison on stdout is compare's\n"
		"JSON, and an error is also a JSON object there. docs/cli.md has a bisect\n"
		"script for a kernel tree.\n");
}

static int run_bisect_step(int argc, char **argv)
{
	_cleanup_(compare_outcome_done) struct compare_outcome oc = { .judge = bisect_judge };
	int r = compare_run(argc, argv, bisect_usage, &oc);

	if (!oc.computed) {
		if (r == EXIT_OK) /* --help */
			return BISECT_GOOD;
		if (oc.no_repetitions) {
			fprintf(stderr, "snapbench bisect-step: skip (125): a side has no completed repetition (the "
				"message above says which)\n");
			return BISECT_SKIP;
		}
		fprintf(stderr, "snapbench bisect-step: stop (128): no comparison, and none would be at any other "
			"commit (the message above says why); fix it and run the bisection again\n");
		return BISECT_STOP;
	}
	if (r != oc.code) { /* the comparison was made, its outputs not written (said above) */
		fprintf(stderr, "snapbench bisect-step: stop (128): the outputs were not written (the message above "
			"says why); fix it and run the bisection again\n");
		return BISECT_STOP;
	}
	fprintf(stderr, "snapbench bisect-step: %s\n", oc.why);
	/* a verdict from a kernel that warned or oopsed may not be the commit's: name it */
	for (size_t i = 0; oc.trouble && oc.trouble[i]; i++)
		fprintf(stderr, "snapbench bisect-step: the kernel under test was in trouble: %s\n", oc.trouble[i]);
	return oc.code;
}

const struct verb verb_bisect_step = {
	.name = "bisect-step",
	.summary = "one step of git bisect run: compare, exit 0 good, 1 regressed, 125 skip, 128 stop",
	.run = run_bisect_step,
};

