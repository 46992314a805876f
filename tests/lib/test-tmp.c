// SPDX-License-Identifier: GPL-2.0-or-later
#include "test-tmp.h"

#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "check.h"

/* Each with the process that made it: a forked child's exit() leaves its parent's alone. */
static struct {
	char path[256];
	pid_t pid;
} dirs[32], mounts[4];
static unsigned n_dirs, n_mounts;
static struct {
	void (*fn)(void);
	pid_t pid;
} exit_fns[8];
static unsigned n_exit_fns;

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int test_rm_rf(const char *path)
{
	if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
		return errno == ENOENT ? 0 : -errno;
	return 0;
}

static void cleanup(void)
{
	pid_t self = getpid();

	for (unsigned i = n_exit_fns; i-- > 0;)
		if (exit_fns[i].pid == self)
			exit_fns[i].fn();
	for (unsigned i = n_mounts; i-- > 0;)
		if (mounts[i].pid == self)
			umount2(mounts[i].path, MNT_DETACH);
	for (unsigned i = 0; i < n_dirs; i++)
		if (dirs[i].pid == self)
			test_rm_rf(dirs[i].path);
}

/* Once, before anything it removes exists: the directories go at exit, also after a failed CHECK. */
void test_tmp_register(void)
{
	static bool registered;

	if (!registered)
		atexit(cleanup);
	registered = true;
}

const char *test_tmpdir(const char *name)
{
	test_tmp_register();
	CHECK(n_dirs < 32);
	snprintf(dirs[n_dirs].path, sizeof(dirs[n_dirs].path), "/tmp/snapbench-test-%s-XXXXXX", name);
	CHECK(mkdtemp(dirs[n_dirs].path));
	dirs[n_dirs].pid = getpid();
	return dirs[n_dirs++].path;
}

const char *test_tmpfs(const char *name, const char *size)
{
	const char *dir = test_tmpdir(name);
	char opts[64];

	CHECK(n_mounts < 4);
	snprintf(opts, sizeof(opts), "size=%s,mode=0755", size);
	if (mount("snapbench-test", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		SKIP_TEST("mounting a tmpfs (%s)", strerror(errno));
	snprintf(mounts[n_mounts].path, sizeof(mounts[0].path), "%s", dir);
	mounts[n_mounts++].pid = getpid();
	return dir;
}

void test_at_exit(void (*fn)(void))
{
	test_tmp_register();
	CHECK(n_exit_fns < 8);
	exit_fns[n_exit_fns].fn = fn;
	exit_fns[n_exit_fns++].pid = getpid();
}
