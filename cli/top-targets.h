/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What snapbench top finds out about the VMs it shows, from /proc: the
 * processes on this host that hold a KVM VM, a QEMU's -name, and the QMP
 * sockets a QEMU listens on according to its command line. The parsers
 * take an argv so that the unit test can feed them command lines; nothing
 * here connects anywhere or prints.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The processes that hold a KVM VM (an fd on anon_inode:kvm-vm), self
 * left out, in ascending pid order: *found of them in *ret (malloc'ed,
 * NULL when there are none). Processes that vanish or whose fds we may
 * not read while we look are skipped. 0, or -errno when /proc cannot be
 * read or -ENOMEM (*ret and *found untouched).
 */
int top_find_vms(pid_t self, pid_t **ret, size_t *found);

/* Whether pid holds a KVM VM. */
bool top_holds_kvm_vm(pid_t pid);

/*
 * QEMU's -name (guest=NAME, or its first element) made fit for a row
 * prefix: letters, digits and ._- kept, anything else '_', at most
 * size - 1 bytes; "" when argv has no -name.
 */
void top_qemu_name(char *const *argv, char *buf, size_t size);

/*
 * The unix sockets a QEMU serves QMP on according to its argv: -qmp and
 * -qmp-pretty unix:PATH with server on, in their order, then those of
 * -chardev socket,id=ID,path=PATH,server=on used by -mon
 * chardev=ID,mode=control. A socket QEMU connects to (no server) is
 * someone else's and left out, as are fd=, abstract and TCP sockets.
 * *libvirt is set when a control monitor is libvirt's (its chardev
 * "charmonitor"): that socket is libvirt's own connection to QEMU and
 * never taken. Paths are as QEMU got them (maybe relative to its working
 * directory). *ret is a string vector, empty when there are none; 0 or
 * -ENOMEM.
 */
int top_qmp_sockets(char *const *argv, char ***ret, bool *libvirt);

/* The thread group (process) of thread tid, from /proc/TID/status; -1 when there is no such thread. */
pid_t top_tgid_of(pid_t tid);
