/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the libvirt VM backend (vm-libvirt.h), one file per concern:
 *
 *   vm-libvirt.c            the backend: start, events, stop, the domain's facts
 *   vm-libvirt-conn.c       the process-wide event loop, connections, the ids QEMU runs as
 *   vm-libvirt-preflight.c  the host checks before a run (libvirt_preflight())
 *   vm-libvirt-xml.c        the micro guest's domain XML, a Linux guest's XML file
 *   vm-libvirt-monitor.c    QMP and the guest agent through libvirt, with timeouts
 *   vm-libvirt-domain.c     a running domain's pid and KVM stats, for snapbench top
 */
#pragma once

#include <libvirt/libvirt.h>
#include <stdbool.h>

#include "error.h"
#include "vm.h"

struct lv_shared;
struct qga_transport_ops;
struct qmp_transport_ops;
struct qmp_stat_set;

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


/* ---- vm-libvirt-conn.c ---- */

/* Holds libvirt's event loop thread (started with the first holder, ended with the last). */
int lv_loop_ref(struct sb_error *err);
void lv_loop_unref(void);
/* libvirt's last error message, never NULL or empty. */
const char *lv_error(void);
/* Opens uri; the error names spec.vm.libvirt.uri and how to start libvirtd. */
int lv_connect_uri(const char *uri, virConnectPtr *ret, struct sb_error *err);
/* The uid and gid libvirt at uri runs QEMU as (libvirt_qemu_ids() on an open connection). */
int lv_ids_from_conn(virConnectPtr conn, const char *uri, unsigned *uid, unsigned *gid);

/* ---- vm-libvirt-xml.c ---- */

/*
 * The micro guest's transient domain: lv's name, kernel and telemetry FIFO,
 * cfg's VM, emulator (NULL: libvirt's default). -ENOMEM.
 */
int lv_domain_xml(const struct vm_config *cfg, const struct lv_vm *lv, const char *emulator, char **ret);
/* A Linux guest's domain XML from spec.vm.libvirt.xml (at most 1 MiB). */
int lv_read_domain_xml(const char *path, char **ret, struct sb_error *err);

/* ---- vm-libvirt-monitor.c ---- */

/* QMP (qmp_client_new_with_ops()) and the guest agent (qga_client_new_with_ops()) of an lv_vm. */
extern const struct qmp_transport_ops lv_qmp_ops;
extern const struct qga_transport_ops lv_agent_ops;

/* ---- vm-libvirt-domain.c ---- */

/*
 * The cumulative KVM stats among a domain's typed parameters (one record
 * of virDomainListGetStats()): "vm.NAME.sum" into vm, "vcpu.N.NAME.sum"
 * summed over N into vcpu_sum; other keys, and non-integer values, are
 * left out. 0, -ENOMEM, or -ERANGE when a sum overflows.
 */
int lv_kvm_stats_from_params(const virTypedParameter *params, int n, struct qmp_stat_set *vm,
			     struct qmp_stat_set *vcpu_sum);
