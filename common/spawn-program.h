/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Starting a program: fork and exec of an argv vector, never through a
 * shell. The caller says which of its fds the child gets and at which
 * numbers; every other fd above 2 is closed in the child. What the child
 * does between fork and exec (new session or process group, parent-death
 * signal, signals reset, umask, fds, cwd) is reported back through an
 * O_CLOEXEC pipe when a step fails, so the caller's error names the
 * program, the step and its errno instead of an exit status 127. libc only
 * (common_dep).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* As spawn_fd.fd: /dev/null, opened read-write in the child. */
#define SPAWN_DEV_NULL (-2)

/* The most fds one child gets (the child has no heap to size them by). */
#define SPAWN_FDS_MAX 16

struct spawn_fd {
	int fd;     /* ours (close-on-exec or not), or SPAWN_DEV_NULL */
	int target; /* its number in the child; one fd may go to several targets */
};

struct spawn_options {
	char *const *argv;          /* argv[0] names the program in messages */
	const char *path;           /* the file executed; NULL: argv[0], searched in PATH without a slash */
	char *const *envp;          /* NULL: the caller's environment */
	const char *cwd;            /* NULL: the caller's */
	const struct spawn_fd *fds; /* 0, 1 and 2 are inherited unless listed here */
	size_t n_fds;
	bool new_session;           /* setsid(): no controlling terminal */
	bool new_process_group;     /* setpgid(0, 0): a terminal's ^C reaches the caller, not the child */
	int parent_death_signal;    /* PR_SET_PDEATHSIG; 0: none. The child exits at once when the caller
				     * died before it was set */
	bool reset_signals;         /* an empty signal mask and every disposition SIG_DFL */
	bool thp_disable;           /* PR_SET_THP_DISABLE, which exec keeps */
	mode_t umask;               /* 0: the caller's (no child here wants 0) */
};

/*
 * Starts o->argv and returns once it executes (the error pipe closed) or
 * failed to. 0 with *ret_pid set, the caller's to reap; or a negative errno
 * with err saying "cannot start PROGRAM: STEP: REASON" (STEP is "not found
 * in PATH", "chdir to DIR", "dup2 onto fd N", "exec", ...), the
 * child already reaped.
 */
int spawn_start(const struct spawn_options *o, pid_t *ret_pid, struct sb_error *err);

/* waitpid() to the end, EINTR retried: 0 with *ret_status set, or -errno. */
int spawn_wait(pid_t pid, int *ret_status);

/* spawn_start() then spawn_wait(): 0 with the wait status in *ret_status. */
int spawn_run(const struct spawn_options *o, int *ret_status, struct sb_error *err);

/*
 * The executable file name stands for: name itself when it has a slash
 * (-errno of access(X_OK) when it cannot be executed), else the first of
 * $PATH's directories (a default when unset or empty) that holds it
 * executable; -ENOENT when none does, -EINVAL for an empty name. Sets no
 * message: each caller names the package to install. *ret is malloc'ed.
 */
int spawn_find_program(const char *name, char **ret);

/* "exit status 1" / "killed by signal 9 (Killed)" / "wait status 0x..." */
void spawn_describe_status(int wait_status, char *buf, size_t len);
