// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench import-lava --partial: when the log holds no good report but
 * the job's test cases (snapbench-lava-run's repN.WINDOW.METRIC
 * measurements, a test set per arm), the run they give, as a partial
 * report (state failed, each window's metrics the cases' measurements,
 * the rest null) written into the store (docs/lava.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "exit-codes.h"
#include "import-lava.h"
#include "json-number.h"
#include "json-util.h"
#include "macro.h"
#include "mkdir-p.h"
#include "report.h"
#include "sha256.h"
#include "verb-args.h"

#define PARTIAL_MAX_REPS 4096

/* One repetition the test cases name: repN of a test set (its arm). */
struct prep {
	int64_t index;
	const char *arm;
	struct json_object *windows; /* {WINDOW: {start_s, duration_s, metrics, unavailable}} */
	bool passed, failed;     /* a case of it passed, failed */
};

struct partial {
	struct prep reps[PARTIAL_MAX_REPS];
	size_t n_reps;
	struct json_object *metric_info;
	const char *preflight, *run; /* their cases' results */
	size_t n_cases;          /* snapbench-lava-run's cases among the log's */
};

static void partial_done(struct partial *p)
{
	for (size_t i = 0; i < p->n_reps; i++)
		json_object_put(p->reps[i].windows);
	json_object_put(p->metric_info);
}

static bool made_of(const char *s, size_t n, const char *first, const char *rest)
{
	if (!n || !strchr(first, s[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!s[i] || !strchr(rest, s[i]))
			return false;
	return true;
}

#define LOWER "abcdefghijklmnopqrstuvwxyz"
#define UPPER "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define DIGIT "0123456789"

/* A test set's name as an arm label: [A-Za-z0-9][A-Za-z0-9._+-]{0,63} (docs/running.md). */
static bool label_valid(const char *s)
{
	size_t n = strlen(s);

	return n <= 64 && made_of(s, n, UPPER LOWER DIGIT, UPPER LOWER DIGIT "._+-");
}

/* A metric name: [a-z][a-z0-9_]* with an optional .CAUSE ([A-Za-z0-9_-]+). */
static bool metric_valid(const char *s)
{
	const char *dot = strchr(s, '.');
	size_t n = dot ? (size_t)(dot - s) : strlen(s);

	if (n > 128 || !made_of(s, n, LOWER, LOWER DIGIT "_"))
		return false;
	return !dot || (strlen(dot + 1) <= 128 && made_of(dot + 1, strlen(dot + 1), UPPER LOWER DIGIT "_-",
							  UPPER LOWER DIGIT "_-"));
}

static bool window_valid(const char *w, size_t n)
{
	static const char *const windows[] = { "pre", "snapshot", "migration", "steady", "fault-in", "post" };

	for (size_t i = 0; i < ARRAY_SIZE(windows); i++)
		if (strlen(windows[i]) == n && !strncmp(w, windows[i], n))
			return true;
	return false;
}

/* "repN.WINDOW.METRIC": true with its parts, false when the case is not one (another test case). */
static bool case_name_split(const char *name, int64_t *index, char *window, size_t wsize, const char **metric)
{
	const char *p = name + 3, *dot;
	char *end = NULL;

	if (strncmp(name, "rep", 3) || !(*p >= '0' && *p <= '9') || (*p == '0' && p[1] != '.'))
		return false;
	errno = 0;
	unsigned long long n = strtoull(p, &end, 10);
	if (errno || *end != '.' || n > INT32_MAX) /* more repetitions than a report holds: prep_get() says so */
		return false;
	p = end + 1;
	dot = strchr(p, '.');
	if (!dot || !window_valid(p, (size_t)(dot - p)) || (size_t)(dot - p) >= wsize)
		return false;
	snprintf(window, wsize, "%.*s", (int)(dot - p), p);
	*index = (int64_t)n;
	*metric = dot + 1;
	return true;
}

/* The JSON number grammar (RFC 8259), which a measurement is written in to be kept as written. */
static bool json_number_text(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return false;
	if (*s == '.') {
		if (!(*++s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return !*s;
}

/* The measurement as a JSON number, written as the test case wrote it; NULL (and *ok false) when it is none. */
static struct json_object *measurement_value(const char *m, bool *ok)
{
	char *end = NULL;
	double v;

	*ok = false;
	if (!m || !*m)
		return NULL;
	errno = 0;
	v = strtod(m, &end);
	if (errno || *end || !isfinite(v))
		return NULL;
	*ok = true;
	return json_number_text(m) ? json_object_new_double_s(v, m) : json_number_new(v);
}

/* The metric table's entry for name (a family metric by its base), or NULL. */
static const struct report_metric_def *metric_def(const char *name)
{
	const char *dot = strchr(name, '.');
	size_t n, len = dot ? (size_t)(dot - name) : strlen(name);
	const struct report_metric_def *defs = report_metric_defs(&n);

	for (size_t i = 0; i < n; i++)
		if (strlen(defs[i].name) == len && !strncmp(defs[i].name, name, len) && (!dot) == !defs[i].family)
			return &defs[i];
	return NULL;
}

static struct prep *prep_get(struct partial *p, int64_t index, const char *arm, const struct lava_case *c,
			     const char *log, struct sb_error *err)
{
	for (size_t i = 0; i < p->n_reps; i++)
		if (p->reps[i].index == index) {
			if (strcmp(p->reps[i].arm, arm))
				return sb_error_set(err, -EBADMSG, "%s:%zu: test case %s of test set %s: repetition %" PRId64
						    " is in test set %s too", log, c->line, c->name, arm, index,
						    p->reps[i].arm), NULL;
			return &p->reps[i];
		}
	if (p->n_reps >= PARTIAL_MAX_REPS)
		return sb_error_set(err, -E2BIG, "%s: more than %d repetitions", log, PARTIAL_MAX_REPS), NULL;
	struct prep *r = &p->reps[p->n_reps];
	*r = (struct prep){ .index = index, .arm = arm, .windows = json_object_new_object() };
	if (!r->windows)
		return sb_error_set(err, -ENOMEM, "out of memory"), NULL;
	p->n_reps++;
	return r;
}

/* A passed or failed case's measurement, a number in the metric's units, into *ret (a new reference). */
static int case_value(const struct partial *p, const struct lava_case *c, const char *metric, const char *log,
		      struct json_object **ret, struct sb_error *err)
{
	const struct report_metric_def *def;
	struct json_object *v, *info;
	bool ok;

	v = measurement_value(c->measurement, &ok);
	if (!ok)
		return sb_error_set(err, -EBADMSG, "%s:%zu: test case %s: result %s with %s%s: give a "
				    "number (--measurement)", log, c->line, c->name, c->result,
				    c->measurement ? "measurement " : "no measurement",
				    c->measurement ? c->measurement : "");
	if (!v)
		return sb_error_set(err, -ENOMEM, "out of memory");
	def = metric_def(metric);
	info = json_lookup(p->metric_info, metric);
	const char *unit = def ? def->unit : json_lookup_string(info, "unit");
	if (!c->units || (unit && strcmp(unit, c->units))) {
		json_object_put(v);
		return sb_error_set(err, -EBADMSG, "%s:%zu: test case %s: units %s, %s %s is in %s", log, c->line,
				    c->name, c->units ? c->units : "(none)", def ? "snapbench's metric" : "the metric",
				    metric, unit ? unit : "units (--units)");
	}
	*ret = v;
	return 0;
}

/* The report's metric_info of metric, from snapbench's table or, for one it does not know, the case's units. */
static int note_metric_info(struct partial *p, const struct lava_case *c, const char *metric, struct sb_error *err)
{
	const struct report_metric_def *def;
	struct json_object *info;

	if (json_lookup(p->metric_info, metric))
		return 0;
	def = metric_def(metric);
	info = json_object_new_object();
	if (!info)
		return sb_error_set(err, -ENOMEM, "out of memory");
	json_object_object_add(info, "unit", json_object_new_string(def ? def->unit : c->units ? c->units : ""));
	json_object_object_add(info, "better", json_object_new_string(def ? def->better : "none"));
	json_object_object_add(info, "description",
			       json_object_new_string(def ? def->description
							  : "a figure of the LAVA job's test cases that this "
							    "snapbench does not know"));
	json_object_object_add(p->metric_info, metric, info);
	return 0;
}

/* One repN.WINDOW.METRIC case into its repetition's window; -EBADMSG for what cannot go into a report. */
static int partial_case(struct partial *p, const struct lava_case *c, int64_t index, const char *window,
			const char *metric, const char *log, struct sb_error *err)
{
	struct json_object *w, *v = NULL;
	bool skip = !strcmp(c->result, "skip");

	if (!c->set || !label_valid(c->set))
		return sb_error_set(err, -EBADMSG, "%s:%zu: test case %s is %s: give each arm's cases a test set named "
				    "after its label (lava-test-set start LABEL)", log, c->line, c->name,
				    c->set ? "in a test set whose name is no arm label" : "outside any test set");
	if (!metric_valid(metric))
		return sb_error_set(err, -EBADMSG, "%s:%zu: test case %s: %s is not a metric name", log, c->line, c->name,
				    metric);
	if (!skip && strcmp(c->result, "pass") && strcmp(c->result, "fail"))
		return sb_error_set(err, -EBADMSG, "%s:%zu: test case %s: result %s (snapbench-lava-run gives pass, "
				    "fail or skip)", log, c->line, c->name, c->result);
	if (!skip) {
		int r = case_value(p, c, metric, log, &v, err);
		if (r < 0)
			return r;
	}
	struct prep *r = prep_get(p, index, c->set, c, log, err);
	if (!r) {
		json_object_put(v);
		return err->code ? err->code : -ENOMEM;
	}
	if (!(w = json_lookup(r->windows, window))) {
		w = json_object_new_object();
		if (!w) {
			json_object_put(v);
			return sb_error_set(err, -ENOMEM, "out of memory");
		}
		json_object_object_add(w, "start_s", NULL);
		json_object_object_add(w, "duration_s", NULL);
		json_object_object_add(w, "metrics", json_object_new_object());
		json_object_object_add(w, "unavailable", json_object_new_object());
		json_object_object_add(r->windows, window, w);
	}
	if (json_object_object_get_ex(json_lookup(w, "metrics"), metric, NULL)) {
		json_object_put(v);
		return sb_error_set(err, -EBADMSG, "%s:%zu: test case %s of test set %s twice", log, c->line, c->name,
				    c->set);
	}
	json_object_object_add(json_lookup(w, "metrics"), metric, v); /* null when skipped */
	if (skip)
		json_object_object_add(json_lookup(w, "unavailable"), metric,
				       json_object_new_string("skipped on the DUT (LAVA test case result skip); why did "
							      "not come back with the report"));
	else if (!strcmp(c->result, "pass"))
		r->passed = true;
	else
		r->failed = true;
	return note_metric_info(p, c, metric, err);
}

static int cmp_prep(const void *a, const void *b)
{
	const struct prep *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* {n, median, min, max, values} of values (JSON numbers, in repetition order). */
static struct json_object *stat_new(struct json_object *values)
{
	struct json_object *o = json_object_new_object();
	size_t n = json_object_array_length(values);
	_cleanup_free_ double *s = malloc((n ? n : 1) * sizeof(*s));

	if (!o || !s) {
		json_object_put(o);
		json_object_put(values);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		s[i] = json_object_get_double(json_object_array_get_idx(values, i));
	qsort(s, n, sizeof(*s), cmp_double);
	json_object_object_add(o, "n", json_object_new_int64((int64_t)n));
	json_object_object_add(o, "median", n ? json_number_new(n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0) : NULL);
	json_object_object_add(o, "min", n ? json_number_new(s[0]) : NULL);
	json_object_object_add(o, "max", n ? json_number_new(s[n - 1]) : NULL);
	json_object_object_add(o, "values", values);
	return o;
}

/* The arm's window statistics over its completed repetitions, as the run engine gives them. */
static struct json_object *arm_windows(const struct partial *p, const char *arm)
{
	struct json_object *windows = json_object_new_object();

	for (size_t i = 0; windows && i < p->n_reps; i++) {
		if (strcmp(p->reps[i].arm, arm))
			continue;
		json_object_object_foreach(p->reps[i].windows, wname, w) {
			json_object_object_foreach(json_lookup(w, "metrics"), metric, unused) {
				(void)unused;
				struct json_object *aw = json_lookup(windows, wname);
				if (!aw) {
					aw = json_object_new_object();
					json_object_object_add(windows, wname, aw);
				}
				if (!aw || json_lookup(aw, metric))
					continue;
				struct json_object *values = json_object_new_array();
				for (size_t j = 0; values && j < p->n_reps; j++) {
					struct json_object *v = json_lookup(json_lookup(json_lookup(p->reps[j].windows, wname),
											"metrics"), metric);
					if (!strcmp(p->reps[j].arm, arm) && p->reps[j].passed && !p->reps[j].failed && v)
						json_object_array_add(values, json_object_get(v));
				}
				json_object_object_add(aw, metric, values ? stat_new(values) : NULL);
			}
		}
	}
	return windows;
}

/* The report's arms: each arm's repetitions counted and its windows' statistics. */
static void partial_arms(const struct partial *pt, struct json_object *arms)
{
	for (size_t i = 0; i < pt->n_reps; i++) {
		const struct prep *r = &pt->reps[i];
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(pt->reps[j].arm, r->arm);
		if (seen)
			continue;
		struct json_object *arm = json_object_new_object(), *counts = json_object_new_object();
		int64_t total = 0, completed = 0, failed = 0;
		for (size_t j = 0; j < pt->n_reps; j++)
			if (!strcmp(pt->reps[j].arm, r->arm)) {
				total++;
				completed += pt->reps[j].passed && !pt->reps[j].failed;
			}
		failed = total - completed;
		json_object_object_add(counts, "total", json_object_new_int64(total));
		json_object_object_add(counts, "completed", json_object_new_int64(completed));
		json_object_object_add(counts, "failed", json_object_new_int64(failed));
		json_object_object_add(arm, "label", json_object_new_string(r->arm));
		json_object_object_add(arm, "knobs", NULL);
		json_object_object_add(arm, "repetitions", counts);
		json_object_object_add(arm, "windows", arm_windows(pt, r->arm));
		json_object_array_add(arms, arm);
	}
}

/* The report's repetitions: what came back of each (its windows), and its state. */
static void partial_reps(const struct partial *pt, struct json_object *reps)
{
	for (size_t i = 0; i < pt->n_reps; i++) {
		const struct prep *r = &pt->reps[i];
		struct json_object *rep = json_object_new_object(), *rerr = NULL;
		bool completed = r->passed && !r->failed;
		if (!completed) {
			rerr = json_object_new_object();
			json_object_object_add(rerr, "message", json_object_new_string(
				r->failed ? "failed on the DUT (a LAVA test case of it has result fail); why did not come "
					    "back with the report"
					  : "its state did not come back: each LAVA test case of it was skipped"));
			json_object_object_add(rerr, "phase", json_object_new_string("lava"));
		}
		json_object_object_add(rep, "index", json_object_new_int64(r->index));
		json_object_object_add(rep, "arm", json_object_new_string(r->arm));
		json_object_object_add(rep, "state", json_object_new_string(completed ? "completed" : "failed"));
		json_object_object_add(rep, "error", rerr);
		const char *const unknown[] = { "started", "finished", "vm", "guest", "snapshot" };
		for (size_t k = 0; k < ARRAY_SIZE(unknown); k++)
			json_object_object_add(rep, unknown[k], NULL);
		json_object_object_add(rep, "windows", json_object_get(r->windows));
		json_object_object_add(rep, "timeline", json_object_new_array());
		json_object_object_add(rep, "totals", json_object_new_object());
		json_object_array_add(reps, rep);
	}
}

/* The partial report's text. reason: why there is no report (the import's error). */
static char *partial_report(const struct partial *pt, const struct lava_cases *c, const char *id, const char *reason)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();
	struct json_object *err = json_object_new_object(), *marker = json_object_new_object();
	struct json_object *arms = json_object_new_array(), *reps = json_object_new_array();
	_cleanup_free_ char *msg = NULL;
	const char *text;

	if (!o || !err || !marker || !arms || !reps ||
	    asprintf(&msg, "rebuilt from the LAVA job's test cases: the report did not come back (%s%s%s)", reason,
		     c->job_error_msg ? "; the LAVA job: " : "", c->job_error_msg ? c->job_error_msg : "") < 0) {
		json_object_put(err);
		json_object_put(marker);
		json_object_put(arms);
		json_object_put(reps);
		msg = NULL;
		return NULL;
	}
	json_object_object_add(err, "message", json_object_new_string(msg));
	json_object_object_add(err, "phase", json_object_new_string("lava"));
	json_object_object_add(marker, "source", json_object_new_string("lava"));
	json_object_object_add(marker, "reason", json_object_new_string(reason));
	json_object_object_add(marker, "job_result", import_lava_string_or_null(c->job_result));
	json_object_object_add(marker, "job_error", import_lava_string_or_null(c->job_error_msg));
	json_object_object_add(marker, "preflight", import_lava_string_or_null(pt->preflight));
	json_object_object_add(marker, "run", import_lava_string_or_null(pt->run));
	json_object_object_add(marker, "test_cases", json_object_new_int64((int64_t)pt->n_cases));
	json_object_object_add(marker, "unreadable_records", json_object_new_int64((int64_t)c->n_unreadable));

	partial_arms(pt, arms);
	partial_reps(pt, reps);
	json_object_object_add(o, "schema", json_object_new_string("snapbench.run/1"));
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "state", json_object_new_string("failed"));
	json_object_object_add(o, "error", err);
	json_object_object_add(o, "partial", marker);
	const char *const unknown[] = { "created", "started", "finished", "spec", "host" };
	for (size_t k = 0; k < ARRAY_SIZE(unknown); k++)
		json_object_object_add(o, unknown[k], NULL);
	json_object_object_add(o, "probes", json_object_new_object());
	json_object_object_add(o, "metric_info", json_object_get(pt->metric_info));
	json_object_object_add(o, "arms", arms);
	json_object_object_add(o, "repetitions", reps);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							 JSON_C_TO_STRING_NOSLASHESCAPE);
	char *out = NULL;
	return text && asprintf(&out, "%s\n", text) >= 0 ? out : NULL;
}

/* The test cases into pt: exit code on failure (said why), EXIT_OK. */
static int partial_collect(const struct import_lava_args *a, const struct lava_cases *c, struct partial *pt, const char *reason)
{
	struct sb_error err = { 0 };
	const char *definition = NULL;

	if (!(pt->metric_info = json_object_new_object())) {
		verb_error("out of memory");
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < c->n_cases; i++) {
		const struct lava_case *k = &c->cases[i];
		const char *metric;
		char window[16];
		int64_t index;
		bool rep = case_name_split(k->name, &index, window, sizeof(window), &metric);
		bool step = !k->set && (!strcmp(k->name, "preflight") || !strcmp(k->name, "run"));

		if (!rep && !step)
			continue; /* another test definition's, or another case */
		if (definition && strcmp(definition, k->definition)) {
			verb_error("%s: the test cases of test definitions %s and %s (line %zu): --partial rebuilds one run "
				"from one; nothing imported", a->log, definition, k->definition, k->line);
			return EXIT_USAGE;
		}
		definition = k->definition;
		pt->n_cases++;
		if (step) {
			*(strcmp(k->name, "run") ? &pt->preflight : &pt->run) = k->result;
			continue;
		}
		int r = partial_case(pt, k, index, window, metric, a->log, &err);
		if (r < 0) {
			verb_error("%s; nothing imported", err.msg);
			return r == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
		}
	}
	if (!pt->n_reps) {
		verb_error("%s; and it holds no test case of snapbench-lava-run's figures (repN.WINDOW.METRIC in a test "
			"set per arm, %zu test cases in all) to rebuild the run from; nothing imported", reason,
			c->n_cases);
		return EXIT_USAGE;
	}
	qsort(pt->reps, pt->n_reps, sizeof(pt->reps[0]), cmp_prep);
	return EXIT_OK;
}

/* The run's id: the one its report markers named, else a new one. */
static void partial_id(const struct lava_cases *c, char id[static REPORT_ID_MAX])
{
	if (c->begin_id && report_id_valid(c->begin_id)) {
		snprintf(id, REPORT_ID_MAX, "%s", c->begin_id);
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		report_new_id((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, id);
	}
}

/* What was imported: a line, or with --json an object. */
static int print_partial(const struct import_lava_args *a, const struct partial *pt, const struct lava_report *rp, const char *dest)
{
	const char *job = a->job ? a->job : rp->job, *dev = a->device ? a->device : rp->device;
	const char *type = a->device_type ? a->device_type : rp->device_type;
	int ret = EXIT_OK;

	if (a->json) {
		_cleanup_json_ struct json_object *o = json_object_new_object();
		struct sha256 s;
		char hex[65];
		sha256_init(&s);
		sha256_update(&s, rp->data, rp->len);
		sha256_hex(&s, hex);
		json_object_object_add(o, "id", json_object_new_string(rp->id));
		json_object_object_add(o, "bytes", json_object_new_int64((int64_t)rp->len));
		json_object_object_add(o, "sha256", json_object_new_string(hex));
		json_object_object_add(o, "job_id", import_lava_string_or_null(job));
		json_object_object_add(o, "device", import_lava_string_or_null(dev));
		json_object_object_add(o, "device_type", import_lava_string_or_null(type));
		json_object_object_add(o, "run_dir", json_object_new_string(dest));
		json_object_object_add(o, "partial", json_object_new_boolean(true));
		const char *line = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
									JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;
		if (line)
			printf("%s\n", line);
		else
			ret = EXIT_FAIL;
	} else {
		printf("imported a partial run %s (%zu repetitions rebuilt from %zu test cases: the report did not "
		       "come back) from LAVA job %s, device %s (%s) into %s\n", rp->id, pt->n_reps, pt->n_cases,
		       job ? job : "(unknown)", dev ? dev : "(unknown)", type ? type : "type unknown", dest);
	}
	if (fflush(stdout) != 0)
		ret = EXIT_FAIL;
	return ret;
}

int import_lava_partial(const struct import_lava_args *a, const char *text, size_t len, const char *reason)
{
	_cleanup_free_ struct partial *pt = calloc(1, sizeof(*pt));
	_cleanup_free_ char *data = NULL, *dest = NULL, *why = strdup(reason);
	struct lava_cases c = { 0 };
	struct sb_error err = { 0 };
	char id[REPORT_ID_MAX];
	struct stat st;
	int ret, r;

	if (!pt || !why) {
		verb_error("out of memory");
		return EXIT_FAIL;
	}
	r = lava_log_cases(a->log, text, len, &c, &err);
	if (r < 0) {
		verb_error("%s; nothing imported", err.msg);
		return r == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
	}
	ret = partial_collect(a, &c, pt, why);
	if (ret == EXIT_OK && c.n_begin_ids > 1) {
		verb_error("%s; its test cases cannot be told apart between the %zu runs its report markers name; "
			"nothing imported", why, c.n_begin_ids);
		ret = EXIT_USAGE;
	}
	if (ret == EXIT_OK) {
		partial_id(&c, id);
		if (!(data = partial_report(pt, &c, id, why)) || asprintf(&dest, "%s/%s", a->store, id) < 0) {
			dest = NULL;
			verb_error("out of memory");
			ret = EXIT_FAIL;
		}
	}
	if (ret == EXIT_OK && lstat(dest, &st) == 0) {
		verb_error("%s: run %s is already in the store (imported before?); nothing imported", dest, id);
		ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK && (r = mkdir_p(a->store, 0755)) < 0) {
		verb_error("--store %s: cannot create it: %s", a->store, strerror(-r));
		ret = EXIT_FAIL;
	}
	struct lava_report rp = { .id = id, .data = data, .len = data ? strlen(data) : 0,
				  .line = c.begin_line ? c.begin_line : c.n_cases ? c.cases[0].line : 0,
				  .job = c.begin_job, .device = c.begin_device, .device_type = c.begin_device_type };
	if (ret == EXIT_OK && import_lava_write_run(a, &rp, true, &err) < 0) {
		verb_error("%s; nothing imported", err.msg);
		ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK)
		ret = print_partial(a, pt, &rp, dest);
	partial_done(pt);
	lava_cases_done(&c);
	return ret;
}
