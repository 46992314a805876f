// SPDX-License-Identifier: GPL-2.0-or-later
/* The identity of a kernel image (kernel-id.h). */
#include "kernel-id.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void kernel_id_done(struct kernel_id *k)
{
	if (!k)
		return;
	free(k->image);
	free(k->release);
	free(k->version);
	free(k->build_id);
	free(k->config_path);
	free(k->config_sha256);
	*k = (struct kernel_id){};
}

/* a copy of s in *d (NULL for NULL); false when out of memory */
static int dup_or_null(const char *s, char **d)
{
	*d = s ? strdup(s) : NULL;
	return !s || *d;
}

int kernel_id_copy(const struct kernel_id *src, struct kernel_id *dst)
{
	struct kernel_id k = {};

	if (!dup_or_null(src->image, &k.image) || !dup_or_null(src->release, &k.release) ||
	    !dup_or_null(src->version, &k.version) || !dup_or_null(src->build_id, &k.build_id) ||
	    !dup_or_null(src->config_path, &k.config_path) || !dup_or_null(src->config_sha256, &k.config_sha256)) {
		kernel_id_done(&k);
		return -ENOMEM;
	}
	*dst = k;
	return 0;
}
