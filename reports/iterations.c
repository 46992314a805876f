// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A live migration's passes (dirty-log), derived from the timeline of its
 * window: each row of the migration window carries QEMU's dirty-sync-count
 * and the pages sent so far, as sampled at the row's end. The run engine
 * takes a sample as soon as QEMU announces a new pass (MIGRATION_PASS), so
 * rows end at pass boundaries to within one poll of the window (~50 ms).
 *
 * A row belongs to the pass under way at its start: the count its
 * previous row ended with (the first row of the window: pass 1, the bulk
 * pass QEMU starts with its first sync). Deriving the passes from the rows
 * (rather than storing them) keeps them consistent with the timeline, and
 * a kernel arm's imported repetition gets them for free.
 */
#include <errno.h>
#include <stdlib.h>

#include "report.h"

static int push(struct report_iteration **v, size_t *n, size_t *cap, const struct report_iteration *it)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct report_iteration *nv = realloc(*v, c * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = *it;
	return 0;
}

int report_rep_iterations(const struct report_rep *rep, struct report_iteration **ret, size_t *n_ret)
{
	struct report_iteration *v = NULL, cur = {};
	size_t n = 0, cap = 0;
	uint64_t pass = 0, pages = 0, pages_at_start = 0;
	/* remaining bytes at the last sample of the current pass */
	uint64_t remaining = 0;
	uint64_t last_remaining = 0; /* remaining at the last sample of the last pass pushed */
	bool open = false, any_pages = false;
	int k;

	*ret = NULL;
	*n_ret = 0;
	for (size_t i = 0; i < rep->n_rows; i++) {
		const struct report_row *row = &rep->rows[i];
		uint64_t row_pass = pass ? pass : 1;

		if (row->window != REPORT_WINDOW_MIGRATION)
			continue;
		if (open && cur.pass != row_pass) {
			cur.pages_sent = any_pages ? (int64_t)(pages - pages_at_start) : -1;
			cur.complete = true;
			if ((k = push(&v, &n, &cap, &cur)) < 0)
				goto fail;
			pages_at_start = pages;
			open = false;
		}
		if (!open) {
			cur = (struct report_iteration){
				.pass = row_pass,
				.start_s = row->t_s - row->dt_s,
				.first_row = i,
				.pages_sent = -1,
				.dirty_pages = -1,
			};
			open = true;
		}
		cur.n_rows = i - cur.first_row + 1;
		cur.duration_s = row->t_s - cur.start_s;
		if (row->has_migration && row->migration.precopy) {
			pass = row->migration.dirty_sync_count;
			pages = row->migration.pages;
			remaining = row->migration.remaining;
			any_pages = true;
		}
	}
	if (open) {
		cur.pages_sent = any_pages ? (int64_t)(pages - pages_at_start) : -1;
		cur.complete = false;
		last_remaining = remaining;
		if ((k = push(&v, &n, &cap, &cur)) < 0)
			goto fail;
	}
	/*
	 * What pass i left dirty is what pass i + 1 sent, plus what it still
	 * had queued when it ended (QEMU's remaining at its last sample: 0 for
	 * a pass that ran to its end, the unsent rest when the migration was
	 * cancelled in it). The last pass's own dirty set was never collected.
	 */
	for (size_t i = 0; i + 1 < n; i++) {
		const struct report_iteration *next = &v[i + 1];
		uint64_t queued = 0;

		if (next->pages_sent < 0)
			continue;
		if (i + 2 == n && rep->migration.page_size)
			queued = last_remaining / rep->migration.page_size;
		v[i].dirty_pages = next->pages_sent + (int64_t)queued;
	}
	*ret = v;
	*n_ret = n;
	return 0;
fail:
	free(v);
	return k;
}
