// SPDX-License-Identifier: GPL-2.0-or-later
/* Knobs set for a run, journaled before any change, restored after; their locks are knobs-lock.c's. */
#include "knobs.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mntent.h>
#include <sys/file.h>
#include <sys/mount.h>
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
#define DEBUGFS_DIR "sys/kernel/debug"

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
	if (!strncmp(name, "debugfs:", 8)) {
		n = snprintf(buf, len, "%s%s%s/%s", r, sep, DEBUGFS_DIR, name + 8);
	} else if (!strncmp(name, "sysctl:", 7)) {
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

static bool is_debugfs(const char *name)
{
	return !strncmp(name, "debugfs:", 8);
}

static bool real_root(const char *root)
{
	return !root || !*root || !strcmp(root, "/");
}

/* What a debugfs file needs, for the message when it is missing; NULL: nothing known. */
static const char *debugfs_feature(const char *rel)
{
	static const struct {
		const char *prefix, *needs;
	} features[] = {
		{ "sched/numa_balancing/",
		  "the NUMA-balancing scan knobs are in debugfs from Linux 5.13 (older kernels have them as sysctl:kernel.numa_balancing_scan_*) and need CONFIG_NUMA_BALANCING (and CONFIG_SCHED_DEBUG, on kernels that have that option)" },
		{ "sched/preempt", "it needs CONFIG_PREEMPT_DYNAMIC" },
		{ "sched/", "the scheduler's debugfs files need CONFIG_SCHED_DEBUG on kernels that have that option (before 5.13 they were sysctl:kernel.sched_*)" },
		{ "tracing/", "tracing/ is tracefs, which needs CONFIG_TRACING; a knob there is better a file of /sys/kernel/tracing" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(features); i++)
		if (!strncmp(rel, features[i].prefix, strlen(features[i].prefix)))
			return features[i].needs;
	return NULL;
}

/*
 * A sysfs or debugfs file of choices (a module parameter such as
 * pcie_aspm.policy's "[default] performance powersave", debugfs
 * sched/preempt's "none voluntary (full)") reads as the list with the
 * selected word bracketed, but takes the bare word: keep that word, so that
 * the value journaled is one the file accepts back. Only a list of two or
 * more plain words with exactly one bracketed is taken for one.
 */
static void choice_selected(char *v)
{
	static const char word_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-";
	const char *sel = NULL;
	size_t sel_len = 0;
	int words = 0;

	for (const char *p = v; *p;) {
		size_t n;

		p += strspn(p, " \t");
		if (!*p)
			break;
		n = strcspn(p, " \t");
		words++;
		if (n >= 3 && ((p[0] == '[' && p[n - 1] == ']') || (p[0] == '(' && p[n - 1] == ')'))) {
			if (sel || strspn(p + 1, word_chars) != n - 2)
				return;
			sel = p + 1;
			sel_len = n - 2;
		} else if (strspn(p, word_chars) != n) {
			return;
		}
		p += n;
	}
	if (words < 2 || !sel)
		return;
	memmove(v, sel, sel_len);
	v[sel_len] = '\0';
}

/* A knob's value, without its trailing newline; choices: as choice_selected() reads them. */
static int read_value(const char *path, bool choices, char **ret)
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
	if (choices && !memchr(buf, '\n', len))
		choice_selected(buf);
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

/* The kernel's lockdown mode under root ("integrity"), or "" when it has none or it cannot be read. */
static void lockdown_mode(const char *root, char *buf, size_t len)
{
	_cleanup_free_ char *v = NULL;
	char path[4096];

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/sys/kernel/security/lockdown", real_root(root) ? "" : root);
	if (read_value(path, true, &v) == 0 && strcmp(v, "none"))
		snprintf(buf, len, "%.32s", v);
}

/* The fix for error e on knob name, in buf (which it returns). */
static const char *knob_fix(const char *root, const char *name, int e, char *buf, size_t len)
{
	bool sysctl = !strncmp(name, "sysctl:", 7);
	char mode[40];

	if (is_debugfs(name)) {
		const char *rel = name + 8, *needs = debugfs_feature(rel), *slash = strrchr(rel, '/');

		switch (e) {
		case ENOENT:
		case ENOTDIR:
			if (needs)
				snprintf(buf, len, "%s", needs);
			else
				snprintf(buf, len, "no such file: check the path against 'ls /sys/kernel/debug/%.*s'",
					 slash ? (int)(slash - rel) : 0, rel);
			return buf;
		case EACCES:
		case EPERM:
			lockdown_mode(root, mode, sizeof(mode));
			if (*mode)
				snprintf(buf, len,
					 "the kernel is locked down (%s), which forbids debugfs files that can be written; boot with lockdown=none (or without Secure Boot's lockdown), or drop the knob",
					 mode);
			else
				snprintf(buf, len,
					 "run as root; as root, check whether the kernel is locked down (cat /sys/kernel/security/lockdown), which forbids writable debugfs files");
			return buf;
		}
	}
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

/*
 * Where debugfs is mounted, from root's /proc/self/mounts: 1 when on
 * /sys/kernel/debug, 0 when not (other: its mount point elsewhere, or "").
 */
static int debugfs_mounted(const char *root, char *other, size_t len)
{
	char path[4096], line[4096];
	struct mntent m;
	FILE *f;
	int found = 0;

	other[0] = '\0';
	snprintf(path, sizeof(path), "%s/proc/self/mounts", real_root(root) ? "" : root);
	f = setmntent(path, "re");
	if (!f)
		return -errno;
	/* getmntent_r() drops what does not fit in line: a mount table is bounded here */
	while (!found && getmntent_r(f, &m, line, sizeof(line))) {
		if (strcmp(m.mnt_type, "debugfs"))
			continue;
		if (!strcmp(m.mnt_dir, "/" DEBUGFS_DIR))
			found = 1;
		else if (!other[0])
			snprintf(other, len, "%s", m.mnt_dir);
	}
	endmntent(f);
	return found;
}

/*
 * A debugfs knob needs debugfs on /sys/kernel/debug. On the real root a
 * debugfs that is not mounted is mounted there, as the probes mount
 * tracefs (bpf/probe-features.c): it is what a host without systemd's
 * sys-kernel-debug.mount lacks, and it stays mounted, as it would be on
 * any other host. A test root is never mounted on.
 */
static int debugfs_ready(const char *root, const char *name, struct sb_error *err)
{
	static const char how[] = "mount it as root with 'mount -t debugfs debugfs /sys/kernel/debug' (scripts/host-setup does)";
	char other[1024], elsewhere[1100] = "", dir[4096];
	struct stat st;
	int r;

	r = debugfs_mounted(root, other, sizeof(other));
	if (r < 0)
		return sb_error_set(err, r, "knob %s: cannot tell whether debugfs is mounted: %s/proc/self/mounts: %s; mount /proc",
				    name, real_root(root) ? "" : root, strerror(-r));
	if (r > 0)
		return 0;
	if (*other)
		snprintf(elsewhere, sizeof(elsewhere), " (it is mounted on %s, which knobs do not use)", other);
	snprintf(dir, sizeof(dir), "%s/%s", real_root(root) ? "" : root, DEBUGFS_DIR);
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return sb_error_set(err, -ENOENT,
				    "knob %s: debugfs is not mounted and %s does not exist: this kernel lacks CONFIG_DEBUG_FS; boot one with it, or drop the knob",
				    name, dir);
	if (!real_root(root))
		return sb_error_set(err, -ENOENT, "knob %s: debugfs is not mounted on %s%s; %s", name, dir, elsewhere, how);
	if (mount("debugfs", dir, "debugfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return sb_error_set(err, -errno, "knob %s: debugfs is not mounted on %s%s and mounting it failed: %s; %s",
				    name, dir, elsewhere, strerror(errno), how);
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
	bool debugfs_ok = false;
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
		struct sb_error why = {};
		/* the path comes from the name, never from the file */
		r = knobs_path(root, name, kpath, sizeof(kpath));
		if (r < 0)
			sb_error_set(&why, r, "knob %s: not a valid knob name", name);
		else if (is_debugfs(name) && !debugfs_ok && (r = debugfs_ready(root, name, &why)) >= 0)
			debugfs_ok = true; /* after a reboot it may not be mounted yet */
		if (r >= 0)
			r = write_value(kpath, json_object_get_string(v));
		if (r < 0) {
			if (failed++)
				continue;
			if (why.code)
				first = why;
			else
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

/*
 * A knob of the session (once, however many arms set it): its original
 * value read, and checked writable, before any knob changes. debugfs is
 * made ready for the first debugfs knob (*debugfs_ok).
 */
static int session_add(struct knobs_session *s, const char *name, bool *debugfs_ok, struct sb_error *err)
{
	char path[4096], fix[512];
	int r;

	for (size_t j = 0; j < s->n; j++)
		if (!strcmp(s->items[j].name, name))
			return 0;
	r = knobs_path(s->root, name, path, sizeof(path));
	if (r < 0)
		return sb_error_set(err, r, "knob %s: not a valid knob name", name);
	if (is_debugfs(name) && !*debugfs_ok) {
		r = debugfs_ready(s->root, name, err);
		if (r < 0)
			return r;
		*debugfs_ok = true;
	}
	s->items[s->n].name = strdup(name);
	if (!s->items[s->n].name)
		return sb_error_set(err, -ENOMEM, "out of memory");
	/* sysctls print strings as they are ("[%p]" in kernel.core_pattern is no choice) */
	r = read_value(path, strncmp(name, "sysctl:", 7) != 0, &s->items[s->n].original);
	if (r < 0) {
		sb_error_set(err, r, "knob %s: cannot read %s: %s; %s", name, path, strerror(-r),
			     knob_fix(s->root, name, -r, fix, sizeof(fix)));
		free(s->items[s->n].name);
		return r;
	}
	s->n++;
	if (access(path, W_OK) < 0) {
		r = -errno;
		sb_error_set(err, r, "knob %s: %s is not writable: %s; %s", name, path, strerror(-r),
			     knob_fix(s->root, name, -r, fix, sizeof(fix)));
		return r;
	}
	return 0;
}

int knobs_begin(const char *state_dir, const struct knobs_options *o, const struct spec_knobs *all,
		struct knobs_session **ret, struct sb_error *err)
{
	static const struct knobs_options defaults = {};
	struct knobs_session *s;
	struct knobs_holder stale;
	bool had_stale, debugfs_ok = false;
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
		r = session_add(s, all->items[i].name, &debugfs_ok, err);
		if (r < 0)
			return session_abort(s, r);
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
	char path[4096], fix[512];
	int r;

	if (e->current ? !strcmp(e->current, value) : !strcmp(e->original, value))
		return 0;
	r = knobs_path(s->root, e->name, path, sizeof(path));
	if (r < 0)
		return sb_error_set(err, r, "knob %s: not a valid knob name", e->name);
	r = write_value(path, value);
	if (r < 0)
		return sb_error_set(err, r, "knob %s: writing \"%.64s\" to %s failed: %s; %s", e->name, value, path,
				    strerror(-r), knob_fix(s->root, e->name, -r, fix, sizeof(fix)));
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
