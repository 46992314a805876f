// SPDX-License-Identifier: GPL-2.0-or-later
/* The libvirt backend's connections: the process-wide event loop, opening a URI, the ids QEMU runs as. */
#include "vm-libvirt.h"

#include <errno.h>
#include <grp.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "vm-libvirt-private.h"

/* ---- the process-wide event loop ----------------------------------------- */

/*
 * libvirt delivers events from whichever thread runs its event loop. One
 * thread runs it while at least one libvirt VM exists; a periodic timer
 * wakes it so it notices when asked to end.
 */
static pthread_mutex_t loop_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned loop_users;
static bool loop_registered;
static int loop_quit;
static int loop_timer = -1;
static pthread_t loop_thread;

static void quiet_errors(void *opaque, virErrorPtr e)
{
	/* library code does not print: errors are taken with virGetLastErrorMessage() */
}

static void loop_tick(int timer, void *opaque)
{
}

static void *loop_main(void *arg)
{
	while (!__atomic_load_n(&loop_quit, __ATOMIC_ACQUIRE))
		if (virEventRunDefaultImpl() < 0) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	return NULL;
}

int lv_loop_ref(struct sb_error *err)
{
	int r = 0;

	pthread_mutex_lock(&loop_lock);
	if (!loop_registered) {
		virSetErrorFunc(NULL, quiet_errors);
		if (virInitialize() < 0 || virEventRegisterDefaultImpl() < 0) {
			r = sb_error_set(err, -EIO, "libvirt: cannot set up its event loop: %s", virGetLastErrorMessage());
			goto out;
		}
		loop_registered = true;
	}
	if (loop_users == 0) {
		__atomic_store_n(&loop_quit, 0, __ATOMIC_RELEASE);
		loop_timer = virEventAddTimeout(100, loop_tick, NULL, NULL);
		if (loop_timer < 0) {
			r = sb_error_set(err, -EIO, "libvirt: cannot add an event loop timer: %s", virGetLastErrorMessage());
			goto out;
		}
		r = -pthread_create(&loop_thread, NULL, loop_main, NULL);
		if (r < 0) {
			virEventRemoveTimeout(loop_timer);
			loop_timer = -1;
			sb_error_set(err, r, "libvirt: cannot start the event loop thread: %s", strerror(-r));
			goto out;
		}
	}
	loop_users++;
out:
	pthread_mutex_unlock(&loop_lock);
	return r;
}

void lv_loop_unref(void)
{
	pthread_mutex_lock(&loop_lock);
	if (loop_users && --loop_users == 0) {
		__atomic_store_n(&loop_quit, 1, __ATOMIC_RELEASE);
		virEventUpdateTimeout(loop_timer, 0);
		pthread_join(loop_thread, NULL);
		virEventRemoveTimeout(loop_timer);
		loop_timer = -1;
	}
	pthread_mutex_unlock(&loop_lock);
}

const char *lv_error(void)
{
	const char *m = virGetLastErrorMessage();

	return m && *m ? m : "unknown libvirt error";
}

/* ---- the connection and the ids QEMU runs as ------------------------------------- */

static bool uri_is_session(const char *uri)
{
	size_t n = strlen(uri);

	return n >= 8 && !strcmp(uri + n - 8, "/session");
}

/* "+64055:+107" or "libvirt-qemu:kvm" after <baselabel type='kvm'> in the capabilities */
static int parse_baselabel(const char *caps, unsigned *uid, unsigned *gid)
{
	const char *p = strstr(caps, "<baselabel type='kvm'>");
	char user[64] = "", group[64] = "";

	if (!p)
		return -ENOENT;
	p += strlen("<baselabel type='kvm'>");
	if (sscanf(p, "%63[^:<]:%63[^<]", user, group) != 2)
		return -EINVAL;
	if (user[0] == '+') {
		*uid = (unsigned)strtoul(user + 1, NULL, 10);
	} else {
		struct passwd *pw = getpwnam(user);
		if (!pw)
			return -ENOENT;
		*uid = pw->pw_uid;
	}
	if (group[0] == '+') {
		*gid = (unsigned)strtoul(group + 1, NULL, 10);
	} else {
		struct group *gr = getgrnam(group);
		if (!gr)
			return -ENOENT;
		*gid = gr->gr_gid;
	}
	return 0;
}

int lv_connect_uri(const char *uri, virConnectPtr *ret, struct sb_error *err)
{
	virConnectPtr c = virConnectOpen(uri);

	if (!c)
		return sb_error_set(err, -ECONNREFUSED,
				    "libvirt at %s (spec.vm.libvirt.uri): %s; start libvirtd and virtlogd (scripts/host-setup does) or fix the URI",
				    uri, lv_error());
	*ret = c;
	return 0;
}

int lv_ids_from_conn(virConnectPtr conn, const char *uri, unsigned *uid, unsigned *gid)
{
	_cleanup_free_ char *caps = NULL;

	*uid = geteuid();
	*gid = getegid();
	if (uri_is_session(uri))
		return 0;
	caps = virConnectGetCapabilities(conn);
	if (!caps)
		return -EIO;
	if (parse_baselabel(caps, uid, gid) == -ENOENT) {
		/* no DAC driver: QEMU keeps libvirtd's identity */
		*uid = 0;
		*gid = 0;
	}
	return 0;
}

int libvirt_qemu_ids(const char *uri, unsigned *uid, unsigned *gid, struct sb_error *err)
{
	virConnectPtr conn = NULL;
	int r;

	r = lv_loop_ref(err);
	if (r < 0)
		return r;
	r = lv_connect_uri(uri, &conn, err);
	if (r >= 0) {
		r = lv_ids_from_conn(conn, uri, uid, gid);
		if (r < 0)
			sb_error_set(err, r, "libvirt at %s: cannot read its capabilities: %s", uri, lv_error());
		virConnectClose(conn);
	}
	lv_loop_unref();
	return r;
}
