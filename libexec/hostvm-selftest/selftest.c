// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench-hostvm-selftest: the program a riscv64 host VM runs
 * (docs/kernel-arms.md, "The riscv64 host VM"). Linked statically for
 * riscv64 with Debian's cross compiler and packed into the initramfs, whose
 * root it runs in (the init's noroot): this host's / holds x86 programs.
 *
 *   snapbench-hostvm-selftest [--kprobe FUNCTION]... [--iterations N] [--] [SELFTEST ARG...]
 *
 * It checks that the kernel's KVM works (/dev/kvm: KVM_GET_API_VERSION,
 * KVM_CREATE_VM), then runs SELFTEST (dirty_log_perf_test) with its
 * arguments under ptrace, its output going where ours goes, and reads each
 * line it writes at the write's entry, and sends on the progress port (fd
 * SNAPBENCH_HOSTVM_PORT_FD) one JSON line a fact:
 *
 *   {"event":"kvm","api_version":12,"create_vm":true}
 *   {"event":"iteration","iteration":N,"phase":"clear_dirty_log","s":S,
 *    "kprobes":{"FUNCTION":HITS,...}}       hits since the previous line
 *   {"event":"kvm-stats","stats":{"remote_tlb_flush":N,...}}
 *   {"event":"selftest","status":N,"iterations":N,"kprobes_missed":N}
 *
 * and prints each phase's median (min max) over the iterations. It exits
 * with the selftest's status, or 1 when /dev/kvm fails, a --kprobe could
 * not be placed or counted no call, or --iterations N was given and the selftest's output had
 * other than N figures of a phase (its format changed). --kprobe
 * counts a kernel function's calls through a kprobe event's hit count in
 * tracefs (kprobe_profile): the kernel's own per-CPU counter, exact, with
 * the trace buffer off. KVM's statistics are those of the selftest's VM
 * (debugfs kvm/PID-FD/), read at each write while the VM lives: the last
 * reading before it is destroyed. The selftest's output must go to a
 * terminal (the console), where its stdio writes each line as it is made.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selftest-parse.h"

#define TRACEFS "/sys/kernel/tracing"
#define KVM_DEBUGFS "/sys/kernel/debug/kvm"
#define MAX_PROBES 8
#define MAX_STATS 96
#define MAX_ITER 4096

struct probe {
	const char *function;
	char event[64];
	unsigned long first, last, missed;
	int armed;
};

struct stat_value {
	char name[64];
	unsigned long long value;
};

static struct probe probes[MAX_PROBES];
static size_t n_probes;
static struct stat_value stats[MAX_STATS];
static size_t n_stats;
static double figures[SELFTEST_N_PHASES][MAX_ITER];
static size_t n_figures[SELFTEST_N_PHASES];
static int port = -1;
static long want_iterations = -1;

static void port_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void port_line(const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) - 1)
		return;
	line[n++] = '\n';
	if (port >= 0 && write(port, line, (size_t)n) < 0)
		port = -1;
}

/* /dev/kvm answers and makes a VM: the kernel's KVM runs here (the H extension is on) */
static int kvm_check(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC), api, vm;

	if (fd < 0) {
		fprintf(stderr, "snapbench-hostvm-selftest: /dev/kvm: %s\n", strerror(errno));
		return -1;
	}
	api = ioctl(fd, KVM_GET_API_VERSION, 0);
	vm = ioctl(fd, KVM_CREATE_VM, 0);
	printf("snapbench-hostvm-selftest: /dev/kvm: API version %d, KVM_CREATE_VM %s\n", api,
	       vm >= 0 ? "made a VM" : strerror(errno));
	port_line("{\"event\":\"kvm\",\"api_version\":%d,\"create_vm\":%s}", api, vm >= 0 ? "true" : "false");
	if (vm >= 0)
		close(vm);
	close(fd);
	return api == KVM_API_VERSION && vm >= 0 ? 0 : -1;
}

static int write_file(const char *path, const char *text, int append)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

/* kprobe events in the group "snapbench", enabled with the trace buffer off: only their hit counts move */
static void arm_probes(void)
{
	char def[256];

	write_file(TRACEFS "/tracing_on", "0", 0);
	for (size_t i = 0; i < n_probes; i++) {
		struct probe *p = &probes[i];
		int r;

		snprintf(p->event, sizeof(p->event), "sb_%.56s", p->function);
		snprintf(def, sizeof(def), "p:snapbench/%s %s\n", p->event, p->function);
		r = write_file(TRACEFS "/kprobe_events", def, 1);
		if (r == 0) {
			snprintf(def, sizeof(def), TRACEFS "/events/snapbench/%s/enable", p->event);
			r = write_file(def, "1", 0);
		}
		p->armed = r == 0;
		printf("snapbench-hostvm-selftest: kprobe %s: %s\n", p->function, r ? strerror(-r) : "counting");
		port_line("{\"event\":\"kprobe\",\"function\":\"%s\",\"armed\":%s,\"error\":\"%s\"}", p->function,
			  p->armed ? "true" : "false", r ? strerror(-r) : "");
	}
}

/* Each probe's hits since the last call, as a JSON object's members */
static void probe_deltas(char *buf, size_t len)
{
	FILE *f = fopen(TRACEFS "/kprobe_profile", "re");
	char name[128];
	unsigned long hit, miss;
	size_t o = 0;

	buf[0] = '\0';
	while (f && fscanf(f, "%127s %lu %lu", name, &hit, &miss) == 3)
		for (size_t i = 0; i < n_probes; i++) {
			struct probe *p = &probes[i];
			if (!p->armed || strcmp(name, p->event))
				continue;
			o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s\"%s\":%lu", o ? "," : "", p->function,
					      hit - p->last);
			p->last = hit;
			p->missed = miss;
		}
	if (f)
		fclose(f);
}

/* The VM-wide statistics of the selftest's VM (debugfs kvm/PID-FD/NAME), remembered while it lives */
static void read_vm_stats(pid_t pid)
{
	char prefix[32], path[512], text[64];
	DIR *d = opendir(KVM_DEBUGFS), *vm = NULL;
	struct dirent *e;

	snprintf(prefix, sizeof(prefix), "%d-", (int)pid);
	while (d && !vm && (e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix))) {
			snprintf(path, sizeof(path), KVM_DEBUGFS "/%s", e->d_name);
			vm = opendir(path);
		}
	if (d)
		closedir(d);
	if (!vm)
		return;
	n_stats = 0;
	while ((e = readdir(vm)) && n_stats < MAX_STATS) {
		int fd;
		ssize_t n;

		if (e->d_type != DT_REG)
			continue;
		if (strlen(e->d_name) >= sizeof(stats[0].name))
			continue;
		fd = openat(dirfd(vm), e->d_name, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			continue;
		text[n] = '\0';
		memcpy(stats[n_stats].name, e->d_name, strlen(e->d_name) + 1);
		stats[n_stats++].value = strtoull(text, NULL, 10);
	}
	closedir(vm);
}

/* An iteration's figure: the phase that just ended, its time, its kprobe hits */
static void on_line(const char *line)
{
	enum selftest_phase ph;
	unsigned it;
	double s;
	char counts[1024];

	if (!selftest_parse_line(line, &it, &ph, &s))
		return;
	probe_deltas(counts, sizeof(counts));
	if (n_figures[ph] < MAX_ITER)
		figures[ph][n_figures[ph]++] = s;
	port_line("{\"event\":\"iteration\",\"iteration\":%u,\"phase\":\"%s\",\"s\":%.9f,\"kprobes\":{%s}}", it,
		  selftest_phase_name(ph), s, counts);
}

/*
 * The selftest's write(1 or 2, buf, len), stopped at its entry: its main
 * thread prints a phase's line when the phase is over and before the next
 * one starts (the vCPUs wait for it), so the counts read now are exactly
 * the phase's. Lines split over two writes are joined.
 */
static void on_write(pid_t pid, const struct __ptrace_syscall_info *si)
{
	static char line[4096];
	static size_t used;
	char buf[4096];
	size_t len = si->entry.args[2] < sizeof(buf) ? (size_t)si->entry.args[2] : sizeof(buf);
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)si->entry.args[1], len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	read_vm_stats(pid);
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] != '\n' && used + 1 < sizeof(line)) {
			line[used++] = buf[i];
			continue;
		}
		line[used] = '\0';
		used = 0;
		on_line(line);
	}
}

/* Runs argv under ptrace, stopping its main thread at each system call; its wait status, or -1 */
static int run_selftest(char **argv)
{
	struct __ptrace_syscall_info si;
	int st = 0, sig = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execv(argv[0], argv);
		fprintf(stderr, "snapbench-hostvm-selftest: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) /* the exec's SIGTRAP */
		return WIFEXITED(st) || WIFSIGNALED(st) ? st : -1;
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL));
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig) < 0 || waitpid(pid, &st, 0) != pid)
			return -1;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return st;
		sig = 0;
		if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
			sig = WSTOPSIG(st) == SIGTRAP ? 0 : WSTOPSIG(st); /* a signal for it: delivered */
			continue;
		}
		if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(si), &si) > 0 && si.op == PTRACE_SYSCALL_INFO_ENTRY &&
		    si.entry.nr == __NR_write && (si.entry.args[0] == 1 || si.entry.args[0] == 2))
			on_write(pid, &si);
	}
}

static void report(int st)
{
	char buf[4096];
	size_t o = 0;
	unsigned long missed = 0;

	for (int p = 0; p < SELFTEST_N_PHASES; p++) {
		double med, lo, hi;
		if (!n_figures[p])
			continue;
		selftest_summary(figures[p], n_figures[p], &med, &lo, &hi);
		printf("snapbench-hostvm-selftest: %s time per iteration: %.6f s (%.6f %.6f), %zu iterations\n",
		       selftest_phase_name(p), med, lo, hi, n_figures[p]);
	}
	for (size_t i = 0; i < n_stats; i++)
		o += (size_t)snprintf(buf + o, o < sizeof(buf) ? sizeof(buf) - o : 0, "%s\"%s\":%llu", i ? "," : "",
				      stats[i].name, stats[i].value);
	port_line("{\"event\":\"kvm-stats\",\"stats\":{%s}}", o < sizeof(buf) ? buf : "");
	for (size_t i = 0; i < n_probes; i++)
		missed += probes[i].missed;
	port_line("{\"event\":\"selftest\",\"status\":%d,\"iterations\":%zu,\"kprobes_missed\":%lu}",
		  WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), n_figures[SELFTEST_CLEAR_DIRTY_LOG], missed);
}

/* Every --kprobe placed, and --iterations figures of each phase */
static int checks_pass(void)
{
	int ok = 1;

	for (size_t i = 0; i < n_probes; i++)
		if (!probes[i].armed || probes[i].last == probes[i].first) {
			fprintf(stderr, "snapbench-hostvm-selftest: kprobe %s %s\n", probes[i].function,
				probes[i].armed ? "counted no call while the selftest ran" : "was not placed");
			ok = 0;
		}
	for (int p = 0; p < SELFTEST_N_PHASES && want_iterations >= 0; p++)
		if (n_figures[p] != (size_t)want_iterations) {
			fprintf(stderr, "snapbench-hostvm-selftest: %zu %s figures in the selftest's output, want %ld\n",
				n_figures[p], selftest_phase_name(p), want_iterations);
			ok = 0;
		}
	return ok;
}

int main(int argc, char **argv)
{
	const char *fd = getenv("SNAPBENCH_HOSTVM_PORT_FD");
	int i = 1, st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (fd)
		port = atoi(fd);
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "--iterations") && i + 1 < argc) {
			want_iterations = strtol(argv[++i], NULL, 10);
			continue;
		}
		if (strcmp(argv[i], "--kprobe") || i + 1 >= argc || n_probes == MAX_PROBES) {
			fprintf(stderr, "usage: snapbench-hostvm-selftest [--kprobe FUNCTION]... [--iterations N] [--] "
					"[SELFTEST ARG...] (at most %d --kprobe)\n", MAX_PROBES);
			return 2;
		}
		probes[n_probes++].function = argv[++i];
	}
	if (kvm_check() < 0)
		return 1;
	if (i >= argc)
		return 0;
	arm_probes();
	probe_deltas((char[1024]){ 0 }, 1024);
	for (size_t p = 0; p < n_probes; p++)
		probes[p].first = probes[p].last;
	st = run_selftest(argv + i);
	if (st < 0) {
		fprintf(stderr, "snapbench-hostvm-selftest: running %s: %s\n", argv[i], strerror(errno));
		return 1;
	}
	report(st);
	return checks_pass() && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
