// SPDX-License-Identifier: GPL-2.0-or-later
/* Knobs set for a run, journaled before any change, restored after; their locks are knobs-lock.c's. */
#include "knobs.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "fileio.h"
#include "json-util.h"
#include "knobs-lock.h"
#include "macro.h"

#define KNOB_VALUE_MAX 4096
#define JOURNAL_SCHEMA "snapbench.knobs/1"
#define JOURNAL_MAX (256 * 1024)

struct knob_entry {
	char *name;
	char *original;
	char *current;   /* what we last wrote; NULL: original in place */
};

struct knobs_session {
	char *state_dir;
	char *root;
	int host_fd;     /* the host-wide lock */
	int lock_fd;     /* the state directory's lock */
	size_t n;
	struct knob_entry *items;
};

int knobs_path(const char *root, const char *name, char *buf, size_t len)
{
	const char *r = root && *root ? root : "/";
	const char *sep = r[strlen(r) - 1] == '/' ? "" : "/";
	int n;

	if (!spec_knob_name_valid(name))
		return -EINVAL;
	if (!strncmp(name, "sysctl:", 7)) {
		char rel[300];
		snprintf(rel, sizeof(rel), "%s", name + 7);
		for (char *p = rel; *p; p++)
			if (*p == '.')
				*p = '/';
		n = snprintf(buf, len, "%s%sproc/sys/%s", r, sep, rel);
	} else {
		const char *mp = name + 7, *dot = strchr(mp, '.');
		n = snprintf(buf, len, "%s%ssys/module/%.*s/parameters/%s", r, sep, (int)(dot - mp), mp, dot + 1);
	}
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static const char *knob_fix(const char *name, int e)
{
	bool sysctl = !strncmp(name, "sysctl:", 7);

	switch (e) {
	case ENOENT:
		return sysctl ? "check the name against 'sysctl -a'"
			      : "check the module is loaded and has that parameter (ls /sys/module/MODULE/parameters)";
	case EACCES:
	case EPERM:
		return sysctl ? "run as root" : "the parameter is read-only at runtime or needs root; set it when loading the module or on the kernel command line";
	case EINVAL:
		return "the kernel refused the value; check its allowed range";
	default:
		return "check the knob";
	}
}

static int read_value(const char *path, char **ret)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	char *buf;
	size_t len;
	int r;

	if (fd < 0)
		return -errno;
	/* a value of KNOB_VALUE_MAX bytes or more is not one of ours */
	r = read_full_fd(fd, KNOB_VALUE_MAX - 1, &buf, &len);
	if (r < 0)
		return r;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	buf[len] = '\0';
	*ret = buf;
	return 0;
}

static int write_value(const char *path, const char *value)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_TRUNC);
	size_t len = strlen(value);

	if (fd < 0)
		return -errno;
	/* one write(): sysctl and sysfs parse what arrives in a single call */
	ssize_t n = write(fd, value, len);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	return 0;
}

static int journal_path(const char *state_dir, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", state_dir, KNOBS_JOURNAL);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int journal_write(struct knobs_session *s, struct sb_error *err)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	char path[4096];
	const char *text;
	int r;

	if (!o || !a) {
		json_object_put(o);
		json_object_put(a);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	json_object_object_add(o, "schema", json_object_new_string(JOURNAL_SCHEMA));
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	for (size_t i = 0; i < s->n; i++) {
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "name", json_object_new_string(s->items[i].name));
		json_object_object_add(e, "original", json_object_new_string(s->items[i].original));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "knobs", a);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	journal_path(s->state_dir, path, sizeof(path));
	r = text ? atomic_file_write(path, text, strlen(text), 0600, err) : sb_error_set(err, -ENOMEM, "out of memory");
	json_object_put(o);
	return r;
}

/*
 * Reads the journal at path: it must be ours (root writes every value it
 * names), and small. -ENOENT when there is none.
 */
static int journal_read(const char *path, struct json_object **ret, struct sb_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ struct json_object *o = NULL;
	struct json_object *a;
	struct stat st;
	size_t len = 0;
	int r;

	if (fd < 0)
		return errno == ENOENT ? -ENOENT : sb_error_set(err, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return sb_error_set(err, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || !knobs_owned_safely(&st, false))
		return sb_error_set(err, -EPERM,
				    "%s: a knob journal must be a regular file that belongs to you and only you may write; it is not restored: check it, restore the knobs it names by hand, then delete it",
				    path);
	r = read_full_fd(fd, JOURNAL_MAX, &buf, &len);
	if (r == -EFBIG)
		return sb_error_set(err, -EFBIG, "%s: the knob journal is larger than %d bytes; restore the knobs it names by hand, then delete it",
				    path, JOURNAL_MAX);
	if (r == -ENOMEM)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (r < 0)
		return sb_error_set(err, r, "%s: %s", path, strerror(-r));
	if (json_parse_text(buf, len, KNOBS_JSON_MAX_DEPTH, 0, &o, NULL) < 0 || !json_object_object_get_ex(o, "knobs", &a) ||
	    !json_object_is_type(a, json_type_array))
		return sb_error_set(err, -EBADMSG,
				    "%s: the knob journal is unreadable; restore the knobs it names by hand, then delete it",
				    path);
	*ret = TAKE_PTR(o);
	return 0;
}

/* Restores state_dir's journal and removes it; the caller holds both locks. Returns the knobs restored. */
static int journal_restore(const char *state_dir, const char *root, struct sb_error *err)
{
	_cleanup_json_ struct json_object *o = NULL;
	struct json_object *a;
	char path[4096], kpath[4096];
	int r, restored = 0, failed = 0;
	struct sb_error first = {};

	journal_path(state_dir, path, sizeof(path));
	r = journal_read(path, &o, err);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	json_object_object_get_ex(o, "knobs", &a);
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *e = json_object_array_get_idx(a, i), *n, *v;
		if (!json_object_object_get_ex(e, "name", &n) || !json_object_object_get_ex(e, "original", &v) ||
		    !json_object_is_type(n, json_type_string) || !json_object_is_type(v, json_type_string))
			continue;
		const char *name = json_object_get_string(n);
		/* the path comes from the name, never from the file */
		r = knobs_path(root, name, kpath, sizeof(kpath));
		if (r >= 0)
			r = write_value(kpath, json_object_get_string(v));
		if (r < 0) {
			if (!failed++)
				sb_error_set(&first, r, "knob %s: restoring \"%.64s\" to %s failed: %s", name,
					     json_object_get_string(v), kpath, strerror(-r));
			continue;
		}
		restored++;
	}
	if (failed) {
		if (err) {
			*err = first;
			sb_error_prefix(err, "%s: %d knob(s) could not be restored; the journal stays", path, failed);
		}
		return first.code;
	}
	if (unlink(path) < 0 && errno != ENOENT)
		return sb_error_set(err, -errno, "%s: cannot remove the knob journal: %s", path, strerror(errno));
	return restored;
}

/* With the host-wide lock held: restores state_dir's journal unless a live run holds that directory. */
static int recover_dir(const char *state_dir, const char *root, struct sb_error *err)
{
	_cleanup_close_ int lock_fd = -1;
	char path[4096];
	int r;

	journal_path(state_dir, path, sizeof(path));
	if (access(path, F_OK) < 0)
		return 0;
	r = knobs_lock_state_dir(state_dir, false, &lock_fd, err);
	if (r < 0)
		return r;
	return journal_restore(state_dir, root, err);
}

/*
 * With the host-wide lock just taken: the record says a run died holding
 * it; restore what it left set (its journal), unless that is own_dir, which
 * the caller handles. A directory that is gone or busy is left alone.
 */
static int recover_stale(const char *root, const struct knobs_holder *stale, const char *own_dir, struct sb_error *err)
{
	char own[PATH_MAX], who[PATH_MAX + 128];
	int r;

	if (!*stale->state_dir)
		return 0;
	if (own_dir && realpath(own_dir, own) && !strcmp(own, stale->state_dir))
		return 0;
	r = recover_dir(stale->state_dir, root, err);
	if (r == -EBUSY || r == -ENOENT)
		return 0;
	if (r < 0) {
		knobs_holder_describe(stale, who, sizeof(who));
		return sb_error_prefix(err, "knobs: a run that ended without restoring its knobs (%s) left them set", who);
	}
	return r;
}

static void session_free(struct knobs_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->items[i].name);
		free(s->items[i].original);
		free(s->items[i].current);
	}
	free(s->items);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	if (s->host_fd >= 0)
		close(s->host_fd);
	free(s->state_dir);
	free(s->root);
	free(s);
}

/* Before any knob changed: nothing to restore, so the next holder must not take us for dead. */
static int session_abort(struct knobs_session *s, int r)
{
	knobs_holder_clear(s->host_fd);
	session_free(s);
	return r;
}

int knobs_begin(const char *state_dir, const struct knobs_options *o, const struct spec_knobs *all,
		struct knobs_session **ret, struct sb_error *err)
{
	static const struct knobs_options defaults = {};
	struct knobs_session *s;
	struct knobs_holder stale;
	bool had_stale;
	char path[4096];
	int r;

	if (!o)
		o = &defaults;
	*ret = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return sb_error_set(err, -ENOMEM, "out of memory");
	s->lock_fd = s->host_fd = -1;
	s->state_dir = strdup(state_dir);
	s->root = strdup(o->root && *o->root ? o->root : "/");
	s->items = calloc(all->n ? all->n : 1, sizeof(*s->items));
	if (!s->state_dir || !s->root || !s->items) {
		session_free(s);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	if (all->n == 0) { /* nothing to change: no lock, no journal */
		*ret = s;
		return 0;
	}
	r = knobs_host_lock_take(o, &s->host_fd, &stale, &had_stale, err);
	if (r < 0) {
		session_free(s);
		return r;
	}
	if (had_stale) {
		r = recover_stale(s->root, &stale, state_dir, err);
		if (r < 0) {
			session_free(s); /* the record stays for the next run to try again */
			return r;
		}
	}
	r = knobs_lock_state_dir(state_dir, false, &s->lock_fd, err);
	if (r < 0)
		return session_abort(s, r);
	r = knobs_holder_write(s->host_fd, o->run_id, state_dir);
	if (r < 0) {
		sb_error_set(err, r, "the host-wide knob lock: cannot write its record: %s", strerror(-r));
		return session_abort(s, r);
	}
	/* a journal left by a run that died: put those values back first */
	r = journal_restore(state_dir, s->root, err);
	if (r < 0)
		return session_abort(s, r);
	for (size_t i = 0; i < all->n; i++) {
		const char *name = all->items[i].name;
		bool dup = false;
		for (size_t j = 0; j < s->n; j++)
			dup |= !strcmp(s->items[j].name, name);
		if (dup)
			continue;
		r = knobs_path(s->root, name, path, sizeof(path));
		if (r < 0)
			return session_abort(s, sb_error_set(err, r, "knob %s: not a valid knob name", name));
		s->items[s->n].name = strdup(name);
		if (!s->items[s->n].name)
			return session_abort(s, sb_error_set(err, -ENOMEM, "out of memory"));
		r = read_value(path, &s->items[s->n].original);
		if (r < 0) {
			sb_error_set(err, r, "knob %s: cannot read %s: %s; %s", name, path, strerror(-r), knob_fix(name, -r));
			free(s->items[s->n].name);
			return session_abort(s, r);
		}
		s->n++;
		if (access(path, W_OK) < 0) {
			r = -errno;
			sb_error_set(err, r, "knob %s: %s is not writable: %s; %s", name, path, strerror(-r),
				     knob_fix(name, -r));
			return session_abort(s, r);
		}
	}
	r = journal_write(s, err);
	if (r < 0)
		return session_abort(s, r);
	*ret = s;
	return 0;
}

static struct knob_entry *entry_find(struct knobs_session *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->items[i].name, name))
			return &s->items[i];
	return NULL;
}

static int entry_write(struct knobs_session *s, struct knob_entry *e, const char *value, struct sb_error *err)
{
	char path[4096];
	int r;

	if (e->current ? !strcmp(e->current, value) : !strcmp(e->original, value))
		return 0;
	r = knobs_path(s->root, e->name, path, sizeof(path));
	if (r < 0)
		return sb_error_set(err, r, "knob %s: not a valid knob name", e->name);
	r = write_value(path, value);
	if (r < 0)
		return sb_error_set(err, r, "knob %s: writing \"%.64s\" to %s failed: %s; %s", e->name, value, path,
				    strerror(-r), knob_fix(e->name, -r));
	char *c = strdup(value);
	if (!c)
		return sb_error_set(err, -ENOMEM, "out of memory");
	free(e->current);
	e->current = c;
	return 0;
}

int knobs_set_arm(struct knobs_session *s, const struct spec_knobs *arm, struct sb_error *err)
{
	int r;

	for (size_t i = 0; i < arm->n; i++)
		if (!entry_find(s, arm->items[i].name))
			return sb_error_set(err, -EINVAL, "knob %s: not journaled at the start of the run",
					    arm->items[i].name);
	for (size_t i = 0; i < s->n; i++) {
		const char *want = s->items[i].original;
		for (size_t j = 0; j < arm->n; j++)
			if (!strcmp(arm->items[j].name, s->items[i].name))
				want = arm->items[j].value;
		r = entry_write(s, &s->items[i], want, err);
		if (r < 0)
			return r;
	}
	return 0;
}

int knobs_end(struct knobs_session *s, struct sb_error *err)
{
	char path[4096];
	int ret = 0;

	if (!s)
		return 0;
	for (size_t i = 0; i < s->n; i++) {
		struct sb_error e = {};
		int r = entry_write(s, &s->items[i], s->items[i].original, &e);
		if (r < 0 && ret == 0) {
			ret = r;
			if (err)
				*err = e;
		}
	}
	if (ret == 0 && s->n) {
		journal_path(s->state_dir, path, sizeof(path));
		if (unlink(path) < 0 && errno != ENOENT)
			ret = sb_error_set(err, -errno, "%s: cannot remove the knob journal: %s", path, strerror(errno));
	} else if (ret < 0) {
		sb_error_prefix(err, "restoring knobs (the journal in %s stays for the next start)", s->state_dir);
	}
	if (ret == 0) /* else the record keeps naming the journal for the next holder */
		knobs_holder_clear(s->host_fd);
	session_free(s);
	return ret;
}


int knobs_recover(const char *state_dir, const char *root, struct sb_error *err)
{
	_cleanup_close_ int host_fd = -1;
	struct knobs_holder stale;
	char path[4096], lock[PATH_MAX], who[PATH_MAX + 128];
	bool own;
	int r, restored = 0;

	journal_path(state_dir, path, sizeof(path));
	own = access(path, F_OK) == 0;
	/* without a journal of our own this is a courtesy to a dead run elsewhere: any obstacle ends it */
	r = knobs_host_lock_open(root, own, &host_fd, lock, sizeof(lock), own ? err : NULL);
	if (r < 0)
		return own ? r : 0;
	if (flock(host_fd, LOCK_EX | LOCK_NB) < 0) {
		if (!own)
			return 0;
		if (errno != EWOULDBLOCK)
			return sb_error_set(err, -errno, "%s: cannot lock: %s", lock, strerror(errno));
		if (knobs_holder_read(host_fd, &stale) <= 0 || !knobs_pid_alive(stale.pid))
			memset(&stale, 0, sizeof(stale));
		knobs_holder_describe(&stale, who, sizeof(who));
		return sb_error_set(err, -EBUSY,
				    "%s: not restored now: %s holds the host-wide knob lock %s; the next run with this state directory restores it",
				    path, who, lock);
	}
	r = knobs_holder_read(host_fd, &stale);
	if (r > 0 || r == -EBADMSG) {
		struct sb_error e = {};
		if (r < 0)
			memset(&stale, 0, sizeof(stale));
		r = recover_stale(root, &stale, state_dir, own ? err : &e);
		if (r < 0)
			return own ? r : 0; /* the record stays for the next run to try again */
		restored += r;
	}
	if (own) {
		r = recover_dir(state_dir, root, err);
		if (r < 0)
			return r;
		restored += r;
	}
	knobs_holder_clear(host_fd);
	return restored;
}

int knobs_host_lock(const struct knobs_options *o, int *ret_fd, struct sb_error *err)
{
	static const struct knobs_options defaults = {};
	_cleanup_close_ int fd = -1;
	struct knobs_holder stale;
	bool had_stale;
	int r;

	if (!o)
		o = &defaults;
	r = knobs_host_lock_take(o, &fd, &stale, &had_stale, err);
	if (r < 0)
		return r;
	if (had_stale) {
		r = recover_stale(o->root, &stale, NULL, err);
		if (r < 0)
			return r;
	}
	r = knobs_holder_write(fd, o->run_id, NULL);
	if (r < 0)
		return sb_error_set(err, r, "the host-wide knob lock: cannot write its record: %s", strerror(-r));
	*ret_fd = TAKE_FD(fd);
	return 0;
}
