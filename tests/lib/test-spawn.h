/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A program a test runs (snapbench, mostly) with its stdout read line by
 * line as it prints, so a test can act between two of its outputs (pause
 * the guest after the second refresh of top, say); stderr is the test's.
 * No shell: argv is executed as it is. A failure to start fails the test.
 */
#pragma once

#include <stdio.h>
#include <sys/types.h>

struct test_child {
	pid_t pid;
	FILE *out; /* its stdout */
};

void test_spawn(struct test_child *c, char *const argv[]);

/* Its next line without the newline (malloc'ed), or NULL at the end of its output. */
char *test_child_line(struct test_child *c);

/* Reads the rest of its output away, reaps it; its exit code, or 128 + the signal that killed it. */
int test_child_wait(struct test_child *c);

/* Runs argv to its end: its exit code as test_child_wait() gives it, and all its stdout in *out (malloc'ed). */
int test_run(char *const argv[], char **out);
