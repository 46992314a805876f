// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Typed helpers: query-version, query-status, migration (capabilities,
 * parameters, getfd + migrate fd:, unix: and the channels form, cancel),
 * the QMP schema's commands and arguments, quit, and event waits.
 * query-stats lives in stats.c.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "json-util.h"
#include "macro.h"
#include "qmp-commands.h"
#include "qmp-internal.h"

#define SNAPSHOT_FDNAME "snapbench-snapshot"
#define FDNAME_MAX 64

static int execute(struct qmp_client *c, const char *command, struct json_object *args, struct json_object **ret,
		   struct sb_error *err)
{
	return qmp_execute(c, command, args, -1, qmp_client_command_timeout(c), ret, err);
}

static int shape_error(struct qmp_client *c, const char *command, const char *what, struct sb_error *err)
{
	return sb_error_set(err, -EPROTO, "%s: the reply to %s has no %s", qmp_client_label(c), command, what);
}

/* Build {key: value} for one string or integer member. */
static struct json_object *args_with(const char *key, struct json_object *value)
{
	struct json_object *args = json_object_new_object();

	if (!args || !value || json_object_object_add(args, key, value) < 0) {
		json_object_put(args);
		json_object_put(value);
		return NULL;
	}
	return args;
}

int qmp_query_version(struct qmp_client *c, struct qmp_version *ret, struct sb_error *err)
{
	_cleanup_json_ struct json_object *reply = NULL;
	int r;

	r = execute(c, "query-version", NULL, &reply, err);
	if (r < 0)
		return r;
	r = qmp_version_from_json(reply, ret);
	if (r < 0)
		return shape_error(c, "query-version", "qemu version", err);
	return 0;
}

int qmp_query_status(struct qmp_client *c, struct qmp_status *ret, struct sb_error *err)
{
	_cleanup_json_ struct json_object *reply = NULL;
	struct json_object *status, *running;
	int r;

	r = execute(c, "query-status", NULL, &reply, err);
	if (r < 0)
		return r;
	status = qmp_json_member(reply, "status", json_type_string);
	running = qmp_json_member(reply, "running", json_type_boolean);
	if (!status || !running)
		return shape_error(c, "query-status", "status and running", err);
	snprintf(ret->status, sizeof(ret->status), "%s", json_object_get_string(status));
	ret->running = json_object_get_boolean(running);
	return 0;
}

/* ---- migration status ---- */

static const char *const migration_status_names[] = {
	[QMP_MIGRATION_UNKNOWN] = "unknown",
	[QMP_MIGRATION_NONE] = "none",
	[QMP_MIGRATION_SETUP] = "setup",
	[QMP_MIGRATION_CANCELLING] = "cancelling",
	[QMP_MIGRATION_CANCELLED] = "cancelled",
	[QMP_MIGRATION_ACTIVE] = "active",
	[QMP_MIGRATION_POSTCOPY_ACTIVE] = "postcopy-active",
	[QMP_MIGRATION_POSTCOPY_PAUSED] = "postcopy-paused",
	[QMP_MIGRATION_POSTCOPY_RECOVER] = "postcopy-recover",
	[QMP_MIGRATION_COMPLETED] = "completed",
	[QMP_MIGRATION_FAILED] = "failed",
	[QMP_MIGRATION_COLO] = "colo",
	[QMP_MIGRATION_PRE_SWITCHOVER] = "pre-switchover",
	[QMP_MIGRATION_DEVICE] = "device",
	[QMP_MIGRATION_WAIT_UNPLUG] = "wait-unplug",
};

const char *qmp_migration_status_to_string(enum qmp_migration_status s)
{
	if ((size_t)s >= ARRAY_SIZE(migration_status_names))
		return "unknown";
	return migration_status_names[s];
}

enum qmp_migration_status qmp_migration_status_from_string(const char *s)
{
	for (size_t i = 1; s && i < ARRAY_SIZE(migration_status_names); i++)
		if (!strcmp(migration_status_names[i], s))
			return (enum qmp_migration_status)i;
	return QMP_MIGRATION_UNKNOWN;
}

/* ---- query-migrate ---- */

static int64_t int_member(struct json_object *o, const char *key)
{
	struct json_object *v = qmp_json_member(o, key, json_type_int);

	return v ? json_object_get_int64(v) : -1;
}

void qmp_migration_info_clear(struct qmp_migration_info *info)
{
	if (!info)
		return;
	free(info->error_desc);
	memset(info, 0, sizeof(*info));
}

int qmp_query_migrate(struct qmp_client *c, struct qmp_migration_info *ret, struct sb_error *err)
{
	_cleanup_json_ struct json_object *reply = NULL;
	struct json_object *status, *ram, *desc;
	struct qmp_migration_info info = { 0 };
	int r;

	memset(ret, 0, sizeof(*ret));
	r = execute(c, "query-migrate", NULL, &reply, err);
	if (r < 0)
		return r;
	if (!json_object_is_type(reply, json_type_object))
		return shape_error(c, "query-migrate", "MigrationInfo object", err);
	/* Before the first migration QEMU answers {}. */
	status = qmp_json_member(reply, "status", json_type_string);
	snprintf(info.status_name, sizeof(info.status_name), "%s", status ? json_object_get_string(status) : "none");
	info.status = qmp_migration_status_from_string(info.status_name);
	info.total_time_ms = int_member(reply, "total-time");
	info.setup_time_ms = int_member(reply, "setup-time");
	info.downtime_ms = int_member(reply, "downtime");
	ram = qmp_json_member(reply, "ram", json_type_object);
	info.ram_transferred = int_member(ram, "transferred");
	info.ram_remaining = int_member(ram, "remaining");
	info.ram_total = int_member(ram, "total");
	info.ram_duplicate = int_member(ram, "duplicate");
	info.ram_normal = int_member(ram, "normal");
	info.ram_pages_per_second = int_member(ram, "pages-per-second");
	info.ram_dirty_sync_count = int_member(ram, "dirty-sync-count");
	info.ram_dirty_pages_rate = int_member(ram, "dirty-pages-rate");
	info.ram_postcopy_requests = int_member(ram, "postcopy-requests");
	info.ram_page_size = int_member(ram, "page-size");
	desc = qmp_json_member(reply, "error-desc", json_type_string);
	if (desc) {
		info.error_desc = strdup(json_object_get_string(desc));
		if (!info.error_desc)
			return sb_error_set(err, -ENOMEM, "out of memory");
	}
	*ret = info;
	return 0;
}

/* ---- capabilities and parameters ---- */

int qmp_query_migrate_capability(struct qmp_client *c, const char *name, bool *ret, struct sb_error *err)
{
	_cleanup_json_ struct json_object *reply = NULL;
	int r;

	r = execute(c, "query-migrate-capabilities", NULL, &reply, err);
	if (r < 0)
		return r;
	if (!json_object_is_type(reply, json_type_array))
		return shape_error(c, "query-migrate-capabilities", "list", err);
	r = -ENOENT;
	for (size_t i = 0; i < json_object_array_length(reply); i++) {
		struct json_object *cap = json_object_array_get_idx(reply, i);
		struct json_object *cname = qmp_json_member(cap, "capability", json_type_string);
		struct json_object *state = qmp_json_member(cap, "state", json_type_boolean);

		if (cname && state && !strcmp(json_object_get_string(cname), name)) {
			*ret = json_object_get_boolean(state);
			r = 0;
			break;
		}
	}
	if (r < 0)
		return sb_error_set(err, r, "%s does not know migration capability '%s' (QEMU too old?)",
				    qmp_client_label(c), name);
	return 0;
}

static int capability_did_not_take(struct qmp_client *c, const struct qmp_migrate_capability *cap,
				   struct sb_error *err)
{
	if (cap->state && !strcmp(cap->name, "background-snapshot"))
		return sb_error_set(err, -EOPNOTSUPP,
				    "%s: migration capability 'background-snapshot' is still off after "
				    "migrate-set-capabilities turned it on: QEMU needs userfaultfd write-protect for "
				    "background snapshots; run QEMU as root or let it use userfaultfd "
				    "(sysctl vm.unprivileged_userfaultfd=1 or access to /dev/userfaultfd)",
				    qmp_client_label(c));
	return sb_error_set(err, -EOPNOTSUPP, "%s: migration capability '%s' is still %s after migrate-set-capabilities "
					      "set it %s",
			    qmp_client_label(c), cap->name, cap->state ? "off" : "on", cap->state ? "on" : "off");
}

int qmp_migrate_set_capabilities(struct qmp_client *c, const struct qmp_migrate_capability *caps, size_t n,
				 struct sb_error *err)
{
	struct json_object *list = json_object_new_array();
	_cleanup_json_ struct json_object *args = NULL;
	int r;

	if (!list)
		return sb_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct json_object *cap = json_object_new_object();

		if (!caps[i].name || !caps[i].name[0]) {
			json_object_put(cap);
			json_object_put(list);
			return sb_error_set(err, -EINVAL, "migration capability %zu has no name", i);
		}
		if (!cap || json_object_object_add(cap, "capability", json_object_new_string(caps[i].name)) < 0 ||
		    json_object_object_add(cap, "state", json_object_new_boolean(caps[i].state)) < 0 ||
		    json_object_array_add(list, cap) < 0) {
			json_object_put(cap);
			json_object_put(list);
			return sb_error_set(err, -ENOMEM, "out of memory");
		}
	}
	args = args_with("capabilities", list);
	if (!args)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = execute(c, "migrate-set-capabilities", args, NULL, err);
	if (r < 0)
		return r;

	/* QEMU may accept and still not turn a capability on: check each. */
	for (size_t i = 0; i < n; i++) {
		bool state;

		r = qmp_query_migrate_capability(c, caps[i].name, &state, err);
		if (r == -ENOENT)
			return sb_error_set(err, -EOPNOTSUPP, "%s does not know migration capability '%s'",
					    qmp_client_label(c), caps[i].name);
		if (r < 0)
			return r;
		if (state != caps[i].state)
			return capability_did_not_take(c, &caps[i], err);
	}
	return 0;
}

int qmp_migrate_set_parameters(struct qmp_client *c, struct json_object *params, struct sb_error *err)
{
	if (!json_object_is_type(params, json_type_object))
		return sb_error_set(err, -EINVAL, "migration parameters must be a JSON object, e.g. "
						  "{\"max-bandwidth\": 1048576}");
	return execute(c, "migrate-set-parameters", params, NULL, err);
}

int qmp_migrate_set_max_bandwidth(struct qmp_client *c, int64_t bytes_per_second, struct sb_error *err)
{
	_cleanup_json_ struct json_object *args = NULL;
	_cleanup_json_ struct json_object *reply = NULL;
	int64_t now;
	int r;

	if (bytes_per_second < 0)
		return sb_error_set(err, -EINVAL, "max-bandwidth %lld is negative: give bytes per second",
				    (long long)bytes_per_second);
	args = args_with("max-bandwidth", json_object_new_int64(bytes_per_second));
	if (!args)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = qmp_migrate_set_parameters(c, args, err);
	if (r < 0)
		return r;
	r = execute(c, "query-migrate-parameters", NULL, &reply, err);
	if (r < 0)
		return r;
	now = int_member(reply, "max-bandwidth");
	if (now != bytes_per_second)
		return sb_error_set(err, -EOPNOTSUPP, "%s: max-bandwidth is %lld after setting it to %lld",
				    qmp_client_label(c), (long long)now, (long long)bytes_per_second);
	return 0;
}

/* ---- fds and migrate ---- */

/*
 * "fd:NAME" with an all-digit NAME would make QEMU use its own fd number
 * NAME; keep names to a plain identifier.
 */
static int check_fdname(const char *fdname, struct sb_error *err)
{
	size_t len = fdname ? strlen(fdname) : 0;

	if (len == 0 || len > FDNAME_MAX || !(isalpha((unsigned char)fdname[0]) || fdname[0] == '_'))
		goto bad;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)fdname[i]) && !strchr("_-.", fdname[i]))
			goto bad;
	return 0;
bad:
	return sb_error_set(err, -EINVAL,
			    "fd name '%s' is not usable: start with a letter, then letters, digits, '_', '-' or '.', "
			    "at most %d characters",
			    fdname ? fdname : "", FDNAME_MAX);
}

int qmp_getfd(struct qmp_client *c, int fd, const char *fdname, struct sb_error *err)
{
	_cleanup_json_ struct json_object *args = NULL;
	int r;

	r = check_fdname(fdname, err);
	if (r < 0)
		return r;
	if (fd < 0)
		return sb_error_set(err, -EBADF, "getfd %s: no file descriptor to pass", fdname);
	args = args_with("fdname", json_object_new_string(fdname));
	if (!args)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = qmp_execute(c, "getfd", args, fd, qmp_client_command_timeout(c), NULL, err);
	return r;
}

int qmp_closefd(struct qmp_client *c, const char *fdname, struct sb_error *err)
{
	_cleanup_json_ struct json_object *args = NULL;
	int r;

	r = check_fdname(fdname, err);
	if (r < 0)
		return r;
	args = args_with("fdname", json_object_new_string(fdname));
	if (!args)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = execute(c, "closefd", args, NULL, err);
	return r;
}

static int add_string(struct json_object *o, const char *key, const char *value)
{
	struct json_object *v = json_object_new_string(value);

	if (!v || json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

/*
 * The address as QMP takes it: "uri" ("fd:NAME", "unix:PATH") or, in the
 * channels form (QEMU 8.2+), "channels": [{"channel-type": "main", "addr":
 * {"transport": "socket", "type": "fd", "str": NAME} or {..., "type":
 * "unix", "path": PATH}}].
 */
static struct json_object *migrate_args(const struct qmp_migrate_address *a)
{
	_cleanup_json_ struct json_object *args = json_object_new_object();
	_cleanup_json_ struct json_object *addr = NULL, *chan = NULL, *list = NULL;
	const char *type = a->unix_path ? "unix" : "fd";
	int r = 0;

	if (!args)
		return NULL;
	if (!a->channels) {
		_cleanup_free_ char *uri = NULL;

		if (asprintf(&uri, "%s:%s", type, a->unix_path ? a->unix_path : a->fdname) < 0)
			return NULL;
		if (add_string(args, "uri", uri) < 0)
			return NULL;
		return TAKE_PTR(args);
	}
	addr = json_object_new_object();
	chan = json_object_new_object();
	list = json_object_new_array();
	if (!addr || !chan || !list)
		return NULL;
	r |= add_string(addr, "transport", "socket");
	r |= add_string(addr, "type", type);
	r |= add_string(addr, a->unix_path ? "path" : "str", a->unix_path ? a->unix_path : a->fdname);
	r |= add_string(chan, "channel-type", "main");
	if (r < 0 || json_object_object_add(chan, "addr", addr) < 0)
		return NULL;
	addr = NULL;
	if (json_object_array_add(list, chan) < 0)
		return NULL;
	chan = NULL;
	if (json_object_object_add(args, "channels", list) < 0)
		return NULL;
	list = NULL;
	return TAKE_PTR(args);
}

/* command ("migrate", "migrate-incoming") to a's address; for an fd, getfd first */
static int migrate_command(struct qmp_client *c, const char *command, const struct qmp_migrate_address *a,
			   struct sb_error *err)
{
	_cleanup_json_ struct json_object *args = NULL;
	int r;

	if (a->unix_path) {
		if (!a->unix_path[0] || strlen(a->unix_path) >= QMP_UNIX_PATH_MAX)
			return sb_error_set(err, -ENAMETOOLONG,
					    "migration socket path '%s' is empty or longer than %d bytes: use a shorter directory",
					    a->unix_path, QMP_UNIX_PATH_MAX - 1);
	} else {
		r = qmp_getfd(c, a->fd, a->fdname, err);
		if (r < 0)
			return r;
	}
	args = migrate_args(a);
	if (!args)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = execute(c, command, args, NULL, err);
	if (r == -EREMOTEIO && !a->unix_path) {
		/* QEMU did not take the fd over: do not leave it open there. */
		struct sb_error ignored = { 0 };

		qmp_closefd(c, a->fdname, &ignored);
	}
	return r;
}

int qmp_migrate(struct qmp_client *c, const struct qmp_migrate_address *a, struct sb_error *err)
{
	return migrate_command(c, "migrate", a, err);
}

int qmp_migrate_incoming(struct qmp_client *c, const struct qmp_migrate_address *a, struct sb_error *err)
{
	return migrate_command(c, "migrate-incoming", a, err);
}

int qmp_migrate_to_fd(struct qmp_client *c, int fd, const char *fdname, struct sb_error *err)
{
	return qmp_migrate(c, &(struct qmp_migrate_address){ .fd = fd, .fdname = fdname }, err);
}

int qmp_migrate_cancel(struct qmp_client *c, struct sb_error *err)
{
	return execute(c, "migrate_cancel", NULL, NULL, err);
}

int qmp_migrate_incoming_fd(struct qmp_client *c, int fd, const char *fdname, struct sb_error *err)
{
	return qmp_migrate_incoming(c, &(struct qmp_migrate_address){ .fd = fd, .fdname = fdname }, err);
}

int qmp_cont(struct qmp_client *c, struct sb_error *err)
{
	return execute(c, "cont", NULL, NULL, err);
}

int qmp_migrate_start_postcopy(struct qmp_client *c, struct sb_error *err)
{
	return execute(c, "migrate-start-postcopy", NULL, NULL, err);
}

int qmp_snapshot_background_start(struct qmp_client *c, int fd, struct sb_error *err)
{
	static const struct qmp_migrate_capability caps[] = {
		{ "background-snapshot", true },
		{ "events", true },
	};
	int r;

	r = qmp_migrate_set_capabilities(c, caps, ARRAY_SIZE(caps), err);
	if (r < 0)
		return r;
	return qmp_migrate_to_fd(c, fd, SNAPSHOT_FDNAME, err);
}

int qmp_query_qmp_schema(struct qmp_client *c, struct json_object **ret, struct sb_error *err)
{
	_cleanup_json_ struct json_object *reply = NULL;
	int r;

	*ret = NULL;
	r = execute(c, "query-qmp-schema", NULL, &reply, err);
	if (r < 0)
		return r;
	if (!json_object_is_type(reply, json_type_array))
		return shape_error(c, "query-qmp-schema", "array of schema entities", err);
	*ret = TAKE_PTR(reply);
	return 0;
}

/* The schema entity named name of meta-type meta (names are unique within the schema). */
static struct json_object *schema_entity(struct json_object *schema, const char *name, const char *meta)
{
	struct json_object *e = json_array_find(schema, "name", name);
	const char *em = json_lookup_string(e, "meta-type");

	return em && !strcmp(em, meta) ? e : NULL;
}

bool qmp_schema_has_command(struct json_object *schema, const char *command)
{
	return schema_entity(schema, command, "command");
}

bool qmp_schema_has_argument(struct json_object *schema, const char *command, const char *arg)
{
	const char *arg_type = json_lookup_string(schema_entity(schema, command, "command"), "arg-type");

	/* the argument type is an object entity under an opaque name ("0", "q_obj_migrate-arg" ...) */
	return arg_type && json_array_find(json_lookup(schema_entity(schema, arg_type, "object"), "members"), "name", arg);
}

int qmp_command_line_option_has(struct qmp_client *c, const char *option, const char *parameter, bool *ret,
				struct sb_error *err)
{
	_cleanup_json_ struct json_object *args = json_object_new_object(), *reply = NULL;
	struct json_object *v = json_object_new_string(option);
	int r;

	*ret = false;
	if (!args || !v || json_object_object_add(args, "option", v) < 0) {
		json_object_put(v);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	r = execute(c, "query-command-line-options", args, &reply, err);
	if (r < 0)
		return r;
	if (!json_object_is_type(reply, json_type_array))
		return shape_error(c, "query-command-line-options", "list", err);
	*ret = json_array_find(json_lookup(json_array_find(reply, "option", option), "parameters"), "name", parameter);
	return 0;
}

int qmp_quit(struct qmp_client *c, struct sb_error *err)
{
	int r = execute(c, "quit", NULL, NULL, err);

	/* QEMU may close the socket before its reply reaches us. */
	if (r == -ECONNRESET) {
		sb_error_clear(err);
		return 0;
	}
	return r;
}

/* ---- events ---- */

static int ms_left(uint64_t deadline, int timeout_ms)
{
	return timeout_ms < 0 ? -1 : ms_until(deadline);
}

int qmp_wait_migration(struct qmp_client *c, enum qmp_migration_status want, int timeout_ms,
		       enum qmp_migration_status *last, struct sb_error *err)
{
	uint64_t deadline = timeout_ms < 0 ? 0 : mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;
	const char *want_name = qmp_migration_status_to_string(want);

	for (;;) {
		_cleanup_qmp_event_ struct qmp_event *e = NULL;
		struct json_object *status;
		enum qmp_migration_status s;
		int r;

		r = qmp_wait_event(c, "MIGRATION", ms_left(deadline, timeout_ms), &e, err);
		if (r == -ETIMEDOUT)
			return sb_error_set(err, r, "%s: migration did not reach status %s within %d ms",
					    qmp_client_label(c), want_name, timeout_ms);
		if (r < 0)
			return r;
		status = qmp_json_member(e->data, "status", json_type_string);
		if (!status)
			continue; /* a malformed event is not the one we wait for */
		s = qmp_migration_status_from_string(json_object_get_string(status));
		if (last)
			*last = s;
		if (s == want)
			return 0;

		if (s == QMP_MIGRATION_FAILED) {
			struct qmp_migration_info info = { 0 };
			struct sb_error ignored = { 0 };

			qmp_query_migrate(c, &info, &ignored);
			r = sb_error_set(err, -EIO, "%s: migration failed: %s", qmp_client_label(c),
					 info.error_desc ? info.error_desc : "QEMU gave no error-desc");
			qmp_migration_info_clear(&info);
			return r;
		}
		if (s == QMP_MIGRATION_CANCELLED)
			return sb_error_set(err, -ECANCELED, "%s: migration was cancelled while waiting for status %s",
					    qmp_client_label(c), want_name);
		if (s == QMP_MIGRATION_COMPLETED)
			return sb_error_set(err, -EINVAL, "%s: migration completed without reaching status %s",
					    qmp_client_label(c), want_name);
	}
}

static int wait_named(struct qmp_client *c, const char *name, int timeout_ms, struct qmp_event **ret,
		      struct sb_error *err)
{
	struct qmp_event *e = NULL;
	int r = qmp_wait_event(c, name, timeout_ms, &e, err);

	if (r < 0)
		return r;
	if (ret)
		*ret = e;
	else
		qmp_event_free(e);
	return 0;
}

int qmp_wait_stop(struct qmp_client *c, int timeout_ms, struct qmp_event **ret, struct sb_error *err)
{
	return wait_named(c, "STOP", timeout_ms, ret, err);
}

int qmp_wait_resume(struct qmp_client *c, int timeout_ms, struct qmp_event **ret, struct sb_error *err)
{
	return wait_named(c, "RESUME", timeout_ms, ret, err);
}

int qmp_wait_shutdown(struct qmp_client *c, int timeout_ms, struct qmp_event **ret, struct sb_error *err)
{
	return wait_named(c, "SHUTDOWN", timeout_ms, ret, err);
}
