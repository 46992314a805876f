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
 *   odd   a stream (the virtio-serial socket): the rest is everything the
 *         agent sends before it hangs up, framing, 0xff delimiters and
 *         sync replies included.
 *
 * Every reply must end in a clean error or a success whose figures lie
 * within the bounds the API promises, never a crash, a leak or a hang.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true && meson compile -C build-fuzz
 *   build-fuzz/qga/fuzz-qga-replies -max_total_time=60 qga/fuzz-corpus
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "qga.h"

#define MAX_INPUT (64 << 10) /* below the socket buffer, so one write never blocks */
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

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 0;
	if (size > 1 && write(sv[1], data + 1, size - 1) != (ssize_t)(size - 1)) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	shutdown(sv[1], SHUT_WR);
	/* sv[0] is the client's from here on, also on failure */
	if (qga_client_new_fd(sv[0], "fuzz", &opts, &c, &err) == 0) {
		drive(c);
		qga_client_free(c);
	}
	close(sv[1]);
	return 0;
}
