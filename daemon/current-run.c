// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbenchd's current run: starting the next queued run's worker, its
 * progress, its cancel and its end, and the events its watchers get.
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "conn.h"
#include "current-run.h"
#include "daemon.h"
#include "json-util.h"
#include "knobs.h"
#include "log.h"
#include "metrics-file.h"
#include "recover.h"
#include "run-dir.h"
#include "run-progress.h"
#include "status.h"
#include "store.h"

struct json_object *daemon_current_summary(struct daemon *d)
{
	struct json_object *sum;
	struct sb_error err = {};

	if (!d->cur.active)
		return NULL;
	if (store_summary(d->store, d->cur.id, &sum, &err) < 0) {
		sum = json_object_new_object();
		if (!sum)
			return NULL;
		json_object_object_add(sum, "id", json_object_new_string(d->cur.id));
		json_object_object_add(sum, "state", json_object_new_string("running"));
	} else {
		/* the worker's first report write may not have happened yet */
		struct json_object *copy = NULL;
		if (json_object_deep_copy(sum, &copy, NULL) < 0) {
			json_object_put(sum);
			return NULL;
		}
		json_object_put(sum);
		sum = copy;
		json_object_object_add(sum, "state", json_object_new_string("running"));
	}
	json_object_object_add(sum, "progress", d->cur.progress ? json_object_get(d->cur.progress) : NULL);
	json_object_object_add(sum, "cancelling", json_object_new_boolean(d->cur.cancel_requested));
	json_object_object_add(sum, "worker_pid", d->cur.w.pid > 0 ? json_object_new_int(d->cur.w.pid) : NULL);
	return sum;
}

static void broadcast(struct daemon *d, const char *run, const char *event, struct json_object *payload_key_value,
		      const char *key, bool droppable)
{
	for (size_t i = 0; i < d->n_conns; i++) {
		struct conn *c = d->conns[i];
		struct json_object *ev;

		if (!c->watching || c->dead || strcmp(c->watch_run, run))
			continue;
		if (droppable && c->out_len - c->out_off > DAEMON_OUT_HIGH_WATER / 16) {
			c->dropped_events++;
			continue;
		}
		ev = protocol_event_new(c->watch_id, event, run);
		if (ev && key)
			json_object_object_add(ev, key, payload_key_value ? json_object_get(payload_key_value) : NULL);
		conn_send(d, c, ev);
	}
}

void daemon_notify_end(struct daemon *d, const char *run)
{
	struct json_object *sum = NULL;
	struct sb_error err = {};
	bool any = false;

	for (size_t i = 0; i < d->n_conns; i++)
		if (d->conns[i]->watching && !strcmp(d->conns[i]->watch_run, run))
			any = true;
	if (!any)
		return;
	if (store_summary(d->store, run, &sum, &err) < 0)
		sum = NULL;
	for (size_t i = 0; i < d->n_conns; i++) {
		struct conn *c = d->conns[i];
		struct json_object *ev, *v;

		if (!c->watching || strcmp(c->watch_run, run))
			continue;
		ev = protocol_event_new(c->watch_id, "end", run);
		if (ev) {
			json_object_object_add(ev, "state", sum && json_object_object_get_ex(sum, "state", &v) ? json_object_get(v) : NULL);
			json_object_object_add(ev, "error", sum && json_object_object_get_ex(sum, "error", &v) ? json_object_get(v) : NULL);
			json_object_object_add(ev, "summary", sum ? json_object_get(sum) : NULL);
		}
		conn_send(d, c, ev);
		c->watching = false;
		json_object_put(c->watch_id);
		c->watch_id = NULL;
		/* the idle and lifetime bounds start again from here, as for a new connection */
		c->accepted_ns = c->last_activity_ns = mono_ns();
		if (c->peer_eof)
			c->closing = true;
		if (c->closing && c->out_len == c->out_off)
			c->dead = true;
	}
	json_object_put(sum);
}

int daemon_cancel_current(struct daemon *d, const char *by)
{
	int r;

	if (!d->cur.active)
		return -ESRCH;
	if (d->cur.cancel_requested)
		return 0;
	r = worker_signal(&d->cur.w, SIGTERM);
	if (r < 0 && r != -ESRCH)
		return r;
	d->cur.cancel_requested = true;
	d->cur.cancel_deadline_ns = mono_ns() + (uint64_t)d->cfg.cancel_timeout_ms * NSEC_PER_MSEC;
	snprintf(d->cur.cancelled_by, sizeof(d->cur.cancelled_by), "%s", by);
	log_info("run %s: cancel requested by %s; the worker has %u ms to stop it", d->cur.id, by,
		 d->cfg.cancel_timeout_ms);
	daemon_update_status(d, true);
	{
		struct json_object *yes = json_object_new_boolean(true);
		broadcast(d, d->cur.id, "state", yes, "cancelling", false);
		json_object_put(yes);
	}
	return 0;
}

void current_start_next(struct daemon *d)
{
	struct sb_error err = {};

	while (!d->cur.active && !d->stopping && d->queue.n > 0) {
		struct current_run *cur = &d->cur;
		char id[REPORT_ID_MAX];
		struct worker_args a;
		int r;

		snprintf(id, sizeof(id), "%s", d->queue.ids[0]);
		queue_remove_at(&d->queue, 0);
		*cur = (struct current_run){ .w = { .pidfd = -1, .progress_fd = -1 } };
		snprintf(cur->id, sizeof(cur->id), "%s", id);
		if (store_run_dir(d->store, id, cur->run_dir, sizeof(cur->run_dir)) < 0)
			continue;
		/* recorded before the worker exists: a crash from here on is an interruption */
		d->queue.has_running = true;
		d->queue.running = (struct queue_running){ 0 };
		snprintf(d->queue.running.id, sizeof(d->queue.running.id), "%s", id);
		r = queue_save(&d->queue, &err);
		if (r < 0) {
			struct sb_error e2 = {};
			log_error("run %s: %s; failing the run", id, err.msg);
			store_end_run(cur->run_dir, REPORT_FAILED, "queue", err.msg, 0, &e2);
			d->queue.has_running = false;
			daemon_notify_end(d, id);
			continue;
		}
		a = (struct worker_args){
			.worker_path = d->worker_path,
			.run_dir = cur->run_dir,
			.knobs_dir = store_runs_dir(d->store),
			.qemu = d->cfg.qemu,
		};
		r = worker_start(&a, &cur->w, &err);
		if (r < 0) {
			struct sb_error e2 = {};
			log_error("run %s: %s", id, err.msg);
			store_end_run(cur->run_dir, REPORT_FAILED, "worker", err.msg, 0, &e2);
			d->queue.has_running = false;
			queue_save(&d->queue, &e2);
			daemon_notify_end(d, id);
			continue;
		}
		cur->active = true;
		cur->started_ns = mono_ns();
		linebuf_init(&cur->progress_in, RUN_PROGRESS_MAX_LINE);
		d->queue.running.worker_pid = cur->w.pid;
		d->queue.running.worker_start = cur->w.start_ticks;
		if (queue_save(&d->queue, &err) < 0)
			log_error("run %s: %s (continuing: the run goes on, but a crash now would not be recovered)", id,
				  err.msg);
		log_info("run %s: started (worker pid %d); %zu queued", id, (int)cur->w.pid, d->queue.n);
		{
			struct json_object *state = json_object_new_string("running");
			broadcast(d, id, "state", state, "state", false);
			json_object_put(state);
		}
		daemon_update_status(d, true);
		daemon_write_metrics(d);
	}
}

void current_read_progress(struct daemon *d)
{
	struct current_run *cur = &d->cur;

	while (cur->w.progress_fd >= 0) {
		char *where, *line;
		size_t room, len;
		ssize_t n;
		int r;

		r = linebuf_reserve(&cur->progress_in, 4096, &where, &room);
		if (r < 0) {
			/* a line that long is not progress: start over */
			log_warning("run %s: the worker sent an overlong progress line; ignored", cur->id);
			linebuf_done(&cur->progress_in);
			linebuf_init(&cur->progress_in, RUN_PROGRESS_MAX_LINE);
			continue;
		}
		n = read(cur->w.progress_fd, where, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || errno != EAGAIN) {
				close(cur->w.progress_fd);
				cur->w.progress_fd = -1;
			}
			break;
		}
		linebuf_commit(&cur->progress_in, (size_t)n);
		while ((r = linebuf_next_line(&cur->progress_in, &line, &len)) > 0) {
			struct json_object *o, *p;
			struct sb_error err = {};

			if (protocol_parse_line(line, len, 4, &o, &err) < 0)
				continue;
			p = run_progress_sanitize(o);
			json_object_put(o);
			if (!p)
				continue;
			json_object_put(cur->progress);
			cur->progress = p;
			broadcast(d, cur->id, "progress", p, "progress", true);
		}
		if (r < 0) {
			linebuf_done(&cur->progress_in);
			linebuf_init(&cur->progress_in, RUN_PROGRESS_MAX_LINE);
		}
	}
	daemon_update_status(d, false);
}

void current_finish(struct daemon *d)
{
	struct current_run *cur = &d->cur;
	struct sb_error err = {};
	char status[128], msg[512];
	_cleanup_json_ struct json_object *report = NULL;
	char path[PATH_MAX + 16];
	int state = -1;

	current_read_progress(d);
	worker_describe_status(cur->wait_status, status, sizeof(status));
	snprintf(path, sizeof(path), "%s/%s", cur->run_dir, RUN_DIR_REPORT);
	if (report_read(path, &report, &err) == 0)
		state = report_json_state(report);

	if (state != REPORT_COMPLETED && state != REPORT_FAILED && state != REPORT_CANCELLED) {
		/* the worker did not end its run: whatever it left behind goes now */
		struct sb_error e2 = {};
		int k = recover_kill_run_qemu(cur->run_dir, cur->id);
		if (k > 0)
			log_warning("run %s: killed the QEMU its worker left behind", cur->id);
		k = knobs_recover(store_runs_dir(d->store), NULL, &e2);
		if (k > 0)
			log_warning("run %s: restored %d knobs its worker left set", cur->id, k);
		else if (k == -EBUSY)
			log_warning("run %s: knobs: %s", cur->id, e2.msg);
		else if (k < 0)
			log_error("run %s: knobs: %s", cur->id, e2.msg);
		if (cur->killed)
			snprintf(msg, sizeof(msg),
				 "cancelled by %s; the worker did not stop within %u ms and was killed; see worker.log",
				 cur->cancelled_by, d->cfg.cancel_timeout_ms);
		else
			snprintf(msg, sizeof(msg), "the run worker ended unexpectedly (%s); see 'snapbench logs %s'", status,
				 cur->id);
		if (store_end_run(cur->run_dir, cur->cancel_requested ? REPORT_CANCELLED : REPORT_FAILED, "worker", msg, 0,
				  &e2) < 0)
			log_error("run %s: %s", cur->id, e2.msg);
		state = cur->cancel_requested ? REPORT_CANCELLED : REPORT_FAILED;
	}
	log_info("run %s: %s (worker %s, %.1f s)", cur->id, report_state_to_string((enum report_state)state), status,
		 (double)(mono_ns() - cur->started_ns) / 1e9);

	char id[REPORT_ID_MAX];
	snprintf(id, sizeof(id), "%s", cur->id);
	worker_close(&cur->w);
	linebuf_done(&cur->progress_in);
	json_object_put(cur->progress);
	*cur = (struct current_run){ .w = { .pidfd = -1, .progress_fd = -1 } };
	d->queue.has_running = false;
	if (queue_save(&d->queue, &err) < 0)
		log_error("%s", err.msg);
	daemon_notify_end(d, id);
	daemon_update_status(d, true);
	daemon_write_metrics(d);
}

int current_check_cancel_deadline(struct daemon *d, uint64_t now)
{
	if (!d->cur.active || !d->cur.cancel_requested || d->cur.killed)
		return -1;
	if (now >= d->cur.cancel_deadline_ns) {
		log_warning("run %s: the worker did not stop within %u ms of the cancel; killing it", d->cur.id,
			    d->cfg.cancel_timeout_ms);
		worker_signal(&d->cur.w, SIGKILL);
		d->cur.killed = true;
		return -1;
	}
	return ms_until(d->cur.cancel_deadline_ns);
}
