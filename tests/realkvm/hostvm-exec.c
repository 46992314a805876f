// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostvm-exec: run one command inside a host VM booting a kernel under test
 * (docs/testing.md, "The real-KVM tier"), for the tests that must run on
 * real KVM code: this CI host's KVM is PVM, the host VM's is the kernel
 * under test's own kvm_amd (svm emulated by TCG here).
 *
 *   hostvm-exec [--kernel IMAGE] [--modules DIR] [--param MODULE.NAME=VALUE]...
 *               [--memory MIB] [--vcpus N] [--accel auto|kvm|tcg]
 *               [--timeout S] [--env NAME=VALUE]... [--work DIR] [--icount]
 *               [--backports|--trixie-backports|--riscv64] [--host-if-kvm]
 *               [--systemd] [--boot-log]
 *               -- COMMAND ARG...
 *
 * The host VM's root is this host's / (read-only), so COMMAND is a path of
 * this build. Without --kernel, the one kernel that scripts/fetch-test-kernel
 * unpacked into $SNAPBENCH_KERNEL_CACHE (default /var/cache/snapbench/kernels)
 * is used; with --backports, the one `scripts/fetch-test-kernel --backports`
 * unpacked into $SNAPBENCH_KERNEL_CACHE_BACKPORTS (default
 * /var/cache/snapbench/kernels-backports), Debian 12's backports kernel, the
 * real-KVM tier's second kernel; with --trixie-backports, the one
 * `scripts/fetch-test-kernel --trixie-backports` unpacked into
 * $SNAPBENCH_KERNEL_CACHE_TRIXIE (default
 * /var/cache/snapbench/kernels-trixie-backports), Debian 13's backports 7.2,
 * its third. Its output is the VM's console, printed when the VM ends. The
 * exit status is the command's; a command that skipped (77) inside the VM
 * is a failure here: the host VM is there to have the feature. A VM that
 * does not finish within --timeout is killed (exit 1, console tail).
 *
 * --icount runs the host VM under TCG's -icount with one vCPU: its clocks
 * (the TSC, and so sched_clock() and the BPF run-time statistics) advance
 * one ns per instruction the guest executes, so a benchmark's per-event ns
 * inside are instructions, the same from run to run on a busy machine
 * (docs/testing.md, "Instruction counts in a host VM").
 *
 * COMMAND gets SNAPBENCH_HOSTVM_ACCEL, the host VM's accelerator (kvm or
 * tcg): under tcg its clocks, and a nested guest's, are the emulator's.
 *
 * --riscv64 boots the riscv64 kernel `scripts/fetch-test-kernel --riscv64`
 * unpacked into $SNAPBENCH_KERNEL_CACHE_RISCV64 (default
 * /var/cache/snapbench/kernels-riscv64), or --kernel IMAGE (a RISC-V Image),
 * as a riscv64 host VM (qemu-system-riscv64 -M virt, H extension, TCG): its
 * root is the initramfs, with the riscv64 init and kvm.ko; COMMAND and
 * every argument naming a file here (static riscv64 programs) are packed
 * into it as /bin/NAME and named so.
 *
 * --boot-log boots without `quiet`, with loglevel=8 and an early console
 * (earlycon=sbi on riscv64, earlyprintk=ttyS0 on x86): for a kernel that
 * prints nothing (the console log is printed when the VM ends or is killed).
 *
 * --host-if-kvm runs COMMAND on this host, not in a host VM, when /dev/kvm
 * opens here (for the tests that need KVM and BPF: on a machine with KVM
 * they measure its KVM, on one without it the host VM's; docs/testing.md).
 *
 * --systemd boots the root's systemd as PID 1 instead (the root is then an
 * overlay over this host's /, writable in memory) with only COMMAND to run,
 * as kernel-command-line.service (systemd.run=; the words of COMMAND may not
 * hold spaces or quotes), and powers off when it ends. --env goes to
 * systemd's environment (systemd.setenv=), and so does
 * HOSTVM_EXEC_STATUS=FILE: COMMAND writes its exit status there, the one
 * channel back from a VM whose init is not ours. This host's /.dockerenv is
 * hidden in the VM, or its systemd would take itself for a container's.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "initramfs.h"
#include "kernel-image.h"
#include "launch.h"
#include "macro.h"
#include "modules.h"
#include "strbuf.h"

#define MAX_ITEMS 32
#define MAX_MODULES 64

struct options {
	const char *kernel, *modules, *accel, *work;
	const char *params[MAX_ITEMS], *envs[MAX_ITEMS];
	size_t n_params, n_envs;
	unsigned memory_mib, vcpus;
	double timeout_s;
	bool systemd, icount, backports, trixie, host_if_kvm, riscv64;
	bool boot_log; /* --boot-log: the kernel's whole log on the console, from its first line (a kernel that stays silent) */
	char **command;
};

struct follow {
	bool echo; /* --riscv64: the program's port lines are its results, printed */
	bool exit_seen;
	int status; /* the command's exit status, -1 until the exit event */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: hostvm-exec --kernel IMAGE [--modules DIR] [--param MODULE.NAME=VALUE]... [--memory MIB]\n"
		   "                   [--vcpus N] [--accel auto|kvm|tcg] [--timeout S] [--env NAME=VALUE]...\n"
		   "                   [--work DIR] [--systemd] [--icount] [--backports|--trixie-backports|--riscv64]\n"
		   "                   [--host-if-kvm] [--boot-log]\n"
		   "                   -- COMMAND ARG...\n");
}

static int parse_argv(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "kernel", required_argument, NULL, 'k' }, { "modules", required_argument, NULL, 'm' },
		{ "param", required_argument, NULL, 'p' },  { "memory", required_argument, NULL, 'M' },
		{ "vcpus", required_argument, NULL, 'c' },  { "accel", required_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' }, { "env", required_argument, NULL, 'e' },
		{ "work", required_argument, NULL, 'w' },   { "help", no_argument, NULL, 'h' },
		{ "systemd", no_argument, NULL, 'S' },     { "icount", no_argument, NULL, 'I' },
		{ "backports", no_argument, NULL, 'B' },   { "host-if-kvm", no_argument, NULL, 'H' },
		{ "trixie-backports", no_argument, NULL, 'X' }, { "riscv64", no_argument, NULL, 'R' },
		{ "boot-log", no_argument, NULL, 'L' },
		{}
	};
	int c;

	*o = (struct options){ .accel = "auto", .memory_mib = 2048, .timeout_s = 300 }; /* vcpus 0: not given */
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		char *end = NULL;

		switch (c) {
		case 'k': o->kernel = optarg; break;
		case 'm': o->modules = optarg; break;
		case 'a': o->accel = optarg; break;
		case 'w': o->work = optarg; break;
		case 'S': o->systemd = true; break;
		case 'I': o->icount = true; break;
		case 'B': o->backports = true; break;
		case 'X': o->trixie = true; break;
		case 'R': o->riscv64 = true; break;
		case 'L': o->boot_log = true; break;
		case 'H': o->host_if_kvm = true; break;
		case 'p':
		case 'e':
			if ((c == 'p' ? o->n_params : o->n_envs) >= MAX_ITEMS) {
				fprintf(stderr, "hostvm-exec: at most %d --%s\n", MAX_ITEMS, c == 'p' ? "param" : "env");
				return -EINVAL;
			}
			if (c == 'p')
				o->params[o->n_params++] = optarg;
			else
				o->envs[o->n_envs++] = optarg;
			break;
		case 'M':
		case 'c':
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			if (errno || !*optarg || *end || v == 0 || v > 65536) {
				fprintf(stderr, "hostvm-exec: --%s '%s' is not a positive number\n", c == 'M' ? "memory" : "vcpus",
					optarg);
				return -EINVAL;
			}
			if (c == 'M')
				o->memory_mib = (unsigned)v;
			else
				o->vcpus = (unsigned)v;
			break;
		case 't':
			o->timeout_s = strtod(optarg, &end);
			if (!*optarg || *end || !(o->timeout_s > 0)) {
				fprintf(stderr, "hostvm-exec: --timeout '%s' is not a positive number of seconds\n", optarg);
				return -EINVAL;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "hostvm-exec: a command is required\n");
		usage(stderr);
		return -EINVAL;
	}
	o->command = argv + optind;
	if ((o->backports || o->trixie) && o->kernel) {
		fprintf(stderr, "hostvm-exec: --%s boots the backports cache's kernel, --kernel %s another: give one\n",
			o->trixie ? "trixie-backports" : "backports", o->kernel);
		return -EINVAL;
	}
	if (o->backports + o->trixie + o->riscv64 > 1) {
		fprintf(stderr, "hostvm-exec: --backports, --trixie-backports and --riscv64 name different kernels: give one\n");
		return -EINVAL;
	}
	if (o->riscv64 && (o->systemd || o->icount || o->host_if_kvm || strcmp(o->accel, "auto"))) {
		fprintf(stderr, "hostvm-exec: --riscv64 runs its own init under TCG: drop --systemd, --icount, --host-if-kvm "
				"and --accel\n");
		return -EINVAL;
	}
	if (o->icount) {
		if (!strcmp(o->accel, "auto"))
			o->accel = "tcg";
		if (strcmp(o->accel, "tcg")) {
			fprintf(stderr, "hostvm-exec: --icount is TCG's: drop --accel %s or give --accel tcg\n", o->accel);
			return -EINVAL;
		}
		if (o->vcpus > 1) {
			fprintf(stderr, "hostvm-exec: --icount runs one vCPU (QEMU never brings a second one up under "
					"-icount): drop --vcpus %u\n",
				o->vcpus);
			return -EINVAL;
		}
	}
	if (!o->vcpus)
		o->vcpus = o->icount ? 1 : 2;
	return 0;
}

/* The load-time parameters --param gave for module name ("kvm_amd.npt=0" -> "npt=0"), space-separated. */
static void module_params(const struct options *o, const char *name, char *buf, size_t len)
{
	size_t n = strlen(name), used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < o->n_params; i++)
		if (!strncmp(o->params[i], name, n) && o->params[i][n] == '.' && used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "", o->params[i] + n + 1);
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/*
 * Arguments that name files here (meson passes build-tree paths relative to
 * the build directory) become absolute: the command runs from / in the VM.
 */
static int absolute_args(char **args)
{
	for (char **a = args; *a; a++) {
		char *abs;

		if (**a == '/' || access(*a, F_OK) < 0)
			continue;
		abs = realpath(*a, NULL);
		if (!abs)
			return -errno;
		*a = abs; /* lives as long as the program */
	}
	return 0;
}

static const char *const tmpfs[] = { "/run", "/tmp", "/var/tmp", "/root" };
#define MAX_TREES 2
static char trees[MAX_TREES][PATH_MAX];
static size_t n_trees;

/*
 * The directories under a tmpfs of the host VM that path needs (a build
 * tree in /tmp, say): TMPFS/FIRST-COMPONENT, shared back at the same path.
 */
static int need_tree(const char *path)
{
	for (size_t i = 0; i < ARRAY_SIZE(tmpfs); i++) {
		size_t n = strlen(tmpfs[i]);
		const char *end;
		char top[PATH_MAX];

		if (!under(path, tmpfs[i]) || !path[n])
			continue;
		end = strchr(path + n + 1, '/');
		snprintf(top, sizeof(top), "%.*s", end ? (int)(end - path) : (int)strlen(path), path);
		for (size_t t = 0; t < n_trees; t++)
			if (!strcmp(trees[t], top))
				return 0;
		if (n_trees == MAX_TREES)
			return -E2BIG;
		snprintf(trees[n_trees++], sizeof(trees[0]), "%s", top);
	}
	return 0;
}

static int build_initramfs(const struct options *o, const struct hostvm_modules *mods, const char *init,
			   const char *out_dir, const char *accel, const char *path, struct sb_error *err)
{
	_cleanup_free_ char *conf = NULL;
	char *params[MAX_MODULES] = {};
	struct strbuf b = {};
	int k = 0;

	if (mods->n > MAX_MODULES)
		return sb_error_set(err, -E2BIG, "initramfs: %zu modules, at most %d", mods->n, MAX_MODULES);
	for (size_t m = 0; m < mods->n; m++) {
		char buf[1024];
		module_params(o, mods->items[m].name, buf, sizeof(buf));
		params[m] = strdup(buf);
	}
	if (o->systemd) {
		/* systemd as PID 1: a writable root (overlay), its own /run; it gets no port */
		strbuf_appendf(&b, "overlay\nhide /.dockerenv\ntmpfs /run\nout out %s\npid1\narg /lib/systemd/systemd\n", out_dir);
		goto write;
	}
	/* the tests want a writable /tmp; a build tree beneath one is shared back over it (shares "tree0"...) */
	for (size_t i = 0; i < ARRAY_SIZE(tmpfs); i++)
		strbuf_appendf(&b, "tmpfs %s\n", tmpfs[i]);
	for (size_t t = 0; t < n_trees; t++)
		strbuf_appendf(&b, "out tree%zu %s\n", t, trees[t]);
	strbuf_appendf(&b, "port %s\n", HOSTVM_PORT_NAME);
	strbuf_appendf(&b, "out out %s\n", out_dir);
	strbuf_append(&b, "env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n");
	strbuf_append(&b, "env HOME=/root\n");
	/* what runs the host VM: under tcg its clocks are the emulator's (tests/lib/test-accel.h) */
	strbuf_appendf(&b, "env SNAPBENCH_HOSTVM_ACCEL=%s\n", accel);
	for (size_t i = 0; i < o->n_envs; i++)
		strbuf_appendf(&b, "env %s\n", o->envs[i]);
	for (char **a = o->command; *a && !k; a++) {
		if (strchr(*a, '\n'))
			k = sb_error_set(err, -EINVAL, "argument '%s' has a newline, which the host VM's init cannot take", *a);
		strbuf_appendf(&b, "arg %s\n", *a);
	}
write:
	conf = strbuf_steal(&b);
	if (!k && !conf)
		k = sb_error_set(err, -ENOMEM, "out of memory");
	if (!k)
		k = hostvm_initramfs_write(path, init, mods, (const char *const *)params, conf, err);
	for (size_t m = 0; m < mods->n; m++)
		free(params[m]);
	return k;
}

/*
 * --riscv64's initramfs: the root itself (noroot), kvm.ko, COMMAND and the
 * arguments naming files here packed as /bin/NAME (riscv64 programs: this
 * host's / has none), the port, the environment.
 */
static int riscv64_initramfs(const struct options *o, const struct hostvm_modules *mods, const char *init,
			     const char *path, struct sb_error *err)
{
	struct hostvm_initramfs_file files[MAX_ITEMS];
	char names[MAX_ITEMS][PATH_MAX];
	_cleanup_free_ char *conf = NULL;
	struct strbuf b = {};
	size_t n = 0;

	strbuf_appendf(&b, "noroot\ntmpfs /tmp\nport %s\n", HOSTVM_PORT_NAME);
	strbuf_append(&b, "env PATH=/bin\nenv HOME=/\nenv SNAPBENCH_HOSTVM_ACCEL=tcg\n");
	for (size_t i = 0; i < o->n_envs; i++)
		strbuf_appendf(&b, "env %s\n", o->envs[i]);
	for (char **a = o->command; *a; a++) {
		const char *base = strrchr(*a, '/');
		if (strchr(*a, '\n')) {
			strbuf_free(&b);
			return sb_error_set(err, -EINVAL, "argument '%s' has a newline, which the host VM's init cannot take", *a);
		}
		if (**a != '/' || access(*a, R_OK) < 0) {
			strbuf_appendf(&b, "arg %s\n", *a);
			continue;
		}
		if (n == MAX_ITEMS) {
			strbuf_free(&b);
			return sb_error_set(err, -E2BIG, "--riscv64: more than %d files to pack", MAX_ITEMS);
		}
		snprintf(names[n], sizeof(names[n]), "bin/%s", base + 1);
		files[n] = (struct hostvm_initramfs_file){ .name = names[n], .path = *a };
		strbuf_appendf(&b, "arg /%s\n", names[n++]);
	}
	conf = strbuf_steal(&b);
	if (!conf)
		return sb_error_set(err, -ENOMEM, "out of memory");
	return hostvm_initramfs_write_files(path, init, mods, NULL, conf, files, n, err);
}

/* --riscv64: a RISC-V Image, its tree's kvm.ko, qemu-system-riscv64 and OpenSBI, the initramfs */
static int prepare_riscv64(const struct options *o, const char *init, const char *initrd, struct kernel_id *kernel,
			   struct hostvm_modules *mods, struct sb_error *err)
{
	_cleanup_free_ char *dir = NULL;
	int k;

	if (!hostvm_kernel_is_riscv_image(o->kernel))
		return sb_error_set(err, -EINVAL, "--riscv64: %s is not a RISC-V Image; give arch/riscv/boot/Image or "
				    "Debian's riscv64 vmlinuz", o->kernel);
	if (access(HOSTVM_RISCV64_FIRMWARE, R_OK) < 0)
		return sb_error_set(err, -ENOENT, "--riscv64: OpenSBI %s: %s; install qemu-system-misc and opensbi",
				    HOSTVM_RISCV64_FIRMWARE, strerror(errno));
	if ((k = hostvm_kernel_identify(o->kernel, kernel, err)) < 0 ||
	    (k = hostvm_modules_dir(o->modules, o->kernel, kernel->release, &dir, err)) < 0)
		return k;
	mods->dir = TAKE_PTR(dir);
	if (mods->dir && (k = hostvm_modules_add(mods, "kvm", "CONFIG_KVM (the riscv64 host VM's KVM)", err)) < 0)
		return k;
	return riscv64_initramfs(o, mods, init, initrd, err);
}

/* The init's events: {"event":"exit","message":"PROG exited with status N"} ends the command. */
static void on_line(const char *text, void *userdata)
{
	struct follow *f = userdata;
	const char *m = strstr(text, "exited with status ");

	if (f->echo)
		printf("hostvm-exec: port: %s\n", text);
	if (!strstr(text, "\"event\":\"exit\""))
		return;
	f->exit_seen = true;
	f->status = m ? atoi(m + strlen("exited with status ")) : 128; /* killed by a signal */
}

static void print_console(const char *log_path)
{
	_cleanup_fclose_ FILE *f = fopen(log_path, "re");
	char line[4096];

	printf("--- host VM console (%s) ---\n", log_path);
	while (f && fgets(line, sizeof(line), f))
		fputs(line, stdout);
	printf("--- end of console ---\n");
	fflush(stdout);
}

/* The init beside this program in the build tree (tests/realkvm/ -> libexec/hostvm-init/). */
static int find_init(const char *name, char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n < 0)
		return -errno;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	snprintf(buf, len, "%.3900s/../../libexec/hostvm-init/%s", self, name);
	return access(buf, X_OK) < 0 ? -errno : 0;
}

/*
 * The kernel scripts/fetch-test-kernel unpacked: CACHE/RELEASE/boot/vmlinuz-RELEASE,
 * exactly one (CACHE/current, its link to the release fetched last, is the same file).
 * backports: the cache of `fetch-test-kernel --backports`; trixie: of --trixie-backports.
 */
static char *cached_kernel(bool backports, bool trixie, bool riscv64)
{
	const char *cache = riscv64  ? getenv("SNAPBENCH_KERNEL_CACHE_RISCV64") ?: "/var/cache/snapbench/kernels-riscv64"
			    : trixie	? getenv("SNAPBENCH_KERNEL_CACHE_TRIXIE") ?: "/var/cache/snapbench/kernels-trixie-backports"
			    : backports ? getenv("SNAPBENCH_KERNEL_CACHE_BACKPORTS") ?: "/var/cache/snapbench/kernels-backports"
					: getenv("SNAPBENCH_KERNEL_CACHE") ?: "/var/cache/snapbench/kernels";
	char pattern[PATH_MAX];
	char *path = NULL;
	size_t distinct = 0;
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/*/boot/vmlinuz-*", cache);
	/* the distinct files among the matches: one whose realpath no earlier match had */
	if (glob(pattern, 0, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++) {
			char *real = realpath(g.gl_pathv[i], NULL);
			bool seen = false;

			for (size_t j = 0; real && j < i && !seen; j++) {
				char *other = realpath(g.gl_pathv[j], NULL);
				seen = other && !strcmp(other, real);
				free(other);
			}
			if (!real || seen) {
				free(real);
				continue;
			}
			distinct++;
			free(path);
			path = real;
		}
	if (distinct != 1) {
		fprintf(stderr,
			"hostvm-exec: %zu kernels in %s (want one): run scripts/install-deps (or scripts/fetch-test-kernel%s) as "
			"root, or pass --kernel IMAGE\n",
			distinct, cache, riscv64 ? " --riscv64" : trixie ? " --trixie-backports" : backports ? " --backports" : "");
		free(path);
		path = NULL;
	}
	globfree(&g);
	return path;
}

/* Removes the files run() made in a work directory of its own. */
static void remove_work(const char *work)
{
	static const char *const files[] = { "initramfs.cpio", "console.log", "out" };
	char path[PATH_MAX + 32];

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", work, files[i]);
		if (unlink(path) < 0 && errno == EISDIR)
			rmdir(path);
	}
	rmdir(work);
}

/*
 * --systemd's kernel command line: systemd.run= the command, power off after
 * it, only what it needs started (systemd.unit=), no fstab of this host's,
 * the environment and the status file as systemd.setenv=.
 */
static int systemd_append(const struct options *o, const char *out, char *status_path, size_t status_len,
			  char *buf, size_t len, struct sb_error *err)
{
	struct strbuf b = {};
	_cleanup_free_ char *text = NULL;

	snprintf(status_path, status_len, "%s/exit-status", out);
	unlink(status_path);
	/* not systemd-tmpfiles-setup: its "D /tmp" would empty /tmp, where a build tree may be */
	strbuf_append(&b, "console=ttyS0 panic=-1 rdinit=/init fstab=no systemd.journald.forward_to_console=1 "
			  "systemd.mask=systemd-tmpfiles-setup.service "
			  "systemd.unit=kernel-command-line.service "
			  "systemd.run_success_action=poweroff systemd.run_failure_action=poweroff systemd.run=\"");
	for (char **a = o->command; *a; a++) {
		if (strpbrk(*a, " \t\n\"'")) {
			strbuf_free(&b);
			return sb_error_set(err, -EINVAL, "--systemd: argument '%s' has a space or a quote, which systemd.run= "
					    "cannot take", *a);
		}
		strbuf_appendf(&b, "%s%s", a == o->command ? "" : " ", *a);
	}
	strbuf_appendf(&b, "\" systemd.setenv=HOSTVM_EXEC_STATUS=%s", status_path);
	for (size_t i = 0; i < o->n_envs; i++) {
		if (strpbrk(o->envs[i], " \t\n\"'")) {
			strbuf_free(&b);
			return sb_error_set(err, -EINVAL, "--systemd: --env %s has a space or a quote", o->envs[i]);
		}
		strbuf_appendf(&b, " systemd.setenv=%s", o->envs[i]);
	}
	text = strbuf_steal(&b);
	if (!text)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (strlen(text) >= len)
		return sb_error_set(err, -E2BIG, "--systemd: the kernel command line is too long");
	memcpy(buf, text, strlen(text) + 1);
	return 0;
}

/* The status --systemd's command wrote (a number), or -1. */
static int read_status(const char *path)
{
	FILE *f = fopen(path, "re");
	int st = -1;

	if (f && fscanf(f, "%d", &st) != 1)
		st = -1;
	if (f)
		fclose(f);
	return st;
}

static int run(struct options *o)
{
	_cleanup_free_ char *kernel_path = NULL;
	struct kernel_id kernel = {};
	struct hostvm_modules mods = {};
	struct hostvm *vm = NULL;
	struct sb_error err = {};
	struct follow f = { .status = -1, .echo = o->riscv64 };
	_cleanup_free_ char *dir = NULL;
	char accel[8], vendor[8], why[512], init[PATH_MAX], work[PATH_MAX], out[PATH_MAX + 8], initrd[PATH_MAX + 16];
	char log_path[PATH_MAX + 16], append[8192], status_path[PATH_MAX + 32];
	int k, ret = 1;

	if (!o->kernel && !(o->kernel = kernel_path = cached_kernel(o->backports, o->trixie, o->riscv64)))
		return 1;
	if (absolute_args(o->command) < 0) {
		fprintf(stderr, "hostvm-exec: %s: %s\n", o->command[0], strerror(errno));
		return 1;
	}
	if (find_init(o->riscv64 ? "snapbench-hostvm-init-riscv64" : "snapbench-hostvm-init", init, sizeof(init)) < 0) {
		fprintf(stderr, "hostvm-exec: no snapbench-hostvm-init in the build tree (%s): build snapbench first\n", init);
		return 1;
	}
	if (o->work)
		snprintf(work, sizeof(work), "%s", o->work);
	else
		snprintf(work, sizeof(work), "/var/tmp/hostvm-exec.XXXXXX");
	if (o->work ? (mkdir(work, 0755) < 0 && errno != EEXIST) : !mkdtemp(work)) {
		fprintf(stderr, "hostvm-exec: work directory %s: %s\n", work, strerror(errno));
		return 1;
	}
	snprintf(out, sizeof(out), "%s/out", work);
	snprintf(initrd, sizeof(initrd), "%s/initramfs.cpio", work);
	snprintf(log_path, sizeof(log_path), "%s/console.log", work);
	mkdir(out, 0755);

	/* --boot-log: the whole log, from an early console (riscv64's from the device tree) */
	snprintf(append, sizeof(append), "console=ttyS0 %s panic=-1 rdinit=/init",
		 !o->boot_log ? "quiet" : o->riscv64 ? "loglevel=8 earlycon" : "loglevel=8 earlyprintk=ttyS0");
	if (o->riscv64) {
		k = prepare_riscv64(o, init, initrd, &kernel, &mods, &err);
		snprintf(accel, sizeof(accel), "tcg");
		snprintf(why, sizeof(why), "riscv64: TCG emulates the H extension");
		goto prepared;
	}
	k = hostvm_choose_accel(o->accel, NULL, accel, vendor, why, sizeof(why), &err);
	if (k >= 0)
		k = hostvm_kernel_identify(o->kernel, &kernel, &err);
	if (k >= 0)
		k = hostvm_modules_dir(o->modules, o->kernel, kernel.release, &dir, &err);
	if (k >= 0)
		k = hostvm_modules_resolve(dir, vendor, &mods, &err);
	if (k >= 0 && o->systemd)
		k = hostvm_modules_add(&mods, "overlay", "CONFIG_OVERLAY_FS (--systemd: the root is an overlay)", &err);
	if (k >= 0 && o->systemd)
		k = systemd_append(o, out, status_path, sizeof(status_path), append, sizeof(append), &err);
	for (char **a = o->command; k >= 0 && !o->systemd && *a; a++)
		if (**a == '/' && need_tree(*a) < 0)
			k = sb_error_set(&err, -E2BIG, "the command's files lie in more than %d trees under /tmp, /run, ...",
					 MAX_TREES);
	for (size_t i = 0; k >= 0 && !o->systemd && i < o->n_envs; i++) {
		const char *eq = strchr(o->envs[i], '=');
		if (eq && eq[1] == '/' && need_tree(eq + 1) < 0)
			k = sb_error_set(&err, -E2BIG, "--env %s: more than %d trees under /tmp, /run, ...", o->envs[i],
					 MAX_TREES);
	}
	if (k >= 0 && !o->systemd && need_tree(out) < 0)
		k = sb_error_set(&err, -E2BIG, "the work directory: more than %d trees under /tmp, /run, ...", MAX_TREES);
	if (k >= 0)
		k = build_initramfs(o, &mods, init, out, accel, initrd, &err);
prepared:
	if (k < 0) {
		fprintf(stderr, "hostvm-exec: %s\n", err.msg);
		goto out;
	}
	printf("hostvm-exec: kernel %s, accel %s (%s)%s, %u vCPUs, %u MiB: %s\n", kernel.release, accel, why,
	       o->icount ? ", icount (the guest's clocks count instructions, 1 ns each)" : "", o->vcpus, o->memory_mib,
	       o->command[0]);
	fflush(stdout);
	struct hostvm_config cfg = {
		.kernel = o->kernel,
		.initrd = initrd,
		.append = append,
		.memory = (uint64_t)o->memory_mib << 20,
		.vcpus = o->vcpus,
		.numa_nodes = 1,
		.accel = accel,
		.icount = o->icount,
		.log_path = log_path,
		.name = "snapbench-hostvm-exec",
		.arch = o->riscv64 ? "riscv64" : NULL,
		.n_shares = o->riscv64 ? 0 : 2,
		.shares = { { .tag = "root", .path = "/", .readonly = true }, { .tag = "out", .path = out } },
	};
	char tags[MAX_TREES][32];
	for (size_t t = 0; t < n_trees && !o->riscv64; t++) {
		snprintf(tags[t], sizeof(tags[t]), "tree%zu", t);
		cfg.shares[cfg.n_shares++] = (struct hostvm_share){ .tag = tags[t], .path = trees[t], .readonly = true };
	}
	k = hostvm_start(&cfg, &vm, &err);
	if (k < 0) {
		fprintf(stderr, "hostvm-exec: %s\n", err.msg);
		goto out;
	}
	uint64_t deadline = vm->start_ns + (uint64_t)(o->timeout_s * 1e9);
	bool port_open = true;
	while (!hostvm_exited(vm)) {
		struct pollfd p = { .fd = vm->port_fd, .events = POLLIN };

		if (port_open) {
			poll(&p, 1, 200);
			if (hostvm_read_port(vm, on_line, &f) == -EPIPE)
				port_open = false;
		} else {
			usleep(200000);
		}
		if (f.exit_seen) {
			hostvm_wait(vm, 30000);
			break;
		}
		if (mono_ns() > deadline) {
			char tail[2048];

			hostvm_kill(vm);
			hostvm_console_tail(log_path, 12, tail, sizeof(tail));
			print_console(log_path);
			fprintf(stderr, "hostvm-exec: the host VM did not finish %s within %.0f s and was killed; console: %s\n",
				o->command[0], o->timeout_s, tail);
			goto out;
		}
	}
	hostvm_read_port(vm, on_line, &f);
	print_console(log_path);
	printf("hostvm-exec: %.1f s in the host VM\n", (double)(mono_ns() - vm->start_ns) / 1e9);
	if (o->systemd)
		f.status = read_status(status_path);
	if (f.status < 0)
		fprintf(stderr, "hostvm-exec: the host VM ended before %s did (see the console above)\n", o->command[0]);
	else if (f.status == 77)
		fprintf(stderr, "hostvm-exec: %s skipped inside the host VM, which is there to have the feature: a failure\n",
			o->command[0]);
	else
		ret = f.status;
out:
	if (vm)
		hostvm_kill(vm);
	hostvm_free(vm);
	hostvm_modules_done(&mods);
	kernel_id_done(&kernel);
	if (!o->work)
		remove_work(work);
	return ret;
}

int main(int argc, char **argv)
{
	struct options o;

	if (parse_argv(argc, argv, &o) < 0)
		return 2;
	if (o.host_if_kvm) {
		int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			fprintf(stderr, "hostvm-exec: /dev/kvm works here: %s runs on this host\n", o.command[0]);
			execvp(o.command[0], o.command);
			fprintf(stderr, "hostvm-exec: %s: %s\n", o.command[0], strerror(errno));
			return 127;
		}
		fprintf(stderr, "hostvm-exec: /dev/kvm: %s: %s runs in a host VM, under its KVM\n", strerror(errno),
			o.command[0]);
	}
	return run(&o);
}
