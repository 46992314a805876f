// SPDX-License-Identifier: GPL-2.0-or-later
#include "migration.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "macro.h"
#include "qmp.h"

#define CANCEL_WAIT_MS 2000

void migration_init(struct migration *m, struct qmp_client *qmp)
{
	*m = (struct migration){ .qmp = qmp };
}

void migration_started(struct migration *m, uint64_t now)
{
	m->migrate_ns = m->last_ns = now;
	m->last_pages = 0;
	snprintf(m->status, sizeof(m->status), "setup");
}

static bool terminal(enum qmp_migration_status st)
{
	return st == QMP_MIGRATION_COMPLETED || st == QMP_MIGRATION_FAILED || st == QMP_MIGRATION_CANCELLED;
}

/* A status from an event or a query; the first terminal one ends the migration, at when. */
static bool note_status(struct migration *m, enum qmp_migration_status st, const char *name, uint64_t when)
{
	snprintf(m->status, sizeof(m->status), "%s", name);
	if (m->ended || !terminal(st))
		return false;
	m->ended = true;
	m->end_status = st;
	m->end_ns = when;
	return true;
}

void migration_fetch_error(struct migration *m, char *buf, size_t len)
{
	struct qmp_migration_info mi = {};

	buf[0] = '\0';
	if (qmp_query_migrate(m->qmp, &mi, NULL) >= 0 && mi.error_desc)
		snprintf(buf, len, "%s", mi.error_desc);
	qmp_migration_info_clear(&mi);
}

/* The next event named name, already queued: 1, 0 when none is, or the client's error in err. */
static int take_event(struct migration *m, const char *name, struct qmp_event **e, struct sb_error *err)
{
	struct sb_error e2 = {};
	int k = qmp_wait_event(m->qmp, name, 0, e, &e2);

	if (k == -ETIMEDOUT)
		return 0;
	if (k < 0)
		return err ? (*err = e2, k) : k;
	return 1;
}

static int read_passes(struct migration *m, struct sb_error *err)
{
	for (;;) {
		_cleanup_qmp_event_ struct qmp_event *e = NULL;
		int k = take_event(m, "MIGRATION_PASS", &e, err);
		if (k <= 0)
			return k;
		m->pass_began = true;
	}
}

int migration_read_events(struct migration *m, migration_status_fn on_status, void *userdata, struct sb_error *err)
{
	int k;

	if (m->passes) {
		k = read_passes(m, err);
		if (k < 0)
			return k;
	}
	while (!m->ended) {
		_cleanup_qmp_event_ struct qmp_event *e = NULL;
		struct json_object *st;
		enum qmp_migration_status status;

		k = take_event(m, "MIGRATION", &e, err);
		if (k <= 0)
			return k;
		if (!e->data || !json_object_object_get_ex(e->data, "status", &st))
			continue;
		status = qmp_migration_status_from_string(json_object_get_string(st));
		/* the event says how it ended, query-migrate why */
		if (note_status(m, status, json_object_get_string(st), e->recv_mono_ns) && status != QMP_MIGRATION_COMPLETED)
			migration_fetch_error(m, m->error, sizeof(m->error));
		if (on_status) {
			k = on_status(userdata, status, err);
			if (k < 0)
				return k;
		}
	}
	return 0;
}

bool migration_take_pass(struct migration *m)
{
	bool began = m->pass_began;

	m->pass_began = false;
	return began;
}

int migration_query(struct migration *m, struct qmp_migration_info *mi, struct sb_error *err)
{
	uint64_t now;
	int k;

	k = qmp_query_migrate(m->qmp, mi, err);
	if (k < 0)
		return k;
	now = mono_ns();
	m->query_status = mi->status;
	m->query_ns = now;
	if (!note_status(m, mi->status, mi->status_name, now))
		return 0;
	if (mi->status == QMP_MIGRATION_FAILED)
		snprintf(m->error, sizeof(m->error), "%s", mi->error_desc ? mi->error_desc : "");
	/* QEMU's own total time dates a completion better than our query did */
	if (mi->status == QMP_MIGRATION_COMPLETED && mi->total_time_ms > 0 &&
	    m->migrate_ns + (uint64_t)mi->total_time_ms * NSEC_PER_MSEC < now)
		m->end_ns = m->migrate_ns + (uint64_t)mi->total_time_ms * NSEC_PER_MSEC;
	return 0;
}

void migration_row(struct migration *m, const struct qmp_migration_info *mi, uint64_t now, struct report_migration *row)
{
	memset(row, 0, sizeof(*row));
	snprintf(row->status, sizeof(row->status), "%s", mi->status_name);
	row->transferred = mi->ram_transferred > 0 ? (uint64_t)mi->ram_transferred : 0;
	row->remaining = mi->ram_remaining > 0 ? (uint64_t)mi->ram_remaining : 0;
	row->dirty_pages_rate = -1;
	/* QEMU reports RAM figures while the migration is active or completed, not in setup nor once cancelled */
	if (mi->ram_normal < 0 && mi->ram_duplicate < 0)
		return;
	row->pages = (uint64_t)(mi->ram_normal > 0 ? mi->ram_normal : 0) +
		     (uint64_t)(mi->ram_duplicate > 0 ? mi->ram_duplicate : 0);
	if (now > m->last_ns && row->pages >= m->last_pages)
		row->pages_per_s = (double)(row->pages - m->last_pages) * 1e9 / (double)(now - m->last_ns);
	m->last_pages = row->pages;
	m->last_ns = now;
}

double migration_setup_stuck_s(const struct migration *m, unsigned timeout_ms)
{
	uint64_t in_setup = m->query_ns - m->migrate_ns;

	if (m->ended || !m->migrate_ns || m->query_status != QMP_MIGRATION_SETUP || m->query_ns <= m->migrate_ns ||
	    in_setup <= (uint64_t)timeout_ms * NSEC_PER_MSEC)
		return 0;
	return (double)in_setup / 1e9;
}

int migration_resume_source(struct migration *m, const char *what, struct sb_error *err)
{
	int k;

	if (!m->resume_needed)
		return 0;
	k = qmp_cont(m->qmp, err);
	if (k < 0)
		return sb_error_prefix(err, "resuming the source after the %s migration (cont)", what);
	m->resume_needed = false;
	return 0;
}

bool migration_cancel(struct migration *m)
{
	if (!m->cancel_sent)
		m->cancel_sent = qmp_migrate_cancel(m->qmp, NULL) >= 0;
	return m->cancel_sent;
}

void migration_wait_cancelled(struct migration *m)
{
	enum qmp_migration_status last;

	qmp_wait_migration(m->qmp, QMP_MIGRATION_CANCELLED, CANCEL_WAIT_MS, &last, NULL);
}

void migration_stop(struct migration *m)
{
	if (!m->migrate_ns || m->ended || m->cancel_sent || !m->qmp)
		return;
	if (migration_cancel(m))
		migration_wait_cancelled(m);
}
