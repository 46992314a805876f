// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A client over an owner-driven transport (the shape of a libvirt backend:
 * commands through one call, events pushed in from callbacks, possibly from
 * another thread). The transport here is scripted: expected command in,
 * canned reply out, an unexpected command fails the test.
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "qmp-commands.h"

struct exchange {
	const char *command;     /* expected "execute" */
	const char *reply;       /* reply text to hand back, or NULL to fail with code */
	int code;
	bool fd;                 /* an fd must come along */
};

struct fake_transport {
	const struct exchange *script;
	size_t next;
	int closed;
	int waits;
	struct qmp_client *client;  /* for wait_events to push into */
};

static int fake_execute(void *opaque, const char *command_json, int fd, int timeout_ms, char **reply_json,
			struct sb_error *err)
{
	struct fake_transport *t = opaque;
	const struct exchange *x = &t->script[t->next];
	struct json_object *cmd = json_tokener_parse(command_json), *exec;

	CHECK_MSG(x->command, "unexpected command after the script ended: %s", command_json);
	CHECK_MSG(cmd && json_object_object_get_ex(cmd, "execute", &exec), "not a command: %s", command_json);
	CHECK_MSG(!strcmp(json_object_get_string(exec), x->command), "expected '%s', got %s", x->command,
		  command_json);
	/* The owner's transport adds its own id (libvirt refuses a command that has one). */
	CHECK_MSG(!json_object_object_get_ex(cmd, "id", NULL), "command carries an id: %s", command_json);
	CHECK(x->fd == (fd >= 0));
	CHECK(timeout_ms > 0);
	json_object_put(cmd);
	t->next++;
	if (!x->reply)
		return sb_error_set(err, x->code, "transport says no");
	*reply_json = strdup(x->reply);
	CHECK(*reply_json);
	return 0;
}

static void fake_close(void *opaque)
{
	struct fake_transport *t = opaque;

	t->closed++;
}

static const struct qmp_transport_ops ops = {
	.execute = fake_execute,
	.close = fake_close,
};

static struct qmp_client *client_on(struct fake_transport *t, const struct qmp_transport_ops *o,
				    const struct qmp_options *opts)
{
	struct qmp_client *c = NULL;
	struct sb_error err = { 0 };

	CHECK_MSG(qmp_client_new_with_ops(o, t, "fake domain", opts, &c, &err) == 0, "%s", err.msg);
	t->client = c;
	return c;
}

static void test_commands(void)
{
	static const struct exchange script[] = {
		{ .command = "query-version",
		  .reply = "{\"return\": {\"qemu\": {\"micro\": 0, \"minor\": 2, \"major\": 9}, \"package\": \"\"}, "
			   "\"id\": \"libvirt-12\"}" },
		{ .command = "query-status", .reply = "{\"return\": {\"status\": \"paused\", \"running\": false}, \"id\": \"libvirt-13\"}" },
		{ .command = "getfd", .reply = "{\"return\": {}}", .fd = true },
		{ .command = "migrate", .reply = "{\"error\": {\"class\": \"GenericError\", \"desc\": \"busy\"}, \"id\": \"libvirt-15\"}" },
		{ .command = "closefd", .reply = "{\"return\": {}}" },
		{ .command = "query-status", .code = -ECONNRESET },
		{ .command = NULL },
	};
	struct fake_transport t = { .script = script };
	struct qmp_client *c = client_on(&t, &ops, NULL);
	struct qmp_version v, again;
	struct qmp_status st;
	struct sb_error err = { 0 };
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	CHECK(qmp_client_fd(c) == -1 && !qmp_client_has_capability(c, "oob"));
	CHECK(!strcmp(qmp_client_label(c), "fake domain"));
	/* No greeting on this transport: the version comes from query-version, once. */
	CHECK_MSG(qmp_client_version(c, &v, &err) == 0, "%s", err.msg);
	CHECK(qmp_client_version(c, &again, &err) == 0);
	CHECK(v.major == 9 && v.minor == 2 && again.major == 9);
	CHECK(qmp_query_status(c, &st, &err) == 0 && !st.running && !strcmp(st.status, "paused"));
	CHECK(qmp_migrate_to_fd(c, fd, "sink", &err) == -EREMOTEIO);
	CHECK_MSG(!strcmp(err.msg, "QMP command 'migrate' failed: GenericError: busy"), "%s", err.msg);
	/* Transport errors come through unchanged. */
	CHECK(qmp_query_status(c, &st, &err) == -ECONNRESET && !strcmp(err.msg, "transport says no"));
	CHECK(t.next == 6);
	qmp_client_free(c);
	CHECK(t.closed == 1);
	close(fd);
}

static void test_bad_replies(void)
{
	static const struct exchange script[] = {
		{ .command = "query-status", .reply = "{\"return\": " },
		{ .command = "query-status", .reply = "[]" },
		{ .command = "query-status", .reply = "{\"return\": {}} trailing" },
		{ .command = "query-status", .reply = "{\"return\": [[[[1]]]]}" },
		{ .command = "query-status", .reply = "{\"return\": \"0123456789012345678901234567890123456789\"}" },
		{ .command = "query-status", .reply = "{\"neither\": 1}" },
		{ .command = NULL },
	};
	struct fake_transport t = { .script = script };
	struct qmp_options opts = { .max_depth = 3, .max_message = 40 };
	struct qmp_client *c = client_on(&t, &ops, &opts);
	struct sb_error err = { 0 };

	CHECK(qmp_execute(c, "query-status", NULL, -1, 1000, NULL, &err) == -EBADMSG);
	CHECK_MSG(strstr(err.msg, "truncated JSON"), "%s", err.msg);
	CHECK(qmp_execute(c, "query-status", NULL, -1, 1000, NULL, &err) == -EPROTO);
	CHECK(qmp_execute(c, "query-status", NULL, -1, 1000, NULL, &err) == -EBADMSG);
	CHECK_MSG(strstr(err.msg, "text after the JSON value"), "%s", err.msg);
	CHECK(qmp_execute(c, "query-status", NULL, -1, 1000, NULL, &err) == -EMSGSIZE);
	CHECK(qmp_execute(c, "query-status", NULL, -1, 1000, NULL, &err) == -EMSGSIZE);
	CHECK(qmp_execute(c, "query-status", NULL, -1, 1000, NULL, &err) == -EPROTO);
	/* Unlike a stream, an ops transport stays usable: the owner knows its state. */
	CHECK(t.next == 6);
	qmp_client_free(c);
}

struct pusher {
	struct qmp_client *c;
	int delay_ms;
};

static void *push_later(void *arg)
{
	struct pusher *p = arg;
	struct sb_error err = { 0 };

	nanosleep(&(struct timespec){ .tv_nsec = p->delay_ms * 1000000L }, NULL);
	CHECK(qmp_client_push_event(p->c, "STOP", 10, 1, NULL, &err) == 0);
	CHECK(qmp_client_push_event(p->c, "MIGRATION", 10, 2, "{\"status\": \"completed\"}", &err) == 0);
	return NULL;
}

static void test_events_from_another_thread(void)
{
	static const struct exchange script[] = { { .command = NULL } };
	struct fake_transport t = { .script = script };
	struct qmp_client *c = client_on(&t, &ops, NULL);
	struct pusher p = { c, 100 };
	enum qmp_migration_status last;
	struct qmp_event *e = NULL;
	struct sb_error err = { 0 };
	pthread_t th;

	/* Waits without a wait_events hook sleep until another thread pushes. */
	CHECK(pthread_create(&th, NULL, push_later, &p) == 0);
	CHECK_MSG(qmp_wait_migration(c, QMP_MIGRATION_COMPLETED, 10000, &last, &err) == 0, "%s", err.msg);
	CHECK(pthread_join(th, NULL) == 0);
	CHECK(qmp_wait_stop(c, 0, &e, &err) == 0);
	CHECK(e->qemu_time_us == 10000001 && e->data == NULL);
	qmp_event_free(e);

	CHECK(qmp_wait_event(c, NULL, 50, &e, &err) == -ETIMEDOUT);
	CHECK_MSG(strstr(err.msg, "fake domain sent no QMP event within 50 ms"), "%s", err.msg);

	/* Pushed data is held to the same bounds and shape as a stream's. */
	CHECK(qmp_client_push_event(c, "X", 1, 0, "{\"a\": ", &err) == -EBADMSG);
	CHECK(qmp_client_push_event(c, "X", 1, 0, "[1]", &err) == -EPROTO);
	CHECK(qmp_client_push_event(c, "", 1, 0, NULL, &err) == -EINVAL);
	CHECK(qmp_client_push_event(c, "X", -1, 0, "{}", &err) == 0);
	CHECK(qmp_wait_event(c, "X", 0, &e, &err) == 0 && e->qemu_time_us == -1 && e->data);
	qmp_event_free(e);
	CHECK(qmp_client_events_queued(c) == 0);
	qmp_client_free(c);
}

/* An owner whose event loop runs in the waiting thread: wait_events delivers. */
static int fake_wait_events(void *opaque, int timeout_ms)
{
	struct fake_transport *t = opaque;
	struct sb_error err = { 0 };

	CHECK(timeout_ms != 0);
	t->waits++;
	if (t->waits == 3)
		CHECK(qmp_client_push_event(t->client, "RESUME", 20, 0, NULL, &err) == 0);
	return 0;
}

static int failing_wait_events(void *opaque, int timeout_ms)
{
	return -EIO;
}

static void test_wait_events_hook(void)
{
	static const struct exchange script[] = { { .command = NULL } };
	static const struct qmp_transport_ops hooked = { .execute = fake_execute, .wait_events = fake_wait_events };
	static const struct qmp_transport_ops failing = { .execute = fake_execute, .wait_events = failing_wait_events };
	struct fake_transport t = { .script = script };
	struct qmp_client *c = client_on(&t, &hooked, NULL);
	struct qmp_event *e = NULL;
	struct sb_error err = { 0 };

	CHECK_MSG(qmp_wait_resume(c, 10000, &e, &err) == 0, "%s", err.msg);
	CHECK(t.waits == 3 && e->qemu_time_us == 20000000);
	qmp_event_free(e);
	qmp_client_free(c);
	CHECK(t.closed == 0); /* no close op given */

	c = client_on(&t, &failing, NULL);
	CHECK(qmp_wait_event(c, NULL, 1000, &e, &err) == -EIO);
	CHECK_MSG(strstr(err.msg, "waiting for events failed"), "%s", err.msg);
	qmp_client_free(c);

	CHECK(qmp_client_new_with_ops(NULL, NULL, NULL, NULL, &c, &err) == -EINVAL && c == NULL);
}

int main(void)
{
	test_commands();
	test_bad_replies();
	test_events_from_another_thread();
	test_wait_events_hook();
	printf("ok\n");
	return 0;
}
