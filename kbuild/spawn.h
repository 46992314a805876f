/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One program of a kernel build (make, patch, cp, git) run with an argv
 * vector, never through a shell: its stdin is /dev/null, its stdout and
 * stderr go to the build's log, and each complete line it prints is also
 * handed to a callback (the progress a terminal shows). Its environment is
 * a clean one (PATH, HOME, TMPDIR, LC_ALL=C) plus env_add: make takes its
 * environment as variables, and only what the build keys may reach it
 * (env.h). The fork and exec are common/spawn-program.h's.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* A line the program printed, without its newline. */
typedef void (*kbuild_line_fn)(void *userdata, const char *line);

struct kbuild_spawn {
	char *const *argv;      /* argv[0] is looked up in PATH */
	const char *cwd;        /* NULL: the caller's */
	int log_fd;             /* the program's output is appended here; -1: dropped */
	kbuild_line_fn on_line; /* NULL: no callback */
	void *userdata;
	char *const *env_add;   /* "NAME=VALUE" set for the program on top of the clean environment; NULL: none */
};

/*
 * Runs s->argv to its end. Returns its exit status (0..255), or a negative
 * errno with err set when it could not be run: -ENOENT naming the program
 * and the package to install when it is not in PATH, the step that failed
 * when it could not be started (a cwd that is not there: "chdir to DIR"),
 * or when it was killed by a signal (-EINTR, naming the signal). The program stays in the
 * caller's process group, so a terminal's Ctrl-C reaches make and its
 * compilers too, and gets SIGTERM when the caller dies (PR_SET_PDEATHSIG).
 */
int kbuild_spawn(const struct kbuild_spawn *s, struct sb_error *err);

/* argv as one line for a log or a message ("make -C DIR -j2 bzImage"), malloc'ed; NULL on ENOMEM. */
char *kbuild_argv_text(char *const *argv);
