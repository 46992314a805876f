// SPDX-License-Identifier: GPL-2.0-or-later
/* Start-up recovery: old worker, leftover QEMU, knobs, the queue. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json-util.h"
#include "knobs.h"
#include "macro.h"
#include "proc.h"
#include "queue.h"
#include "recover.h"
#include "run-dir.h"
#include "store.h"

static void note(struct recover_result *res, const char *fmt, ...) _printf_(2, 3);
static void note(struct recover_result *res, const char *fmt, ...)
{
	size_t len = strlen(res->notes);
	va_list ap;

	if (len + 3 >= sizeof(res->notes))
		return;
	if (len) {
		strcat(res->notes, "; ");
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(res->notes + len, sizeof(res->notes) - len, fmt, ap);
	va_end(ap);
}

/* The argv of the last repetition of the run's report, for matching QEMU (a new reference or NULL). */
static struct json_object *last_rep_argv(const char *run_dir, pid_t pid)
{
	char path[PATH_MAX];
	_cleanup_json_ struct json_object *report = NULL;
	struct json_object *reps, *argv = NULL;
	struct sb_error err = {};

	snprintf(path, sizeof(path), "%s/%s", run_dir, RUN_DIR_REPORT);
	if (report_read(path, &report, &err) < 0)
		return NULL;
	if (json_object_object_get_ex(report, "repetitions", &reps) && json_object_is_type(reps, json_type_array)) {
		for (size_t i = json_object_array_length(reps); i-- > 0;) {
			struct json_object *rep = json_object_array_get_idx(reps, i), *vm, *p, *a;
			if (json_object_object_get_ex(rep, "vm", &vm) && json_object_object_get_ex(vm, "pid", &p) &&
			    json_object_is_type(p, json_type_int) && json_object_get_int64(p) == pid &&
			    json_object_object_get_ex(vm, "argv", &a) && json_object_is_type(a, json_type_array)) {
				argv = json_object_get(a);
				break;
			}
		}
	}
	return argv;
}

int recover_kill_run_qemu(const char *run_dir, const char *run_id)
{
	char path[PATH_MAX], buf[32];
	_cleanup_close_ int fd = -1, pidfd = -1;
	_cleanup_json_ struct json_object *argv = NULL;
	ssize_t n;
	long pid;
	char *end;
	int r;

	snprintf(path, sizeof(path), "%s/%s", run_dir, RUN_DIR_QEMU_PID);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0; /* not a pid file QEMU's launcher wrote: nothing to kill */
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	errno = 0;
	pid = strtol(buf, &end, 10);
	if (errno || end == buf || pid <= 1 || pid > INT_MAX)
		return 0;

	/* open the pidfd first: the process we then check is the one we signal */
	pidfd = proc_pidfd_open((pid_t)pid);
	if (pidfd < 0) {
		unlink(path); /* gone already */
		return 0;
	}
	argv = last_rep_argv(run_dir, (pid_t)pid);
	bool ours = proc_is_run_qemu((pid_t)pid, run_id, argv);
	if (!ours)
		return 0; /* the pid was reused by something else: leave it alone */
	r = proc_pidfd_signal(pidfd, SIGKILL);
	if (r < 0 && r != -ESRCH)
		return r;
	proc_pidfd_wait(pidfd, 5000);
	unlink(path);
	return 1;
}

static void handle_running(struct store *store, struct queue *q, int wait_ms, struct recover_result *res)
{
	char run_dir[PATH_MAX];
	struct sb_error e = {};
	int r;

	if (store_run_dir(store, q->running.id, run_dir, sizeof(run_dir)) < 0)
		return;

	if (q->running.worker_pid > 0) {
		uint64_t start = 0;
		int pidfd = proc_pidfd_open(q->running.worker_pid);

		if (pidfd >= 0 && proc_starttime(q->running.worker_pid, &start) == 0 && start == q->running.worker_start) {
			/* the old worker got SIGHUP when its daemon died and is stopping its run */
			if (proc_pidfd_wait(pidfd, wait_ms) == 0) {
				proc_pidfd_signal(pidfd, SIGKILL);
				proc_pidfd_wait(pidfd, 5000);
				res->killed_worker = 1;
				note(res, "the previous worker (pid %d) of run %s did not stop within %d ms and was killed",
				     (int)q->running.worker_pid, q->running.id, wait_ms);
			}
		}
		if (pidfd >= 0)
			close(pidfd);
	}

	r = recover_kill_run_qemu(run_dir, q->running.id);
	if (r > 0) {
		res->killed_qemu = 1;
		note(res, "killed the QEMU run %s left running", q->running.id);
	} else if (r < 0) {
		note(res, "run %s: could not kill its QEMU: %s", q->running.id, strerror(-r));
	}

	/* the worker marks its run interrupted when it saw its daemon die; else it is done here */
	r = store_end_run_interrupted(run_dir, &e);
	if (r < 0 && r != -ENOENT)
		note(res, "run %s: could not mark it interrupted: %s", q->running.id, e.msg);
	if (r >= 0) {
		_cleanup_json_ struct json_object *report = NULL;
		struct json_object *v;
		char path[PATH_MAX + 16];

		snprintf(res->interrupted, sizeof(res->interrupted), "%s", q->running.id);
		snprintf(res->interrupted_state, sizeof(res->interrupted_state), "unknown");
		snprintf(path, sizeof(path), "%s/%s", run_dir, RUN_DIR_REPORT);
		if (report_read(path, &report, &e) == 0) {
			const char *phase = NULL;
			if (json_object_object_get_ex(report, "error", &v) && v &&
			    json_object_object_get_ex(v, "phase", &v) && json_object_is_type(v, json_type_string))
				phase = json_object_get_string(v);
			json_object_object_get_ex(report, "state", &v);
			snprintf(res->interrupted_state, sizeof(res->interrupted_state), "%s%s%s%s",
				 json_object_get_string(v), phase ? " (" : "", phase ? phase : "", phase ? ")" : "");
		}
	}
}

/*
 * Runs whose report says "running" but whose owner lock nobody holds: the
 * process that executed them is gone without ending them (a worker killed,
 * a report rewrite that failed on a full disk, ...). They are marked failed
 * (interrupted), and a QEMU they left is killed. A run some process still
 * executes (a `snapbench run --local` writing into the store) holds its lock
 * and is left alone.
 */
static void recover_orphans(struct store *store, struct recover_result *res)
{
	char(*running)[REPORT_ID_MAX] = NULL;
	size_t n = 0;
	struct sb_error e = {};

	if (store_ids_in_state(store, REPORT_RUNNING, &running, &n, &e) < 0) {
		note(res, "scanning for runs left running: %s", e.msg);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char run_dir[PATH_MAX];
		int r;

		if (store_run_dir(store, running[i], run_dir, sizeof(run_dir)) < 0 || run_dir_owned(run_dir) != 0)
			continue;
		r = recover_kill_run_qemu(run_dir, running[i]);
		if (r > 0)
			note(res, "killed the QEMU run %s left running", running[i]);
		sb_error_clear(&e);
		if (store_end_run_interrupted(run_dir, &e) < 0)
			note(res, "run %s: could not mark it interrupted: %s", running[i], e.msg);
		else
			note(res, "run %s said running but nothing executed it; marked failed (interrupted)", running[i]);
	}
	free(running);
}

int recover_state(struct store *store, struct queue *q, int wait_ms, struct recover_result *res,
		  struct sb_error *err)
{
	char(*queued)[REPORT_ID_MAX] = NULL;
	size_t n_queued = 0;
	struct sb_error e = {};
	int r;

	*res = (struct recover_result){ 0 };
	if (q->has_running)
		handle_running(store, q, wait_ms, res);
	q->has_running = false;

	recover_orphans(store, res);

	r = knobs_recover(store_runs_dir(store), NULL, &e);
	if (r > 0)
		res->knobs_restored = r;
	else if (r == -EBUSY)
		note(res, "knobs: %s", e.msg);
	else if (r < 0)
		note(res, "knobs: %s", e.msg);

	r = store_ids_in_state(store, REPORT_QUEUED, &queued, &n_queued, err);
	if (r < 0)
		return r;
	/* drop entries whose run is no longer queued */
	for (size_t i = q->n; i-- > 0;) {
		bool found = false;
		for (size_t k = 0; k < n_queued && !found; k++)
			found = !strcmp(q->ids[i], queued[k]);
		if (!found) {
			queue_remove_at(q, i);
			res->dropped++;
		}
	}
	/* append queued runs the file did not know (a crash between writing the run and the queue) */
	for (size_t k = 0; k < n_queued; k++)
		if (queue_find(q, queued[k]) < 0) {
			if (queue_push(q, queued[k]) < 0)
				break;
			res->requeued++;
		}
	free(queued);
	return queue_save(q, err);
}
