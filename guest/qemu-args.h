/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How to run the micro guest under QEMU: the image's location and the
 * argument vector with the devices the guest expects (wire.h):
 *
 *   isa-debugcon at 0xe9    -> chardev "sbtel": a file chardev on fd telemetry_fd
 *                              (-add-fd, /dev/fdset/N), the write end of a pipe
 *   COM1 (-serial)          -> chardev "sbctl": socket, fd = control_fd
 *   isa-debug-exit at 0xf4  -> QEMU's exit status (guest_exit_status_to_string)
 *
 * The caller starts QEMU with those fds open at those numbers (without
 * FD_CLOEXEC), reads telemetry from the pipe's read end and writes
 * GUEST_CMD_STOP to the peer of control_fd (one end of a socketpair()). No
 * paths to clean up, nothing a shell ever parses.
 *
 * Why a pipe: QEMU's isa-debugcon writes every byte with its own write(),
 * from the vCPU thread, holding QEMU's global lock. On a socket each byte
 * costs a whole buffer slot, so an unread socket fills after a few hundred
 * bytes and QEMU stops answering QMP; a pipe packs the bytes into pages.
 * Still, keep reading: when the pipe is full the guest and QMP stall.
 */
#pragma once

#include "error.h"
#include "strv.h"

struct guest_vm {
	const char *qemu;     /* NULL: QEMU_DEFAULT_BINARY, found in PATH */
	const char *image;    /* the guest image (guest_image_find()) */
	const char *firmware; /* NULL: "qboot.rom" (boots in ~0.1 s), "": QEMU's default SeaBIOS */
	unsigned vcpus;       /* 1..GUEST_MAX_VCPUS */
	unsigned ram_mib;     /* >= 16 */
	const char *append;   /* guest_params_to_cmdline() */
	int telemetry_fd;     /* fd number in QEMU: guest_telemetry_pipe()'s write end */
	int control_fd;       /* fd number in QEMU */
	const char *const *extra; /* more arguments (e.g. -qmp), NULL-terminated; may be NULL */
	unsigned dirty_ring_size; /* 0: KVM's dirty bitmap; else -accel kvm,dirty-ring-size=N (entries per vCPU) */
	bool tcg;             /* QEMU's TCG instead of KVM (no dirty ring then) */
};

/*
 * A pipe for telemetry, both ends O_CLOEXEC, grown to
 * GUEST_TELEMETRY_PIPE_SIZE when the system allows (else the default
 * 64 KiB). fds[0] is the host's read end, fds[1] goes to QEMU.
 */
#define GUEST_TELEMETRY_PIPE_SIZE (1 << 20) /* minutes of telemetry at the default interval */
int guest_telemetry_pipe(int fds[2], struct sb_error *err);

/* The firmware when none is named: qboot boots in ~0.1 s. */
#define GUEST_FIRMWARE_DEFAULT "qboot.rom"

/* A NULL-terminated argv for execv(); free with strv_free() (strv.h). */
int guest_qemu_argv(const struct guest_vm *vm, char ***out, struct sb_error *err);

/*
 * The firmware and devices of the list above, for a caller that writes the
 * rest of QEMU's command line itself (the libvirt backend's domain XML,
 * whose <serial> element is the control line): -bios qboot.rom, the
 * telemetry chardev on the file telemetry_path (append=on) with its
 * isa-debugcon, and isa-debug-exit. NULL-terminated; free with strv_free().
 */
int guest_qemu_device_args(const char *telemetry_path, char ***out, struct sb_error *err);

/*
 * The guest image: $SNAPBENCH_GUEST_IMAGE when set (tests point it into
 * the build tree), else the installed PKGDATADIR/snapbench-guest.elf.
 * *out is malloc'd. -ENOENT with the fix when it is not readable.
 */
#define GUEST_IMAGE_ENV "SNAPBENCH_GUEST_IMAGE"
#define GUEST_IMAGE_NAME "snapbench-guest.elf"
int guest_image_find(char **out, struct sb_error *err);
