// SPDX-License-Identifier: GPL-2.0-or-later
/* The requests of docs/protocol.md: submit, status, list, show, cancel, logs, watch. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "conn.h"
#include "current-run.h"
#include "daemon.h"
#include "log.h"
#include "macro.h"
#include "metrics-file.h"
#include "ops.h"
#include "run-dir.h"
#include "spec.h"
#include "status.h"
#include "store.h"

#define LOGS_DEFAULT_BYTES STORE_LOGS_DEFAULT_BYTES
#define LOGS_MAX_BYTES (1u << 20)
#define FILTER_MAX_STRING 128

struct request {
	struct daemon *d;
	struct conn *c;
	struct json_object *req;
	struct json_object *id;
	enum protocol_op op;
};

/* Every op names the fields it takes; anything else is a typo the user should hear about. */
static const char *const op_fields[_PROTO_OP_MAX][4] = {
	[PROTO_OP_SUBMIT] = { "spec" },
	[PROTO_OP_STATUS] = { NULL },
	[PROTO_OP_LIST] = { "label", "scenario", "state", "limit" },
	[PROTO_OP_SHOW] = { "run", "timeline" },
	[PROTO_OP_CANCEL] = { "run" },
	[PROTO_OP_LOGS] = { "run", "max_bytes" },
	[PROTO_OP_WATCH] = { "run" },
};

static bool check_fields(struct request *rq)
{
	json_object_object_foreach(rq->req, key, val)
	{
		bool known = !strcmp(key, "v") || !strcmp(key, "id") || !strcmp(key, "op");
		(void)val;
		for (size_t i = 0; !known && i < ARRAY_SIZE(op_fields[rq->op]) && op_fields[rq->op][i]; i++)
			known = !strcmp(key, op_fields[rq->op][i]);
		if (!known) {
			char fields[160] = "";
			for (size_t i = 0; i < ARRAY_SIZE(op_fields[rq->op]) && op_fields[rq->op][i]; i++) {
				strncat(fields, i ? ", " : "", sizeof(fields) - strlen(fields) - 1);
				strncat(fields, op_fields[rq->op][i], sizeof(fields) - strlen(fields) - 1);
			}
			char shown[64];
			snprintf(shown, sizeof(shown), "%s", key);
			protocol_sanitize_utf8(shown, strlen(shown));
			conn_send_error(rq->d, rq->c, rq->id, PROTO_ERR_BAD_REQUEST, shown,
					"%s: unknown field for op %s; it takes: %s", shown, protocol_op_to_string(rq->op),
					*fields ? fields : "no fields besides v, id and op");
			return false;
		}
	}
	return true;
}

static struct json_object *reply(struct request *rq)
{
	return protocol_reply_new(rq->id, true);
}

static void send_sb_error(struct request *rq, const char *code, const char *field, const struct sb_error *err)
{
	conn_send(rq->d, rq->c, protocol_error_new(rq->id, code, field, err->msg));
}

/* The "run" field: a run id. */
static bool get_run_id(struct request *rq, const char **ret)
{
	struct sb_error err = {};
	const char *s = NULL;
	int r = protocol_get_string(rq->req, "run", REPORT_ID_MAX, &s, &err);

	if (r < 0) {
		send_sb_error(rq, PROTO_ERR_BAD_REQUEST, "run", &err);
		return false;
	}
	if (r == 0) {
		conn_send_error(rq->d, rq->c, rq->id, PROTO_ERR_BAD_REQUEST, "run",
				"run: missing; give the run id (YYYYMMDDTHHMMSSZ-xxxxxx) that submit returned or list shows");
		return false;
	}
	if (!report_id_valid(s)) {
		char shown[REPORT_ID_MAX + 8];
		snprintf(shown, sizeof(shown), "%s", s);
		protocol_sanitize_utf8(shown, strlen(shown));
		conn_send_error(rq->d, rq->c, rq->id, PROTO_ERR_BAD_REQUEST, "run",
				"run: '%s' is not a run id (YYYYMMDDTHHMMSSZ-xxxxxx); 'snapbench list' shows them", shown);
		return false;
	}
	*ret = s;
	return true;
}

static bool require_write(struct request *rq)
{
	char who[128];

	if (rq->c->may_write)
		return true;
	daemon_describe_peer(rq->c, who, sizeof(who));
	if (rq->d->group_known)
		conn_send_error(rq->d, rq->c, rq->id, PROTO_ERR_DENIED, NULL,
				"%s may not %s runs: only root and members of group '%s' may; ask an administrator to add you (usermod -aG %s USER, then log in again)",
				who, protocol_op_to_string(rq->op), rq->d->cfg.group, rq->d->cfg.group);
	else
		conn_send_error(rq->d, rq->c, rq->id, PROTO_ERR_DENIED, NULL,
				"%s may not %s runs: only root may, because group '%s' does not exist on this host; create it (groupadd %s) and restart snapbenchd",
				who, protocol_op_to_string(rq->op), rq->d->cfg.group, rq->d->cfg.group);
	log_notice("connection %u: %s denied %s", rq->c->serial, who, protocol_op_to_string(rq->op));
	return false;
}

/* A summary for a run id, reporting not-found (and other errors) to the client. */
static struct json_object *summary_or_error(struct request *rq, const char *id)
{
	struct json_object *sum;
	struct sb_error err = {};
	int r;

	if (rq->d->cur.active && !strcmp(id, rq->d->cur.id))
		return daemon_current_summary(rq->d);
	r = store_summary(rq->d->store, id, &sum, &err);
	if (r < 0) {
		send_sb_error(rq, r == -ENOENT ? PROTO_ERR_NOT_FOUND : PROTO_ERR_INTERNAL, "run", &err);
		return NULL;
	}
	return sum;
}

static const char *summary_state(struct json_object *sum)
{
	struct json_object *v;

	if (json_object_object_get_ex(sum, "state", &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return "unknown";
}

/* ---- submit ---- */

/* What a submit needs before its spec is read: write access, a running daemon, a spec, room in the queue. */
static bool submit_allowed(struct request *rq, struct json_object **spec_in)
{
	struct daemon *d = rq->d;

	if (!require_write(rq))
		return false;
	if (d->stopping) {
		conn_send_error(d, rq->c, rq->id, PROTO_ERR_SHUTTING_DOWN, NULL,
				"snapbenchd is stopping and takes no new runs; submit again once it is back");
		return false;
	}
	if (!json_object_object_get_ex(rq->req, "spec", spec_in)) {
		conn_send_error(d, rq->c, rq->id, PROTO_ERR_BAD_REQUEST, "spec",
				"spec: missing; send the run spec as a JSON object (docs/running.md), {} for the defaults");
		return false;
	}
	if (!json_object_is_type(*spec_in, json_type_object)) {
		conn_send_error(d, rq->c, rq->id, PROTO_ERR_BAD_REQUEST, "spec",
				"spec: must be a JSON object (docs/running.md), {} for the defaults");
		return false;
	}
	if (d->queue.n >= d->cfg.max_queue) {
		conn_send_error(d, rq->c, rq->id, PROTO_ERR_QUEUE_FULL, NULL,
				"the queue holds %zu runs, its limit (snapbenchd --max-queue %u); wait for some to finish or cancel some",
				d->queue.n, d->cfg.max_queue);
		return false;
	}
	return true;
}

/*
 * The daemon validates the spec itself (a client's checks are not to be
 * trusted): *normalized is the validated spec as JSON. False: the error
 * reply is sent.
 */
static bool submit_normalize(struct request *rq, struct json_object *spec_in, struct json_object **normalized)
{
	struct run_spec spec;
	struct sb_error err = {};
	const char *text;
	size_t len;
	int r;

	if (spec_init(&spec) < 0) {
		conn_send_error(rq->d, rq->c, rq->id, PROTO_ERR_INTERNAL, NULL, "out of memory");
		return false;
	}
	text = json_object_to_json_string_length(spec_in, JSON_C_TO_STRING_PLAIN, &len);
	r = text ? spec_apply_json(&spec, text, len, NULL, &err) : sb_error_set(&err, -ENOMEM, "out of memory");
	if (r >= 0)
		r = spec_validate(&spec, &err);
	if (r >= 0 && spec_to_json(&spec, normalized) < 0)
		r = sb_error_set(&err, -ENOMEM, "out of memory");
	spec_done(&spec);
	if (r < 0) {
		send_sb_error(rq, r == -ENOMEM ? PROTO_ERR_INTERNAL : PROTO_ERR_INVALID_SPEC, "spec", &err);
		return false;
	}
	return true;
}

/* Queues run id (and saves the queue); else fails the run and sends the error reply. */
static bool submit_enqueue(struct request *rq, const char *id)
{
	struct daemon *d = rq->d;
	struct sb_error err = {};
	int r;

	r = queue_push(&d->queue, id);
	if (r >= 0)
		r = queue_save(&d->queue, &err);
	else
		sb_error_set(&err, r, "the queue is full");
	if (r < 0) {
		char dir[PATH_MAX];
		struct sb_error e2 = {};
		ssize_t pos = queue_find(&d->queue, id);

		if (pos >= 0)
			queue_remove_at(&d->queue, (size_t)pos);
		if (store_run_dir(d->store, id, dir, sizeof(dir)) == 0)
			store_end_run(dir, REPORT_FAILED, "queue", err.msg, 0, &e2);
		log_error("submit: run %s: %s", id, err.msg);
		conn_send_error(d, rq->c, rq->id, PROTO_ERR_INTERNAL, NULL, "could not queue run %s: %s", id, err.msg);
		return false;
	}
	return true;
}

static void op_submit(struct request *rq)
{
	struct daemon *d = rq->d;
	struct json_object *spec_in, *normalized = NULL, *o, *sum = NULL;
	struct sb_error err = {};
	char id[REPORT_ID_MAX], who[128];
	int r;

	if (!submit_allowed(rq, &spec_in) || !submit_normalize(rq, spec_in, &normalized))
		return;
	r = store_create_run(d->store, normalized, id, &err);
	json_object_put(normalized);
	if (r < 0) {
		log_error("submit: %s", err.msg);
		send_sb_error(rq, PROTO_ERR_INTERNAL, NULL, &err);
		return;
	}
	if (!submit_enqueue(rq, id))
		return;

	daemon_describe_peer(rq->c, who, sizeof(who));
	log_info("run %s: queued by %s (position %zu)", id, who, d->queue.n);
	o = reply(rq);
	if (store_summary(d->store, id, &sum, &err) < 0)
		sum = NULL;
	json_object_object_add(o, "run", sum);
	json_object_object_add(o, "position", json_object_new_int64((int64_t)d->queue.n + (d->cur.active ? 1 : 0)));
	conn_send(d, rq->c, o);
	daemon_update_status(d, true);
	daemon_write_metrics(d);
}

/* ---- status ---- */

static void op_status(struct request *rq)
{
	struct daemon *d = rq->d;
	struct json_object *o = reply(rq), *info = json_object_new_object(), *peer = json_object_new_object();
	struct json_object *queued = json_object_new_array();

	if (!o || !info || !peer || !queued) {
		json_object_put(o);
		json_object_put(info);
		json_object_put(peer);
		json_object_put(queued);
		conn_send_error(d, rq->c, rq->id, PROTO_ERR_INTERNAL, NULL, "out of memory");
		return;
	}
	json_object_object_add(info, "version", json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(info, "protocol", json_object_new_int(PROTOCOL_VERSION));
	json_object_object_add(info, "pid", json_object_new_int((int)getpid()));
	json_object_object_add(info, "uptime_s", json_object_new_double((double)(mono_ns() - d->start_ns) / 1e9));
	json_object_object_add(info, "state_dir", json_object_new_string(d->cfg.state_dir));
	json_object_object_add(info, "socket_activated", json_object_new_boolean(d->activated));
	json_object_object_add(info, "connections", json_object_new_int64((int64_t)d->n_conns));
	json_object_object_add(info, "max_connections", json_object_new_int64(d->cfg.max_connections));
	json_object_object_add(info, "queue_length", json_object_new_int64((int64_t)d->queue.n));
	json_object_object_add(info, "max_queue", json_object_new_int64(d->cfg.max_queue));
	json_object_object_add(info, "requests", json_object_new_int64((int64_t)d->requests));
	json_object_object_add(info, "stopping", json_object_new_boolean(d->stopping));
	json_object_object_add(info, "group", json_object_new_string(d->cfg.group));
	json_object_object_add(o, "daemon", info);

	json_object_object_add(peer, "uid", json_object_new_int64(rq->c->cred.uid));
	json_object_object_add(peer, "may_submit", json_object_new_boolean(rq->c->may_write));
	json_object_object_add(o, "you", peer);

	json_object_object_add(o, "current", d->cur.active ? daemon_current_summary(d) : NULL);
	for (size_t i = 0; i < d->queue.n; i++) {
		struct json_object *sum;
		struct sb_error err = {};
		if (store_summary(d->store, d->queue.ids[i], &sum, &err) == 0)
			json_object_array_add(queued, sum);
	}
	json_object_object_add(o, "queue", queued);
	conn_send(d, rq->c, o);
}

/* ---- list ---- */

static void op_list(struct request *rq)
{
	struct store_filter f = { .state = -1 };
	struct sb_error err = {};
	const char *state = NULL;
	struct json_object *runs, *o;
	int r;

	if (protocol_get_string(rq->req, "label", FILTER_MAX_STRING, &f.label, &err) < 0) {
		send_sb_error(rq, PROTO_ERR_BAD_REQUEST, "label", &err);
		return;
	}
	if (protocol_get_string(rq->req, "scenario", FILTER_MAX_STRING, &f.scenario, &err) < 0) {
		send_sb_error(rq, PROTO_ERR_BAD_REQUEST, "scenario", &err);
		return;
	}
	if (protocol_get_string(rq->req, "state", FILTER_MAX_STRING, &state, &err) < 0) {
		send_sb_error(rq, PROTO_ERR_BAD_REQUEST, "state", &err);
		return;
	}
	if (state) {
		f.state = report_state_from_string(state);
		if (f.state < 0) {
			char shown[64];
			snprintf(shown, sizeof(shown), "%s", state);
			protocol_sanitize_utf8(shown, strlen(shown));
			conn_send_error(rq->d, rq->c, rq->id, PROTO_ERR_BAD_REQUEST, "state",
					"state: '%s' is not a run state; one of queued, running, completed, failed, cancelled",
					shown);
			return;
		}
	}
	if (protocol_get_uint(rq->req, "limit", 1000000, &f.limit, &err) < 0) {
		send_sb_error(rq, PROTO_ERR_BAD_REQUEST, "limit", &err);
		return;
	}
	r = store_list(rq->d->store, &f, &runs, &err);
	if (r < 0) {
		send_sb_error(rq, PROTO_ERR_INTERNAL, NULL, &err);
		return;
	}
	/* the current run's entry carries its live progress */
	if (rq->d->cur.active)
		for (size_t i = 0; i < json_object_array_length(runs); i++) {
			struct json_object *v;
			if (json_object_object_get_ex(json_object_array_get_idx(runs, i), "id", &v) &&
			    !strcmp(json_object_get_string(v), rq->d->cur.id)) {
				struct json_object *cur = daemon_current_summary(rq->d);
				if (cur)
					json_object_array_put_idx(runs, i, cur);
			}
		}
	o = reply(rq);
	json_object_object_add(o, "runs", runs);
	conn_send(rq->d, rq->c, o);
}

/* ---- show ---- */

static void op_show(struct request *rq)
{
	struct sb_error err = {};
	struct json_object *report, *sum, *o;
	const char *id;
	bool timeline = false;
	char path[PATH_MAX];
	int r;

	if (!get_run_id(rq, &id))
		return;
	if (protocol_get_bool(rq->req, "timeline", &timeline, &err) < 0) {
		send_sb_error(rq, PROTO_ERR_BAD_REQUEST, "timeline", &err);
		return;
	}
	r = store_read_report(rq->d->store, id, &report, &err);
	if (r < 0) {
		send_sb_error(rq, r == -ENOENT ? PROTO_ERR_NOT_FOUND : PROTO_ERR_INTERNAL, "run", &err);
		return;
	}
	if (!timeline)
		store_strip_timelines(report);
	if (rq->d->cur.active && !strcmp(id, rq->d->cur.id))
		sum = daemon_current_summary(rq->d);
	else
		sum = store_summary_from_report(report);
	o = reply(rq);
	json_object_object_add(o, "run", sum);
	json_object_object_add(o, "report", report);
	if (store_run_dir(rq->d->store, id, path, sizeof(path) - 16) == 0) {
		strcat(path, "/" RUN_DIR_REPORT);
		json_object_object_add(o, "path", json_object_new_string(path));
	}
	conn_send(rq->d, rq->c, o);
}

/* ---- cancel ---- */

static void op_cancel(struct request *rq)
{
	struct daemon *d = rq->d;
	struct sb_error err = {};
	struct json_object *sum, *o;
	const char *id;
	char who[128], dir[PATH_MAX], msg[256];
	ssize_t pos;

	if (!get_run_id(rq, &id))
		return;
	if (!require_write(rq))
		return;
	daemon_describe_peer(rq->c, who, sizeof(who));

	if (d->cur.active && !strcmp(id, d->cur.id)) {
		if (!d->cur.cancel_requested) {
			int r = daemon_cancel_current(d, who);
			if (r < 0) {
				conn_send_error(d, rq->c, rq->id, PROTO_ERR_INTERNAL, NULL, "could not signal the run's worker: %s",
						strerror(-r));
				return;
			}
		}
		o = reply(rq);
		json_object_object_add(o, "run", daemon_current_summary(d));
		json_object_object_add(o, "cancelling", json_object_new_boolean(true));
		conn_send(d, rq->c, o);
		return;
	}

	pos = queue_find(&d->queue, id);
	if (pos >= 0) {
		queue_remove_at(&d->queue, (size_t)pos);
		if (queue_save(&d->queue, &err) < 0)
			log_error("cancel: %s", err.msg);
		snprintf(msg, sizeof(msg), "cancelled by %s before it started", who);
		if (store_run_dir(d->store, id, dir, sizeof(dir)) < 0 ||
		    store_end_run(dir, REPORT_CANCELLED, "queued", msg, 0, &err) < 0) {
			log_error("cancel: run %s: %s", id, err.msg);
			conn_send_error(d, rq->c, rq->id, PROTO_ERR_INTERNAL, NULL, "run %s: %s", id, err.msg);
			return;
		}
		log_info("run %s: %s", id, msg);
		daemon_notify_end(d, id);
		sum = summary_or_error(rq, id);
		if (!sum)
			return;
		o = reply(rq);
		json_object_object_add(o, "run", sum);
		json_object_object_add(o, "cancelling", json_object_new_boolean(false));
		conn_send(d, rq->c, o);
		daemon_update_status(d, true);
		daemon_write_metrics(d);
		return;
	}

	sum = summary_or_error(rq, id);
	if (!sum)
		return;
	const char *state = summary_state(sum);
	if (!strcmp(state, "running") || !strcmp(state, "queued"))
		conn_send_error(d, rq->c, rq->id, PROTO_ERR_CONFLICT, "run",
				"run %s is %s but not by this daemon (a 'snapbench run --local'?); stop it where it runs", id,
				state);
	else
		conn_send_error(d, rq->c, rq->id, PROTO_ERR_CONFLICT, "run", "run %s has already ended (%s); nothing to cancel",
				id, state);
	json_object_put(sum);
}

/* ---- logs ---- */

static void op_logs(struct request *rq)
{
	struct sb_error err = {};
	unsigned long long max = LOGS_DEFAULT_BYTES;
	struct json_object *logs, *o;
	const char *id;
	int r;

	if (!get_run_id(rq, &id))
		return;
	if (protocol_get_uint(rq->req, "max_bytes", LOGS_MAX_BYTES, &max, &err) < 0) {
		send_sb_error(rq, PROTO_ERR_BAD_REQUEST, "max_bytes", &err);
		return;
	}
	r = store_logs(rq->d->store, id, (size_t)max, &logs, &err);
	if (r < 0) {
		send_sb_error(rq, r == -ENOENT ? PROTO_ERR_NOT_FOUND : PROTO_ERR_INTERNAL, "run", &err);
		return;
	}
	o = reply(rq);
	json_object_object_add(o, "run", json_object_new_string(id));
	json_object_object_add(o, "logs", logs);
	conn_send(rq->d, rq->c, o);
}

/* ---- watch ---- */

static void op_watch(struct request *rq)
{
	struct daemon *d = rq->d;
	struct json_object *sum, *o;
	const char *id, *state;
	bool live;

	if (!get_run_id(rq, &id))
		return;
	/* watches outlive the idle and lifetime bounds while their run goes on: each uid but root's has a few */
	if (rq->c->cred.uid != 0 && !rq->c->watching &&
	    conn_count_uid(d, rq->c->cred.uid, true) >= d->cfg.max_watches_per_uid) {
		conn_send_error(d, rq->c, rq->id, PROTO_ERR_BUSY, NULL,
				"too many watches from uid %u (%u, snapbenchd --max-watches-per-uid); end one and try again",
				(unsigned)rq->c->cred.uid, d->cfg.max_watches_per_uid);
		return;
	}
	sum = summary_or_error(rq, id);
	if (!sum)
		return;
	state = summary_state(sum);
	live = (d->cur.active && !strcmp(id, d->cur.id)) || queue_find(&d->queue, id) >= 0;
	if (!live && (!strcmp(state, "running") || !strcmp(state, "queued"))) {
		conn_send_error(d, rq->c, rq->id, PROTO_ERR_CONFLICT, "run",
				"run %s is %s but not by this daemon (a 'snapbench run --local'?); it cannot be watched here",
				id, state);
		json_object_put(sum);
		return;
	}
	o = reply(rq);
	json_object_object_add(o, "run", sum);
	conn_send(d, rq->c, o);

	json_object_put(rq->c->watch_id);
	rq->c->watch_id = rq->id ? json_object_get(rq->id) : NULL;
	snprintf(rq->c->watch_run, sizeof(rq->c->watch_run), "%s", id);
	rq->c->watching = true;
	if (!live)
		daemon_notify_end(d, id); /* already over: the end event follows at once */
}

void ops_handle_line(struct daemon *d, struct conn *c, const char *line, size_t len)
{
	struct sb_error err = {};
	struct request rq = { .d = d, .c = c };
	const char *code = PROTO_ERR_BAD_REQUEST, *field = NULL;
	int r;

	r = protocol_parse_line(line, len, PROTOCOL_MAX_DEPTH, &rq.req, &err);
	if (r < 0) {
		conn_send(d, c, protocol_error_new(NULL, PROTO_ERR_BAD_JSON, NULL, err.msg));
		return;
	}
	r = protocol_check_envelope(rq.req, &rq.op, &rq.id, &code, &field, &err);
	if (r < 0) {
		conn_send(d, c, protocol_error_new(rq.id, code, field, err.msg));
		json_object_put(rq.req);
		return;
	}
	if (check_fields(&rq)) {
		switch (rq.op) {
		case PROTO_OP_SUBMIT:
			op_submit(&rq);
			break;
		case PROTO_OP_STATUS:
			op_status(&rq);
			break;
		case PROTO_OP_LIST:
			op_list(&rq);
			break;
		case PROTO_OP_SHOW:
			op_show(&rq);
			break;
		case PROTO_OP_CANCEL:
			op_cancel(&rq);
			break;
		case PROTO_OP_LOGS:
			op_logs(&rq);
			break;
		case PROTO_OP_WATCH:
			op_watch(&rq);
			break;
		default:
			break;
		}
	}
	json_object_put(rq.req);
}
