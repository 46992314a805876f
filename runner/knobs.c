// SPDX-License-Identifier: GPL-2.0-or-later
/* Knobs set for a run, journaled before any change, restored after. */
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
#include "macro.h"

#define KNOB_VALUE_MAX 4096
#define JOURNAL_SCHEMA "snapbench.knobs/1"

struct knob_entry {
	char *name;
	char *original;
	char *current;   /* what we last wrote; NULL: original in place */
};

struct knobs_session {
	char *state_dir;
	char *root;
	int lock_fd;
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
	char buf[KNOB_VALUE_MAX + 1];
	size_t len = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == sizeof(buf) - 1)
			return -EFBIG;
	}
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	buf[len] = '\0';
	*ret = strdup(buf);
	return *ret ? 0 : -ENOMEM;
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

static int lock_state_dir(const char *state_dir, bool wait, int *ret, struct sb_error *err)
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
					    "%s: another snapbench run is changing knobs right now; wait for it to end, or run without knobs",
					    path);
		return sb_error_set(err, -e, "%s: cannot lock: %s", path, strerror(e));
	}
	*ret = fd;
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
	free(s->state_dir);
	free(s->root);
	free(s);
}

int knobs_begin(const char *state_dir, const char *root, const struct spec_knobs *all,
		struct knobs_session **ret, struct sb_error *err)
{
	struct knobs_session *s;
	char path[4096];
	int r;

	*ret = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return sb_error_set(err, -ENOMEM, "out of memory");
	s->lock_fd = -1;
	s->state_dir = strdup(state_dir);
	s->root = strdup(root && *root ? root : "/");
	s->items = calloc(all->n ? all->n : 1, sizeof(*s->items));
	if (!s->state_dir || !s->root || !s->items) {
		session_free(s);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	if (all->n == 0) { /* nothing to change: no lock, no journal */
		*ret = s;
		return 0;
	}
	r = lock_state_dir(state_dir, false, &s->lock_fd, err);
	if (r < 0) {
		session_free(s);
		return r;
	}
	/* a journal left by a run that died: put those values back first */
	journal_path(state_dir, path, sizeof(path));
	if (access(path, F_OK) == 0) {
		session_free(s);
		r = knobs_recover(state_dir, root, err);
		if (r < 0)
			return r;
		return knobs_begin(state_dir, root, all, ret, err);
	}
	for (size_t i = 0; i < all->n; i++) {
		const char *name = all->items[i].name;
		bool dup = false;
		for (size_t j = 0; j < s->n; j++)
			dup |= !strcmp(s->items[j].name, name);
		if (dup)
			continue;
		r = knobs_path(s->root, name, path, sizeof(path));
		if (r < 0) {
			session_free(s);
			return sb_error_set(err, r, "knob %s: not a valid knob name", name);
		}
		s->items[s->n].name = strdup(name);
		if (!s->items[s->n].name) {
			session_free(s);
			return sb_error_set(err, -ENOMEM, "out of memory");
		}
		r = read_value(path, &s->items[s->n].original);
		if (r < 0) {
			sb_error_set(err, r, "knob %s: cannot read %s: %s; %s", name, path, strerror(-r), knob_fix(name, -r));
			free(s->items[s->n].name);
			session_free(s);
			return r;
		}
		if (access(path, W_OK) < 0) {
			r = -errno;
			sb_error_set(err, r, "knob %s: %s is not writable: %s; %s", name, path, strerror(-r),
				     knob_fix(name, -r));
			s->n++;
			session_free(s);
			return r;
		}
		s->n++;
	}
	if (s->n) {
		r = journal_write(s, err);
		if (r < 0) {
			session_free(s);
			return r;
		}
	}
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
	session_free(s);
	return ret;
}

int knobs_recover(const char *state_dir, const char *root, struct sb_error *err)
{
	_cleanup_close_ int lock_fd = -1;
	struct json_object *o = NULL, *a;
	char path[4096], kpath[4096];
	int r, restored = 0, failed = 0;
	struct sb_error first = {};

	journal_path(state_dir, path, sizeof(path));
	if (access(path, F_OK) < 0)
		return 0;
	r = lock_state_dir(state_dir, false, &lock_fd, err);
	if (r < 0)
		return r;
	o = json_object_from_file(path);
	if (!o || !json_object_object_get_ex(o, "knobs", &a) || !json_object_is_type(a, json_type_array)) {
		json_object_put(o);
		return sb_error_set(err, -EBADMSG,
				    "%s: the knob journal is unreadable; restore the knobs it names by hand, then delete it",
				    path);
	}
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
	json_object_put(o);
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
