// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The store's summary index: one summary per run, made from its report and
 * made again only when report.json changed (its stat identity), so list and
 * status do not reparse every report.
 */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json-util.h"
#include "macro.h"
#include "report.h"
#include "run-dir.h"
#include "store.h"
#include "store-private.h"
#include "strv.h"

static struct json_object *copy_or_null(struct json_object *v)
{
	return v ? json_object_get(v) : NULL;
}

/* the medians of the scenario's window a summary carries; background snapshots add snapshot_duration_s */
static const char *const headline_metrics[] = {
	"pf_per_s", "tlb_per_s", "invalidations_per_s", "guest_ops_per_s", "latency_p99_ns",
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static bool is_string(struct json_object *v, const char *s)
{
	return json_object_is_type(v, json_type_string) && !strcmp(json_object_get_string(v), s);
}

/*
 * The median of the action window's duration_s (migration, steady, fault-in) over
 * the completed repetitions of arm label (the arms' statistics hold no
 * duration of a migration: it is the window's), or NULL when none has one.
 */
static struct json_object *window_duration_median(struct json_object *reps, struct json_object *label,
						  const char *window)
{
	_cleanup_free_ double *v = NULL;
	size_t n = 0, len = json_object_is_type(reps, json_type_array) ? json_object_array_length(reps) : 0;

	if (!json_object_is_type(label, json_type_string) || !len || !(v = calloc(len, sizeof(*v))))
		return NULL;
	for (size_t i = 0; i < len; i++) {
		struct json_object *rep = json_object_array_get_idx(reps, i);
		struct json_object *d = store_get(store_get(store_get(rep, "windows"), window), "duration_s");

		if (!is_string(store_get(rep, "arm"), json_object_get_string(label)) ||
		    !is_string(store_get(rep, "state"), "completed") ||
		    !(json_object_is_type(d, json_type_double) || json_object_is_type(d, json_type_int)))
			continue;
		v[n++] = json_object_get_double(d);
	}
	if (!n)
		return NULL;
	qsort(v, n, sizeof(*v), cmp_double);
	return json_object_new_double(n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

/* [{"index", "arm", "after"}] of the repetitions retried on a fresh host VM (host_vm.retried_after) */
static struct json_object *retried_reps(struct json_object *reps)
{
	struct json_object *out = json_object_new_array();
	size_t n = json_object_is_type(reps, json_type_array) ? json_object_array_length(reps) : 0;

	for (size_t i = 0; out && i < n; i++) {
		struct json_object *rep = json_object_array_get_idx(reps, i);
		struct json_object *after = store_get(store_get(rep, "host_vm"), "retried_after");
		struct json_object *o;

		if (!json_object_is_type(after, json_type_string) || !(o = json_object_new_object()))
			continue;
		json_object_object_add(o, "index", copy_or_null(store_get(rep, "index")));
		json_object_object_add(o, "arm", copy_or_null(store_get(rep, "arm")));
		json_object_object_add(o, "after", json_object_get(after));
		json_object_array_add(out, o);
	}
	return out;
}

static int64_t int_or(struct json_object *v, int64_t dflt)
{
	return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : dflt;
}

/* An arm's line of the summary: its label, repetitions and the medians of the scenario's window. */
static struct json_object *arm_summary(struct json_object *report, struct json_object *a, const char *window)
{
	const struct report_window_summary *ws = report_window_summary(window);
	struct json_object *win = store_get(store_get(a, "windows"), window);
	struct json_object *oa = json_object_new_object();
	struct json_object *m = json_object_new_object();

	if (!oa || !m) {
		json_object_put(oa);
		json_object_put(m);
		return NULL;
	}
	for (size_t k = 0; k < ARRAY_SIZE(headline_metrics); k++)
		json_object_object_add(m, headline_metrics[k],
				       copy_or_null(store_get(store_get(win, headline_metrics[k]), "median")));
	/* a snapshot's duration is an arm statistic; the other windows' the median of their own duration_s */
	if (strcmp(window, "snapshot"))
		json_object_object_add(m, ws->duration_key,
				       window_duration_median(store_get(report, "repetitions"), store_get(a, "label"),
							      window));
	if (ws->count)
		json_object_object_add(m, ws->count, copy_or_null(store_get(store_get(win, ws->count), "median")));
	if (!strcmp(window, "snapshot"))
		json_object_object_add(m, ws->duration_key,
				       copy_or_null(store_get(store_get(win, ws->duration_key), "median")));
	json_object_object_add(oa, "label", copy_or_null(store_get(a, "label")));
	json_object_object_add(oa, "repetitions", copy_or_null(store_get(a, "repetitions")));
	json_object_object_add(oa, window, m);
	return oa;
}

/* The arms' labels (strings only) into labels. */
static void add_labels(struct json_object *labels, struct json_object *arms)
{
	if (!json_object_is_type(arms, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(arms); i++) {
		struct json_object *l = store_get(json_object_array_get_idx(arms, i), "label");
		if (json_object_is_type(l, json_type_string))
			json_object_array_add(labels, json_object_get(l));
	}
}

struct json_object *store_summary_from_report(struct json_object *report)
{
	struct json_object *o = json_object_new_object();
	struct json_object *spec = store_get(report, "spec");
	struct json_object *arms = store_get(report, "arms"), *spec_arms = store_get(spec, "arms");
	struct json_object *labels = json_object_new_array();
	struct json_object *out_arms = json_object_new_array();
	struct json_object *scenario = store_get(spec, "scenario");
	const char *window =
		report_scenario_window(json_object_is_type(scenario, json_type_string) ? json_object_get_string(scenario) : NULL);
	int64_t total = 0, completed = 0, failed = 0;

	if (!o || !labels || !out_arms) {
		json_object_put(o);
		json_object_put(labels);
		json_object_put(out_arms);
		return NULL;
	}
	json_object_object_add(o, "id", copy_or_null(store_get(report, "id")));
	json_object_object_add(o, "state", copy_or_null(store_get(report, "state")));
	json_object_object_add(o, "scenario", copy_or_null(store_get(spec, "scenario")));
	json_object_object_add(o, "description", copy_or_null(store_get(spec, "description")));

	/* labels from the spec: a queued run has no arms in its report yet; a partial report has no spec */
	if (!json_object_is_type(spec_arms, json_type_array) && json_object_is_type(store_get(report, "partial"),
										      json_type_object))
		spec_arms = arms;
	add_labels(labels, spec_arms);
	json_object_object_add(o, "labels", labels);
	json_object_object_add(o, "created", copy_or_null(store_get(report, "created")));
	json_object_object_add(o, "started", copy_or_null(store_get(report, "started")));
	json_object_object_add(o, "finished", copy_or_null(store_get(report, "finished")));
	json_object_object_add(o, "error", copy_or_null(store_get(report, "error")));

	if (json_object_is_type(arms, json_type_array) && json_object_array_length(arms) > 0) {
		for (size_t i = 0; i < json_object_array_length(arms); i++) {
			struct json_object *a = json_object_array_get_idx(arms, i);
			struct json_object *reps = store_get(a, "repetitions");
			struct json_object *oa = arm_summary(report, a, window);

			if (!oa)
				continue;
			total += int_or(store_get(reps, "total"), 0);
			completed += int_or(store_get(reps, "completed"), 0);
			failed += int_or(store_get(reps, "failed"), 0);
			json_object_array_add(out_arms, oa);
		}
	} else {
		int64_t per_arm = int_or(store_get(spec, "repetitions"), 0);
		total = per_arm * (int64_t)json_object_array_length(labels);
	}
	struct json_object *reps = json_object_new_object();
	if (reps) {
		json_object_object_add(reps, "total", json_object_new_int64(total));
		json_object_object_add(reps, "completed", json_object_new_int64(completed));
		json_object_object_add(reps, "failed", json_object_new_int64(failed));
		json_object_object_add(o, "repetitions", reps);
	}
	json_object_object_add(o, "arms", out_arms);
	json_object_object_add(o, "retried", retried_reps(store_get(report, "repetitions")));
	return o;
}

static int entry_find(const struct store *s, const char *id, size_t *pos)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(s->entries[mid].id, id);
		if (c == 0) {
			*pos = mid;
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	return 0;
}

static void entry_remove(struct store *s, size_t pos)
{
	json_object_put(s->entries[pos].summary);
	memmove(s->entries + pos, s->entries + pos + 1, (s->n - pos - 1) * sizeof(*s->entries));
	s->n--;
}

/* The summary of id, from the index if report.json did not change since. */
static int entry_refresh(struct store *s, const char *id, struct json_object **ret, struct sb_error *err)
{
	char path[4096];
	struct stat st;
	struct store_entry *e;
	size_t pos;
	int found, r;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", s->runs_dir, id, RUN_DIR_REPORT) >= sizeof(path))
		return sb_error_set(err, -ENAMETOOLONG, "path too long");
	found = entry_find(s, id, &pos);
	if (stat(path, &st) < 0) {
		r = -errno;
		if (found)
			entry_remove(s, pos);
		if (r == -ENOENT)
			return sb_error_set(err, r, "run %s: no such run in %s; 'snapbench list' shows the runs", id,
					    s->runs_dir);
		return sb_error_set(err, r, "report %s: %s", path, strerror(-r));
	}
	if (found) {
		e = &s->entries[pos];
		if (e->dev == st.st_dev && e->ino == st.st_ino && e->size == st.st_size &&
		    e->mtime.tv_sec == st.st_mtim.tv_sec && e->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			*ret = json_object_get(e->summary);
			return 0;
		}
	}

	struct json_object *report = NULL, *summary;
	r = report_read(path, &report, err);
	if (r < 0) {
		/* an unreadable report is still listed, with what is wrong */
		summary = json_object_new_object();
		if (!summary)
			return sb_error_set(err, -ENOMEM, "out of memory");
		json_object_object_add(summary, "id", json_object_new_string(id));
		json_object_object_add(summary, "state", NULL);
		json_object_object_add(summary, "problem", json_object_new_string(err->msg));
		sb_error_clear(err);
	} else {
		summary = store_summary_from_report(report);
		json_object_put(report);
		if (!summary)
			return sb_error_set(err, -ENOMEM, "out of memory");
	}

	if (!found) {
		if (s->n == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 64;
			struct store_entry *p = realloc(s->entries, cap * sizeof(*p));
			if (!p) {
				json_object_put(summary);
				return sb_error_set(err, -ENOMEM, "out of memory");
			}
			s->entries = p;
			s->cap = cap;
		}
		memmove(s->entries + pos + 1, s->entries + pos, (s->n - pos) * sizeof(*s->entries));
		s->n++;
		e = &s->entries[pos];
		memset(e, 0, sizeof(*e));
		snprintf(e->id, sizeof(e->id), "%s", id);
	} else {
		e = &s->entries[pos];
		json_object_put(e->summary);
	}
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->size = st.st_size;
	e->mtime = st.st_mtim;
	e->summary = summary;
	*ret = json_object_get(summary);
	return 0;
}

int store_summary(struct store *s, const char *id, struct json_object **ret, struct sb_error *err)
{
	if (!report_id_valid(id))
		return sb_error_set(err, -EINVAL, "run: '%.64s' is not a run id (YYYYMMDDTHHMMSSZ-xxxxxx); 'snapbench list' shows them",
				    id);
	return entry_refresh(s, id, ret, err);
}

static int cmp_ids(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The run ids in runs/, sorted, NULL-terminated (strv_free()); *n_ret counts them. */
static int scan_ids(struct store *s, char ***ret, size_t *n_ret, struct sb_error *err)
{
	DIR *d = opendir(s->runs_dir);
	struct dirent *de;
	char **ids = NULL;
	size_t n = 0, cap = 0;

	if (!d)
		return sb_error_set(err, -errno, "results directory %s: %s", s->runs_dir, strerror(errno));
	while ((de = readdir(d))) {
		if (!report_id_valid(de->d_name))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			char **p = realloc(ids, (c + 1) * sizeof(*p));
			if (!p)
				goto oom;
			ids = p;
			cap = c;
		}
		ids[n] = strdup(de->d_name);
		if (!ids[n])
			goto oom;
		ids[++n] = NULL;
	}
	closedir(d);
	if (n)
		qsort(ids, n, sizeof(*ids), cmp_ids);

	/* forget runs whose directory went away */
	for (size_t i = s->n; i-- > 0;)
		if (!n || !bsearch(&(const char *){ s->entries[i].id }, ids, n, sizeof(*ids), cmp_ids))
			entry_remove(s, i);
	*ret = ids;
	*n_ret = n;
	return 0;
oom:
	closedir(d);
	strv_free(ids);
	return sb_error_set(err, -ENOMEM, "out of memory");
}

static bool summary_matches(struct json_object *sum, const struct store_filter *f)
{
	struct json_object *v;

	if (f->state >= 0) {
		v = store_get(sum, "state");
		if (!json_object_is_type(v, json_type_string) ||
		    report_state_from_string(json_object_get_string(v)) != f->state)
			return false;
	}
	if (f->scenario) {
		v = store_get(sum, "scenario");
		if (!json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), f->scenario))
			return false;
	}
	if (f->label) {
		bool any = false;
		v = store_get(sum, "labels");
		for (size_t i = 0; json_object_is_type(v, json_type_array) && i < json_object_array_length(v); i++)
			if (!strcmp(json_object_get_string(json_object_array_get_idx(v, i)), f->label))
				any = true;
		if (!any)
			return false;
	}
	return true;
}

int store_list(struct store *s, const struct store_filter *f, struct json_object **ret, struct sb_error *err)
{
	char **ids = NULL;
	size_t n = 0;
	struct json_object *out;
	int r;

	r = scan_ids(s, &ids, &n, err);
	if (r < 0)
		return r;
	out = json_object_new_array();
	if (!out) {
		strv_free(ids);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	/* newest first while collecting, so limit keeps the newest; reversed at the end */
	for (size_t i = n; i-- > 0;) {
		struct json_object *sum;

		if (f->limit && json_object_array_length(out) >= f->limit)
			break;
		r = entry_refresh(s, ids[i], &sum, err);
		if (r == -ENOENT) { /* removed meanwhile */
			sb_error_clear(err);
			continue;
		}
		if (r < 0) {
			json_object_put(out);
			strv_free(ids);
			return r;
		}
		if (summary_matches(sum, f))
			json_object_array_add(out, sum);
		else
			json_object_put(sum);
	}
	strv_free(ids);
	size_t len = json_object_array_length(out);
	for (size_t i = 0; i < len / 2; i++) {
		struct json_object *a = json_object_get(json_object_array_get_idx(out, i));
		struct json_object *b = json_object_get(json_object_array_get_idx(out, len - 1 - i));
		json_object_array_put_idx(out, i, b);
		json_object_array_put_idx(out, len - 1 - i, a);
	}
	*ret = out;
	return 0;
}

int store_ids_in_state(struct store *s, enum report_state state, char (**ret)[REPORT_ID_MAX], size_t *n_ret,
		       struct sb_error *err)
{
	struct store_filter f = { .state = (int)state };
	_cleanup_json_ struct json_object *list = NULL;
	char(*ids)[REPORT_ID_MAX];
	size_t n;
	int r;

	r = store_list(s, &f, &list, err);
	if (r < 0)
		return r;
	n = json_object_array_length(list);
	ids = calloc(n ? n : 1, sizeof(*ids));
	if (!ids)
		return sb_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		snprintf(ids[i], sizeof(ids[i]), "%s",
			 json_object_get_string(store_get(json_object_array_get_idx(list, i), "id")));
	*ret = ids;
	*n_ret = n;
	return 0;
}
