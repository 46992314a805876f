// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbenchd's listening socket: the one systemd passes, or one it creates. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "daemon.h"
#include "listen.h"
#include "macro.h"
#include "mkdir-p.h"

static int socket_from_systemd(struct daemon *d, struct sb_error *err)
{
	char **names = NULL;
	int n = sd_listen_fds_with_names(1, &names), fd = -1;

	if (n < 0)
		return sb_error_set(err, n, "socket activation: %s", strerror(-n));
	if (n == 0)
		return 0;
	for (int i = 0; i < n; i++) {
		int cand = SD_LISTEN_FDS_START + i;
		if (sd_is_socket_unix(cand, SOCK_STREAM, 1, NULL, 0) > 0 && fd < 0)
			fd = cand;
		else
			close(cand); /* not ours to use: one listening unix stream socket is what we serve */
		free(names ? names[i] : NULL);
	}
	free(names);
	if (fd < 0)
		return sb_error_set(err, -EINVAL,
				    "socket activation: none of the %d sockets passed is a listening unix stream socket; check snapbenchd.socket (ListenStream=/run/...)",
				    n);
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		return sb_error_set(err, -errno, "socket activation: fcntl: %s", strerror(errno));
	d->listen_fd = fd;
	d->activated = true;
	return 1;
}

static int socket_create(struct daemon *d, struct sb_error *err)
{
	const char *path = d->cfg.socket_path;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[PATH_MAX];
	_cleanup_close_ int fd = -1;
	int r;

	if (!path || !*path)
		return sb_error_set(err, -EINVAL, "--socket: empty path");
	if (strlen(path) >= sizeof(sa.sun_path))
		return sb_error_set(err, -ENAMETOOLONG, "--socket %s: longer than %zu bytes, the limit of a unix socket path; choose a shorter path",
				    path, sizeof(sa.sun_path) - 1);
	strcpy(sa.sun_path, path);
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		r = mkdir_p(dir, 0755);
		if (r < 0)
			return sb_error_set(err, r, "--socket %s: cannot create directory %s: %s", path, dir, strerror(-r));
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return sb_error_set(err, -errno, "socket: %s", strerror(errno));

	/* a socket file left by a daemon that died: remove it, but never steal a live daemon's */
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return sb_error_set(err, -EEXIST, "--socket %s: exists and is not a socket; remove it or choose another path",
					    path);
		_cleanup_close_ int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return sb_error_set(err, -EADDRINUSE, "--socket %s: another snapbenchd is listening there; stop it first or choose another path",
					    path);
		if (unlink(path) < 0 && errno != ENOENT)
			return sb_error_set(err, -errno, "--socket %s: cannot remove the stale socket: %s", path,
					    strerror(errno));
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return sb_error_set(err, -errno, "--socket %s: bind: %s", path, strerror(errno));
	/* anyone may connect and read; SO_PEERCRED decides who may submit and cancel */
	if (chmod(path, 0666) < 0) {
		r = -errno;
		unlink(path);
		return sb_error_set(err, r, "--socket %s: chmod: %s", path, strerror(-r));
	}
	if (listen(fd, 128) < 0) {
		r = -errno;
		unlink(path);
		return sb_error_set(err, r, "--socket %s: listen: %s", path, strerror(-r));
	}
	d->socket_path = strdup(path);
	d->listen_fd = TAKE_FD(fd);
	return 0;
}

int listen_open(struct daemon *d, struct sb_error *err)
{
	int r;

	r = socket_from_systemd(d, err);
	if (r < 0)
		return r;
	if (r == 0) {
		r = socket_create(d, err);
		if (r < 0)
			return r;
	}
	return 0;
}

void listen_stop(struct daemon *d)
{
	if (d->listen_fd >= 0) {
		close(d->listen_fd);
		d->listen_fd = -1;
	}
}

void listen_close(struct daemon *d)
{
	listen_stop(d);
	if (d->socket_path) {
		unlink(d->socket_path);
		free(d->socket_path);
		d->socket_path = NULL;
	}
}
