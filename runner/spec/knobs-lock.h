/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside knobs (knobs.h): the host-wide knob lock, KNOBS_HOST_LOCK under
 * the root, with the record of its holder (pid, run id, state directory)
 * written in it, and the state directory's lock, STATE/KNOBS_LOCK. knobs.c
 * (the journal, the values, recovery) takes them through these; this unit
 * calls nothing of knobs.c.
 */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"
#include "knobs.h"

/* the lock record and the journal are an object of objects at most: {"knobs": [{...}]} */
#define KNOBS_JSON_MAX_DEPTH 8

/*
 * Opens the host-wide lock file (creating it and its directory when
 * create); path gets its name. -ENOENT without create when there is none.
 */
int knobs_host_lock_open(const char *root, bool create, int *ret, char *path, size_t plen, struct sb_error *err);

/*
 * Takes the host-wide lock, waiting as o says. *stale gets the record found
 * once it is ours (*had_stale): a holder that died without ending in order.
 */
int knobs_host_lock_take(const struct knobs_options *o, int *ret, struct knobs_holder *stale, bool *had_stale,
			 struct sb_error *err);

/* The record in the host-wide lock file: 1 with one, 0 when empty, -EBADMSG when unreadable. */
int knobs_holder_read(int fd, struct knobs_holder *h);
/* One pwrite, then the length: a reader sees the old record or the new one, never an empty file in between. */
int knobs_holder_write(int fd, const char *run_id, const char *state_dir);
/* A holder that ends in order leaves an empty file: a record found by the next holder is a dead run's. */
void knobs_holder_clear(int fd);
/* "pid N, run ID, state directory DIR", for messages. */
void knobs_holder_describe(const struct knobs_holder *h, char *buf, size_t len);
bool knobs_pid_alive(pid_t pid);

/* Only we (or root, for a directory) may be able to replace what the lock, the record or the journal says. */
bool knobs_owned_safely(const struct stat *st, bool dir);

/* Takes STATE/KNOBS_LOCK (creating the directory); -EBUSY when another holds it and !wait. */
int knobs_lock_state_dir(const char *state_dir, bool wait, int *ret, struct sb_error *err);
