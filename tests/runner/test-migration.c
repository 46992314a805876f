// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The migration tracker (runner/scenario/migration.h) against the scripted
 * fake QMP server: what a real QEMU will not do on demand (lose an event,
 * fail with a given reason, stay in "setup").
 *
 *   events      MIGRATION events alone end it, dated by their arrival; each
 *               status is passed on; a completion asks QEMU nothing more
 *   failed      a "failed" event: QEMU's error-desc, asked once
 *   query       no event: query-migrate's figures make the rows (pages per
 *               second between rows), its "completed" ends it, dated by
 *               QEMU's total time
 *   setup       query-migrate's "setup" past the bound, not before it
 *   passes      MIGRATION_PASS events, each taken once
 *   stop        cleanup cancels a migration under way once and waits for
 *               "cancelled"; an ended one is left alone
 *   refused     on_status stops the reading: its error, the rest still queued
 *   lost        the monitor hangs up: the client's error
 *
 * argv[1] (optional) runs one case only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "fake-qmp-server.h"
#include "macro.h"
#include "migration.h"
#include "qmp.h"
#include "run-test.h"

#define T 30000

#define EVENT(status) "{\"event\": \"MIGRATION\", \"data\": {\"status\": \"" status "\"}}\r\n"
#define MIGRATE_REPLY(status, normal)                                                                     \
	"{\"return\": {\"status\": \"" status "\", \"total-time\": 120, \"ram\": {\"total\": 1048576, "    \
	"\"transferred\": 524288, \"remaining\": 524288, \"duplicate\": 10, \"normal\": " normal "}}, " \
	"\"id\": %ID%}\r\n"

struct harness {
	struct fake_server *server;
	struct qmp_client *qmp;
	struct migration m;
};

static void begin(struct harness *h, const struct fake_step *script)
{
	struct sb_error err = {};

	memset(h, 0, sizeof(*h));
	h->server = fake_server_start(script, 0);
	CHECK_MSG(qmp_connect(fake_server_path(h->server), T, NULL, &h->qmp, &err) == 0, "%s", err.msg);
	qmp_client_set_command_timeout(h->qmp, T);
	migration_init(&h->m, h->qmp);
	migration_started(&h->m, mono_ns());
	CHECK(!strcmp(h->m.status, "setup"));
}

static void end(struct harness *h)
{
	qmp_client_free(h->qmp);
	CHECK(fake_server_finish(h->server) < 0);
}

struct seen {
	unsigned n;
	enum qmp_migration_status st[8];
	int fail_on; /* a status to refuse, or 0 */
};

static int on_status(void *userdata, enum qmp_migration_status st, struct sb_error *err)
{
	struct seen *s = userdata;

	if (s->n < ARRAY_SIZE(s->st))
		s->st[s->n++] = st;
	if ((int)st == s->fail_on)
		return sb_error_set(err, -EPERM, "refused at %s", qmp_migration_status_to_string(st));
	return 0;
}

/* Reads events until the migration ended or until n statuses were seen; bounded. */
static int read_until(struct harness *h, struct seen *seen, unsigned n, struct sb_error *err)
{
	uint64_t deadline = mono_ns() + 20 * NSEC_PER_SEC;
	int k;

	for (;;) {
		k = migration_read_events(&h->m, seen ? on_status : NULL, seen, err);
		if (k < 0 || h->m.ended || (seen && seen->n >= n))
			return k;
		CHECK_MSG(mono_ns() < deadline, "no end within 20 s");
		usleep(10000);
	}
}

static void test_events(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE, SEND(EVENT("setup") EVENT("active") EVENT("completed")), END,
	};
	struct harness h;
	struct seen seen = {};
	struct sb_error err = {};
	uint64_t before;

	begin(&h, script);
	before = mono_ns();
	CHECK_MSG(read_until(&h, &seen, 3, &err) == 0, "%s", err.msg);
	CHECK(h.m.ended && h.m.end_status == QMP_MIGRATION_COMPLETED);
	CHECK(h.m.end_ns > h.m.migrate_ns && h.m.end_ns <= mono_ns() && h.m.end_ns + NSEC_PER_SEC > before);
	CHECK(seen.n == 3 && seen.st[0] == QMP_MIGRATION_SETUP && seen.st[1] == QMP_MIGRATION_ACTIVE &&
	      seen.st[2] == QMP_MIGRATION_COMPLETED);
	CHECK(!strcmp(h.m.status, "completed") && !*h.m.error);
	/* ended: nothing more is read, and cleanup leaves it alone */
	CHECK(migration_read_events(&h.m, NULL, NULL, &err) == 0);
	migration_stop(&h.m);
	end(&h);
}

static void test_failed(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		SEND(EVENT("active") EVENT("failed")),
		EXPECT("query-migrate"),
		SEND("{\"return\": {\"status\": \"failed\", \"error-desc\": \"Unable to write to socket: Broken pipe\"}, "
		     "\"id\": %ID%}\r\n"),
		END,
	};
	struct harness h;
	struct sb_error err = {};

	begin(&h, script);
	CHECK_MSG(read_until(&h, NULL, 0, &err) == 0, "%s", err.msg);
	CHECK(h.m.ended && h.m.end_status == QMP_MIGRATION_FAILED);
	CHECK_MSG(!strcmp(h.m.error, "Unable to write to socket: Broken pipe"), "%s", h.m.error);
	CHECK(!strcmp(h.m.status, "failed"));
	end(&h);
}

static void query_row(struct harness *h, struct report_migration *row, const char *want)
{
	struct qmp_migration_info mi = {};
	struct sb_error err = {};

	CHECK_MSG(migration_query(&h->m, &mi, &err) == 0, "%s", err.msg);
	migration_row(&h->m, &mi, h->m.query_ns, row);
	qmp_migration_info_clear(&mi);
	CHECK_MSG(!strcmp(row->status, want) && !strcmp(h->m.status, want), "row %s, tracker %s, expected %s",
		  row->status, h->m.status, want);
}

static void test_query(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-migrate"), SEND("{\"return\": {\"status\": \"setup\"}, \"id\": %ID%}\r\n"),
		EXPECT("query-migrate"), SEND(MIGRATE_REPLY("active", "90")),
		EXPECT("query-migrate"), SEND(MIGRATE_REPLY("active", "190")),
		EXPECT("query-migrate"), SEND(MIGRATE_REPLY("completed", "246")),
		END,
	};
	struct harness h;
	struct report_migration row;
	uint64_t t0;

	begin(&h, script);
	t0 = mono_ns() - NSEC_PER_SEC; /* migrate a second ago: QEMU's 120 ms end is before our query */
	migration_started(&h.m, t0);
	query_row(&h, &row, "setup");
	CHECK(!h.m.ended && row.transferred == 0 && row.pages == 0 && row.pages_per_s == 0);
	CHECK(row.dirty_pages_rate < 0 && !row.precopy);
	query_row(&h, &row, "active");
	CHECK(row.transferred == 524288 && row.remaining == 524288 && row.pages == 100);
	CHECK_MSG(row.pages_per_s > 0, "%g pages/s", row.pages_per_s);
	usleep(20000);
	query_row(&h, &row, "active");
	/* 100 pages more in 20 ms or a little longer */
	CHECK(row.pages == 200);
	CHECK_MSG(row.pages_per_s > 100 && row.pages_per_s <= 5000, "%g pages/s", row.pages_per_s);
	CHECK(!h.m.ended);
	query_row(&h, &row, "completed");
	CHECK(h.m.ended && h.m.end_status == QMP_MIGRATION_COMPLETED && h.m.query_status == QMP_MIGRATION_COMPLETED);
	CHECK_MSG(h.m.end_ns == t0 + 120 * NSEC_PER_MSEC, "ended %.3f s after migrate",
		  (double)(h.m.end_ns - t0) / 1e9);
	migration_stop(&h.m); /* ended: no cancel */
	end(&h);
}

static void test_setup(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-migrate"), SEND("{\"return\": {\"status\": \"setup\"}, \"id\": %ID%}\r\n"),
		EXPECT("query-migrate"), SEND("{\"return\": {\"status\": \"active\"}, \"id\": %ID%}\r\n"),
		EXPECT("migrate_cancel"), SEND(EVENT("cancelling") EVENT("cancelled") FAKE_OK),
		END, /* one cancel, not a second one from cleanup */
	};
	struct harness h;
	struct report_migration row;

	begin(&h, script);
	CHECK(migration_setup_stuck_s(&h.m, 100) == 0); /* not asked yet */
	migration_started(&h.m, mono_ns() - 200 * NSEC_PER_MSEC);
	query_row(&h, &row, "setup");
	CHECK_MSG(migration_setup_stuck_s(&h.m, 100) >= 0.2, "%g s", migration_setup_stuck_s(&h.m, 100));
	CHECK(migration_setup_stuck_s(&h.m, 60000) == 0);
	query_row(&h, &row, "active");
	CHECK(migration_setup_stuck_s(&h.m, 100) == 0);
	CHECK(migration_cancel(&h.m));
	migration_wait_cancelled(&h.m);
	CHECK(migration_cancel(&h.m)); /* sent already: not again */
	migration_stop(&h.m);
	end(&h);
}

static void test_passes(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		SEND("{\"event\": \"MIGRATION_PASS\", \"data\": {\"pass\": 2}}\r\n" EVENT("active")),
		END,
	};
	struct harness h;
	struct seen seen = {};
	struct sb_error err = {};

	begin(&h, script);
	h.m.passes = true;
	CHECK(!migration_take_pass(&h.m));
	CHECK_MSG(read_until(&h, &seen, 1, &err) == 0, "%s", err.msg);
	CHECK(migration_take_pass(&h.m));
	CHECK(!migration_take_pass(&h.m));
	CHECK(!h.m.ended && !strcmp(h.m.status, "active"));
	end(&h);
}

static void test_stop(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("migrate_cancel"), SEND(EVENT("cancelling") FAKE_OK),
		PAUSE(50), SEND(EVENT("cancelled")),
		END,
	};
	struct harness h;

	begin(&h, script);
	migration_stop(&h.m);
	CHECK(h.m.cancel_sent);
	migration_stop(&h.m); /* once */
	end(&h);
}

static void test_refused(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE, SEND(EVENT("active") EVENT("completed")), END,
	};
	struct harness h;
	struct seen seen = { .fail_on = QMP_MIGRATION_ACTIVE };
	struct sb_error err = {};

	begin(&h, script);
	CHECK(read_until(&h, &seen, 1, &err) == -EPERM);
	CHECK_MSG(!strcmp(err.msg, "refused at active"), "%s", err.msg);
	CHECK(!h.m.ended && seen.n == 1);
	seen.fail_on = 0;
	CHECK(read_until(&h, &seen, 2, &err) == 0 && h.m.ended); /* the completion was still queued */
	end(&h);
}

static void test_lost(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE, SEND(EVENT("active")), PAUSE(50), HANG_UP, END,
	};
	struct harness h;
	struct seen seen = {};
	struct sb_error err = {};
	uint64_t deadline = mono_ns() + 20 * NSEC_PER_SEC;
	int k;

	begin(&h, script);
	do {
		k = migration_read_events(&h.m, on_status, &seen, &err);
		CHECK(mono_ns() < deadline);
		usleep(10000);
	} while (k == 0);
	printf("lost: %d %s\n", k, err.msg);
	CHECK(k < 0 && *err.msg);
	CHECK(seen.n == 1 && !h.m.ended);
	end(&h);
}

int main(int argc, char **argv)
{
	static const struct run_test_case cases[] = {
		{ "events", test_events }, { "failed", test_failed }, { "query", test_query },
		{ "setup", test_setup },   { "passes", test_passes }, { "stop", test_stop },
		{ "refused", test_refused }, { "lost", test_lost },
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	run_test_cases(cases, ARRAY_SIZE(cases), argc > 1 ? argv[1] : NULL);
	return 0;
}
