// SPDX-License-Identifier: GPL-2.0-or-later
#include "check.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mkdir-p.h"

static char dir[] = "/tmp/test-mkdir-p.XXXXXX";

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

/* at exit, also after a failed check */
static void remove_dir(void)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static bool is_dir(const char *path, mode_t mode)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == mode;
}

int main(void)
{
	char path[PATH_MAX + 16], file[300];
	FILE *f;

	umask(022);
	CHECK(mkdtemp(dir));
	atexit(remove_dir);

	/* every missing level, with the mode */
	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	CHECK(mkdir_p(path, 0750) == 0);
	CHECK(is_dir(path, 0750));
	snprintf(path, sizeof(path), "%s/a", dir);
	CHECK(is_dir(path, 0750));

	/* what exists stays as it is; a trailing slash and doubled slashes are fine */
	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	CHECK(mkdir_p(path, 0700) == 0);
	CHECK(is_dir(path, 0750));
	snprintf(path, sizeof(path), "%s/a//b/d/", dir);
	CHECK(mkdir_p(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/a/b/d", dir);
	CHECK(is_dir(path, 0755));

	/* a component that is a file: ENOTDIR, nothing created below it */
	snprintf(file, sizeof(file), "%s/file", dir);
	f = fopen(file, "w");
	CHECK(f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/file/x", dir);
	CHECK(mkdir_p(path, 0755) == -ENOTDIR);

	/* relative paths work from the current directory */
	CHECK(chdir(dir) == 0);
	CHECK(mkdir_p("rel/x", 0755) == 0);
	CHECK(is_dir("rel/x", 0755));

	CHECK(mkdir_p("", 0755) == -ENOENT);
	memset(path, 'a', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	CHECK(mkdir_p(path, 0755) == -ENAMETOOLONG);

	CHECK(chdir("/") == 0);
	printf("ok\n");
	return 0;
}
