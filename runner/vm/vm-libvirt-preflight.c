// SPDX-License-Identifier: GPL-2.0-or-later
/* The libvirt backend's host checks: can the user libvirt runs QEMU as use /dev/kvm and userfaultfd? */
#include "vm-libvirt.h"

#include <errno.h>
#include <grp.h>
#include <libvirt/libvirt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "macro.h"
#include "vm-libvirt-private.h"

/* ---- host checks --------------------------------------------------------------- */

static bool user_in_group(unsigned uid, unsigned gid, unsigned file_gid)
{
	struct passwd *pw = getpwuid(uid);
	gid_t groups[256];
	int n = ARRAY_SIZE(groups);

	if (gid == file_gid)
		return true;
	/* as libvirt sets them: the user's groups from the passwd and group files, plus the label's gid */
	if (!pw || getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
		return false;
	for (int i = 0; i < n; i++)
		if (groups[i] == file_gid)
			return true;
	return false;
}

/* May uid (primary group gid, and its supplementary groups) open path read-write? */
static bool may_rw(const char *path, unsigned uid, unsigned gid)
{
	struct stat st;

	if (uid == 0)
		return true;
	if (stat(path, &st) < 0)
		return false;
	if (st.st_uid == uid)
		return (st.st_mode & 0600) == 0600;
	if (user_in_group(uid, gid, st.st_gid))
		return (st.st_mode & 0060) == 0060;
	return (st.st_mode & 0006) == 0006;
}

static long read_long(const char *path, long dflt)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	long v;

	return f && fscanf(f, "%ld", &v) == 1 ? v : dflt;
}

int libvirt_preflight(const struct run_spec *spec, bool tcg, void (*fail)(void *ctx, int code, const char *msg), void *ctx)
{
	const char *uri = spec->vm.libvirt.uri;
	struct sb_error e = {};
	virConnectPtr conn = NULL;
	unsigned long version = 0;
	unsigned uid, gid;
	char msg[SB_ERROR_MAX];
	int failures = 0, r;

	if (lv_loop_ref(&e) < 0) {
		fail(ctx, e.code, e.msg);
		return 1;
	}
	r = lv_connect_uri(uri, &conn, &e);
	if (r < 0) {
		fail(ctx, r, e.msg);
		failures++;
		goto out;
	}
	if (lv_ids_from_conn(conn, uri, &uid, &gid) < 0) {
		snprintf(msg, sizeof(msg), "libvirt at %s: cannot read its capabilities: %s", uri, lv_error());
		fail(ctx, -EIO, msg);
		failures++;
		goto out;
	}
	if (virConnectGetVersion(conn, &version) < 0)
		version = 0;
	struct passwd *pw = getpwuid(uid);
	const char *who = pw ? pw->pw_name : "?";

	if (!tcg && !may_rw("/dev/kvm", uid, gid)) {
		snprintf(msg, sizeof(msg),
			 "libvirt at %s runs QEMU as '%s' (uid %u), which cannot open /dev/kvm read-write: make /dev/kvm root:kvm 0660 and put '%s' in group kvm (scripts/host-setup does)",
			 uri, who, uid, who);
		fail(ctx, -EACCES, msg);
		failures++;
	}
	if (uid != 0) {
		const char *knob = spec_knob_all_arms(spec, "sysctl:vm.unprivileged_userfaultfd");
		long unpriv = knob ? atol(knob) : read_long("/proc/sys/vm/unprivileged_userfaultfd", 0);
		bool devnode = version >= LIBVIRT_QEMU_UFFD_DEV_VERSION && may_rw("/dev/userfaultfd", uid, gid);
		if (unpriv != 1 && !devnode) {
			snprintf(msg, sizeof(msg),
				 "libvirt at %s runs QEMU %lu.%lu as '%s' (uid %u), which may not use userfaultfd: vm.unprivileged_userfaultfd is %ld%s; background snapshots need userfaultfd write-protect, and QEMU would otherwise refuse the snapshot. Fix: add the knob sysctl:vm.unprivileged_userfaultfd=1 to the run (restored afterwards), or sysctl -w vm.unprivileged_userfaultfd=1",
				 uri, version / 1000000, version / 1000 % 1000, who, uid, unpriv,
				 version >= LIBVIRT_QEMU_UFFD_DEV_VERSION
					 ? " and /dev/userfaultfd is not open to it (or give it access to /dev/userfaultfd)"
					 : " and this QEMU does not use /dev/userfaultfd (8.0 and later do)");
			fail(ctx, -EPERM, msg);
			failures++;
		}
	}
out:
	if (conn)
		virConnectClose(conn);
	lv_loop_unref();
	return failures;
}
