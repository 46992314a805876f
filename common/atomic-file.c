// SPDX-License-Identifier: GPL-2.0-or-later
#include "atomic-file.h"

#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fsync_parent_dir(const char *path)
{
	_cleanup_free_ char *copy = strdup(path);
	_cleanup_close_ int dfd = -1;

	if (!copy)
		return -ENOMEM;
	dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fsync(dfd) < 0)
		return -errno;
	return 0;
}

int atomic_file_write(const char *path, const void *data, size_t len, int mode, struct sb_error *err)
{
	const struct atomic_file_piece one = { data, len };

	return atomic_file_write_pieces(path, &one, 1, mode, err);
}

int atomic_file_write_pieces(const char *path, const struct atomic_file_piece *pieces, size_t n, int mode,
			     struct sb_error *err)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
		tmp = NULL;
		return sb_error_set(err, -ENOMEM, "%s: out of memory", path);
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return sb_error_set(err, -errno, "cannot create a temp file beside %s: %s", path, strerror(errno));

	r = 0;
	for (size_t i = 0; i < n && r == 0; i++)
		r = write_all(fd, pieces[i].data, pieces[i].len);
	if (r < 0) {
		sb_error_set(err, r, "cannot write %s: %s%s", tmp, strerror(-r),
			     r == -ENOSPC ? " (free space on that filesystem)" : "");
		goto fail;
	}
	if (fchmod(fd, (mode_t)mode) < 0 || fsync(fd) < 0) {
		r = -errno;
		sb_error_set(err, r, "cannot sync %s: %s", tmp, strerror(-r));
		goto fail;
	}
	if (rename(tmp, path) < 0) {
		r = -errno;
		sb_error_set(err, r, "cannot rename %s to %s: %s", tmp, path, strerror(-r));
		goto fail;
	}
	r = fsync_parent_dir(path);
	if (r < 0)
		return sb_error_set(err, r, "cannot sync the directory of %s: %s", path, strerror(-r));
	return 0;

fail:
	unlink(tmp);
	return r;
}
