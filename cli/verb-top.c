// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench top: kvm_stat's live table for a QEMU, from the BPF probes
 * (bpf/): every counter and, with attribution, every cause of
 * invalidations and remote shootdowns as a row with its total since the
 * start, its share of its group's total and its current rate; and, as a
 * group of their own, KVM's own cumulative stats (kvm.NAME) from QMP
 * query-stats or libvirt (top-kvm.c). The target is a pid, a QMP socket
 * or a libvirt domain; without one, every VM on the host (top-targets.c),
 * each with its own probes. Refreshed every interval: on a terminal the
 * screen is redrawn; elsewhere the tables follow each other; --json
 * prints one object a line. This file runs the refreshes; top.h says
 * which room does the rest.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "exit-codes.h"
#include "probe-session.h"
#include "top.h"
#include "verb-args.h"
#include "verbs.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* One interval, in steps short enough for Ctrl-C to end it at once; false when it did. */
static bool wait_interval(const struct top_args *a)
{
	for (int left = (int)(a->interval_s * 1000); left > 0 && !stop_requested; left -= 50)
		poll(NULL, 0, left < 50 ? left : 50);
	return !stop_requested;
}

/*
 * No VM on the host yet: as the help says, a VM that starts comes in, so wait
 * for one, scanning every interval, saying once why there is none (and when
 * this host has no /dev/kvm, that none can start until KVM is there). Gives
 * up with exit 4 after --count intervals; Ctrl-C ends it with 0.
 */

static int wait_for_vm(struct top *t, int *first_fail)
{
	char kvm[160] = "";
	int r;

	if (access("/dev/kvm", F_OK) < 0)
		snprintf(kvm, sizeof(kvm), "; /dev/kvm: %s: no KVM VM can start here until KVM is loaded (modprobe kvm_amd "
			 "or kvm_intel, or nested virtualization for this VM)", strerror(errno));
	verb_message("no process on this host holds a KVM VM yet (an fd on anon_inode:kvm-vm)%s; waiting for one, "
		     "scanning every %g s (Ctrl-C stops; or give --pid, --qmp or --vm)", kvm, t->a->interval_s);
	for (unsigned n = 0; !stop_requested && (!t->a->count || n < t->a->count); n++) {
		if (!wait_interval(t->a))
			break;
		r = top_rescan(t, 0, first_fail);
		if (r != EXIT_OK || t->found)
			return r;
	}
	if (stop_requested)
		return EXIT_OK;
	verb_error("no process on this host held a KVM VM (an fd on anon_inode:kvm-vm) in %u refresh%s%s: start one, or "
		   "give --pid, --qmp or --vm", t->a->count, t->a->count == 1 ? "" : "es", kvm);
	return EXIT_UNAVAILABLE;
}

/* No target: every VM on the host up to the cap, each with its own probes. */
static int open_all(struct top *t)
{
	int first_fail = EXIT_OK, r;

	r = top_rescan(t, 0, &first_fail);
	if (r != EXIT_OK)
		return r;
	if (!t->found) {
		r = wait_for_vm(t, &first_fail);
		if (r != EXIT_OK || !t->found)
			return r;
	}
	if (t->found > TOP_MAX_VMS)
		verb_message("%zu processes hold a KVM VM: showing the %d with the lowest pids; give --pid for another",
			     t->found, TOP_MAX_VMS);
	if (!t->n_vms) {
		verb_error("none of the %zu VMs on this host could be probed (see above)", t->found);
		return first_fail;
	}
	return EXIT_OK;
}

static void top_free(struct top *t)
{
	for (size_t i = 0; t->vms && i < TOP_MAX_VMS; i++)
		top_vm_clear(&t->vms[i]);
	free(t->vms);
	free(t->refused);
}

/* One refresh's reads of v; false when v can no longer be read (it is then gone). */
static bool read_vm(struct top *t, struct top_vm *v, int *ret)
{
	struct sb_error err = { 0 };

	if (sb_probes_read(v->p, &v->cur, &err) < 0) {
		if (!t->all) {
			verb_error("%s", err.msg);
			*ret = EXIT_FAIL;
		} else {
			verb_message("pid %d: %s; left out from now", (int)v->pid, err.msg);
		}
		v->gone = true;
		return false;
	}
	if (v->kvm && top_kvm_read(v->kvm, &v->kcur, &err) < 0) {
		/* QEMU exiting closes its socket first: that is said below as the process exits */
		if (probe_session_target_alive(v->pid))
			verb_message("pid %d: KVM stats lost, the probes' rows only from now: %s", (int)v->pid, err.msg);
		top_drop_kvm(v, err.msg);
	}
	top_make_rows(v, t->a);
	return true;
}

/* This interval's reads become the previous ones; a target that exited is gone. Returns the VMs still live. */
static size_t next_interval(struct top *t)
{
	size_t live = 0;

	for (size_t i = 0; i < t->n_vms; i++) {
		struct top_vm *v = &t->vms[i];

		if (v->gone)
			continue;
		v->prev = v->cur;
		if (v->kvm) {
			v->kprev.mono_ns = v->kcur.mono_ns;
			memcpy(v->kprev.values, v->kcur.values, top_kvm_count(v->kvm) * sizeof(*v->kprev.values));
		}
		if (!t->all && !probe_session_target_alive(sb_probes_target(v->p))) {
			fprintf(stderr, "snapbench top: pid %d exited\n", (int)sb_probes_target(v->p));
			v->gone = true;
			continue;
		}
		live++;
	}
	return live;
}

static int run(struct top_args *a)
{
	struct top t = { .a = a, .all = !a->pid && !a->qmp && !a->vm };
	struct sb_error err = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	bool tty = isatty(STDOUT_FILENO) && !a->json;
	int r, ret = EXIT_OK;

	r = probe_session_check_privileges();
	if (r != EXIT_OK)
		return r;
	t.vms = calloc(TOP_MAX_VMS, sizeof(*t.vms));
	if (!t.vms) {
		verb_error("out of memory");
		return EXIT_FAIL;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	r = t.all ? open_all(&t) : top_open_one(&t);
	if (r != EXIT_OK || (t.all && !t.found)) /* stopped while waiting for a VM */
		goto out;
	/* no target: open_all() has read each VM it took */
	if (!t.all && top_vm_start(&t.vms[0], 0, &err) < 0) {
		verb_error("%s", err.msg);
		r = EXIT_FAIL;
		goto out;
	}
	t.t0_ns = mono_ns();
	for (unsigned n = 0; !stop_requested && (!a->count || n < a->count); n++) {
		size_t live = 0;

		if (!wait_interval(a))
			break;
		for (size_t i = 0; i < t.n_vms; i++)
			if (!t.vms[i].gone)
				live += read_vm(&t, &t.vms[i], &ret);
		if (ret != EXIT_OK || (!live && !t.all))
			break;
		double elapsed = (double)(mono_ns() - t.t0_ns) / 1e9;
		/* no target: the VMs that exited leave, those started since come in (an empty host is watched on) */
		if (t.all) {
			int refused = EXIT_OK;

			ret = top_rescan(&t, elapsed, &refused);
			if (ret != EXIT_OK)
				break;
		}
		ret = top_print_refresh(&t, elapsed, tty, n);
		if (ret != EXIT_OK)
			break;
		t.n_added = t.n_exited = 0;
		if (!next_interval(&t) && !t.all)
			break;
	}
	r = ret;
out:
	top_free(&t);
	return r;
}

static int top_main(int argc, char **argv)
{
	struct top_args a;
	int r = top_parse_argv(argc, argv, &a);

	if (r == ARGS_GO_ON)
		r = run(&a);
	top_args_done(&a);
	return r;
}

const struct verb verb_top = {
	.name = "top",
	.summary = "kvm_stat's live table of a QEMU's KVM and MMU-notifier counters and their causes (BPF)",
	.run = top_main,
};
