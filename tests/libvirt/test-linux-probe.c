// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The Linux guests' latency probe (guest/linux-probe/), and the agent
 * path it travels, for real on this host:
 *
 *   static  the probe is a static executable (no interpreter, no dynamic
 *           section); run here for 1.5 s its output decodes with the micro
 *           guest's decoder: HELLO with the arguments given, samples with
 *           growing cumulative counts, END "run length reached"; stopped by
 *           SIGTERM it ends with END "stopped on request"; bad arguments
 *           exit 2 naming the argument.
 *
 *   agent   the real qemu-guest-agent (qemu-ga) listening on a unix socket
 *           on this host, as it would in a guest on a virtio-serial port:
 *           copy the probe in (guest-file-open/write/close, chmod), start
 *           it with guest-exec, read its telemetry with guest-file-read
 *           while it runs and decode it, wait for it with guest-exec-status;
 *           a command that fails and one that does not exist give errors
 *           that name them. Skips when qemu-ga is not installed.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
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
#include "macro.h"
#include "qga.h"
#include "telemetry.h"

extern char **environ;

static char tmpdir[64];
static pid_t agent_pid = -1;

/* SIGTERM, two seconds, then SIGKILL; always reaped. */
static void stop_process(pid_t pid)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	kill(pid, SIGTERM);
	for (int i = 0; i < 100; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void cleanup(void)
{
	char cmd[128];

	if (agent_pid > 0)
		stop_process(agent_pid);
	if (*tmpdir) {
		/* only files this test and the agent made, in its own directory */
		static const char *const names[] = { "tel", "tel2", "probe", "qga.sock", "qga.pid", "qga.log", "qga.state", "bad.out" };
		for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
			snprintf(cmd, sizeof(cmd), "%s/%s", tmpdir, names[i]);
			unlink(cmd);
		}
		rmdir(tmpdir);
	}
}

static void *read_all(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;

	CHECK(fd >= 0 && fstat(fd, &st) == 0);
	buf = malloc((size_t)st.st_size + 1);
	CHECK(buf);
	CHECK(read(fd, buf, (size_t)st.st_size) == st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

struct decoded {
	struct guest_hello hello;
	unsigned samples, ends, errors;
	int end_reason;
	uint64_t last_reads;
	struct guest_sample last;
};

static void decode(struct guest_decoder *d, const void *buf, size_t len, struct decoded *out)
{
	const char *p = buf;

	for (size_t off = 0; off < len;) {
		off += guest_decoder_feed(d, p + off, len - off);
		for (;;) {
			const struct guest_record *rec;
			struct sb_error err = {};
			int r = guest_decoder_next(d, &rec, &err);
			if (r == 0)
				break;
			if (r < 0) {
				fprintf(stderr, "decoder: %s\n", err.msg);
				out->errors++;
				continue;
			}
			switch (rec->type) {
			case GUEST_RECORD_HELLO:
				out->hello = rec->hello;
				break;
			case GUEST_RECORD_SAMPLE:
				CHECK(rec->sample.probe_reads >= out->last_reads);
				out->last_reads = rec->sample.probe_reads;
				out->last = rec->sample;
				out->samples++;
				break;
			case GUEST_RECORD_END:
				out->ends++;
				out->end_reason = rec->end.reason;
				break;
			}
		}
	}
}

static void check_stream(const struct decoded *dd, unsigned interval_ms, unsigned gap_us, unsigned region_mib)
{
	double ns[3];
	static const double pct[] = { 50, 99, 99.9 };
	struct sb_error err = {};

	CHECK(dd->errors == 0);
	CHECK(dd->hello.vcpus == 1 && dd->hello.probe_vcpu == 0);
	CHECK(dd->hello.vcpu[0].pattern == GUEST_PATTERN_PROBE);
	CHECK(dd->hello.clock_source == GUEST_CLOCK_OS);
	CHECK(!strcmp(guest_clock_source_to_string(dd->hello.clock_source), "os"));
	CHECK(dd->hello.interval_ms == interval_ms && dd->hello.probe_gap_us == gap_us);
	CHECK(dd->hello.region_bytes == (uint64_t)region_mib << 20 && dd->hello.populated);
	CHECK(dd->hello.tsc_hz > 100000000ull);
	CHECK(dd->samples >= 3 && dd->ends == 1);
	CHECK(dd->last.probe_reads > 100 && dd->last.ops[0] == dd->last.probe_reads);
	CHECK(guest_hist_percentiles(dd->last.hist, dd->hello.tsc_hz, pct, 3, ns, &err) == 0);
	printf("%u samples, %llu reads, p50 %.0f ns, p99 %.0f ns, p99.9 %.0f ns, TSC %.3f GHz\n", dd->samples,
	       (unsigned long long)dd->last.probe_reads, ns[0], ns[1], ns[2], (double)dd->hello.tsc_hz / 1e9);
	CHECK(ns[0] > 0 && ns[0] <= ns[1] && ns[1] <= ns[2]);
}

static void check_static(const char *probe)
{
	size_t len;
	unsigned char *elf = read_all(probe, &len);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)elf;

	CHECK(len > sizeof(*eh) && !memcmp(eh->e_ident, ELFMAG, SELFMAG) && eh->e_ident[EI_CLASS] == ELFCLASS64);
	CHECK(eh->e_machine == EM_X86_64 && eh->e_type == ET_EXEC);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(elf + eh->e_phoff + (size_t)i * eh->e_phentsize);
		CHECK_MSG(ph->p_type != PT_INTERP && ph->p_type != PT_DYNAMIC, "%s is not static", probe);
	}
	free(elf);
}

static int spawn(const char *const argv[], pid_t *pid)
{
	return posix_spawn(pid, argv[0], NULL, NULL, (char *const *)argv, environ);
}

static void test_static(const char *probe)
{
	char tel[96], bad[96];
	struct guest_decoder *d;
	struct decoded dd = {};
	size_t len;
	pid_t pid;
	int st;

	check_static(probe);

	/* runs to its length */
	snprintf(tel, sizeof(tel), "%s/tel", tmpdir);
	const char *const a1[] = { probe, "--out", tel, "--duration-ms", "1500", "--interval-ms", "100", "--gap-us", "50",
				   "--region-mib", "16", "--seed", "7", NULL };
	CHECK(spawn(a1, &pid) == 0);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	void *buf = read_all(tel, &len);
	CHECK(guest_decoder_new(&d) == 0);
	decode(d, buf, len, &dd);
	CHECK(guest_decoder_pending(d) == 0 && guest_decoder_skipped(d) == 0);
	check_stream(&dd, 100, 50, 16);
	CHECK(dd.hello.seed == 7 && dd.hello.run_ms == 1500);
	CHECK(dd.end_reason == GUEST_END_RUN_LENGTH);
	guest_decoder_free(d);
	free(buf);

	/* stopped by SIGTERM */
	memset(&dd, 0, sizeof(dd));
	const char *const a2[] = { probe, "--out", tel, "--interval-ms", "50", "--region-mib", "8", NULL };
	CHECK(spawn(a2, &pid) == 0);
	struct timespec ts = { 1, 0 };
	nanosleep(&ts, NULL);
	CHECK(kill(pid, SIGTERM) == 0);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	buf = read_all(tel, &len);
	CHECK(guest_decoder_new(&d) == 0);
	decode(d, buf, len, &dd);
	check_stream(&dd, 50, 100, 8);
	CHECK(dd.end_reason == GUEST_END_HOST_REQUEST);
	guest_decoder_free(d);
	free(buf);

	/* bad arguments: exit 2 with the argument named */
	snprintf(bad, sizeof(bad), "%s/bad.out", tmpdir);
	int fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 2);
	const char *const a3[] = { probe, "--out", tel, "--interval-ms", "5", NULL };
	CHECK(posix_spawn(&pid, probe, &fa, NULL, (char *const *)a3, environ) == 0);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 2);
	posix_spawn_file_actions_destroy(&fa);
	close(fd);
	buf = read_all(bad, &len);
	CHECK(strstr(buf, "--interval-ms") && strstr(buf, "10 to 60000"));
	free(buf);
}

static void test_agent(const char *probe)
{
	char sock[96], pidf[96], log[96], tel[96], ver[32], path[96];
	struct qga_client *c = NULL;
	struct qga_exec_status st = {};
	struct sb_error err = {};
	struct guest_decoder *d;
	struct decoded dd = {};
	int64_t pid, h;
	int r;

	if (access("/usr/sbin/qemu-ga", X_OK) < 0)
		SKIP_TEST("qemu-ga (install qemu-guest-agent: scripts/install-deps)");
	snprintf(sock, sizeof(sock), "%s/qga.sock", tmpdir);
	snprintf(pidf, sizeof(pidf), "%s/qga.pid", tmpdir);
	snprintf(log, sizeof(log), "%s/qga.log", tmpdir);
	const char *const qa[] = { "/usr/sbin/qemu-ga", "-m", "unix-listen", "-p", sock, "-t", tmpdir, "-f", pidf, "-l", log, NULL };
	CHECK(spawn(qa, &agent_pid) == 0);
	r = qga_connect(sock, 10000, NULL, &c, &err);
	CHECK_MSG(r == 0, "%s", err.msg);
	CHECK_MSG(qga_info(c, ver, sizeof(ver), &err) == 0, "%s", err.msg);
	printf("qemu-ga %s\n", ver);

	/* copy the probe in, as into a guest */
	size_t len;
	void *bin = read_all(probe, &len);
	snprintf(path, sizeof(path), "%s/probe", tmpdir);
	CHECK_MSG(qga_copy_in(c, bin, len, path, 0755, &err) == 0, "%s", err.msg);
	size_t len2;
	void *copy = read_all(path, &len2);
	CHECK(len2 == len && !memcmp(copy, bin, len));
	struct stat sb;
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 07777) == 0755);
	free(copy);
	free(bin);

	/* start it, and read its telemetry while it runs */
	snprintf(tel, sizeof(tel), "%s/tel2", tmpdir);
	const char *const args[] = { "--out", tel, "--duration-ms", "2000", "--interval-ms", "100", "--region-mib", "16", NULL };
	CHECK_MSG(qga_exec(c, path, args, NULL, true, &pid, &err) == 0, "%s", err.msg);
	CHECK(guest_decoder_new(&d) == 0);
	/* the probe creates its file first thing: wait for it */
	uint64_t deadline = mono_ns() + 10 * NSEC_PER_SEC;
	while ((r = qga_file_open(c, tel, "r", &h, &err)) < 0 && mono_ns() < deadline) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	CHECK_MSG(r == 0, "%s", err.msg);
	unsigned reads_while_running = 0;
	for (;;) {
		char buf[65536];
		size_t got;
		bool eof;
		CHECK_MSG(qga_file_read(c, h, buf, sizeof(buf), &got, &eof, &err) == 0, "%s", err.msg);
		decode(d, buf, got, &dd);
		if (got)
			reads_while_running += dd.ends == 0;
		if (dd.ends)
			break;
		if (eof) {
			struct timespec ts = { 0, 100 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	CHECK(qga_file_close(c, h, &err) == 0);
	CHECK_MSG(qga_exec_wait(c, pid, 10000, 50, &st, &err) == 0, "%s", err.msg);
	CHECK(st.exited && st.has_code && st.code == 0);
	qga_exec_status_clear(&st);
	printf("telemetry read in %u pieces while the probe ran\n", reads_while_running);
	CHECK(reads_while_running >= 2);
	check_stream(&dd, 100, 100, 16);
	CHECK(dd.end_reason == GUEST_END_RUN_LENGTH);
	guest_decoder_free(d);

	/* failures name the command */
	const char *const fa[] = { "-c", "echo broken >&2; exit 4", NULL };
	r = qga_run(c, "/bin/sh", fa, 10000, NULL, &err);
	printf("%s\n", err.msg);
	CHECK(r == -EIO && strstr(err.msg, "exited with status 4") && strstr(err.msg, "broken"));
	r = qga_run(c, "/nonexistent/stress-ng", NULL, 10000, NULL, &err);
	printf("%s\n", err.msg);
	CHECK(r < 0 && strstr(err.msg, "/nonexistent/stress-ng"));
	qga_client_free(c);
}

int main(int argc, char **argv)
{
	CHECK_MSG(argc == 3, "usage: %s static|agent PROBE", argv[0]);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/snapbench-test-probe-XXXXXX");
	CHECK(mkdtemp(tmpdir));
	atexit(cleanup);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "static"))
		test_static(argv[2]);
	else if (!strcmp(argv[1], "agent"))
		test_agent(argv[2]);
	else
		CHECK_MSG(false, "unknown case %s", argv[1]);
	return 0;
}
