// SPDX-License-Identifier: GPL-2.0-or-later
/* The results store: run directories, reports and logs (store-index.c: the summaries; store-end.c: ending runs). */
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
#include "run-dir.h"
#include "config.h"
#include "macro.h"
#include "protocol.h"
#include "store.h"
#include "store-private.h"

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

int store_open_runs(const char *runs_dir, struct store **ret, struct sb_error *err)
{
	struct stat st;
	struct store *s;

	if (stat(runs_dir, &st) < 0)
		return sb_error_set(err, -errno, "run store %s: %s", runs_dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return sb_error_set(err, -ENOTDIR, "run store %s: not a directory", runs_dir);
	s = calloc(1, sizeof(*s));
	if (!s)
		return sb_error_set(err, -ENOMEM, "out of memory");
	s->runs_dir = strdup(runs_dir);
	s->state_dir = strdup(runs_dir); /* no state directory of a daemon: the runs are all there is */
	if (!s->runs_dir || !s->state_dir) {
		store_free(s);
		return sb_error_set(err, -ENOMEM, "out of memory");
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
	struct json_object *reps = store_get(report, "repetitions");

	for (size_t i = 0; json_object_is_type(reps, json_type_array) && i < json_object_array_length(reps); i++)
		json_object_object_del(json_object_array_get_idx(reps, i), "timeline");
}
