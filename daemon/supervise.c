// SPDX-License-Identifier: GPL-2.0-or-later
/* Starting, signalling and reaping snapbench-worker. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "macro.h"
#include "proc.h"
#include "run-dir.h"
#include "spawn-program.h"
#include "store.h"
#include "supervise.h"

#define WORKER_NAME "snapbench-worker"
#define WORKER_BUILD_DIR "libexec/worker"
#define WORKER_ENV "SNAPBENCH_WORKER"
#define CHILD_PROGRESS_FD 3

int worker_find_binary(char **ret, struct sb_error *err)
{
	const char *env = getenv(WORKER_ENV);
	char exe[PATH_MAX], cand[PATH_MAX + 64];
	ssize_t n;

	if (env && *env) {
		if (access(env, X_OK) < 0)
			return sb_error_set(err, -errno, "$%s=%s: %s; point it at the snapbench-worker binary",
					    WORKER_ENV, env, strerror(errno));
		*ret = strdup(env);
		return *ret ? 0 : sb_error_set(err, -ENOMEM, "out of memory");
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(cand, sizeof(cand), "%s/%s", exe, WORKER_NAME);
			if (access(cand, X_OK) == 0) {
				*ret = strdup(cand);
				return *ret ? 0 : sb_error_set(err, -ENOMEM, "out of memory");
			}
			/* BUILD/daemon/snapbenchd: the worker of that build, BUILD/libexec/worker/ */
			snprintf(cand, sizeof(cand), "%s/../build.ninja", exe);
			if (access(cand, F_OK) == 0) {
				snprintf(cand, sizeof(cand), "%s/../%s/%s", exe, WORKER_BUILD_DIR, WORKER_NAME);
				if (access(cand, X_OK) == 0) {
					*ret = realpath(cand, NULL);
					return *ret ? 0 : sb_error_set(err, -errno, "%s: %s", cand, strerror(errno));
				}
			}
		}
	}
	snprintf(cand, sizeof(cand), "%s/%s", LIBEXECDIR, WORKER_NAME);
	if (access(cand, X_OK) < 0)
		return sb_error_set(err, -errno, "the run worker %s: %s; install snapbench (meson install) or set $%s",
				    cand, strerror(errno), WORKER_ENV);
	*ret = strdup(cand);
	return *ret ? 0 : sb_error_set(err, -ENOMEM, "out of memory");
}

int worker_start(const struct worker_args *a, struct worker_proc *w, struct sb_error *err)
{
	char log_path[PATH_MAX], parent_s[32];
	_cleanup_close_ int log_fd = -1;
	int pipefd[2];
	pid_t parent = getpid(), pid;
	int r;

	*w = (struct worker_proc){ .pidfd = -1, .progress_fd = -1 };
	snprintf(log_path, sizeof(log_path), "%s/%s", a->run_dir, RUN_DIR_WORKER_LOG);
	log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (log_fd < 0)
		return sb_error_set(err, -errno, "worker log %s: %s", log_path, strerror(errno));
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return sb_error_set(err, -errno, "pipe: %s", strerror(errno));

	snprintf(parent_s, sizeof(parent_s), "%d", (int)parent);
	char progress_s[] = "3";
	char *argv[16];
	size_t n = 0;
	argv[n++] = (char *)a->worker_path;
	argv[n++] = (char *)"--run-dir";
	argv[n++] = (char *)a->run_dir;
	argv[n++] = (char *)"--knobs-dir";
	argv[n++] = (char *)a->knobs_dir;
	argv[n++] = (char *)"--progress-fd";
	argv[n++] = progress_s;
	argv[n++] = (char *)"--parent-pid";
	argv[n++] = parent_s;
	if (a->qemu) {
		argv[n++] = (char *)"--qemu";
		argv[n++] = (char *)a->qemu;
	}
	argv[n] = NULL;

	const struct spawn_fd fds[] = { { SPAWN_DEV_NULL, 0 }, { log_fd, 1 }, { log_fd, 2 }, { pipefd[1], CHILD_PROGRESS_FD } };
	/* its own process group: a terminal's ^C reaches the daemon, which cancels the run in order */
	r = spawn_start(&(struct spawn_options){ .argv = argv, .path = a->worker_path, .fds = fds,
						 .n_fds = ARRAY_SIZE(fds), .new_process_group = true,
						 .parent_death_signal = SIGHUP, .reset_signals = true },
			&pid, err);
	close(pipefd[1]);
	if (r < 0) {
		close(pipefd[0]);
		return sb_error_prefix(err, "the run worker");
	}

	w->pid = pid;
	w->progress_fd = pipefd[0];
	fcntl(w->progress_fd, F_SETFL, O_NONBLOCK);
	/* our own unreaped child: its pid cannot be reused before we wait for it */
	w->pidfd = proc_pidfd_open(pid);
	if (w->pidfd < 0) {
		r = w->pidfd;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		worker_close(w);
		return sb_error_set(err, r, "pidfd_open: %s (snapbenchd needs Linux 5.3 or later)", strerror(-r));
	}
	if (proc_starttime(pid, &w->start_ticks) < 0)
		w->start_ticks = 0;
	return 0;
}

int worker_signal(struct worker_proc *w, int sig)
{
	if (w->pidfd < 0)
		return -ESRCH;
	return proc_pidfd_signal(w->pidfd, sig);
}

int worker_reap(struct worker_proc *w, int *wait_status)
{
	int status;
	pid_t p;

	if (w->pid <= 0)
		return -ECHILD;
	do
		p = waitpid(w->pid, &status, WNOHANG);
	while (p < 0 && errno == EINTR);
	if (p < 0)
		return -errno;
	if (p == 0)
		return 0;
	*wait_status = status;
	w->pid = 0;
	if (w->pidfd >= 0) {
		close(w->pidfd);
		w->pidfd = -1;
	}
	return 1;
}

void worker_close(struct worker_proc *w)
{
	if (w->pidfd >= 0)
		close(w->pidfd);
	if (w->progress_fd >= 0)
		close(w->progress_fd);
	w->pidfd = w->progress_fd = -1;
}

void worker_describe_status(int st, char *buf, size_t len)
{
	spawn_describe_status(st, buf, len);
}
