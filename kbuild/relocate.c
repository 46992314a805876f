// SPDX-License-Identifier: GPL-2.0-or-later
#include "relocate.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic-file.h"
#include "fileio.h"
#include "macro.h"
#include "strbuf.h"

#define DEP_MAX (16u << 20)

/* nftw() has no userdata: one relocation at a time (the build holds its entry's lock) */
static struct {
	const char *old, *new;
	unsigned changed;
	int error;
	struct sb_error *err;
} walk;

static bool is_dep_file(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	return base[0] == '.' && ((n > 4 && !strcmp(base + n - 4, ".cmd")) || (n > 2 && !strcmp(base + n - 2, ".d")));
}

static int relocate_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	_cleanup_free_ char *text = NULL, *out = NULL;
	_cleanup_strbuf_ struct strbuf b = {};
	size_t len, old_len = strlen(walk.old);
	struct timespec times[2];

	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode) || !is_dep_file(path))
		return 0;
	if ((walk.error = read_full_file(path, DEP_MAX, &text, &len, walk.err)) < 0)
		return 1;
	if (!strstr(text, walk.old))
		return 0;
	for (const char *p = text, *hit; *p; p = hit + old_len) {
		hit = strstr(p, walk.old);
		if (!hit) {
			strbuf_append(&b, p);
			break;
		}
		strbuf_append_mem(&b, p, (size_t)(hit - p));
		strbuf_append(&b, walk.new);
	}
	if (!(out = strbuf_steal(&b))) {
		walk.error = sb_error_set(walk.err, -ENOMEM, "out of memory");
		return 1;
	}
	times[0] = st->st_atim;
	times[1] = st->st_mtim;
	if ((walk.error = atomic_file_write(path, out, strlen(out), st->st_mode & 07777, walk.err)) < 0)
		return 1;
	/* the same time as before: only the names changed, nothing make should see as new */
	if (utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) < 0) {
		walk.error = sb_error_set(walk.err, -errno, "%s: %s", path, strerror(errno));
		return 1;
	}
	walk.changed++;
	return 0;
}

int kbuild_relocate_tools(const char *tree, const char *old, unsigned *n, struct sb_error *err)
{
	_cleanup_free_ char *abs_tree = realpath(tree, NULL), *abs_old = realpath(old, NULL), *tools = NULL,
			    *old_slash = NULL, *new_slash = NULL;
	struct stat st;

	if (!abs_tree || !abs_old)
		return sb_error_set(err, -errno, "%s: %s", abs_tree ? old : tree, strerror(errno));
	if (asprintf(&tools, "%s/tools", abs_tree) < 0 || asprintf(&old_slash, "%s/", abs_old) < 0 ||
	    asprintf(&new_slash, "%s/", abs_tree) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (n)
		*n = 0;
	if (stat(tools, &st) < 0)
		return 0;
	/* with the slash: /a/tree/ is not a prefix of /a/tree2/ */
	walk.old = old_slash;
	walk.new = new_slash;
	walk.changed = 0;
	walk.error = 0;
	walk.err = err;
	if (nftw(tools, relocate_one, 16, FTW_PHYS) < 0)
		return sb_error_set(err, -errno, "%s: %s", tools, strerror(errno));
	if (walk.error < 0)
		return walk.error;
	if (n)
		*n = walk.changed;
	return 0;
}
