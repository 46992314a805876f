// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench-hostvm-init: PID 1 of a host VM (docs/kernel-arms.md). Linked
 * statically and packed into the initramfs hostvm/initramfs.c generates,
 * next to the kernel modules the VM needs and /hostvm.conf, which says what
 * to do, one directive a line:
 *
 *   module PATH [PARAMS]   insmod PATH (in the initramfs) with PARAMS, in order;
 *                          a module that fails is retried after the others
 *   port NAME              the virtio-serial port progress goes to (its fd is
 *                          3 in the program, SNAPBENCH_HOSTVM_PORT_FD=3)
 *   tmpfs PATH             mount a tmpfs on PATH in the root (/run, /tmp, ...)
 *   out TAG PATH           mount the writable 9p share TAG on PATH in the root
 *   env NAME=VALUE         the program's environment
 *   arg TEXT               the program's argv, one word a line
 *   overlay                the root is writable: an overlayfs over the 9p
 *                          share with its upper layer in memory (a LAVA
 *                          DUT's, docs/lava.md), not the 9p share itself
 *   keep PREFIX            the initramfs's top-level directories whose names
 *                          start with PREFIX are bind-mounted at the same
 *                          place in the new root (LAVA's /lava-JOB overlay;
 *                          needs overlay)
 *   tty PATH               the program's stdin, stdout and stderr and its
 *                          controlling terminal: PATH in the new root
 *                          (/dev/ttyS0 for an interactive shell)
 *   hide PATH              PATH is removed from the (overlay) root, this
 *                          host's file left as it is (/.dockerenv, which
 *                          tells a systemd it runs in a container)
 *   pid1                   the program replaces this init as PID 1 (the
 *                          root's systemd): no exit event, the program
 *                          powers the VM off itself
 *   noroot                 the initramfs is the root: no 9p share, no
 *                          chroot; the program and what it runs are files
 *                          of the initramfs (a riscv64 host VM, whose
 *                          programs this host's / cannot serve)
 *
 * It mounts devtmpfs, proc and sysfs, loads the modules, mounts the 9p share
 * "root" read-only as the new root (or an overlay over it), proc, sys, dev,
 * the tmpfs mounts, /dev/shm, the "out" shares, the kept directories,
 * debugfs, tracefs and bpffs,
 * chroots, runs the program and, when it exits, sends the kernel's taint and
 * first warnings on the port ({"event":"kernel",...}) and powers off. What goes wrong is
 * printed on the console and sent on the port as {"event":"error",...}, and
 * the VM powers off: the runner outside never waits for a VM that gave up.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CONF "/hostvm.conf"
#define MAX_ITEMS 128
#define MAX_LINE 4096
#define PORT_FD 3
#define MODULE_INIT_COMPRESSED_FILE 4

struct module {
	char *path, *params;
	int loaded;
};

static struct module modules[MAX_ITEMS];
static size_t n_modules;
static char *args[MAX_ITEMS + 1], *envs[MAX_ITEMS + 1];
static size_t n_args, n_envs;
static char *outs[MAX_ITEMS][2];
static size_t n_outs;
static char *tmpfs[MAX_ITEMS];
static size_t n_tmpfs;
static char *keeps[MAX_ITEMS];
static size_t n_keeps;
static char *hides[MAX_ITEMS];
static size_t n_hides;
static int overlay;
static char tty[256];
static int pid1;
static int noroot;
static char port_name[256];
static int port = -1;

static double uptime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* a JSON string body: quotes, backslashes and control characters escaped */
static void json_escape(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 7 < len; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20) {
			o += (size_t)snprintf(out + o, len - o, "\\u%04x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
}

static void port_event(const char *event, const char *message)
{
	char esc[2048], line[2300];
	int n;

	if (port < 0)
		return;
	json_escape(message ? message : "", esc, sizeof(esc));
	n = snprintf(line, sizeof(line), "{\"event\":\"%s\",\"t_s\":%.3f,\"message\":\"%s\"}\n", event, uptime(), esc);
	if (n > 0 && write(port, line, (size_t)n) < 0)
		return;
}

/* How many of the kernel's warnings the kernel event carries, and how much of each. */
#define KERNEL_WARNINGS 4
#define KERNEL_WARNING_LEN 240

/*
 * The first line of a kernel log record that says something went wrong in
 * the kernel (a WARN, a BUG, an oops, a soft lockup), or NULL. The records
 * are /dev/kmsg's: "PRIORITY,SEQ,TIME,FLAGS;TEXT" and continuation lines.
 */
static const char *kernel_warning(char *rec)
{
	static const char *const marks[] = { "WARNING:", "BUG:", "Oops", "kernel BUG", "general protection fault" };
	char *text = strchr(rec, ';'), *nl;

	if (!text || atoi(rec) % 8 > 4) /* above KERN_WARNING */
		return NULL;
	text++;
	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (strstr(text, marks[i]))
			return text;
	return NULL;
}

/*
 * The kernel's state once the program has exited, for the runner outside
 * (docs/kernel-arms.md): /proc/sys/kernel/tainted (-1 if unreadable) and the
 * first warnings of the kernel's log, as
 * {"event":"kernel","t_s":...,"taint":N,"warnings":["...",...]}. A patched
 * kernel that WARNs while it runs a repetition is tainted "W" and the
 * report says so.
 */
static void port_kernel_state(void)
{
	char buf[8192], esc[2 * KERNEL_WARNING_LEN], line[KERNEL_WARNINGS * sizeof(esc) + 128];
	long long taint = -1;
	size_t o = 0;
	unsigned n = 0;
	int fd;

	if (port < 0)
		return;
	fd = open("/proc/sys/kernel/tainted", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t r = read(fd, buf, sizeof(buf) - 1);
		if (r > 0) {
			buf[r] = '\0';
			taint = strtoll(buf, NULL, 10);
		}
		close(fd);
	}
	o += (size_t)snprintf(line, sizeof(line), "{\"event\":\"kernel\",\"t_s\":%.3f,\"taint\":%lld,\"warnings\":[",
			      uptime(), taint);
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	while (fd >= 0 && n < KERNEL_WARNINGS) {
		ssize_t r = read(fd, buf, sizeof(buf) - 1);
		const char *w;
		if (r < 0 && errno == EPIPE) /* records overwritten before we read them: go on */
			continue;
		if (r <= 0)
			break;
		buf[r] = '\0';
		w = kernel_warning(buf);
		if (!w)
			continue;
		char text[KERNEL_WARNING_LEN];
		snprintf(text, sizeof(text), "%s", w);
		json_escape(text, esc, sizeof(esc));
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s\"%s\"", n ? "," : "", esc);
		n++;
	}
	if (fd >= 0)
		close(fd);
	o += (size_t)snprintf(line + o, sizeof(line) - o, "]}\n");
	if (write(port, line, o) < 0)
		return;
}

static _Noreturn void power_off(void)
{
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

static _Noreturn __attribute__((format(printf, 1, 2))) void fatal(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "snapbench-hostvm-init: %s\n", msg);
	port_event("error", msg);
	power_off();
}

static void read_conf(void)
{
	char line[MAX_LINE];
	FILE *f = fopen(CONF, "re");

	if (!f)
		fatal("%s: %s; the initramfs was not made by snapbench", CONF, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n'), *rest;
		if (nl)
			*nl = '\0';
		rest = strchr(line, ' ');
		if (rest)
			*rest++ = '\0';
		else
			rest = line + strlen(line);
		if (!strcmp(line, "module") && n_modules < MAX_ITEMS) {
			char *sp = strchr(rest, ' ');
			if (sp)
				*sp++ = '\0';
			modules[n_modules].path = strdup(rest);
			modules[n_modules].params = strdup(sp ? sp : "");
			n_modules++;
		} else if (!strcmp(line, "arg") && n_args < MAX_ITEMS) {
			args[n_args++] = strdup(rest);
		} else if (!strcmp(line, "env") && n_envs < MAX_ITEMS) {
			envs[n_envs++] = strdup(rest);
		} else if (!strcmp(line, "out") && n_outs < MAX_ITEMS) {
			char *sp = strchr(rest, ' ');
			if (!sp)
				fatal("%s: \"out %s\": want TAG PATH", CONF, rest);
			*sp++ = '\0';
			outs[n_outs][0] = strdup(rest);
			outs[n_outs][1] = strdup(sp);
			n_outs++;
		} else if (!strcmp(line, "tmpfs") && n_tmpfs < MAX_ITEMS) {
			tmpfs[n_tmpfs++] = strdup(rest);
		} else if (!strcmp(line, "keep") && n_keeps < MAX_ITEMS) {
			keeps[n_keeps++] = strdup(rest);
		} else if (!strcmp(line, "hide") && n_hides < MAX_ITEMS) {
			hides[n_hides++] = strdup(rest);
		} else if (!strcmp(line, "overlay")) {
			overlay = 1;
		} else if (!strcmp(line, "pid1")) {
			pid1 = 1;
		} else if (!strcmp(line, "noroot")) {
			noroot = 1;
		} else if (!strcmp(line, "tty")) {
			snprintf(tty, sizeof(tty), "%s", rest);
		} else if (!strcmp(line, "port")) {
			snprintf(port_name, sizeof(port_name), "%s", rest);
		} else if (*line) {
			fatal("%s: unknown directive \"%s\"", CONF, line);
		}
	}
	fclose(f);
	if (n_args == 0)
		fatal("%s: no program to run (no arg line)", CONF);
	if ((n_keeps || n_hides) && !overlay)
		fatal("%s: keep and hide need overlay (the 9p root is read-only)", CONF);
	if (noroot && (overlay || n_outs || pid1))
		fatal("%s: noroot runs the program in the initramfs: no overlay, out or pid1", CONF);
}

static void do_mount(const char *src, const char *dst, const char *type, unsigned long flags, const char *data,
		     int required)
{
	mkdir(dst, 0755);
	if (mount(src, dst, type, flags, data) < 0 && required)
		fatal("mount %s (%s) on %s: %s", src, type, dst, strerror(errno));
}

static int load_module(struct module *m, char *why, size_t len)
{
	size_t n = strlen(m->path);
	int flags = 0, fd, r;

	if ((n > 3 && !strcmp(m->path + n - 3, ".xz")) || (n > 4 && !strcmp(m->path + n - 4, ".zst")) ||
	    (n > 3 && !strcmp(m->path + n - 3, ".gz")))
		flags |= MODULE_INIT_COMPRESSED_FILE;
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, len, "%s: %s", m->path, strerror(errno));
		return -errno;
	}
	r = (int)syscall(SYS_finit_module, fd, m->params, flags);
	r = r < 0 ? -errno : 0;
	close(fd);
	if (r == -EEXIST)
		r = 0;
	if (r < 0)
		snprintf(why, len, "insmod %s %s: %s", m->path, m->params, strerror(-r));
	return r;
}

/* In order; a module whose dependency failed is retried until a pass loads nothing. */
static void load_modules(void)
{
	char why[1024] = "";
	size_t left = n_modules;

	for (int pass = 0; left && pass < 8; pass++) {
		size_t before = left;
		for (size_t i = 0; i < n_modules; i++) {
			if (modules[i].loaded)
				continue;
			if (load_module(&modules[i], why, sizeof(why)) == 0) {
				modules[i].loaded = 1;
				left--;
			}
		}
		if (left == before)
			break;
	}
	if (left)
		fatal("%zu module(s) did not load; last: %s", left, why);
}

/* /dev/vportNpM whose /sys/class/virtio-ports/.../name is port_name */
static void open_port(void)
{
	char path[512], name[256];

	if (!*port_name)
		return;
	for (int tries = 0; tries < 100 && port < 0; tries++) {
		DIR *d = opendir("/sys/class/virtio-ports");
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name", e->d_name);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			ssize_t n = read(fd, name, sizeof(name) - 1);
			close(fd);
			if (n <= 0)
				continue;
			name[n] = '\0';
			name[strcspn(name, "\n")] = '\0';
			if (strcmp(name, port_name))
				continue;
			snprintf(path, sizeof(path), "/dev/%s", e->d_name);
			port = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		}
		if (d)
			closedir(d);
		if (port < 0)
			usleep(20000);
	}
	if (port < 0)
		fprintf(stderr, "snapbench-hostvm-init: virtio-serial port %s did not appear\n", port_name);
}

/* The initramfs's directories named by keep, bind-mounted into the (overlay) root. */
static void keep_dirs(void)
{
	char dst[4096 + 16], src[4096 + 8];
	struct dirent *e;
	DIR *d;

	if (!n_keeps)
		return;
	d = opendir("/");
	if (!d)
		fatal("read the initramfs's /: %s", strerror(errno));
	while ((e = readdir(d))) {
		int match = 0;
		for (size_t i = 0; i < n_keeps; i++)
			match |= !strncmp(e->d_name, keeps[i], strlen(keeps[i]));
		if (!match || e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(src, sizeof(src), "/%s", e->d_name);
		snprintf(dst, sizeof(dst), "/newroot/%s", e->d_name);
		mkdir(dst, 0755);
		if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
			fatal("bind-mount the initramfs's %s into the root: %s", src, strerror(errno));
	}
	closedir(d);
}

/* The program's terminal: PATH becomes its stdio and controlling terminal (it leads a new session). */
static void take_tty(void)
{
	int fd = open(tty, O_RDWR | O_NOCTTY);

	if (fd < 0 || ioctl(fd, TIOCSCTTY, 1) < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
		fprintf(stderr, "snapbench-hostvm-init: the terminal %s: %s\n", tty, strerror(errno));
		_exit(127);
	}
	if (fd > 2)
		close(fd);
}

static void mount_root(void)
{
	const char *opts9p = "trans=virtio,version=9p2000.L,msize=512000";
	char data[256], dst[4096 + 16];

	snprintf(data, sizeof(data), "%s,cache=loose", opts9p);
	if (overlay) {
		/* this host's / stays read-only below; what the VM writes stays in its memory */
		do_mount("root", "/lower", "9p", MS_RDONLY, data, 1);
		do_mount("tmpfs", "/rw", "tmpfs", 0, "mode=0755", 1);
		mkdir("/rw/upper", 0755);
		mkdir("/rw/work", 0755);
		do_mount("overlay", "/newroot", "overlay", 0, "lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work", 1);
	} else {
		do_mount("root", "/newroot", "9p", MS_RDONLY, data, 1);
	}
	do_mount("proc", "/newroot/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, 1);
	do_mount("sysfs", "/newroot/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, 1);
	if (mount("/dev", "/newroot/dev", NULL, MS_MOVE, NULL) < 0)
		fatal("move /dev into the new root: %s", strerror(errno));
	do_mount("tmpfs", "/newroot/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777", 0);
	do_mount("devpts", "/newroot/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "mode=0620,ptmxmode=0666", 0);
	for (size_t i = 0; i < n_tmpfs; i++) {
		snprintf(dst, sizeof(dst), "/newroot%s", tmpfs[i]);
		do_mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777", 1);
	}
	/*
	 * The shares, in order: their mount points exist in the read-only root,
	 * or are made on a tmpfs above (a tree under /tmp shared back over it)
	 */
	for (size_t i = 0; i < n_outs; i++) {
		snprintf(dst, sizeof(dst), "/newroot%s", outs[i][1]);
		for (char *p = dst + strlen("/newroot") + 1; (p = strchr(p, '/')); p++) {
			*p = '\0';
			mkdir(dst, 0755);
			*p = '/';
		}
		mkdir(dst, 0755);
		if (mount(outs[i][0], dst, "9p", 0, opts9p) < 0)
			fatal("mount the share %s on %s: %s", outs[i][0], outs[i][1], strerror(errno));
	}
	keep_dirs();
	for (size_t i = 0; i < n_hides; i++) {
		snprintf(dst, sizeof(dst), "/newroot%s", hides[i]);
		if (unlink(dst) < 0 && errno != ENOENT)
			fatal("hide %s in the root: %s", hides[i], strerror(errno));
	}
	do_mount("debugfs", "/newroot/sys/kernel/debug", "debugfs", 0, NULL, 0);
	do_mount("tracefs", "/newroot/sys/kernel/tracing", "tracefs", 0, NULL, 0);
	do_mount("bpf", "/newroot/sys/fs/bpf", "bpf", 0, "mode=0700", 0);
	if (chroot("/newroot") < 0 || chdir("/") < 0)
		fatal("chroot into the 9p root: %s", strerror(errno));
}

int main(void)
{
	char msg[256];
	pid_t pid;
	int st;

	if (getpid() != 1) {
		fprintf(stderr, "snapbench-hostvm-init: runs as PID 1 of a host VM only\n");
		return 1;
	}
	mkdir("/dev", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755");
	do_mount("proc", "/proc", "proc", 0, NULL, 1);
	do_mount("sysfs", "/sys", "sysfs", 0, NULL, 1);
	read_conf();
	load_modules();
	open_port();
	snprintf(msg, sizeof(msg), "%zu modules loaded", n_modules);
	port_event("init", msg);
	if (noroot) {
		/* the initramfs stays the root: what the probes read, mounted where they are */
		do_mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "mode=0620,ptmxmode=0666", 0);
		for (size_t i = 0; i < n_tmpfs; i++)
			do_mount("tmpfs", tmpfs[i], "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777", 1);
		do_mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL, 0);
		do_mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL, 0);
	} else {
		umount2("/proc", MNT_DETACH);
		umount2("/sys", MNT_DETACH);
		mount_root();
	}

	args[n_args] = NULL;
	if (pid1) {
		/* the program is PID 1 now, with the console as its stdio; the port stays unused */
		envs[n_envs] = NULL;
		port_event("exec", args[0]);
		if (port >= 0)
			close(port);
		execve(args[0], args, envs);
		port = -1;
		fatal("exec %s as PID 1: %s", args[0], strerror(errno));
	}
	envs[n_envs++] = "SNAPBENCH_HOSTVM_PORT_FD=3";
	envs[n_envs] = NULL;
	pid = fork();
	if (pid < 0)
		fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		setsid();
		if (port >= 0 && dup2(port, PORT_FD) < 0)
			_exit(127);
		if (*tty)
			take_tty();
		execve(args[0], args, envs);
		fprintf(stderr, "snapbench-hostvm-init: exec %s: %s\n", args[0], strerror(errno));
		_exit(127);
	}
	for (;;) {
		pid_t w = waitpid(-1, &st, 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			fatal("waitpid: %s", strerror(errno));
	}
	if (WIFEXITED(st))
		snprintf(msg, sizeof(msg), "%s exited with status %d", args[0], WEXITSTATUS(st));
	else
		snprintf(msg, sizeof(msg), "%s was killed by signal %d", args[0], WTERMSIG(st));
	port_kernel_state();
	port_event("exit", msg);
	power_off();
}
