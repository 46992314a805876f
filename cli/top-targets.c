// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench top's view of the VMs on this host, from /proc (top-targets.h). */
#include "top-targets.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "strv.h"

/* a command line longer than this is not one QEMU was started with by hand or by a tool */

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

bool top_holds_kvm_vm(pid_t pid)
{
	return proc_find_fd(pid, "anon_inode:kvm-vm", NULL) >= 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int top_find_vms(pid_t self, pid_t **ret, size_t *found)
{
	_cleanup_(closedirp) DIR *d = opendir("/proc");
	_cleanup_free_ pid_t *all = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self || !top_holds_kvm_vm((pid_t)pid))
			continue;
		if (n == cap) {
			pid_t *p = realloc(all, (cap = cap ? cap * 2 : 16) * sizeof(*p));
			if (!p)
				return -ENOMEM;
			all = p;
		}
		all[n++] = (pid_t)pid;
	}
	/* readdir's order is the kernel's; the lowest pids first keeps the cap's choice stable between runs */
	if (n)
		qsort(all, n, sizeof(*all), cmp_pid);
	*ret = TAKE_PTR(all);
	*found = n;
	return 0;
}

/*
 * One QEMU option value split at its commas, ",," being a literal comma
 * (QemuOpts' escape), into a string vector.
 */
static int split_opts(const char *s, char ***ret)
{
	_cleanup_strv_free_ char **v = NULL;
	_cleanup_free_ char *cur = malloc(strlen(s) + 1);
	size_t n = 0;

	*ret = NULL;
	if (!cur)
		return -ENOMEM;
	for (const char *p = s;; p++) {
		if (*p == ',' && p[1] == ',') {
			cur[n++] = ',';
			p++;
			continue;
		}
		if (*p == ',' || !*p) {
			cur[n] = '\0';
			if (strv_push(&v, cur) < 0)
				return -ENOMEM;
			n = 0;
			if (!*p)
				break;
			continue;
		}
		cur[n++] = *p;
	}
	*ret = TAKE_PTR(v);
	return 0;
}

/* The value of key in opts ("key=value"), or NULL; implied is the key of a first element without '='. */
static const char *opt_get(char *const *opts, const char *key, const char *implied)
{
	size_t k = strlen(key);

	for (size_t i = 0; opts && opts[i]; i++) {
		if (i == 0 && implied && !strcmp(key, implied) && !strchr(opts[0], '='))
			return opts[0];
		if (!strncmp(opts[i], key, k) && opts[i][k] == '=')
			return opts[i] + k + 1;
	}
	return NULL;
}

static bool opt_true(const char *v)
{
	return v && (!strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "y"));
}

/* server=on, or the legacy bare "server" */
static bool opts_server(char *const *opts)
{
	for (size_t i = 1; opts && opts[i]; i++)
		if (!strcmp(opts[i], "server"))
			return true;
	return opt_true(opt_get(opts, "server", NULL));
}

/* "-qmp" and "--qmp" alike, as QEMU reads them */
static const char *option_name(const char *arg)
{
	if (arg[0] != '-')
		return NULL;
	return arg[1] == '-' ? arg + 2 : arg + 1;
}

void top_qemu_name(char *const *argv, char *buf, size_t size)
{
	const char *name = NULL;
	_cleanup_strv_free_ char **opts = NULL;
	size_t n = 0;

	if (!size)
		return;
	buf[0] = '\0';
	for (size_t i = 1; argv && argv[0] && argv[i] && argv[i + 1]; i++) {
		const char *o = option_name(argv[i]);

		if (o && !strcmp(o, "name")) {
			opts = strv_free(opts);
			if (split_opts(argv[i + 1], &opts) < 0)
				return;
			i++;
		}
	}
	name = opt_get(opts, "guest", "guest");
	for (const char *p = name; p && *p && n + 1 < size; p++)
		buf[n++] = isalnum((unsigned char)*p) || strchr("._-", *p) ? *p : '_';
	buf[n] = '\0';
}

struct chardev {
	char *id, *path;
};

int top_qmp_sockets(char *const *argv, char ***ret, bool *libvirt)
{
	_cleanup_strv_free_ char **paths = NULL, **monitors = NULL;
	struct chardev *devs = NULL;
	size_t n_devs = 0;
	int r = -ENOMEM;

	*ret = NULL;
	*libvirt = false;
	for (size_t i = 1; argv && argv[0] && argv[i] && argv[i + 1]; i++) {
		const char *o = option_name(argv[i]);
		_cleanup_strv_free_ char **opts = NULL;

		if (!o || (strcmp(o, "qmp") && strcmp(o, "qmp-pretty") && strcmp(o, "chardev") && strcmp(o, "mon")))
			continue;
		if (split_opts(argv[++i], &opts) < 0)
			goto out;
		if (!strcmp(o, "qmp") || !strcmp(o, "qmp-pretty")) {
			const char *p = opts[0];

			if (strncmp(p, "unix:", 5) || !opts_server(opts))
				continue;
			p += 5;
			if (!strncmp(p, "path=", 5))
				p += 5;
			if (*p && strv_push(&paths, p) < 0)
				goto out;
		} else if (!strcmp(o, "chardev")) {
			const char *id = opt_get(opts, "id", NULL), *path = opt_get(opts, "path", NULL);
			struct chardev *d;

			if (strcmp(opts[0], "socket") || !id || !path || !*path || !opts_server(opts) ||
			    opt_true(opt_get(opts, "abstract", NULL)))
				continue;
			d = realloc(devs, (n_devs + 1) * sizeof(*d));
			if (!d)
				goto out;
			devs = d;
			devs[n_devs].id = strdup(id);
			devs[n_devs].path = strdup(path);
			n_devs++;
			if (!devs[n_devs - 1].id || !devs[n_devs - 1].path)
				goto out;
		} else {
			const char *dev = opt_get(opts, "chardev", "chardev"), *mode = opt_get(opts, "mode", NULL);

			/* -mon defaults to mode=readline, the human monitor */
			if (!dev || !mode || strcmp(mode, "control"))
				continue;
			if (!strcmp(dev, "charmonitor")) {
				*libvirt = true;
				continue;
			}
			if (strv_push(&monitors, dev) < 0)
				goto out;
		}
	}
	/* a -mon may name a -chardev given after it: match them once all are read */
	for (size_t m = 0; monitors && monitors[m]; m++)
		for (size_t d = 0; d < n_devs; d++)
			if (!strcmp(devs[d].id, monitors[m]) && !strv_contains(paths, devs[d].path) &&
			    strv_push(&paths, devs[d].path) < 0)
				goto out;
	if (!paths && !(paths = calloc(1, sizeof(*paths))))
		goto out;
	*ret = TAKE_PTR(paths);
	r = 0;
out:
	for (size_t d = 0; d < n_devs; d++) {
		free(devs[d].id);
		free(devs[d].path);
	}
	free(devs);
	return r;
}

pid_t top_tgid_of(pid_t tid)
{
	return proc_tgid(tid);
}
