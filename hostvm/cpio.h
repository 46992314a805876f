/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A writer of cpio "newc" archives, the format the kernel unpacks as its
 * initramfs (Documentation/driver-api/early-userspace/buffer-format.rst):
 * per entry a 110-byte ASCII header, the name, the data, each padded to 4
 * bytes; "TRAILER!!!" ends the archive. Uncompressed: the kernel takes it as
 * it is, and a few MiB of modules do not need more.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct cpio;

/* Writes to fd (not closed by cpio_free). */
int cpio_new(int fd, struct cpio **ret);
void cpio_free(struct cpio *c);
static inline void cpio_freep(struct cpio **c)
{
	cpio_free(*c);
}
#define _cleanup_cpio_ _cleanup_(cpio_freep)

/* name: relative ("init", "lib/x.ko"); mode includes the file type bits. */
int cpio_add_dir(struct cpio *c, const char *name, mode_t perm, struct sb_error *err);
int cpio_add_data(struct cpio *c, const char *name, mode_t perm, const void *data, size_t len, struct sb_error *err);
/* The contents of the file at path (at most 256 MiB). */
int cpio_add_file(struct cpio *c, const char *name, mode_t perm, const char *path, struct sb_error *err);
int cpio_add_chardev(struct cpio *c, const char *name, mode_t perm, unsigned major, unsigned minor,
		     struct sb_error *err);
/* The trailer; nothing may be added after it. */
int cpio_finish(struct cpio *c, struct sb_error *err);
