// SPDX-License-Identifier: GPL-2.0-or-later
/* KVM's own stats of one VM for snapbench top (top-kvm.h): QMP query-stats or libvirt's bulk stats. */
#include "top-kvm.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clock.h"
#include "json-util.h"
#include "macro.h"
#include "qmp-commands.h"
#include "qmp.h"
#include "strv.h"
#include "top-targets.h"
#include "vm-libvirt.h"

/* a stat's name as a row takes it: KVM's names are of this alphabet, anything else is not one we show */
#define NAME_MAX_LEN 64

struct top_kvm {
	struct qmp_client *qmp;      /* QMP: owned */
	struct libvirt_domain *dom;  /* libvirt: borrowed */
	char *source;
	char **vm_names, **vcpu_names; /* KVM's names, for query-stats' filter */
	char **rows;                 /* "kvm.NAME": the vm names, then the vCPU names */
	size_t n_vm;                 /* rows[0..n_vm) are the vm target's */
};

int top_qmp_connect(const char *path, int timeout_ms, struct qmp_client **ret, struct sb_error *err)
{
	struct stat st;
	int r;

	*ret = NULL;
	/* qmp_connect() waits for a socket that is not there yet (QEMU starting); top's socket must be there now */
	if (stat(path, &st) < 0)
		return sb_error_set(err, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return sb_error_set(err, -ENOTSOCK, "%s is not a socket", path);
	r = qmp_connect(path, timeout_ms, NULL, ret, err);
	if (r < 0)
		return r;
	qmp_client_set_command_timeout(*ret, timeout_ms);
	return 0;
}

int top_qmp_pid(struct qmp_client *c, pid_t *ret, struct sb_error *err)
{
	_cleanup_json_ struct json_object *reply = NULL;
	struct json_object *cpu, *tid;
	pid_t tgid;
	int r;

	r = qmp_execute(c, "query-cpus-fast", NULL, -1, qmp_client_command_timeout(c), &reply, err);
	if (r < 0)
		return r;
	cpu = json_object_is_type(reply, json_type_array) ? json_object_array_get_idx(reply, 0) : NULL;
	if (!cpu || !json_object_object_get_ex(cpu, "thread-id", &tid) || !json_object_is_type(tid, json_type_int))
		return sb_error_set(err, -EPROTO, "%s: query-cpus-fast gave no vCPU thread id", qmp_client_label(c));
	/* the vCPU thread's thread group is the QEMU process, if it runs on this host (not in another pid namespace) */
	tgid = top_tgid_of((pid_t)json_object_get_int64(tid));
	if (tgid <= 0)
		return sb_error_set(err, -ESRCH,
				    "%s: its vCPU thread %lld is no thread on this host (is QEMU in another pid namespace?)",
				    qmp_client_label(c), (long long)json_object_get_int64(tid));
	*ret = tgid;
	return 0;
}

static bool name_ok(const char *n)
{
	size_t len = strlen(n);

	return len && len <= NAME_MAX_LEN && strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789_") == len;
}

/* The rows of names: those a row can carry, not already a row (a vCPU stat named as a vm one is left out). */
static int add_rows(struct top_kvm *k, char ***names)
{
	_cleanup_strv_free_ char **kept = NULL;

	for (size_t i = 0; *names && (*names)[i]; i++) {
		char row[NAME_MAX_LEN + 8];

		if (!name_ok((*names)[i]))
			continue;
		snprintf(row, sizeof(row), "kvm.%s", (*names)[i]);
		if (strv_contains(k->rows, row))
			continue;
		if (strv_push(&k->rows, row) < 0 || strv_push(&kept, (*names)[i]) < 0)
			return -ENOMEM;
	}
	strv_free(*names);
	*names = TAKE_PTR(kept);
	return 0;
}

void top_kvm_free(struct top_kvm *k)
{
	if (!k)
		return;
	qmp_client_free(k->qmp);
	strv_free(k->vm_names);
	strv_free(k->vcpu_names);
	strv_free(k->rows);
	free(k->source);
	free(k);
}

static struct top_kvm *kvm_new(const char *source)
{
	struct top_kvm *k = calloc(1, sizeof(*k));

	if (k && !(k->source = strdup(source))) {
		free(k);
		k = NULL;
	}
	return k;
}

int top_kvm_open_qmp(struct qmp_client *c, const char *source, struct top_kvm **ret, struct sb_error *err)
{
	struct top_kvm *k = kvm_new(source);
	int r;

	*ret = NULL;
	if (!k) {
		qmp_client_free(c);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	k->qmp = c;
	/* counters only: an instant or peak stat (pages_4k, max_mmu_rmap_size) has no rate */
	r = qmp_query_stats_names(c, "vm", "cumulative", &k->vm_names, err);
	if (r >= 0)
		r = qmp_query_stats_names(c, "vcpu", "cumulative", &k->vcpu_names, err);
	if (r >= 0) {
		if (add_rows(k, &k->vm_names) < 0)
			r = -ENOMEM;
		k->n_vm = strv_length(k->rows);
		if (r >= 0 && add_rows(k, &k->vcpu_names) < 0)
			r = -ENOMEM;
		if (r < 0)
			sb_error_set(err, r, "out of memory");
	}
	if (r >= 0 && !k->rows)
		r = sb_error_set(err, -ENODATA, "%s: QEMU lists no cumulative KVM stats (query-stats-schemas)", source);
	if (r < 0) {
		top_kvm_free(k);
		return r;
	}
	*ret = k;
	return 0;
}

static char **set_names(const struct qmp_stat_set *s)
{
	char **v = calloc(s->n + 1, sizeof(*v));

	for (size_t i = 0; v && i < s->n; i++)
		if (!(v[i] = strdup(s->stats[i].name)))
			return strv_free(v);
	return v;
}

int top_kvm_open_libvirt(struct libvirt_domain *d, struct top_kvm **ret, struct sb_error *err)
{
	struct qmp_stat_set vm = { 0 }, vcpu = { 0 };
	struct top_kvm *k;
	int r;

	*ret = NULL;
	r = libvirt_domain_kvm_stats(d, &vm, &vcpu, err);
	if (r < 0)
		return r;
	k = kvm_new(libvirt_domain_label(d));
	r = -ENOMEM;
	if (k) {
		k->dom = d;
		k->vm_names = set_names(&vm);
		k->vcpu_names = set_names(&vcpu);
		if (k->vm_names && k->vcpu_names && add_rows(k, &k->vm_names) >= 0) {
			k->n_vm = strv_length(k->rows);
			r = add_rows(k, &k->vcpu_names);
		}
	}
	qmp_stat_set_clear(&vm);
	qmp_stat_set_clear(&vcpu);
	if (r < 0) {
		top_kvm_free(k);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	*ret = k;
	return 0;
}

size_t top_kvm_count(const struct top_kvm *k)
{
	return strv_length(k->rows);
}

const char *top_kvm_name(const struct top_kvm *k, size_t i)
{
	return k->rows[i];
}

const char *top_kvm_source(const struct top_kvm *k)
{
	return k->source;
}

int top_kvm_sample_alloc(const struct top_kvm *k, struct top_kvm_sample *s)
{
	size_t n = top_kvm_count(k);

	s->mono_ns = 0;
	s->values = calloc(n ? n : 1, sizeof(*s->values));
	return s->values ? 0 : -ENOMEM;
}

/* each of names' value from set, by name (a set holds a few dozen stats) */
static void fill(int64_t *values, char *const *names, const struct qmp_stat_set *set)
{
	for (size_t i = 0; names && names[i]; i++)
		if (qmp_stat_set_get(set, names[i], &values[i]) < 0)
			values[i] = -1;
}

int top_kvm_read(struct top_kvm *k, struct top_kvm_sample *s, struct sb_error *err)
{
	struct qmp_stat_set vm = { 0 }, vcpu = { 0 };
	struct qmp_vcpu_stats vs = { 0 };
	int r = 0;

	if (k->dom) {
		r = libvirt_domain_kvm_stats(k->dom, &vm, &vcpu, err);
	} else {
		/* each asks for our names only, which keeps the replies small */
		if (k->vm_names && k->vm_names[0])
			r = qmp_query_stats_vm(k->qmp, (const char *const *)k->vm_names, &vm, err);
		if (r >= 0 && k->vcpu_names && k->vcpu_names[0])
			r = qmp_query_stats_vcpu(k->qmp, (const char *const *)k->vcpu_names, &vs, err);
	}
	s->mono_ns = mono_ns();
	if (r >= 0) {
		fill(s->values, k->vm_names, &vm);
		fill(s->values + k->n_vm, k->vcpu_names, k->dom ? &vcpu : &vs.sum);
	}
	qmp_stat_set_clear(&vm);
	qmp_stat_set_clear(&vcpu);
	qmp_vcpu_stats_clear(&vs);
	return r;
}
