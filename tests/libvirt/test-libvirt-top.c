// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench top --vm against a real libvirt domain: a transient one of
 * this test (2 vCPUs idling in SeaBIOS, libvirt's default QEMU, destroyed
 * when the test's connection drops) on the libvirtd the test set-up
 * started (scripts/host-setup).
 *
 *   top --vm NAME --count 3 --interval 1s --json: the pid is the domain's
 *   QEMU (the process whose command line names it, found by the test
 *   itself), kvm.exits grows from line to line, and with the domain
 *   suspended once the second line is out, every kvm row's value in the
 *   third equals libvirt's own read of the stats after it, exactly. The
 *   domain is not tainted (top reads the stats through libvirt's bulk
 *   stats, not monitor passthrough).
 *
 *   A domain that does not exist exits 4 naming it and how to list them;
 *   --vm with --pid exits 2.
 *
 *   Without /dev/kvm the domain runs under TCG (libvirt's type 'qemu'): top
 *   finds its QEMU through libvirt and refuses it, exit 4, naming that pid
 *   and that it holds no KVM VM; then the test skips (77) the KVM stats
 *   comparison, which needs a KVM domain of a libvirtd on this host.
 *
 * Usage: test-libvirt-top PATH-TO-SNAPBENCH
 */
#include <dirent.h>
#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "test-accel.h"
#include "test-json.h"
#include "test-spawn.h"

#define URI "qemu:///system"
/* libvirt's KVM stats came with 8.9; the build takes 8.0 */
#if LIBVIR_CHECK_VERSION(8, 9, 0)
#define STATS_VM VIR_DOMAIN_STATS_VM
#else
#define STATS_VM 0
#endif

static const char *snapbench;
static char name[64];

static void quiet(void *opaque, virErrorPtr e)
{
	(void)opaque;
	(void)e;
}

/* The process whose command line has -name guest=NAME,...: the domain's QEMU, found without libvirt. */
static pid_t qemu_of(const char *dom)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char want[128];
	pid_t found = -1;

	snprintf(want, sizeof(want), "guest=%s,", dom);
	CHECK(d);
	while ((e = readdir(d))) {
		char path[300], buf[8192];
		FILE *f;
		size_t n;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		for (size_t i = 0; i + 1 < n; i += strlen(buf + i) + 1)
			if (!strcmp(buf + i, "-name") && !strncmp(buf + i + 6, want, strlen(want)))
				found = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return found;
}

/* The domain's cumulative KVM stat name ("exits": the vCPUs' summed; "vm.x": the VM's) as libvirt reads it. */
static long long libvirt_stat(virDomainPtr dom, const char *row)
{
	virDomainPtr doms[] = { dom, NULL };
	virDomainStatsRecordPtr *recs = NULL;
	const char *stat = row + 4; /* "kvm." */
	long long sum = -1;
	char vm_key[128];

	snprintf(vm_key, sizeof(vm_key), "vm.%s.sum", stat);
	CHECK(virDomainListGetStats(doms, STATS_VM | VIR_DOMAIN_STATS_VCPU, &recs, 0) == 1);
	for (int i = 0; i < recs[0]->nparams; i++) {
		const char *k = recs[0]->params[i].field, *dot;
		unsigned long long v = recs[0]->params[i].value.ul;

		if (recs[0]->params[i].type != VIR_TYPED_PARAM_ULLONG)
			continue;
		if (!strcmp(k, vm_key)) {
			sum = (long long)v;
			break;
		}
		/* vcpu.N.STAT.sum */
		if (strncmp(k, "vcpu.", 5) || !(dot = strchr(k + 5, '.')) || strncmp(dot + 1, stat, strlen(stat)) ||
		    strcmp(dot + 1 + strlen(stat), ".sum"))
			continue;
		sum = (sum < 0 ? 0 : sum) + (long long)v;
	}
	virDomainStatsRecordListFree(recs);
	CHECK_MSG(sum >= 0, "libvirt has no stat for %s", row);
	return sum;
}

static struct json_object *parse(const char *line)
{
	struct json_object *o = json_tokener_parse(line);

	CHECK_MSG(o && json_object_is_type(o, json_type_object), "not a JSON object: %s", line);
	return o;
}

static struct json_object *row_of(struct json_object *o, const char *row)
{
	struct json_object *rows = jget(o, "rows");

	for (size_t i = 0; i < json_object_array_length(rows); i++)
		if (!strcmp(jstr(json_object_array_get_idx(rows, i), "name"), row))
			return json_object_array_get_idx(rows, i);
	return NULL;
}

static void test_top(virDomainPtr dom, pid_t pid)
{
	char *argv[] = { (char *)snapbench, "top", "--vm", name, "--count", "3", "--interval", "1s", "--json", NULL };
	char source[128];
	struct json_object *lines[3] = {};
	struct test_child child;
	long long exits[3];
	size_t n = 0, checked = 0;
	char *line, **msgs = NULL;
	int k;

	test_spawn(&child, argv);
	while ((line = test_child_line(&child))) {
		CHECK_MSG(n < 3, "more than 3 lines: %s", line);
		lines[n++] = parse(line);
		free(line);
		/* suspended, the vCPUs leave KVM's stats as they are for top's third read */
		if (n == 2)
			CHECK(virDomainSuspend(dom) == 0);
	}
	CHECK(test_child_wait(&child) == 0 && n == 3);
	snprintf(source, sizeof(source), "libvirt domain %s", name);
	for (size_t i = 0; i < 3; i++) {
		CHECK_MSG(jint(lines[i], "pid") == pid, "pid %lld, the domain's QEMU is %d", (long long)jint(lines[i], "pid"),
			  (int)pid);
		CHECK(!strcmp(jstr(lines[i], "kvm/source"), source));
		CHECK_MSG(row_of(lines[i], "kvm.exits"), "no kvm.exits in %s", json_object_to_json_string(lines[i]));
		exits[i] = jint(row_of(lines[i], "kvm.exits"), "total");
	}
	printf("--vm: kvm.exits totals %lld %lld %lld\n", exits[0], exits[1], exits[2]);
	CHECK(exits[0] > 0 && exits[1] > exits[0] && exits[2] >= exits[1]);
	struct json_object *rows = jget(lines[2], "rows");
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		struct json_object *r = json_object_array_get_idx(rows, i);

		if (strcmp(jstr(r, "group"), "kvm"))
			continue;
		CHECK_MSG(jint(r, "value") == libvirt_stat(dom, jstr(r, "name")), "%s: top %lld, libvirt %lld",
			  jstr(r, "name"), (long long)jint(r, "value"), libvirt_stat(dom, jstr(r, "name")));
		checked++;
	}
	printf("--vm: %zu kvm rows in the last line equal libvirt's read\n", checked);
	CHECK(checked >= 2);
	CHECK(virDomainResume(dom) == 0);
	k = virDomainGetMessages(dom, &msgs, VIR_DOMAIN_MESSAGE_TAINTING);
	CHECK(k >= 0);
	CHECK_MSG(k == 0, "the domain is tainted: %s", msgs[0]);
	free(msgs);
	for (size_t i = 0; i < 3; i++)
		json_object_put(lines[i]);
}

static void expect_exit(char *const *args, int want, const char *fragment)
{
	char *argv[12] = { (char *)snapbench, "top" }, *out;
	size_t n = 2;
	int rc;

	while (*args)
		argv[n++] = *args++;
	argv[n++] = "--count";
	argv[n++] = "1";
	argv[n++] = "--json";
	argv[n] = NULL;
	rc = test_run(argv, &out);
	struct json_object *o = parse(out);
	CHECK_MSG(rc == want && strstr(jstr(o, "error"), fragment), "exit %d: %s", rc, out);
	printf("%s %s -> exit %d: %s\n", argv[2], argv[3], rc, jstr(o, "error"));
	json_object_put(o);
	free(out);
}

int main(int argc, char **argv)
{
	char xml[1024], missing[96];
	virConnectPtr conn;
	virDomainPtr dom;
	pid_t pid = -1;

	CHECK_MSG(argc == 2, "usage: test-libvirt-top SNAPBENCH");
	snapbench = argv[1];
	if (geteuid() != 0)
		SKIP_TEST("root (BPF probes, libvirt's pid files)");
	if (!STATS_VM)
		SKIP_TEST("libvirt 8.9 or later at build time (its KVM stats)");
	virSetErrorFunc(NULL, quiet);
	conn = virConnectOpen(URI);
	if (!conn)
		SKIP_TEST("libvirtd at %s (%s); scripts/host-setup starts it", URI, virGetLastErrorMessage());

	snprintf(missing, sizeof(missing), "snapbench-top-none-%d", (int)getpid());
	expect_exit((char *[]){ "--vm", missing, NULL }, 4, "virsh list --all");
	expect_exit((char *[]){ "--vm", missing, "--pid", "1", NULL }, 2, "--pid and --vm");

	snprintf(name, sizeof(name), "snapbench-top-%d", (int)getpid());
	snprintf(xml, sizeof(xml),
		 "<domain type='%s'><name>%s</name><memory unit='MiB'>64</memory><vcpu>2</vcpu>"
		 "<os><type arch='x86_64'>hvm</type></os><devices/></domain>",
		 test_kvm() ? "kvm" : "qemu", name);
	/* AUTODESTROY: the domain goes with this connection, also when a check fails */
	dom = virDomainCreateXML(conn, xml, VIR_DOMAIN_START_AUTODESTROY);
	CHECK_MSG(dom, "libvirt could not start %s: %s", name, virGetLastErrorMessage());
	for (int i = 0; i < 100 && pid <= 0; i++) {
		pid = qemu_of(name);
		if (pid <= 0)
			usleep(50 * 1000);
	}
	CHECK_MSG(pid > 0, "no QEMU names domain %s", name);
	if (!test_kvm()) {
		char want[96];
		snprintf(want, sizeof(want), "process %d (qemu-system-x86) holds no KVM VM", (int)pid);
		expect_exit((char *[]){ "--vm", name, NULL }, 4, want);
		CHECK(virDomainDestroy(dom) == 0);
		virDomainFree(dom);
		virConnectClose(conn);
		SKIP_TEST("/dev/kvm: a KVM domain, whose stats top reads through libvirt (checked: top finds a TCG "
			  "domain's QEMU through libvirt and refuses it)");
	}
	test_top(dom, pid);
	CHECK(virDomainDestroy(dom) == 0);
	virDomainFree(dom);
	virConnectClose(conn);
	printf("ok\n");
	return 0;
}
