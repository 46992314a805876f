/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The VM a repetition runs in, behind a small backend interface: start,
 * its QMP client, its pid, stop, kill. The qemu backend launches QEMU
 * itself (an argv vector, never a shell); the libvirt backend
 * (vm-libvirt.h) runs it as a libvirt domain. vm_start() picks the one
 * spec.vm.backend names.
 *
 * The qemu backend talks to QEMU over descriptors QEMU inherits: QMP on a
 * socketpair (-mon on "-chardev socket,fd=N"), the micro guest's telemetry
 * on a pipe (isa-debugcon; guest/qemu-args.h says why a pipe) and its
 * control line (COM1) on a socketpair. Nothing has a path, so no other
 * local user can connect, nothing is left to clean up, and run directories
 * of any length work. While QEMU lives its pid is in
 * RUN_DIR/qemu.pid (for a supervisor after a crash); QEMU's stdout and
 * stderr go to RUN_DIR/qemu-TAG.log. QEMU gets PR_SET_PDEATHSIG(SIGKILL),
 * so it dies with the runner (not when it drops to vm.user: the kernel
 * clears that signal on a credential change; qemu.pid covers that case).
 * The names are reports/run-dir.h's.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "spec.h"

struct qmp_client;
struct qga_client;
struct linux_workload;
struct drain;

struct vm_config {
	const struct run_spec *spec;  /* vm section: memory, vcpus, machine, cpu, backing, user, extra_args */
	const char *qemu_binary;      /* path, or a name looked up in PATH */
	const char *guest_image;      /* the micro guest's kernel */
	const char *guest_append;     /* its -append string */
	const char *run_dir;          /* qemu.pid and the log go here */
	const char *tag;              /* names the log: qemu-TAG.log */
	const char *name;             /* QEMU -name, for ps; may be NULL */
	int connect_timeout_ms;       /* QMP greeting; <= 0: 30 s */
	int command_timeout_ms;       /* qemu backend: QMP commands; <= 0: 30 s (QMP_DEFAULT_COMMAND_TIMEOUT_MS) */
	const char *incoming;         /* qemu backend: -incoming's value ("defer": a migration's destination), or NULL */
	const char *pid_file;         /* qemu backend: its pid file in run_dir; NULL: RUN_DIR_QEMU_PID */
	unsigned dirty_ring_size;     /* qemu backend, micro guest: KVM's dirty ring (guest_vm.dirty_ring_size); 0: bitmap */
	bool spread_nodes;            /* qemu backend, memfd RAM: interleaved over every online node of this host */
	bool tcg;                     /* the guest runs under QEMU's TCG, not KVM (placement.h) */
	bool run_with_user;           /* qemu backend: spec vm.user as -run-with user= (QEMU 9.1+; 10.0 has no -runas) */
};

struct vm;

struct vm_backend {
	const char *name;
	int (*start)(const struct vm_config *cfg, struct vm **ret, struct sb_error *err);
	int (*stop)(struct vm *vm, int timeout_ms, struct sb_error *err);
	void (*kill)(struct vm *vm);
	void (*free)(struct vm *vm);
	bool (*exited)(struct vm *vm, char *desc, size_t len);         /* vm_exited() */
	void (*exit_summary)(const struct vm *vm, char *buf, size_t len); /* vm_exit_summary() */
};

struct vm {
	const struct vm_backend *backend;
	pid_t pid;
	struct qmp_client *qmp;
	int telemetry_fd;       /* the read end of the guest's telemetry pipe ... */
	struct drain *telemetry; /* ... drained by a thread from the start (drain.h): read it here */
	int control_fd;         /* our end: write GUEST_CMD_STOP to stop the guest */
	char **argv;            /* as started (NULL-terminated) */
	char *qemu_path;        /* the binary actually executed */
	char *log_path;
	char *pid_path;
	bool exited;            /* reaped */
	int wait_status;        /* when exited */
	struct qga_client *agent;          /* Linux guests: their qemu-guest-agent (qga.h) ... */
	struct linux_workload *workload;   /* ... and the workload driven through it (guest-linux.h) */
	char *domain;           /* libvirt: the domain's name; NULL for the qemu backend */
	char **taints;          /* libvirt: why it marked the domain tainted ("custom monitor ..."), NULL-terminated; may be NULL */
	bool tcg;               /* runs under QEMU's TCG: KVM has no VM to count for it */
};

/* Starts the VM of cfg->spec's backend and connects QMP. On failure nothing is left running. */
int vm_start(const struct vm_config *cfg, struct vm **ret, struct sb_error *err);

/*
 * Stops the VM within timeout_ms: asks the guest to stop, then QMP quit,
 * then SIGTERM, then SIGKILL. Always ends with the process reaped.
 * Returns < 0 only when it had to kill (err says why).
 */
int vm_stop(struct vm *vm, int timeout_ms, struct sb_error *err);

/* SIGKILL and reap, at once. */
void vm_kill(struct vm *vm);

/* Frees vm; kills it first if it still runs. NULL is fine. */
void vm_free(struct vm *vm);
static inline void vm_freep(struct vm **vm)
{
	vm_free(*vm);
}
#define _cleanup_vm_ _cleanup_(vm_freep)

/*
 * Has QEMU exited? Reaps it without blocking. When it has, desc gets
 * "exit status N (meaning)" or "killed by signal N (name)" and the last
 * lines of its log, for messages.
 */
bool vm_exited(struct vm *vm, char *desc, size_t len);

/* How the VM ended, short, for the report: "exit status 33 (...)" (qemu), "domain shut down" (libvirt). */
void vm_exit_summary(const struct vm *vm, char *buf, size_t len);

/* "exit status 1" / "killed by signal 9 (Killed)" for a wait status. */
void vm_describe_status(int wait_status, char *buf, size_t len);

/* The last lines of QEMU's log, one line, at most len bytes ("" if none). */
void vm_log_tail(const struct vm *vm, char *buf, size_t len);

/* Resolves a binary name through PATH (names with a '/' are taken as they are). */
int vm_find_binary(const char *name, char **ret, struct sb_error *err);
