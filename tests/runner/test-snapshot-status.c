// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The background-snapshot scenario's end, against the scripted fake QMP
 * server (a real QEMU cannot lose an event, or stay in "setup", on demand):
 *
 *   event-lost      no MIGRATION event ever comes: query-migrate's
 *                   "completed" (asked at a sample) ends the snapshot, with
 *                   QEMU's total time as its duration
 *   failed          the same with "failed": the snapshot fails with QEMU's
 *                   error-desc
 *   setup-stuck     still "setup" after the bound: the snapshot fails, says
 *                   so and names userfaultfd; the migration is cancelled
 *                   once
 *   throttled       with spec.snapshot.max_bandwidth, query-migrate's
 *                   "completed" is not the end: the sink's last byte is
 *                   (QEMU, here the fake, still holds the pipe open)
 *   event           the MIGRATION event alone still ends it, no query needed
 *
 * argv[1] (optional) runs one case only.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "fake-qmp-server.h"
#include "macro.h"
#include "qmp.h"
#include "run-test.h"
#include "scenario.h"
#include "spec.h"
#include "vm.h"

#define T 30000

static const char *dir; /* the run directory: test_tmpdir() */

/* What prepare and start send: QEMU's own limit lifted, the capabilities set and checked, the fd, migrate. */
#define CAPS_REPLY                                                                                        \
	"{\"return\": [{\"state\": true, \"capability\": \"events\"}, {\"state\": true, \"capability\": " \
	"\"background-snapshot\"}], \"id\": %ID%}\r\n"
#define SNAPSHOT_BEGINS                                                                                    \
	EXPECT_ARGS("migrate-set-parameters", "{\"max-bandwidth\": 1099511627776}"), SEND(FAKE_OK),        \
		EXPECT("query-migrate-parameters"),                                                        \
		SEND("{\"return\": {\"max-bandwidth\": 1099511627776}, \"id\": %ID%}\r\n"),                \
		EXPECT("migrate-set-capabilities"), SEND(FAKE_OK), EXPECT("query-migrate-capabilities"),   \
		SEND(CAPS_REPLY), EXPECT("query-migrate-capabilities"), SEND(CAPS_REPLY),                  \
		EXPECT("query-migrate-capabilities"), SEND(CAPS_REPLY), EXPECT_FD("getfd"), SEND(FAKE_OK), \
		EXPECT_ARGS("migrate", "{\"uri\": \"fd:sbsnapshot\"}"), SEND(FAKE_OK)

#define MIGRATE_REPLY(status)                                                                               \
	"{\"return\": {\"status\": \"" status "\", \"total-time\": 120, \"ram\": {\"total\": 1048576, "     \
	"\"transferred\": 1048576, \"remaining\": 0, \"duplicate\": 10, \"normal\": 246}}, \"id\": %ID%}\r\n"
#define QUERY(status) EXPECT("query-migrate"), SEND(MIGRATE_REPLY(status))

struct harness {
	struct fake_server *server;
	struct run_spec spec;
	struct vm vm;
	struct scenario_ctx ctx;
	const struct scenario_ops *ops;
	void *state;
	struct report_rep rep;
};

static void begin(struct harness *h, const struct fake_step *script, const char *max_bandwidth)
{
	struct sb_error err = {};

	memset(h, 0, sizeof(*h));
	CHECK(spec_init(&h->spec) == 0);
	if (max_bandwidth)
		CHECK(spec_set(&h->spec, "snapshot.max_bandwidth", max_bandwidth, NULL, &err) == 0);
	CHECK_MSG(spec_validate(&h->spec, &err) == 0, "%s", err.msg);
	h->server = fake_server_start(script, 0);
	CHECK_MSG(qmp_connect(fake_server_path(h->server), T, NULL, &h->vm.qmp, &err) == 0, "%s", err.msg);
	qmp_client_set_command_timeout(h->vm.qmp, T);
	h->ops = scenario_find(h->spec.scenario);
	CHECK(h->ops == &scenario_background_snapshot);
	h->state = calloc(1, h->ops->state_size);
	CHECK(h->state);
	h->ctx = (struct scenario_ctx){ .spec = &h->spec, .vm = &h->vm, .run_dir = dir, .rep_start_ns = mono_ns() };
	CHECK_MSG(h->ops->prepare(h->state, &h->ctx, &err) == 0, "%s", err.msg);
	CHECK_MSG(h->ops->start(h->state, &h->ctx, &err) == 0, "%s", err.msg);
}

static void sample(struct harness *h, const char *want_status)
{
	struct report_migration m;
	struct sb_error err = {};
	double fraction;

	CHECK_MSG(h->ops->progress(h->state, &h->ctx, &m, &fraction, &err) == 0, "%s", err.msg);
	CHECK_MSG(!strcmp(m.status, want_status), "query-migrate said %s, expected %s", m.status, want_status);
}

static int poll_once(struct harness *h, bool *done, struct sb_error *err)
{
	*done = false;
	return h->ops->poll(h->state, &h->ctx, done, err);
}

/* Polls (never queries) until the scenario says it ended; bounded. */
static int poll_until_done(struct harness *h, struct sb_error *err)
{
	uint64_t deadline = mono_ns() + 20 * NSEC_PER_SEC;
	bool done = false;
	int k;

	for (;;) {
		k = poll_once(h, &done, err);
		if (done || k < 0)
			return k;
		CHECK_MSG(mono_ns() < deadline, "the snapshot did not end within 20 s");
		usleep(20000);
	}
}

/* finish (one more query-migrate), cleanup, summarize (the runner's order); the fake must have played its whole script. */
static void end(struct harness *h, bool finish)
{
	struct sb_error err = {};
	int fd;

	if (finish)
		CHECK_MSG(h->ops->finish(h->state, &h->ctx, &err) == 0, "%s", err.msg);
	h->ops->cleanup(h->state, &h->ctx);
	h->ops->summarize(h->state, &h->ctx, &h->rep);
	qmp_client_free(h->vm.qmp);
	fd = fake_server_finish(h->server);
	if (fd >= 0)
		close(fd);
	free(h->state);
	spec_done(&h->spec);
}

static void rep_done(struct harness *h)
{
	free(h->rep.snapshot.path);
	free(h->rep.snapshot.error);
}

static void test_event_lost(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE, SNAPSHOT_BEGINS, QUERY("setup"), QUERY("active"), QUERY("completed"), QUERY("completed"), END,
	};
	struct harness h;
	struct sb_error err = {};
	bool done;

	begin(&h, script, NULL);
	/* no event: polling alone does not end it, whatever the time */
	CHECK(poll_once(&h, &done, &err) == 0 && !done);
	sample(&h, "setup"); /* within the setup bound (60 s by default) */
	CHECK(poll_once(&h, &done, &err) == 0 && !done);
	sample(&h, "active");
	CHECK(poll_once(&h, &done, &err) == 0 && !done);
	sample(&h, "completed");
	CHECK_MSG(poll_once(&h, &done, &err) == 0 && done, "%s", err.msg);
	end(&h, true);
	CHECK(h.rep.snapshot.status == REPORT_SNAPSHOT_COMPLETED);
	CHECK_MSG(h.rep.snapshot.duration_s > 0.119 && h.rep.snapshot.duration_s < 0.121, "duration %g s",
		  h.rep.snapshot.duration_s);
	CHECK(h.rep.snapshot.bytes == 1048576 && h.rep.snapshot.pages == 256);
	CHECK(h.rep.snapshot.error == NULL);
	rep_done(&h);
}

static void test_failed(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		SNAPSHOT_BEGINS,
		QUERY("active"),
		EXPECT("query-migrate"),
		SEND("{\"return\": {\"status\": \"failed\", \"error-desc\": \"Unable to write to file: Broken pipe\"}, "
		     "\"id\": %ID%}\r\n"),
		END,
	};
	struct harness h;
	struct sb_error err = {};
	bool done;

	begin(&h, script, NULL);
	sample(&h, "active");
	CHECK(poll_once(&h, &done, &err) == 0 && !done);
	sample(&h, "failed");
	CHECK(poll_once(&h, &done, &err) == -EIO && done);
	printf("failed: %s\n", err.msg);
	CHECK_MSG(strstr(err.msg, "the snapshot failed: Unable to write to file: Broken pipe"), "%s", err.msg);
	end(&h, false);
	CHECK(h.rep.snapshot.status == REPORT_SNAPSHOT_FAILED);
	CHECK(h.rep.snapshot.error && strstr(h.rep.snapshot.error, "Broken pipe"));
	rep_done(&h);
}

static void test_setup_stuck(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		SNAPSHOT_BEGINS,
		QUERY("setup"),
		EXPECT("migrate_cancel"),
		SEND("{\"event\": \"MIGRATION\", \"data\": {\"status\": \"cancelling\"}}\r\n"
		     "{\"event\": \"MIGRATION\", \"data\": {\"status\": \"cancelled\"}}\r\n" FAKE_OK),
		END, /* one cancel, not a second one from cleanup */
	};
	struct harness h;
	struct sb_error err = {};
	bool done;

	begin(&h, script, NULL);
	h.ctx.setup_timeout_ms = 100;
	usleep(200000); /* the sample below comes after the bound, for sure */
	sample(&h, "setup");
	CHECK(poll_once(&h, &done, &err) == -EIO && done);
	printf("setup-stuck: %s\n", err.msg);
	CHECK_MSG(strstr(err.msg, "still in \"setup\"") && strstr(err.msg, "userfaultfd"), "%s", err.msg);
	end(&h, false);
	CHECK(h.rep.snapshot.status == REPORT_SNAPSHOT_FAILED);
	CHECK(h.rep.snapshot.error && strstr(h.rep.snapshot.error, "userfaultfd"));
	rep_done(&h);
}

static void test_throttled(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		SNAPSHOT_BEGINS,
		FD_WRITE(256 << 10),
		QUERY("completed"),
		QUERY("completed"),
		FD_CLOSE, /* QEMU lets go of the pipe: the sink now sees its end */
		QUERY("completed"),
		END,
	};
	struct harness h;
	struct sb_error err = {};
	struct stat st;
	char path[PATH_MAX];
	bool done;

	snprintf(path, sizeof(path), "%s/snapshot-rep0.bin", dir);
	begin(&h, script, "64M");
	sample(&h, "completed");
	/* QEMU has completed, the fake still holds the pipe's write end: not the end yet */
	CHECK(poll_once(&h, &done, &err) == 0 && !done);
	usleep(100000);
	CHECK(poll_once(&h, &done, &err) == 0 && !done);
	sample(&h, "completed");
	CHECK_MSG(poll_until_done(&h, &err) == 0, "%s", err.msg);
	CHECK(stat(path, &st) == 0 && st.st_size == 256 << 10); /* every byte reached the file */
	end(&h, true);
	CHECK(h.rep.snapshot.status == REPORT_SNAPSHOT_COMPLETED);
	CHECK(h.rep.snapshot.throttle_rate == 64u << 20);
	CHECK(h.rep.snapshot.throttle_bytes == 256 << 10);
	CHECK(h.rep.snapshot.file_bytes == 256 << 10);
	/* timed to the sink's last byte, not to QEMU's 120 ms */
	CHECK_MSG(h.rep.snapshot.duration_s > 0.1, "duration %g s", h.rep.snapshot.duration_s);
	CHECK(access(path, F_OK) < 0); /* not kept */
	rep_done(&h);
}

static void test_event(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		SNAPSHOT_BEGINS,
		SEND("{\"event\": \"MIGRATION\", \"data\": {\"status\": \"setup\"}}\r\n"
		     "{\"event\": \"MIGRATION\", \"data\": {\"status\": \"active\"}}\r\n"
		     "{\"event\": \"MIGRATION\", \"data\": {\"status\": \"completed\"}}\r\n"),
		QUERY("completed"),
		END,
	};
	struct harness h;
	struct sb_error err = {};

	begin(&h, script, NULL);
	CHECK_MSG(poll_until_done(&h, &err) == 0, "%s", err.msg);
	end(&h, true);
	CHECK(h.rep.snapshot.status == REPORT_SNAPSHOT_COMPLETED);
	rep_done(&h);
}

int main(int argc, char **argv)
{
	static const struct run_test_case cases[] = {
		{ "event-lost", test_event_lost }, { "failed", test_failed }, { "setup-stuck", test_setup_stuck },
		{ "throttled", test_throttled },   { "event", test_event },
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	dir = test_tmpdir("snapshot-status");
	run_test_cases(cases, ARRAY_SIZE(cases), argc > 1 ? argv[1] : NULL);
	return 0;
}
