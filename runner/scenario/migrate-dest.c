// SPDX-License-Identifier: GPL-2.0-or-later
/* A live migration's destination QEMU on this host (migrate-dest.h). */
#include "migrate-dest.h"

#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "spec.h"
#include "macro.h"
#include "qmp-commands.h"
#include "qmp.h"
#include "report.h"
#include "vm.h"

#define INCOMING_FDNAME "sbincoming"
#define MIGRATE_FDNAME "sbmigrate"

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
	d->user = cfg->spec ? cfg->spec->vm.user : NULL;
	d->run_dir = strdup(cfg->run_dir ? cfg->run_dir : ".");
	if (!d->run_dir) {
		free(d);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	k = vm_start(&dc, &d->vm, err);
	if (k < 0) {
		free(d->run_dir);
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

/* RUN_DIR/mig-XXXXXX/sock: a directory of its own that only QEMU's user may enter */
static int make_socket_dir(struct migrate_dest *d, struct sb_error *err)
{
	_cleanup_free_ char *dir = NULL, *path = NULL;

	if (asprintf(&dir, "%s/mig-XXXXXX", d->run_dir) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (!mkdtemp(dir))
		return sb_error_set(err, -errno, "cannot create the migration's socket directory in %s: %s", d->run_dir,
				    strerror(errno));
	if (d->user) {
		struct passwd *pw = getpwnam(d->user);

		if (!pw || chown(dir, pw->pw_uid, pw->pw_gid) < 0) {
			int e = pw ? errno : ENOENT;

			rmdir(dir);
			return sb_error_set(err, -e, "cannot give the migration's socket directory %s to QEMU's user '%s' (spec.vm.user): %s",
					    dir, d->user, strerror(e));
		}
	}
	if (asprintf(&path, "%s/sock", dir) < 0) {
		rmdir(dir);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	d->sock_dir = TAKE_PTR(dir);
	d->sock_path = TAKE_PTR(path);
	return 0;
}

static void remove_socket_dir(struct migrate_dest *d)
{
	if (d->sock_path)
		unlink(d->sock_path);
	if (d->sock_dir)
		rmdir(d->sock_dir);
	free(d->sock_path);
	free(d->sock_dir);
	d->sock_path = d->sock_dir = NULL;
}

int migrate_dest_listen(struct migrate_dest *d, const struct migrate_dest_channel *how, struct sb_error *err)
{
	struct qmp_migrate_address a = { .fd = -1, .fdname = INCOMING_FDNAME, .channels = how && how->channels };
	int sv[2] = { -1, -1 };
	int k;

	d->channels = a.channels;
	if (how && how->unix_socket) {
		if (!d->sock_path) {
			k = make_socket_dir(d, err);
			if (k < 0)
				return k;
		}
		a.unix_path = d->sock_path;
	} else {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			return sb_error_set(err, -errno, "cannot create the migration's channel: %s", strerror(errno));
		a.fd = sv[1];
	}
	k = qmp_migrate_incoming(d->vm->qmp, &a, err);
	if (sv[1] >= 0)
		close(sv[1]); /* QEMU holds its own copy, or refused it */
	if (k < 0) {
		if (sv[0] >= 0)
			close(sv[0]);
		return sb_error_prefix(err, "the migration's destination QEMU (pid %d) refused migrate-incoming", d->vm->pid);
	}
	d->incoming = true;
	if (d->src_fd >= 0)
		close(d->src_fd);
	d->src_fd = sv[0];
	return 0;
}

int migrate_dest_migrate(struct migrate_dest *d, struct qmp_client *src, struct sb_error *err)
{
	struct qmp_migrate_address a = {
		.fd = d->src_fd,
		.fdname = MIGRATE_FDNAME,
		.unix_path = d->sock_path,
		.channels = d->channels,
	};
	int k;

	if (!a.unix_path && a.fd < 0)
		return sb_error_set(err, -EINVAL, "the migration's channel is not set up (migrate_dest_listen() first)");
	k = qmp_migrate(src, &a, err);
	if (d->src_fd >= 0)
		close(d->src_fd); /* QEMU holds its own copy */
	d->src_fd = -1;
	return k;
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
	remove_socket_dir(d);
	free(d->run_dir);
	free(d);
}

void migrate_dest_record(struct report_dest *out, int pid, const char *exit, char **log, bool last)
{
	out->pid = pid;
	free(out->exit);
	out->exit = *exit ? strdup(exit) : NULL;
	if (*log) {
		free(out->log);
		out->log = strdup(*log);
	}
	if (last) {
		free(*log);
		*log = NULL;
	}
}
