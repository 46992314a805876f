// SPDX-License-Identifier: GPL-2.0-or-later
#include "tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "sha256.h"
#include "spawn.h"
#include "strbuf.h"
#include "strv.h"

#define MAKEFILE_MAX (1024 * 1024)

/* "N" of the Makefile's "NAME = N" line, or NULL (malloc'ed). */
static char *makefile_var(const char *text, const char *name)
{
	size_t nl = strlen(name);

	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		if (n > nl && !strncmp(p, name, nl) && (p[nl] == ' ' || p[nl] == '=')) {
			const char *v = p + nl;
			while (*v == ' ' || *v == '\t')
				v++;
			if (*v == '=') {
				v++;
				while (*v == ' ' || *v == '\t')
					v++;
				return strndup(v, (size_t)(p + n - v));
			}
		}
		p += n;
		if (*p == '\n')
			p++;
	}
	return NULL;
}

/* "6", "12": a Makefile's VERSION and PATCHLEVEL are numbers (an empty one passed the check and failed in make) */
static bool is_number(const char *s)
{
	return s && *s && strspn(s, "0123456789") == strlen(s);
}

int kbuild_tree_check(const char *dir, char **version, struct sb_error *err)
{
	_cleanup_free_ char *makefile = NULL, *text = NULL, *ver = NULL, *patch = NULL, *sub = NULL, *extra = NULL;
	struct sb_error e = {};
	struct stat st;
	char path[PATH_MAX];
	int r;

	if (stat(dir, &st) < 0 && errno == EACCES)
		return sb_error_set(err, -EACCES, "kernel tree %s: permission denied (a directory above it cannot be "
				    "searched); run as a user who can read the tree", dir);
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return sb_error_set(err, -ENOTDIR, "kernel tree %s: %s; give the top directory of a Linux source tree "
				    "(the one holding Makefile, Kconfig and MAINTAINERS)", dir,
				    errno == ENOENT ? "no such directory" : "not a directory");
	if (asprintf(&makefile, "%s/Makefile", dir) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = read_regular_file(makefile, MAKEFILE_MAX, &text, NULL, &e);
	if (r == -EACCES)
		return sb_error_set(err, -EACCES, "kernel tree %s: cannot read its Makefile: permission denied; run as a "
				    "user who can read the tree", dir);
	if (r < 0 && r != -ENOENT)
		return sb_error_set(err, -EINVAL, "kernel tree %s: its Makefile cannot be read (%s); give the top "
				    "directory of a Linux source tree", dir, e.msg);
	if (r < 0 || !is_number(ver = makefile_var(text, "VERSION")) || !is_number(patch = makefile_var(text, "PATCHLEVEL")))
		return sb_error_set(err, -EINVAL, "kernel tree %s: not a Linux source tree (no top Makefile with numeric "
				    "VERSION and PATCHLEVEL); give the top directory of one, such as an unpacked "
				    "linux-source package or a git clone of Linux", dir);
	snprintf(path, sizeof(path), "%s/Kconfig", dir);
	if (access(path, R_OK) < 0)
		return sb_error_set(err, -EINVAL, "kernel tree %s: not a Linux source tree (no Kconfig beside its Makefile); give "
				    "the top directory of one", dir);
	snprintf(path, sizeof(path), "%s/arch/x86/Kconfig", dir);
	if (access(path, R_OK) < 0)
		return sb_error_set(err, -EINVAL, "kernel tree %s: has no arch/x86: snapbench builds x86-64 kernels for its host "
				    "VMs; give a tree with the x86 architecture", dir);
	sub = makefile_var(text, "SUBLEVEL");
	extra = makefile_var(text, "EXTRAVERSION");
	if (version && asprintf(version, "%s.%s%s%s%s", ver, patch, sub && *sub ? "." : "", sub ? sub : "",
				extra ? extra : "") < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

void kbuild_tree_id_done(struct kbuild_tree_id *t)
{
	free(t->id);
	free(t->note);
	*t = (struct kbuild_tree_id){};
}

/* ---- the content hash ---- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Hashes one regular file's content into h, with its length first. */
static int hash_file(struct sha256 *h, int dirfd, const char *name, const char *rel, struct sb_error *err)
{
	/* O_NONBLOCK: a file swapped for a FIFO since it was listed must not hold the hash */
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	char buf[1 << 16];
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return sb_error_set(err, -errno, "%s: cannot read: %s", rel, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return sb_error_set(err, -EINVAL, "%s: became %s while the tree was read", rel, file_type_name(st.st_mode));
	sha256_update(h, &st.st_size, sizeof(st.st_size));
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sb_error_set(err, -errno, "%s: cannot read: %s", rel, strerror(errno));
		if (n == 0)
			return 0;
		sha256_update(h, buf, (size_t)n);
	}
}

/* rel: the directory's path inside the tree ("" at the top), for names in h and messages. */
static int hash_dir(struct sha256 *h, int fd, const char *rel, unsigned depth, struct sb_error *err)
{
	_cleanup_strv_free_ char **names = NULL;
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (depth > 64)
		return sb_error_set(err, -ELOOP, "%s: directories nested deeper than 64", rel);
	if (!(d = fdopendir(fd))) {
		r = -errno;
		close(fd);
		return sb_error_set(err, r, "%s: cannot list: %s", *rel ? rel : ".", strerror(-r));
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && !(depth == 0 && !strcmp(de->d_name, ".git")) &&
		    strv_push(&names, de->d_name) < 0) {
			closedir(d);
			return sb_error_set(err, -ENOMEM, "out of memory");
		}
	/* readdir's order is the file system's: sort for a hash that only the content decides */
	if (names)
		qsort(names, strv_length(names), sizeof(*names), name_cmp);
	for (char **n = names; n && *n && r >= 0; n++) {
		_cleanup_free_ char *sub = NULL;
		struct stat st;

		if (asprintf(&sub, "%s%s%s", rel, *rel ? "/" : "", *n) < 0) {
			r = sb_error_set(err, -ENOMEM, "out of memory");
			break;
		}
		if (fstatat(dirfd(d), *n, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = sb_error_set(err, -errno, "%s: %s", sub, strerror(errno));
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			int sfd = openat(dirfd(d), *n, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
			sha256_update(h, "d", 1);
			sha256_update(h, sub, strlen(sub) + 1);
			r = sfd < 0 ? sb_error_set(err, -errno, "%s: cannot open: %s", sub, strerror(errno))
				    : hash_dir(h, sfd, sub, depth + 1, err);
		} else if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t tl = readlinkat(dirfd(d), *n, target, sizeof(target));
			if (tl < 0) {
				r = sb_error_set(err, -errno, "%s: %s", sub, strerror(errno));
				break;
			}
			sha256_update(h, "l", 1);
			sha256_update(h, sub, strlen(sub) + 1);
			sha256_update(h, target, (size_t)tl);
		} else if (S_ISREG(st.st_mode)) {
			/* the executable bit matters (scripts the build runs); owners and times do not */
			sha256_update(h, st.st_mode & S_IXUSR ? "x" : "f", 1);
			sha256_update(h, sub, strlen(sub) + 1);
			r = hash_file(h, dirfd(d), *n, sub, err);
		}
		/* sockets, fifos and devices have no content a build reads */
	}
	closedir(d);
	return r;
}

int kbuild_tree_hash(const char *dir, char **ret, struct sb_error *err)
{
	struct sha256 h;
	char hex[65];
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	if (fd < 0)
		return sb_error_set(err, -errno, "kernel tree %s: cannot open: %s", dir, strerror(errno));
	sha256_init(&h);
	sha256_update(&h, "snapbench-tree/1", 16);
	r = hash_dir(&h, fd, "", 0, err);
	if (r < 0)
		return sb_error_prefix(err, "kernel tree %s", dir);
	sha256_hex(&h, hex);
	if (asprintf(ret, "sha256:%s", hex) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* ---- git ---- */

struct lines {
	char **v;
};

static void collect_line(void *userdata, const char *line)
{
	struct lines *l = userdata;

	if (strv_length(l->v) < 16) /* a dirty tree needs one line to tell; a bound for a huge status */
		strv_push(&l->v, line);
}

/* Runs git with args in dir; returns its exit status with its first lines in *out. */
static int git(const char *dir, const char *const *args, char ***out, struct sb_error *err)
{
	_cleanup_strv_free_ char **argv = NULL;
	struct lines l = {};
	int r;

	if (strv_push(&argv, "git") < 0 || strv_push(&argv, "-C") < 0 || strv_push(&argv, dir) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	for (const char *const *a = args; *a; a++)
		if (strv_push(&argv, *a) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
	r = kbuild_spawn(&(struct kbuild_spawn){ .argv = argv, .log_fd = -1, .on_line = collect_line, .userdata = &l },
			 err);
	if (r < 0 || r > 0) {
		strv_free(l.v);
		return r;
	}
	*out = l.v;
	return 0;
}

int kbuild_tree_identify(const char *dir, struct kbuild_tree_id *ret, struct sb_error *err)
{
	_cleanup_strv_free_ char **head = NULL, **status = NULL;
	_cleanup_free_ char *hash = NULL;
	struct kbuild_tree_id t = {};
	char dotgit[PATH_MAX];
	int r;

	snprintf(dotgit, sizeof(dotgit), "%s/.git", dir);
	if (access(dotgit, F_OK) == 0) {
		static const char *const rev[] = { "rev-parse", "--verify", "HEAD", NULL };
		static const char *const st[] = { "status", "--porcelain", "--untracked-files=normal", NULL };
		struct sb_error e = {};

		if (git(dir, rev, &head, &e) != 0 || !head || !head[0] || strlen(head[0]) < 40)
			t.note = strdup("git could not name its HEAD commit (not a repository git trusts, or no commit)");
		else if (git(dir, st, &status, &e) != 0)
			t.note = strdup("git status failed there");
		else if (status && status[0])
			t.note = strdup("its work tree has changes or untracked files");
		else if (asprintf(&t.id, "git:%s", head[0]) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
		if (t.id) {
			*ret = t;
			return 0;
		}
	}
	r = kbuild_tree_hash(dir, &hash, err);
	if (r < 0) {
		kbuild_tree_id_done(&t);
		return r;
	}
	t.id = TAKE_PTR(hash);
	*ret = t;
	return 0;
}

/* ---- the copy ---- */

int kbuild_tree_copy(const char *src, const char *dst, int log_fd, struct sb_error *err)
{
	_cleanup_strv_free_ char **argv = NULL;
	DIR *d = opendir(src);
	struct dirent *de;
	size_t fixed;
	int r;

	if (!d)
		return sb_error_set(err, -errno, "kernel tree %s: cannot list: %s", src, strerror(errno));
	if (strv_push(&argv, "cp") < 0 || strv_push(&argv, "-a") < 0 || strv_push(&argv, "--") < 0) {
		closedir(d);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	fixed = strv_length(argv);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, ".git") &&
		    strv_pushf(&argv, "%s/%s", src, de->d_name) < 0) {
			closedir(d);
			return sb_error_set(err, -ENOMEM, "out of memory");
		}
	closedir(d);
	if (strv_length(argv) == fixed)
		return sb_error_set(err, -EINVAL, "kernel tree %s: empty", src);
	if (strv_push(&argv, dst) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = kbuild_spawn(&(struct kbuild_spawn){ .argv = argv, .log_fd = log_fd }, err);
	if (r < 0)
		return r;
	if (r > 0)
		return sb_error_set(err, -EIO, "copying kernel tree %s to %s failed (cp exited with %d; its message is in "
				    "the build log): is there room for a copy of the tree?", src, dst, r);
	return 0;
}
