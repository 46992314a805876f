// SPDX-License-Identifier: GPL-2.0-or-later
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "strv.h"

int read_full_fd(int fd, size_t max_size, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 4096;
	struct stat st;

	if (max_size >= SIZE_MAX - 1)
		return -EINVAL;
	/* a regular file's size is a good first guess; one byte more sees its end */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size < max_size)
		cap = (size_t)st.st_size + 2;
	if (cap > max_size + 2)
		cap = max_size + 2;

	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			size_t ncap = cap * 2 < max_size + 2 ? cap * 2 : max_size + 2;
			char *nb;

			nb = realloc(buf, ncap);
			if (!nb)
				return -ENOMEM;
			buf = nb;
			cap = ncap;
		} else if (!buf) {
			buf = malloc(cap);
			if (!buf)
				return -ENOMEM;
		}
		/* read at most one byte past the bound, to tell "exactly max" from "more" */
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max_size)
			return -EFBIG;
	}
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	if (ret_len)
		*ret_len = len;
	return 0;
}

/* read_full_fd() with its errors said of path */
static int read_full_fd_named(int fd, const char *path, size_t max_size, char **ret, size_t *ret_len,
			      struct sb_error *err)
{
	int r = read_full_fd(fd, max_size, ret, ret_len);

	if (r == -EFBIG)
		return sb_error_set(err, r, "%s: larger than %zu bytes", path, max_size);
	if (r == -ENOMEM)
		return sb_error_set(err, r, "%s: out of memory", path);
	if (r < 0)
		return sb_error_set(err, r, "%s: cannot read: %s", path, strerror(-r));
	return 0;
}

int read_full_file(const char *path, size_t max_size, char **ret, size_t *ret_len, struct sb_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;

	if (fd < 0)
		return sb_error_set(err, -errno, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		return sb_error_set(err, -EISDIR, "%s: is a directory", path);
	return read_full_fd_named(fd, path, max_size, ret, ret_len, err);
}

const char *file_type_name(mode_t mode)
{
	return S_ISREG(mode)    ? "a regular file"
	       : S_ISDIR(mode)  ? "a directory"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISSOCK(mode) ? "a socket"
	       : S_ISCHR(mode)  ? "a character device"
	       : S_ISBLK(mode)  ? "a block device"
	       : S_ISLNK(mode)  ? "a symbolic link"
				: "not a regular file";
}

int open_regular(const char *path, struct stat *ret_st, struct sb_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;

	if (fd < 0) {
		int r = -errno;
		/* a socket cannot be opened: say what it is rather than "No such device or address" */
		if (r == -ENXIO && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return sb_error_set(err, -EINVAL, "%s: is %s, not a regular file", path, file_type_name(st.st_mode));
		return sb_error_set(err, r, "%s: cannot open: %s", path, r == -EACCES ? "permission denied" : strerror(-r));
	}
	if (fstat(fd, &st) < 0)
		return sb_error_set(err, -errno, "%s: cannot stat: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return sb_error_set(err, -EINVAL, "%s: is %s, not a regular file", path, file_type_name(st.st_mode));
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		return sb_error_set(err, -errno, "%s: %s", path, strerror(errno));
	if (ret_st)
		*ret_st = st;
	return TAKE_FD(fd);
}

int read_regular_file(const char *path, size_t max_size, char **ret, size_t *ret_len, struct sb_error *err)
{
	_cleanup_close_ int fd = open_regular(path, NULL, err);

	if (fd < 0)
		return fd;
	return read_full_fd_named(fd, path, max_size, ret, ret_len, err);
}

int proc_find_fd(pid_t pid, const char *prefix, struct sb_error *err)
{
	char dir[64], link[64 + sizeof(((struct dirent *)0)->d_name)], target[256];
	size_t plen = strlen(prefix), seen = 0;
	struct dirent *e;
	int found = -ENOENT;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d && errno == ENOENT)
		return sb_error_set(err, -ESRCH, "no process %d (%s does not exist)", (int)pid, dir);
	if (!d)
		return sb_error_set(err, -errno, "cannot list %s: %s%s", dir, strerror(errno),
				    errno == EACCES ? " (run as root)" : "");
	while (found < 0 && (e = readdir(d)) && seen++ < 1000000) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (!strncmp(target, prefix, plen))
			found = atoi(e->d_name);
	}
	closedir(d);
	return found;
}

pid_t proc_tgid(pid_t tid)
{
	char path[64], line[256];
	long tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	if (f)
		fclose(f);
	return tgid > 0 ? (pid_t)tgid : -1;
}

int proc_cmdline(pid_t pid, size_t max, char ***ret)
{
	_cleanup_free_ char *buf = malloc(max + 1);
	_cleanup_close_ int fd = -1;
	char path[64], **v = NULL;
	size_t len = 0, n = 0;

	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	while (len < max) {
		ssize_t k = read(fd, buf + len, max - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == ESRCH ? -ENOENT : -errno;
		if (k == 0)
			break;
		len += (size_t)k;
	}
	if (len == 0)
		return -ENOENT;
	if (buf[len - 1] != '\0')
		buf[len++] = '\0'; /* cut at max: close the last argument */
	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\0';
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0, k = 0; k < n; k++, i += strlen(buf + i) + 1)
		if (!(v[k] = strdup(buf + i))) {
			strv_free(v);
			return -ENOMEM;
		}
	*ret = v;
	return 0;
}
