// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KCIDB JSON (the I/O schema of KernelCI's common results database, version
 * 5.3: reports/schema/kcidb/): a run's figures as test runs, a comparison's
 * verdicts as PASS/FAIL tests. Each arm (run) or side (comparison) is one
 * checkout and one build, the kernel it ran on; the tests reference the
 * builds. Ids start with the origin and are made of the run ids, arm
 * labels, repetition indexes, windows and metrics, so the same input gives
 * the same ids and a resubmission updates what was submitted.
 * docs/exports.md describes the objects and their fields.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export.h"
#include "export-private.h"
#include "timing.h"
#include "json-build.h"
#include "json-util.h"
#include "strv.h"

/* What the builders need: the origin, and common's JSON builder with its
 * out-of-memory latch (a NULL a builder returns is "no such field", not a
 * failure: jb_put() and jb_push_some() leave it out). */
struct kcidb {
	const char *origin;
	struct json_build jb;
	/* each reason a figure is unavailable for, and the test that says it: the others point there
	 * (a 300-character reason in each of a run's hundreds of tests was most of its size) */
	char **reasons, **reason_tests;
};

/* reasons of this length and more are written in one test, the others refer to it (a test id is ~70) */
#define KCIDB_REASON_ONCE 120

static void kcidb_done(struct kcidb *k)
{
	strv_free(k->reasons);
	strv_free(k->reason_tests);
}

bool export_kcidb_origin_valid(const char *origin)
{
	if (!origin || !*origin)
		return false;
	for (const char *p = origin; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

/* s as exports write text (controls and bytes that are not UTF-8 as '?'); NULL for NULL. */
static struct json_object *text(struct kcidb *k, const char *s)
{
	_cleanup_strbuf_ struct strbuf b = {};
	_cleanup_free_ char *t = NULL;

	if (!s)
		return NULL;
	if (export_text_unchanged(s, EXPORT_ESCAPE_NONE)) /* most text: no copy to make first */
		return jb_check(&k->jb, json_object_new_string(s));
	export_append_text(&b, s, EXPORT_ESCAPE_NONE);
	t = strbuf_steal(&b);
	if (!t) {
		k->jb.oom = true;
		return NULL;
	}
	return jb_check(&k->jb, json_object_new_string(t));
}

/* The shortest form that reads back to the same double; NULL (no field) for NAN and infinities. */
static struct json_object *num(struct kcidb *k, double v)
{
	char buf[EXPORT_NUMBER_MAX];

	if (!isfinite(v))
		return NULL;
	export_format_number(v, buf);
	return jb_check(&k->jb, json_object_new_double_s(v == 0 ? 0 : v, buf));
}

/* A copy of a report's JSON as KCIDB may hold it: no nulls (the schema has
 * none), text as text(), numbers in their shortest form; depth bounded. */
static struct json_object *copy(struct kcidb *k, struct json_object *v, int depth)
{
	struct json_object *o;

	switch (json_object_get_type(v)) {
	case json_type_boolean:
		return jb_check(&k->jb, json_object_new_boolean(json_object_get_boolean(v)));
	case json_type_int:
		return jb_i64(&k->jb, json_object_get_int64(v));
	case json_type_double:
		return num(k, json_object_get_double(v));
	case json_type_string:
		return text(k, json_object_get_string(v));
	case json_type_object:
		if (depth <= 0)
			return NULL;
		o = jb_obj(&k->jb);
		json_object_object_foreach(v, key, member) {
			_cleanup_strbuf_ struct strbuf b = {};
			_cleanup_free_ char *escaped = NULL;
			const char *name = key;

			if (!export_text_unchanged(key, EXPORT_ESCAPE_NONE)) {
				export_append_text(&b, key, EXPORT_ESCAPE_NONE);
				name = escaped = strbuf_steal(&b);
				if (!name) {
					k->jb.oom = true;
					continue;
				}
			}
			jb_put(&k->jb, o, name, copy(k, member, depth - 1));
		}
		return o;
	case json_type_array:
		if (depth <= 0)
			return NULL;
		o = jb_arr(&k->jb);
		for (size_t i = 0; i < json_object_array_length(v); i++)
			jb_push_some(&k->jb, o, copy(k, json_object_array_get_idx(v, i), depth - 1));
		return o;
	default: /* null */
		return NULL;
	}
}

#define COPY_DEPTH 8

/* "ORIGIN:" then the parts, each as text() writes it. */
static struct json_object *id_new(struct kcidb *k, const char *fmt, ...) _printf_(2, 3);
static struct json_object *id_new(struct kcidb *k, const char *fmt, ...)
{
	_cleanup_strbuf_ struct strbuf b = {};
	_cleanup_free_ char *raw = NULL;
	va_list ap;

	strbuf_appendf(&b, "%s:", k->origin);
	va_start(ap, fmt);
	strbuf_vappendf(&b, fmt, ap);
	va_end(ap);
	raw = strbuf_steal(&b);
	if (!raw) {
		k->jb.oom = true;
		return NULL;
	}
	return text(k, raw);
}

/* One component of a test path: [a-zA-Z0-9_-]+, every other byte as '_'. */
static void path_component(struct strbuf *b, const char *s)
{
	if (!s || !*s) {
		strbuf_append(b, "_");
		return;
	}
	for (const char *p = s; *p;) {
		size_t ok = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");

		if (ok) {
			strbuf_append_mem(b, p, ok);
			p += ok;
		} else {
			strbuf_append_mem(b, "_", 1);
			p++;
		}
	}
}

/* "snapbench.SCENARIO[.MIDDLE][.WINDOW[.METRIC...]]": a metric's dots separate path components. */
static struct json_object *path_new(struct kcidb *k, const char *scenario, const char *middle, const char *window,
				    const char *metric)
{
	_cleanup_strbuf_ struct strbuf b = {};
	_cleanup_free_ char *t = NULL;

	strbuf_append(&b, "snapbench.");
	path_component(&b, scenario);
	if (middle) {
		strbuf_append(&b, ".");
		path_component(&b, middle);
	}
	if (window) {
		strbuf_append(&b, ".");
		path_component(&b, window);
	}
	for (const char *p = metric; p;) {
		const char *dot = strchr(p, '.');
		_cleanup_free_ char *part = strndup(p, dot ? (size_t)(dot - p) : strlen(p));

		if (!part) {
			k->jb.oom = true;
			return NULL;
		}
		strbuf_append(&b, ".");
		path_component(&b, part);
		p = dot ? dot + 1 : NULL;
	}
	t = strbuf_steal(&b);
	if (!t) {
		k->jb.oom = true;
		return NULL;
	}
	return jb_check(&k->jb, json_object_new_string(t));
}

/* A report's "YYYY-MM-DDTHH:MM:SSZ" as seconds since the epoch; NAN when it is not one. */
static double timestamp_parse(const char *s)
{
	struct tm tm = { 0 };
	const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;

	return end && !*end ? (double)timegm(&tm) : NAN;
}

/* t (seconds since the epoch) as RFC 3339 UTC, with milliseconds when it has a fraction; NULL for NAN. */
static struct json_object *timestamp_new(struct kcidb *k, double t)
{
	char buf[64], day[40];
	long long ms;
	time_t secs;
	struct tm tm;

	if (!isfinite(t) || fabs(t) > 1e15)
		return NULL;
	ms = llround(t * 1000);
	secs = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
	ms -= (long long)secs * 1000;
	if (!gmtime_r(&secs, &tm) || !strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm))
		return NULL;
	if (ms)
		snprintf(buf, sizeof(buf), "%s.%03lldZ", day, ms);
	else
		snprintf(buf, sizeof(buf), "%sZ", day);
	return jb_check(&k->jb, json_object_new_string(buf));
}

static struct json_object *version_new(struct kcidb *k)
{
	struct json_object *v = jb_obj(&k->jb);

	jb_put(&k->jb, v, "major", jb_i64(&k->jb, EXPORT_KCIDB_MAJOR));
	jb_put(&k->jb, v, "minor", jb_i64(&k->jb, EXPORT_KCIDB_MINOR));
	return v;
}

/* The arm labelled label of report, or NULL. */
static struct json_object *report_arm(struct json_object *report, const char *label)
{
	struct json_object *arms = json_lookup(report, "arms");

	for (size_t i = 0; label && json_object_is_type(arms, json_type_array) && i < json_object_array_length(arms);
	     i++) {
		struct json_object *arm = json_object_array_get_idx(arms, i);
		const char *l = json_lookup_string(arm, "label");
		if (l && !strcmp(l, label))
			return arm;
	}
	return NULL;
}

/* The kernel an arm ran on: a kernel arm's own (arms[].kernel, booted in a
 * host VM), else the host's release, version and command line. */
static struct json_object *kernel_new(struct kcidb *k, struct json_object *report, const char *label)
{
	struct json_object *own = json_lookup(report_arm(report, label), "kernel");
	struct json_object *host = json_lookup(report, "host"), *o;

	if (json_object_is_type(own, json_type_object)) {
		o = copy(k, own, COPY_DEPTH);
		jb_put(&k->jb, o, "runs_on", text(k, "host VM"));
		return o;
	}
	o = jb_obj(&k->jb);
	jb_put(&k->jb, o, "release", text(k, json_lookup_string(host, "kernel_release")));
	jb_put(&k->jb, o, "version", text(k, json_lookup_string(host, "kernel_version")));
	jb_put(&k->jb, o, "cmdline", text(k, json_lookup_string(host, "cmdline")));
	jb_put(&k->jb, o, "runs_on", text(k, "host"));
	return o;
}

/* environment: {"misc": {"host": the report's host, "kernel": kernel_new()}}. */
static struct json_object *environment_new(struct kcidb *k, struct json_object *report, const char *label)
{
	struct json_object *env = jb_obj(&k->jb), *misc = jb_obj(&k->jb);

	jb_put(&k->jb, misc, "host", copy(k, json_lookup(report, "host"), COPY_DEPTH));
	jb_put(&k->jb, misc, "kernel", kernel_new(k, report, label));
	jb_put(&k->jb, env, "misc", misc);
	return env;
}

/* One checkout and one build of id ORIGIN:key, the kernel an arm ran on; misc is the build's (taken). */
static void add_build(struct kcidb *k, struct json_object *doc, const char *key, struct json_object *report,
		      const char *label, const char *comment, struct json_object *misc)
{
	struct json_object *checkout = jb_obj(&k->jb), *build = jb_obj(&k->jb);

	jb_put(&k->jb, checkout, "id", id_new(k, "%s", key));
	jb_put(&k->jb, checkout, "origin", text(k, k->origin));
	jb_put(&k->jb, checkout, "comment", text(k, comment));
	struct json_object *cmisc = jb_obj(&k->jb);
	jb_put(&k->jb, cmisc, "kernel", kernel_new(k, report, label));
	jb_put(&k->jb, checkout, "misc", cmisc);
	jb_push_some(&k->jb, json_lookup(doc, "checkouts"), checkout);

	jb_put(&k->jb, build, "id", id_new(k, "%s", key));
	jb_put(&k->jb, build, "checkout_id", id_new(k, "%s", key));
	jb_put(&k->jb, build, "origin", text(k, k->origin));
	jb_put(&k->jb, build, "comment", text(k, comment));
	jb_put(&k->jb, misc, "kernel", kernel_new(k, report, label));
	jb_put(&k->jb, build, "misc", misc);
	jb_push_some(&k->jb, json_lookup(doc, "builds"), build);
}

static struct json_object *document_new(struct kcidb *k)
{
	struct json_object *doc = jb_obj(&k->jb);

	jb_put(&k->jb, doc, "version", version_new(k));
	jb_put(&k->jb, doc, "checkouts", jb_arr(&k->jb));
	jb_put(&k->jb, doc, "builds", jb_arr(&k->jb));
	jb_put(&k->jb, doc, "tests", jb_arr(&k->jb));
	return doc;
}

static int document_text(struct kcidb *k, struct json_object *doc, char **ret)
{
	const char *s;
	size_t len;

	if (k->jb.oom || !doc)
		return -ENOMEM;
	s = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							   JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (!s || !(*ret = malloc(len + 2)))
		return -ENOMEM;
	memcpy(*ret, s, len);
	memcpy(*ret + len, "\n", 2);
	return 0;
}

/* ---- a run ---- */

/* A repetition's state as a KCIDB status: completed DONE, failed ERROR, else (cancelled, running) MISS. */
static const char *repetition_status(const char *state)
{
	if (state && !strcmp(state, "completed"))
		return "DONE";
	if (state && !strcmp(state, "failed"))
		return "ERROR";
	return "MISS";
}

struct run_ctx {
	struct kcidb *k;
	struct json_object *report, *tests;
	const char *id, *scenario;
};

/* One figure of a repetition: what its test says. */
struct figure_test {
	const char *window, *name, *unit, *better;
	double value;                 /* NAN: unavailable, why says why */
	const char *why;
	double start_s, duration_s;   /* since the repetition started; NAN: not known */
	long long pass;               /* a dirty-log pass's figure: the pass; else -1 */
};

struct rep_ctx {
	struct run_ctx *c;
	struct json_object *rep, *build_id, *env;
	long long index;
	double started;
	bool emulated; /* the repetition's timing (reports/timing.h) */
};

static void add_figure_test(const struct rep_ctx *rc, const struct figure_test *f)
{
	struct run_ctx *c = rc->c;
	struct kcidb *k = c->k;
	struct json_object *t = jb_obj(&k->jb), *misc = jb_obj(&k->jb);
	bool measured = isfinite(f->value);
	const char *why = f->why ? f->why : "not measured";
	struct json_object *id = id_new(k, "%s/%lld/%s/%s", c->id, rc->index, f->window, f->name);
	const char *first = NULL; /* the test that gave this reason already */

	/* a reason longer than a reference to it is written once; the later tests name the first */
	bool long_reason = strlen(why) >= KCIDB_REASON_ONCE;
	for (size_t i = 0; !measured && long_reason && k->reasons && k->reasons[i]; i++)
		if (!strcmp(k->reasons[i], why))
			first = k->reason_tests[i];
	if (!measured && long_reason && !first && id && (strv_push(&k->reasons, why) < 0 ||
					  strv_push(&k->reason_tests, json_object_get_string(id)) < 0))
		k->jb.oom = true;
	jb_put(&k->jb, t, "id", id);
	jb_put(&k->jb, t, "build_id", json_object_get(rc->build_id));
	jb_put(&k->jb, t, "origin", text(k, k->origin));
	jb_put(&k->jb, t, "path", path_new(k, c->scenario, NULL, f->window, f->name));
	jb_put(&k->jb, t, "status", text(k, measured ? "DONE" : "SKIP"));
	if (measured) {
		struct json_object *number = jb_obj(&k->jb);
		jb_put(&k->jb, number, "value", num(k, f->value));
		if (f->unit[0] && strcmp(f->unit, "1"))
			jb_put(&k->jb, number, "unit", text(k, f->unit));
		jb_put(&k->jb, t, "number", number);
	} else if (!first) {
		jb_put(&k->jb, t, "comment", text(k, why));
	} else {
		_cleanup_free_ char *as = NULL;
		if (asprintf(&as, "unavailable: the reason is test %s's", first) < 0)
			as = NULL;
		jb_put(&k->jb, t, "comment", text(k, as ? as : "unavailable"));
	}
	if (isfinite(f->start_s))
		jb_put(&k->jb, t, "start_time", timestamp_new(k, rc->started + f->start_s));
	if (isfinite(f->duration_s))
		jb_put(&k->jb, t, "duration", num(k, f->duration_s));
	/* no environment: the host and the kernel are the repetition's test's and the build's, written once
	 * there instead of in each of a run's hundreds of figures (1.6 MB for one 5-repetition run before) */
	jb_put(&k->jb, misc, "run", text(k, c->id));
	jb_put(&k->jb, misc, "arm", text(k, json_lookup_string(rc->rep, "arm")));
	jb_put(&k->jb, misc, "repetition", jb_i64(&k->jb, rc->index));
	jb_put(&k->jb, misc, "window", text(k, f->window));
	if (f->pass >= 0)
		jb_put(&k->jb, misc, "pass", jb_i64(&k->jb, f->pass));
	jb_put(&k->jb, misc, "metric", text(k, f->name));
	jb_put(&k->jb, misc, "unit", text(k, f->unit));
	jb_put(&k->jb, misc, "better", text(k, f->better));
	if (!measured && !first)
		jb_put(&k->jb, misc, "unavailable", text(k, why));
	else if (!measured)
		jb_put(&k->jb, misc, "unavailable_as", text(k, first));
	if (rc->emulated && report_metric_time_based(f->name, f->unit))
		jb_put(&k->jb, misc, "emulated", json_object_new_boolean(true));
	jb_put(&k->jb, t, "misc", misc);
	jb_push_some(&k->jb, c->tests, t);
}

/* A repetition's figure's test: snapbench.SCENARIO.WINDOW.pass.N.FIELD, over the pass (postcopy, uffd-restore: the window). */
static void figure_test(const struct export_rep_figure *fig, void *userdata)
{
	const struct figure_test f = {
		.window = fig->window, .name = fig->name, .unit = fig->unit, .value = fig->value,
		.why = fig->unavailable, .start_s = fig->start_s, .duration_s = fig->duration_s, .pass = fig->pass,
	};

	add_figure_test(userdata, &f);
}

static void add_window_tests(struct run_ctx *c, struct json_object *rep, long long index, struct json_object *build_id,
			     struct json_object *env, double started)
{
	struct json_object *windows = json_lookup(rep, "windows");
	struct report_timing timing;
	report_timing_of(c->report, json_lookup_string(rep, "arm"), &timing);
	const struct rep_ctx rc = { .c = c, .rep = rep, .build_id = build_id, .env = env, .index = index,
				    .started = started, .emulated = timing.emulated };
	const char *report_windows[EXPORT_REPORT_WINDOWS];

	export_report_windows(c->report, report_windows);
	for (size_t w = 0; w < EXPORT_REPORT_WINDOWS; w++) {
		struct json_object *win = json_lookup(windows, report_windows[w]);
		struct json_object *metrics = json_lookup(win, "metrics");
		struct json_object *unavailable = json_lookup(win, "unavailable");
		struct json_object *start_s = json_lookup(win, "start_s"), *duration_s = json_lookup(win, "duration_s");

		if (!json_object_is_type(metrics, json_type_object))
			continue;
		json_object_object_foreach(metrics, name, value) {
			const struct figure_test f = {
				.window = report_windows[w], .name = name, .unit = export_metric_unit(c->report, name),
				.better = json_lookup_string(json_lookup(json_lookup(c->report, "metric_info"), name),
							     "better"),
				.value = value && json_is_number(value) ? json_object_get_double(value) : NAN,
				.why = json_lookup_string(unavailable, name),
				.start_s = start_s && json_is_number(start_s) ? json_object_get_double(start_s) : NAN,
				.duration_s = duration_s && json_is_number(duration_s) ? json_object_get_double(duration_s)
										       : NAN,
				.pass = -1,
			};
			add_figure_test(&rc, &f);
		}
		export_rep_figures(c->report, rep, report_windows[w], figure_test, (void *)&rc);
	}
}

static void add_repetition(struct run_ctx *c, struct json_object *rep)
{
	struct kcidb *k = c->k;
	const char *arm = json_lookup_string(rep, "arm"), *state = json_lookup_string(rep, "state");
	struct json_object *error = json_lookup(rep, "error");
	long long index = (long long)json_object_get_int64(json_lookup(rep, "index"));
	double started = timestamp_parse(json_lookup_string(rep, "started"));
	double finished = timestamp_parse(json_lookup_string(rep, "finished"));
	struct json_object *t = jb_obj(&k->jb), *misc = jb_obj(&k->jb);
	_cleanup_json_ struct json_object *build_id = id_new(k, "%s/%s", c->id, arm ? arm : "");
	_cleanup_json_ struct json_object *env = environment_new(k, c->report, arm);

	jb_put(&k->jb, t, "id", id_new(k, "%s/%lld", c->id, index));
	jb_put(&k->jb, t, "build_id", json_object_get(build_id));
	jb_put(&k->jb, t, "origin", text(k, k->origin));
	jb_put(&k->jb, t, "path", path_new(k, c->scenario, NULL, NULL, NULL));
	jb_put(&k->jb, t, "status", text(k, repetition_status(state)));
	jb_put(&k->jb, t, "log_excerpt", text(k, json_lookup_string(error, "message")));
	jb_put(&k->jb, t, "start_time", timestamp_new(k, started));
	if (finished >= started)
		jb_put(&k->jb, t, "duration", num(k, finished - started));
	jb_put(&k->jb, t, "environment", json_object_get(env));
	jb_put(&k->jb, misc, "run", text(k, c->id));
	jb_put(&k->jb, misc, "arm", text(k, arm));
	jb_put(&k->jb, misc, "repetition", jb_i64(&k->jb, index));
	jb_put(&k->jb, misc, "state", text(k, state));
	jb_put(&k->jb, misc, "error", copy(k, error, COPY_DEPTH));
	jb_put(&k->jb, t, "misc", misc);
	jb_push_some(&k->jb, c->tests, t);
	add_window_tests(c, rep, index, build_id, env, isfinite(started) ? started : NAN);
}

/* Whether label is among the first n entries of labels. */
static bool seen(const char **labels, size_t n, const char *label)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(labels[i], label))
			return true;
	return false;
}

int export_report_kcidb(struct json_object *report, const char *origin, char **ret, struct sb_error *err)
{
	_cleanup_(kcidb_done) struct kcidb k = { .origin = origin };
	struct json_object *reps, *arms = json_lookup(report, "arms");
	_cleanup_json_ struct json_object *doc = NULL;
	_cleanup_free_ const char **labels = NULL;
	size_t n_labels = 0, n_arms, n_reps;
	const char *id;
	int r = export_report_parts(report, &id, &reps, err);

	if (r < 0)
		return r;
	if (!export_kcidb_origin_valid(origin))
		return sb_error_set(err, -EINVAL, "KCIDB origin \"%s\": use lowercase letters, digits and '_' "
				    "(e.g. snapbench)", origin ? origin : "");
	struct run_ctx c = { .k = &k, .report = report, .id = id,
			     .scenario = json_lookup_string(json_lookup(report, "spec"), "scenario") };

	doc = document_new(&k);
	c.tests = json_lookup(doc, "tests");
	/* one checkout and build per arm: those of arms[], then any a repetition names that arms[] does not */
	n_arms = json_object_is_type(arms, json_type_array) ? json_object_array_length(arms) : 0;
	n_reps = reps ? json_object_array_length(reps) : 0;
	labels = calloc(n_arms + n_reps + 1, sizeof(*labels));
	if (!labels)
		return sb_error_set(err, -ENOMEM, "out of memory writing the KCIDB JSON of run %s", id);
	for (size_t i = 0; i < n_arms + n_reps; i++) {
		struct json_object *o = i < n_arms ? json_object_array_get_idx(arms, i)
						   : json_object_array_get_idx(reps, i - n_arms);
		const char *label = json_lookup_string(o, i < n_arms ? "label" : "arm");
		if (label && !seen(labels, n_labels, label))
			labels[n_labels++] = label;
	}
	for (size_t i = 0; i < n_labels; i++) {
		_cleanup_free_ char *key = NULL, *comment = NULL;
		struct json_object *misc = jb_obj(&k.jb);

		if (asprintf(&key, "%s/%s", id, labels[i]) < 0 ||
		    asprintf(&comment, "the kernel of arm \"%s\" in snapbench run %s", labels[i], id) < 0) {
			json_object_put(misc);
			return sb_error_set(err, -ENOMEM, "out of memory writing the KCIDB JSON of run %s", id);
		}
		jb_put(&k.jb, misc, "run", text(&k, id));
		jb_put(&k.jb, misc, "arm", text(&k, labels[i]));
		jb_put(&k.jb, misc, "knobs", copy(&k, json_lookup(report_arm(report, labels[i]), "knobs"), COPY_DEPTH));
		struct report_timing timing;
		report_timing_of(report, labels[i], &timing);
		jb_put(&k.jb, misc, "timing", text(&k, timing.emulated ? "emulated" : "native"));
		jb_put(&k.jb, misc, "host", copy(&k, json_lookup(report, "host"), COPY_DEPTH));
		add_build(&k, doc, key, report, labels[i], comment, misc);
	}
	for (size_t i = 0; i < n_reps; i++)
		add_repetition(&c, json_object_array_get_idx(reps, i));
	if (document_text(&k, doc, ret) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory writing the KCIDB JSON of run %s", id);
	return 0;
}

/* ---- a comparison ---- */

/* A verdict as a KCIDB status: regressed FAIL; insufficient-data SKIP (no verdict: too few
 * repetitions); improved, no-change and changed PASS. */
static const char *verdict_status(enum compare_verdict v)
{
	switch (v) {
	case COMPARE_REGRESSED:
		return "FAIL";
	case COMPARE_INSUFFICIENT_DATA:
		return "SKIP";
	default:
		return "PASS";
	}
}

/* A side's key: its run ids joined with '+', '/', its label. */
static char *side_key(const struct compare_side *s)
{
	_cleanup_strbuf_ struct strbuf b = {};

	for (size_t i = 0; i < s->n_reports; i++)
		strbuf_appendf(&b, "%s%s", i ? "+" : "", s->reports[i]->id);
	strbuf_appendf(&b, "/%s", s->label ? s->label : "");
	return strbuf_steal(&b);
}

static struct json_object *side_misc(struct kcidb *k, const struct compare_side *s)
{
	struct json_object *misc = jb_obj(&k->jb), *runs = jb_arr(&k->jb);

	jb_put(&k->jb, misc, "role", text(k, s->role));
	jb_put(&k->jb, misc, "label", text(k, s->label));
	jb_put(&k->jb, misc, "selector", text(k, s->selector));
	for (size_t i = 0; i < s->n_reports; i++)
		jb_push_some(&k->jb, runs, text(k, s->reports[i]->id));
	jb_put(&k->jb, misc, "runs", runs);
	jb_put(&k->jb, misc, "repetitions", jb_i64(&k->jb, (int64_t)s->n_reps));
	return misc;
}

static struct json_object *arm_stats(struct kcidb *k, const struct compare_side *s, const struct compare_arm_stats *a)
{
	struct json_object *o = jb_obj(&k->jb);

	jb_put(&k->jb, o, "label", text(k, s->label));
	jb_put(&k->jb, o, "n", jb_i64(&k->jb, (int64_t)a->n));
	jb_put(&k->jb, o, "missing", jb_i64(&k->jb, (int64_t)a->n_missing));
	jb_put(&k->jb, o, "median", num(k, a->s.median));
	jb_put(&k->jb, o, "min", num(k, a->s.min));
	jb_put(&k->jb, o, "max", num(k, a->s.max));
	jb_put(&k->jb, o, "mean", num(k, a->s.mean));
	jb_put(&k->jb, o, "stddev", num(k, a->s.stddev));
	return o;
}

struct compare_ctx {
	struct kcidb *k;
	const struct compare_result *r;
	struct json_object *tests, *build_id, *env;
	const char *prefix, *scenario; /* "compare/BASEKEY..PATCHKEY" or "aa-SPLIT/KEY" */
	double start, end;             /* the patched side's first repetition start and last end */
};

/* A test of the comparison: id ORIGIN:PREFIX[/WINDOW/METRIC], path snapbench.SCENARIO.compare[.WINDOW.METRIC];
 * takes misc. */
static struct json_object *compare_test(struct compare_ctx *c, const char *window, const char *metric,
					const char *status, struct json_object *misc)
{
	struct kcidb *k = c->k;
	struct json_object *t = jb_obj(&k->jb);

	if (window)
		jb_put(&k->jb, t, "id", id_new(k, "%s/%s/%s", c->prefix, window, metric));
	else
		jb_put(&k->jb, t, "id", id_new(k, "%s", c->prefix));
	jb_put(&k->jb, t, "build_id", json_object_get(c->build_id));
	jb_put(&k->jb, t, "origin", text(k, k->origin));
	jb_put(&k->jb, t, "path", path_new(k, c->scenario, "compare", window, metric));
	jb_put(&k->jb, t, "status", text(k, status));
	jb_put(&k->jb, t, "start_time", timestamp_new(k, c->start));
	if (c->end >= c->start)
		jb_put(&k->jb, t, "duration", num(k, c->end - c->start));
	if (!window) /* the comparison's test holds the environment; its metrics' tests refer to it by their build */
		jb_put(&k->jb, t, "environment", json_object_get(c->env));
	jb_put(&k->jb, t, "misc", misc);
	return t; /* the caller adds its fields and push()es it */
}

static void add_metric_test(struct compare_ctx *c, const struct compare_metric *m)
{
	struct kcidb *k = c->k;
	const struct compare_result *r = c->r;
	struct json_object *misc = jb_obj(&k->jb), *notes = jb_arr(&k->jb);

	jb_put(&k->jb, misc, "window", text(k, m->window));
	jb_put(&k->jb, misc, "metric", text(k, m->name));
	jb_put(&k->jb, misc, "unit", text(k, m->unit));
	jb_put(&k->jb, misc, "better", text(k, compare_better_name(m->better)));
	jb_put(&k->jb, misc, "verdict", text(k, compare_verdict_name(m->verdict)));
	jb_put(&k->jb, misc, "emulated", json_object_new_boolean(m->emulated));
	jb_put(&k->jb, misc, r->side[0]->role, arm_stats(k, r->side[0], &m->arm[0]));
	jb_put(&k->jb, misc, r->side[1]->role, arm_stats(k, r->side[1], &m->arm[1]));
	jb_put(&k->jb, misc, "ratio", num(k, m->ratio));
	jb_put(&k->jb, misc, "pct_change", num(k, m->pct_change));
	jb_put(&k->jb, misc, "from_zero", jb_check(&k->jb, json_object_new_boolean(m->from_zero)));
	jb_put(&k->jb, misc, "p", num(k, m->mwu.p));
	jb_put(&k->jb, misc, "alpha", num(k, r->opts.alpha));
	jb_put(&k->jb, misc, "threshold_pct", num(k, m->threshold_pct));
	for (size_t i = 0; m->notes && m->notes[i]; i++)
		jb_push_some(&k->jb, notes, text(k, m->notes[i]));
	jb_put(&k->jb, misc, "notes", notes);
	struct json_object *t = compare_test(c, m->window, m->name, verdict_status(m->verdict), misc);
	if (isfinite(m->pct_change) && !m->from_zero) {
		struct json_object *number = jb_obj(&k->jb);
		jb_put(&k->jb, number, "value", num(k, m->pct_change));
		jb_put(&k->jb, number, "unit", text(k, "%"));
		jb_put(&k->jb, t, "number", number);
	}
	if (m->verdict == COMPARE_INSUFFICIENT_DATA)
		jb_put(&k->jb, t, "comment", text(k, "insufficient-data: too few repetitions for a verdict"));
	jb_push_some(&k->jb, c->tests, t);
}

/* The first start and the last end of a side's repetitions. */
static void side_span(const struct compare_side *side, double *start, double *end)
{
	*start = NAN;
	*end = NAN;
	for (size_t i = 0; i < side->n_reps; i++) {
		struct json_object *rep = side->reps[i].rep;
		double a = timestamp_parse(json_lookup_string(rep, "started"));
		double b = timestamp_parse(json_lookup_string(rep, "finished"));
		if (isfinite(a) && !(a >= *start))
			*start = a;
		if (isfinite(b) && !(b <= *end))
			*end = b;
	}
}

char *export_compare_kcidb(const struct compare_result *r, const char *origin)
{
	_cleanup_(kcidb_done) struct kcidb k = { .origin = origin };
	_cleanup_json_ struct json_object *doc = NULL, *build_id = NULL, *env = NULL;
	_cleanup_free_ char *base_key = NULL, *patched_key = NULL, *prefix = NULL;
	char *keys[2];
	struct json_object *report[2];
	char *text_out = NULL;

	if (!export_kcidb_origin_valid(origin))
		return NULL;
	keys[0] = base_key = side_key(r->side[0]);
	keys[1] = patched_key = side_key(r->side[1]);
	if (!base_key || !patched_key)
		return NULL;
	for (size_t s = 0; s < 2; s++)
		report[s] = r->side[s]->n_reports ? r->side[s]->reports[0]->root : NULL;
	doc = document_new(&k);
	for (size_t s = 0; s < 2; s++) {
		_cleanup_free_ char *comment = NULL;

		if (s == 1 && !strcmp(keys[0], keys[1]))
			break; /* A/A: one build */
		if (asprintf(&comment, "the kernel of the %s side (arm \"%s\") of a snapbench comparison",
			     r->side[s]->role, r->side[s]->label ? r->side[s]->label : "") < 0)
			return NULL;
		add_build(&k, doc, keys[s], report[s], r->side[s]->label, comment, side_misc(&k, r->side[s]));
	}
	if (r->opts.aa)
		k.jb.oom |= asprintf(&prefix, "aa-%s/%s", r->opts.aa_split == COMPARE_AA_HALVES ? "halves" : "alternate",
				  keys[1]) < 0;
	else
		k.jb.oom |= asprintf(&prefix, "compare/%s..%s", keys[0], keys[1]) < 0;
	if (k.jb.oom) {
		prefix = NULL;
		return NULL;
	}
	build_id = id_new(&k, "%s", keys[1]);
	env = environment_new(&k, report[1], r->side[1]->label);
	struct compare_ctx c = { .k = &k, .r = r, .tests = json_lookup(doc, "tests"), .build_id = build_id,
				 .env = env, .prefix = prefix,
				 .scenario = json_lookup_string(json_lookup(report[1], "spec"), "scenario") };
	side_span(r->side[1], &c.start, &c.end);

	struct json_object *misc = jb_obj(&k.jb);
	jb_put(&k.jb, misc, "mode", text(&k, r->opts.aa ? "aa" : "compare"));
	jb_put(&k.jb, misc, "verdict", text(&k, compare_verdict_name(r->verdict)));
	jb_put(&k.jb, misc, "exit_code", jb_i64(&k.jb, r->exit_code));
	jb_put(&k.jb, misc, "alpha", num(&k, r->opts.alpha));
	jb_put(&k.jb, misc, "threshold_pct", num(&k, r->opts.threshold_pct));
	jb_put(&k.jb, misc, r->side[0]->role, side_misc(&k, r->side[0]));
	jb_put(&k.jb, misc, r->side[1]->role, side_misc(&k, r->side[1]));
	jb_push_some(&k.jb, c.tests, compare_test(&c, NULL, NULL, r->exit_code == COMPARE_EXIT_REGRESSION ? "FAIL" : "PASS", misc));
	for (size_t i = 0; i < r->n_metrics; i++)
		add_metric_test(&c, &r->metrics[i]);
	for (size_t i = 0; i < r->n_skipped; i++) {
		const struct compare_skipped *sk = &r->skipped[i];
		struct json_object *m = jb_obj(&k.jb);

		jb_put(&k.jb, m, "window", text(&k, sk->window));
		jb_put(&k.jb, m, "metric", text(&k, sk->name));
		jb_put(&k.jb, m, "verdict", text(&k, "not-compared"));
		jb_put(&k.jb, m, "reason", text(&k, sk->reason));
		struct json_object *t = compare_test(&c, sk->window, sk->name, "SKIP", m);
		jb_put(&k.jb, t, "comment", text(&k, sk->reason));
		jb_push_some(&k.jb, c.tests, t);
	}
	if (document_text(&k, doc, &text_out) < 0)
		return NULL;
	return text_out;
}
