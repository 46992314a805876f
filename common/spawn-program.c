// SPDX-License-Identifier: GPL-2.0-or-later
#include "spawn-program.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"

extern char **environ;

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

/* The step of the child that failed, as the error pipe carries it. */
enum spawn_step {
	STEP_SETSID,
	STEP_SETPGID,
	STEP_PDEATHSIG,
	STEP_THP_DISABLE,
	STEP_SIGNALS,
	STEP_DEV_NULL,
	STEP_MOVE_FD,
	STEP_DUP2,
	STEP_CHDIR,
	STEP_EXEC,
};

struct spawn_report {
	int step;  /* enum spawn_step */
	int error; /* errno */
	int arg;   /* the target fd of STEP_DUP2 */
};

int spawn_find_program(const char *name, char **ret)
{
	const char *path = getenv("PATH");

	if (!name || !*name)
		return -EINVAL;
	if (strchr(name, '/')) {
		if (access(name, X_OK) < 0)
			return -errno;
		*ret = strdup(name);
		return *ret ? 0 : -ENOMEM;
	}
	if (!path || !*path)
		path = DEFAULT_PATH;
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		char *cand = NULL;

		/* an empty entry would mean the current directory: not a place to run programs from */
		if (n > 0) {
			if (asprintf(&cand, "%.*s/%s", (int)n, p, name) < 0)
				return -ENOMEM;
			if (access(cand, X_OK) == 0) {
				*ret = cand;
				return 0;
			}
			free(cand);
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return -ENOENT;
}

static _Noreturn void child_fail(int errpipe, enum spawn_step step, int arg)
{
	struct spawn_report rep = { .step = step, .error = errno, .arg = arg };

	if (write(errpipe, &rep, sizeof(rep)) < 0) {
		/* the parent reads an exit status 127 without a reason */
	}
	_exit(127);
}

/* Empty mask, default dispositions: what a program expects from exec. */
static int child_reset_signals(void)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;

	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		return -1;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)sigaction(sig, &dfl, NULL); /* the numbers glibc reserves refuse, harmlessly */
	return 0;
}

/*
 * Puts o->fds at their targets and closes every other fd above 2 but the
 * error pipe, which is close-on-exec. Each fd (and the pipe) first moves
 * above every target, so that no dup2() overwrites an fd still to be placed.
 * Returns the error pipe's new number.
 */
static int child_place_fds(const struct spawn_options *o, int errpipe)
{
	int moved[SPAWN_FDS_MAX], base = 3, null_fd = -1;

	for (size_t i = 0; i < o->n_fds; i++)
		if (o->fds[i].target >= base)
			base = o->fds[i].target + 1;
	errpipe = fcntl(errpipe, F_DUPFD_CLOEXEC, base);
	if (errpipe < 0)
		_exit(127); /* no way left to tell */
	for (size_t i = 0; i < o->n_fds; i++) {
		int fd = o->fds[i].fd;

		if (fd == SPAWN_DEV_NULL) {
			if (null_fd < 0) {
				int n = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
				if (n < 0)
					child_fail(errpipe, STEP_DEV_NULL, 0);
				null_fd = fcntl(n, F_DUPFD_CLOEXEC, base);
				if (null_fd < 0)
					child_fail(errpipe, STEP_MOVE_FD, 0);
			}
			moved[i] = null_fd;
		} else {
			moved[i] = fcntl(fd, F_DUPFD_CLOEXEC, base);
			if (moved[i] < 0)
				child_fail(errpipe, STEP_MOVE_FD, fd);
		}
	}
	/* dup2() leaves the target without close-on-exec: it is what the program gets */
	for (size_t i = 0; i < o->n_fds; i++)
		if (dup2(moved[i], o->fds[i].target) < 0)
			child_fail(errpipe, STEP_DUP2, o->fds[i].target);
	for (int fd = 3; fd < base; fd++) {
		bool wanted = false;
		for (size_t i = 0; i < o->n_fds && !wanted; i++)
			wanted = o->fds[i].target == fd;
		if (!wanted)
			close(fd);
	}
	if (errpipe > base)
		close_range((unsigned)base, (unsigned)errpipe - 1, 0);
	close_range((unsigned)errpipe + 1, ~0U, 0);
	return errpipe;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static _Noreturn void child(const struct spawn_options *o, const char *path, int errpipe, pid_t parent)
{
	if (o->new_session && setsid() < 0)
		child_fail(errpipe, STEP_SETSID, 0);
	if (!o->new_session && o->new_process_group && setpgid(0, 0) < 0)
		child_fail(errpipe, STEP_SETPGID, 0);
	if (o->parent_death_signal) {
		if (prctl(PR_SET_PDEATHSIG, o->parent_death_signal) < 0)
			child_fail(errpipe, STEP_PDEATHSIG, 0);
		if (getppid() != parent)
			_exit(127); /* the caller died before the signal was armed: nobody is left to tell */
	}
	if (o->thp_disable && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) < 0)
		child_fail(errpipe, STEP_THP_DISABLE, 0);
	if (o->reset_signals && child_reset_signals() < 0)
		child_fail(errpipe, STEP_SIGNALS, 0);
	if (o->umask)
		umask(o->umask);
	errpipe = child_place_fds(o, errpipe);
	if (o->cwd && chdir(o->cwd) < 0)
		child_fail(errpipe, STEP_CHDIR, 0);
	execve(path, o->argv, o->envp ? o->envp : environ);
	child_fail(errpipe, STEP_EXEC, 0);
}

/* The step that failed, for the message: "chdir to /x", "dup2 onto fd 3". */
static void describe_step(const struct spawn_options *o, const char *path, const struct spawn_report *rep, char *buf,
			  size_t len)
{
	switch (rep->step) {
	case STEP_SETSID:
		snprintf(buf, len, "setsid");
		break;
	case STEP_SETPGID:
		snprintf(buf, len, "setpgid");
		break;
	case STEP_PDEATHSIG:
		snprintf(buf, len, "prctl(PR_SET_PDEATHSIG)");
		break;
	case STEP_THP_DISABLE:
		snprintf(buf, len, "prctl(PR_SET_THP_DISABLE)");
		break;
	case STEP_SIGNALS:
		snprintf(buf, len, "resetting the signal mask");
		break;
	case STEP_DEV_NULL:
		snprintf(buf, len, "opening /dev/null");
		break;
	case STEP_MOVE_FD:
		snprintf(buf, len, "duplicating fd %d", rep->arg);
		break;
	case STEP_DUP2:
		snprintf(buf, len, "dup2 onto fd %d", rep->arg);
		break;
	case STEP_CHDIR:
		snprintf(buf, len, "chdir to %s", o->cwd);
		break;
	case STEP_EXEC:
		/* the path only when the message has not named it already */
		snprintf(buf, len, "exec%s%s", strcmp(path, o->argv[0]) ? " " : "", strcmp(path, o->argv[0]) ? path : "");
		break;
	default:
		snprintf(buf, len, "step %d", rep->step);
	}
}

/* Reads the child's report: 1 when a step failed (*rep set), 0 once exec closed the pipe. */
static int read_report(int fd, struct spawn_report *rep)
{
	size_t got = 0;

	while (got < sizeof(*rep)) {
		ssize_t n = read(fd, (char *)rep + got, sizeof(*rep) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got == sizeof(*rep);
}

int spawn_start(const struct spawn_options *o, pid_t *ret_pid, struct sb_error *err)
{
	_cleanup_free_ char *found = NULL;
	const char *name = o->argv && o->argv[0] ? o->argv[0] : "(no program)";
	const char *path = o->path;
	struct spawn_report rep;
	char step[512];
	int errpipe[2], r, status;
	pid_t pid, parent = getpid();

	if (!o->argv || !o->argv[0])
		return sb_error_set(err, -EINVAL, "cannot start a program: empty argv");
	if (o->n_fds > SPAWN_FDS_MAX)
		return sb_error_set(err, -E2BIG, "cannot start %s: %zu fds to pass, at most %d", name, o->n_fds,
				    SPAWN_FDS_MAX);
	if (!path) {
		r = spawn_find_program(name, &found);
		if (r == -ENOENT && !strchr(name, '/'))
			return sb_error_set(err, r, "cannot start %s: not found in PATH", name);
		if (r < 0)
			return sb_error_set(err, r, "cannot start %s: %s", name, strerror(-r));
		path = found;
	}
	if (pipe2(errpipe, O_CLOEXEC) < 0)
		return sb_error_set(err, -errno, "cannot start %s: pipe: %s", name, strerror(errno));
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(errpipe[0]);
		close(errpipe[1]);
		return sb_error_set(err, r, "cannot start %s: fork: %s", name, strerror(-r));
	}
	if (pid == 0)
		child(o, path, errpipe[1], parent);
	close(errpipe[1]);
	r = read_report(errpipe[0], &rep);
	close(errpipe[0]);
	if (r == 0) {
		*ret_pid = pid;
		return 0;
	}
	(void)spawn_wait(pid, &status);
	describe_step(o, path, &rep, step, sizeof(step));
	return sb_error_set(err, rep.error > 0 ? -rep.error : -EIO, "cannot start %s: %s: %s", name, step,
			    strerror(rep.error));
}

int spawn_wait(pid_t pid, int *ret_status)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	*ret_status = status;
	return 0;
}

int spawn_run(const struct spawn_options *o, int *ret_status, struct sb_error *err)
{
	pid_t pid;
	int r = spawn_start(o, &pid, err);

	if (r < 0)
		return r;
	r = spawn_wait(pid, ret_status);
	return r < 0 ? sb_error_set(err, r, "waitpid %s: %s", o->argv[0], strerror(-r)) : 0;
}

void spawn_describe_status(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "wait status 0x%x", st);
}
