// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbenchd: set-up, the poll loop, and the current run. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "daemon.h"
#include "json-util.h"
#include "knobs.h"
#include "macro.h"
#include "mkdir-p.h"
#include "progress.h"
#include "recover.h"
#include "run-dir.h"
#include "store.h"

void log_msg(int priority, const char *fmt, ...)
{
	static int journal = -1;
	char buf[2048];
	va_list ap;

	if (journal < 0)
		journal = getenv("JOURNAL_STREAM") ? 1 : 0;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (journal)
		fprintf(stderr, "<%d>%s\n", priority, buf);
	else
		fprintf(stderr, "snapbenchd: %s\n", buf);
}

void daemon_config_defaults(struct daemon_config *cfg)
{
	*cfg = (struct daemon_config){
		.socket_path = PROTOCOL_DEFAULT_SOCKET,
		.state_dir = DAEMON_DEFAULT_STATE_DIR,
		.group = DAEMON_DEFAULT_GROUP,
		.max_connections = 64,
		.max_queue = 64,
		.request_timeout_ms = 10000,
		.idle_timeout_ms = 60000,
		.lifetime_ms = 600000,
		.write_timeout_ms = 30000,
		.cancel_timeout_ms = 45000,
		.recover_wait_ms = 60000,
	};
}

/* ---- the socket ---- */

static int socket_from_systemd(struct daemon *d, struct sb_error *err)
{
	char **names = NULL;
	int n = sd_listen_fds_with_names(1, &names), fd = -1;

	if (n < 0)
		return sb_error_set(err, n, "socket activation: %s", strerror(-n));
	if (n == 0)
		return 0;
	for (int i = 0; i < n; i++) {
		int cand = SD_LISTEN_FDS_START + i;
		if (sd_is_socket_unix(cand, SOCK_STREAM, 1, NULL, 0) > 0 && fd < 0)
			fd = cand;
		else
			close(cand); /* not ours to use: one listening unix stream socket is what we serve */
		free(names ? names[i] : NULL);
	}
	free(names);
	if (fd < 0)
		return sb_error_set(err, -EINVAL,
				    "socket activation: none of the %d sockets passed is a listening unix stream socket; check snapbenchd.socket (ListenStream=/run/...)",
				    n);
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		return sb_error_set(err, -errno, "socket activation: fcntl: %s", strerror(errno));
	d->listen_fd = fd;
	d->activated = true;
	return 1;
}

static int socket_create(struct daemon *d, struct sb_error *err)
{
	const char *path = d->cfg.socket_path;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[PATH_MAX];
	_cleanup_close_ int fd = -1;
	int r;

	if (!path || !*path)
		return sb_error_set(err, -EINVAL, "--socket: empty path");
	if (strlen(path) >= sizeof(sa.sun_path))
		return sb_error_set(err, -ENAMETOOLONG, "--socket %s: longer than %zu bytes, the limit of a unix socket path; choose a shorter path",
				    path, sizeof(sa.sun_path) - 1);
	strcpy(sa.sun_path, path);
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		r = mkdir_p(dir, 0755);
		if (r < 0)
			return sb_error_set(err, r, "--socket %s: cannot create directory %s: %s", path, dir, strerror(-r));
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return sb_error_set(err, -errno, "socket: %s", strerror(errno));

	/* a socket file left by a daemon that died: remove it, but never steal a live daemon's */
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return sb_error_set(err, -EEXIST, "--socket %s: exists and is not a socket; remove it or choose another path",
					    path);
		_cleanup_close_ int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return sb_error_set(err, -EADDRINUSE, "--socket %s: another snapbenchd is listening there; stop it first or choose another path",
					    path);
		if (unlink(path) < 0 && errno != ENOENT)
			return sb_error_set(err, -errno, "--socket %s: cannot remove the stale socket: %s", path,
					    strerror(errno));
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return sb_error_set(err, -errno, "--socket %s: bind: %s", path, strerror(errno));
	/* anyone may connect and read; SO_PEERCRED decides who may submit and cancel */
	if (chmod(path, 0666) < 0) {
		r = -errno;
		unlink(path);
		return sb_error_set(err, r, "--socket %s: chmod: %s", path, strerror(-r));
	}
	if (listen(fd, 128) < 0) {
		r = -errno;
		unlink(path);
		return sb_error_set(err, r, "--socket %s: listen: %s", path, strerror(-r));
	}
	d->socket_path = strdup(path);
	d->listen_fd = TAKE_FD(fd);
	return 0;
}

/* ---- set-up ---- */

static int lock_state_dir(struct daemon *d, struct sb_error *err)
{
	char path[PATH_MAX];
	int r;

	r = mkdir_p(d->cfg.state_dir, 0755);
	if (r < 0)
		return sb_error_set(err, r, "--state-dir %s: cannot create it: %s", d->cfg.state_dir, strerror(-r));
	snprintf(path, sizeof(path), "%s/%s", d->cfg.state_dir, DAEMON_LOCK_FILE);
	d->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (d->lock_fd < 0)
		return sb_error_set(err, -errno, "--state-dir %s: cannot open %s: %s; is the directory writable?",
				    d->cfg.state_dir, path, strerror(errno));
	if (flock(d->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		if (r == -EWOULDBLOCK)
			return sb_error_set(err, -EBUSY, "--state-dir %s: another snapbenchd uses this state directory; stop it or choose another directory",
					    d->cfg.state_dir);
		return sb_error_set(err, r, "flock %s: %s", path, strerror(-r));
	}
	return 0;
}

static int setup_signals(struct daemon *d, struct sb_error *err)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return sb_error_set(err, -errno, "sigprocmask: %s", strerror(errno));
	d->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->signal_fd < 0)
		return sb_error_set(err, -errno, "signalfd: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int daemon_setup(struct daemon *d, const struct daemon_config *cfg, struct sb_error *err)
{
	struct recover_result res;
	struct group *g;
	int r;

	*d = (struct daemon){ .cfg = *cfg, .listen_fd = -1, .signal_fd = -1, .lock_fd = -1 };
	d->cur.w.pidfd = d->cur.w.progress_fd = -1;
	d->start_ns = mono_ns();

	r = setup_signals(d, err);
	if (r < 0)
		return r;
	r = lock_state_dir(d, err);
	if (r < 0)
		return r;
	r = store_open(cfg->state_dir, &d->store, err);
	if (r < 0)
		return r;

	if (cfg->worker_path) {
		if (access(cfg->worker_path, X_OK) < 0)
			return sb_error_set(err, -errno, "--worker %s: %s", cfg->worker_path, strerror(errno));
		d->worker_path = strdup(cfg->worker_path);
	} else {
		r = worker_find_binary(&d->worker_path, err);
		if (r < 0)
			return r;
	}

	g = getgrnam(cfg->group);
	if (g) {
		d->group_known = true;
		d->gid = g->gr_gid;
	} else {
		log_warning("group '%s' does not exist: only root may submit and cancel runs; create it (groupadd %s) to let its members",
			    cfg->group, cfg->group);
	}

	r = queue_load(cfg->state_dir, &d->queue, err);
	if (r < 0) {
		char bad[PATH_MAX + 16];
		log_error("%s; moving it aside and rebuilding the queue from the run directories", err->msg);
		sb_error_clear(err);
		snprintf(bad, sizeof(bad), "%s/%s.corrupt", cfg->state_dir, QUEUE_FILE);
		if (queue_init_empty(cfg->state_dir, &d->queue) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
		rename(d->queue.path, bad);
	}
	r = recover_state(d->store, &d->queue, (int)cfg->recover_wait_ms, &res, err);
	if (r < 0)
		return r;
	if (*res.interrupted)
		log_warning("run %s was executing when the previous snapbenchd stopped: now %s, its partial data kept",
			    res.interrupted, res.interrupted_state);
	if (res.killed_worker || res.killed_qemu)
		log_warning("killed what the interrupted run left running: %u worker, %u QEMU", res.killed_worker,
			    res.killed_qemu);
	if (res.knobs_restored)
		log_warning("restored %d knobs a previous run left set", res.knobs_restored);
	if (res.requeued || res.dropped)
		log_notice("queue reconciled with the run directories: %u added, %u dropped", res.requeued, res.dropped);
	if (*res.notes)
		log_warning("recovery: %s", res.notes);

	r = socket_from_systemd(d, err);
	if (r < 0)
		return r;
	if (r == 0) {
		r = socket_create(d, err);
		if (r < 0)
			return r;
	}
	log_info("snapbenchd %s listening on %s%s; state in %s; %zu runs queued", PACKAGE_VERSION,
		 d->activated ? "a socket from systemd" : d->socket_path, d->activated ? "" : " (mode 0666)",
		 cfg->state_dir, d->queue.n);
	return 0;
}

void daemon_teardown(struct daemon *d)
{
	for (size_t i = 0; i < d->n_conns; i++)
		conn_free(d->conns[i]);
	free(d->conns);
	d->conns = NULL;
	d->n_conns = 0;
	if (d->listen_fd >= 0)
		close(d->listen_fd);
	if (d->socket_path) {
		unlink(d->socket_path);
		free(d->socket_path);
	}
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	worker_close(&d->cur.w);
	linebuf_done(&d->cur.progress_in);
	json_object_put(d->cur.progress);
	queue_done(&d->queue);
	store_free(d->store);
	free(d->worker_path);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
}

/* ---- status for systemd ---- */

void daemon_update_status(struct daemon *d, bool force)
{
	char buf[256];
	uint64_t now = mono_ns();

	if (!force && now - d->last_status_ns < NSEC_PER_SEC)
		return;
	if (d->stopping)
		snprintf(buf, sizeof(buf), "stopping%s%s", d->cur.active ? ": cancelling run " : "",
			 d->cur.active ? d->cur.id : "");
	else if (d->cur.active) {
		struct json_object *p = d->cur.progress, *rep, *reps, *step, *frac;
		if (p && json_object_object_get_ex(p, "rep", &rep) && json_object_object_get_ex(p, "reps", &reps) &&
		    json_object_object_get_ex(p, "step", &step) && json_object_object_get_ex(p, "fraction", &frac))
			snprintf(buf, sizeof(buf), "running %s: repetition %d/%d, %s, %.0f%%; %zu queued", d->cur.id,
				 json_object_get_int(rep) + 1, json_object_get_int(reps),
				 step ? json_object_get_string(step) : "-", frac ? 100 * json_object_get_double(frac) : 0.0,
				 d->queue.n);
		else
			snprintf(buf, sizeof(buf), "running %s; %zu queued", d->cur.id, d->queue.n);
	} else
		snprintf(buf, sizeof(buf), "idle; %zu queued", d->queue.n);
	if (!strcmp(buf, d->last_status))
		return;
	snprintf(d->last_status, sizeof(d->last_status), "%s", buf);
	d->last_status_ns = now;
	sd_notifyf(0, "STATUS=%s", buf);
}

/* ---- the current run ---- */

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

static void start_next(struct daemon *d)
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
		linebuf_init(&cur->progress_in, PROGRESS_MAX_LINE);
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
	}
}

static void read_progress(struct daemon *d)
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
			linebuf_init(&cur->progress_in, PROGRESS_MAX_LINE);
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
			p = progress_sanitize(o);
			json_object_put(o);
			if (!p)
				continue;
			json_object_put(cur->progress);
			cur->progress = p;
			broadcast(d, cur->id, "progress", p, "progress", true);
		}
		if (r < 0) {
			linebuf_done(&cur->progress_in);
			linebuf_init(&cur->progress_in, PROGRESS_MAX_LINE);
		}
	}
	daemon_update_status(d, false);
}

/* The worker exited: settle the report, then go on with the queue. */
static void finish_current(struct daemon *d)
{
	struct current_run *cur = &d->cur;
	struct sb_error err = {};
	char status[128], msg[512];
	_cleanup_json_ struct json_object *report = NULL;
	char path[PATH_MAX + 16];
	int state = -1;

	read_progress(d);
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
}

static void on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			log_info("SIGHUP: nothing to reload; ignored");
			continue;
		}
		if (!d->stopping) {
			d->stopping = true;
			log_info("%s: stopping%s", strsignal((int)si.ssi_signo),
				 d->cur.active ? "; cancelling the current run first" : "");
			sd_notify(0, "STOPPING=1");
			if (d->cur.active)
				daemon_cancel_current(d, "snapbenchd shutting down");
			/* no new connections; with socket activation systemd keeps the socket */
			if (d->listen_fd >= 0) {
				close(d->listen_fd);
				d->listen_fd = -1;
			}
			daemon_update_status(d, true);
		} else if (d->cur.active && !d->cur.killed) {
			log_warning("%s again: killing the run's worker now", strsignal((int)si.ssi_signo));
			worker_signal(&d->cur.w, SIGKILL);
			d->cur.killed = true;
		}
	}
}

static void drop_dead(struct daemon *d)
{
	size_t k = 0;

	for (size_t i = 0; i < d->n_conns; i++) {
		if (d->conns[i]->dead)
			conn_free(d->conns[i]);
		else
			d->conns[k++] = d->conns[i];
	}
	d->n_conns = k;
}

static int min_timeout(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

int daemon_loop(struct daemon *d)
{
	struct pollfd *pfd = NULL;
	size_t cap = 0;

	sd_notify(0, "READY=1");
	daemon_update_status(d, true);
	start_next(d);

	for (;;) {
		size_t n = 0, first_conn;
		int timeout = -1, idx_listen = -1, idx_signal, idx_pidfd = -1, idx_progress = -1;
		uint64_t now;

		if (d->stopping && !d->cur.active)
			break;
		if (cap < d->n_conns + 4) {
			struct pollfd *p = realloc(pfd, (d->n_conns + 4) * sizeof(*p));
			if (!p) {
				log_error("out of memory");
				sleep(1);
				continue;
			}
			pfd = p;
			cap = d->n_conns + 4;
		}
		idx_signal = (int)n;
		pfd[n++] = (struct pollfd){ .fd = d->signal_fd, .events = POLLIN };
		if (d->listen_fd >= 0) {
			idx_listen = (int)n;
			pfd[n++] = (struct pollfd){ .fd = d->listen_fd, .events = POLLIN };
		}
		if (d->cur.active && d->cur.w.pidfd >= 0) {
			idx_pidfd = (int)n;
			pfd[n++] = (struct pollfd){ .fd = d->cur.w.pidfd, .events = POLLIN };
		}
		if (d->cur.active && d->cur.w.progress_fd >= 0) {
			idx_progress = (int)n;
			pfd[n++] = (struct pollfd){ .fd = d->cur.w.progress_fd, .events = POLLIN };
		}
		now = mono_ns();
		for (size_t i = 0; i < d->n_conns; i++)
			timeout = min_timeout(timeout, conn_check_deadlines(d, d->conns[i], now));
		drop_dead(d);
		first_conn = n;
		for (size_t i = 0; i < d->n_conns; i++) {
			struct conn *c = d->conns[i];
			short ev = 0;

			if (!c->dead && !c->closing && !c->peer_eof && c->out_len - c->out_off <= DAEMON_OUT_HIGH_WATER)
				ev |= POLLIN;
			if (c->out_len > c->out_off)
				ev |= POLLOUT;
			pfd[n++] = (struct pollfd){ .fd = c->dead ? -1 : c->fd, .events = ev };
		}
		if (d->cur.active && d->cur.cancel_requested && !d->cur.killed) {
			if (now >= d->cur.cancel_deadline_ns) {
				log_warning("run %s: the worker did not stop within %u ms of the cancel; killing it", d->cur.id,
					    d->cfg.cancel_timeout_ms);
				worker_signal(&d->cur.w, SIGKILL);
				d->cur.killed = true;
			} else {
				timeout = min_timeout(timeout, ms_until(d->cur.cancel_deadline_ns));
			}
		}

		int r = poll(pfd, n, timeout);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			log_error("poll: %s", strerror(errno));
			free(pfd);
			return -errno;
		}

		if (pfd[idx_signal].revents)
			on_signal(d);
		if (idx_progress >= 0 && pfd[idx_progress].revents)
			read_progress(d);
		if (idx_pidfd >= 0 && pfd[idx_pidfd].revents && d->cur.active) {
			int st;
			if (worker_reap(&d->cur.w, &st) > 0) {
				d->cur.wait_status = st;
				finish_current(d);
			}
		}
		for (size_t i = 0; i < d->n_conns && first_conn + i < n; i++) {
			struct conn *c = d->conns[i];
			short re = pfd[first_conn + i].revents;

			if (c->dead || !re)
				continue;
			if (re & POLLOUT)
				conn_on_output(d, c);
			if (re & (POLLIN | POLLHUP | POLLERR)) {
				if (!c->peer_eof && !c->closing)
					conn_on_input(d, c);
				else if (re & (POLLHUP | POLLERR))
					c->dead = true;
			}
		}
		drop_dead(d);
		if (idx_listen >= 0 && d->listen_fd >= 0 && (pfd[idx_listen].revents & POLLIN))
			conn_accept_all(d);
		start_next(d);
	}

	/* last words to whoever still waits (watchers get their end events), without blocking */
	for (size_t i = 0; i < d->n_conns; i++)
		conn_on_output(d, d->conns[i]);
	free(pfd);
	log_info("stopped; %zu runs stay queued for the next start", d->queue.n);
	return 0;
}
