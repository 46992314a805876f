// SPDX-License-Identifier: GPL-2.0-or-later
/* Loading snapbench.run/1 reports for compare, bounded and checked. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare.h"
#include "compare-private.h"
#include "fileio.h"
#include "report.h"
#include "run-dir.h"

static void timeline_free(struct compare_timeline *t)
{
	free(t->t_s);
	free(t->dt_s);
	for (size_t c = 0; c < COMPARE_TIMELINE_COUNTERS; c++)
		free(t->counter[c]);
	free(t->window);
}

static void compare_report_free(struct compare_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_timelines; i++)
		timeline_free(&r->timelines[i]);
	free(r->timelines);
	json_object_put(r->root);
	free(r->path);
	free(r);
}

void compare_pool_done(struct compare_pool *pool)
{
	for (size_t i = 0; i < pool->n; i++)
		compare_report_free(pool->reports[i]);
	free(pool->reports);
	*pool = (struct compare_pool){ 0 };
}

void compare_pool_drop_last(struct compare_pool *pool)
{
	if (pool->n)
		compare_report_free(pool->reports[--pool->n]);
}

static int read_bounded(int fd, const char *path, size_t size, char **out, size_t *len, struct sb_error *err)
{
	/* a file that shrank while we read is parsed as it is; one that grew is read to the bound */
	int r = read_full_fd(fd, COMPARE_REPORT_MAX_BYTES, out, len);

	if (r == -EFBIG)
		return sb_error_set(err, -EFBIG, "%s: larger than the %u MiB compare reads", path,
				    COMPARE_REPORT_MAX_BYTES >> 20);
	if (r == -ENOMEM)
		return sb_error_set(err, -ENOMEM, "%s: out of memory reading %zu bytes", path, size);
	if (r < 0)
		return sb_error_set(err, r, "cannot read %s: %s", path, strerror(-r));
	return 0;
}

static int parse_json(const char *path, const char *text, size_t len, struct json_object **out,
		      struct sb_error *err)
{
	struct json_parse_info info;
	char what[80];

	if (report_text_not_json(text, len, what, sizeof(what)))
		return sb_error_set(err, -EINVAL, "%s: %s, not JSON; give a snapbench run report (a run "
				    "directory's report.json)", path, what);
	int r = json_parse_text(text, len, COMPARE_JSON_MAX_DEPTH, 0, out, &info);

	if (r == -ENOMEM)
		return sb_error_set(err, -ENOMEM, "%s: out of memory", path);
	if (r == -EMSGSIZE)
		return sb_error_set(err, -EFBIG, "%s: too large to parse", path);
	if (r == 0)
		return 0;
	switch (info.status) {
	case JSON_PARSE_TOO_DEEP:
		return sb_error_set(err, -EINVAL, "%s: JSON nested deeper than %d levels; not a run report", path,
				    COMPARE_JSON_MAX_DEPTH);
	case JSON_PARSE_TRUNCATED:
		return sb_error_set(err, -EINVAL, "%s: truncated JSON (the file ends mid-document); "
				    "is the run still being written?", path);
	case JSON_PARSE_TRAILING:
		return sb_error_set(err, -EINVAL, "%s: trailing data after the JSON document at byte %zu", path,
				    info.offset);
	default:
		return sb_error_set(err, -EINVAL, "%s: not JSON (%s near byte %zu); give a snapbench run report "
				    "(a run directory's report.json)", path, info.reason, info.offset);
	}
}

/* The fields compare reads, checked once so that later code can trust their types. */
static int check_report(const char *path, struct json_object *root, struct sb_error *err)
{
	struct json_object *v;
	const char *schema;

	if (!json_object_is_type(root, json_type_object))
		return sb_error_set(err, -EINVAL, "%s: not a snapbench run report (the JSON is not an object)", path);
	schema = json_lookup_string(root, "schema");
	if (!schema)
		return sb_error_set(err, -EINVAL, "%s: not a snapbench run report (no \"schema\" string; "
				    "expected \"%s\")", path, COMPARE_RUN_SCHEMA);
	if (strcmp(schema, COMPARE_RUN_SCHEMA)) {
		char s[80];
		text_sanitize(schema, s, sizeof(s));
		return sb_error_set(err, -EINVAL, "%s: schema is \"%s\", this snapbench reads \"%s\"%s", path, s,
				    COMPARE_RUN_SCHEMA,
				    !strncmp(schema, "snapbench.run/", 14) ? " (use the snapbench that wrote it)" : "");
	}
	static const struct {
		const char *key;
		enum json_type type;
	} top[] = {
		{ "id", json_type_string },          { "state", json_type_string },
		{ "spec", json_type_object },        { "metric_info", json_type_object },
		{ "arms", json_type_array },         { "repetitions", json_type_array },
	};
	/* a partial report (docs/report-format.md) may not know its spec */
	bool partial = json_object_is_type(json_lookup(root, "partial"), json_type_object);
	for (size_t i = 0; i < ARRAY_SIZE(top); i++) {
		v = json_lookup(root, top[i].key);
		if (partial && !strcmp(top[i].key, "spec") && json_object_object_get_ex(root, "spec", &v) && !v)
			continue;
		if (!v || !json_object_is_type(v, top[i].type))
			return sb_error_set(err, -EINVAL, "%s: \"%s\" is missing or not a%s %s", path, top[i].key,
					    top[i].type == json_type_object ? "n" : "",
					    json_type_to_name(top[i].type));
	}
	const char *id = json_lookup_string(root, "id");
	if (!*id || strchr(id, '/'))
		return sb_error_set(err, -EINVAL, "%s: \"id\" must be a non-empty run id without '/'", path);

	struct json_object *arms = json_lookup(root, "arms");
	size_t n = json_object_array_length(arms);
	for (size_t i = 0; i < n; i++) {
		struct json_object *a = json_object_array_get_idx(arms, i);
		if (!json_lookup_string(a, "label"))
			return sb_error_set(err, -EINVAL, "%s: arms[%zu].label is missing or not a string", path, i);
	}

	struct json_object *reps = json_lookup(root, "repetitions");
	n = json_object_array_length(reps);
	if (n > COMPARE_MAX_REPS)
		return sb_error_set(err, -E2BIG, "%s: %zu repetitions, more than compare handles (%d)", path, n,
				    COMPARE_MAX_REPS);
	for (size_t i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(reps, i);
		if (!json_lookup_string(r, "arm") || !json_lookup_string(r, "state"))
			return sb_error_set(err, -EINVAL, "%s: repetitions[%zu] needs \"arm\" and \"state\" strings",
					    path, i);
		v = json_lookup(r, "index");
		if (!v || !json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
			return sb_error_set(err, -EINVAL, "%s: repetitions[%zu].index is missing or not a "
					    "non-negative integer", path, i);
		v = json_lookup(r, "windows");
		if (v && !json_object_is_type(v, json_type_object))
			return sb_error_set(err, -EINVAL, "%s: repetitions[%zu].windows is not an object", path, i);
		if (!strcmp(json_lookup_string(r, "state"), "completed") && !v)
			return sb_error_set(err, -EINVAL, "%s: repetitions[%zu] completed but has no \"windows\"",
					    path, i);
		v = json_lookup(r, "timeline");
		if (v && !json_object_is_type(v, json_type_array))
			return sb_error_set(err, -EINVAL, "%s: repetitions[%zu].timeline is not an array", path, i);
	}
	return 0;
}

const char *const compare_timeline_counters[COMPARE_TIMELINE_COUNTERS] = {
	"kvm.pf_taken",
	"kvm.remote_tlb_flush",
	"bpf.invalidations",
};

/* action: the window the report's scenario acts in, report_scenario_window():
 * the timeline's clock starts there, whatever the scenario calls it */
static unsigned char window_code(const char *w, const char *action)
{
	if (!w)
		return COMPARE_W_OTHER;
	if (!strcmp(w, "warmup"))
		return COMPARE_W_WARMUP;
	if (!strcmp(w, "pre"))
		return COMPARE_W_PRE;
	if (!strcmp(w, action))
		return COMPARE_W_ACTION;
	if (!strcmp(w, "post"))
		return COMPARE_W_POST;
	return COMPARE_W_OTHER;
}

static double counter(struct json_object *row, const char *name)
{
	struct json_object *v = json_lookup(json_lookup(row, "counters"), name);

	return json_is_number(v) ? json_object_get_double(v) : NAN;
}

/* Whether the report's probes say counter name is unavailable (a PVM
 * host's kvm.pf_taken: read, but never moved): its rows are no series. */
static bool counter_unavailable(struct compare_report *rep, const char *name)
{
	struct json_object *a = json_lookup(json_lookup(json_lookup(rep->root, "probes"), name), "available");

	return a && json_object_is_type(a, json_type_boolean) && !json_object_get_boolean(a);
}

/* Keeps what the timeline plot needs from each repetition's rows and drops
 * the rows. Rows without numeric t_s/dt_s are left out. */
static int extract_timelines(const char *path, struct compare_report *rep, struct sb_error *err)
{
	struct json_object *reps = json_lookup(rep->root, "repetitions");
	size_t n = json_object_array_length(reps);

	rep->timelines = calloc(n ? n : 1, sizeof(*rep->timelines));
	if (!rep->timelines)
		return sb_error_set(err, -ENOMEM, "%s: out of memory", path);
	rep->n_timelines = n;
	bool unavailable[COMPARE_TIMELINE_COUNTERS];
	for (size_t c = 0; c < COMPARE_TIMELINE_COUNTERS; c++)
		unavailable[c] = counter_unavailable(rep, compare_timeline_counters[c]);
	for (size_t i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(reps, i);
		struct json_object *tl = json_lookup(r, "timeline");
		struct compare_timeline *t = &rep->timelines[i];
		size_t rows = tl ? json_object_array_length(tl) : 0;

		if (rows) {
			t->t_s = malloc(rows * sizeof(double));
			t->dt_s = malloc(rows * sizeof(double));
			t->window = malloc(rows);
			bool ok = t->t_s && t->dt_s && t->window;
			for (size_t c = 0; c < COMPARE_TIMELINE_COUNTERS; c++)
				ok = (t->counter[c] = malloc(rows * sizeof(double))) && ok;
			if (!ok)
				return sb_error_set(err, -ENOMEM, "%s: out of memory", path);
		}
		for (size_t j = 0; j < rows; j++) {
			struct json_object *row = json_object_array_get_idx(tl, j);
			struct json_object *ts = json_lookup(row, "t_s"), *dt = json_lookup(row, "dt_s");
			if (!json_is_number(ts) || !json_is_number(dt))
				continue;
			t->t_s[t->n] = json_object_get_double(ts);
			t->dt_s[t->n] = json_object_get_double(dt);
			for (size_t c = 0; c < COMPARE_TIMELINE_COUNTERS; c++)
				t->counter[c][t->n] = unavailable[c] ? NAN : counter(row, compare_timeline_counters[c]);
			t->window[t->n] = window_code(json_lookup_string(row, "window"), rep->action_window);
			t->n++;
		}
		if (tl)
			json_object_object_del(r, "timeline");
	}
	return 0;
}

static int report_load(const char *path, const struct stat *st, int fd, struct compare_report **out,
		       struct sb_error *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ struct json_object *root = NULL;
	struct compare_report *rep;
	size_t len = 0;
	int r;

	if (!S_ISREG(st->st_mode))
		return sb_error_set(err, -EINVAL, "%s: is %s, not a regular file; give a " RUN_DIR_REPORT " or its run "
				    "directory", path, file_type_name(st->st_mode));
	if ((uint64_t)st->st_size > COMPARE_REPORT_MAX_BYTES)
		return sb_error_set(err, -EFBIG, "%s: %lld bytes, larger than the %u MiB compare reads", path,
				    (long long)st->st_size, COMPARE_REPORT_MAX_BYTES >> 20);
	r = read_bounded(fd, path, (size_t)st->st_size, &text, &len, err);
	if (r < 0)
		return r;
	if (len > INT32_MAX) /* json_tokener takes an int length */
		return sb_error_set(err, -EFBIG, "%s: too large to parse", path);
	r = parse_json(path, text, len, &root, err);
	if (r < 0)
		return r;
	r = check_report(path, root, err);
	if (r < 0)
		return r;
	rep = calloc(1, sizeof(*rep));
	if (!rep || !(rep->path = strdup(path))) {
		free(rep);
		return sb_error_set(err, -ENOMEM, "%s: out of memory", path);
	}
	rep->root = TAKE_PTR(root);
	rep->dev = st->st_dev;
	rep->ino = st->st_ino;
	rep->id = json_lookup_string(rep->root, "id");
	rep->state = json_lookup_string(rep->root, "state");
	rep->action_window = report_scenario_window(json_lookup_string(json_lookup(rep->root, "spec"), "scenario"));
	r = extract_timelines(path, rep, err);
	if (r < 0) {
		compare_report_free(rep);
		return r;
	}
	*out = rep;
	return 0;
}

int compare_pool_load(struct compare_pool *pool, const char *path, struct compare_report **out,
		      struct sb_error *err)
{
	_cleanup_free_ char *file = NULL;
	_cleanup_close_ int fd = -1;
	struct compare_report *rep = NULL;
	struct stat st;
	int r;

	if (!path || !*path)
		return sb_error_set(err, -EINVAL, "empty report path");
	/* O_NONBLOCK: a FIFO is refused below (report_load()) rather than waited on; a socket cannot be opened */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ENXIO && stat(path, &st) == 0)
		return sb_error_set(err, -EINVAL, "%s: is %s, not a regular file; give a " RUN_DIR_REPORT " or its run "
				    "directory", path, file_type_name(st.st_mode));
	if (fd < 0)
		return sb_error_set(err, -errno, "cannot open report %s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return sb_error_set(err, -errno, "cannot stat %s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		/* a run directory: its report.json */
		int dfd = TAKE_FD(fd);
		fd = openat(dfd, RUN_DIR_REPORT, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		int saved = errno;
		close(dfd);
		if (asprintf(&file, "%s/" RUN_DIR_REPORT, path) < 0) {
			file = NULL;
			return sb_error_set(err, -ENOMEM, "%s: out of memory", path);
		}
		if (fd < 0)
			return sb_error_set(err, -saved, "%s is a directory without a readable " RUN_DIR_REPORT " (%s); "
					    "give a run directory or a report file", path, strerror(saved));
		if (fstat(fd, &st) < 0)
			return sb_error_set(err, -errno, "cannot stat %s: %s", file, strerror(errno));
	}

	for (size_t i = 0; i < pool->n; i++)
		if (pool->reports[i]->dev == st.st_dev && pool->reports[i]->ino == st.st_ino) {
			*out = pool->reports[i];
			return 0;
		}
	if (pool->n >= COMPARE_MAX_REPORTS)
		return sb_error_set(err, -E2BIG, "%s: more than %d reports in one comparison", path,
				    COMPARE_MAX_REPORTS);

	r = report_load(file ? file : path, &st, fd, &rep, err);
	if (r < 0)
		return r;
	struct compare_report **nv = realloc(pool->reports, (pool->n + 1) * sizeof(*nv));
	if (!nv) {
		compare_report_free(rep);
		return sb_error_set(err, -ENOMEM, "%s: out of memory", path);
	}
	pool->reports = nv;
	pool->reports[pool->n++] = rep;
	pool->n_parsed++;
	*out = rep;
	return 0;
}
