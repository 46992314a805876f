// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The Linux-guest path, as far as this host can run it (a Linux guest does
 * not boot in useful time under emulation; docs/backends.md):
 *
 *   workload       the runner's driver (runner/vm/guest-linux.c) against the
 *                  real qemu-ga on this host's unix socket, with the real
 *                  stress-ng: the probe is copied in and started with
 *                  stress-ng, its telemetry comes out of the stream while it
 *                  runs and decodes, stopping ends it with END and collects
 *                  stress-ng's summary, and the files go away afterwards.
 *                  Skips without qemu-ga or stress-ng.
 *
 *   agent-missing  a run with spec.guest.kind "linux" in a transient libvirt
 *                  domain (spec.vm.libvirt.xml) that has no agent channel:
 *                  the run fails, naming the missing channel and how to add
 *                  it; no domain is left.
 *
 *   qemu-no-agent  a Linux-guest run on the qemu backend whose disk holds no
 *                  system: QEMU starts with the disk and the agent's
 *                  virtio-serial port, nobody answers on it, and after
 *                  spec.guest.linux.agent_timeout_s the run fails naming
 *                  qemu-guest-agent; QEMU is gone and the disk untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <libvirt/libvirt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "guest-linux.h"
#include "qga.h"
#include "run-test.h"
#include "runner.h"
#include "spec.h"
#include "telemetry.h"
#include "test-accel.h"

extern char **environ;

static pid_t agent_pid = -1;
static char agent_dir[64], xml_dir[64];

static void stop_agent(void)
{
	char p[128];

	if (agent_pid > 0) {
		/* SIGTERM, two seconds, then SIGKILL; always reaped */
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		kill(agent_pid, SIGTERM);
		for (int i = 0; i < 100 && waitpid(agent_pid, NULL, WNOHANG) != agent_pid; i++)
			nanosleep(&ts, NULL);
		if (kill(agent_pid, 0) == 0) {
			kill(agent_pid, SIGKILL);
			waitpid(agent_pid, NULL, 0);
		}
		agent_pid = -1;
	}
	if (*agent_dir) {
		static const char *const names[] = { "qga.sock", "qga.pid", "qga.log", "qga.state", "snapbench-linux-probe",
						     "snapbench-telemetry" };
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(p, sizeof(p), "%s/%s", agent_dir, names[i]);
			unlink(p);
		}
		rmdir(agent_dir);
	}
	if (*xml_dir) {
		snprintf(p, sizeof(p), "%s/guest.elf", xml_dir);
		unlink(p);
		snprintf(p, sizeof(p), "%s/domain.xml", xml_dir);
		unlink(p);
		rmdir(xml_dir);
	}
}

static void test_workload(void)
{
	struct run_spec spec;
	struct sb_error err = {};
	struct qga_client *c = NULL;
	struct linux_workload *w = NULL;
	struct guest_decoder *d;
	char sock[96], pidf[96], log[96], path[128];
	_cleanup_free_ char *probe = NULL;
	unsigned samples = 0, ends = 0, hello = 0, errors = 0, before_stop = 0;
	int fd = -1, end_reason = 0;

	if (access("/usr/sbin/qemu-ga", X_OK) < 0)
		SKIP_TEST("qemu-ga (install qemu-guest-agent: scripts/install-deps)");
	if (access("/usr/bin/stress-ng", X_OK) < 0)
		SKIP_TEST("stress-ng (scripts/install-deps installs it)");
	CHECK_MSG(linux_probe_find(&probe, &err) == 0, "%s", err.msg);
	snprintf(agent_dir, sizeof(agent_dir), "/tmp/snapbench-test-lguest-XXXXXX");
	CHECK(mkdtemp(agent_dir));
	snprintf(sock, sizeof(sock), "%s/qga.sock", agent_dir);
	snprintf(pidf, sizeof(pidf), "%s/qga.pid", agent_dir);
	snprintf(log, sizeof(log), "%s/qga.log", agent_dir);
	const char *const qa[] = { "/usr/sbin/qemu-ga", "-m", "unix-listen", "-p", sock, "-t", agent_dir, "-f", pidf, "-l", log, NULL };
	CHECK(posix_spawn(&agent_pid, qa[0], NULL, NULL, (char *const *)qa, environ) == 0);
	CHECK_MSG(qga_connect(sock, 10000, NULL, &c, &err) == 0, "%s", err.msg);

	run_test_spec_init(&spec);
	CHECK(spec_set(&spec, "guest.linux.dir", agent_dir, NULL, &err) == 0);
	CHECK(spec_set(&spec, "guest.linux.vm_bytes", "16M", NULL, &err) == 0);
	CHECK(spec_set(&spec, "guest.linux.method", "write64", NULL, &err) == 0);
	CHECK(spec_set(&spec, "guest.linux.probe_region", "16M", NULL, &err) == 0);
	CHECK(spec_set(&spec, "guest.telemetry_interval_ms", "100", NULL, &err) == 0);

	CHECK_MSG(linux_workload_start(c, &spec, probe, 10000, &w, &fd, &err) == 0, "%s", err.msg);
	CHECK(fd >= 0);
	CHECK(guest_decoder_new(&d) == 0);
	uint64_t stop_at = mono_ns() + 2 * NSEC_PER_SEC;
	bool stopped = false, eof = false;
	while (!eof) {
		char buf[65536];
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (!stopped && mono_ns() >= stop_at) {
			before_stop = samples;
			CHECK_MSG(linux_workload_stop(w, 20000, &err) == 0, "%s", err.msg);
			stopped = true;
		}
		poll(&p, 1, 100);
		if (!(p.revents & (POLLIN | POLLHUP)))
			continue;
		ssize_t n = read(fd, buf, sizeof(buf));
		CHECK(n >= 0);
		if (n == 0) {
			eof = true;
			break;
		}
		for (size_t off = 0; off < (size_t)n;) {
			off += guest_decoder_feed(d, buf + off, (size_t)n - off);
			const struct guest_record *rec;
			int r;
			while ((r = guest_decoder_next(d, &rec, &err)) != 0) {
				if (r < 0) {
					fprintf(stderr, "decoder: %s\n", err.msg);
					errors++;
					continue;
				}
				hello += rec->type == GUEST_RECORD_HELLO;
				samples += rec->type == GUEST_RECORD_SAMPLE;
				if (rec->type == GUEST_RECORD_END) {
					ends++;
					end_reason = rec->end.reason;
				}
			}
		}
	}
	CHECK(stopped);
	printf("%u samples before the stop, %u in all; stress-ng said: %.300s\n", before_stop, samples,
	       linux_workload_stress_output(w));
	CHECK(errors == 0 && hello == 1 && ends == 1 && end_reason == GUEST_END_HOST_REQUEST);
	CHECK(before_stop >= 3); /* it streamed while running, not only at the end */
	CHECK(strstr(linux_workload_stress_output(w), "stress-ng"));
	linux_workload_free(w);
	snprintf(path, sizeof(path), "%s/snapbench-linux-probe", agent_dir);
	CHECK_MSG(access(path, F_OK) < 0, "the probe was left in the guest");
	snprintf(path, sizeof(path), "%s/snapbench-telemetry", agent_dir);
	CHECK_MSG(access(path, F_OK) < 0, "the telemetry file was left in the guest");
	CHECK(run_test_count_processes("snapbench-linux-probe") == 0);
	guest_decoder_free(d);
	close(fd);
	qga_client_free(c);
	spec_done(&spec);
}

static void copy(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char buf[65536];
	ssize_t n;

	CHECK(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		CHECK(write(out, buf, (size_t)n) == n);
	close(in);
	close(out);
}

static void test_agent_missing(void)
{
	struct run_spec spec;
	struct sb_error err = {};
	char xml_path[128], kernel[128], report[PATH_MAX], run_dir[PATH_MAX];
	const char *image = getenv("SNAPBENCH_GUEST_IMAGE");
	FILE *f;
	int k;

	run_test_require_root();
	virConnectPtr conn = virConnectOpen("qemu:///system");
	if (!conn)
		SKIP_TEST("libvirtd at qemu:///system; scripts/host-setup starts it");
	virConnectClose(conn);
	CHECK(image);
	/* a domain that boots (the micro guest's kernel) but has no guest agent channel */
	mkdir("/run/snapbench", 0711);
	snprintf(xml_dir, sizeof(xml_dir), "/run/snapbench/test-XXXXXX");
	CHECK(mkdtemp(xml_dir));
	CHECK(chmod(xml_dir, 0711) == 0);
	snprintf(kernel, sizeof(kernel), "%s/guest.elf", xml_dir);
	copy(image, kernel);
	snprintf(xml_path, sizeof(xml_path), "%s/domain.xml", xml_dir);
	f = fopen(xml_path, "we");
	CHECK(f);
	/* type 'qemu': libvirt's TCG, on a machine without /dev/kvm */
	fprintf(f, "<domain type='%s'>\n  <name>snapbench-test-noagent</name>\n  <memory unit='MiB'>64</memory>\n"
		   "  <vcpu>1</vcpu>\n  <os><type arch='x86_64' machine='pc'>hvm</type><kernel>%s</kernel>"
		   "<cmdline>-- mem=8M probe=none</cmdline></os>\n  <devices><memballoon model='none'/></devices>\n</domain>\n",
		test_kvm() ? "kvm" : "qemu", kernel);
	CHECK(fclose(f) == 0);

	run_test_spec_init(&spec);
	CHECK(spec_set(&spec, "repetitions", "1", NULL, &err) == 0);
	CHECK(spec_set(&spec, "vm.backend", "libvirt", NULL, &err) == 0);
	CHECK(spec_set(&spec, "vm.libvirt.xml", xml_path, NULL, &err) == 0);
	CHECK(spec_set(&spec, "guest.kind", "linux", NULL, &err) == 0);
	CHECK(spec_set(&spec, "guest.linux.agent_timeout_s", "20", NULL, &err) == 0);
	CHECK(spec_set(&spec, "knobs", "sysctl:vm.unprivileged_userfaultfd=1", NULL, &err) == 0);
	CHECK_MSG(spec_validate(&spec, &err) == 0, "%s", err.msg);
	snprintf(run_dir, sizeof(run_dir), "%s/20261130T000000Z-c00000", test_tmpdir("libvirt-noagent"));
	struct runner_options opts = { .run_dir = run_dir };
	uint64_t t0 = mono_ns();
	k = runner_execute(&spec, &opts, report, &err);
	printf("%s\n", err.msg);
	CHECK(k < 0);
	CHECK(strstr(err.msg, "guest agent is not configured") && strstr(err.msg, "org.qemu.guest_agent.0"));
	CHECK_MSG(mono_ns() - t0 < 60 * NSEC_PER_SEC, "a missing channel must not wait for the agent timeout");
	run_test_validate(report);
	struct json_object *r = run_test_load(report);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/guest/kind"), "linux"));
	json_object_put(r);
	conn = virConnectOpen("qemu:///system");
	CHECK(conn);
	virDomainPtr dom = virDomainLookupByName(conn, "snapbench-test-noagent");
	CHECK_MSG(!dom, "the transient domain was left running");
	virConnectClose(conn);
	spec_done(&spec);
}

static void test_qemu_no_agent(void)
{
	struct run_spec spec;
	struct sb_error err = {};
	char disk[PATH_MAX], report[PATH_MAX], run_dir[PATH_MAX];
	const char *dir = test_tmpdir("qemu-noagent");
	struct stat before, after;
	int fd, k;

	run_test_require_root();
	snprintf(disk, sizeof(disk), "%s/empty.img", dir);
	fd = open(disk, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && ftruncate(fd, 1 << 20) == 0);
	close(fd);
	CHECK(stat(disk, &before) == 0);

	run_test_spec_init(&spec);
	CHECK(spec_set(&spec, "repetitions", "1", NULL, &err) == 0);
	CHECK(spec_set(&spec, "vm.memory", "64M", NULL, &err) == 0);
	CHECK(spec_set(&spec, "vm.vcpus", "1", NULL, &err) == 0);
	CHECK(spec_set(&spec, "vm.disk", disk, NULL, &err) == 0);
	CHECK(spec_set(&spec, "vm.disk_format", "raw", NULL, &err) == 0);
	CHECK(spec_set(&spec, "guest.kind", "linux", NULL, &err) == 0);
	CHECK(spec_set(&spec, "guest.linux.agent_timeout_s", "8", NULL, &err) == 0);
	CHECK_MSG(spec_validate(&spec, &err) == 0, "%s", err.msg);
	snprintf(run_dir, sizeof(run_dir), "%s/20261130T000000Z-c00001", dir);
	struct runner_options opts = { .run_dir = run_dir };
	k = runner_execute(&spec, &opts, report, &err);
	printf("%s\n", err.msg);
	CHECK(k < 0);
	CHECK(strstr(err.msg, "did not answer within 8 s") && strstr(err.msg, "qemu-guest-agent"));
	run_test_validate(report);
	struct json_object *r = run_test_load(report);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/guest/kind"), "linux"));
	/* QEMU took the disk and the agent's port (it would have exited at start-up otherwise) */
	CHECK(!strstr(err.msg, "exited"));
	char needle[96];
	snprintf(needle, sizeof(needle), "snapbench-%s-rep", jstr(r, "id"));
	CHECK(run_test_count_processes(needle) == 0);
	json_object_put(r);
	CHECK(stat(disk, &after) == 0 && after.st_mtime == before.st_mtime && after.st_size == before.st_size);
	spec_done(&spec);
}

int main(int argc, char **argv)
{
	run_test_init(argc, argv);
	atexit(stop_agent);
	CHECK(argc >= 4);
	if (!strcmp(argv[3], "workload"))
		test_workload();
	else if (!strcmp(argv[3], "agent-missing"))
		test_agent_missing();
	else if (!strcmp(argv[3], "qemu-no-agent"))
		test_qemu_no_agent();
	else
		CHECK_MSG(false, "unknown case %s", argv[3]);
	return 0;
}
