/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The label index of a results store: which arm labels each run has, kept
 * in STORE/.labels.json beside the run directories, so that selecting runs
 * by label= loads only the reports that have the label instead of parsing
 * every report of the store. An entry is used only while the run's
 * report.json has the size, mtime and inode the entry recorded; a missing,
 * stale or unreadable index only costs the loads it would have saved.
 * compare rewrites it (atomically) after a scan that loaded reports it did
 * not know or found runs gone, when it may write to the store; a store it
 * may not write is scanned in full, as without an index.
 */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "error.h"

struct json_object;
struct store_index;

#define STORE_INDEX_FILE ".labels.json"

/* The store's index, or an empty one when there is none or it does not parse; -ENOMEM only. */
int store_index_open(const char *store, struct store_index **ret);

/* 1 when name's entry holds for st (its report.json's stat), *has telling whether label is among its arms; else 0. */
int store_index_lookup(const struct store_index *ix, const char *name, const struct stat *st, const char *label,
		       bool *has);

/* Records the labels of arms (a report's "arms" array) for name, valid while its report.json has st. */
int store_index_update(struct store_index *ix, const char *name, const struct stat *st, struct json_object *arms);

/*
 * Drops the entries of runs not among names (the store's entries, sorted
 * by strcmp, n of them): runs deleted or moved out of the store.
 */
int store_index_prune(struct store_index *ix, char *const *names, size_t n);

/* Writes the index back when it changed. */
int store_index_save(struct store_index *ix, const char *store, struct sb_error *err);

void store_index_free(struct store_index *ix);
static inline void store_index_freep(struct store_index **ix)
{
	store_index_free(*ix);
}
