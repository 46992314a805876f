/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How to run the micro guest under QEMU: the image's location and the
 * argument vector with the devices the guest expects (wire.h):
 *
 *   isa-debugcon at 0xe9    -> chardev "sbtel": socket, fd = telemetry_fd
 *   COM1 (-serial)          -> chardev "sbctl": socket, fd = control_fd
 *   isa-debug-exit at 0xf4  -> QEMU's exit status (guest_exit_status_to_string)
 *
 * Both chardevs take already connected stream sockets by number (e.g. one
 * end of a socketpair() each), so there are no socket paths to clean up and
 * nothing a shell ever parses. The caller starts QEMU with those fds open at
 * those numbers (without FD_CLOEXEC), reads telemetry from the peer of
 * telemetry_fd and writes GUEST_CMD_STOP to the peer of control_fd.
 */
#pragma once

#include "error.h"

struct guest_vm {
	const char *qemu;     /* NULL: "qemu-system-x86_64", found in PATH */
	const char *image;    /* the guest image (guest_image_find()) */
	const char *firmware; /* NULL: "qboot.rom" (boots in ~0.1 s), "": QEMU's default SeaBIOS */
	unsigned vcpus;       /* 1..GUEST_MAX_VCPUS */
	unsigned ram_mib;     /* >= 16 */
	const char *append;   /* guest_params_to_cmdline() */
	int telemetry_fd;     /* fd number in QEMU */
	int control_fd;       /* fd number in QEMU */
	const char *const *extra; /* more arguments (e.g. -qmp), NULL-terminated; may be NULL */
};

/* A NULL-terminated argv for execv(); free with guest_strv_free(). */
int guest_qemu_argv(const struct guest_vm *vm, char ***out, struct sb_error *err);
void guest_strv_free(char **v);
static inline void guest_strv_freep(char ***v)
{
	guest_strv_free(*v);
}
#define _cleanup_strv_ _cleanup_(guest_strv_freep)

/*
 * The guest image: $SNAPBENCH_GUEST_IMAGE when set (tests point it into
 * the build tree), else the installed PKGDATADIR/snapbench-guest.elf.
 * *out is malloc'd. -ENOENT with the fix when it is not readable.
 */
#define GUEST_IMAGE_ENV "SNAPBENCH_GUEST_IMAGE"
#define GUEST_IMAGE_NAME "snapbench-guest.elf"
int guest_image_find(char **out, struct sb_error *err);
