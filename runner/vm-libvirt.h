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

#include "error.h"
#include "spec.h"

struct vm_config;
struct vm;

/* vm.h's backend table entry for libvirt. */
extern const struct vm_backend vm_backend_libvirt;

/*
 * Preflight for the libvirt backend: libvirtd answers at spec's URI, and
 * the user libvirt runs QEMU as (its DAC base label) can use /dev/kvm and
 * userfaultfd (background snapshots need write-protect faults:
 * vm.unprivileged_userfaultfd=1 for a non-root QEMU, or /dev/userfaultfd
 * access with QEMU 8.0 or later). Each failure is passed to fail() with
 * the input at fault and the fix; returns the number of failures.
 */
int libvirt_preflight(const struct run_spec *spec, void (*fail)(void *ctx, int code, const char *msg), void *ctx);

/*
 * The uid and gid libvirt at uri runs QEMU as, from the host capabilities'
 * DAC base label ("+64055:+64055"); the caller's own ids for a session
 * URI or when libvirt gives none.
 */
int libvirt_qemu_ids(const char *uri, unsigned *uid, unsigned *gid, struct sb_error *err);

/* The first QEMU version that opens /dev/userfaultfd when userfaultfd() is refused. */
#define LIBVIRT_QEMU_UFFD_DEV_VERSION 8000000
