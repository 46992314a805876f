/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One QEMU migration as the migrating scenarios follow it (background
 * snapshot, dirty-log, postcopy-restore): its status, from the MIGRATION
 * events or from query-migrate's answers, whichever comes first (an event
 * can be lost, the status cannot); the end, when and how, with QEMU's
 * error; query-migrate's figures for a timeline row; the "setup" that
 * lasts too long; the cancel at cleanup. The scenario keeps what is its
 * own (its phases, its messages, its destination): as libvirt keeps a
 * migration's job in one place, whatever started it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "qmp-commands.h"
#include "report.h"

struct qmp_client;

struct migration {
	struct qmp_client *qmp;                 /* the source's monitor */
	uint64_t migrate_ns;                    /* mono_ns() when migrate was sent; 0: not yet */
	char status[32];                        /* the last status QEMU gave, by event or query */
	enum qmp_migration_status query_status; /* query-migrate's last answer ... */
	uint64_t query_ns;                      /* ... and when */
	bool ended;                             /* reached completed, failed or cancelled */
	enum qmp_migration_status end_status;   /* which, once ended */
	uint64_t end_ns;                        /* and when: the event's arrival, or QEMU's total time after migrate */
	char error[SB_ERROR_MAX];               /* QEMU's error-desc at an end other than completed, or "" */
	bool passes;                            /* take MIGRATION_PASS events (the "events" capability sends them) */
	bool pass_began;                        /* one came since the last migration_take_pass() */
	bool cancel_sent;
	bool resume_needed;                     /* completed as asked: the source, paused (postmigrate), runs on after it */
	uint64_t last_pages, last_ns;           /* the previous row's pages, for pages_per_s */
};

/* Follows the migration qmp's QEMU is asked to start; nothing is sent. */
void migration_init(struct migration *m, struct qmp_client *qmp);

/* migrate was sent at now: the status is "setup" and the figures count from here. */
void migration_started(struct migration *m, uint64_t now);

typedef int (*migration_status_fn)(void *userdata, enum qmp_migration_status st, struct sb_error *err);

/*
 * Takes the MIGRATION events waiting (and MIGRATION_PASS ones with
 * m->passes) until the migration ended or none is left; on_status (may be
 * NULL) is told each status an event gave, before the next is taken, and
 * may stop the reading with a negative errno and err filled, which is
 * returned. Returns 0, or the QMP client's error (the connection lost)
 * with err filled.
 */
int migration_read_events(struct migration *m, migration_status_fn on_status, void *userdata, struct sb_error *err);

/* A MIGRATION_PASS event came since the last call (a new pass: a row should end here). */
bool migration_take_pass(struct migration *m);

/*
 * query-migrate, noted (status, a terminal status ends the migration even
 * without its event); *mi is QEMU's answer, for the caller to clear with
 * qmp_migration_info_clear().
 */
int migration_query(struct migration *m, struct qmp_migration_info *mi, struct sb_error *err);

/*
 * The figures every migrating scenario's timeline row has, from query-migrate's
 * answer mi at now: status, bytes sent and left, pages per second since the
 * last row that had pages (ram.normal + ram.duplicate). QEMU's dirty rate is
 * the scenario's to set: -1 here.
 */
void migration_row(struct migration *m, const struct qmp_migration_info *mi, uint64_t now, struct report_migration *row);

/* query-migrate's error-desc now ("" when it has none, or does not answer). */
void migration_fetch_error(struct migration *m, char *buf, size_t len);

/*
 * How long query-migrate has said "setup" since migrate, in seconds, when
 * that is longer than timeout_ms; else 0.
 */
double migration_setup_stuck_s(const struct migration *m, unsigned timeout_ms);

/*
 * With m->resume_needed, cont: the source runs the guest again for the
 * post window (what names the migration in the error). Once.
 */
int migration_resume_source(struct migration *m, const char *what, struct sb_error *err);

/* migrate_cancel, once (a second call sends nothing); whether it was sent. */
bool migration_cancel(struct migration *m);

/* After migration_cancel(): waits up to 2 s for QEMU to say "cancelled". */
void migration_wait_cancelled(struct migration *m);

/*
 * At a scenario's cleanup: a migration started and not ended is cancelled
 * and waited for (bounded); one already ended, never started, or whose
 * cancel was sent already, is left.
 */
void migration_stop(struct migration *m);
