/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A host VM (docs/kernel-arms.md): QEMU booting a kernel under test with
 * an initramfs, 9p shares (this host's / read-only as its root, a writable
 * directory for the results) and one virtio-serial port on a socketpair
 * for its progress. QEMU is an argv vector, never a shell; its stdout and
 * stderr, with the VM's serial console, go to a log file; it gets
 * PR_SET_PDEATHSIG(SIGKILL) and its pid is written next to the log while
 * it lives, so it dies with the runner and recovery can find it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define HOSTVM_PORT_NAME "org.snapbench.progress"
#define HOSTVM_MAX_SHARES 4

struct hostvm_share {
	const char *tag;
	const char *path;
	bool readonly;
};

struct hostvm_config {
	const char *qemu_binary;    /* a path, or a name looked up in PATH; NULL: QEMU_DEFAULT_BINARY */
	const char *kernel, *initrd, *append;
	uint64_t memory;            /* bytes */
	unsigned vcpus, numa_nodes; /* vCPUs and memory split evenly over the nodes */
	const char *accel;          /* "kvm" or "tcg" */
	bool icount;                /* tcg, one vCPU: -icount shift=0, the guest's clocks count instructions, 1 ns each */
	const char *log_path;       /* console and QEMU's own output */
	const char *pid_path;       /* QEMU's pid while it runs; may be NULL */
	const char *name;           /* QEMU -name; may be NULL */
	const char *firmware;       /* QEMU -bios (qboot for a PVH boot); NULL: QEMU's default (SeaBIOS) */
	const char *arch;           /* NULL or "x86_64"; "riscv64": qemu-system-riscv64 -M virt, H extension, OpenSBI */
	size_t n_shares;
	struct hostvm_share shares[HOSTVM_MAX_SHARES];
};

struct hostvm {
	pid_t pid;
	int port_fd;                /* our end of the progress port (nonblocking) */
	char **argv;                /* as started, NULL-terminated */
	uint64_t start_ns;          /* CLOCK_MONOTONIC at fork */
	char *log_path, *pid_path;
	bool exited;
	int wait_status;
	char line[8192];            /* a partial line from the port */
	size_t line_len;
};

/*
 * Which accelerator: "kvm" with nested virtualization when /dev/kvm opens
 * and kvm_amd/kvm_intel has nested=1 with svm/vmx in /proc/cpuinfo; else
 * "tcg". requested: "auto", "kvm" (an error when nested is not there) or
 * "tcg". vendor gets "amd" or "intel": the KVM module the host VM loads
 * (TCG emulates AMD's svm). reason says why, for the report.
 */
int hostvm_choose_accel(const char *requested, const char *sysroot, char accel[static 8], char vendor[static 8],
			char *reason, size_t reason_len, struct sb_error *err);

/* The riscv64 host VM's QEMU and firmware (Debian's qemu-system-misc and opensbi) */
#define HOSTVM_RISCV64_QEMU "qemu-system-riscv64"
#define HOSTVM_RISCV64_FIRMWARE "/usr/share/qemu/opensbi-riscv64-generic-fw_dynamic.bin"

/* Is arch (a host_vm.arch, an arm's arch) riscv64? NULL and "x86_64" are not. */
bool hostvm_arch_riscv64(const char *arch);

/* The QEMU argv for cfg (NULL-terminated, each malloc'ed); port_fd is the child's fd number of the port socket. */
int hostvm_argv(const struct hostvm_config *cfg, const char *qemu, int port_fd, char ***ret, struct sb_error *err);

int hostvm_start(const struct hostvm_config *cfg, struct hostvm **ret, struct sb_error *err);

/* Calls line() for each whole line the port has; 0, or -EPIPE when the port closed. */
int hostvm_read_port(struct hostvm *vm, void (*line)(const char *text, void *userdata), void *userdata);

/* Has QEMU exited (reaped without blocking)? */
bool hostvm_exited(struct hostvm *vm);
/* Waits up to timeout_ms for QEMU to exit by itself; then SIGKILL. Returns 0, or -ETIMEDOUT when it was killed. */
int hostvm_wait(struct hostvm *vm, int timeout_ms);
/* SIGKILL and reap. */
void hostvm_kill(struct hostvm *vm);
void hostvm_free(struct hostvm *vm);

/* The last lines of a console log (from a kernel panic's first line when there is one), joined with " | ", at most len bytes ("" if none). */
void hostvm_console_tail(const char *log_path, unsigned lines, char *buf, size_t len);
