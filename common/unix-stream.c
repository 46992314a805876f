// SPDX-License-Identifier: GPL-2.0-or-later
#include "unix-stream.h"

#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "clock.h"
#include "macro.h"

/* poll() timeout for a deadline: -1 (forever) when there is none. */
static int poll_timeout(uint64_t deadline)
{
	return deadline == UNIX_STREAM_NO_DEADLINE ? -1 : ms_until(deadline);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int unix_stream_connect(const char *path, const char *what, const char *hint, uint64_t deadline,
			struct sb_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	int backoff_ms = 10;

	if (len == 0)
		return sb_error_set(err, -EINVAL, "%s: no path given", what);
	if (len >= sizeof(sa.sun_path))
		return sb_error_set(err, -ENAMETOOLONG,
				    "%s path %s is %zu bytes, longer than the %zu a unix socket allows: "
				    "use a shorter directory",
				    what, path, len, sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, len + 1);

	for (;;) {
		_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		int r;

		if (fd < 0)
			return sb_error_set(err, -errno, "cannot create a unix socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return TAKE_FD(fd);
		r = -errno;
		/*
		 * Missing or refusing: the peer (QEMU, say) has not created or
		 * not yet listens on the socket. Full backlog: it listens but
		 * is busy. Retry.
		 */
		if (r != -ENOENT && r != -ECONNREFUSED && r != -EAGAIN && r != -EINTR)
			return sb_error_set(err, r, "cannot connect to %s %s: %s", what, path, strerror(-r));
		if (deadline != UNIX_STREAM_NO_DEADLINE && ms_until(deadline) == 0)
			return sb_error_set(err, r == -ENOENT ? -ENOENT : -ETIMEDOUT, "cannot connect to %s %s: %s%s%s",
					    what, path, strerror(-r), hint ? "; " : "", hint ? hint : "");
		r = poll_timeout(deadline);
		sleep_ms(r < 0 || backoff_ms < r ? backoff_ms : r);
		if (backoff_ms < 100)
			backoff_ms *= 2;
	}
}

int unix_stream_adopt(int fd, const char *label, struct sb_error *err)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return sb_error_set(err, -errno, "%s: fd %d is not usable: %s", label, fd, strerror(errno));
	return 0;
}

static int wait_fd(int fd, short events, uint64_t deadline, const char *label, const char *what,
		   struct sb_error *err)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int n = poll(&p, 1, poll_timeout(deadline));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return sb_error_set(err, -errno, "%s: poll failed: %s", label, strerror(errno));
		}
		if (n == 0)
			return sb_error_set(err, -ETIMEDOUT, "%s: timed out %s", label, what);
		/* POLLHUP/POLLERR: let the read or write report what happened. */
		return 0;
	}
}

int unix_stream_send(int fd, const void *buf, size_t len, int pass_fd, uint64_t deadline, const char *label,
		     struct sb_error *err)
{
	const char *p = buf;

	while (len > 0) {
		struct iovec iov = { .iov_base = (void *)p, .iov_len = len };
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} control;
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		if (pass_fd >= 0) {
			struct cmsghdr *cm;

			memset(&control, 0, sizeof(control));
			msg.msg_control = control.buf;
			msg.msg_controllen = sizeof(control.buf);
			cm = CMSG_FIRSTHDR(&msg);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
		}

		n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			int r = -errno;

			if (r == -EINTR)
				continue;
			if (r == -EAGAIN) {
				r = wait_fd(fd, POLLOUT, deadline, label, "sending a command (the peer reads nothing)",
					    err);
				if (r < 0)
					return r;
				continue;
			}
			if (r == -EPIPE || r == -ECONNRESET)
				return sb_error_set(err, -ECONNRESET, "%s closed the connection", label);
			return sb_error_set(err, r, "%s: cannot send: %s", label, strerror(-r));
		}
		/* The fd went with the bytes just sent. */
		pass_fd = -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void close_passed_fds(struct msghdr *msg)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int pfd;

			memcpy(&pfd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			close(pfd);
		}
	}
}

long unix_stream_recv(int fd, void *buf, size_t cap, uint64_t deadline, const char *label, struct sb_error *err)
{
	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * 8)];
			struct cmsghdr align;
		} control;
		struct iovec iov = { .iov_base = buf, .iov_len = cap };
		struct msghdr msg = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = control.buf,
			.msg_controllen = sizeof(control.buf),
		};
		ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

		if (n >= 0) {
			close_passed_fds(&msg);
			return (long)n;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			int r = wait_fd(fd, POLLIN, deadline, label, "waiting for a message", err);

			if (r < 0)
				return r;
			continue;
		}
		if (errno == ECONNRESET)
			return 0;
		return sb_error_set(err, -errno, "%s: cannot read: %s", label, strerror(errno));
	}
}
