/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What kernel an image is, for validation and the report: an x86 bzImage's
 * setup header ("HdrS" at 0x202) points at its version string
 * (kernel_version at 0x20e, relative to 0x200), whose first word is the
 * release ("6.1.0-57-amd64"). A vmlinux beside the image (a kernel tree:
 * arch/x86/boot/bzImage and ./vmlinux) gives the GNU build id; a config
 * beside it (Debian's /boot/config-RELEASE, a tree's .config) its SHA-256.
 */
#pragma once

#include <stdbool.h>

#include "error.h"
#include "kernel-id.h"

/*
 * Reads the image at path into *ret (build_id NULL when no vmlinux sits
 * beside the image). Errors name the file and say what it is not. Free
 * *ret with kernel_id_done().
 */
int hostvm_kernel_identify(const char *path, struct kernel_id *ret, struct sb_error *err);

/*
 * Unpacks the bzImage's compressed payload (setup header payload_offset and
 * payload_length) into out_path, an ELF vmlinux, with the system's
 * decompressor for its format (xz, gzip, zstd, lz4, bzip2, lzma; an argv
 * vector). Returns 1 when the result has a PVH entry note (QEMU can boot it
 * directly, without the slow decompression in the emulated CPU), 0 when it
 * cannot be used (no PVH note, no decompressor: out_path removed), < 0 on
 * I/O errors. *build_id gets the vmlinux's build id when there is one.
 */
int hostvm_kernel_extract_vmlinux(const char *image, const char *out_path, char **build_id, struct sb_error *err);

/* The GNU build id note of an ELF file, hex (malloc'ed), or -ENOENT. */
int hostvm_elf_build_id(const char *path, char **ret);
