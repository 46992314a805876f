// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The scanner's property, for its test and its fuzz target: whatever text
 * it takes, json-c's path takes too and gives the same sets.
 */
#include "stats-scan-check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-stream.h"
#include "qmp-internal.h"

#define CHECK_ID "sb-7"

static int same_set(const struct qmp_stat_set *a, const struct qmp_stat_set *b, const char *what, char *why,
		    size_t why_size)
{
	if (a->n != b->n || a->n_skipped != b->n_skipped || !a->qom_path != !b->qom_path ||
	    (a->qom_path && strcmp(a->qom_path, b->qom_path))) {
		snprintf(why, why_size, "%s: %zu stats (path %s) scanned, %zu (path %s) parsed", what, a->n,
			 a->qom_path ? a->qom_path : "none", b->n, b->qom_path ? b->qom_path : "none");
		return -1;
	}
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->stats[i].name, b->stats[i].name) || a->stats[i].value != b->stats[i].value) {
			snprintf(why, why_size, "%s: stat %zu is %s=%lld scanned, %s=%lld parsed", what, i,
				 a->stats[i].name, (long long)a->stats[i].value, b->stats[i].name,
				 (long long)b->stats[i].value);
			return -1;
		}
	return 0;
}

/* json-c's path as the client takes a reply to id CHECK_ID: its "return", then the target's conversion */
static int parsed(const char *text, size_t len, bool vcpu, struct qmp_stat_set *vm, struct qmp_vcpu_stats *vs)
{
	struct json_object *msg = NULL, *id, *ret;
	struct sb_error err = { 0 };
	int r = -1;

	if (json_parse_bounded(text, len, 1u << 20, 64, "check", &msg, &err) < 0)
		return -1;
	if (json_object_is_type(msg, json_type_object) && !json_object_object_get_ex(msg, "event", NULL) &&
	    !json_object_object_get_ex(msg, "error", NULL) && json_object_object_get_ex(msg, "id", &id) &&
	    json_object_is_type(id, json_type_string) && !strcmp(json_object_get_string(id), CHECK_ID) &&
	    json_object_object_get_ex(msg, "return", &ret) && json_object_is_type(ret, json_type_array))
		r = vcpu ? qmp_stats_vcpu_from_json("check", ret, vs, &err) : qmp_stats_vm_from_json("check", ret, vm, &err);
	json_object_put(msg);
	return r;
}

int qmp_stats_scan_check(const char *text, size_t len, char *why, size_t why_size)
{
	int taken = 0;

	why[0] = '\0';
	for (int vcpu = 0; vcpu < 2; vcpu++) {
		struct qmp_stat_set vm = { 0 }, vm2 = { 0 };
		struct qmp_vcpu_stats vs = { 0 }, vs2 = { 0 };
		int s, p, bad = 0;

		s = vcpu ? qmp_stats_scan_vcpu(text, len, CHECK_ID, &vs) : qmp_stats_scan_vm(text, len, CHECK_ID, &vm);
		if (s < 0)
			return -2; /* out of memory */
		if (s == 0 && (vm.n || vm.stats || vs.n_vcpus || vs.vcpus || vs.sum.n)) {
			snprintf(why, why_size, "declined but left its output filled");
			return -1;
		}
		if (s == 1) {
			taken++;
			p = parsed(text, len, vcpu, &vm2, &vs2);
			if (p < 0) {
				snprintf(why, why_size, "taken as target %s, but json-c's path refuses it",
					 vcpu ? "vcpu" : "vm");
				bad = -1;
			} else if (!vcpu) {
				bad = same_set(&vm, &vm2, "vm", why, why_size);
			} else if (vs.n_vcpus != vs2.n_vcpus) {
				snprintf(why, why_size, "%zu vCPUs scanned, %zu parsed", vs.n_vcpus, vs2.n_vcpus);
				bad = -1;
			} else {
				bad = same_set(&vs.sum, &vs2.sum, "the sum", why, why_size);
				for (size_t i = 0; i < vs.n_vcpus && !bad; i++)
					bad = same_set(&vs.vcpus[i], &vs2.vcpus[i], "a vCPU", why, why_size);
			}
		}
		qmp_stat_set_clear(&vm);
		qmp_stat_set_clear(&vm2);
		qmp_vcpu_stats_clear(&vs);
		qmp_vcpu_stats_clear(&vs2);
		if (bad)
			return -1;
	}
	return taken > 0;
}
