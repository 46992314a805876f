// SPDX-License-Identifier: GPL-2.0-or-later
/* The libvirt VM backend: the micro guest in a transient domain (vm-libvirt.h); its other concerns are vm-libvirt-*.c (vm-libvirt-private.h). */
#include "vm-libvirt.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/libvirt.h>
#include <pthread.h>
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
#include "fileio.h"
#include "guest-linux.h"
#include "macro.h"
#include "qga.h"
#include "qmp.h"
#include "vm.h"
#include "strv.h"
#include "vm-libvirt-private.h"
#include "wire.h"

#define WORK_BASE_ROOT "/run/snapbench"
#define LOG_DIR "/var/log/libvirt/qemu"
#define TELEMETRY_NAME "telemetry"
#define KERNEL_NAME "guest.elf"
#define TAINT_MAX 16

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

static struct lv_vm *LV(struct vm *vm)
{
	return (struct lv_vm *)vm;
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

/* ---- facts about the running domain --------------------------------------------- */

/* QEMU's pid: the thread group of vCPU 0's thread, which must be a live process. */
static int find_pid(struct lv_vm *lv, struct sb_error *err)
{
	struct json_object *ret = NULL, *cpu, *tid;
	char path[64];
	pid_t tgid;
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
	tgid = proc_tgid((pid_t)json_object_get_int64(tid));
	json_object_put(ret);
	if (tgid <= 0)
		return sb_error_set(err, -ESRCH, "libvirt domain %s: vCPU thread %s is not a process on this host",
				    lv->name, path);
	lv->vm.pid = tgid;
	return 0;
}

/* argv and binary of QEMU as it runs, from /proc (for the report) */
static void read_proc(struct lv_vm *lv)
{
	char path[64], buf[4096];
	ssize_t k;

	snprintf(path, sizeof(path), "/proc/%d/exe", lv->vm.pid);
	k = readlink(path, buf, sizeof(buf) - 1);
	if (k > 0) {
		buf[k] = '\0';
		lv->vm.qemu_path = strdup(buf);
	}
	if (proc_cmdline(lv->vm.pid, PROC_CMDLINE_MAX, &lv->vm.argv) < 0)
		lv->vm.argv = NULL; /* the report then has no argv for it */
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
	strv_free(lv->vm.taints);
	lv->vm.taints = v;
}

/* A Linux guest's domain: a transient one from XML, or an existing one by name. */
static int start_linux_domain(const struct vm_config *cfg, struct lv_vm *lv, struct sb_error *err)
{
	const struct run_spec *s = cfg->spec;
	int r;

	if (s->vm.libvirt.xml) {
		_cleanup_free_ char *xml = NULL;
		r = lv_read_domain_xml(s->vm.libvirt.xml, &xml, err);
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

/* The micro guest's kernel and telemetry FIFO where libvirt's QEMU user (uid, gid) can reach them, then its transient domain. */
static int start_micro_domain(const struct vm_config *cfg, struct lv_vm *lv, unsigned uid, unsigned gid,
			      struct sb_error *err)
{
	_cleanup_free_ char *xml = NULL;
	_cleanup_close_ int fifo_w = -1;
	char base[4096];
	int r;

	if (geteuid() != 0 && uid != geteuid())
		return sb_error_set(err, -EPERM,
				    "libvirt at %s runs QEMU as uid %u: only root can hand it the guest's files; run snapbench as root or use qemu:///session",
				    lv->uri, uid);

	/* the guest's kernel and telemetry FIFO, where QEMU's user can reach them */
	r = work_base(base, sizeof(base), err);
	if (r < 0)
		return r;
	if (asprintf(&lv->work_dir, "%s/vm-XXXXXX", base) < 0) {
		lv->work_dir = NULL;
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	if (!mkdtemp(lv->work_dir)) {
		r = sb_error_set(err, -errno, "%s: cannot create it: %s", lv->work_dir, strerror(errno));
		free(lv->work_dir);
		lv->work_dir = NULL;
		return r;
	}
	if (chmod(lv->work_dir, 0711) < 0 || asprintf(&lv->kernel_path, "%s/%s", lv->work_dir, KERNEL_NAME) < 0 ||
	    asprintf(&lv->fifo_path, "%s/%s", lv->work_dir, TELEMETRY_NAME) < 0)
		return sb_error_set(err, -ENOMEM, "%s: cannot prepare it", lv->work_dir);
	r = copy_file(cfg->guest_image, lv->kernel_path, err);
	if (r < 0)
		return r;
	if (mkfifo(lv->fifo_path, 0600) < 0 || (geteuid() == 0 && chown(lv->fifo_path, uid, gid) < 0))
		return sb_error_set(err, -errno, "telemetry FIFO %s: %s", lv->fifo_path, strerror(errno));
	/* our read end, and a write end held until QEMU has opened its own, so the reader sees no early EOF */
	lv->vm.telemetry_fd = open(lv->fifo_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (lv->vm.telemetry_fd >= 0)
		fifo_w = open(lv->fifo_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (lv->vm.telemetry_fd < 0 || fifo_w < 0)
		return sb_error_set(err, -errno, "telemetry FIFO %s: %s", lv->fifo_path, strerror(errno));
	(void)fcntl(lv->vm.telemetry_fd, F_SETPIPE_SZ, 1 << 20);
	r = drain_start(lv->vm.telemetry_fd, &lv->vm.telemetry);
	if (r < 0)
		return sb_error_set(err, r, "cannot start the telemetry reader: %s", strerror(-r));

	r = lv_domain_xml(cfg, lv, cfg->qemu_binary && strchr(cfg->qemu_binary, '/') ? cfg->qemu_binary : NULL, &xml);
	if (r < 0)
		return sb_error_set(err, r, "out of memory");
	if (asprintf(&lv->vm.log_path, "%s/%s.log", LOG_DIR, lv->name) < 0)
		lv->vm.log_path = NULL;

	/* AUTODESTROY: if snapbench dies, libvirtd destroys the domain when our connection drops */
	lv->dom = virDomainCreateXML(lv->conn, xml, VIR_DOMAIN_START_AUTODESTROY);
	if (!lv->dom)
		return sb_error_set(err, -ECHILD, "libvirt at %s could not start domain %s: %s", lv->uri, lv->name, lv_error());
	lv->ours = true;
	return 0;
}

/* QMP through libvirt, and the events: each registration holds a reference to the shared state, dropped by libvirt. */
static int connect_monitor(struct lv_vm *lv, struct sb_error *err)
{
	char label[300];
	int r;

	snprintf(label, sizeof(label), "libvirt domain %s", lv->name);
	r = qmp_client_new_with_ops(&lv_qmp_ops, lv, label, NULL, &lv->vm.qmp, err);
	if (r < 0)
		return r;
	qmp_client_set_command_timeout(lv->vm.qmp, lv->command_timeout_ms);
	pthread_mutex_lock(&lv->shared->lock);
	lv->shared->qmp = lv->vm.qmp;
	pthread_mutex_unlock(&lv->shared->lock);

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
		return sb_error_set(err, -EIO, "libvirt domain %s: cannot subscribe to QMP events: %s", lv->name, lv_error());
	}
	if (lv->cb_lifecycle < 0)
		return sb_error_set(err, -EIO, "libvirt domain %s: cannot subscribe to lifecycle events: %s", lv->name,
				    lv_error());
	return 0;
}

static int lv_start(const struct vm_config *cfg, struct vm **ret, struct sb_error *err)
{
	struct lv_vm *lv;
	unsigned uid, gid;
	int r;

	lv = calloc(1, sizeof(*lv));
	if (!lv)
		return sb_error_set(err, -ENOMEM, "out of memory");
	lv->vm.backend = &vm_backend_libvirt;
	lv->vm.tcg = cfg->tcg;
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

	r = lv_loop_ref(err);
	if (r < 0)
		goto fail;
	lv->loop_held = true;
	r = lv_connect_uri(lv->uri, &lv->conn, err);
	if (r < 0)
		goto fail;
	r = lv_ids_from_conn(lv->conn, lv->uri, &uid, &gid);
	if (r < 0) {
		r = sb_error_set(err, r, "libvirt at %s: cannot read its capabilities: %s", lv->uri, lv_error());
		goto fail;
	}
	if (cfg->spec->guest.kind == SPEC_GUEST_LINUX)
		r = start_linux_domain(cfg, lv, err);
	else
		r = start_micro_domain(cfg, lv, uid, gid, err);
	if (r < 0)
		goto fail;
	r = connect_monitor(lv, err);
	if (r < 0)
		goto fail;
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
		lv_loop_unref();
	shared_unref(lv->shared);
	work_remove(lv);
	strv_free(vm->argv);
	strv_free(vm->taints);
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
