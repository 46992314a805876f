// SPDX-License-Identifier: GPL-2.0-or-later
/* Host metadata for reports, and probing the QEMU binary before a run. */
#include "host.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "kvm-flavour.h"
#include "macro.h"
#include "qmp-commands.h"
#include "qmp.h"
#include "report.h"
#include "vm.h"

static char *read_line_file(const char *path, size_t max)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return NULL;
	n = getline(&buf, &cap, f);
	if (n < 0) {
		free(buf);
		return strdup("");
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if ((size_t)n > max)
		buf[max] = '\0';
	return buf;
}

int host_collect(struct report_host *h)
{
	struct utsname u;
	_cleanup_fclose_ FILE *f = NULL;
	char *line = NULL;
	size_t cap = 0;

	if (uname(&u) == 0) {
		h->kernel_release = strdup(u.release);
		h->kernel_version = strdup(u.version);
		h->hostname = strdup(u.nodename);
	}
	h->cmdline = read_line_file("/proc/cmdline", 4096);
	h->cpus = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	f = fopen("/proc/cpuinfo", "re");
	while (f && getline(&line, &cap, f) > 0) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (!h->cpu_model && !strncmp(line, "model name", 10)) {
			h->cpu_model = strdup(colon + 2 <= line + strlen(line) ? colon + 2 : "");
		} else if (!strncmp(line, "flags", 5)) {
			/* " hypervisor" as a whole word */
			for (char *p = colon; (p = strstr(p, "hypervisor")); p += 10)
				if (p[-1] == ' ' && (p[10] == ' ' || p[10] == '\0'))
					h->virtualized = true;
		}
	}
	free(line);
	if (f) {
		fclose(f);
		f = NULL;
	}
	f = fopen("/proc/meminfo", "re");
	if (f) {
		unsigned long long kb;
		char key[64];
		while (fscanf(f, "%63s %llu kB\n", key, &kb) == 2)
			if (!strcmp(key, "MemTotal:")) {
				h->memory_bytes = kb * 1024;
				break;
			}
	}
	snprintf(h->kvm_module, sizeof(h->kvm_module), "%s", kvm_flavour_host()->module);
	snprintf(h->kvm_context, sizeof(h->kvm_context), "%s", kvm_flavour_host()->context);
	if (!h->kernel_release || !h->kernel_version || !h->hostname || !h->cmdline)
		return -ENOMEM;
	return 0;
}

void qemu_info_done(struct qemu_info *q)
{
	free(q->path);
	q->path = NULL;
}

int qemu_probe(const char *binary, struct qemu_info *ret, struct sb_error *err)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_qmp_client_ struct qmp_client *c = NULL;
	struct json_object *cmds = NULL, *caps = NULL, *kvm = NULL;
	struct qmp_version v;
	int sp[2], errpipe[2], r, e = 0, st;
	pid_t pid;

	memset(ret, 0, sizeof(*ret));
	r = vm_find_binary(binary ? binary : "qemu-system-x86_64", &path, err);
	if (r < 0)
		return r;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return sb_error_set(err, -errno, "socketpair: %s", strerror(errno));
	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		close(sp[0]);
		close(sp[1]);
		return sb_error_set(err, -errno, "pipe: %s", strerror(errno));
	}
	char *argv[] = { path, "-machine", "none,accel=kvm:tcg", "-nodefaults", "-no-user-config", "-display", "none",
			 "-S", "-chardev", "socket,id=sbqmp,fd=3", "-mon", "chardev=sbqmp,mode=control", NULL };
	pid_t parent = getpid();
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(sp[0]);
		close(sp[1]);
		close(errpipe[0]);
		close(errpipe[1]);
		return sb_error_set(err, r, "fork: %s", strerror(-r));
	}
	if (pid == 0) {
		int fd = fcntl(sp[1], F_DUPFD, 10), efd = fcntl(errpipe[1], F_DUPFD_CLOEXEC, 10);
		int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		if (fd < 0 || efd < 0 || null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(null_fd, 1) < 0 ||
		    dup2(null_fd, 2) < 0 || dup2(fd, 3) < 0 || dup3(efd, 4, O_CLOEXEC) < 0)
			_exit(127);
		close_range(5, ~0U, 0);
		execv(path, argv);
		e = errno;
		if (write(4, &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(sp[1]);
	close(errpipe[1]);
	ssize_t n;
	do
		n = read(errpipe[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(errpipe[0]);
	if (n == sizeof(e)) {
		close(sp[0]);
		waitpid(pid, NULL, 0);
		return sb_error_set(err, -e, "QEMU %s: cannot execute: %s; install qemu-system-x86 or pass --qemu PATH",
				    path, strerror(e));
	}

	r = qmp_connect_fd(sp[0], "QEMU probe", 30000, NULL, &c, err);
	if (r < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return sb_error_prefix(err, "QEMU %s did not answer on QMP", path);
	}
	qmp_client_set_command_timeout(c, 10000);
	r = qmp_client_version(c, &v, err);
	if (r >= 0) {
		ret->major = v.major;
		ret->minor = v.minor;
		ret->micro = v.micro;
		snprintf(ret->package, sizeof(ret->package), "%s", v.package);
		r = qmp_execute(c, "query-commands", NULL, -1, 10000, &cmds, err);
	}
	if (r >= 0) {
		for (size_t i = 0; i < json_object_array_length(cmds); i++) {
			struct json_object *name;
			if (json_object_object_get_ex(json_object_array_get_idx(cmds, i), "name", &name) &&
			    !strcmp(json_object_get_string(name), "query-stats"))
				ret->has_query_stats = true;
		}
		r = qmp_execute(c, "query-migrate-capabilities", NULL, -1, 10000, &caps, err);
	}
	if (r >= 0) {
		for (size_t i = 0; i < json_object_array_length(caps); i++) {
			struct json_object *name;
			if (json_object_object_get_ex(json_object_array_get_idx(caps, i), "capability", &name) &&
			    !strcmp(json_object_get_string(name), "background-snapshot"))
				ret->has_background_snapshot = true;
		}
		r = qmp_execute(c, "query-kvm", NULL, -1, 10000, &kvm, err);
	}
	if (r >= 0) {
		struct json_object *en;
		ret->kvm_present = json_object_object_get_ex(kvm, "enabled", &en) && json_object_get_boolean(en);
	}
	json_object_put(cmds);
	json_object_put(caps);
	json_object_put(kvm);
	qmp_quit(c, NULL);
	qmp_client_free(TAKE_PTR(c));
	/* bounded: quit normally ends it at once */
	for (int i = 0; i < 200; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			pid = 0;
			break;
		}
		usleep(10000);
	}
	if (pid) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (r < 0)
		return sb_error_prefix(err, "asking QEMU %s about itself", path);
	ret->path = TAKE_PTR(path);
	return 0;
}
