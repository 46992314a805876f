// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the guest agent client, as a hostile guest sees it.
 * The first input byte picks the transport:
 *
 *   even  an ops transport (what libvirt's passthrough gives): the rest of
 *         the input is the agent's replies, one per line, handed out in
 *         order to the typed helpers (info, exec, exec-status, file open,
 *         read, close, a raw command); past the last line the agent is
 *         gone (-ENOTCONN);
 *   odd   a stream (the virtio-serial socket) to an agent that answers
 *         every guest-sync-delimited with the right id and 0xff before it,
 *         so the fuzzer gets past the random sync, and every other command
 *         with the next line of the input, raw (framing, stray 0xff and
 *         partial JSON included); when the client waits for a reply that
 *         no line gives (partial JSON, an empty line), or the lines run
 *         out, the agent hangs up. It runs in the client's thread, inside
 *         poll(2) (below): no thread, no timer, the same run every time.
 *
 * Every reply must end in a clean error or a success whose figures lie
 * within the bounds the API promises, never a crash, a leak or a hang.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true && meson compile -C build-fuzz
 *   build-fuzz/qga/fuzz-qga-replies -max_total_time=60 qga/fuzz-corpus
 */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "qga.h"

#define MAX_INPUT (64 << 10)
#define READ_LEN 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct replies {
	const char *p, *end;
};

static int fake_execute(void *opaque, const char *command_json, int timeout_ms, char **reply_json,
			struct sb_error *err)
{
	struct replies *r = opaque;
	const char *nl;

	(void)command_json;
	(void)timeout_ms;
	if (r->p >= r->end)
		return sb_error_set(err, -ENOTCONN, "fuzz: no agent");
	nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
	if (!nl)
		nl = r->end;
	*reply_json = strndup(r->p, (size_t)(nl - r->p));
	r->p = nl + 1;
	if (!*reply_json)
		return sb_error_set(err, -ENOMEM, "fuzz: out of memory");
	return 0;
}

static const struct qga_transport_ops fake_ops = { .execute = fake_execute };

/* One line of the input, or NULL at its end: [*p, *next) with its newline. */
static const char *next_line(struct replies *r, size_t *len)
{
	const char *start = r->p, *nl;

	if (r->p >= r->end)
		return NULL;
	nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
	r->p = nl ? nl + 1 : r->end;
	*len = (size_t)(r->p - start);
	return start;
}

/*
 * The guest's side of the stream, run in the client's thread: the target
 * is linked with --wrap=poll, and the client only ever blocks in poll(2)
 * (its sends and receives are nonblocking), so each time it is about to
 * wait on its socket the agent first takes the commands sent so far and
 * answers them. A client that waits for a reply when no command of its is
 * left unanswered waits for the rest of a line that gave it partial JSON
 * or none: the agent hangs up then, so it sees the end of the stream at
 * once (no timer, no thread).
 */
struct agent {
	int fd, client_fd;
	bool gone;
	struct replies lines;
	char req[4096];
	size_t have;
};

static struct agent *live; /* the agent of the stream input being run, if any */

static void hang_up(struct agent *a)
{
	shutdown(a->fd, SHUT_RDWR);
	a->gone = true;
}

/* Answers the client's whole command lines; client_waits: it is about to wait for a reply. */
static void agent_step(struct agent *a, bool client_waits)
{
	bool answered = false;

	while (!a->gone) {
		char *nl = memchr(a->req, '\n', a->have), out[64];
		const char *line;
		size_t len;

		if (!nl) {
			ssize_t n = a->have == sizeof(a->req) ? 0 :
				    recv(a->fd, a->req + a->have, sizeof(a->req) - a->have, MSG_DONTWAIT);
			if (n > 0) {
				a->have += (size_t)n;
				continue;
			}
			/* a command too long, the client gone, or one waiting for what no line gives */
			if (n == 0 || errno != EAGAIN || (client_waits && !answered))
				hang_up(a);
			return;
		}
		*nl = '\0';
		const char *sync = strstr(a->req, "guest-sync-delimited");
		const char *id = sync ? strstr(sync, "\"id\": ") : NULL;
		if (id) {
			int k = snprintf(out, sizeof(out), "\xff{\"return\": %lu}\n", strtoul(id + 6, NULL, 10));
			line = out;
			len = (size_t)k;
		} else if (!(line = next_line(&a->lines, &len))) {
			hang_up(a);
			return;
		}
		if (send(a->fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len) {
			hang_up(a);
			return;
		}
		answered = true;
		a->have -= (size_t)(nl + 1 - a->req);
		memmove(a->req, nl + 1, a->have);
	}
}

int __real_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);

int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	if (live && n == 1 && fds[0].fd == live->client_fd)
		agent_step(live, fds[0].events & POLLIN);
	return __real_poll(fds, n, timeout);
}

static void drive(struct qga_client *c)
{
	static const char *const argv[] = { "-c", "true", NULL };
	struct qga_exec_status st = { 0 };
	struct sb_error err = { 0 };
	struct json_object *ret = NULL;
	char version[32], buf[READ_LEN];
	int64_t pid = 0, handle = 0;
	size_t got = 0;
	bool eof = false;

	if (qga_info(c, version, sizeof(version), &err) == 0 && !memchr(version, '\0', sizeof(version)))
		abort();
	if (qga_exec(c, "/bin/sh", argv, NULL, true, &pid, &err) == 0 && qga_exec_status(c, pid, &st, &err) == 0) {
		if ((st.out && st.out[st.out_len] != '\0') || (st.err && st.err[st.err_len] != '\0'))
			abort();
		if (st.out_len > QGA_MAX_EXEC_OUTPUT || st.err_len > QGA_MAX_EXEC_OUTPUT)
			abort();
	}
	qga_exec_status_clear(&st);
	if (qga_file_open(c, "/proc/version", "r", &handle, &err) == 0) {
		if (qga_file_read(c, handle, buf, sizeof(buf), &got, &eof, &err) == 0 && got > sizeof(buf))
			abort();
		(void)qga_file_close(c, handle, &err);
	}
	if (qga_execute(c, "guest-ping", NULL, 1000, &ret, &err) == 0)
		json_object_put(ret);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qga_options opts = { .max_reply = 16384, .max_depth = 8, .command_timeout_ms = 1000 };
	struct qga_client *c = NULL;
	struct sb_error err = { 0 };

	if (size < 1 || size > MAX_INPUT)
		return 0;
	if (!(data[0] & 1)) {
		struct replies r = { (const char *)data + 1, (const char *)data + size };

		if (qga_client_new_with_ops(&fake_ops, &r, "fuzz", &opts, &c, &err) == 0) {
			drive(c);
			qga_client_free(c);
		}
		return 0;
	}

	struct agent a = { .lines = { (const char *)data + 1, (const char *)data + size } };
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 0;
	a.client_fd = sv[0];
	a.fd = sv[1];
	live = &a;
	/* sv[0] is the client's from here on, also on failure */
	if (qga_client_new_fd(sv[0], "fuzz", &opts, &c, &err) == 0) {
		drive(c);
		qga_client_free(c);
	}
	live = NULL;
	close(sv[1]);
	return 0;
}
