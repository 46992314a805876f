// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `snapbench qmp` end to end: the built binary (argv[1]) against a real
 * QEMU with KVM. Checks stdout (JSON), stderr (errors with their class) and
 * exit codes, fd passing with --fd, a background snapshot driven from the
 * command line, --wait-event, and QEMU gone.
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>
#include <time.h>

#include "check.h"
#include "qemu-launch.h"
#include "test-accel.h"
#include "test-json.h"

extern char **environ;

static const char *snapbench;
static const char *sock;

struct result {
	int status;        /* exit code */
	char out[1 << 16];
	char err[4096];
};

static void drain(int fd, char *buf, size_t cap, size_t *len, bool *open_)
{
	ssize_t n = read(fd, buf + *len, cap - 1 - *len);

	if (n <= 0) {
		*open_ = false;
		return;
	}
	*len += (size_t)n;
	buf[*len] = '\0';
	CHECK_MSG(*len < cap - 1, "output too long");
}

/* Run snapbench qmp --socket SOCK ARGS..., collect stdout/stderr and the exit code. */
static void run(struct result *res, ...)
{
	const char *argv[32] = { snapbench, "qmp", "--socket", sock };
	size_t n = 4, olen = 0, elen = 0;
	int out[2], err[2], status;
	bool out_open = true, err_open = true;
	posix_spawn_file_actions_t fa;
	const char *a;
	va_list ap;
	pid_t pid;

	va_start(ap, res);
	while ((a = va_arg(ap, const char *))) {
		CHECK(n < 31);
		argv[n++] = a;
	}
	va_end(ap);
	argv[n] = NULL;

	CHECK(pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
	CHECK(posix_spawn(&pid, snapbench, &fa, NULL, (char *const *)argv, environ) == 0);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	close(err[1]);

	res->out[0] = res->err[0] = '\0';
	while (out_open || err_open) {
		struct pollfd p[2] = { { .fd = out_open ? out[0] : -1, .events = POLLIN },
				       { .fd = err_open ? err[0] : -1, .events = POLLIN } };

		CHECK(poll(p, 2, 300000) > 0);
		if (p[0].revents)
			drain(out[0], res->out, sizeof(res->out), &olen, &out_open);
		if (p[1].revents)
			drain(err[0], res->err, sizeof(res->err), &elen, &err_open);
	}
	close(out[0]);
	close(err[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK_MSG(WIFEXITED(status), "snapbench died: status %d", status);
	res->status = WEXITSTATUS(status);
}

#define EXPECT_EXIT(res, code)                                                                          \
	CHECK_MSG((res)->status == (code), "exit %d, expected %d; stdout: %s; stderr: %s", (res)->status, \
		  (code), (res)->out, (res)->err)

static struct json_object *parse_out(const char *text)
{
	struct json_object *o = json_tokener_parse(text);

	CHECK_MSG(o, "stdout is not JSON: %s", text);
	return o;
}

/* The KVM stat name in a query-stats return (first result), or NULL. */
static struct json_object *stat_in(struct json_object *ret, const char *name)
{
	struct json_object *stats = jp(json_object_array_get_idx(ret, 0), "stats");

	for (size_t i = 0; stats && i < json_object_array_length(stats); i++) {
		struct json_object *s = json_object_array_get_idx(stats, i);

		if (!strcmp(json_object_get_string(jp(s, "name")), name))
			return jp(s, "value");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct result r;
	struct json_object *o;
	struct test_qemu q;
	char snap[192], sink[192];
	struct stat st;
	int status;

	CHECK_MSG(argc == 2, "usage: %s PATH-TO-SNAPBENCH", argv[0]);
	snapbench = argv[1];
	test_qemu_start(&q, 256, 1, NULL);
	sock = q.qmp_path;
	test_qemu_path(&q, "snapshot.bin", snap, sizeof(snap));
	test_qemu_path(&q, "sink.bin", sink, sizeof(sink));

	/* snapbench qmp fails at once on a path that names nothing: wait for QEMU to create its socket */
	for (int i = 0; i < 600 && stat(sock, &st) < 0; i++)
		usleep(100 * 1000);
	run(&r, "--timeout", "60", "query-version", NULL);
	EXPECT_EXIT(&r, 0);
	o = parse_out(r.out);
	CHECK(json_object_get_int(jp(o, "qemu/major")) >= 7);
	json_object_put(o);

	run(&r, "query-stats", "{\"target\": \"vm\"}", NULL);
	EXPECT_EXIT(&r, 0);
	o = parse_out(r.out);
	/* under TCG QEMU answers with no KVM stats at all */
	CHECK_MSG(test_kvm() ? stat_in(o, "remote_tlb_flush") != NULL : json_object_array_length(o) == 0, "%s", r.out);
	json_object_put(o);

	run(&r, "--pretty", "query-stats",
	    "{\"target\": \"vcpu\", \"providers\": [{\"provider\": \"kvm\", \"names\": [\"pf_taken\"]}]}", NULL);
	EXPECT_EXIT(&r, 0);
	o = parse_out(r.out);
	if (test_kvm()) {
		CHECK(strchr(r.out, '\n') < r.out + strlen(r.out) - 1); /* indented over several lines */
		CHECK_MSG(stat_in(o, "pf_taken") && !stat_in(o, "exits"), "%s", r.out);
	} else {
		CHECK_MSG(json_object_array_length(o) == 0, "%s", r.out);
	}
	json_object_put(o);

	/* QMP errors: class and desc on stderr, exit 1, nothing on stdout. */
	run(&r, "no-such-command", NULL);
	EXPECT_EXIT(&r, 1);
	CHECK_MSG(strstr(r.err, "QMP command 'no-such-command' failed: CommandNotFound: "), "%s", r.err);
	CHECK(r.out[0] == '\0');
	run(&r, "query-stats", "{\"target\": \"nowhere\"}", NULL);
	EXPECT_EXIT(&r, 1);
	CHECK_MSG(strstr(r.err, "failed: GenericError: "), "%s", r.err);

	/* Usage errors: exit 2, before touching QEMU. */
	run(&r, "query-stats", "{\"target\": ", NULL);
	EXPECT_EXIT(&r, 2);
	CHECK(strstr(r.err, "ARGS-JSON"));
	run(&r, "query-status", "{}", "extra", NULL);
	EXPECT_EXIT(&r, 2);
	run(&r, NULL);
	EXPECT_EXIT(&r, 2);
	run(&r, "--fd", "/nonexistent-dir/x", "getfd", "{\"fdname\": \"x\"}", NULL);
	EXPECT_EXIT(&r, 2);
	CHECK(strstr(r.err, "/nonexistent-dir/x"));

	/* --fd: the file reaches QEMU with getfd (closefd knows the name afterwards). */
	run(&r, "--fd", sink, "getfd", "{\"fdname\": \"cli\"}", NULL);
	EXPECT_EXIT(&r, 0);
	CHECK(!strcmp(r.out, "{}\n"));
	run(&r, "closefd", "{\"fdname\": \"cli\"}", NULL);
	EXPECT_EXIT(&r, 0);

	/* A background snapshot from the command line. */
	run(&r, "migrate-set-capabilities",
	    "{\"capabilities\": [{\"capability\": \"background-snapshot\", \"state\": true}, "
	    "{\"capability\": \"events\", \"state\": true}]}",
	    NULL);
	EXPECT_EXIT(&r, 0);
	run(&r, "--fd", snap, "getfd", "{\"fdname\": \"snap\"}", NULL);
	EXPECT_EXIT(&r, 0);
	/* QEMU sends MIGRATION setup before its reply to migrate: --wait-event catches it. */
	run(&r, "--wait-event", "MIGRATION", "migrate", "{\"uri\": \"fd:snap\"}", NULL);
	EXPECT_EXIT(&r, 0);
	char *second = strchr(r.out, '\n');
	CHECK(second && !strncmp(r.out, "{}\n", 3));
	o = parse_out(second + 1);
	CHECK_MSG(!strcmp(json_object_get_string(jp(o, "event")), "MIGRATION"), "%s", r.out);
	CHECK(!strcmp(json_object_get_string(jp(o, "data/status")), "setup"));
	CHECK(json_object_get_int64(jp(o, "timestamp/seconds")) > 0);
	json_object_put(o);
	for (int i = 0;; i++) {
		CHECK_MSG(i < 600, "snapshot did not complete");
		run(&r, "query-migrate", NULL);
		EXPECT_EXIT(&r, 0);
		o = parse_out(r.out);
		const char *s = json_object_get_string(jp(o, "status"));
		bool done = s && !strcmp(s, "completed");
		CHECK_MSG(!s || strcmp(s, "failed"), "%s", r.out);
		json_object_put(o);
		if (done)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 200 * 1000 * 1000 }, NULL);
	}
	CHECK(stat(snap, &st) == 0 && st.st_size > 0);
	printf("CLI background snapshot: %lld bytes\n", (long long)st.st_size);

	/* An event that never comes: exit 1 after the timeout. */
	run(&r, "--timeout", "0.3", "--wait-event", "NEVER", NULL);
	EXPECT_EXIT(&r, 1);
	CHECK_MSG(strstr(r.err, "sent no NEVER event within 300 ms"), "%s", r.err);

	/* quit, and see SHUTDOWN. */
	run(&r, "--wait-event", "SHUTDOWN", "quit", NULL);
	EXPECT_EXIT(&r, 0);
	CHECK_MSG(strstr(r.out, "\"event\":\"SHUTDOWN\"") && strstr(r.out, "host-qmp-quit"), "%s", r.out);
	status = test_qemu_wait_exit(&q, 60000);
	CHECK(status >= 0 && WIFEXITED(status));

	/* QEMU gone: not reachable, exit 4. */
	run(&r, "--timeout", "0.3", "query-status", NULL);
	EXPECT_EXIT(&r, 4);
	CHECK_MSG(strstr(r.err, sock), "%s", r.err);

	test_qemu_stop(&q);
	printf("ok\n");
	return 0;
}
