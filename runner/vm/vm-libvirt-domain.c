// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A running libvirt domain seen from outside a run (vm-libvirt.h): its
 * QEMU's pid from libvirt's pid file, and KVM's stats through libvirt's
 * bulk stats API rather than monitor passthrough, which would taint a
 * domain that is not ours.
 */
#include "vm-libvirt.h"

#include <errno.h>
#include <fcntl.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "qmp-commands.h"
#include "strv.h"
#include "vm-libvirt-private.h"

#define SYSTEM_URI "qemu:///system"
/* where libvirtd (qemu:///system) keeps each running domain's QEMU pid */
#define SYSTEM_PID_DIR "/run/libvirt/qemu"

struct libvirt_domain {
	virConnectPtr conn;
	virDomainPtr dom;
	char *name;
	char label[300];
	pid_t pid;
};

static void quiet(void *opaque, virErrorPtr e)
{
	/* library code does not print: errors are taken with lv_error() */
	(void)opaque;
	(void)e;
}

/* Does pid's command line carry -name guest=NAME (libvirt's way of naming its QEMU)? */
static bool cmdline_names(pid_t pid, const char *name)
{
	_cleanup_strv_free_ char **argv = NULL;
	size_t k = strlen(name);

	if (proc_cmdline(pid, PROC_CMDLINE_MAX, &argv) < 0)
		return false;
	for (size_t i = 1; argv[i]; i++) {
		const char *arg = argv[i];

		/* a name with a comma is escaped ",," on the command line: such names are not matched */
		if (!strcmp(argv[i - 1], "-name") && !strncmp(arg, "guest=", 6) && !strncmp(arg + 6, name, k) &&
		    (arg[6 + k] == '\0' || (arg[6 + k] == ',' && arg[7 + k] != ',')))
			return true;
	}
	return false;
}

static int find_pid(struct libvirt_domain *d, struct sb_error *err)
{
	char path[512];
	_cleanup_free_ char *text = NULL;
	char *end;
	long pid;
	int r;

	snprintf(path, sizeof(path), "%s/%s.pid", SYSTEM_PID_DIR, d->name);
	r = read_full_file(path, 64, &text, NULL, err);
	if (r < 0)
		return sb_error_prefix(err, "%s: finding QEMU's pid%s", d->label,
				       r == -EACCES || r == -EPERM ? " (libvirt's pid files are root's)" : "");
	pid = strtol(text, &end, 10);
	if (pid <= 0 || pid > INT32_MAX || (*end && *end != '\n'))
		return sb_error_set(err, -EPROTO, "%s: %s holds no pid", d->label, path);
	/* a stale file (libvirtd restarted, the pid reused) names another process */
	if (!cmdline_names((pid_t)pid, d->name))
		return sb_error_set(err, -ESRCH, "%s: pid %ld from %s is not that domain's QEMU (no -name guest=%s)",
				    d->label, pid, path, d->name);
	d->pid = (pid_t)pid;
	return 0;
}

int libvirt_domain_open(const char *uri, const char *name, struct libvirt_domain **ret, struct sb_error *err)
{
	struct libvirt_domain *d;
	int r;

	*ret = NULL;
	if (!*name || strchr(name, '/') || strlen(name) > 200)
		return sb_error_set(err, -EINVAL, "libvirt domain '%s': not a domain name", name);
	if (strcmp(uri, SYSTEM_URI))
		return sb_error_set(err, -EOPNOTSUPP,
				    "libvirt at %s: only qemu:///system domains are supported (their QEMU's pid is read from libvirt's pid file)",
				    uri);
	d = calloc(1, sizeof(*d));
	if (!d || !(d->name = strdup(name))) {
		free(d);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	snprintf(d->label, sizeof(d->label), "libvirt domain %s", name);
	virSetErrorFunc(NULL, quiet);
	d->conn = virConnectOpen(uri);
	if (!d->conn) {
		r = sb_error_set(err, -ECONNREFUSED, "libvirt at %s: %s; start libvirtd (scripts/host-setup does)", uri,
				 lv_error());
		goto fail;
	}
	d->dom = virDomainLookupByName(d->conn, name);
	if (!d->dom) {
		virErrorPtr e = virGetLastError();

		if (e && e->code == VIR_ERR_NO_DOMAIN)
			r = sb_error_set(err, -ENOENT, "libvirt at %s has no domain '%s'; 'virsh list --all' lists them", uri,
					 name);
		else
			r = sb_error_set(err, -EIO, "libvirt at %s: looking up domain '%s': %s", uri, name, lv_error());
		goto fail;
	}
	if (virDomainIsActive(d->dom) != 1) {
		r = sb_error_set(err, -ESRCH, "%s is not running: start it ('virsh start %s')", d->label, name);
		goto fail;
	}
	r = find_pid(d, err);
	if (r < 0)
		goto fail;
	*ret = d;
	return 0;
fail:
	libvirt_domain_close(d);
	return r;
}

pid_t libvirt_domain_pid(const struct libvirt_domain *d)
{
	return d->pid;
}

const char *libvirt_domain_label(const struct libvirt_domain *d)
{
	return d->label;
}

void libvirt_domain_close(struct libvirt_domain *d)
{
	if (!d)
		return;
	if (d->dom)
		virDomainFree(d->dom);
	if (d->conn)
		virConnectClose(d->conn);
	free(d->name);
	free(d);
}

/* Adds value to name's entry of set (appending it when new); -ENOMEM, -ERANGE on overflow. */
static int set_add(struct qmp_stat_set *set, const char *name, size_t len, int64_t value)
{
	struct qmp_stat *stats;

	for (size_t i = 0; i < set->n; i++)
		if (!strncmp(set->stats[i].name, name, len) && !set->stats[i].name[len])
			return __builtin_add_overflow(set->stats[i].value, value, &set->stats[i].value) ? -ERANGE : 0;
	stats = realloc(set->stats, (set->n + 1) * sizeof(*stats));
	if (!stats)
		return -ENOMEM;
	set->stats = stats;
	stats[set->n].name = strndup(name, len);
	if (!stats[set->n].name)
		return -ENOMEM;
	stats[set->n].value = value;
	set->n++;
	return 0;
}

static bool param_int(const virTypedParameter *p, int64_t *v)
{
	switch (p->type) {
	case VIR_TYPED_PARAM_ULLONG:
		*v = p->value.ul > INT64_MAX ? INT64_MAX : (int64_t)p->value.ul; /* as qmp/stats.c clamps */
		return true;
	case VIR_TYPED_PARAM_LLONG:
		*v = p->value.l;
		return true;
	case VIR_TYPED_PARAM_UINT:
		*v = p->value.ui;
		return true;
	case VIR_TYPED_PARAM_INT:
		*v = p->value.i;
		return true;
	default:
		return false;
	}
}

int lv_kvm_stats_from_params(const virTypedParameter *params, int n, struct qmp_stat_set *vm,
			     struct qmp_stat_set *vcpu_sum)
{
	for (int i = 0; i < n; i++) {
		const char *key = params[i].field, *name, *dot;
		size_t len = strlen(key);
		int64_t v;
		int r;

		/* ".sum" is what libvirt makes of a cumulative stat; ".cur" and ".max" are levels */
		if (len < 4 || strcmp(key + len - 4, ".sum") || !param_int(&params[i], &v))
			continue;
		if (!strncmp(key, "vm.", 3)) {
			name = key + 3;
			if (name >= key + len - 4)
				continue;
			r = set_add(vm, name, (size_t)(key + len - 4 - name), v);
		} else if (!strncmp(key, "vcpu.", 5)) {
			/* vcpu.N.NAME.sum: N all digits */
			dot = strchr(key + 5, '.');
			if (!dot || dot == key + 5 || strspn(key + 5, "0123456789") != (size_t)(dot - key - 5))
				continue;
			name = dot + 1;
			if (name >= key + len - 4)
				continue;
			r = set_add(vcpu_sum, name, (size_t)(key + len - 4 - name), v);
		} else {
			continue;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int libvirt_domain_kvm_stats(struct libvirt_domain *d, struct qmp_stat_set *vm, struct qmp_stat_set *vcpu_sum,
			     struct sb_error *err)
{
	memset(vm, 0, sizeof(*vm));
	memset(vcpu_sum, 0, sizeof(*vcpu_sum));
#if LIBVIR_CHECK_VERSION(8, 9, 0)
	virDomainPtr doms[] = { d->dom, NULL };
	virDomainStatsRecordPtr *records = NULL;
	int k, r;

	k = virDomainListGetStats(doms, VIR_DOMAIN_STATS_VM | VIR_DOMAIN_STATS_VCPU, &records, 0);
	if (k < 0)
		return sb_error_set(err, virDomainIsActive(d->dom) == 1 ? -EIO : -ECONNRESET, "%s: reading its stats: %s",
				    d->label, lv_error());
	r = k >= 1 ? lv_kvm_stats_from_params(records[0]->params, records[0]->nparams, vm, vcpu_sum) : 0;
	virDomainStatsRecordListFree(records);
	if (r < 0) {
		qmp_stat_set_clear(vm);
		qmp_stat_set_clear(vcpu_sum);
		if (r == -ERANGE)
			return sb_error_set(err, r, "%s: a KVM stat summed over vCPUs overflows 64 bits", d->label);
		return sb_error_set(err, r, "out of memory");
	}
	if (vm->n == 0 && vcpu_sum->n == 0)
		return sb_error_set(err, -ENODATA,
				    "libvirt reports no KVM stats for %s: it reads them with libvirt >= 8.9 from QEMU >= 7.1 with KVM",
				    d->label);
	return 0;
#else
	return sb_error_set(err, -EOPNOTSUPP,
			    "%s: this snapbench was built against libvirt %d.%d, which has no KVM stats (8.9 added them)",
			    d->label, LIBVIR_VERSION_NUMBER / 1000000, LIBVIR_VERSION_NUMBER / 1000 % 1000);
#endif
}
