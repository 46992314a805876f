// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The QMP client's protocol layer against a scripted fake server: greeting,
 * ids, events interleaved with replies, error replies, and every way a peer
 * can misbehave (invalid JSON, truncation, oversized or too deep messages,
 * wrong ids, silence, dying mid-command). Each must end in a clean error,
 * never a crash or a hang past the timeout.
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "fake-qmp-server.h"
#include "qmp.h"

#define T 10000 /* ms; nothing here should come near it */

static struct qmp_client *connect_to(struct fake_server *s, const struct qmp_options *opts)
{
	struct qmp_client *c = NULL;
	struct sb_error err = { 0 };

	CHECK_MSG(qmp_connect(fake_server_path(s), T, opts, &c, &err) == 0, "%s", err.msg);
	return c;
}

static void test_handshake(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		SEND("{\"return\": {\"status\": \"running\", \"running\": true}, \"id\": %ID%}\r\n"),
		END,
	};
	/* The socket appears 300 ms late: qmp_connect keeps retrying. */
	struct fake_server *s = fake_server_start(script, 300);
	struct qmp_client *c = connect_to(s, NULL);
	struct json_object *ret = NULL, *v;
	struct qmp_version ver;
	struct sb_error err = { 0 };

	CHECK(qmp_client_version(c, &ver, &err) == 0);
	CHECK(ver.major == 7 && ver.minor == 2 && ver.micro == 3 && !strcmp(ver.package, "fake"));
	CHECK(qmp_client_has_capability(c, "oob"));
	CHECK_MSG(qmp_execute(c, "query-status", NULL, -1, T, &ret, &err) == 0, "%s", err.msg);
	CHECK(json_object_object_get_ex(ret, "status", &v) && !strcmp(json_object_get_string(v), "running"));
	json_object_put(ret);
	qmp_client_free(c);
	CHECK(fake_server_finish(s) == -1);
}

static void test_pretty_printed(void)
{
	/* QEMU with -mon mode=control,pretty=on spreads each message over many lines. */
	static const struct fake_step script[] = {
		SEND("{\n    \"QMP\": {\n        \"version\": {\n            \"qemu\": {\n                \"micro\": 0,\n"
		     "                \"minor\": 2,\n                \"major\": 7\n            },\n"
		     "            \"package\": \"\"\n        },\n        \"capabilities\": [\n            \"oob\"\n"
		     "        ]\n    }\n}\n"),
		EXPECT("qmp_capabilities"),
		SEND("{\n    \"return\": {\n    },\n    \"id\": %ID%\n}\n"),
		EXPECT("query-status"),
		SEND("{\n    \"timestamp\": {\n        \"seconds\": 7,\n        \"microseconds\": 8\n    },\n"
		     "    \"event\": \"STOP\"\n}\n{\n    \"return\": {\n        \"status\": \"paused\",\n"
		     "        \"running\": false\n    },\n    \"id\": %ID%\n}\n"),
		END,
	};
	struct fake_server *s = fake_server_start(script, 0);
	struct qmp_client *c = connect_to(s, NULL);
	struct json_object *ret = NULL;
	struct qmp_event *e = NULL;
	struct sb_error err = { 0 };

	CHECK_MSG(qmp_execute(c, "query-status", NULL, -1, T, &ret, &err) == 0, "%s", err.msg);
	CHECK(json_object_object_get_ex(ret, "running", NULL));
	json_object_put(ret);
	CHECK(qmp_wait_event(c, "STOP", 0, &e, &err) == 0 && e->qemu_time_us == 7000008);
	qmp_event_free(e);
	qmp_client_free(c);
	fake_server_finish(s);
}

static void test_error_replies(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("migrate"),
		SEND("{\"id\": %ID%, \"error\": {\"class\": \"GenericError\", \"desc\": \"no such fd\"}}\r\n"),
		/* QEMU answers without an id only when it cannot parse the command. */
		EXPECT("query-status"),
		SEND("{\"error\": {\"class\": \"GenericError\", \"desc\": \"JSON parse error\"}}\r\n"),
		EXPECT("query-status"),
		SEND(FAKE_OK),
		END,
	};
	struct fake_server *s = fake_server_start(script, 0);
	struct qmp_client *c = connect_to(s, NULL);
	struct json_object *ret = NULL;
	struct sb_error err = { 0 };

	CHECK(qmp_execute(c, "migrate", NULL, -1, T, &ret, &err) == -EREMOTEIO);
	CHECK(ret == NULL && err.code == -EREMOTEIO);
	CHECK_MSG(!strcmp(err.msg, "QMP command 'migrate' failed: GenericError: no such fd"), "%s", err.msg);
	CHECK(!strcmp(qmp_client_last_error_class(c), "GenericError"));
	CHECK(!strcmp(qmp_client_last_error_desc(c), "no such fd"));
	CHECK(qmp_execute(c, "query-status", NULL, -1, T, NULL, &err) == -EREMOTEIO);
	CHECK(!strcmp(qmp_client_last_error_desc(c), "JSON parse error"));
	CHECK(qmp_execute(c, "query-status", NULL, -1, T, NULL, &err) == 0);
	CHECK(qmp_client_last_error_class(c) == NULL);
	qmp_client_free(c);
	fake_server_finish(s);
}

static void test_events_interleaved(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("migrate"),
		/* Events before the reply, in the same write as the reply, and after it. */
		SEND("{\"timestamp\": {\"seconds\": 100, \"microseconds\": 5}, \"event\": \"MIGRATION\", \"data\": "
		  "{\"status\": \"setup\"}}\r\n"),
		PAUSE(20),
		SEND("{\"timestamp\": {\"seconds\": 100, \"microseconds\": 6}, \"event\": \"STOP\"}\r\n"
		  "{\"return\": {}, \"id\": %ID%}\r\n"
		  "{\"timestamp\": {\"seconds\": 100, \"microseconds\": 7}, \"event\": \"MIGRATION\", \"data\": "
		  "{\"status\": \"active\"}}\r\n"),
		PAUSE(50),
		SEND("{\"timestamp\": {\"seconds\": 101, \"microseconds\": 0}, \"event\": \"RESUME\"}\r\n"
		  "{\"event\": \"NO_TIMESTAMP\"}\r\n"),
		END,
	};
	struct fake_server *s = fake_server_start(script, 0);
	struct qmp_client *c = connect_to(s, NULL);
	struct qmp_event *e = NULL;
	struct sb_error err = { 0 };
	struct json_object *st;

	CHECK_MSG(qmp_execute(c, "migrate", NULL, -1, T, NULL, &err) == 0, "%s", err.msg);
	CHECK(qmp_client_events_queued(c) == 2);

	/* Taking by name leaves the others queued, in order. */
	CHECK(qmp_wait_event(c, "STOP", 0, &e, &err) == 0);
	CHECK(!strcmp(e->name, "STOP") && e->data == NULL && e->qemu_time_us == 100000006);
	qmp_event_free(e);
	CHECK(qmp_wait_event(c, "MIGRATION", T, &e, &err) == 0);
	CHECK(json_object_object_get_ex(e->data, "status", &st) && !strcmp(json_object_get_string(st), "setup"));
	CHECK(e->qemu_time_us == 100000005 && e->wire_bytes > 50 && e->recv_mono_ns > 0);
	qmp_event_free(e);
	/* The event after the reply in the same read was queued as well, later. */
	CHECK(qmp_wait_event(c, "MIGRATION", T, &e, &err) == 0);
	CHECK(json_object_object_get_ex(e->data, "status", &st) && !strcmp(json_object_get_string(st), "active"));
	qmp_event_free(e);
	CHECK(qmp_wait_event(c, "RESUME", T, &e, &err) == 0);
	CHECK(e->qemu_time_us == 101000000);
	qmp_event_free(e);
	/* A missing timestamp is not an error. */
	CHECK(qmp_wait_event(c, NULL, T, &e, &err) == 0);
	CHECK(!strcmp(e->name, "NO_TIMESTAMP") && e->qemu_time_us == -1);
	qmp_event_free(e);
	/* Nothing more: timeout 0 returns at once. */
	CHECK(qmp_wait_event(c, NULL, 0, &e, &err) == -ETIMEDOUT && e == NULL);
	CHECK(qmp_client_events_dropped(c) == 0);
	qmp_client_free(c);
	fake_server_finish(s);
}

/* A deadline bounds every command's wait, whatever the command timeout; cleared, the timeout is back. */
static void test_deadline(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		PAUSE(800),
		SEND(FAKE_OK),
		EXPECT("query-name"),
		SEND("{\"return\": {\"name\": \"vm\"}, \"id\": %ID%}\r\n"),
		END,
	};
	struct fake_server *s = fake_server_start(script, 0);
	struct qmp_client *c = connect_to(s, NULL);
	struct json_object *ret = NULL;
	struct sb_error err = { 0 };
	uint64_t t0 = mono_ns();

	qmp_client_set_command_timeout(c, 30000);
	qmp_client_set_deadline(c, t0 + 200 * NSEC_PER_MSEC);
	CHECK(qmp_client_command_timeout(c) <= 200);
	CHECK(qmp_execute(c, "query-status", NULL, -1, qmp_client_command_timeout(c), NULL, &err) == -ETIMEDOUT);
	CHECK_MSG(mono_ns() - t0 < 700 * NSEC_PER_MSEC, "waited %.0f ms past a 200 ms deadline",
		  (double)(mono_ns() - t0) / 1e6);
	CHECK(qmp_client_command_timeout(c) == 1); /* past the deadline: no wait at all */
	qmp_client_set_deadline(c, QMP_NO_DEADLINE);
	CHECK(qmp_client_command_timeout(c) == 30000);
	CHECK_MSG(qmp_execute(c, "query-name", NULL, -1, T, &ret, &err) == 0, "%s", err.msg);
	json_object_put(ret);
	qmp_client_free(c);
	fake_server_finish(s);
}

static void test_never_replies(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		/* Silence past the client's timeout, then the late reply and the answer to the next command. */
		PAUSE(600),
		SEND(FAKE_OK),
		EXPECT("query-name"),
		SEND("{\"return\": {\"name\": \"vm\"}, \"id\": %ID%}\r\n"),
		END,
	};
	struct fake_server *s = fake_server_start(script, 0);
	struct qmp_client *c = connect_to(s, NULL);
	struct json_object *ret = NULL;
	struct sb_error err = { 0 };
	uint64_t t0 = mono_ns();

	CHECK(qmp_execute(c, "query-status", NULL, -1, 200, NULL, &err) == -ETIMEDOUT);
	CHECK(mono_ns() - t0 >= 200 * NSEC_PER_MSEC);
	CHECK_MSG(strstr(err.msg, "did not answer QMP command 'query-status' within 200 ms"), "%s", err.msg);
	/* The client stays usable: the late reply is recognised by its id and dropped. */
	CHECK_MSG(qmp_execute(c, "query-name", NULL, -1, T, &ret, &err) == 0, "%s", err.msg);
	CHECK(json_object_object_get_ex(ret, "name", NULL));
	json_object_put(ret);
	qmp_client_free(c);
	fake_server_finish(s);
}

static void test_send_timeout(void)
{
	/* A peer that reads nothing: a command too big for the socket buffer cannot be sent in time. */
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		PAUSE(1000),
		DRAIN,
	};
	struct fake_server *s = fake_server_start(script, 0);
	struct qmp_client *c = connect_to(s, NULL);
	size_t big = 8u << 20;
	char *text = malloc(big + 1);
	struct json_object *args;
	struct sb_error err = { 0 };
	int r;

	CHECK(text);
	memset(text, 'x', big);
	text[big] = '\0';
	args = json_object_new_object();
	CHECK(args && json_object_object_add(args, "blob", json_object_new_string(text)) == 0);
	free(text);
	r = qmp_execute(c, "query-status", args, -1, 200, NULL, &err);
	json_object_put(args);
	CHECK_MSG(r == -ETIMEDOUT && strstr(err.msg, "the peer reads nothing"), "%d: %s", r, err.msg);
	/* Part of the command is on the wire: the stream is out of step and refused. */
	CHECK(qmp_execute(c, "query-status", NULL, -1, T, NULL, &err) == -ENOTCONN);
	qmp_client_free(c);
	fake_server_finish(s);
}

static void test_silent_server(void)
{
	/* A server that accepts and never greets (e.g. QEMU busy with another client). */
	static const struct fake_step script[] = {
		PAUSE(800),
		END,
	};
	struct fake_server *s = fake_server_start(script, 0);
	struct qmp_client *c = NULL;
	struct sb_error err = { 0 };

	CHECK(qmp_connect(fake_server_path(s), 300, NULL, &c, &err) == -ETIMEDOUT);
	CHECK(c == NULL);
	CHECK_MSG(strstr(err.msg, "sent no QMP greeting within 300 ms") && strstr(err.msg, "another client"), "%s",
		  err.msg);
	fake_server_finish(s);
}

/* A reply or message that must break the connection with code, its message containing what. */
static void expect_broken(const struct fake_step *script, const struct qmp_options *opts, int code,
			  const char *what)
{
	struct fake_server *s = fake_server_start(script, 0);
	struct qmp_client *c = connect_to(s, opts);
	struct sb_error err = { 0 };
	struct qmp_event *e = NULL;
	int r;

	r = qmp_execute(c, "query-status", NULL, -1, T, NULL, &err);
	CHECK_MSG(r == code, "got %d (%s), expected %d", r, err.msg, code);
	CHECK_MSG(err.code == code && strstr(err.msg, what), "'%s' lacks '%s'", err.msg, what);
	CHECK_MSG(strstr(err.msg, "QMP command 'query-status'") == err.msg, "%s", err.msg);
	/* From now on the client refuses, repeating the cause. */
	CHECK(qmp_execute(c, "query-status", NULL, -1, T, NULL, &err) == -ENOTCONN);
	CHECK_MSG(strstr(err.msg, "unusable after an earlier error") && strstr(err.msg, what), "%s", err.msg);
	CHECK(qmp_wait_event(c, NULL, T, &e, &err) == -ENOTCONN && e == NULL);
	CHECK(qmp_client_fd(c) == -1);
	qmp_client_free(c);
	fake_server_finish(s);
}

static void test_invalid_json(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		SEND("{\"return\": {]}}\r\n"),
		END,
	};
	expect_broken(script, NULL, -EBADMSG, "invalid JSON");
}

static void test_not_utf8(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		SEND("{\"return\": \"\xc3\x28\", \"id\": %ID%}\r\n"),
		END,
	};
	expect_broken(script, NULL, -EBADMSG, "invalid JSON");
}

static void test_truncated_then_close(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		SEND("{\"return\": {\"status\": \"runn"),
		HANG_UP,
	};
	expect_broken(script, NULL, -ECONNRESET, "closed the connection in the middle of a message (27 bytes");
}

static void test_dies_mid_command(void)
{
	/* QEMU reads the command and dies before answering. */
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		HANG_UP,
	};
	expect_broken(script, NULL, -ECONNRESET, "closed the connection");
}

static void test_oversized(void)
{
	/* A reply of 16 MiB + 1 against the default bound: refused, not buffered on. */
	static const struct fake_step big[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		SEND_FILL("{\"return\": \"", (16u << 20) + 1),
		END,
	};
	/* A message that never ends (no closing quote): the bound still holds. */
	static const struct fake_step small[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		SEND_FILL("{\"return\": \"", 100000),
		END,
	};
	struct qmp_options opts = { .max_message = 4096 };

	expect_broken(big, NULL, -EMSGSIZE, "larger than the limit of 16777216 bytes");
	expect_broken(small, &opts, -EMSGSIZE, "larger than the limit of 4096 bytes");
}

static void test_too_deep(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		SEND("{\"return\": [[[[[[[[[[1]]]]]]]]]], \"id\": %ID%}\r\n"),
		END,
	};
	struct qmp_options opts = { .max_depth = 8 };

	expect_broken(script, &opts, -EMSGSIZE, "nested deeper than 8 levels");
}

static void test_wrong_id(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		SEND("{\"return\": {}, \"id\": \"someone-else-7\"}\r\n"),
		END,
	};
	expect_broken(script, NULL, -EPROTO, "id \"someone-else-7\", which matches no command");
}

static void test_not_qmp(void)
{
	static const struct fake_step array[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		SEND("[1, 2]\r\n"),
		END,
	};
	static const struct fake_step neither[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		SEND("{\"hello\": 1}\r\n"),
		END,
	};
	static const struct fake_step bad_event[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		SEND("{\"event\": \"STOP\", \"data\": 5}\r\n"),
		END,
	};
	expect_broken(array, NULL, -EPROTO, "sent a array where QMP sends objects");
	expect_broken(neither, NULL, -EPROTO, "neither a reply nor an event");
	expect_broken(bad_event, NULL, -EPROTO, "event STOP whose data is not an object");
}

static void test_bad_greetings(void)
{
	/* The HMP banner is not JSON; a JSON object without "QMP" is not a greeting. */
	static const struct fake_step hmp[] = {
		SEND("QEMU 7.2.22 monitor - type 'help' for more information\r\n(qemu) "),
		END,
	};
	static const struct fake_step other[] = {
		SEND("{\"hello\": {}}\r\n"),
		END,
	};
	struct fake_server *s;
	struct qmp_client *c = NULL;
	struct sb_error err = { 0 };

	s = fake_server_start(hmp, 0);
	CHECK(qmp_connect(fake_server_path(s), T, NULL, &c, &err) == -EBADMSG && !c);
	CHECK_MSG(strstr(err.msg, "reading the QMP greeting") && strstr(err.msg, "invalid JSON"), "%s", err.msg);
	fake_server_finish(s);

	s = fake_server_start(other, 0);
	CHECK(qmp_connect(fake_server_path(s), T, NULL, &c, &err) == -EPROTO && !c);
	CHECK_MSG(strstr(err.msg, "did not greet with a QMP banner"), "%s", err.msg);
	fake_server_finish(s);
}

static void test_reply_while_idle(void)
{
	/* A reply nobody asked for, read while waiting for an event. */
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		SEND("{\"return\": {}, \"id\": \"sb-99\"}\r\n"),
		END,
	};
	struct fake_server *s = fake_server_start(script, 0);
	struct qmp_client *c = connect_to(s, NULL);
	struct qmp_event *e = NULL;
	struct sb_error err = { 0 };

	CHECK(qmp_wait_event(c, "STOP", T, &e, &err) == -EPROTO);
	CHECK_MSG(strstr(err.msg, "waiting for STOP event") && strstr(err.msg, "none is in flight"), "%s", err.msg);
	qmp_client_free(c);
	fake_server_finish(s);
}

static void test_event_bounds(void)
{
	/* 50 events into a queue of 8: the 8 newest stay, 42 dropped and counted. */
	static char flood[50 * 80];
	static struct fake_step script[] = {
		FAKE_HANDSHAKE,
		SEND(flood),
		EXPECT("query-status"),
		SEND(FAKE_OK),
		END,
	};
	struct qmp_options opts = { .max_events = 8 };
	struct fake_server *s;
	struct qmp_client *c;
	struct qmp_event *e = NULL;
	struct sb_error err = { 0 };
	size_t off = 0;

	for (int i = 0; i < 50; i++)
		off += (size_t)snprintf(flood + off, sizeof(flood) - off, "{\"event\": \"TICK\", \"data\": {\"n\": %d}}\r\n",
					i);
	s = fake_server_start(script, 0);
	c = connect_to(s, &opts);
	CHECK(qmp_execute(c, "query-status", NULL, -1, T, NULL, &err) == 0);
	CHECK(qmp_client_events_queued(c) == 8);
	CHECK(qmp_client_events_dropped(c) == 42);
	CHECK(qmp_wait_event(c, "TICK", 0, &e, &err) == 0);
	struct json_object *n;
	CHECK(json_object_object_get_ex(e->data, "n", &n) && json_object_get_int(n) == 42);
	qmp_event_free(e);
	qmp_client_free(c);
	fake_server_finish(s);
}

static void test_fd_passing(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT_FD("getfd"),
		SEND(FAKE_OK),
		END,
	};
	struct fake_server *s = fake_server_start(script, 0);
	struct qmp_client *c = connect_to(s, NULL);
	struct json_object *args = json_tokener_parse("{\"fdname\": \"sink\"}");
	struct sb_error err = { 0 };
	char path[] = "/tmp/snapbench-fd-test.XXXXXX";
	struct stat a, b;
	int fd, got;

	fd = mkstemp(path);
	CHECK(fd >= 0 && args);
	CHECK_MSG(qmp_execute(c, "getfd", args, fd, T, NULL, &err) == 0, "%s", err.msg);
	json_object_put(args);
	qmp_client_free(c);
	got = fake_server_finish(s);
	/* The server holds the very same file. */
	CHECK(got >= 0 && fstat(fd, &a) == 0 && fstat(got, &b) == 0);
	CHECK(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	close(got);
	close(fd);
	unlink(path);
}

static void test_connect_errors(void)
{
	struct qmp_client *c = NULL;
	struct sb_error err = { 0 };
	char longpath[200];

	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	CHECK(qmp_connect(longpath, 0, NULL, &c, &err) == -ENAMETOOLONG && !c);
	CHECK_MSG(strstr(err.msg, "use a shorter directory"), "%s", err.msg);

	/* Nothing there: retried until the deadline, then a message naming the path and the fix. */
	CHECK(qmp_connect("/tmp/snapbench-no-such.sock", 100, NULL, &c, &err) == -ENOENT && !c);
	CHECK_MSG(strstr(err.msg, "/tmp/snapbench-no-such.sock") && strstr(err.msg, "-qmp unix:"), "%s", err.msg);

	CHECK(qmp_connect_fd(-1, "peer", T, NULL, &c, &err) == -EBADF && !c);
}

static void test_connect_fd(void)
{
	/* Over a socketpair, as when QEMU gets the other end with -chardev socket,fd=N. */
	int sv[2];
	struct qmp_client *c = NULL;
	struct sb_error err = { 0 };
	char buf[512];
	ssize_t n;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(write(sv[1], FAKE_GREETING_TEXT, strlen(FAKE_GREETING_TEXT)) > 0);
	CHECK(write(sv[1], "{\"return\": {}, \"id\": \"sb-1\"}\r\n", 30) == 30);
	CHECK_MSG(qmp_connect_fd(sv[0], "socketpair", T, NULL, &c, &err) == 0, "%s", err.msg);
	n = read(sv[1], buf, sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n] = '\0';
	CHECK_MSG(strstr(buf, "\"execute\":\"qmp_capabilities\"") && strstr(buf, "\"id\":\"sb-1\""), "%s", buf);
	CHECK(!strcmp(qmp_client_label(c), "socketpair"));
	qmp_client_free(c);
	close(sv[1]);
}

static void test_bad_arguments(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		END,
	};
	struct fake_server *s = fake_server_start(script, 0);
	struct qmp_client *c = connect_to(s, NULL);
	struct json_object *arr = json_object_new_array();
	struct sb_error err = { 0 };

	CHECK(qmp_execute(c, "", NULL, -1, T, NULL, &err) == -EINVAL);
	CHECK(qmp_execute(c, "query-status", arr, -1, T, NULL, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "must be a JSON object, not array"), "%s", err.msg);
	json_object_put(arr);
	qmp_client_free(c);
	fake_server_finish(s);
}

/* The ids are the client's: qmp_capabilities was sb-1, so the first command is sb-2. */
static void test_batch(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		/* two commands in one write, their replies with an event between them */
		EXPECT_ARGS("query-stats", "{\"target\":\"vm\"}"),
		EXPECT_ARGS("query-stats", "{\"target\":\"vcpu\"}"),
		SEND("{\"return\": [1], \"id\": \"sb-2\"}\r\n"),
		SEND("{\"event\": \"STOP\", \"timestamp\": {\"seconds\": 1, \"microseconds\": 2}}\r\n"),
		SEND("{\"return\": [2], \"id\": \"sb-3\"}\r\n"),
		/* the first of three fails: the other two are abandoned and their replies dropped */
		EXPECT("query-a"), EXPECT("query-b"), EXPECT("query-c"),
		SEND("{\"error\": {\"class\": \"GenericError\", \"desc\": \"no a\"}, \"id\": \"sb-4\"}\r\n"),
		SEND("{\"return\": {}, \"id\": \"sb-5\"}\r\n"),
		SEND("{\"return\": {}, \"id\": \"sb-6\"}\r\n"),
		EXPECT("query-name"),
		SEND("{\"return\": {\"name\": \"vm\"}, \"id\": %ID%}\r\n"),
		/* the second times out: the first keeps its answer, the late second is dropped */
		EXPECT("query-d"), EXPECT("query-e"),
		SEND("{\"return\": {\"d\": 1}, \"id\": \"sb-8\"}\r\n"),
		PAUSE(600),
		SEND("{\"return\": {}, \"id\": \"sb-9\"}\r\n"),
		EXPECT("query-name"),
		SEND("{\"return\": {\"name\": \"vm\"}, \"id\": %ID%}\r\n"),
		END,
	};
	struct fake_server *s = fake_server_start(script, 0);
	struct qmp_client *c = connect_to(s, NULL);
	struct json_object *vm = json_tokener_parse("{\"target\":\"vm\"}");
	struct json_object *vcpu = json_tokener_parse("{\"target\":\"vcpu\"}");
	struct qmp_call two[2] = { { .command = "query-stats", .args = vm }, { .command = "query-stats", .args = vcpu } };
	struct qmp_call three[3] = { { .command = "query-a" }, { .command = "query-b" }, { .command = "query-c" } };
	struct qmp_call pair[2] = { { .command = "query-d" }, { .command = "query-e" } };
	struct json_object *ret = NULL;
	struct qmp_event *e = NULL;
	struct sb_error err = { 0 };

	CHECK_MSG(qmp_execute_batch(c, two, 2, T, &err) == 0, "%s", err.msg);
	CHECK(json_object_get_int(json_object_array_get_idx(two[0].ret, 0)) == 1);
	CHECK(json_object_get_int(json_object_array_get_idx(two[1].ret, 0)) == 2);
	CHECK(qmp_wait_event(c, "STOP", 0, &e, &err) == 0 && e);
	qmp_event_free(e);

	CHECK(qmp_execute_batch(c, three, 3, T, &err) == -EREMOTEIO);
	CHECK_MSG(strstr(err.msg, "QMP command 'query-a' failed: GenericError: no a"), "%s", err.msg);
	CHECK(!three[0].ret && !three[1].ret && !three[2].ret);
	CHECK_MSG(qmp_execute(c, "query-name", NULL, -1, T, &ret, &err) == 0, "%s", err.msg);
	json_object_put(ret);

	CHECK(qmp_execute_batch(c, pair, 2, 200, &err) == -ETIMEDOUT);
	CHECK_MSG(strstr(err.msg, "did not answer QMP command 'query-e' within 200 ms"), "%s", err.msg);
	CHECK(pair[0].ret && json_object_object_get_ex(pair[0].ret, "d", NULL) && !pair[1].ret);
	CHECK_MSG(qmp_execute(c, "query-name", NULL, -1, T, &ret, &err) == 0, "%s", err.msg);
	CHECK(json_object_object_get_ex(ret, "name", NULL));
	json_object_put(ret);

	/* bounds: none, or more than a batch holds (refused before the calls are touched) */
	CHECK(qmp_execute_batch(c, two, 0, T, &err) == -EINVAL);
	CHECK(qmp_execute_batch(c, two, QMP_BATCH_MAX + 1, T, &err) == -EINVAL && strstr(err.msg, "1 to 8"));

	for (int i = 0; i < 2; i++) {
		json_object_put(two[i].ret);
		json_object_put(pair[i].ret);
	}
	json_object_put(vm);
	json_object_put(vcpu);
	qmp_client_free(c);
	CHECK(fake_server_finish(s) == -1);
}

/* Replies in another order than the commands' break the stream: QEMU never does that. */
static void test_batch_out_of_order(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-a"), EXPECT("query-b"),
		SEND("{\"return\": {}, \"id\": \"sb-3\"}\r\n"),
		DRAIN,
		END,
	};
	struct fake_server *s = fake_server_start(script, 0);
	struct qmp_client *c = connect_to(s, NULL);
	struct qmp_call calls[2] = { { .command = "query-a" }, { .command = "query-b" } };
	struct sb_error err = { 0 };

	CHECK(qmp_execute_batch(c, calls, 2, T, &err) == -EPROTO);
	CHECK_MSG(strstr(err.msg, "matches no command in flight"), "%s", err.msg);
	CHECK(!calls[0].ret && !calls[1].ret);
	CHECK(qmp_execute(c, "query-name", NULL, -1, T, NULL, &err) == -ENOTCONN);
	qmp_client_free(c);
	fake_server_finish(s);
}

int main(void)
{
	test_handshake();
	test_pretty_printed();
	test_error_replies();
	test_events_interleaved();
	test_never_replies();
	test_send_timeout();
	test_silent_server();
	test_deadline();
	test_invalid_json();
	test_not_utf8();
	test_truncated_then_close();
	test_dies_mid_command();
	test_oversized();
	test_too_deep();
	test_wrong_id();
	test_not_qmp();
	test_bad_greetings();
	test_reply_while_idle();
	test_event_bounds();
	test_fd_passing();
	test_connect_errors();
	test_connect_fd();
	test_bad_arguments();
	test_batch();
	test_batch_out_of_order();
	printf("ok\n");
	return 0;
}
