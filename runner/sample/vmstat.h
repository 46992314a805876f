/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host's /proc/vmstat as a source of report counters: NUMA balancing's
 * work (PTEs made PROT_NONE, hinting faults, local ones, pages migrated)
 * and page migrations, as vmstat.NAME. They are host-wide, every process's
 * and not only the VM's QEMU: what seed 002's NUMA-hinting zaps cost the
 * whole host. The values are cumulative since the source was opened, like
 * the sampler's other sources. A field the kernel does not have (no
 * CONFIG_NUMA_BALANCING) is unavailable in the report's probes, with why.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "report.h"

/* The read buffer: /proc/vmstat is about 6 KiB on 6.x kernels. */
#define VMSTAT_READ_MAX (32 * 1024)

enum vmstat_field {
	VMSTAT_NUMA_PTE_UPDATES,
	VMSTAT_NUMA_HUGE_PTE_UPDATES,
	VMSTAT_NUMA_HINT_FAULTS,
	VMSTAT_NUMA_HINT_FAULTS_LOCAL,
	VMSTAT_NUMA_PAGES_MIGRATED,
	VMSTAT_PGMIGRATE_SUCCESS,
	VMSTAT_N_FIELDS,
};

struct vmstat_values {
	uint64_t value[VMSTAT_N_FIELDS];
	bool present[VMSTAT_N_FIELDS];
};

/* The /proc/vmstat name of field f ("numa_hint_faults"). */
const char *vmstat_field_name(enum vmstat_field f);

/*
 * Parses the text of /proc/vmstat ("NAME VALUE\n" lines): the fields above
 * that are present, other lines ignored. -EBADMSG, naming the line, for a
 * field whose value is not a decimal integer, a field given twice, or text
 * that does not end in a newline (a truncated read); path names the file in
 * the message.
 */
int vmstat_parse(const char *text, size_t len, const char *path, struct vmstat_values *ret, struct sb_error *err);

typedef int (*vmstat_emit_fn)(void *userdata, const char *name, uint64_t cumulative);

struct vmstat_source;

/*
 * Reads path (NULL: /proc/vmstat) once, as the start of every counter, and
 * records each counter's probe in r: available with its source, or why not
 * (the field is absent; the file cannot be read). Fails only for lack of
 * memory: a file that cannot be read leaves *ret NULL, its counters
 * unavailable with the reason.
 */
int vmstat_source_open(const char *path, struct report *r, struct vmstat_source **ret, struct sb_error *err);

/* Emits each present counter's increase since the open (vmstat.NAME). */
int vmstat_source_read(struct vmstat_source *s, vmstat_emit_fn emit, void *userdata, struct sb_error *err);

void vmstat_source_free(struct vmstat_source *s);
