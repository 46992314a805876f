// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbenchd: set-up, signals and the poll loop. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "conn.h"
#include "current-run.h"
#include "daemon.h"
#include "listen.h"
#include "log.h"
#include "macro.h"
#include "metrics-file.h"
#include "mkdir-p.h"
#include "ops.h"
#include "recover.h"
#include "status.h"
#include "store.h"

void daemon_config_defaults(struct daemon_config *cfg)
{
	*cfg = (struct daemon_config){
		.socket_path = PROTOCOL_DEFAULT_SOCKET,
		.state_dir = DAEMON_DEFAULT_STATE_DIR,
		.group = DAEMON_DEFAULT_GROUP,
		.max_connections = 64,
		.max_connections_per_uid = 16,
		.reserved_connections = 8,
		.max_watches_per_uid = 4,
		.max_queue = 64,
		.request_timeout_ms = 10000,
		.idle_timeout_ms = 60000,
		.lifetime_ms = 600000,
		.write_timeout_ms = 30000,
		.cancel_timeout_ms = 45000,
		.recover_wait_ms = 60000,
	};
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

	*d = (struct daemon){ .cfg = *cfg, .listen_fd = -1, .signal_fd = -1, .lock_fd = -1,
			      .on_request = ops_handle_line };
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

	r = listen_open(d, err);
	if (r < 0)
		return r;
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
	listen_close(d);
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
			listen_stop(d);
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

/* The fds of one poll() round: the signalfd, the listener, the worker's, then the connections. */
struct poll_set {
	struct pollfd *pfd;
	size_t cap, n, first_conn;
	int idx_signal, idx_listen, idx_pidfd, idx_progress;
};

/* Fills ps for this round and *timeout with the nearest deadline; -ENOMEM. */
static int poll_set_fill(struct daemon *d, struct poll_set *ps, int *timeout)
{
	uint64_t now;

	if (ps->cap < d->n_conns + 4) {
		struct pollfd *p = realloc(ps->pfd, (d->n_conns + 4) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ps->pfd = p;
		ps->cap = d->n_conns + 4;
	}
	ps->n = 0;
	ps->idx_listen = ps->idx_pidfd = ps->idx_progress = -1;
	*timeout = -1;
	ps->idx_signal = (int)ps->n;
	ps->pfd[ps->n++] = (struct pollfd){ .fd = d->signal_fd, .events = POLLIN };
	if (d->listen_fd >= 0) {
		ps->idx_listen = (int)ps->n;
		ps->pfd[ps->n++] = (struct pollfd){ .fd = d->listen_fd, .events = POLLIN };
	}
	if (d->cur.active && d->cur.w.pidfd >= 0) {
		ps->idx_pidfd = (int)ps->n;
		ps->pfd[ps->n++] = (struct pollfd){ .fd = d->cur.w.pidfd, .events = POLLIN };
	}
	if (d->cur.active && d->cur.w.progress_fd >= 0) {
		ps->idx_progress = (int)ps->n;
		ps->pfd[ps->n++] = (struct pollfd){ .fd = d->cur.w.progress_fd, .events = POLLIN };
	}
	now = mono_ns();
	for (size_t i = 0; i < d->n_conns; i++)
		*timeout = poll_timeout_min(*timeout, conn_check_deadlines(d, d->conns[i], now));
	drop_dead(d);
	ps->first_conn = ps->n;
	for (size_t i = 0; i < d->n_conns; i++) {
		struct conn *c = d->conns[i];
		short ev = 0;

		if (!c->dead && !c->closing && !c->peer_eof && c->out_len - c->out_off <= DAEMON_OUT_HIGH_WATER)
			ev |= POLLIN;
		if (c->out_len > c->out_off)
			ev |= POLLOUT;
		ps->pfd[ps->n++] = (struct pollfd){ .fd = c->dead ? -1 : c->fd, .events = ev };
	}
	*timeout = poll_timeout_min(*timeout, current_check_cancel_deadline(d, now));
	return 0;
}

/* Handles what poll() reported on ps. */
static void poll_set_dispatch(struct daemon *d, const struct poll_set *ps)
{
	const struct pollfd *pfd = ps->pfd;

	if (pfd[ps->idx_signal].revents)
		on_signal(d);
	if (ps->idx_progress >= 0 && pfd[ps->idx_progress].revents)
		current_read_progress(d);
	if (ps->idx_pidfd >= 0 && pfd[ps->idx_pidfd].revents && d->cur.active) {
		int st;
		if (worker_reap(&d->cur.w, &st) > 0) {
			d->cur.wait_status = st;
			current_finish(d);
		}
	}
	for (size_t i = 0; i < d->n_conns && ps->first_conn + i < ps->n; i++) {
		struct conn *c = d->conns[i];
		short re = pfd[ps->first_conn + i].revents;

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
	if (ps->idx_listen >= 0 && d->listen_fd >= 0 && (pfd[ps->idx_listen].revents & POLLIN))
		conn_accept_all(d);
}

int daemon_loop(struct daemon *d)
{
	struct poll_set ps = {};

	sd_notify(0, "READY=1");
	daemon_update_status(d, true);
	daemon_write_metrics(d); /* the store as recovery left it */
	current_start_next(d);

	for (;;) {
		int timeout, r;

		if (d->stopping && !d->cur.active)
			break;
		if (poll_set_fill(d, &ps, &timeout) < 0) {
			log_error("out of memory");
			sleep(1);
			continue;
		}
		r = poll(ps.pfd, ps.n, timeout);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			log_error("poll: %s", strerror(errno));
			free(ps.pfd);
			return -errno;
		}
		poll_set_dispatch(d, &ps);
		current_start_next(d);
	}

	/* last words to whoever still waits (watchers get their end events), without blocking */
	for (size_t i = 0; i < d->n_conns; i++)
		conn_on_output(d, d->conns[i]);
	free(ps.pfd);
	log_info("stopped; %zu runs stay queued for the next start", d->queue.n);
	return 0;
}
