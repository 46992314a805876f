/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What identifies a kernel image: the one record the host VM's reader of a
 * bzImage fills (hostvm/kernel-image.h) and a report keeps per kernel arm
 * (reports/report.h struct report_kernel, docs/kernel-arms.md#the-report).
 */
#pragma once

struct kernel_id {
	char *image;          /* the path as given */
	char *release;        /* "6.1.0-57-amd64" */
	char *version;        /* the whole version string */
	char *build_id;       /* hex, or NULL when not known */
	char *config_path;    /* NULL: no config found */
	char *config_sha256;  /* with config_path */
};

/* Frees the strings and zeroes k; NULL is fine. */
void kernel_id_done(struct kernel_id *k);

/* A deep copy of src into *dst; -ENOMEM, and *dst untouched, when out of memory. */
int kernel_id_copy(const struct kernel_id *src, struct kernel_id *dst);
