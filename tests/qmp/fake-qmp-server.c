// SPDX-License-Identifier: GPL-2.0-or-later
#include "fake-qmp-server.h"

#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* Nothing in these tests waits this long; it only stops a broken test from hanging. */
#define IO_TIMEOUT_MS 60000

struct fake_server {
	const struct fake_step *steps;
	int delay_ms;
	char dir[64];
	char path[128];
	pthread_t thread;
	int conn;
	char buf[1 << 16];
	size_t len;
	char last_id[128];
	int received_fd;
	char failure[512];
};

static struct fake_server *live[8];

static void remove_files(struct fake_server *s)
{
	unlink(s->path);
	rmdir(s->dir);
}

static void cleanup_at_exit(void)
{
	for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++)
		if (live[i])
			remove_files(live[i]);
}

static __attribute__((format(printf, 2, 3))) void fail(struct fake_server *s, const char *fmt, ...)
{
	va_list ap;

	if (s->failure[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->failure, sizeof(s->failure), fmt, ap);
	va_end(ap);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Read more bytes (and any fd) from the client. Returns bytes, 0 on EOF, -1 on error or timeout. */
static ssize_t read_more(struct fake_server *s, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = s->buf + s->len, .iov_len = sizeof(s->buf) - s->len - 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			      .msg_controllen = sizeof(control.buf) };
	struct pollfd p = { .fd = s->conn, .events = POLLIN };
	ssize_t n;

	if (iov.iov_len == 0 || poll(&p, 1, IO_TIMEOUT_MS) <= 0)
		return -1;
	n = recvmsg(s->conn, &msg, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == ECONNRESET ? 0 : -1;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int got;

			memcpy(&got, CMSG_DATA(cm), sizeof(int));
			if (*fd >= 0)
				close(*fd);
			*fd = got;
		}
	s->len += (size_t)n;
	return n;
}

/*
 * Next command line from the client: 1 with the command name in name (and
 * a new reference to its arguments in *args if args is not NULL), 0 on
 * EOF, -1 on error.
 */
static int read_command(struct fake_server *s, char *name, size_t size, int *fd, struct json_object **args)
{
	char *nl;

	while (!(nl = memchr(s->buf, '\n', s->len))) {
		ssize_t n = read_more(s, fd);

		if (n == 0 && s->len == 0)
			return 0;
		if (n <= 0) {
			fail(s, "%s", n == 0 ? "client closed mid-command" : "no command from the client in time");
			return -1;
		}
	}
	*nl = '\0';
	struct json_object *cmd = json_tokener_parse(s->buf);
	struct json_object *exec, *id;

	memmove(s->buf, nl + 1, s->len - (size_t)(nl + 1 - s->buf));
	s->len -= (size_t)(nl + 1 - s->buf);
	if (!cmd || !json_object_object_get_ex(cmd, "execute", &exec)) {
		fail(s, "the client sent something that is not a QMP command");
		json_object_put(cmd);
		return -1;
	}
	snprintf(name, size, "%s", json_object_get_string(exec));
	if (args) {
		struct json_object *a = NULL;

		json_object_object_get_ex(cmd, "arguments", &a);
		*args = json_object_get(a);
	}
	snprintf(s->last_id, sizeof(s->last_id), "%s",
		 json_object_object_get_ex(cmd, "id", &id) ? json_object_to_json_string(id) : "null");
	json_object_put(cmd);
	return 1;
}

static bool send_all(struct fake_server *s, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = send(s->conn, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return false; /* the client may rightly hang up on what we send */
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static void send_text(struct fake_server *s, const char *text)
{
	const char *hole = strstr(text, "%ID%");
	char *out;

	if (!hole) {
		send_all(s, text, strlen(text));
		return;
	}
	CHECK(asprintf(&out, "%.*s%s%s", (int)(hole - text), text, s->last_id, hole + 4) >= 0);
	send_all(s, out, strlen(out));
	free(out);
}

static void send_fill(struct fake_server *s, const char *prefix, size_t total)
{
	size_t plen = strlen(prefix);
	char chunk[1 << 16];

	if (!send_all(s, prefix, plen))
		return;
	memset(chunk, 'x', sizeof(chunk));
	for (size_t sent = plen; sent < total;) {
		size_t n = total - sent < sizeof(chunk) ? total - sent : sizeof(chunk);

		if (!send_all(s, chunk, n))
			return;
		sent += n;
	}
}

static void run_script(struct fake_server *s)
{
	char name[128];
	int fd = -1;

	for (const struct fake_step *st = s->steps; st->op != FAKE_END; st++) {
		switch (st->op) {
		case FAKE_RECV:
		case FAKE_RECV_FD: {
			struct json_object *args = NULL;
			int r = read_command(s, name, sizeof(name), &fd, &args);

			if (r > 0 && st->args) {
				struct json_object *want = json_tokener_parse(st->args);

				CHECK_MSG(want, "bad args JSON in the test script: %s", st->args);
				if (!json_object_equal(args, want))
					fail(s, "command '%s' came with arguments %s, expected %s", name,
					     args ? json_object_to_json_string(args) : "none", st->args);
				json_object_put(want);
			}
			json_object_put(args);
			if (s->failure[0])
				return;
			if (r <= 0) {
				if (r == 0)
					fail(s, "the client hung up; expected command '%s'", st->text);
				return;
			}
			if (strcmp(name, st->text)) {
				fail(s, "expected command '%s', got '%s'", st->text, name);
				return;
			}
			if (st->op == FAKE_RECV_FD) {
				if (fd < 0) {
					fail(s, "command '%s' came without an fd", st->text);
					return;
				}
				s->received_fd = fd;
				fd = -1;
			}
			break;
		}
		case FAKE_SEND:
			send_text(s, st->text);
			break;
		case FAKE_SEND_FILL:
			send_fill(s, st->text, st->n);
			break;
		case FAKE_SLEEP:
			sleep_ms((long)st->n);
			break;
		case FAKE_FD_WRITE: {
			char chunk[1 << 16];
			size_t left = st->n;

			if (s->received_fd < 0) {
				fail(s, "FD_WRITE: no fd received yet");
				return;
			}
			memset(chunk, 's', sizeof(chunk));
			while (left > 0) {
				ssize_t w = write(s->received_fd, chunk, left < sizeof(chunk) ? left : sizeof(chunk));
				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0) {
					fail(s, "FD_WRITE: %s", w < 0 ? strerror(errno) : "short write");
					return;
				}
				left -= (size_t)w;
			}
			break;
		}
		case FAKE_FD_CLOSE:
			if (s->received_fd >= 0)
				close(s->received_fd);
			s->received_fd = -1;
			break;
		case FAKE_CLOSE:
			return;
		case FAKE_DRAIN:
			do {
				s->len = 0;
			} while (read_more(s, &fd) > 0);
			if (fd >= 0)
				close(fd);
			return;
		case FAKE_END:
			break;
		}
	}

	/* Script done: the client must hang up without sending anything else. */
	int r = read_command(s, name, sizeof(name), &fd, NULL);
	if (r > 0)
		fail(s, "unexpected command '%s' after the script ended", name);
	if (fd >= 0)
		close(fd);
}

static void *server_thread(void *arg)
{
	struct fake_server *s = arg;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd p;
	int lfd;

	sleep_ms(s->delay_ms);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(lfd >= 0);
	CHECK(strlen(s->path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, s->path, strlen(s->path) + 1);
	CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(listen(lfd, 1) == 0);
	p = (struct pollfd){ .fd = lfd, .events = POLLIN };
	if (poll(&p, 1, IO_TIMEOUT_MS) <= 0) {
		fail(s, "no client connected");
		close(lfd);
		return NULL;
	}
	s->conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	close(lfd);
	CHECK(s->conn >= 0);
	run_script(s);
	close(s->conn);
	s->conn = -1;
	return NULL;
}

struct fake_server *fake_server_start(const struct fake_step *steps, int delay_ms)
{
	static bool registered;
	struct fake_server *s = calloc(1, sizeof(*s));
	size_t slot;

	CHECK(s);
	s->steps = steps;
	s->delay_ms = delay_ms;
	s->conn = -1;
	s->received_fd = -1;
	snprintf(s->dir, sizeof(s->dir), "/tmp/snapbench-fake-qmp.XXXXXX");
	CHECK(mkdtemp(s->dir));
	snprintf(s->path, sizeof(s->path), "%s/qmp.sock", s->dir);
	for (slot = 0; slot < sizeof(live) / sizeof(live[0]) && live[slot]; slot++)
		;
	CHECK(slot < sizeof(live) / sizeof(live[0]));
	live[slot] = s;
	if (!registered) {
		atexit(cleanup_at_exit);
		registered = true;
	}
	CHECK(pthread_create(&s->thread, NULL, server_thread, s) == 0);
	return s;
}

const char *fake_server_path(const struct fake_server *s)
{
	return s->path;
}

int fake_server_finish(struct fake_server *s)
{
	int fd;

	CHECK(pthread_join(s->thread, NULL) == 0);
	for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++)
		if (live[i] == s)
			live[i] = NULL;
	remove_files(s);
	CHECK_MSG(!s->failure[0], "fake QMP server: %s", s->failure);
	fd = s->received_fd;
	free(s);
	return fd;
}
