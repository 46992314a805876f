// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The guest agent client (qga/) against a scripted fake agent on a unix
 * socket (fake-agent.h), for what a real guest cannot do on demand here.
 * One case per run (argv[1]):
 *
 *   sync     stale bytes and an old sync's answer around the sentinel
 *   exec     guest-exec, guest-exec-status polled until it exits, base64 output decoded
 *   fail     a command exiting 3 or killed, an agent error reply: errors name them
 *   missing  nothing listening; an agent that never answers
 *   files    copying a file in (open, chunked base64 writes, close, chmod), reading one
 *   bad      bad base64, garbage, an oversized reply, a late reply after a timeout
 *   closed   the agent hangs up
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "check.h"
#include "clock.h"
#include "fake-agent.h"
#include "qga.h"

static char *b64(const void *data, size_t n)
{
	char *s = malloc(base64_encoded_len(n) + 1);

	CHECK(s);
	base64_encode(data, n, s);
	return s;
}

static struct qga_client *connect_to(struct fake_agent *a, const struct qga_options *o)
{
	struct qga_client *c = NULL;
	struct sb_error err = {};
	int r = qga_connect(fake_agent_path(a), 5000, o, &c, &err);

	CHECK_MSG(r == 0, "connect: %s", err.msg);
	return c;
}

static void test_sync(void)
{
	struct fake_agent *a = fake_agent_start(FAKE_AGENT_NORMAL);
	struct sb_error err = {};
	char version[32];

	/* left-overs of an earlier session, among them an old sync's sentinel and answer: the client waits for its own id */
	fake_agent_stale_before_sync(a, "{\"return\": {\"pid\": 1}}\n\xff{\"return\": 12345}\n{\"ret");
	fake_agent_expect(a, "guest-info", NULL, 0, "{\"return\": {\"version\": \"7.2.0\", \"supported_commands\": []}}\n");
	struct qga_client *c = connect_to(a, NULL);
	CHECK(fake_agent_syncs(a) == 1);
	CHECK_MSG(qga_info(c, version, sizeof(version), &err) == 0, "%s", err.msg);
	CHECK(!strcmp(version, "7.2.0"));
	CHECK(fake_agent_syncs(a) == 1); /* no sync between healthy commands */
	qga_client_free(c);
	CHECK(fake_agent_stop(a, true) == 0);
}

static void test_exec(void)
{
	struct fake_agent *a = fake_agent_start(FAKE_AGENT_NORMAL);
	struct qga_exec_status st = {};
	struct sb_error err = {};
	const char out[] = "hello\nworld\n\0binary\xff";
	_cleanup_free_ char *eo = b64(out, sizeof(out) - 1), *ee = b64("warn\n", 5);
	char reply[512];
	int64_t pid = 0;

	fake_agent_expect(a, "guest-exec", "\"path\":\"\\/usr\\/bin\\/stress-ng\"", 0, "{\"return\": {\"pid\": 4242}}\n");
	fake_agent_expect(a, "guest-exec-status", "{\"pid\":4242}", 0, "{\"return\": {\"exited\": false}}\n");
	fake_agent_expect(a, "guest-exec-status", "{\"pid\":4242}", 0, "{\"return\": {\"exited\": false}}\n");
	snprintf(reply, sizeof(reply), "{\"return\": {\"exitcode\": 0, \"out-data\": \"%s\", \"err-data\": \"%s\", \"exited\": true}}\n",
		 eo, ee);
	fake_agent_expect(a, "guest-exec-status", "{\"pid\":4242}", 0, reply);

	struct qga_client *c = connect_to(a, NULL);
	const char *const argv[] = { "--vm", "2", "--vm-method", "write64", NULL };
	CHECK_MSG(qga_exec(c, "/usr/bin/stress-ng", argv, NULL, true, &pid, &err) == 0, "%s", err.msg);
	CHECK(pid == 4242);
	_cleanup_free_ char *args = fake_agent_last_args(a, "guest-exec");
	CHECK_MSG(strstr(args, "\"arg\":[\"--vm\",\"2\",\"--vm-method\",\"write64\"]") && strstr(args, "\"capture-output\":true"),
		  "%s", args);
	uint64_t t0 = mono_ns();
	CHECK_MSG(qga_exec_wait(c, pid, 10000, 20, &st, &err) == 0, "%s", err.msg);
	CHECK(mono_ns() - t0 >= 2 * 20 * NSEC_PER_MSEC); /* it polled: two "still running" answers came first */
	CHECK(st.exited && st.has_code && st.code == 0 && st.signal == 0);
	CHECK(st.out_len == sizeof(out) - 1 && !memcmp(st.out, out, st.out_len));
	CHECK(st.err_len == 5 && !strcmp(st.err, "warn\n"));
	qga_exec_status_clear(&st);
	qga_client_free(c);
	CHECK(fake_agent_stop(a, true) == 0);
}

static void test_fail(void)
{
	struct fake_agent *a = fake_agent_start(FAKE_AGENT_NORMAL);
	struct qga_exec_status st = {};
	struct sb_error err = {};
	_cleanup_free_ char *ee = b64("stress-ng: unknown method\n", 26);
	char reply[512];
	int r;

	fake_agent_expect(a, "guest-exec", NULL, 0, "{\"return\": {\"pid\": 7}}\n");
	snprintf(reply, sizeof(reply), "{\"return\": {\"exitcode\": 3, \"err-data\": \"%s\", \"exited\": true}}\n", ee);
	fake_agent_expect(a, "guest-exec-status", NULL, 0, reply);
	fake_agent_expect(a, "guest-exec", NULL, 0, "{\"return\": {\"pid\": 8}}\n");
	fake_agent_expect(a, "guest-exec-status", NULL, 0, "{\"return\": {\"signal\": 9, \"exited\": true}}\n");
	fake_agent_expect(a, "guest-exec", NULL, 0,
			  "{\"error\": {\"class\": \"GenericError\", \"desc\": \"Guest agent command failed, error was 'Failed to execute child process \\\"/nope\\\" (No such file or directory)'\"}}\n");

	struct qga_client *c = connect_to(a, NULL);
	r = qga_run(c, "/usr/bin/stress-ng", NULL, 5000, &st, &err);
	printf("%s\n", err.msg);
	CHECK(r == -EIO);
	CHECK(strstr(err.msg, "/usr/bin/stress-ng") && strstr(err.msg, "exited with status 3") &&
	      strstr(err.msg, "unknown method"));
	CHECK(st.has_code && st.code == 3);
	qga_exec_status_clear(&st);
	r = qga_run(c, "/usr/bin/stress-ng", NULL, 5000, NULL, &err);
	printf("%s\n", err.msg);
	CHECK(r == -EIO && strstr(err.msg, "killed by signal 9"));
	r = qga_run(c, "/nope", NULL, 5000, NULL, &err);
	printf("%s\n", err.msg);
	CHECK(r == -EREMOTEIO && strstr(err.msg, "guest-exec") && strstr(err.msg, "No such file") && strstr(err.msg, "/nope"));
	qga_client_free(c);
	CHECK(fake_agent_stop(a, true) == 0);
}

static void test_missing(void)
{
	struct qga_client *c = NULL;
	struct sb_error err = {};
	uint64_t t0;
	int r;

	/* no agent channel: nothing listens */
	t0 = mono_ns();
	r = qga_connect("/tmp/snapbench-no-such-agent.sock", 300, NULL, &c, &err);
	printf("%s\n", err.msg);
	CHECK(r == -ENOTCONN && strstr(err.msg, "snapbench-no-such-agent.sock"));
	CHECK(mono_ns() - t0 < 3 * NSEC_PER_SEC);

	/* a channel, but no agent running in the guest: nobody answers the sync */
	struct fake_agent *a = fake_agent_start(FAKE_AGENT_SILENT);
	t0 = mono_ns();
	r = qga_connect(fake_agent_path(a), 500, NULL, &c, &err);
	printf("%s\n", err.msg);
	CHECK(r == -ENOTCONN && strstr(err.msg, "qemu-guest-agent"));
	CHECK(mono_ns() - t0 >= 400 * NSEC_PER_MSEC && mono_ns() - t0 < 5 * NSEC_PER_SEC);
	CHECK(fake_agent_stop(a, true) == 0);
}

static void test_files(void)
{
	struct fake_agent *a = fake_agent_start(FAKE_AGENT_NORMAL);
	struct sb_error err = {};
	size_t n = 2 * QGA_FILE_CHUNK + 12345;
	unsigned char *data = malloc(n);
	char reply[128], buf[64];
	size_t got;
	bool eof;

	CHECK(data);
	for (size_t i = 0; i < n; i++)
		data[i] = (unsigned char)(i * 31 + (i >> 12));
	fake_agent_expect(a, "guest-file-open", "\"path\":\"\\/tmp\\/snapbench-probe\",\"mode\":\"w\"", 0, "{\"return\": 1000}\n");
	for (size_t off = 0; off < n; off += QGA_FILE_CHUNK) {
		size_t k = n - off < QGA_FILE_CHUNK ? n - off : QGA_FILE_CHUNK;
		char *chunk = b64(data + off, k);
		char *want = malloc(strlen(chunk) + 64);
		CHECK(want);
		snprintf(want, strlen(chunk) + 64, "\"buf-b64\":\"%s\"", chunk);
		for (char *p = want; *p; p++) /* json-c escapes '/' */
			if (*p == '/') {
				/* compare up to the first slash only: escaping is json-c's business */
				*p = '\0';
				break;
			}
		snprintf(reply, sizeof(reply), "{\"return\": {\"count\": %zu, \"eof\": false}}\n", k);
		fake_agent_expect(a, "guest-file-write", want, 0, reply);
		free(chunk);
		free(want);
	}
	fake_agent_expect(a, "guest-file-close", "{\"handle\":1000}", 0, "{\"return\": {}}\n");
	fake_agent_expect(a, "guest-exec", "\"path\":\"\\/bin\\/chmod\",\"arg\":[\"755\",\"\\/tmp\\/snapbench-probe\"]", 0,
			  "{\"return\": {\"pid\": 99}}\n");
	fake_agent_expect(a, "guest-exec-status", NULL, 0, "{\"return\": {\"exitcode\": 0, \"exited\": true}}\n");
	/* reading a file back */
	fake_agent_expect(a, "guest-file-open", "\"mode\":\"r\"", 0, "{\"return\": 1001}\n");
	fake_agent_expect(a, "guest-file-read", "\"handle\":1001", 0, "{\"return\": {\"count\": 5, \"buf-b64\": \"aGVsbG8=\", \"eof\": false}}\n");
	fake_agent_expect(a, "guest-file-read", "\"handle\":1001", 0, "{\"return\": {\"count\": 0, \"buf-b64\": \"\", \"eof\": true}}\n");

	struct qga_client *c = connect_to(a, NULL);
	CHECK_MSG(qga_copy_in(c, data, n, "/tmp/snapbench-probe", 0755, &err) == 0, "%s", err.msg);
	int64_t h;
	CHECK_MSG(qga_file_open(c, "/tmp/snapbench-probe.out", "r", &h, &err) == 0, "%s", err.msg);
	CHECK(h == 1001);
	CHECK_MSG(qga_file_read(c, h, buf, sizeof(buf), &got, &eof, &err) == 0, "%s", err.msg);
	CHECK(got == 5 && !eof && !memcmp(buf, "hello", 5));
	CHECK_MSG(qga_file_read(c, h, buf, sizeof(buf), &got, &eof, &err) == 0, "%s", err.msg);
	CHECK(got == 0 && eof);
	qga_client_free(c);
	free(data);
	CHECK(fake_agent_stop(a, true) == 0);
}

static void test_bad(void)
{
	struct fake_agent *a = fake_agent_start(FAKE_AGENT_NORMAL);
	struct qga_exec_status st = {};
	struct sb_error err = {};
	char version[32], big[12000];
	int r;

	/* output that is not base64 */
	fake_agent_expect(a, "guest-exec-status", NULL, 0, "{\"return\": {\"exitcode\": 0, \"out-data\": \"!!notbase64\", \"exited\": true}}\n");
	/* a count that does not match the data */
	fake_agent_expect(a, "guest-file-read", NULL, 0, "{\"return\": {\"count\": 9, \"buf-b64\": \"aGVsbG8=\", \"eof\": false}}\n");
	/* a hostile guest: 4 characters (the encoded length of 1 byte) that decode to 3 bytes, for a 1-byte read */
	fake_agent_expect(a, "guest-file-read", NULL, 0, "{\"return\": {\"count\": 1, \"buf-b64\": \"QUJD\", \"eof\": false}}\n");
	/* garbage: the client resyncs before the next command */
	fake_agent_expect(a, "guest-info", NULL, 0, "}}not json{\n");
	fake_agent_expect(a, "guest-info", NULL, 0, "{\"return\": {\"version\": \"after-garbage\"}}\n");
	/* a reply above the limit */
	memset(big, 'x', sizeof(big));
	memcpy(big, "{\"return\": {\"version\": \"", 24);
	memcpy(big + sizeof(big) - 5, "\"}}\n", 5);
	fake_agent_expect(a, "guest-info", NULL, 0, big);
	fake_agent_expect(a, "guest-info", NULL, 0, "{\"return\": {\"version\": \"after-big\"}}\n");
	/* a late reply: it must not be taken for the next command's */
	fake_agent_expect(a, "guest-info", NULL, 600, "{\"return\": {\"version\": \"late\"}}\n");
	fake_agent_expect(a, "guest-info", NULL, 0, "{\"return\": {\"version\": \"fresh\"}}\n");

	struct qga_options o = { .max_reply = 8192, .command_timeout_ms = 5000 };
	struct qga_client *c = connect_to(a, &o);
	r = qga_exec_status(c, 1, &st, &err);
	printf("%s\n", err.msg);
	CHECK(r == -EPROTO && strstr(err.msg, "base64"));
	char buf[16];
	size_t got;
	bool eof;
	r = qga_file_read(c, 5, buf, sizeof(buf), &got, &eof, &err);
	printf("%s\n", err.msg);
	CHECK(r == -EPROTO);
	/* nothing is written past the caller's buffer: the decoded length is bounded before decoding */
	struct {
		char one[1];
		char guard[7];
	} g;
	memset(&g, 0x5a, sizeof(g));
	r = qga_file_read(c, 5, g.one, sizeof(g.one), &got, &eof, &err);
	printf("%s\n", err.msg);
	CHECK(r == -EPROTO && got == 0);
	for (size_t i = 0; i < sizeof(g.guard); i++)
		CHECK_MSG(g.guard[i] == 0x5a, "guest-file-read wrote byte %zu past a 1-byte buffer", i + 1);
	r = qga_info(c, version, sizeof(version), &err);
	printf("%s\n", err.msg);
	CHECK(r == -EBADMSG);
	CHECK_MSG(qga_info(c, version, sizeof(version), &err) == 0, "%s", err.msg);
	CHECK(!strcmp(version, "after-garbage"));
	r = qga_info(c, version, sizeof(version), &err);
	printf("%s\n", err.msg);
	CHECK(r == -EMSGSIZE);
	CHECK_MSG(qga_info(c, version, sizeof(version), &err) == 0, "%s", err.msg);
	CHECK(!strcmp(version, "after-big"));
	qga_client_set_command_timeout(c, 200);
	r = qga_info(c, version, sizeof(version), &err);
	printf("%s\n", err.msg);
	CHECK(r == -ETIMEDOUT);
	qga_client_set_command_timeout(c, 5000);
	CHECK_MSG(qga_info(c, version, sizeof(version), &err) == 0, "%s", err.msg);
	CHECK_MSG(!strcmp(version, "fresh"), "got the reply \"%s\"", version);
	CHECK(fake_agent_syncs(a) == 4); /* connect, after garbage, after the big reply, after the timeout */
	qga_client_free(c);
	CHECK(fake_agent_stop(a, true) == 0);
}

static void test_closed(void)
{
	struct fake_agent *a = fake_agent_start(FAKE_AGENT_NORMAL);
	struct sb_error err = {};
	char version[32];

	struct qga_client *c = connect_to(a, NULL);
	CHECK(fake_agent_stop(a, false) == 0);
	int r = qga_info(c, version, sizeof(version), &err);
	printf("%s\n", err.msg);
	CHECK(r == -ECONNRESET);
	r = qga_info(c, version, sizeof(version), &err);
	CHECK(r == -ECONNRESET && strstr(err.msg, "earlier"));
	qga_client_free(c);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} cases[] = {
		{ "sync", test_sync },	 { "exec", test_exec }, { "fail", test_fail },	   { "missing", test_missing },
		{ "files", test_files }, { "bad", test_bad },	{ "closed", test_closed },
	};

	CHECK(argc == 2);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(argv[1], cases[i].name)) {
			cases[i].fn();
			return 0;
		}
	CHECK_MSG(false, "unknown case %s", argv[1]);
}
