// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench top's targets: the one VM of --pid (with the QMP socket its
 * command line names, each proved to be its QEMU's), --qmp (the QEMU
 * behind the socket) or --vm (a libvirt domain's QEMU and its stats
 * through libvirt); without one, every VM on the host (top-targets.c),
 * scanned again every refresh, each with its own probes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exit-codes.h"
#include "fileio.h"
#include "macro.h"
#include "probe-session.h"
#include "qmp.h"
#include "strv.h"
#include "top-targets.h"
#include "top.h"
#include "verb-args.h"
#include "vm-libvirt.h"

/* an explicit --qmp: as long as a busy QEMU may take to greet */
#define QMP_TIMEOUT_MS 5000
/* a socket found on the command line: it may be held by another client, which must not stall top long */
#define QMP_FOUND_TIMEOUT_MS 1000
#define LIBVIRT_URI "qemu:///system"

void top_drop_kvm(struct top_vm *v, const char *why)
{
	snprintf(v->kvm_reason, sizeof(v->kvm_reason), "%s", why);
	top_kvm_free(v->kvm);
	v->kvm = NULL;
}

/* Takes kvm as v's source of KVM stats, with its first read; on failure v has none and says why. */
static void take_kvm(struct top_vm *v, struct top_kvm *kvm)
{
	struct sb_error err = { 0 };

	v->kvm = kvm;
	if (top_kvm_sample_alloc(kvm, &v->kfirst) < 0 || top_kvm_sample_alloc(kvm, &v->kprev) < 0 ||
	    top_kvm_sample_alloc(kvm, &v->kcur) < 0) {
		top_drop_kvm(v, "out of memory");
		return;
	}
	if (top_kvm_read(kvm, &v->kfirst, &err) < 0) {
		top_drop_kvm(v, err.msg);
		return;
	}
	v->kprev.mono_ns = v->kfirst.mono_ns;
	memcpy(v->kprev.values, v->kfirst.values, top_kvm_count(kvm) * sizeof(*v->kprev.values));
}

/* The exit code for a --qmp SOCKET that top cannot use, having said why. */
static int qmp_failed(const char *path, int r, const struct sb_error *err)
{
	switch (r) {
	case -ENOENT:
		verb_error("--qmp %s: no such socket: give the path of a running QEMU's -qmp unix:PATH,server=on socket",
			   path);
		return EXIT_UNAVAILABLE;
	case -ENOTSOCK:
		verb_error("--qmp %s is not a socket: give the path of QEMU's -qmp unix:PATH,server=on socket", path);
		return EXIT_USAGE;
	case -EBADMSG:
	case -EPROTO:
	case -EMSGSIZE:
		verb_error("--qmp %s is not a QMP socket (%s): give the path of QEMU's -qmp unix:PATH,server=on socket",
			   path, err->msg);
		return EXIT_USAGE;
	case -EINVAL:
	case -ENAMETOOLONG:
		verb_error("--qmp %s: %s", path, err->msg);
		return EXIT_USAGE;
	case -ETIMEDOUT:
		verb_error("--qmp %s: %s (or it is no QMP socket)", path, err->msg);
		return EXIT_UNAVAILABLE;
	default:
		verb_error("--qmp %s: %s", path, err->msg);
		return EXIT_UNAVAILABLE;
	}
}

/* --qmp: the socket, and the QEMU behind it (with --pid: the same one). */
static int open_qmp(const struct top_args *a, struct top_vm *v)
{
	struct qmp_client *c = NULL;
	struct top_kvm *kvm = NULL;
	struct sb_error err = { 0 };
	pid_t pid;
	int r;

	r = top_qmp_connect(a->qmp, QMP_TIMEOUT_MS, &c, &err);
	if (r < 0)
		return qmp_failed(a->qmp, r, &err);
	r = top_qmp_pid(c, &pid, &err);
	if (r < 0) {
		verb_error("--qmp %s: %s", a->qmp, err.msg);
		qmp_client_free(c);
		return r == -ESRCH ? EXIT_UNAVAILABLE : EXIT_FAIL;
	}
	if (a->pid) {
		pid_t want = top_tgid_of((pid_t)a->pid);

		if (want <= 0) {
			verb_error("--pid %lu: no such process", a->pid);
			qmp_client_free(c);
			return EXIT_UNAVAILABLE;
		}
		if (want != pid) {
			verb_error("--qmp %s is the QMP socket of QEMU pid %d, not of --pid %lu: give that QEMU's socket, or drop --pid",
				   a->qmp, (int)pid, a->pid);
			qmp_client_free(c);
			return EXIT_USAGE;
		}
	}
	v->pid = pid;
	r = top_kvm_open_qmp(c, a->qmp, &kvm, &err);
	if (r < 0) {
		verb_message("--qmp %s: no KVM stats, the probes' rows only: %s", a->qmp, err.msg);
		snprintf(v->kvm_reason, sizeof(v->kvm_reason), "%s", err.msg);
	} else {
		take_kvm(v, kvm);
	}
	return EXIT_OK;
}

/* A socket path from QEMU's command line as we can reach it: a relative one is QEMU's working directory's. */
static int qemu_path(pid_t pid, const char *path, char *buf, size_t size)
{
	char link[64], cwd[4096];
	ssize_t n;

	if (path[0] == '/')
		return snprintf(buf, size, "%s", path) < (int)size ? 0 : -ENAMETOOLONG;
	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	n = readlink(link, cwd, sizeof(cwd) - 1);
	if (n <= 0)
		return -errno;
	cwd[n] = '\0';
	return snprintf(buf, size, "%s/%s", cwd, path) < (int)size ? 0 : -ENAMETOOLONG;
}

static void reason_add(char *reason, size_t size, const char *fmt, ...) _printf_(3, 4);
static void reason_add(char *reason, size_t size, const char *fmt, ...)
{
	size_t n = strlen(reason);
	va_list ap;

	if (n && n + 2 < size) {
		strcpy(reason + n, "; ");
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(reason + n, size - n, fmt, ap);
	va_end(ap);
}

/*
 * --pid alone: KVM's stats from a QMP socket QEMU's command line names.
 * Each is taken only once it proves to be this QEMU's (query-cpus-fast),
 * since a command line can name any path; libvirt's monitor is left alone.
 */
static void find_qmp(struct top_vm *v)
{
	_cleanup_strv_free_ char **argv = NULL, **paths = NULL;
	char path[4096 + 128];
	bool libvirt = false;
	int r;

	r = proc_cmdline(v->pid, PROC_CMDLINE_MAX, &argv);
	if (r < 0) {
		snprintf(v->kvm_reason, sizeof(v->kvm_reason), "cannot read QEMU's command line: %s", strerror(-r));
		return;
	}
	if (top_qmp_sockets(argv, &paths, &libvirt) < 0) {
		snprintf(v->kvm_reason, sizeof(v->kvm_reason), "out of memory");
		return;
	}
	for (size_t i = 0; paths[i]; i++) {
		struct qmp_client *c = NULL;
		struct top_kvm *kvm = NULL;
		struct sb_error err = { 0 };
		pid_t pid;

		if (qemu_path(v->pid, paths[i], path, sizeof(path)) < 0) {
			reason_add(v->kvm_reason, sizeof(v->kvm_reason), "%s: cannot resolve it", paths[i]);
			continue;
		}
		r = top_qmp_connect(path, QMP_FOUND_TIMEOUT_MS, &c, &err);
		if (r >= 0)
			r = top_qmp_pid(c, &pid, &err);
		if (r >= 0 && pid != v->pid)
			r = sb_error_set(&err, -ESRCH, "%s serves QEMU pid %d, not this one", path, (int)pid);
		if (r < 0) {
			qmp_client_free(c);
			reason_add(v->kvm_reason, sizeof(v->kvm_reason), "%s", err.msg);
			continue;
		}
		r = top_kvm_open_qmp(c, path, &kvm, &err);
		if (r < 0) {
			/* this QEMU's own answer: another of its sockets would give the same */
			snprintf(v->kvm_reason, sizeof(v->kvm_reason), "%s", err.msg);
			return;
		}
		v->kvm_reason[0] = '\0';
		verb_message("KVM stats from QMP socket %s (on QEMU's command line); top holds it while it runs, "
			     "as QEMU serves one QMP client per socket (--no-qmp leaves it alone)",
			     path);
		take_kvm(v, kvm);
		return;
	}
	if (v->kvm_reason[0])
		return;
	if (libvirt) {
		char name[sizeof(v->name)];

		top_qemu_name(argv, name, sizeof(name));
		snprintf(v->kvm_reason, sizeof(v->kvm_reason),
			 "QEMU's QMP monitor is libvirt's: give --vm %s (its domain) for KVM's stats through libvirt",
			 name[0] ? name : "NAME");
	}
	else
		snprintf(v->kvm_reason, sizeof(v->kvm_reason),
			 "no QMP socket on QEMU's command line (-qmp unix:PATH,server=on): give --qmp SOCKET");
}

/* --vm: the domain's QEMU (its KVM stats come once its probes are open). */
static int open_domain(const struct top_args *a, struct top_vm *v)
{
	struct sb_error err = { 0 };
	int r;

	r = libvirt_domain_open(LIBVIRT_URI, a->vm, &v->dom, &err);
	if (r < 0) {
		verb_error("--vm %s: %s", a->vm, err.msg);
		switch (r) {
		case -EINVAL:
			return EXIT_USAGE;
		case -EACCES:
		case -EPERM:
			return EXIT_DENIED;
		default:
			return EXIT_UNAVAILABLE;
		}
	}
	v->pid = libvirt_domain_pid(v->dom);
	return EXIT_OK;
}

static void domain_kvm(const struct top_args *a, struct top_vm *v)
{
	struct top_kvm *kvm = NULL;
	struct sb_error err = { 0 };

	if (top_kvm_open_libvirt(v->dom, &kvm, &err) < 0) {
		verb_message("--vm %s: no KVM stats, the probes' rows only: %s", a->vm, err.msg);
		snprintf(v->kvm_reason, sizeof(v->kvm_reason), "%s", err.msg);
		return;
	}
	take_kvm(v, kvm);
}

void top_vm_clear(struct top_vm *v)
{
	sb_probes_close(v->p);
	top_kvm_free(v->kvm);
	libvirt_domain_close(v->dom);
	free(v->kfirst.values);
	free(v->kprev.values);
	free(v->kcur.values);
	free(v->rows);
	memset(v, 0, sizeof(*v));
}

/* v's probes are open: its rows' room and its first read, the start of its totals; -errno with err set. */
int top_vm_start(struct top_vm *v, double since_s, struct sb_error *err)
{
	v->rows = calloc(TOP_MAX_ROWS + (v->kvm ? top_kvm_count(v->kvm) : 0), sizeof(*v->rows));
	if (!v->rows)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (sb_probes_read(v->p, &v->first, err) < 0)
		return -EIO;
	v->prev = v->cur = v->first;
	v->since_s = since_s;
	return 0;
}

static int cmp_vm_pid(const void *x, const void *y)
{
	pid_t a = ((const struct top_vm *)x)->pid, b = ((const struct top_vm *)y)->pid;

	return a < b ? -1 : a > b;
}

static int cmp_pid(const void *x, const void *y)
{
	pid_t a = *(const pid_t *)x, b = *(const pid_t *)y;

	return a < b ? -1 : a > b;
}

static bool pid_in(const pid_t *pids, size_t n, pid_t pid)
{
	return n && bsearch(&pid, pids, n, sizeof(*pids), cmp_pid);
}

/* Takes the VM pid into the next free slot, its probes open and first read; the exit code, err saying why. */
static int add_vm(struct top *t, pid_t pid, double since_s, struct sb_error *err)
{
	struct top_vm *v = &t->vms[t->n_vms];
	_cleanup_strv_free_ char **argv = NULL;
	int r;

	v->pid = pid;
	if (proc_cmdline(pid, PROC_CMDLINE_MAX, &argv) == 0)
		top_qemu_name(argv, v->name, sizeof(v->name));
	snprintf(v->prefix, sizeof(v->prefix), "%d:%s%s", (int)pid, v->name, v->name[0] ? ":" : "");
	r = probe_session_attach(pid, &t->a->opts, &v->p, err);
	if (r == EXIT_OK && top_vm_start(v, since_s, err) < 0)
		r = EXIT_FAIL;
	if (r != EXIT_OK) {
		top_vm_clear(v);
		return r;
	}
	t->n_vms++;
	return EXIT_OK;
}

static void event_add(struct top_event *ev, size_t *n, const struct top_vm *v)
{
	ev[*n].pid = v->pid;
	snprintf(ev[*n].name, sizeof(ev[*n].name), "%s", v->name);
	(*n)++;
}

/*
 * No target: the host scanned again. The VMs whose process no longer
 * holds a KVM VM leave (their probes closed), and so do those whose reads
 * failed; the VMs that started since come in, the lowest pids first, while
 * fewer than the cap are shown; a VM that refused its probes is not tried
 * again while it runs. What left and came is kept for the next refresh.
 * The exit code of the first VM that could not be probed in *first_fail.
 */
int top_rescan(struct top *t, double since_s, int *first_fail)
{
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0, kept = 0;
	int r;

	r = top_find_vms(getpid(), &pids, &n);
	if (r < 0) {
		verb_error("cannot read /proc: %s", strerror(-r));
		return EXIT_FAIL;
	}
	t->found = n;
	/* the refused that still run stay refused, the rest are forgotten: the list never outgrows the host's VMs */
	for (size_t i = 0; i < t->n_refused; i++)
		if (pid_in(pids, n, t->refused[i]))
			t->refused[kept++] = t->refused[i];
	t->n_refused = kept;
	if (n > kept) {
		pid_t *p = realloc(t->refused, n * sizeof(*p));

		if (!p) {
			verb_error("out of memory");
			return EXIT_FAIL;
		}
		t->refused = p;
	}
	for (size_t i = 0; i < t->n_vms;) {
		struct top_vm *v = &t->vms[i];
		bool running = pid_in(pids, n, v->pid);

		if (running && !v->gone) {
			i++;
			continue;
		}
		if (!running)
			event_add(t->exited, &t->n_exited, v);
		else
			t->refused[t->n_refused++] = v->pid; /* its probes failed while it runs: once is enough */
		top_vm_clear(v);
		memmove(v, v + 1, (t->n_vms - i - 1) * sizeof(*v));
		t->n_vms--;
		memset(&t->vms[t->n_vms], 0, sizeof(*v));
	}
	for (size_t i = 0; i < n && t->n_vms < TOP_MAX_VMS; i++) {
		struct sb_error err = { 0 };
		bool shown = false;

		for (size_t k = 0; k < t->n_vms && !shown; k++)
			shown = t->vms[k].pid == pids[i];
		for (size_t k = 0; k < t->n_refused && !shown; k++)
			shown = t->refused[k] == pids[i];
		if (shown)
			continue;
		r = add_vm(t, pids[i], since_s, &err);
		if (r != EXIT_OK) {
			/* one VM that went away or refuses the probes does not hide the others */
			verb_message("pid %d left out: %s", (int)pids[i], err.msg);
			if (*first_fail == EXIT_OK)
				*first_fail = r;
			t->refused[t->n_refused++] = pids[i];
			continue;
		}
		if (t->t0_ns) {
			struct top_vm *v = &t->vms[t->n_vms - 1];

			event_add(t->added, &t->n_added, v);
			top_make_rows(v, t->a); /* all zero until its next read, but the VM is in the table from now */
		}
	}
	qsort(t->vms, t->n_vms, sizeof(*t->vms), cmp_vm_pid);
	return EXIT_OK;
}

int top_open_one(struct top *t)
{
	const struct top_args *a = t->a;
	struct top_vm *v = &t->vms[0];
	struct sb_error err = { 0 };
	int r = EXIT_OK;

	if (a->vm)
		r = open_domain(a, v);
	else if (a->qmp)
		r = open_qmp(a, v);
	else
		v->pid = (pid_t)a->pid;
	if (r != EXIT_OK)
		return r;
	t->n_vms = 1;
	r = probe_session_attach(v->pid, &a->opts, &v->p, &err);
	if (r != EXIT_OK) {
		verb_error("%s", err.msg);
		return r;
	}
	/* the process is now known to hold a KVM VM: only then look for its QMP socket */
	v->pid = sb_probes_target(v->p);
	if (a->vm)
		domain_kvm(a, v);
	else if (!a->qmp && !a->no_qmp)
		find_qmp(v);
	return EXIT_OK;
}
