// SPDX-License-Identifier: GPL-2.0-or-later
/* The host VM's QEMU: accelerator choice, argv, start, port, exit. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "macro.h"
#include "qemu-binary.h"
#include "spawn-program.h"
#include "strv.h"

#define CHILD_PORT_FD 3
#define MAX_ARGS 96

static bool file_has(const char *path, const char *word)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char line[8192];

	while (f && fgets(line, sizeof(line), f)) {
		for (char *save = NULL, *t = strtok_r(line, " \t\n:", &save); t; t = strtok_r(NULL, " \t\n:", &save))
			if (!strcmp(t, word))
				return true;
	}
	return false;
}

static bool param_on(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char v[16] = "";

	return f && fgets(v, sizeof(v), f) && (v[0] == 'Y' || v[0] == 'y' || v[0] == '1');
}

int hostvm_choose_accel(const char *requested, const char *sysroot, char accel[static 8], char vendor[static 8],
			char *reason, size_t reason_len, struct sb_error *err)
{
	const char *root = sysroot ? sysroot : "";
	char path[PATH_MAX], why[256] = "";
	bool svm, vmx, nested = false, kvm_ok;
	int fd;

	snprintf(path, sizeof(path), "%s/proc/cpuinfo", root);
	svm = file_has(path, "svm");
	vmx = file_has(path, "vmx");
	snprintf(path, sizeof(path), "%s/dev/kvm", root);
	fd = open(path, O_RDWR | O_CLOEXEC);
	kvm_ok = fd >= 0;
	if (fd >= 0)
		close(fd);
	if (!kvm_ok)
		snprintf(why, sizeof(why), "/dev/kvm does not open (%s)", strerror(errno));
	else if (!svm && !vmx)
		snprintf(why, sizeof(why), "the host CPU has neither svm nor vmx (its KVM cannot nest)");
	else {
		snprintf(path, sizeof(path), "%s/sys/module/%s/parameters/nested", root, svm ? "kvm_amd" : "kvm_intel");
		nested = param_on(path);
		if (!nested)
			snprintf(why, sizeof(why), "%s nested=0 (set %s.nested=1 to run host VMs at native speed)",
				 svm ? "kvm_amd" : "kvm_intel", svm ? "kvm_amd" : "kvm_intel");
	}
	if (!strcmp(requested, "kvm") || (!strcmp(requested, "auto") && nested)) {
		if (!nested)
			return sb_error_set(err, -EOPNOTSUPP,
					    "host_vm.accel kvm: nested virtualization is not available here: %s; use --host-vm-accel tcg (slow, but real KVM code) or auto",
					    why);
		snprintf(accel, 8, "kvm");
		snprintf(vendor, 8, "%s", svm ? "amd" : "intel");
		snprintf(reason, reason_len, "%s: the host's KVM nests (%s nested=1)", requested, svm ? "kvm_amd" : "kvm_intel");
		return 0;
	}
	if (strcmp(requested, "tcg") && strcmp(requested, "auto"))
		return sb_error_set(err, -EINVAL, "host_vm.accel: \"%.32s\" is not auto, kvm or tcg", requested);
	snprintf(accel, 8, "tcg");
	snprintf(vendor, 8, "amd");
	if (!strcmp(requested, "tcg"))
		snprintf(reason, reason_len, "tcg: asked for; QEMU emulates an AMD CPU with svm and npt");
	else
		snprintf(reason, reason_len, "auto: TCG with an emulated AMD CPU (svm, npt), since %s", why);
	return 0;
}

static int push(char **v, size_t *n, const char *fmt, ...) _printf_(3, 4);
static int push(char **v, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*n + 1 >= MAX_ARGS)
		return -E2BIG;
	va_start(ap, fmt);
	r = vasprintf(&v[*n], fmt, ap);
	va_end(ap);
	if (r < 0) {
		v[*n] = NULL;
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

/* QEMU's option syntax: a comma in a value is written twice */
static char *qemu_escape(const char *s)
{
	size_t n = 0;
	char *o, *p;

	for (const char *c = s; *c; c++)
		n += *c == ',' ? 2 : 1;
	o = p = malloc(n + 1);
	if (!o)
		return NULL;
	for (const char *c = s; *c; c++) {
		*p++ = *c;
		if (*c == ',')
			*p++ = ',';
	}
	*p = '\0';
	return o;
}

/* What the host VM's configuration must agree with: NUMA nodes that split it evenly, icount's limits. */
static int check_config(const struct hostvm_config *cfg, struct sb_error *err)
{
	uint64_t mib = cfg->memory >> 20;
	unsigned nodes = cfg->numa_nodes ? cfg->numa_nodes : 1;

	if (cfg->vcpus % nodes || mib % nodes)
		return sb_error_set(err, -EINVAL,
				    "host_vm.numa_nodes %u: the vCPUs (%u) and MiB of memory (%llu) must split evenly over the nodes",
				    nodes, cfg->vcpus, (unsigned long long)mib);
	/*
	 * Under -icount QEMU's virtual clock, and with it the guest's TSC,
	 * advances one ns per instruction executed: a benchmark's figures
	 * inside become instruction counts, the same in every run whatever
	 * else the machine does. QEMU 7.2 never brings a second vCPU up that
	 * way (the guest's SMP boot waits forever).
	 */
	if (hostvm_arch_riscv64(cfg->arch) && strcmp(cfg->accel, "tcg"))
		return sb_error_set(err, -EINVAL, "host VM: arch riscv64 runs under TCG only, not %s", cfg->accel);
	if (cfg->arch && strcmp(cfg->arch, "x86_64") && !hostvm_arch_riscv64(cfg->arch))
		return sb_error_set(err, -EINVAL, "host VM: arch \"%.32s\" is not x86_64 or riscv64", cfg->arch);
	if (cfg->icount && strcmp(cfg->accel, "tcg"))
		return sb_error_set(err, -EINVAL, "host VM: icount needs accel tcg, not %s", cfg->accel);
	if (cfg->icount && cfg->vcpus != 1)
		return sb_error_set(err, -EINVAL,
				    "host VM: icount runs one vCPU (QEMU never brings a second one up under -icount), not %u",
				    cfg->vcpus);
	return 0;
}

/* A memory backend and a node for each NUMA node, the vCPUs split evenly; nonzero when v is full. */
static int push_numa(const struct hostvm_config *cfg, char **v, size_t *n)
{
	uint64_t mib = cfg->memory >> 20;
	unsigned nodes = cfg->numa_nodes, per = cfg->vcpus / nodes;
	int r = 0;

	for (unsigned i = 0; i < nodes; i++) {
		r |= push(v, n, "-object") |
		     push(v, n, "memory-backend-ram,id=sbmem%u,size=%lluM", i, (unsigned long long)(mib / nodes));
		r |= push(v, n, "-numa");
		if (per > 1)
			r |= push(v, n, "node,nodeid=%u,memdev=sbmem%u,cpus=%u-%u", i, i, i * per, i * per + per - 1);
		else
			r |= push(v, n, "node,nodeid=%u,memdev=sbmem%u,cpus=%u", i, i, i * per);
	}
	return r;
}

/* A 9p share for each of cfg's directories; nonzero when v is full or memory ran out. */
static int push_shares(const struct hostvm_config *cfg, char **v, size_t *n)
{
	int r = 0;

	for (size_t i = 0; i < cfg->n_shares; i++) {
		_cleanup_free_ char *p = qemu_escape(cfg->shares[i].path);
		if (!p)
			return -ENOMEM;
		r |= push(v, n, "-fsdev") | push(v, n, "local,id=sbfs%zu,path=%s,security_model=none%s,multidevs=remap", i,
						 p, cfg->shares[i].readonly ? ",readonly=on" : "");
		r |= push(v, n, "-device") | push(v, n, "virtio-9p-pci,fsdev=sbfs%zu,mount_tag=%s", i, cfg->shares[i].tag);
	}
	return r;
}

bool hostvm_arch_riscv64(const char *arch)
{
	return arch && !strcmp(arch, "riscv64");
}

/*
 * The machine and CPU: x86's (KVM's host CPU, or TCG's AMD with svm and
 * npt), or riscv64's virt board under TCG with the H extension, whose
 * OpenSBI starts the kernel in HS mode so its KVM runs guests.
 */
static int push_machine(const struct hostvm_config *cfg, char **v, size_t *n)
{
	int r = 0;

	if (hostvm_arch_riscv64(cfg->arch)) {
		r |= push(v, n, "-M") | push(v, n, "virt");
		r |= push(v, n, "-accel") | push(v, n, "tcg,thread=single");
		r |= push(v, n, "-cpu") | push(v, n, "rv64,h=true");
		r |= push(v, n, "-bios") | push(v, n, "%s", cfg->firmware ? cfg->firmware : HOSTVM_RISCV64_FIRMWARE);
		return r;
	}
	r |= push(v, n, "-accel");
	if (!strcmp(cfg->accel, "kvm"))
		r |= push(v, n, "kvm") | push(v, n, "-cpu") | push(v, n, "host");
	else
		/* single-threaded: with thread=multi the npt arm's guest reset in about 1 run in 3 (docs/kernel-arms.md) */
		r |= push(v, n, "tcg,thread=single") | push(v, n, "-cpu") | push(v, n, "qemu64,+svm,+npt");
	if (cfg->firmware)
		r |= push(v, n, "-bios") | push(v, n, "%s", cfg->firmware);
	return r;
}

int hostvm_argv(const struct hostvm_config *cfg, const char *qemu, int port_fd, char ***ret, struct sb_error *err)
{
	char **v = calloc(MAX_ARGS, sizeof(*v));
	uint64_t mib = cfg->memory >> 20;
	unsigned nodes = cfg->numa_nodes ? cfg->numa_nodes : 1;
	size_t n = 0;
	int r = 0;

	if (!v)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = check_config(cfg, err);
	if (r < 0) {
		free(v);
		return r;
	}
	r |= push(v, &n, "%s", qemu);
	if (cfg->name)
		r |= push(v, &n, "-name") | push(v, &n, "%s", cfg->name);
	r |= push(v, &n, "-nodefaults") | push(v, &n, "-no-user-config") | push(v, &n, "-no-reboot");
	r |= push(v, &n, "-display") | push(v, &n, "none");
	r |= push_machine(cfg, v, &n);
	if (cfg->icount)
		r |= push(v, &n, "-icount") | push(v, &n, "shift=0");
	r |= push(v, &n, "-m") | push(v, &n, "%lluM", (unsigned long long)mib);
	r |= push(v, &n, "-smp") | push(v, &n, "%u", cfg->vcpus);
	if (nodes > 1)
		r |= push_numa(cfg, v, &n);
	r |= push(v, &n, "-kernel") | push(v, &n, "%s", cfg->kernel);
	r |= push(v, &n, "-initrd") | push(v, &n, "%s", cfg->initrd);
	r |= push(v, &n, "-append") | push(v, &n, "%s", cfg->append);
	r |= push(v, &n, "-chardev") | push(v, &n, "stdio,id=sbcon,signal=off");
	r |= push(v, &n, "-serial") | push(v, &n, "chardev:sbcon");
	r |= push_shares(cfg, v, &n);
	r |= push(v, &n, "-device") | push(v, &n, "virtio-serial-pci,id=sbser");
	r |= push(v, &n, "-chardev") | push(v, &n, "socket,id=sbport,fd=%d", port_fd);
	r |= push(v, &n, "-device") | push(v, &n, "virtserialport,bus=sbser.0,chardev=sbport,name=%s", HOSTVM_PORT_NAME);
	if (r) {
		strv_free(v);
		return sb_error_set(err, -ENOMEM, "host VM: QEMU's argument list is too long or memory ran out");
	}
	*ret = v;
	return 0;
}

int hostvm_start(const struct hostvm_config *cfg, struct hostvm **ret, struct sb_error *err)
{
	bool rv = hostvm_arch_riscv64(cfg->arch);
	const char *want = cfg->qemu_binary ? cfg->qemu_binary : rv ? HOSTVM_RISCV64_QEMU : QEMU_DEFAULT_BINARY;
	const char *pkg = rv ? "qemu-system-misc" : "qemu-system-x86";
	_cleanup_free_ char *qemu = NULL;
	_cleanup_strv_free_ char **argv = NULL;
	_cleanup_close_ int log_fd = -1, port_ours = -1, port_child = -1;
	int sp[2], k;
	struct hostvm *vm;
	pid_t pid;

	k = spawn_find_program(want, &qemu);
	if (k == -ENOMEM)
		return sb_error_set(err, k, "out of memory");
	if (k < 0 && strchr(want, '/'))
		return sb_error_set(err, k, "host VM: QEMU %s: %s; install %s or give --qemu PATH", want, strerror(-k),
				    pkg);
	if (k < 0)
		return sb_error_set(err, k, "host VM: QEMU %s: not found in PATH; install %s or give --qemu PATH", want,
				    pkg);
	k = hostvm_argv(cfg, qemu, CHILD_PORT_FD, &argv, err);
	if (k < 0)
		return k;
	log_fd = open(cfg->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log_fd < 0)
		return sb_error_set(err, -errno, "host VM console log %s: %s", cfg->log_path, strerror(errno));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return sb_error_set(err, -errno, "host VM: starting QEMU: %s", strerror(errno));
	port_ours = sp[0];
	port_child = sp[1];
	const struct spawn_fd fds[] = { { SPAWN_DEV_NULL, 0 }, { log_fd, 1 }, { log_fd, 2 }, { port_child, CHILD_PORT_FD } };
	k = spawn_start(&(struct spawn_options){ .argv = argv, .path = qemu, .fds = fds, .n_fds = ARRAY_SIZE(fds),
						 .new_process_group = true, .parent_death_signal = SIGKILL,
						 .reset_signals = true },
			&pid, err);
	if (k < 0)
		return sb_error_prefix(err, "host VM");
	vm = calloc(1, sizeof(*vm));
	if (!vm) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	vm->pid = pid;
	vm->port_fd = TAKE_FD(port_ours);
	fcntl(vm->port_fd, F_SETFL, O_NONBLOCK);
	vm->argv = TAKE_PTR(argv);
	vm->start_ns = mono_ns();
	vm->log_path = strdup(cfg->log_path);
	if (cfg->pid_path) {
		FILE *f = fopen(cfg->pid_path, "we");
		if (f) {
			fprintf(f, "%d\n", (int)pid);
			fclose(f);
			vm->pid_path = strdup(cfg->pid_path);
		}
	}
	*ret = vm;
	return 0;
}

int hostvm_read_port(struct hostvm *vm, void (*line)(const char *text, void *userdata), void *userdata)
{
	char buf[4096];

	for (;;) {
		ssize_t n = read(vm->port_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -EPIPE;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				vm->line[vm->line_len] = '\0';
				if (vm->line_len)
					line(vm->line, userdata);
				vm->line_len = 0;
			} else if (vm->line_len + 1 < sizeof(vm->line)) {
				vm->line[vm->line_len++] = buf[i];
			}
		}
	}
}

static void reaped(struct hostvm *vm, int st)
{
	vm->exited = true;
	vm->wait_status = st;
	if (vm->pid_path)
		unlink(vm->pid_path);
}

bool hostvm_exited(struct hostvm *vm)
{
	int st;

	if (vm->exited)
		return true;
	if (waitpid(vm->pid, &st, WNOHANG) == vm->pid)
		reaped(vm, st);
	return vm->exited;
}

void hostvm_kill(struct hostvm *vm)
{
	int st;

	if (!vm || vm->exited)
		return;
	kill(vm->pid, SIGKILL);
	if (waitpid(vm->pid, &st, 0) == vm->pid)
		reaped(vm, st);
}

int hostvm_wait(struct hostvm *vm, int timeout_ms)
{
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;

	while (!hostvm_exited(vm)) {
		if (mono_ns() >= deadline) {
			hostvm_kill(vm);
			return -ETIMEDOUT;
		}
		usleep(20000);
	}
	return 0;
}

void hostvm_free(struct hostvm *vm)
{
	if (!vm)
		return;
	hostvm_kill(vm);
	if (vm->port_fd >= 0)
		close(vm->port_fd);
	strv_free(vm->argv);
	free(vm->log_path);
	free(vm->pid_path);
	free(vm);
}

void hostvm_console_tail(const char *log_path, unsigned lines, char *buf, size_t len)
{
	_cleanup_close_ int fd = open(log_path, O_RDONLY | O_CLOEXEC);
	char tail[8192];
	struct stat st;
	ssize_t n;
	size_t o = 0;

	if (len)
		buf[0] = '\0';
	if (fd < 0 || fstat(fd, &st) < 0 || len == 0)
		return;
	off_t from = st.st_size > (off_t)sizeof(tail) - 1 ? st.st_size - (off_t)sizeof(tail) + 1 : 0;
	n = pread(fd, tail, sizeof(tail) - 1, from);
	if (n <= 0)
		return;
	tail[n] = '\0';
	/* printable only: the console has escape sequences and CRs */
	for (ssize_t i = 0; i < n; i++)
		if (tail[i] == '\r' || (tail[i] != '\n' && ((unsigned char)tail[i] < 0x20 || tail[i] == 0x7f)))
			tail[i] = ' ';
	char *end = tail + n;
	while (end > tail && (end[-1] == '\n' || end[-1] == ' '))
		*--end = '\0';
	char *start = end;
	/* a panic: from its first line, which says why */
	char *panic = strstr(tail, "Kernel panic - not syncing");
	if (panic) {
		while (panic > tail && panic[-1] != '\n')
			panic--;
		start = panic;
		lines = 0;
	}
	for (unsigned l = 0; start > tail && l < lines;) {
		start--;
		if (*start == '\n' && ++l == lines) {
			start++;
			break;
		}
	}
	for (char *p = start; *p && o + 4 < len; p++) {
		if (*p == '\n') {
			o += (size_t)snprintf(buf + o, len - o, " | ");
			continue;
		}
		buf[o++] = *p;
	}
	buf[o < len ? o : len - 1] = '\0';
}
