// SPDX-License-Identifier: GPL-2.0-or-later
#include "run-dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

#include "macro.h"

static int open_lock(const char *run_dir, int flags)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", run_dir, RUN_DIR_OWNER_LOCK) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	int fd = open(path, flags | O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
	return fd < 0 ? -errno : fd;
}

int run_dir_own(const char *run_dir)
{
	int fd = open_lock(run_dir, O_CREAT);

	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
		close(fd);
		return -EBUSY;
	}
	/* a file system without flock (some network shares): the run goes on, unlocked */
	return fd;
}

int run_dir_owned(const char *run_dir)
{
	_cleanup_close_ int fd = open_lock(run_dir, 0);

	if (fd == -ENOENT)
		return 0; /* never owned, or by a snapbench that did not lock it */
	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? 1 : -errno;
	flock(fd, LOCK_UN);
	return 0;
}
