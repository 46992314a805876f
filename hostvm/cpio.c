// SPDX-License-Identifier: GPL-2.0-or-later
/* cpio newc writer for the host VM's initramfs. */
#include "cpio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

#define CPIO_MAX_FILE (256u << 20)

struct cpio {
	int fd;
	uint64_t offset;
	uint32_t ino;
	int failed; /* a write failed: the archive is unusable */
	int finished;
};

int cpio_new(int fd, struct cpio **ret)
{
	struct cpio *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->fd = fd;
	c->ino = 1;
	*ret = c;
	return 0;
}

void cpio_free(struct cpio *c)
{
	free(c);
}

static int put(struct cpio *c, const void *buf, size_t len, struct sb_error *err)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(c->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			c->failed = 1;
			return sb_error_set(err, n < 0 ? -errno : -EIO, "writing the initramfs: %s",
					    n < 0 ? strerror(errno) : "short write");
		}
		p += n;
		len -= (size_t)n;
		c->offset += (uint64_t)n;
	}
	return 0;
}

static int pad4(struct cpio *c, struct sb_error *err)
{
	static const char zero[4];
	size_t n = (size_t)((4 - (c->offset & 3)) & 3);

	return n ? put(c, zero, n, err) : 0;
}

static int header(struct cpio *c, const char *name, mode_t mode, uint64_t size, unsigned rmajor, unsigned rminor,
		  struct sb_error *err)
{
	char h[111];
	size_t namesize = strlen(name) + 1;
	int k;

	if (c->failed || c->finished)
		return sb_error_set(err, -EINVAL, "initramfs: the archive is %s", c->failed ? "broken" : "finished");
	if (!*name || name[0] == '/' || namesize > 4096)
		return sb_error_set(err, -EINVAL, "initramfs: '%.200s' is not a relative entry name", name);
	if (size > UINT32_MAX)
		return sb_error_set(err, -EFBIG, "initramfs: %s is larger than cpio newc's 4 GiB", name);
	snprintf(h, sizeof(h), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", c->ino++, (unsigned)mode,
		 0u, 0u, 1u, 0u, (unsigned)size, 0u, 0u, rmajor, rminor, (unsigned)namesize, 0u);
	k = put(c, h, 110, err);
	if (k >= 0)
		k = put(c, name, namesize, err);
	if (k >= 0)
		k = pad4(c, err);
	return k;
}

int cpio_add_dir(struct cpio *c, const char *name, mode_t perm, struct sb_error *err)
{
	return header(c, name, S_IFDIR | (perm & 07777), 0, 0, 0, err);
}

int cpio_add_data(struct cpio *c, const char *name, mode_t perm, const void *data, size_t len, struct sb_error *err)
{
	int k = header(c, name, S_IFREG | (perm & 07777), len, 0, 0, err);

	if (k >= 0 && len)
		k = put(c, data, len, err);
	if (k >= 0)
		k = pad4(c, err);
	return k;
}

int cpio_add_file(struct cpio *c, const char *name, mode_t perm, const char *path, struct sb_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t got = 0;
	int r;

	if (fd < 0)
		return sb_error_set(err, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return sb_error_set(err, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > CPIO_MAX_FILE)
		return sb_error_set(err, -EINVAL, "%s: not a regular file of at most 256 MiB", path);
	r = read_full_fd(fd, CPIO_MAX_FILE, &buf, &got);
	if (r == -EFBIG)
		return sb_error_set(err, r, "%s: grew past 256 MiB while read", path);
	if (r < 0)
		return sb_error_set(err, r, "%s: %s", path, strerror(-r));
	return cpio_add_data(c, name, perm, buf, got, err);
}

int cpio_add_chardev(struct cpio *c, const char *name, mode_t perm, unsigned major, unsigned minor,
		     struct sb_error *err)
{
	return header(c, name, S_IFCHR | (perm & 07777), 0, major, minor, err);
}

int cpio_finish(struct cpio *c, struct sb_error *err)
{
	static const char zero[512];
	int k = header(c, "TRAILER!!!", 0, 0, 0, 0, err);

	c->finished = 1;
	/* round up to 512 bytes, as cpio(1) does */
	if (k >= 0 && (c->offset & 511))
		k = put(c, zero, (size_t)(512 - (c->offset & 511)), err);
	return k;
}
