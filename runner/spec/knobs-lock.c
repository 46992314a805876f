// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The knobs' two locks (knobs.h): the host-wide one with the record of its
 * holder, and the state directory's. The journal and the values are knobs.c's.
 */
#include "knobs-lock.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "json-util.h"
#include "macro.h"
#include "mkdir-p.h"

#define HOLDER_MAX 8192
/* how often a wait for the host-wide lock tries again */
#define WAIT_STEP_MS 100

static int host_lock_path(const char *root, char *dir, size_t dlen, char *file, size_t flen)
{
	const char *r = root && *root ? root : "/";
	const char *sep = r[strlen(r) - 1] == '/' ? "" : "/";
	const char *slash = strrchr(KNOBS_HOST_LOCK, '/');
	int n = snprintf(dir, dlen, "%s%s%.*s", r, sep, (int)(slash - KNOBS_HOST_LOCK), KNOBS_HOST_LOCK);
	int m = snprintf(file, flen, "%s%s%s", r, sep, KNOBS_HOST_LOCK);

	return n < 0 || (size_t)n >= dlen || m < 0 || (size_t)m >= flen ? -ENAMETOOLONG : 0;
}

bool knobs_owned_safely(const struct stat *st, bool dir)
{
	return (st->st_uid == geteuid() || (dir && st->st_uid == 0)) && (st->st_mode & 022) == 0;
}

/* Why the host-wide lock cannot be written, and the fix. */
static const char *host_lock_fix(int r)
{
	if (r != -EACCES && r != -EPERM && r != -EROFS)
		return "";
	return geteuid() != 0 ? "; changing knobs needs root"
			      : "; /run/snapbench must be writable (snapbenchd's unit: ReadWritePaths=-/run/snapbench)";
}

int knobs_host_lock_open(const char *root, bool create, int *ret, char *path, size_t plen, struct sb_error *err)
{
	char dir[PATH_MAX];
	_cleanup_close_ int dfd = -1;
	struct stat st;
	int fd, r;

	r = host_lock_path(root, dir, sizeof(dir), path, plen);
	if (r < 0)
		return sb_error_set(err, r, "the host-wide knob lock: root %s: path too long", root);
	if (create) {
		r = mkdir_p(dir, 0755);
		if (r < 0)
			return sb_error_set(err, r, "%s: cannot create the directory of the host-wide knob lock: %s%s", dir,
					    strerror(-r), host_lock_fix(r));
	}
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0) {
		r = -errno;
		if (r == -ENOENT && !create)
			return r;
		return sb_error_set(err, r, "%s: the directory of the host-wide knob lock: %s%s", dir, strerror(-r),
				    host_lock_fix(r));
	}
	if (fstat(dfd, &st) < 0)
		return sb_error_set(err, -errno, "%s: %s", dir, strerror(errno));
	if (!knobs_owned_safely(&st, true))
		return sb_error_set(err, -EPERM,
				    "%s: the directory of the host-wide knob lock must belong to root (or you) and be writable by its owner only (mode 0755 or stricter); fix its owner and mode",
				    dir);
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | (create ? O_CREAT : 0), 0644);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT && !create)
			return r;
		return sb_error_set(err, r, "%s: cannot open the host-wide knob lock: %s%s", path, strerror(-r),
				    host_lock_fix(r));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !knobs_owned_safely(&st, false)) {
		close(fd);
		return sb_error_set(err, -EPERM,
				    "%s: the host-wide knob lock must be a regular file that belongs to you and only you may write; remove it (no run may be running)",
				    path);
	}
	*ret = fd;
	return 0;
}

bool knobs_pid_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

int knobs_holder_read(int fd, struct knobs_holder *h)
{
	char buf[HOLDER_MAX + 1];
	_cleanup_json_ struct json_object *o = NULL;
	struct json_object *v;
	ssize_t n = pread(fd, buf, HOLDER_MAX, 0);

	memset(h, 0, sizeof(*h));
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	buf[n] = '\0';
	/* an older, longer record's tail may follow until the writer's ftruncate() */
	if (json_parse_text(buf, (size_t)n, KNOBS_JSON_MAX_DEPTH, JSON_PARSE_ALLOW_TRAILING, &o, NULL) < 0 ||
	    !json_object_is_type(o, json_type_object))
		return -EBADMSG;
	if (json_object_object_get_ex(o, "pid", &v) && json_object_is_type(v, json_type_int))
		h->pid = (pid_t)json_object_get_int64(v);
	if (json_object_object_get_ex(o, "run", &v) && json_object_is_type(v, json_type_string))
		snprintf(h->run_id, sizeof(h->run_id), "%s", json_object_get_string(v));
	if (json_object_object_get_ex(o, "state_dir", &v) && json_object_is_type(v, json_type_string))
		snprintf(h->state_dir, sizeof(h->state_dir), "%s", json_object_get_string(v));
	return 1;
}

int knobs_holder_write(int fd, const char *run_id, const char *state_dir)
{
	struct json_object *o = json_object_new_object();
	char abs[PATH_MAX];
	const char *text;
	size_t len;
	int r = 0;

	if (!o)
		return -ENOMEM;
	if (state_dir && *state_dir && !realpath(state_dir, abs))
		snprintf(abs, sizeof(abs), "%s", state_dir);
	json_object_object_add(o, "pid", json_object_new_int64(getpid()));
	json_object_object_add(o, "run", json_object_new_string(run_id ? run_id : ""));
	json_object_object_add(o, "state_dir", json_object_new_string(state_dir && *state_dir ? abs : ""));
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	len = text ? strlen(text) : 0;
	if (!text || len > HOLDER_MAX)
		r = -ENOMEM;
	else {
		ssize_t w = pwrite(fd, text, len, 0);
		if (w < 0)
			r = -errno;
		else if ((size_t)w != len)
			r = -EIO;
		else if (ftruncate(fd, (off_t)len) < 0)
			r = -errno;
	}
	json_object_put(o);
	return r;
}

void knobs_holder_clear(int fd)
{
	if (fd >= 0 && ftruncate(fd, 0) < 0) {
		/* the next holder then takes us for dead and looks for a journal: harmless */
	}
}

void knobs_holder_describe(const struct knobs_holder *h, char *buf, size_t len)
{
	if (h->pid <= 0) {
		snprintf(buf, len, "a process that left no record of itself");
		return;
	}
	int n = snprintf(buf, len, "pid %d", (int)h->pid);
	if (n >= 0 && (size_t)n < len && *h->run_id)
		n += snprintf(buf + n, len - (size_t)n, ", run %s", h->run_id);
	if (n >= 0 && (size_t)n < len && *h->state_dir)
		snprintf(buf + n, len - (size_t)n, ", state directory %s", h->state_dir);
}

int knobs_host_holder(const char *root, struct knobs_holder *ret)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	int r = knobs_host_lock_open(root, false, &fd, path, sizeof(path), NULL);

	memset(ret, 0, sizeof(*ret));
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	return knobs_holder_read(fd, ret);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL); /* a signal only ends the nap early */
}

int knobs_host_lock_take(const struct knobs_options *o, int *ret, struct knobs_holder *stale, bool *had_stale,
			 struct sb_error *err)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	uint64_t start = mono_ns();
	bool told = false;
	int r;

	*had_stale = false;
	r = knobs_host_lock_open(o->root, true, &fd, path, sizeof(path), err);
	if (r < 0)
		return r;
	for (;;) {
		struct knobs_holder h;
		char who[PATH_MAX + 128];
		uint64_t waited_ms;

		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return sb_error_set(err, -errno, "%s: cannot lock: %s", path, strerror(errno));
		if (knobs_holder_read(fd, &h) <= 0 || !knobs_pid_alive(h.pid))
			memset(&h, 0, sizeof(h));
		if (!told && o->wait_ms > 0 && o->waiting)
			o->waiting(&h, o->userdata);
		told = true;
		waited_ms = (mono_ns() - start) / NSEC_PER_MSEC;
		if (o->cancel && *o->cancel)
			return sb_error_set(err, -ECANCELED, "cancelled while waiting for the host-wide knob lock %s", path);
		if (waited_ms >= (uint64_t)(o->wait_ms > 0 ? o->wait_ms : 0)) {
			knobs_holder_describe(&h, who, sizeof(who));
			if (o->wait_ms > 0)
				return sb_error_set(err, -EBUSY,
						    "knobs: %s holds the host-wide knob lock %s and did not release it within %.0f s; knobs belong to the host, so runs that set them go one at a time: run again when it has ended, or run without knobs",
						    who, path, o->wait_ms / 1000.0);
			return sb_error_set(err, -EBUSY,
					    "knobs: %s holds the host-wide knob lock %s; knobs belong to the host, so runs that set them go one at a time: run again when it has ended, or run without knobs",
					    who, path);
		}
		uint64_t left = (uint64_t)o->wait_ms - waited_ms;
		sleep_ms(left < WAIT_STEP_MS ? (unsigned)left : WAIT_STEP_MS);
	}
	r = knobs_holder_read(fd, stale);
	*had_stale = r > 0 || r == -EBADMSG;
	if (r < 0)
		memset(stale, 0, sizeof(*stale));
	*ret = TAKE_FD(fd);
	return 0;
}

int knobs_lock_state_dir(const char *state_dir, bool wait, int *ret, struct sb_error *err)
{
	char path[4096];
	int fd;

	if (mkdir(state_dir, 0755) < 0 && errno != EEXIST)
		return sb_error_set(err, -errno, "state directory %s: cannot create it: %s", state_dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/%s", state_dir, KNOBS_LOCK);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0)
		return sb_error_set(err, -errno, "%s: cannot open the knob lock: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) {
		int e = errno;
		close(fd);
		if (e == EWOULDBLOCK)
			return sb_error_set(err, -EBUSY,
					    "%s: another snapbench run is changing knobs with this state directory right now; wait for it to end, or run without knobs",
					    path);
		return sb_error_set(err, -e, "%s: cannot lock: %s", path, strerror(e));
	}
	*ret = fd;
	return 0;
}

void knobs_host_unlock(int fd)
{
	if (fd < 0)
		return;
	knobs_holder_clear(fd);
	close(fd);
}
