// SPDX-License-Identifier: GPL-2.0-or-later
/* The results store: run directories, the summary index, ending runs, logs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "atomic-file.h"
#include "clock.h"
#include "config.h"
#include "json-util.h"
#include "macro.h"
#include "protocol.h"
#include "run-dir.h"
#include "store.h"
#include "strv.h"

struct store_entry {
	char id[REPORT_ID_MAX];
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
	struct json_object *summary;
};

struct store {
	char *state_dir;
	char *runs_dir;
	size_t n, cap;
	struct store_entry *entries; /* sorted by id */
};

int store_open(const char *state_dir, struct store **ret, struct sb_error *err)
{
	struct store *s;

	if (!state_dir || !*state_dir)
		return sb_error_set(err, -EINVAL, "state directory: empty path; pass --state-dir DIR");
	s = calloc(1, sizeof(*s));
	if (!s)
		return sb_error_set(err, -ENOMEM, "out of memory");
	s->state_dir = strdup(state_dir);
	if (!s->state_dir || asprintf(&s->runs_dir, "%s/%s", state_dir, RUN_DIR_STORE_RUNS) < 0) {
		s->runs_dir = NULL;
		store_free(s);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	if (mkdir(s->runs_dir, 0755) < 0 && errno != EEXIST) {
		int r = -errno;
		sb_error_set(err, r, "results directory %s: cannot create it: %s; check that the state directory exists and is writable",
			     s->runs_dir, strerror(-r));
		store_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void store_free(struct store *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		json_object_put(s->entries[i].summary);
	free(s->entries);
	free(s->state_dir);
	free(s->runs_dir);
	free(s);
}

const char *store_state_dir(const struct store *s)
{
	return s->state_dir;
}

const char *store_runs_dir(const struct store *s)
{
	return s->runs_dir;
}

int store_run_dir(const struct store *s, const char *id, char *buf, size_t len)
{
	if (!id || !report_id_valid(id))
		return -EINVAL;
	if ((size_t)snprintf(buf, len, "%s/%s", s->runs_dir, id) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static void remove_run_dir(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, RUN_DIR_SPEC);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", dir, RUN_DIR_REPORT);
	unlink(path);
	rmdir(dir);
}

int store_create_run(struct store *s, struct json_object *spec_json, char id[static REPORT_ID_MAX],
		     struct sb_error *err)
{
	char dir[4096], path[4096 + 32];
	_cleanup_report_ struct report *rep = NULL;
	uint64_t now = realtime_ns();
	int r;

	for (int attempt = 0;; attempt++) {
		report_new_id(now, id);
		r = store_run_dir(s, id, dir, sizeof(dir));
		if (r < 0)
			return sb_error_set(err, r, "results directory %s: path too long", s->runs_dir);
		if (mkdir(dir, 0755) == 0)
			break;
		if (errno != EEXIST || attempt >= 16)
			return sb_error_set(err, -errno, "run directory %s: cannot create it: %s", dir, strerror(errno));
	}

	snprintf(path, sizeof(path), "%s/%s", dir, RUN_DIR_SPEC);
	{
		size_t n;
		const char *text = json_object_to_json_string_length(spec_json, JSON_C_TO_STRING_PRETTY |
									 JSON_C_TO_STRING_SPACED |
									 JSON_C_TO_STRING_NOSLASHESCAPE, &n);
		_cleanup_free_ char *buf = text ? malloc(n + 1) : NULL;

		if (!buf) {
			remove_run_dir(dir);
			return sb_error_set(err, -ENOMEM, "out of memory");
		}
		memcpy(buf, text, n);
		buf[n] = '\n';
		r = atomic_file_write(path, buf, n + 1, 0644, err);
		if (r < 0) {
			remove_run_dir(dir);
			return r;
		}
	}

	r = report_new(id, now, &rep);
	if (r < 0) {
		remove_run_dir(dir);
		return sb_error_set(err, r, "out of memory");
	}
	rep->state = REPORT_QUEUED;
	report_set_spec(rep, json_object_get(spec_json));
	/* Where it was submitted; the run engine records the whole host when the run starts.
	 * (Not host_collect(): it would drag the VM backends, libvirt included, into snapbenchd.) */
	struct utsname u;
	if (uname(&u) == 0) {
		rep->host.kernel_release = strdup(u.release);
		rep->host.kernel_version = strdup(u.version);
		rep->host.hostname = strdup(u.nodename);
	}
	rep->snapbench_version = strdup(PACKAGE_VERSION);
	snprintf(path, sizeof(path), "%s/%s", dir, RUN_DIR_REPORT);
	r = report_write(rep, path, err);
	if (r < 0) {
		remove_run_dir(dir);
		return r;
	}
	return 0;
}

int store_read_report(struct store *s, const char *id, struct json_object **ret, struct sb_error *err)
{
	char path[4096];
	struct stat st;

	if (!report_id_valid(id))
		return sb_error_set(err, -EINVAL, "run: '%.64s' is not a run id (YYYYMMDDTHHMMSSZ-xxxxxx); 'snapbench list' shows them",
				    id);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", s->runs_dir, id, RUN_DIR_REPORT) >= sizeof(path))
		return sb_error_set(err, -ENAMETOOLONG, "path too long");
	if (stat(path, &st) < 0 && errno == ENOENT)
		return sb_error_set(err, -ENOENT, "run %s: no such run in %s; 'snapbench list' shows the runs", id,
				    s->runs_dir);
	return report_read(path, ret, err);
}

/* ---- summaries ---- */

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (o && json_object_is_type(o, json_type_object))
		json_object_object_get_ex(o, key, &v);
	return v;
}

static struct json_object *copy_or_null(struct json_object *v)
{
	return v ? json_object_get(v) : NULL;
}

static const char *const headline_metrics[] = {
	"pf_per_s", "tlb_per_s", "invalidations_per_s", "guest_ops_per_s", "latency_p99_ns", "snapshot_duration_s",
};

static int64_t int_or(struct json_object *v, int64_t dflt)
{
	return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : dflt;
}

struct json_object *store_summary_from_report(struct json_object *report)
{
	struct json_object *o = json_object_new_object();
	struct json_object *spec = get(report, "spec");
	struct json_object *arms = get(report, "arms"), *spec_arms = get(spec, "arms");
	struct json_object *labels = json_object_new_array();
	struct json_object *out_arms = json_object_new_array();
	int64_t total = 0, completed = 0, failed = 0;

	if (!o || !labels || !out_arms) {
		json_object_put(o);
		json_object_put(labels);
		json_object_put(out_arms);
		return NULL;
	}
	json_object_object_add(o, "id", copy_or_null(get(report, "id")));
	json_object_object_add(o, "state", copy_or_null(get(report, "state")));
	json_object_object_add(o, "scenario", copy_or_null(get(spec, "scenario")));
	json_object_object_add(o, "description", copy_or_null(get(spec, "description")));

	/* labels from the spec: a queued run has no arms in its report yet */
	if (json_object_is_type(spec_arms, json_type_array))
		for (size_t i = 0; i < json_object_array_length(spec_arms); i++) {
			struct json_object *l = get(json_object_array_get_idx(spec_arms, i), "label");
			if (json_object_is_type(l, json_type_string))
				json_object_array_add(labels, json_object_get(l));
		}
	json_object_object_add(o, "labels", labels);
	json_object_object_add(o, "created", copy_or_null(get(report, "created")));
	json_object_object_add(o, "started", copy_or_null(get(report, "started")));
	json_object_object_add(o, "finished", copy_or_null(get(report, "finished")));
	json_object_object_add(o, "error", copy_or_null(get(report, "error")));

	if (json_object_is_type(arms, json_type_array) && json_object_array_length(arms) > 0) {
		for (size_t i = 0; i < json_object_array_length(arms); i++) {
			struct json_object *a = json_object_array_get_idx(arms, i);
			struct json_object *reps = get(a, "repetitions");
			struct json_object *snap = get(get(a, "windows"), "snapshot");
			struct json_object *oa = json_object_new_object();
			struct json_object *m = json_object_new_object();

			if (!oa || !m) {
				json_object_put(oa);
				json_object_put(m);
				continue;
			}
			total += int_or(get(reps, "total"), 0);
			completed += int_or(get(reps, "completed"), 0);
			failed += int_or(get(reps, "failed"), 0);
			for (size_t k = 0; k < ARRAY_SIZE(headline_metrics); k++)
				json_object_object_add(m, headline_metrics[k],
						       copy_or_null(get(get(snap, headline_metrics[k]), "median")));
			json_object_object_add(oa, "label", copy_or_null(get(a, "label")));
			json_object_object_add(oa, "repetitions", copy_or_null(reps));
			json_object_object_add(oa, "snapshot", m);
			json_object_array_add(out_arms, oa);
		}
	} else {
		int64_t per_arm = int_or(get(spec, "repetitions"), 0);
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
		v = get(sum, "state");
		if (!json_object_is_type(v, json_type_string) ||
		    report_state_from_string(json_object_get_string(v)) != f->state)
			return false;
	}
	if (f->scenario) {
		v = get(sum, "scenario");
		if (!json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), f->scenario))
			return false;
	}
	if (f->label) {
		bool any = false;
		v = get(sum, "labels");
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
			 json_object_get_string(get(json_object_array_get_idx(list, i), "id")));
	*ret = ids;
	*n_ret = n;
	return 0;
}

/* ---- ending runs ---- */

static bool state_is_final(const char *s)
{
	return s && (!strcmp(s, "completed") || !strcmp(s, "failed") || !strcmp(s, "cancelled"));
}

static struct json_object *error_object(const char *phase, const char *message)
{
	struct json_object *e = json_object_new_object();

	if (!e)
		return NULL;
	json_object_object_add(e, "message", json_object_new_string(message));
	json_object_object_add(e, "phase", json_object_new_string(phase));
	return e;
}

int store_end_report(struct json_object *report, enum report_state state, const char *phase,
		     const char *message, unsigned flags)
{
	bool override = flags & STORE_END_OVERRIDE_CANCELLED;
	struct json_object *v = get(report, "state"), *reps, *arms;
	const char *final = report_state_to_string(state);
	const char *rep_final = state == REPORT_CANCELLED ? "cancelled" : "failed";
	char now[32];

	if (json_object_is_type(v, json_type_string) && state_is_final(json_object_get_string(v)) &&
	    !(override && !strcmp(json_object_get_string(v), "cancelled")))
		return 0;
	report_format_time(realtime_ns(), now);
	json_object_object_add(report, "state", json_object_new_string(final));
	json_object_object_add(report, "error", error_object(phase, message));
	if (!get(report, "finished"))
		json_object_object_add(report, "finished", json_object_new_string(now));

	reps = get(report, "repetitions");
	for (size_t i = 0; json_object_is_type(reps, json_type_array) && i < json_object_array_length(reps); i++) {
		struct json_object *rep = json_object_array_get_idx(reps, i);
		struct json_object *rs = get(rep, "state"), *snap = get(rep, "snapshot");

		bool cut;

		if (!json_object_is_type(rs, json_type_string))
			continue;
		cut = override && !strcmp(json_object_get_string(rs), "cancelled");
		if (strcmp(json_object_get_string(rs), "running") && !cut)
			continue;
		json_object_object_add(rep, "state", json_object_new_string(rep_final));
		if (!get(rep, "error") || cut)
			json_object_object_add(rep, "error", error_object(phase, message));
		if (!get(rep, "finished"))
			json_object_object_add(rep, "finished", json_object_new_string(now));
		v = get(snap, "status");
		if (json_object_is_type(v, json_type_string) &&
		    (!strcmp(json_object_get_string(v), "active") || (cut && !strcmp(json_object_get_string(v), "cancelled"))))
			json_object_object_add(snap, "status", json_object_new_string(rep_final));
	}

	/* each arm's failed count follows its repetitions */
	arms = get(report, "arms");
	for (size_t i = 0; json_object_is_type(arms, json_type_array) && i < json_object_array_length(arms); i++) {
		struct json_object *arm = json_object_array_get_idx(arms, i);
		struct json_object *label = get(arm, "label"), *counts = get(arm, "repetitions");
		int64_t failed = 0;

		if (!json_object_is_type(label, json_type_string) || !json_object_is_type(counts, json_type_object))
			continue;
		for (size_t k = 0; json_object_is_type(reps, json_type_array) && k < json_object_array_length(reps);
		     k++) {
			struct json_object *rep = json_object_array_get_idx(reps, k);
			struct json_object *ra = get(rep, "arm"), *rs = get(rep, "state");
			if (json_object_is_type(ra, json_type_string) && json_object_is_type(rs, json_type_string) &&
			    !strcmp(json_object_get_string(ra), json_object_get_string(label)) &&
			    !strcmp(json_object_get_string(rs), "failed"))
				failed++;
		}
		json_object_object_add(counts, "failed", json_object_new_int64(failed));
	}
	return 1;
}

int store_end_run(const char *run_dir, enum report_state state, const char *phase, const char *message,
		  unsigned flags, struct sb_error *err)
{
	char path[4096];
	struct json_object *report;
	int r;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", run_dir, RUN_DIR_REPORT) >= sizeof(path))
		return sb_error_set(err, -ENAMETOOLONG, "path too long");
	r = report_read(path, &report, err);
	if (r < 0)
		return r;
	r = store_end_report(report, state, phase, message, flags);
	if (r > 0) {
		size_t n;
		const char *text = json_object_to_json_string_length(report, JSON_C_TO_STRING_PRETTY |
								     JSON_C_TO_STRING_SPACED |
								     JSON_C_TO_STRING_NOSLASHESCAPE, &n);
		_cleanup_free_ char *buf = text ? malloc(n + 1) : NULL;

		if (!buf) {
			json_object_put(report);
			return sb_error_set(err, -ENOMEM, "out of memory");
		}
		memcpy(buf, text, n);
		buf[n] = '\n';
		int k = atomic_file_write(path, buf, n + 1, 0644, err);
		if (k < 0)
			r = k;
	}
	json_object_put(report);
	return r;
}

int store_end_run_interrupted(const char *run_dir, struct sb_error *err)
{
	return store_end_run(run_dir, REPORT_FAILED, STORE_INTERRUPTED_PHASE,
			     "interrupted: snapbenchd stopped while the run was executing (killed, crashed or the host went down); "
			     "the report keeps what was measured until then; submit the run again",
			     STORE_END_OVERRIDE_CANCELLED, err);
}

/* ---- logs ---- */

static int log_tail(const char *dir, const char *name, size_t max_bytes, struct json_object **ret,
		    struct sb_error *err)
{
	char path[4096];
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t want, got = 0;
	off_t from;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return sb_error_set(err, -ENAMETOOLONG, "path too long");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return sb_error_set(err, -errno, "log %s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return sb_error_set(err, -EINVAL, "log %s: not a regular file", path);
	from = st.st_size > (off_t)max_bytes ? st.st_size - (off_t)max_bytes : 0;
	want = (size_t)(st.st_size - from);
	buf = malloc(want + 1);
	if (!buf)
		return sb_error_set(err, -ENOMEM, "out of memory");
	while (got < want) {
		ssize_t k = pread(fd, buf + got, want - got, from + (off_t)got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	buf[got] = '\0';
	protocol_sanitize_utf8(buf, got);

	struct json_object *o = json_object_new_object();
	if (!o)
		return sb_error_set(err, -ENOMEM, "out of memory");
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "bytes", json_object_new_int64(st.st_size));
	json_object_object_add(o, "truncated", json_object_new_boolean(from > 0));
	json_object_object_add(o, "text", json_object_new_string_len(buf, (int)got));
	*ret = o;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int store_logs(struct store *s, const char *id, size_t max_bytes, struct json_object **ret, struct sb_error *err)
{
	char dir[4096];
	struct json_object *out, *o;
	char *names[256];
	size_t n = 0;
	struct dirent *de;
	DIR *d;
	int r;

	r = store_run_dir(s, id, dir, sizeof(dir));
	if (r < 0)
		return sb_error_set(err, r, "run: '%.64s' is not a run id (YYYYMMDDTHHMMSSZ-xxxxxx); 'snapbench list' shows them",
				    id);
	d = opendir(dir);
	if (!d) {
		r = -errno;
		if (r == -ENOENT)
			return sb_error_set(err, r, "run %s: no such run in %s; 'snapbench list' shows the runs", id,
					    s->runs_dir);
		return sb_error_set(err, r, "run directory %s: %s", dir, strerror(-r));
	}
	/* qemu-*.log: one per repetition; bounded by the spec's repetitions, and here by the array */
	while ((de = readdir(d)) && n < ARRAY_SIZE(names)) {
		size_t len = strlen(de->d_name);
		if (strncmp(de->d_name, RUN_DIR_QEMU_LOG_PREFIX, strlen(RUN_DIR_QEMU_LOG_PREFIX)) ||
		    len < strlen(RUN_DIR_QEMU_LOG_PREFIX) + strlen(RUN_DIR_QEMU_LOG_SUFFIX) ||
		    strcmp(de->d_name + len - strlen(RUN_DIR_QEMU_LOG_SUFFIX), RUN_DIR_QEMU_LOG_SUFFIX))
			continue;
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);

	out = json_object_new_array();
	if (!out) {
		r = sb_error_set(err, -ENOMEM, "out of memory");
		goto done;
	}
	r = log_tail(dir, RUN_DIR_WORKER_LOG, max_bytes, &o, err);
	if (r == 0)
		json_object_array_add(out, o);
	else if (r != -ENOENT)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		r = log_tail(dir, names[i], max_bytes, &o, err);
		if (r == -ENOENT)
			continue;
		if (r < 0)
			goto fail;
		json_object_array_add(out, o);
	}
	sb_error_clear(err);
	*ret = out;
	r = 0;
	goto done;
fail:
	json_object_put(out);
done:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	return r;
}

void store_strip_timelines(struct json_object *report)
{
	struct json_object *reps = get(report, "repetitions");

	for (size_t i = 0; json_object_is_type(reps, json_type_array) && i < json_object_array_length(reps); i++)
		json_object_object_del(json_object_array_get_idx(reps, i), "timeline");
}
