/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared between the files of qmp/; not part of the library's API. */
#pragma once

#include <json-c/json.h>

#include "qmp.h"
#include "qmp-commands.h"

/* o's member key if it exists and has type, else NULL. */
struct json_object *qmp_json_member(struct json_object *o, const char *key, enum json_type type);

/* Fill ret from a VersionInfo object ({"qemu": {...}, "package": ...}); -EPROTO without "qemu". */
int qmp_version_from_json(struct json_object *info, struct qmp_version *ret);

/* Append name (len bytes, copied) = value to set; -ENOMEM. */
int qmp_stat_set_add(struct qmp_stat_set *set, const char *name, size_t len, int64_t value);

/* Add one vCPU's stats to sum by name; -ERANGE (*overflow: the stat) when a sum overflows, -ENOMEM. */
int qmp_stats_sum_add(struct qmp_stat_set *sum, const struct qmp_stat_set *vcpu, const char **overflow);

/*
 * The query-stats fast path (stats-scan.c): a reply's whole text, which
 * answers want_id (NULL: a whole-message transport's, any id or none), into a struct qmp_stat_set (target vm) or a struct
 * qmp_vcpu_stats (target vcpu) as the json-c path fills it. 1: taken;
 * 0: declined (anything but the plain shape QEMU sends), *ret cleared, for
 * json-c to parse; -ENOMEM.
 */
int qmp_stats_scan_vm(const char *text, size_t len, const char *want_id, void *ret);
int qmp_stats_scan_vcpu(const char *text, size_t len, const char *want_id, void *ret);

/*
 * The json-c path: a query-stats "return" list (target vm, vcpu) into the
 * sets; label names QEMU in errors (-EPROTO, -ENODATA: no KVM result).
 */
int qmp_stats_vm_from_json(const char *label, struct json_object *reply, struct qmp_stat_set *ret,
			   struct sb_error *err);
int qmp_stats_vcpu_from_json(const char *label, struct json_object *reply, struct qmp_vcpu_stats *ret,
			     struct sb_error *err);
