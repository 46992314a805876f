/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A live migration's destination on this host: a second QEMU started like
 * the repetition's own (the same vm_config, so the same machine, memory
 * and devices) with -incoming defer, and the local channel between them.
 * The scenarios that migrate (dirty-log, postcopy-restore) share it.
 *
 * The channel is a socketpair: the destination gets one end through getfd
 * and migrate-incoming "fd:NAME", the source the other for its migrate
 * "fd:NAME". Nothing has a path, so no other local user can connect and
 * nothing is left behind. A migration over several connections
 * (postcopy-preempt opens a second one) cannot go over one fd: it gets a
 * unix socket instead, RUN_DIR/mig-XXXXXX/sock, in a directory only QEMU's
 * user may enter, removed with the destination. Where QEMU takes it (8.2+)
 * the address goes in migrate's "channels" argument rather than a uri. The
 * destination's log is RUN_DIR/qemu-TAG-dest.log, its pid file
 * RUN_DIR/MIGRATE_DEST_PID_FILE while it runs.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct vm;
struct vm_config;
struct qmp_migrate_capability;
struct qmp_client;
struct report_dest;

#define MIGRATE_DEST_PID_FILE "qemu-dest.pid"

struct migrate_dest {
	struct vm *vm;          /* the destination QEMU */
	int src_fd;             /* the channel's source end, for the source's migrate; -1 once taken */
	bool incoming;          /* migrate-incoming was accepted */
	bool channels;          /* the addresses go in the channels form */
	char *run_dir;
	const char *user;       /* QEMU's user (spec vm.user), who must reach the socket; NULL: ours */
	char *sock_dir;         /* a unix socket's directory and path, or NULL (a socketpair) */
	char *sock_path;
};

/* How the source reaches the destination. */
struct migrate_dest_channel {
	bool unix_socket;       /* a unix socket (several connections: postcopy-preempt) rather than a socketpair */
	bool channels;          /* migrate's channels argument (QEMU 8.2+) rather than a uri */
};

/*
 * Starts the destination: QEMU as in cfg (qemu_binary overrides cfg's when
 * not NULL), -incoming defer, its own log (tag cfg->tag + "-dest") and pid
 * file, then the migration capabilities caps (the destination needs some of
 * the source's, e.g. postcopy-ram). On failure nothing is left running and
 * err says what QEMU said.
 */
int migrate_dest_start(const struct vm_config *cfg, const char *qemu_binary, const struct qmp_migrate_capability *caps,
		       size_t n_caps, struct migrate_dest **ret, struct sb_error *err);

/*
 * Creates the channel as how says (NULL: a socketpair, uri form) and starts
 * migrate-incoming on the destination's end; d->src_fd is the source's end
 * of a socketpair.
 */
int migrate_dest_listen(struct migrate_dest *d, const struct migrate_dest_channel *how, struct sb_error *err);

/* The source's migrate (src: its QMP) to the channel; the source's end of a socketpair is closed here. */
int migrate_dest_migrate(struct migrate_dest *d, struct qmp_client *src, struct sb_error *err);

/* Has the destination exited? desc gets how, and the tail of its log (as vm_exited()). */
bool migrate_dest_exited(struct migrate_dest *d, char *desc, size_t len);

/*
 * How the destination ended, noted once: while buf is "" and d has exited,
 * buf gets migrate_dest_exited()'s description ("exited" if that is empty).
 * Returns buf ("" while it runs).
 */
const char *migrate_dest_note_exit(struct migrate_dest *d, char *buf, size_t len);

/*
 * The same after the migration failed: a destination that died breaks the
 * stream before its exit can be reaped (a killed QEMU closes its sockets
 * while its memory is still being torn down), so wait up to wait_ms for
 * the exit before saying it is still running.
 */
const char *migrate_dest_note_exit_wait(struct migrate_dest *d, char *buf, size_t len, int wait_ms);

/*
 * The destination as the report keeps it (struct report_dest): its pid,
 * how it ended (exit, "" while it ran or was stopped) and its log's path
 * (*log: kept when NULL, and freed to NULL when last, the scenario's
 * cleanup having run).
 */
void migrate_dest_record(struct report_dest *out, int pid, const char *exit, char **log, bool last);

/* Stops it within timeout_ms: QMP quit, then SIGKILL; always reaped. */
void migrate_dest_stop(struct migrate_dest *d, int timeout_ms);

/* Stops (at once) and frees; NULL is fine. */
void migrate_dest_free(struct migrate_dest *d);
