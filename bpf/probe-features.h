/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the running kernel lets us attach, found out by doing it: each probe
 * loads a two-instruction program of the backend's type, attaches it to
 * the tracepoint or function, and detaches it again. A failure comes back
 * as a negative errno with a message that says what was refused and, where
 * known, why.
 */
#pragma once

#include <stddef.h>

#include "error.h"

struct btf;

/* tp_btf: needs BTF type btf_trace_<name> in vmlinux BTF. */
int feature_tp_btf(const struct btf *vmlinux, const char *name, struct sb_error *err);

/* raw tracepoint <name>. */
int feature_raw_tp(const char *name, struct sb_error *err);

/*
 * Classic tracepoint category:name through tracefs, mounting tracefs at
 * /sys/kernel/tracing when no tracefs is mounted. On success *id is the
 * event id for perf_event_open().
 */
int feature_tracepoint(const char *category, const char *name, unsigned long long *id, struct sb_error *err);

/* fentry on kernel function <name>. */
int feature_fentry(const struct btf *vmlinux, const char *name, struct sb_error *err);

/*
 * The tracefs events directory ("/sys/kernel/tracing/events" or the debugfs
 * one), mounting tracefs if none is mounted.
 */
int tracefs_events_dir(char *buf, size_t size, struct sb_error *err);
