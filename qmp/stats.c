// SPDX-License-Identifier: GPL-2.0-or-later
/* query-stats for the KVM provider: name -> int64, per VM and per vCPU. */
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "macro.h"
#include "qmp-commands.h"
#include "qmp-internal.h"
#include "strv.h"

/* StatsValue: uint64 or bool are scalars; lists (histograms) are skipped. */
static int stats_from_json(struct json_object *stats, const char *label, struct qmp_stat_set *set,
			   struct sb_error *err)
{
	size_t n = json_object_array_length(stats);

	for (size_t i = 0; i < n; i++) {
		struct json_object *stat = json_object_array_get_idx(stats, i);
		struct json_object *name = qmp_json_member(stat, "name", json_type_string);
		struct json_object *value;
		int64_t v;

		if (!name || !json_object_object_get_ex(stat, "value", &value))
			return sb_error_set(err, -EPROTO, "%s: query-stats returned a stat without name or value",
					    label);
		switch (json_object_get_type(value)) {
		case json_type_int:
			v = json_object_get_int64(value);
			break;
		case json_type_boolean:
			v = json_object_get_boolean(value) ? 1 : 0;
			break;
		default:
			set->n_skipped++;
			continue;
		}
		if (qmp_stat_set_add(set, json_object_get_string(name), (size_t)json_object_get_string_len(name), v) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

static struct json_object *stats_request(const char *target, const char *const *names)
{
	struct json_object *args = json_object_new_object();
	struct json_object *providers = json_object_new_array();
	struct json_object *kvm = json_object_new_object();
	struct json_object *list = NULL;
	bool ok = args && providers && kvm;

	if (ok && names) {
		list = json_object_new_array();
		ok = list != NULL;
		for (size_t i = 0; ok && names[i]; i++) {
			struct json_object *s = json_object_new_string(names[i]);

			ok = s && json_object_array_add(list, s) == 0;
			if (!ok)
				json_object_put(s);
		}
	}
	ok = ok && json_object_object_add(kvm, "provider", json_object_new_string("kvm")) == 0;
	if (ok && list) {
		ok = json_object_object_add(kvm, "names", list) == 0;
		if (ok)
			list = NULL;
	}
	ok = ok && json_object_array_add(providers, kvm) == 0;
	if (ok)
		kvm = NULL;
	ok = ok && json_object_object_add(args, "providers", providers) == 0;
	if (ok)
		providers = NULL;
	ok = ok && json_object_object_add(args, "target", json_object_new_string(target)) == 0;

	json_object_put(list);
	json_object_put(kvm);
	json_object_put(providers);
	if (!ok) {
		json_object_put(args);
		return NULL;
	}
	return args;
}

static int check_list(struct qmp_client *c, struct json_object **ret, struct sb_error *err)
{
	if (!json_object_is_type(*ret, json_type_array)) {
		json_object_put(*ret);
		*ret = NULL;
		return sb_error_set(err, -EPROTO, "%s: query-stats returned no list", qmp_client_label(c));
	}
	return 0;
}

static int query_stats(struct qmp_client *c, const char *target, const char *const *names,
		       struct json_object **ret, struct sb_error *err)
{
	struct json_object *args = stats_request(target, names);
	int r;

	if (!args)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = qmp_execute(c, "query-stats", args, -1, qmp_client_command_timeout(c), ret, err);
	json_object_put(args);
	if (r < 0)
		return r;
	return check_list(c, ret, err);
}

/* The KVM "stats" list of one query-stats result, or NULL for other providers. */
static struct json_object *kvm_stats_of(struct json_object *result)
{
	struct json_object *provider = qmp_json_member(result, "provider", json_type_string);

	if (!provider || strcmp(json_object_get_string(provider), "kvm"))
		return NULL;
	return qmp_json_member(result, "stats", json_type_array);
}

static int no_kvm_stats(const char *label, const char *target, struct sb_error *err)
{
	return sb_error_set(err, -ENODATA,
			    "%s reported no KVM stats for target %s: is QEMU running with -accel kvm (QEMU >= 7.1)?",
			    label, target);
}

int qmp_stats_vm_from_json(const char *label, struct json_object *reply, struct qmp_stat_set *ret,
			   struct sb_error *err)
{
	struct qmp_stat_set set = { 0 };
	bool found = false;
	int r;

	for (size_t i = 0; i < json_object_array_length(reply); i++) {
		struct json_object *stats = kvm_stats_of(json_object_array_get_idx(reply, i));

		if (!stats)
			continue;
		found = true;
		r = stats_from_json(stats, label, &set, err);
		if (r < 0)
			goto fail;
	}
	if (!found)
		return no_kvm_stats(label, "vm", err);
	*ret = set;
	return 0;
fail:
	qmp_stat_set_clear(&set);
	return r;
}

int qmp_query_stats_vm(struct qmp_client *c, const char *const *names, struct qmp_stat_set *ret,
		       struct sb_error *err)
{
	_cleanup_json_ struct json_object *reply = NULL;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = query_stats(c, "vm", names, &reply, err);
	if (r < 0)
		return r;
	return qmp_stats_vm_from_json(qmp_client_label(c), reply, ret, err);
}

static int sum_add(struct qmp_stat_set *sum, const struct qmp_stat_set *vcpu, const char *label,
		   struct sb_error *err)
{
	const char *name = NULL;
	int r = qmp_stats_sum_add(sum, vcpu, &name);

	if (r == -ERANGE)
		return sb_error_set(err, -ERANGE, "%s: the sum of KVM stat %s over vCPUs overflows 64 bits", label,
				    name);
	if (r < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

int qmp_stats_vcpu_from_json(const char *label, struct json_object *reply, struct qmp_vcpu_stats *ret,
			     struct sb_error *err)
{
	struct qmp_vcpu_stats out = { 0 };
	size_t n;
	int r;

	n = json_object_array_length(reply);
	out.vcpus = calloc(n ? n : 1, sizeof(*out.vcpus));
	if (!out.vcpus) {
		r = sb_error_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *result = json_object_array_get_idx(reply, i);
		struct json_object *stats = kvm_stats_of(result);
		struct json_object *path = qmp_json_member(result, "qom-path", json_type_string);
		struct qmp_stat_set *set = &out.vcpus[out.n_vcpus];

		if (!stats)
			continue;
		out.n_vcpus++;
		if (path) {
			set->qom_path = strdup(json_object_get_string(path));
			if (!set->qom_path) {
				r = sb_error_set(err, -ENOMEM, "out of memory");
				goto fail;
			}
		}
		r = stats_from_json(stats, label, set, err);
		if (r < 0)
			goto fail;
		r = sum_add(&out.sum, set, label, err);
		if (r < 0)
			goto fail;
		out.sum.n_skipped += set->n_skipped;
	}
	if (out.n_vcpus == 0) {
		qmp_vcpu_stats_clear(&out);
		return no_kvm_stats(label, "vcpu", err);
	}
	*ret = out;
	return 0;
fail:
	qmp_vcpu_stats_clear(&out);
	return r;
}

int qmp_query_stats_vcpu(struct qmp_client *c, const char *const *names, struct qmp_vcpu_stats *ret,
			 struct sb_error *err)
{
	_cleanup_json_ struct json_object *reply = NULL;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = query_stats(c, "vcpu", names, &reply, err);
	if (r < 0)
		return r;
	return qmp_stats_vcpu_from_json(qmp_client_label(c), reply, ret, err);
}

int qmp_query_stats_kvm(struct qmp_client *c, const char *const *vm_names, const char *const *vcpu_names,
			struct qmp_stat_set *vm, struct qmp_vcpu_stats *vcpu, struct sb_error *err)
{
	/* the replies scanned from their text where they have QEMU's plain shape (stats-scan.c) */
	struct qmp_call calls[2] = { { .command = "query-stats",
				       .args = stats_request("vm", vm_names),
				       .scan = qmp_stats_scan_vm,
				       .scan_out = vm },
				     { .command = "query-stats",
				       .args = stats_request("vcpu", vcpu_names),
				       .scan = qmp_stats_scan_vcpu,
				       .scan_out = vcpu } };
	int r;

	memset(vm, 0, sizeof(*vm));
	memset(vcpu, 0, sizeof(*vcpu));
	if (!calls[0].args || !calls[1].args)
		r = sb_error_set(err, -ENOMEM, "out of memory");
	else
		r = qmp_execute_batch(c, calls, 2, qmp_client_command_timeout(c), err);
	if (r >= 0 && !calls[0].scanned) {
		r = check_list(c, &calls[0].ret, err);
		r = r < 0 ? r : qmp_stats_vm_from_json(qmp_client_label(c), calls[0].ret, vm, err);
	}
	if (r >= 0 && !calls[1].scanned) {
		r = check_list(c, &calls[1].ret, err);
		r = r < 0 ? r : qmp_stats_vcpu_from_json(qmp_client_label(c), calls[1].ret, vcpu, err);
	}
	if (r < 0) {
		qmp_stat_set_clear(vm);
		qmp_vcpu_stats_clear(vcpu);
	}
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
		json_object_put(calls[i].args);
		json_object_put(calls[i].ret);
	}
	return r;
}

int qmp_query_stats_names(struct qmp_client *c, const char *target, const char *type, char ***ret,
			  struct sb_error *err)
{
	_cleanup_json_ struct json_object *reply = NULL;
	_cleanup_strv_free_ char **names = NULL;
	struct json_object *args = json_object_new_object();
	bool found = false;
	int r;

	*ret = NULL;
	if (!args || json_object_object_add(args, "provider", json_object_new_string("kvm")) < 0) {
		json_object_put(args);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	r = qmp_execute(c, "query-stats-schemas", args, -1, qmp_client_command_timeout(c), &reply, err);
	json_object_put(args);
	if (r < 0)
		return r;
	if (!json_object_is_type(reply, json_type_array))
		return sb_error_set(err, -EPROTO, "%s: query-stats-schemas returned no list", qmp_client_label(c));
	for (size_t i = 0; i < json_object_array_length(reply); i++) {
		struct json_object *schema = json_object_array_get_idx(reply, i);
		struct json_object *t = qmp_json_member(schema, "target", json_type_string);
		struct json_object *stats = qmp_json_member(schema, "stats", json_type_array);
		struct json_object *provider = qmp_json_member(schema, "provider", json_type_string);

		/* provider is optional in the reply: the request already asked for kvm's only */
		if (!t || !stats || strcmp(json_object_get_string(t), target) ||
		    (provider && strcmp(json_object_get_string(provider), "kvm")))
			continue;
		found = true;
		for (size_t k = 0; k < json_object_array_length(stats); k++) {
			struct json_object *st = json_object_array_get_idx(stats, k);
			struct json_object *name = qmp_json_member(st, "name", json_type_string);
			struct json_object *ty = qmp_json_member(st, "type", json_type_string);

			if (!name || !ty)
				return sb_error_set(err, -EPROTO,
						    "%s: query-stats-schemas returned a stat without name or type",
						    qmp_client_label(c));
			if (strcmp(json_object_get_string(ty), type) ||
			    strv_contains(names, json_object_get_string(name)))
				continue;
			if (strv_push(&names, json_object_get_string(name)) < 0)
				return sb_error_set(err, -ENOMEM, "out of memory");
		}
	}
	if (!found)
		return no_kvm_stats(qmp_client_label(c), target, err);
	if (!names) {
		names = calloc(1, sizeof(*names));
		if (!names)
			return sb_error_set(err, -ENOMEM, "out of memory");
	}
	*ret = TAKE_PTR(names);
	return 0;
}
