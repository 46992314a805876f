/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The libvirt VM backend (vm.h): the micro guest in a transient domain
 * made from a template, on a local libvirt (qemu:///system or
 * qemu:///session). docs/backends.md describes it; in short:
 *
 *  - QMP goes through virDomainQemuMonitorCommandWithFiles() (the snapshot
 *    sink's fd travels with getfd), each call on a helper thread so every
 *    command has a timeout, which libvirt's API lacks. libvirt records the
 *    domain as tainted ("custom-monitor"); the report says so.
 *  - QMP events (MIGRATION, STOP, ...) come from
 *    virConnectDomainQemuMonitorEventRegister(), lifecycle and job events
 *    from virConnectDomainEventRegisterAny(), all on one process-wide
 *    thread running virEventRunDefaultImpl() while any libvirt VM exists.
 *  - The micro guest's telemetry (isa-debugcon) goes to a FIFO in a private
 *    directory under /run/snapbench (root) that libvirt's QEMU user may
 *    write; the guest's kernel is copied there too, so QEMU never needs to
 *    reach into a build tree or a home directory. Its control line (COM1)
 *    is a pty serial port reached through virDomainOpenConsole().
 *  - QEMU's pid (for the BPF probes) is the thread group of a vCPU thread
 *    (query-cpus-fast), checked against /proc.
 *  - Transient domains are created with VIR_DOMAIN_START_AUTODESTROY: if
 *    snapbench dies, libvirtd destroys them when the connection drops.
 */
#pragma once

#include <sys/types.h>

#include "error.h"
#include "spec.h"

struct vm_config;
struct vm;
struct qmp_stat_set;

/* vm.h's backend table entry for libvirt. */
extern const struct vm_backend vm_backend_libvirt;

/*
 * Whether this program has the libvirt backend (runner_dep does,
 * snapbench-hostvm-run's runner_core_dep does not), and what a spec for it
 * is told otherwise (%s: the program's name).
 */
bool vm_libvirt_linked(void);
#define VM_NO_LIBVIRT_MSG                                                                                   \
	"spec.vm.backend: \"libvirt\": %s is built without the libvirt backend (it runs kernel arms' qemu " \
	"backend inside a host VM); run the spec with snapbench, or use backend \"qemu\""

/*
 * Preflight for the libvirt backend: libvirtd answers at spec's URI, and
 * the user libvirt runs QEMU as (its DAC base label) can use /dev/kvm (not
 * asked with tcg: the domain then runs under TCG, libvirt's type 'qemu') and
 * userfaultfd (background snapshots need write-protect faults:
 * vm.unprivileged_userfaultfd=1 for a non-root QEMU, or /dev/userfaultfd
 * access with QEMU 8.0 or later). Each failure is passed to fail() with
 * the input at fault and the fix; returns the number of failures.
 */
int libvirt_preflight(const struct run_spec *spec, bool tcg, void (*fail)(void *ctx, int code, const char *msg), void *ctx);

/*
 * The uid and gid libvirt at uri runs QEMU as, from the host capabilities'
 * DAC base label ("+64055:+64055"); the caller's own ids for a session
 * URI or when libvirt gives none.
 */
int libvirt_qemu_ids(const char *uri, unsigned *uid, unsigned *gid, struct sb_error *err);

/* The first QEMU version that opens /dev/userfaultfd when userfaultfd() is refused. */
#define LIBVIRT_QEMU_UFFD_DEV_VERSION 8000000

/*
 * A domain that runs already, looked at from outside a run (snapbench top
 * --vm): its QEMU's pid and KVM's stats, nothing started, stopped or sent
 * to its monitor, so libvirt does not mark the domain tainted as monitor
 * passthrough would (vm-libvirt-domain.c).
 *
 * libvirt_domain_open() connects to uri, finds the domain (-ENOENT when
 * there is none of that name, -ESRCH when it is not running) and its
 * QEMU's pid: libvirt's API has no call for it, so from the pid file
 * libvirt keeps for a qemu:///system domain (/run/libvirt/qemu/NAME.pid,
 * readable by root), checked against that process's -name guest=NAME.
 * Other URIs give -EOPNOTSUPP. -ECONNREFUSED when libvirtd does not answer.
 */
struct libvirt_domain;

int libvirt_domain_open(const char *uri, const char *name, struct libvirt_domain **ret, struct sb_error *err);
pid_t libvirt_domain_pid(const struct libvirt_domain *d);
/* "libvirt domain NAME", for messages and as the stats' source */
const char *libvirt_domain_label(const struct libvirt_domain *d);

/*
 * KVM's cumulative stats of the domain, as libvirt reads them from QEMU's
 * query-stats (virDomainListGetStats(), groups VM and VCPU: "vm.NAME.sum"
 * and "vcpu.N.NAME.sum"): the VM's in *vm, the vCPUs' summed by name in
 * *vcpu_sum (both cleared first; qmp_stat_set_clear() frees them).
 * -ENODATA when libvirt reports none (it needs libvirt >= 8.9 and QEMU >=
 * 7.1 with KVM), -EOPNOTSUPP when built against an older libvirt.
 */
int libvirt_domain_kvm_stats(struct libvirt_domain *d, struct qmp_stat_set *vm, struct qmp_stat_set *vcpu_sum,
			     struct sb_error *err);

void libvirt_domain_close(struct libvirt_domain *d);
