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
 * Is path a RISC-V Image (magic2 "RSC\x05" at 0x38; Debian's riscv64
 * vmlinuz, arch/riscv/boot/Image)? hostvm_kernel_identify() reads its
 * release from the "Linux version" banner the uncompressed image holds.
 */
bool hostvm_kernel_is_riscv_image(const char *path);

/*
 * The bounds of an unpacked payload: a compressed payload of at most
 * HOSTVM_PAYLOAD_MAX (Debian's 6.1, 6.12 and 7.2: 8 to 14 MB), which
 * unpacks to at most the setup header's init_size (the memory the kernel's
 * own decompressor unpacks it into) and never more than HOSTVM_VMLINUX_MAX
 * (Debian's: 58 to 66 MB, so about 4 times the largest).
 */
#define HOSTVM_PAYLOAD_MAX (64u << 20)
#define HOSTVM_VMLINUX_MAX (256u << 20)

/*
 * Unpacks the bzImage's compressed payload (setup header payload_offset and
 * payload_length) into out_path, an ELF vmlinux, with the system's
 * decompressor for its format (xz, gzip, zstd, lz4, bzip2, lzma; an argv
 * vector). Returns 1 when the result has a PVH entry note (QEMU can boot it
 * directly, without the slow decompression in the emulated CPU), 0 when it
 * cannot be used (no PVH note, no decompressor, a payload larger than
 * HOSTVM_PAYLOAD_MAX: out_path removed), < 0 on I/O errors, or -EFBIG
 * naming the image when the payload unpacks to more than the bound above:
 * the decompressor is stopped there, before it writes more, and out_path
 * removed. *build_id gets the vmlinux's build id when there is one.
 */
int hostvm_kernel_extract_vmlinux(const char *image, const char *out_path, char **build_id, struct sb_error *err);

/* The GNU build id note of an ELF file, hex (malloc'ed), or -ENOENT. */
int hostvm_elf_build_id(const char *path, char **ret);
