// SPDX-License-Identifier: GPL-2.0-or-later
/* A live migration's destination QEMU on this host (migrate-dest.h). */
#include "migrate-dest.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "macro.h"
#include "qmp-commands.h"
#include "qmp.h"
#include "vm.h"

#define INCOMING_FDNAME "sbincoming"

int migrate_dest_start(const struct vm_config *cfg, const char *qemu_binary, const struct qmp_migrate_capability *caps,
		       size_t n_caps, struct migrate_dest **ret, struct sb_error *err)
{
	struct migrate_dest *d;
	struct vm_config dc = *cfg;
	char tag[64], name[160];
	int k;

	snprintf(tag, sizeof(tag), "%s-dest", cfg->tag ? cfg->tag : "vm");
	snprintf(name, sizeof(name), "%s-dest", cfg->name ? cfg->name : "snapbench");
	dc.tag = tag;
	dc.name = name;
	dc.incoming = "defer";
	dc.pid_file = MIGRATE_DEST_PID_FILE;
	if (qemu_binary)
		dc.qemu_binary = qemu_binary;
	d = calloc(1, sizeof(*d));
	if (!d)
		return sb_error_set(err, -ENOMEM, "out of memory");
	d->src_fd = -1;
	k = vm_start(&dc, &d->vm, err);
	if (k < 0) {
		free(d);
		return sb_error_prefix(err, "the migration's destination QEMU did not start");
	}
	if (n_caps) {
		k = qmp_migrate_set_capabilities(d->vm->qmp, caps, n_caps, err);
		if (k < 0) {
			migrate_dest_free(d);
			return sb_error_prefix(err, "the migration's destination QEMU refused its capabilities");
		}
	}
	*ret = d;
	return 0;
}

int migrate_dest_listen(struct migrate_dest *d, struct sb_error *err)
{
	int sv[2];
	int k;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return sb_error_set(err, -errno, "cannot create the migration's channel: %s", strerror(errno));
	k = qmp_migrate_incoming_fd(d->vm->qmp, sv[1], INCOMING_FDNAME, err);
	close(sv[1]); /* QEMU holds its own copy, or refused it */
	if (k < 0) {
		close(sv[0]);
		return sb_error_prefix(err, "the migration's destination QEMU (pid %d) refused migrate-incoming", d->vm->pid);
	}
	d->incoming = true;
	if (d->src_fd >= 0)
		close(d->src_fd);
	d->src_fd = sv[0];
	return 0;
}

bool migrate_dest_exited(struct migrate_dest *d, char *desc, size_t len)
{
	return d && d->vm && vm_exited(d->vm, desc, len);
}

const char *migrate_dest_note_exit(struct migrate_dest *d, char *buf, size_t len)
{
	if (!*buf && migrate_dest_exited(d, buf, len) && !*buf)
		snprintf(buf, len, "exited");
	return buf;
}

const char *migrate_dest_note_exit_wait(struct migrate_dest *d, char *buf, size_t len, int wait_ms)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	uint64_t deadline = mono_ns() + (uint64_t)wait_ms * NSEC_PER_MSEC;

	while (!*migrate_dest_note_exit(d, buf, len) && d && d->vm && mono_ns() < deadline)
		nanosleep(&ts, NULL);
	return buf;
}

void migrate_dest_stop(struct migrate_dest *d, int timeout_ms)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	uint64_t deadline;

	if (!d || !d->vm || vm_exited(d->vm, NULL, 0))
		return;
	deadline = mono_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 2000) * NSEC_PER_MSEC;
	if (d->vm->qmp) {
		/* a destination still waiting for its stream does not run its guest: no guest stop first */
		qmp_client_set_command_timeout(d->vm->qmp, timeout_ms > 0 ? timeout_ms / 2 + 1 : 1000);
		qmp_quit(d->vm->qmp, NULL);
	}
	while (!vm_exited(d->vm, NULL, 0) && mono_ns() < deadline)
		nanosleep(&ts, NULL);
	vm_kill(d->vm);
}

void migrate_dest_free(struct migrate_dest *d)
{
	if (!d)
		return;
	if (d->vm)
		vm_kill(d->vm);
	vm_free(d->vm);
	if (d->src_fd >= 0)
		close(d->src_fd);
	free(d);
}
