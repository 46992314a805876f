// SPDX-License-Identifier: GPL-2.0-or-later
/* A kernel module's parameters from its .modinfo (module-params.h). */
#include "module-params.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "spawn-program.h"

#define MAX_MODULE_FILE (256u << 20)
#define MAX_MODINFO_OUT (1u << 20)

/* any string of buf (NUL-separated) starting with prefix */
static bool has_entry(const char *buf, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *p = buf; p;) {
		p = memmem(p, len - (size_t)(p - buf), prefix, n);
		if (!p)
			return false;
		if (p == buf || p[-1] == '\0')
			return true;
		p++;
	}
	return false;
}

/* "PREFIXparmtype=PARAM:" in the NUL-separated strings of buf */
static bool has_parmtype(const char *buf, size_t len, const char *prefix, const char *param)
{
	char key[256];
	int n = snprintf(key, sizeof(key), "%sparmtype=%s:", prefix, param);

	return n >= 0 && (size_t)n < sizeof(key) && has_entry(buf, len, key);
}

/* modinfo -F parmtype PATH: its "PARAM:TYPE" lines into *out (NUL-terminated). */
static int run_modinfo(const char *path, char **out, size_t *len, struct sb_error *err)
{
	_cleanup_free_ char *exe = NULL;
	char *argv[] = { "modinfo", "-F", "parmtype", (char *)path, NULL };
	int fds[2], status = 0, k;

	if (spawn_find_program("modinfo", &exe) < 0)
		return sb_error_set(err, -ENODATA, "modinfo(8) is not installed (the kmod package), so %s's parameters cannot be read", path);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return sb_error_set(err, -errno, "pipe: %s", strerror(errno));
	struct spawn_fd map[] = { { SPAWN_DEV_NULL, 0 }, { fds[1], 1 }, { SPAWN_DEV_NULL, 2 } };
	struct spawn_options o = { .argv = argv, .path = exe, .fds = map, .n_fds = ARRAY_SIZE(map) };
	pid_t pid;
	k = spawn_start(&o, &pid, err);
	close(fds[1]);
	if (k < 0) {
		close(fds[0]);
		return k;
	}
	k = read_full_fd(fds[0], MAX_MODINFO_OUT, out, len);
	close(fds[0]);
	if (spawn_wait(pid, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (k >= 0) {
			free(*out);
			*out = NULL;
		}
		return sb_error_set(err, -ENODATA, "modinfo -F parmtype %s failed", path);
	}
	if (k < 0)
		return sb_error_set(err, k, "reading modinfo's output for %s: %s", path, strerror(-k));
	for (size_t i = 0; i < *len; i++)
		if ((*out)[i] == '\n')
			(*out)[i] = '\0';
	return 0;
}

static int module_file_has(const char *path, const char *param, struct sb_error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, plen = strlen(path);
	int k;

	if (plen > 3 && !strcmp(path + plen - 3, ".ko"))
		k = read_regular_file(path, MAX_MODULE_FILE, &buf, &len, err);
	else
		k = run_modinfo(path, &buf, &len, err);
	if (k < 0)
		return k;
	return has_parmtype(buf, len, "", param);
}

int hostvm_module_has_param(const struct hostvm_modules *m, const char *module, const char *param,
			    struct sb_error *err)
{
	_cleanup_free_ char *buf = NULL;
	char path[4096];
	size_t len = 0;
	int k;

	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->items[i].name, module))
			return module_file_has(m->items[i].path, param, err);
	if (!m->dir)
		return sb_error_set(err, -ENODATA, "no modules tree to read module %s's parameters from", module);
	snprintf(path, sizeof(path), "%s/modules.builtin.modinfo", m->dir);
	k = read_regular_file(path, MAX_MODULE_FILE, &buf, &len, err);
	if (k == -ENOENT)
		return sb_error_set(err, -ENODATA, "%s is missing, so built-in module %s's parameters cannot be read", path, module);
	if (k < 0)
		return k;
	char prefix[160];
	snprintf(prefix, sizeof(prefix), "%s.", module);
	/* a module neither loaded nor built in (kvm_intel on an AMD host): nothing to say of it */
	if (!has_entry(buf, len, prefix))
		return sb_error_set(err, -ENODATA, "module %s is neither loaded by the host VM nor built in", module);
	return has_parmtype(buf, len, prefix, param);
}
