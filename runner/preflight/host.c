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
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "json-util.h"
#include "kvm-flavour.h"
#include "macro.h"
#include "qemu-binary.h"
#include "qmp-commands.h"
#include "qmp.h"
#include "report.h"
#include "spawn-program.h"
#include "strv.h"
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

static const struct {
	const char *name, *since;
} features[QEMU_FEATURE_MAX] = {
	[QEMU_FEATURE_QUERY_STATS] = { "query-stats", "7.1" },
	[QEMU_FEATURE_BACKGROUND_SNAPSHOT] = { "background-snapshot", "6.0" },
	[QEMU_FEATURE_POSTCOPY_RAM] = { "postcopy-ram", "2.6" },
	[QEMU_FEATURE_POSTCOPY_PREEMPT] = { "postcopy-preempt", "7.1" },
	[QEMU_FEATURE_MIGRATE_CHANNELS] = { "migrate-channels", "8.2" },
	[QEMU_FEATURE_RUN_WITH_USER] = { "run-with-user", "9.1" },
};

const char *qemu_feature_name(enum qemu_feature f)
{
	return f < QEMU_FEATURE_MAX ? features[f].name : NULL;
}

const char *qemu_feature_since(enum qemu_feature f)
{
	return f < QEMU_FEATURE_MAX ? features[f].since : NULL;
}

char **qemu_feature_names(const struct qemu_info *q)
{
	char **v = calloc(1, sizeof(char *));

	for (int f = 0; v && f < QEMU_FEATURE_MAX; f++)
		if (q->has[f] && strv_push(&v, features[f].name) < 0)
			return strv_free(v);
	return v;
}

bool qemu_version_at_least(const struct qemu_info *q, int major, int minor)
{
	return q->major > major || (q->major == major && q->minor >= minor);
}

void qemu_info_done(struct qemu_info *q)
{
	free(q->path);
	q->path = NULL;
}

/* Starts QEMU stopped, without a machine, its QMP on a socketpair: our end in *ret_fd. */
static int qemu_probe_start(const char *path, pid_t *ret_pid, int *ret_fd, struct sb_error *err)
{
	_cleanup_close_ int ours = -1, theirs = -1;
	char msg[SB_ERROR_MAX];
	int sp[2], r;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return sb_error_set(err, -errno, "socketpair: %s", strerror(errno));
	ours = sp[0];
	theirs = sp[1];
	char *argv[] = { (char *)path, "-machine", "none,accel=kvm:tcg", "-nodefaults", "-no-user-config", "-display",
			 "none", "-S", "-chardev", "socket,id=sbqmp,fd=3", "-mon", "chardev=sbqmp,mode=control", NULL };
	const struct spawn_fd fds[] = { { SPAWN_DEV_NULL, 0 }, { SPAWN_DEV_NULL, 1 }, { SPAWN_DEV_NULL, 2 }, { theirs, 3 } };
	r = spawn_start(&(struct spawn_options){ .argv = argv, .path = path, .fds = fds, .n_fds = ARRAY_SIZE(fds),
						 .parent_death_signal = SIGKILL },
			ret_pid, err);
	if (r < 0) {
		snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
		return sb_error_set(err, r, "QEMU probe: %s; install qemu-system-x86 or pass --qemu PATH", msg);
	}
	*ret_fd = TAKE_FD(ours);
	return 0;
}

/* Which migration capabilities QEMU has; one it lacks is -ENOENT there: the feature is missing, the probe goes on. */
static int qemu_probe_capabilities(struct qmp_client *c, struct qemu_info *ret, struct sb_error *err)
{
	static const struct {
		const char *name;
		enum qemu_feature f;
	} cap_features[] = {
		{ "background-snapshot", QEMU_FEATURE_BACKGROUND_SNAPSHOT },
		{ "postcopy-ram", QEMU_FEATURE_POSTCOPY_RAM },
		{ "postcopy-preempt", QEMU_FEATURE_POSTCOPY_PREEMPT },
	};
	struct sb_error ce = {};
	bool on;
	int r = 0;

	for (size_t k = 0; r >= 0 && k < ARRAY_SIZE(cap_features); k++) {
		r = qmp_query_migrate_capability(c, cap_features[k].name, &on, &ce);
		ret->has[cap_features[k].f] = r >= 0;
		if (r == -ENOENT)
			r = 0;
		else if (r < 0 && err)
			*err = ce;
	}
	return r;
}

/* Asks the QEMU behind c its version and what it can do, into ret. */
static int qemu_probe_ask(struct qmp_client *c, struct qemu_info *ret, struct sb_error *err)
{
	_cleanup_json_ struct json_object *schema = NULL;
	_cleanup_json_ struct json_object *kvm = NULL;
	struct json_object *en;
	struct qmp_version v;
	bool user;
	int r;

	qmp_client_set_command_timeout(c, 10000);
	r = qmp_client_version(c, &v, err);
	if (r < 0)
		return r;
	ret->major = v.major;
	ret->minor = v.minor;
	ret->micro = v.micro;
	snprintf(ret->package, sizeof(ret->package), "%s", v.package);
	r = qmp_query_qmp_schema(c, &schema, err);
	if (r < 0)
		return r;
	ret->has[QEMU_FEATURE_QUERY_STATS] = qmp_schema_has_command(schema, "query-stats");
	/* the newer form is used only where both sides of a migration take it */
	ret->has[QEMU_FEATURE_MIGRATE_CHANNELS] = qmp_schema_has_argument(schema, "migrate", "channels") &&
						  qmp_schema_has_argument(schema, "migrate-incoming", "channels");
	r = qemu_probe_capabilities(c, ret, err);
	if (r < 0)
		return r;
	ret->has_query_stats = ret->has[QEMU_FEATURE_QUERY_STATS];
	ret->has_background_snapshot = ret->has[QEMU_FEATURE_BACKGROUND_SNAPSHOT];
	r = qmp_execute(c, "query-kvm", NULL, -1, 10000, &kvm, err);
	if (r < 0)
		return r;
	/* QEMU before 9.1 has no -run-with at all, and answers with an error: no such feature */
	ret->has[QEMU_FEATURE_RUN_WITH_USER] = qmp_command_line_option_has(c, "run-with", "user", &user, NULL) >= 0 && user;
	ret->kvm_present = json_object_object_get_ex(kvm, "enabled", &en) && json_object_get_boolean(en);
	return 0;
}

/* Reaps the probed QEMU, bounded: quit normally ends it at once. */
static void qemu_probe_reap(pid_t pid)
{
	int st;

	for (int i = 0; i < 200; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	(void)spawn_wait(pid, &st);
}

int qemu_probe(const char *binary, struct qemu_info *ret, struct sb_error *err)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_qmp_client_ struct qmp_client *c = NULL;
	int fd, r, st;
	pid_t pid;

	memset(ret, 0, sizeof(*ret));
	r = vm_find_binary(binary ? binary : QEMU_DEFAULT_BINARY, &path, err);
	if (r < 0)
		return r;
	r = qemu_probe_start(path, &pid, &fd, err);
	if (r < 0)
		return r;
	r = qmp_connect_fd(fd, "QEMU probe", 30000, NULL, &c, err);
	if (r < 0) {
		kill(pid, SIGKILL);
		(void)spawn_wait(pid, &st);
		return sb_error_prefix(err, "QEMU %s did not answer on QMP", path);
	}
	r = qemu_probe_ask(c, ret, err);
	qmp_quit(c, NULL);
	qmp_client_free(TAKE_PTR(c));
	qemu_probe_reap(pid);
	if (r < 0)
		return sb_error_prefix(err, "asking QEMU %s about itself", path);
	ret->path = TAKE_PTR(path);
	return 0;
}
