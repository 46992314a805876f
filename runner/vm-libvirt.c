// SPDX-License-Identifier: GPL-2.0-or-later
/* The libvirt VM backend: the micro guest in a transient domain (vm-libvirt.h). */
#include "vm-libvirt.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "drain.h"
#include "guest-linux.h"
#include "macro.h"
#include "qmp-commands.h"
#include "qga.h"
#include "qmp.h"
#include "vm.h"
#include "wire.h"

#define WORK_BASE_ROOT "/run/snapbench"
#define LOG_DIR "/var/log/libvirt/qemu"
#define TELEMETRY_NAME "telemetry"
#define KERNEL_NAME "guest.elf"
#define TAINT_MAX 16
#define DOMAIN_XML_MAX (1u << 20)

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

static int loop_ref(struct sb_error *err)
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

static void loop_unref(void)
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

static const char *lv_error(void)
{
	const char *m = virGetLastErrorMessage();

	return m && *m ? m : "unknown libvirt error";
}

/* ---- what the event callbacks share with the VM ---------------------------- */

/*
 * Owned jointly by the VM and each registered callback (libvirt calls the
 * free function when it drops a callback), so a callback that is running
 * while the VM goes away still finds valid memory; it finds closing set.
 */
struct lv_shared {
	pthread_mutex_t lock;
	unsigned refs;
	bool closing;
	struct qmp_client *qmp; /* NULL once closing */
	bool stopped;           /* a STOPPED or CRASHED lifecycle event came */
	int stop_event, stop_detail;
	unsigned jobs_completed;
	uint64_t events_pushed, events_refused;
};

static struct lv_shared *shared_new(void)
{
	struct lv_shared *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->refs = 1;
	return s;
}

static void shared_unref(void *p)
{
	struct lv_shared *s = p;
	bool last;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	last = --s->refs == 0;
	pthread_mutex_unlock(&s->lock);
	if (last) {
		pthread_mutex_destroy(&s->lock);
		free(s);
	}
}

static void shared_ref(struct lv_shared *s)
{
	pthread_mutex_lock(&s->lock);
	s->refs++;
	pthread_mutex_unlock(&s->lock);
}

static void on_qmp_event(virConnectPtr conn, virDomainPtr dom, const char *event, long long seconds, unsigned int micros,
			 const char *details, void *opaque)
{
	struct lv_shared *s = opaque;

	pthread_mutex_lock(&s->lock);
	if (!s->closing && s->qmp) {
		if (qmp_client_push_event(s->qmp, event, seconds, micros, details, NULL) < 0)
			s->events_refused++;
		else
			s->events_pushed++;
	}
	pthread_mutex_unlock(&s->lock);
}

static int on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	struct lv_shared *s = opaque;

	if (event == VIR_DOMAIN_EVENT_STOPPED || event == VIR_DOMAIN_EVENT_CRASHED) {
		pthread_mutex_lock(&s->lock);
		if (!s->stopped) {
			s->stopped = true;
			s->stop_event = event;
			s->stop_detail = detail;
		}
		pthread_mutex_unlock(&s->lock);
	}
	return 0;
}

static void on_job_completed(virConnectPtr conn, virDomainPtr dom, virTypedParameterPtr params, int nparams,
			     void *opaque)
{
	struct lv_shared *s = opaque;

	pthread_mutex_lock(&s->lock);
	s->jobs_completed++;
	pthread_mutex_unlock(&s->lock);
}

static const char *stop_reason(int event, int detail)
{
	static const char *const stopped[] = { "shut down", "destroyed", "crashed", "migrated", "saved",
					       "QEMU or libvirt failed (QEMU exited by itself)", "restored from a snapshot" };

	if (event == VIR_DOMAIN_EVENT_CRASHED)
		return "the guest crashed";
	if (detail >= 0 && (size_t)detail < ARRAY_SIZE(stopped))
		return stopped[detail];
	return "stopped";
}

/* ---- the VM ------------------------------------------------------------------ */

struct lv_vm {
	struct vm vm; /* first: the runner holds a struct vm * */
	virConnectPtr conn;
	virDomainPtr dom;
	char *uri;
	char *name;
	char *work_dir, *kernel_path, *fifo_path;
	struct lv_shared *shared;
	virStreamPtr console;  /* open once we asked the guest to stop */
	int cb_qmp, cb_lifecycle, cb_job;
	bool loop_held;
	bool gone;             /* the domain no longer runs */
	bool ours;             /* we started it (transient, or an existing one started fresh): we stop it */
	bool stopped;          /* lv_stop() ran */
	char exit_desc[256];
	int command_timeout_ms;
};

static struct lv_vm *LV(struct vm *vm)
{
	return (struct lv_vm *)vm;
}

/* ---- QMP through libvirt, with a timeout ----------------------------------- */

/*
 * One monitor command on its own thread. The caller waits up to its
 * timeout; a call that outlives it finishes on its own and drops its
 * reply, as a late reply on a stream is dropped.
 */
struct lv_call {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned refs;
	bool done;
	virDomainPtr dom;
	char *cmd;
	int fd;
	char *result;
	int code;
	char msg[SB_ERROR_MAX];
};

static void call_unref(struct lv_call *c)
{
	bool last;

	pthread_mutex_lock(&c->lock);
	last = --c->refs == 0;
	pthread_mutex_unlock(&c->lock);
	if (!last)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->dom)
		virDomainFree(c->dom);
	free(c->cmd);
	free(c->result);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static void *call_main(void *p)
{
	struct lv_call *c = p;
	char *result = NULL;
	int fds[1] = { c->fd };
	int r;

	r = virDomainQemuMonitorCommandWithFiles(c->dom, c->cmd, c->fd >= 0 ? 1 : 0, c->fd >= 0 ? fds : NULL, NULL, NULL,
						 &result, 0);
	pthread_mutex_lock(&c->lock);
	if (r < 0) {
		c->code = -EIO;
		snprintf(c->msg, sizeof(c->msg), "%s", lv_error());
	}
	c->result = result;
	c->done = true;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	call_unref(c);
	return NULL;
}

static int lv_qmp_execute(void *opaque, const char *command_json, int fd, int timeout_ms, char **reply_json,
			  struct sb_error *err)
{
	struct lv_vm *lv = opaque;
	struct lv_call *c;
	pthread_t t;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return sb_error_set(err, -ENOMEM, "out of memory");
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	c->refs = 2;
	c->fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
	c->cmd = strdup(command_json);
	c->dom = lv->dom;
	if (!c->cmd || (fd >= 0 && c->fd < 0) || virDomainRef(lv->dom) < 0) {
		c->dom = NULL;
		c->refs = 1;
		r = c->cmd ? -errno : -ENOMEM;
		call_unref(c);
		return sb_error_set(err, r < 0 ? r : -ENOMEM, "cannot prepare a monitor command for domain %s", lv->name);
	}
	r = -pthread_create(&t, NULL, call_main, c);
	if (r < 0) {
		c->refs = 1;
		call_unref(c);
		return sb_error_set(err, r, "cannot start a thread for a monitor command: %s", strerror(-r));
	}
	pthread_detach(t);

	uint64_t deadline = timeout_ms >= 0 ? mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC : 0;
	struct timespec ts;
	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t abs_ns = (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec + (uint64_t)timeout_ms * NSEC_PER_MSEC;
		ts.tv_sec = (time_t)(abs_ns / NSEC_PER_SEC);
		ts.tv_nsec = (long)(abs_ns % NSEC_PER_SEC);
	}
	pthread_mutex_lock(&c->lock);
	while (!c->done) {
		if (timeout_ms < 0) {
			pthread_cond_wait(&c->cond, &c->lock);
		} else if (pthread_cond_timedwait(&c->cond, &c->lock, &ts) == ETIMEDOUT && mono_ns() >= deadline) {
			break;
		}
	}
	if (!c->done) {
		r = sb_error_set(err, -ETIMEDOUT, "libvirt domain %s: no reply from QEMU's monitor within %d ms", lv->name,
				 timeout_ms);
	} else if (c->code < 0) {
		/* the domain went away, or libvirt refused the command */
		r = sb_error_set(err, virDomainIsActive(lv->dom) == 1 ? -EIO : -ECONNRESET,
				 "libvirt domain %s: monitor command failed: %s", lv->name, c->msg);
	} else {
		*reply_json = TAKE_PTR(c->result);
		r = 0;
	}
	pthread_mutex_unlock(&c->lock);
	call_unref(c);
	return r;
}

static const struct qmp_transport_ops lv_qmp_ops = {
	.execute = lv_qmp_execute,
};

/* ---- host facts ---------------------------------------------------------------- */

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

static int connect_uri(const char *uri, virConnectPtr *ret, struct sb_error *err)
{
	virConnectPtr c = virConnectOpen(uri);

	if (!c)
		return sb_error_set(err, -ECONNREFUSED,
				    "libvirt at %s (spec.vm.libvirt.uri): %s; start libvirtd and virtlogd (scripts/host-setup does) or fix the URI",
				    uri, lv_error());
	*ret = c;
	return 0;
}

static int ids_from_conn(virConnectPtr conn, const char *uri, unsigned *uid, unsigned *gid)
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

	r = loop_ref(err);
	if (r < 0)
		return r;
	r = connect_uri(uri, &conn, err);
	if (r >= 0) {
		r = ids_from_conn(conn, uri, uid, gid);
		if (r < 0)
			sb_error_set(err, r, "libvirt at %s: cannot read its capabilities: %s", uri, lv_error());
		virConnectClose(conn);
	}
	loop_unref();
	return r;
}

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

int libvirt_preflight(const struct run_spec *spec, void (*fail)(void *ctx, int code, const char *msg), void *ctx)
{
	const char *uri = spec->vm.libvirt.uri;
	struct sb_error e = {};
	virConnectPtr conn = NULL;
	unsigned long version = 0;
	unsigned uid, gid;
	char msg[SB_ERROR_MAX];
	int failures = 0, r;

	if (loop_ref(&e) < 0) {
		fail(ctx, e.code, e.msg);
		return 1;
	}
	r = connect_uri(uri, &conn, &e);
	if (r < 0) {
		fail(ctx, r, e.msg);
		failures++;
		goto out;
	}
	if (ids_from_conn(conn, uri, &uid, &gid) < 0) {
		snprintf(msg, sizeof(msg), "libvirt at %s: cannot read its capabilities: %s", uri, lv_error());
		fail(ctx, -EIO, msg);
		failures++;
		goto out;
	}
	if (virConnectGetVersion(conn, &version) < 0)
		version = 0;
	struct passwd *pw = getpwuid(uid);
	const char *who = pw ? pw->pw_name : "?";

	if (!may_rw("/dev/kvm", uid, gid)) {
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
	loop_unref();
	return failures;
}

/* ---- the work directory ------------------------------------------------------ */

static int work_base(char *buf, size_t len, struct sb_error *err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;

	if (geteuid() == 0)
		snprintf(buf, len, "%s", WORK_BASE_ROOT);
	else
		snprintf(buf, len, "%s/snapbench", xdg && *xdg ? xdg : "/tmp");
	/* traversable, not listable, by libvirt's QEMU user */
	if (mkdir(buf, 0711) < 0 && errno != EEXIST)
		return sb_error_set(err, -errno, "%s: cannot create it: %s", buf, strerror(errno));
	if (lstat(buf, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return sb_error_set(err, -EPERM, "%s: not a directory of uid %u; remove it", buf, (unsigned)geteuid());
	return 0;
}

static int copy_file(const char *from, const char *to, struct sb_error *err)
{
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int out = -1;
	struct stat st;

	if (in < 0 || fstat(in, &st) < 0)
		return sb_error_set(err, -errno, "guest image %s: %s; build snapbench or set $SNAPBENCH_GUEST_IMAGE", from,
				    strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0)
		return sb_error_set(err, -errno, "%s: %s", to, strerror(errno));
	for (off_t off = 0; off < st.st_size;) {
		ssize_t n = sendfile(out, in, &off, (size_t)(st.st_size - off));
		if (n <= 0)
			return sb_error_set(err, n < 0 ? -errno : -EIO, "copying %s to %s: %s", from, to,
					    n < 0 ? strerror(errno) : "short copy");
	}
	if (fchmod(out, 0644) < 0)
		return sb_error_set(err, -errno, "%s: %s", to, strerror(errno));
	return 0;
}

static void work_remove(struct lv_vm *lv)
{
	if (lv->fifo_path)
		unlink(lv->fifo_path);
	if (lv->kernel_path)
		unlink(lv->kernel_path);
	if (lv->work_dir)
		rmdir(lv->work_dir);
}

/* ---- the domain XML ------------------------------------------------------------ */

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
}

static void qemu_arg(FILE *f, const char *s)
{
	fputs("    <qemu:arg value='", f);
	xml_text(f, s);
	fputs("'/>\n", f);
}

static int domain_xml(const struct vm_config *cfg, const struct lv_vm *lv, const char *emulator, char **ret)
{
	const struct run_spec *s = cfg->spec;
	char *xml = NULL, arg[4200];
	size_t len = 0;
	FILE *f = open_memstream(&xml, &len);

	if (!f)
		return -ENOMEM;
	fputs("<domain type='kvm' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>\n  <name>", f);
	xml_text(f, lv->name);
	fputs("</name>\n  <description>snapbench micro guest (transient; destroyed when snapbench disconnects)</description>\n", f);
	fprintf(f, "  <memory unit='MiB'>%llu</memory>\n", (unsigned long long)(s->vm.memory >> 20));
	if (s->vm.backing == SPEC_BACKING_HUGETLB || s->vm.prealloc) {
		fputs("  <memoryBacking>\n", f);
		if (s->vm.backing == SPEC_BACKING_HUGETLB)
			fprintf(f, "    <hugepages><page size='%llu' unit='KiB'/></hugepages>\n",
				(unsigned long long)((s->vm.hugepage_size ? s->vm.hugepage_size : 2ull << 20) >> 10));
		if (s->vm.prealloc)
			fputs("    <allocation mode='immediate'/>\n", f);
		fputs("  </memoryBacking>\n", f);
	}
	fprintf(f, "  <vcpu>%u</vcpu>\n  <os>\n    <type arch='x86_64' machine='", s->vm.vcpus);
	xml_text(f, s->vm.machine);
	fputs("'>hvm</type>\n    <kernel>", f);
	xml_text(f, lv->kernel_path);
	fputs("</kernel>\n    <cmdline>", f);
	xml_text(f, cfg->guest_append);
	fputs("</cmdline>\n  </os>\n"
	      "  <on_poweroff>destroy</on_poweroff>\n  <on_reboot>destroy</on_reboot>\n  <on_crash>destroy</on_crash>\n"
	      "  <devices>\n",
	      f);
	if (emulator) {
		fputs("    <emulator>", f);
		xml_text(f, emulator);
		fputs("</emulator>\n", f);
	}
	/* COM1 is the guest's control line; libvirt makes it a pty we reach through virDomainOpenConsole() */
	fputs("    <serial type='pty'><target type='isa-serial' port='0'/></serial>\n"
	      "    <controller type='usb' model='none'/>\n"
	      "    <memballoon model='none'/>\n"
	      "  </devices>\n"
	      "  <qemu:commandline>\n",
	      f);
	/* what libvirt has no element for: the same firmware and devices as the qemu backend (guest/qemu-args.c) */
	qemu_arg(f, "-bios");
	qemu_arg(f, "qboot.rom");
	qemu_arg(f, "-chardev");
	snprintf(arg, sizeof(arg), "file,id=sbtel,path=%s,append=on", lv->fifo_path);
	qemu_arg(f, arg);
	qemu_arg(f, "-device");
	snprintf(arg, sizeof(arg), "isa-debugcon,iobase=0x%x,chardev=sbtel", GUEST_PORT_TELEMETRY);
	qemu_arg(f, arg);
	qemu_arg(f, "-device");
	snprintf(arg, sizeof(arg), "isa-debug-exit,iobase=0x%x,iosize=4", GUEST_PORT_EXIT);
	qemu_arg(f, arg);
	if (s->vm.cpu) {
		qemu_arg(f, "-cpu");
		qemu_arg(f, s->vm.cpu);
	}
	for (size_t i = 0; i < s->vm.n_extra_args; i++)
		qemu_arg(f, s->vm.extra_args[i]);
	fputs("  </qemu:commandline>\n</domain>\n", f);
	if (fclose(f) != 0) {
		free(xml);
		return -ENOMEM;
	}
	*ret = xml;
	return 0;
}

/* ---- facts about the running domain --------------------------------------------- */

/* QEMU's pid: the thread group of vCPU 0's thread, which must be a live process. */
static int find_pid(struct lv_vm *lv, struct sb_error *err)
{
	struct json_object *ret = NULL, *cpu, *tid;
	char path[64], line[256];
	long tgid = -1;
	int r;

	r = qmp_execute(lv->vm.qmp, "query-cpus-fast", NULL, -1, lv->command_timeout_ms, &ret, err);
	if (r < 0)
		return sb_error_prefix(err, "libvirt domain %s: finding QEMU's pid", lv->name);
	cpu = json_object_array_get_idx(ret, 0);
	if (!json_object_is_type(ret, json_type_array) || !cpu || !json_object_object_get_ex(cpu, "thread-id", &tid) ||
	    !json_object_is_type(tid, json_type_int)) {
		json_object_put(ret);
		return sb_error_set(err, -EPROTO, "libvirt domain %s: query-cpus-fast gave no vCPU thread id", lv->name);
	}
	snprintf(path, sizeof(path), "/proc/%lld/status", (long long)json_object_get_int64(tid));
	json_object_put(ret);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	if (tgid <= 0)
		return sb_error_set(err, -ESRCH, "libvirt domain %s: vCPU thread %s is not a process on this host",
				    lv->name, path);
	lv->vm.pid = (pid_t)tgid;
	return 0;
}

/* argv and binary of QEMU as it runs, from /proc (for the report) */
static void read_proc(struct lv_vm *lv)
{
	char path[64], buf[4096];
	_cleanup_free_ char *data = NULL;
	size_t len = 0, cap = 0, n = 0;
	ssize_t k;

	snprintf(path, sizeof(path), "/proc/%d/exe", lv->vm.pid);
	k = readlink(path, buf, sizeof(buf) - 1);
	if (k > 0) {
		buf[k] = '\0';
		lv->vm.qemu_path = strdup(buf);
	}
	snprintf(path, sizeof(path), "/proc/%d/cmdline", lv->vm.pid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while ((k = read(fd, buf, sizeof(buf))) > 0 && len < (1u << 20)) {
		if (len + (size_t)k + 1 > cap) {
			cap = (len + (size_t)k + 1) * 2;
			char *nd = realloc(data, cap);
			if (!nd)
				return;
			data = nd;
		}
		memcpy(data + len, buf, (size_t)k);
		len += (size_t)k;
	}
	if (!data)
		return;
	data[len] = '\0';
	for (size_t i = 0; i < len; i++)
		n += data[i] == '\0';
	char **v = calloc(n + 1, sizeof(*v));
	if (!v)
		return;
	size_t i = 0;
	for (char *p = data; p < data + len && i < n; p += strlen(p) + 1)
		if (!(v[i++] = strdup(p)))
			break;
	lv->vm.argv = v;
}

/* What libvirt marked the domain tainted by: "custom-monitor" and friends. */
static void read_taints(struct lv_vm *lv)
{
	char **msgs = NULL;
	int n = virDomainGetMessages(lv->dom, &msgs, VIR_DOMAIN_MESSAGE_TAINTING);
	char **v;

	if (n < 0)
		return;
	v = calloc((size_t)(n < TAINT_MAX ? n : TAINT_MAX) + 1, sizeof(*v));
	for (int i = 0, k = 0; i < n; i++) {
		/* "tainted: custom monitor control commands issued" */
		const char *m = msgs[i];
		if (!strncmp(m, "tainted: ", 9))
			m += 9;
		if (v && k < TAINT_MAX)
			v[k++] = strdup(m);
		free(msgs[i]);
	}
	free(msgs);
	if (lv->vm.taints) {
		for (char **p = lv->vm.taints; *p; p++)
			free(*p);
		free(lv->vm.taints);
	}
	lv->vm.taints = v;
}

/* ---- the guest agent through libvirt ------------------------------------------ */

static int lv_agent_execute(void *opaque, const char *command_json, int timeout_ms, char **reply_json,
			    struct sb_error *err)
{
	struct lv_vm *lv = opaque;
	int secs = timeout_ms < 0 ? VIR_DOMAIN_QEMU_AGENT_COMMAND_BLOCK : timeout_ms < 1000 ? 1 : (timeout_ms + 999) / 1000;
	char *r = virDomainQemuAgentCommand(lv->dom, command_json, secs, 0);
	virErrorPtr e;

	if (r) {
		*reply_json = r;
		return 0;
	}
	e = virGetLastError();
	int code = e ? e->code : VIR_ERR_INTERNAL_ERROR;
	if (code == VIR_ERR_ARGUMENT_UNSUPPORTED || code == VIR_ERR_OPERATION_UNSUPPORTED)
		return sb_error_set(err, -ENOTCONN,
				    "libvirt domain %s: the guest agent is not configured (%s): add a channel <channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel> to the domain",
				    lv->name, lv_error());
	if (code == VIR_ERR_AGENT_UNRESPONSIVE || code == VIR_ERR_AGENT_UNSYNCED)
		return sb_error_set(err, -ENOTCONN, "libvirt domain %s: %s", lv->name, lv_error());
	if (code == VIR_ERR_OPERATION_TIMEOUT)
		return sb_error_set(err, -ETIMEDOUT, "libvirt domain %s: %s", lv->name, lv_error());
	if (code == VIR_ERR_OPERATION_INVALID)
		return sb_error_set(err, -ECONNRESET, "libvirt domain %s: %s", lv->name, lv_error());
	return sb_error_set(err, -EREMOTEIO, "libvirt domain %s: guest agent: %s", lv->name, lv_error());
}

static const struct qga_transport_ops lv_agent_ops = {
	.execute = lv_agent_execute,
};

static int read_domain_xml(const char *path, char **ret, struct sb_error *err)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	if (!f)
		return sb_error_set(err, -errno, "spec.vm.libvirt.xml %s: %s", path, strerror(errno));
	buf = malloc(DOMAIN_XML_MAX + 1);
	if (!buf)
		return sb_error_set(err, -ENOMEM, "out of memory");
	n = fread(buf, 1, DOMAIN_XML_MAX + 1, f);
	if (n > DOMAIN_XML_MAX || n == 0) {
		free(buf);
		return sb_error_set(err, -EFBIG, "spec.vm.libvirt.xml %s: %s", path,
				    n ? "larger than 1 MiB; is it a domain XML?" : "empty");
	}
	buf[n] = '\0';
	*ret = buf;
	return 0;
}

/* A Linux guest's domain: a transient one from XML, or an existing one by name. */
static int start_linux_domain(const struct vm_config *cfg, struct lv_vm *lv, struct sb_error *err)
{
	const struct run_spec *s = cfg->spec;
	int r;

	if (s->vm.libvirt.xml) {
		_cleanup_free_ char *xml = NULL;
		r = read_domain_xml(s->vm.libvirt.xml, &xml, err);
		if (r < 0)
			return r;
		lv->dom = virDomainCreateXML(lv->conn, xml, VIR_DOMAIN_START_AUTODESTROY);
		if (!lv->dom)
			return sb_error_set(err, -ECHILD, "libvirt at %s could not start a domain from %s: %s", lv->uri,
					    s->vm.libvirt.xml, lv_error());
		lv->ours = true;
	} else {
		lv->dom = virDomainLookupByName(lv->conn, s->vm.libvirt.domain);
		if (!lv->dom)
			return sb_error_set(err, -ENOENT, "spec.vm.libvirt.domain %s: %s; list the domains with virsh list --all",
					    s->vm.libvirt.domain, lv_error());
		int active = virDomainIsActive(lv->dom);
		if (s->vm.libvirt.restart) {
			if (active == 1)
				return sb_error_set(err, -EBUSY,
						    "libvirt domain %s is running: shut it down so each repetition boots it fresh, or set spec.vm.libvirt.restart false to use it as it runs",
						    s->vm.libvirt.domain);
			if (virDomainCreate(lv->dom) < 0)
				return sb_error_set(err, -ECHILD, "libvirt domain %s could not start: %s", s->vm.libvirt.domain,
						    lv_error());
			lv->ours = true;
		} else if (active != 1) {
			return sb_error_set(err, -ESRCH,
					    "libvirt domain %s is not running: start it, or set spec.vm.libvirt.restart true to have snapbench start it",
					    s->vm.libvirt.domain);
		}
	}
	free(lv->name);
	lv->name = strdup(virDomainGetName(lv->dom));
	free(lv->vm.domain);
	lv->vm.domain = lv->name ? strdup(lv->name) : NULL;
	if (!lv->name || !lv->vm.domain)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (asprintf(&lv->vm.log_path, "%s/%s.log", LOG_DIR, lv->name) < 0)
		lv->vm.log_path = NULL;
	return 0;
}

/* After the domain runs: the agent, the probe copied in, stress-ng and the probe started. */
static int start_linux_workload(const struct vm_config *cfg, struct lv_vm *lv, struct sb_error *err)
{
	_cleanup_free_ char *probe = NULL;
	int r;

	r = linux_probe_find(&probe, err);
	if (r < 0)
		return r;
	r = qga_client_new_with_ops(&lv_agent_ops, lv, lv->name, NULL, &lv->vm.agent, err);
	if (r < 0)
		return r;
	r = linux_workload_start(lv->vm.agent, cfg->spec, probe, (int)(cfg->spec->guest.linux_guest.agent_timeout_s * 1000),
				 &lv->vm.workload, &lv->vm.telemetry_fd, err);
	if (r < 0)
		return r;
	r = drain_start(lv->vm.telemetry_fd, &lv->vm.telemetry);
	if (r < 0)
		return sb_error_set(err, r, "cannot start the telemetry reader: %s", strerror(-r));
	return 0;
}

/* ---- the backend ------------------------------------------------------------------ */

static void lv_free(struct vm *vm);

static int lv_start(const struct vm_config *cfg, struct vm **ret, struct sb_error *err)
{
	struct lv_vm *lv;
	_cleanup_free_ char *xml = NULL;
	_cleanup_close_ int fifo_w = -1;
	char base[4096], label[300];
	unsigned uid, gid;
	int r;

	lv = calloc(1, sizeof(*lv));
	if (!lv)
		return sb_error_set(err, -ENOMEM, "out of memory");
	lv->vm.backend = &vm_backend_libvirt;
	lv->vm.telemetry_fd = lv->vm.control_fd = -1;
	lv->cb_qmp = lv->cb_lifecycle = lv->cb_job = -1;
	lv->command_timeout_ms = cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms : 30000;
	lv->uri = strdup(cfg->spec->vm.libvirt.uri);
	lv->name = strdup(cfg->name ? cfg->name : "snapbench");
	lv->shared = shared_new();
	if (!lv->uri || !lv->name || !lv->shared) {
		lv_free(&lv->vm);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	lv->vm.domain = strdup(lv->name);

	r = loop_ref(err);
	if (r < 0)
		goto fail;
	lv->loop_held = true;
	r = connect_uri(lv->uri, &lv->conn, err);
	if (r < 0)
		goto fail;
	r = ids_from_conn(lv->conn, lv->uri, &uid, &gid);
	if (r < 0) {
		r = sb_error_set(err, r, "libvirt at %s: cannot read its capabilities: %s", lv->uri, lv_error());
		goto fail;
	}
	if (cfg->spec->guest.kind == SPEC_GUEST_LINUX) {
		r = start_linux_domain(cfg, lv, err);
		if (r < 0)
			goto fail;
		goto domain_started;
	}
	if (geteuid() != 0 && uid != geteuid()) {
		r = sb_error_set(err, -EPERM,
				 "libvirt at %s runs QEMU as uid %u: only root can hand it the guest's files; run snapbench as root or use qemu:///session",
				 lv->uri, uid);
		goto fail;
	}

	/* the guest's kernel and telemetry FIFO, where QEMU's user can reach them */
	r = work_base(base, sizeof(base), err);
	if (r < 0)
		goto fail;
	if (asprintf(&lv->work_dir, "%s/vm-XXXXXX", base) < 0) {
		lv->work_dir = NULL;
		r = sb_error_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	if (!mkdtemp(lv->work_dir)) {
		r = sb_error_set(err, -errno, "%s: cannot create it: %s", lv->work_dir, strerror(errno));
		free(lv->work_dir);
		lv->work_dir = NULL;
		goto fail;
	}
	if (chmod(lv->work_dir, 0711) < 0 || asprintf(&lv->kernel_path, "%s/%s", lv->work_dir, KERNEL_NAME) < 0 ||
	    asprintf(&lv->fifo_path, "%s/%s", lv->work_dir, TELEMETRY_NAME) < 0) {
		r = sb_error_set(err, -ENOMEM, "%s: cannot prepare it", lv->work_dir);
		goto fail;
	}
	r = copy_file(cfg->guest_image, lv->kernel_path, err);
	if (r < 0)
		goto fail;
	if (mkfifo(lv->fifo_path, 0600) < 0 || (geteuid() == 0 && chown(lv->fifo_path, uid, gid) < 0)) {
		r = sb_error_set(err, -errno, "telemetry FIFO %s: %s", lv->fifo_path, strerror(errno));
		goto fail;
	}
	/* our read end, and a write end held until QEMU has opened its own, so the reader sees no early EOF */
	lv->vm.telemetry_fd = open(lv->fifo_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (lv->vm.telemetry_fd >= 0)
		fifo_w = open(lv->fifo_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (lv->vm.telemetry_fd < 0 || fifo_w < 0) {
		r = sb_error_set(err, -errno, "telemetry FIFO %s: %s", lv->fifo_path, strerror(errno));
		goto fail;
	}
	(void)fcntl(lv->vm.telemetry_fd, F_SETPIPE_SZ, 1 << 20);
	r = drain_start(lv->vm.telemetry_fd, &lv->vm.telemetry);
	if (r < 0) {
		sb_error_set(err, r, "cannot start the telemetry reader: %s", strerror(-r));
		goto fail;
	}

	r = domain_xml(cfg, lv, cfg->qemu_binary && strchr(cfg->qemu_binary, '/') ? cfg->qemu_binary : NULL, &xml);
	if (r < 0) {
		sb_error_set(err, r, "out of memory");
		goto fail;
	}
	if (asprintf(&lv->vm.log_path, "%s/%s.log", LOG_DIR, lv->name) < 0)
		lv->vm.log_path = NULL;

	/* AUTODESTROY: if snapbench dies, libvirtd destroys the domain when our connection drops */
	lv->dom = virDomainCreateXML(lv->conn, xml, VIR_DOMAIN_START_AUTODESTROY);
	if (!lv->dom) {
		r = sb_error_set(err, -ECHILD, "libvirt at %s could not start domain %s: %s", lv->uri, lv->name, lv_error());
		goto fail;
	}
	lv->ours = true;
	close(TAKE_FD(fifo_w));

domain_started:
	snprintf(label, sizeof(label), "libvirt domain %s", lv->name);
	r = qmp_client_new_with_ops(&lv_qmp_ops, lv, label, NULL, &lv->vm.qmp, err);
	if (r < 0)
		goto fail;
	qmp_client_set_command_timeout(lv->vm.qmp, lv->command_timeout_ms);
	pthread_mutex_lock(&lv->shared->lock);
	lv->shared->qmp = lv->vm.qmp;
	pthread_mutex_unlock(&lv->shared->lock);

	/* events: each registration holds a reference to the shared state, dropped by libvirt */
	shared_ref(lv->shared);
	lv->cb_lifecycle = virConnectDomainEventRegisterAny(lv->conn, lv->dom, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
							    VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), lv->shared, shared_unref);
	if (lv->cb_lifecycle < 0)
		shared_unref(lv->shared);
	shared_ref(lv->shared);
	lv->cb_job = virConnectDomainEventRegisterAny(lv->conn, lv->dom, VIR_DOMAIN_EVENT_ID_JOB_COMPLETED,
						      VIR_DOMAIN_EVENT_CALLBACK(on_job_completed), lv->shared, shared_unref);
	if (lv->cb_job < 0)
		shared_unref(lv->shared);
	shared_ref(lv->shared);
	lv->cb_qmp = virConnectDomainQemuMonitorEventRegister(lv->conn, lv->dom, NULL, on_qmp_event, lv->shared,
							      shared_unref, 0);
	if (lv->cb_qmp < 0) {
		shared_unref(lv->shared);
		r = sb_error_set(err, -EIO, "libvirt domain %s: cannot subscribe to QMP events: %s", lv->name, lv_error());
		goto fail;
	}
	if (lv->cb_lifecycle < 0) {
		r = sb_error_set(err, -EIO, "libvirt domain %s: cannot subscribe to lifecycle events: %s", lv->name,
				 lv_error());
		goto fail;
	}

	r = find_pid(lv, err);
	if (r < 0)
		goto fail;
	read_proc(lv);
	read_taints(lv);
	if (cfg->spec->guest.kind == SPEC_GUEST_LINUX) {
		r = start_linux_workload(cfg, lv, err);
		if (r < 0)
			goto fail;
	}
	*ret = &lv->vm;
	return 0;
fail:
	lv_free(&lv->vm);
	return r;
}

static bool lv_gone(struct lv_vm *lv)
{
	if (lv->gone)
		return true;
	pthread_mutex_lock(&lv->shared->lock);
	bool stopped = lv->shared->stopped;
	int ev = lv->shared->stop_event, detail = lv->shared->stop_detail;
	pthread_mutex_unlock(&lv->shared->lock);
	if (stopped) {
		snprintf(lv->exit_desc, sizeof(lv->exit_desc), "domain %s", stop_reason(ev, detail));
	} else if (lv->vm.pid > 0) {
		/* polled every few ms by the runner: a signal 0, not a call into libvirtd */
		if (kill(lv->vm.pid, 0) == 0 || errno != ESRCH)
			return false;
		snprintf(lv->exit_desc, sizeof(lv->exit_desc), "domain stopped: QEMU pid %d is gone", lv->vm.pid);
	} else if (!lv->dom || virDomainIsActive(lv->dom) != 1) {
		snprintf(lv->exit_desc, sizeof(lv->exit_desc), "domain is no longer active");
	} else {
		return false;
	}
	lv->gone = true;
	lv->vm.exited = true;
	return true;
}

static bool lv_exited(struct vm *vm, char *desc, size_t len)
{
	struct lv_vm *lv = LV(vm);
	char tail[512];

	if (!lv_gone(lv))
		return false;
	if (desc && len) {
		snprintf(desc, len, "%s", lv->exit_desc);
		vm_log_tail(vm, tail, sizeof(tail));
		if (*tail) {
			size_t n = strlen(desc);
			snprintf(desc + n, len - n, "; libvirt's QEMU log says: %s", tail);
		}
	}
	return true;
}

static void lv_exit_summary(const struct vm *vm, char *buf, size_t len)
{
	const struct lv_vm *lv = (const struct lv_vm *)vm;

	snprintf(buf, len, "%s", *lv->exit_desc ? lv->exit_desc : "running");
}

static bool wait_gone(struct lv_vm *lv, uint64_t deadline)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (;;) {
		if (lv_gone(lv))
			return true;
		if (mono_ns() >= deadline)
			return false;
		nanosleep(&ts, NULL);
	}
}

/*
 * The micro guest stops cleanly on GUEST_CMD_STOP over its serial console.
 * The console stays open until the domain is gone: QEMU notices a pty
 * peer only on its next one-second poll, and a peer that already hung up
 * takes the byte with it.
 */
static void ask_guest_to_stop(struct lv_vm *lv)
{
	char cmd = GUEST_CMD_STOP;

	if (!lv->console) {
		lv->console = virStreamNew(lv->conn, 0);
		if (!lv->console)
			return;
		if (virDomainOpenConsole(lv->dom, NULL, lv->console, VIR_DOMAIN_CONSOLE_FORCE) < 0) {
			virStreamFree(lv->console);
			lv->console = NULL;
			return;
		}
	}
	if (virStreamSend(lv->console, &cmd, 1) != 1) {
		virStreamAbort(lv->console);
		virStreamFree(lv->console);
		lv->console = NULL;
	}
}

static int lv_stop(struct vm *vm, int timeout_ms, struct sb_error *err)
{
	struct lv_vm *lv = LV(vm);
	uint64_t start = mono_ns(), span = (uint64_t)(timeout_ms > 0 ? timeout_ms : 10000) * NSEC_PER_MSEC;

	int r = 0;

	if (lv->stopped || lv_gone(lv))
		return 0;
	lv->stopped = true;
	if (lv->vm.workload) {
		/* the probe's last records, stress-ng's summary; then the domain as below */
		r = linux_workload_stop(lv->vm.workload, (int)(span / 2 / NSEC_PER_MSEC), err);
		if (!lv->ours)
			return r; /* a domain we found running stays running */
		if (virDomainShutdown(lv->dom) == 0 && wait_gone(lv, start + span / 2 + span / 4))
			return r;
	} else {
		/* 1. the guest stops itself: its last telemetry record goes out, QEMU exits */
		ask_guest_to_stop(lv);
		if (wait_gone(lv, start + span / 2))
			return 0;
	}
	/* 2. SIGTERM (libvirt waits for QEMU), 3. SIGKILL */
	if (virDomainDestroyFlags(lv->dom, VIR_DOMAIN_DESTROY_GRACEFUL) == 0 && wait_gone(lv, mono_ns() + NSEC_PER_SEC))
		return sb_error_set(err, -ETIMEDOUT, "libvirt domain %s did not stop when asked; it was destroyed gracefully (SIGTERM)",
				    lv->name);
	virDomainDestroy(lv->dom);
	wait_gone(lv, mono_ns() + 5 * NSEC_PER_SEC);
	return sb_error_set(err, -ETIMEDOUT, "libvirt domain %s did not stop when asked nor on SIGTERM; it was destroyed",
			    lv->name);
}

static void lv_kill(struct vm *vm)
{
	struct lv_vm *lv = LV(vm);

	if (!lv->dom || !lv->ours || lv_gone(lv))
		return;
	virDomainDestroy(lv->dom);
	wait_gone(lv, mono_ns() + 5 * NSEC_PER_SEC);
}

static void lv_free(struct vm *vm)
{
	struct lv_vm *lv = LV(vm);

	if (!lv)
		return;
	if (lv->vm.workload) {
		linux_workload_free(lv->vm.workload);
		lv->vm.workload = NULL;
	}
	qga_client_free(lv->vm.agent);
	lv->vm.agent = NULL;
	if (lv->dom)
		lv_kill(vm);
	if (lv->shared) {
		pthread_mutex_lock(&lv->shared->lock);
		lv->shared->closing = true;
		lv->shared->qmp = NULL;
		pthread_mutex_unlock(&lv->shared->lock);
	}
	if (lv->conn) {
		if (lv->cb_qmp >= 0)
			virConnectDomainQemuMonitorEventDeregister(lv->conn, lv->cb_qmp);
		if (lv->cb_lifecycle >= 0)
			virConnectDomainEventDeregisterAny(lv->conn, lv->cb_lifecycle);
		if (lv->cb_job >= 0)
			virConnectDomainEventDeregisterAny(lv->conn, lv->cb_job);
	}
	if (lv->console) {
		virStreamAbort(lv->console);
		virStreamFree(lv->console);
	}
	qmp_client_free(vm->qmp);
	drain_free(vm->telemetry);
	if (vm->telemetry_fd >= 0)
		close(vm->telemetry_fd);
	if (lv->dom)
		virDomainFree(lv->dom);
	if (lv->conn)
		virConnectClose(lv->conn);
	if (lv->loop_held)
		loop_unref();
	shared_unref(lv->shared);
	work_remove(lv);
	for (char **p = vm->argv; p && *p; p++)
		free(*p);
	free(vm->argv);
	for (char **p = vm->taints; p && *p; p++)
		free(*p);
	free(vm->taints);
	free(vm->domain);
	free(vm->qemu_path);
	free(vm->log_path);
	free(lv->work_dir);
	free(lv->kernel_path);
	free(lv->fifo_path);
	free(lv->uri);
	free(lv->name);
	free(lv);
}

const struct vm_backend vm_backend_libvirt = {
	.name = "libvirt",
	.start = lv_start,
	.stop = lv_stop,
	.kill = lv_kill,
	.free = lv_free,
	.exited = lv_exited,
	.exit_summary = lv_exit_summary,
};
