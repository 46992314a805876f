/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Temporary directories and tmpfs mounts for tests, removed at exit (also
 * after a failed CHECK, which exits), and functions run at exit before they
 * go (e.g. stopping a process that writes there). Each process undoes only
 * what it made: a forked child that exits leaves its parent's in place.
 */
#pragma once

/* A fresh /tmp/snapbench-test-NAME-XXXXXX, removed with everything in it at exit. */
const char *test_tmpdir(const char *name);

/*
 * A tmpfs of size (mount's size=, "16m") on a fresh temp directory, unmounted
 * at exit. Skips (77) when this machine refuses to mount one.
 */
const char *test_tmpfs(const char *name, const char *size);

/*
 * Registers the removal at exit now (the first test_tmpdir() or
 * test_at_exit() does otherwise): atexit() functions registered later run
 * before it, while the directories still exist.
 */
void test_tmp_register(void);

/* Registers fn, run at exit (the last registered first) before the mounts and directories go. */
void test_at_exit(void (*fn)(void));

/* Removes path and everything under it (not crossing into other mounts); 0 or -errno. */
int test_rm_rf(const char *path);
