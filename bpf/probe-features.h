/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the running kernel lets us attach, found out by doing it: each probe
 * loads a two-instruction program of the backend's type, attaches it to
 * the tracepoint or function, and detaches it again. A failure comes back
 * as a negative errno with a message that says what was refused and, where
 * known, why.
 */
#pragma once

#include <linux/types.h>
#include <stddef.h>

#include "error.h"

struct btf;

/*
 * A kernel BTF type: in vmlinux (obj_fd -1, module "") or in a loaded
 * module's BTF (obj_fd: that BTF object, to pass as attach_btf_obj_fd;
 * module: its name, e.g. "kvm"). Distribution kernels build KVM as modules,
 * so its tracepoints and functions are only in the modules' BTF.
 */
struct kernel_btf_target {
	__u32 id;
	int obj_fd;
	char module[64];
};

/*
 * The kernel's BTF for lookups by name: vmlinux's (the caller's, kept
 * until kernel_btf_free()) and the loaded modules', each read once and
 * indexed on its first lookup. vmlinux may be NULL: then nothing is found.
 */
struct kernel_btf;
struct kernel_btf *kernel_btf_new(const struct btf *vmlinux);
const struct btf *kernel_btf_vmlinux(const struct kernel_btf *kb);
void kernel_btf_free(struct kernel_btf *kb);

/* The id of name of BTF kind in vmlinux's BTF; -ENOENT if not there, -ENOMEM. */
int kernel_btf_find_vmlinux(struct kernel_btf *kb, const char *name, __u32 kind);
/* Find name of BTF kind in vmlinux, else in a module; -ENOENT if in neither (-ENOMEM: out of memory). */
int kernel_btf_find(struct kernel_btf *kb, const char *name, __u32 kind, struct kernel_btf_target *t);
void kernel_btf_target_done(struct kernel_btf_target *t);

/*
 * tp_btf: needs BTF type btf_trace_<name> in vmlinux's or a module's BTF.
 * On success origin holds where it was found ("vmlinux", "module kvm").
 */
int feature_tp_btf(struct kernel_btf *kb, const char *name, char *origin, size_t origin_size,
		   struct sb_error *err);

/* raw tracepoint <name>. */
int feature_raw_tp(const char *name, struct sb_error *err);

/*
 * Classic tracepoint category:name through tracefs, mounting tracefs at
 * /sys/kernel/tracing when no tracefs is mounted. On success *id is the
 * event id for perf_event_open().
 */
int feature_tracepoint(const char *category, const char *name, unsigned long long *id, struct sb_error *err);

/* fentry on kernel function <name>, from vmlinux's or a module's BTF; origin as for tp_btf. */
int feature_fentry(struct kernel_btf *kb, const char *name, char *origin, size_t origin_size,
		   struct sb_error *err);

/*
 * The tracefs events directory ("/sys/kernel/tracing/events" or the debugfs
 * one), mounting tracefs if none is mounted.
 */
int tracefs_events_dir(char *buf, size_t size, struct sb_error *err);
