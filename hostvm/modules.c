// SPDX-License-Identifier: GPL-2.0-or-later
/* Which modules a host VM needs, in load order (modules.dep, modules.builtin). */
#include "modules.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

#define MAX_DEP_FILE (16u << 20)

/* what a host VM loads; required ones must be in the tree or built in */
static const struct {
	const char *name;
	bool required;
	const char *why;
} wanted[] = {
	{ "virtio_ring", false, NULL },
	{ "virtio", false, NULL },
	{ "virtio_pci_modern_dev", false, NULL },
	{ "virtio_pci_legacy_dev", false, NULL },
	{ "virtio_pci", true, "CONFIG_VIRTIO_PCI (the 9p shares and the progress port are virtio PCI devices)" },
	{ "fscache", false, NULL },
	{ "netfs", false, NULL },
	{ "9pnet", true, "CONFIG_NET_9P (the root is this host's / over 9p)" },
	{ "9pnet_virtio", true, "CONFIG_NET_9P_VIRTIO (the 9p transport)" },
	{ "9p", true, "CONFIG_9P_FS (the root is this host's / over 9p)" },
	{ "virtio_console", true, "CONFIG_VIRTIO_CONSOLE (the progress port is a virtio-serial port)" },
	{ "irqbypass", false, NULL },
	{ "ccp", false, NULL },
	{ "kvm", true, "CONFIG_KVM (the benchmark's guest runs under the kernel's KVM)" },
	{ "@vendor", true, NULL },
};

char *hostvm_module_name(const char *path)
{
	const char *base = strrchr(path, '/');
	char *n, *dot;

	n = strdup(base ? base + 1 : path);
	if (!n)
		return NULL;
	dot = strstr(n, ".ko");
	if (dot)
		*dot = '\0';
	for (char *p = n; *p; p++)
		if (*p == '-')
			*p = '_';
	return n;
}

void hostvm_modules_done(struct hostvm_modules *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->items[i].name);
		free(m->items[i].path);
	}
	free(m->items);
	free(m->dir);
	*m = (struct hostvm_modules){};
}

/* A missing file is no error (*ret stays NULL): modules are then found by walking the tree. */
static int read_text(const char *path, char **ret, struct sb_error *err)
{
	int r = read_full_file(path, MAX_DEP_FILE, ret, NULL, err);

	if (r == -ENOENT) {
		*ret = NULL;
		return 0;
	}
	return r;
}

int hostvm_modules_dir(const char *given, const char *image, const char *release, char **ret, struct sb_error *err)
{
	char cand[PATH_MAX + 64];
	const char *slash;

	if (given) {
		const char *base = strrchr(given, '/');
		struct stat st;
		base = base && base[1] ? base + 1 : given;
		if (stat(given, &st) < 0 || !S_ISDIR(st.st_mode))
			return sb_error_set(err, -ENOENT, "modules tree %s: not a directory; give lib/modules/%s of the kernel's modules_install",
					    given, release);
		if (strcmp(base, release)) {
			/* INSTALL_MOD_PATH itself: look for lib/modules/RELEASE inside */
			snprintf(cand, sizeof(cand), "%s/lib/modules/%s", given, release);
			if (stat(cand, &st) == 0 && S_ISDIR(st.st_mode)) {
				*ret = realpath(cand, NULL);
				return *ret ? 0 : -ENOMEM;
			}
			return sb_error_set(err, -EINVAL,
					    "modules tree %s: it is release %s's, the kernel image is %s; give the lib/modules/%s of the same build",
					    given, base, release, release);
		}
		*ret = realpath(given, NULL);
		return *ret ? 0 : -ENOMEM;
	}
	slash = strrchr(image, '/');
	snprintf(cand, sizeof(cand), "%.*s/../lib/modules/%s", slash ? (int)(slash - image) : 1, slash ? image : ".",
		 release);
	if (access(cand, R_OK | X_OK) == 0) {
		*ret = realpath(cand, NULL);
		return *ret ? 0 : -ENOMEM;
	}
	snprintf(cand, sizeof(cand), "/lib/modules/%s", release);
	if (access(cand, R_OK | X_OK) == 0) {
		*ret = strdup(cand);
		return *ret ? 0 : -ENOMEM;
	}
	*ret = NULL;
	return 0;
}

/* names in modules.builtin (or NULL) */
static bool in_builtin(const char *builtin, const char *name)
{
	const char *p = builtin;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[PATH_MAX];
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		_cleanup_free_ char *n = hostvm_module_name(line);
		if (n && !strcmp(n, name))
			return true;
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

/* modules.dep: "kernel/a/b.ko: kernel/c.ko kernel/d.ko"; the line of name, or NULL */
static const char *dep_line(const char *dep, const char *name, size_t *len)
{
	const char *p = dep;

	while (p && *p) {
		const char *nl = strchr(p, '\n'), *colon = strchr(p, ':');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		if (colon && colon < p + l) {
			char path[PATH_MAX];
			snprintf(path, sizeof(path), "%.*s", (int)(colon - p), p);
			_cleanup_free_ char *n = hostvm_module_name(path);
			if (n && !strcmp(n, name)) {
				*len = l;
				return p;
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

static bool have(const struct hostvm_modules *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->items[i].name, name))
			return true;
	return false;
}

static int push(struct hostvm_modules *m, const char *dir, const char *rel)
{
	struct hostvm_module *n;
	char path[PATH_MAX * 2];

	n = realloc(m->items, (m->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	m->items = n;
	if (rel[0] == '/')
		snprintf(path, sizeof(path), "%s", rel);
	else
		snprintf(path, sizeof(path), "%s/%s", dir, rel);
	n[m->n].name = hostvm_module_name(path);
	n[m->n].path = strdup(path);
	if (!n[m->n].name || !n[m->n].path) {
		free(n[m->n].name);
		free(n[m->n].path);
		return -ENOMEM;
	}
	m->n++;
	return 0;
}

/* name and its dependencies, dependencies first */
static int add_with_deps(struct hostvm_modules *m, const char *dir, const char *dep, const char *name, int depth)
{
	size_t len = 0;
	const char *line = dep_line(dep, name, &len);
	char buf[8192];
	char *words[256];
	size_t nw = 0;
	int k;

	if (!line || depth > 32)
		return -ENOENT;
	if (have(m, name))
		return 0;
	snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
	char *colon = strchr(buf, ':');
	*colon = '\0';
	for (char *save = NULL, *t = strtok_r(colon + 1, " \t", &save); t && nw < ARRAY_SIZE(words);
	     t = strtok_r(NULL, " \t", &save))
		words[nw++] = t;
	/* modules.dep lists the whole closure; modprobe loads it from the end */
	for (size_t i = nw; i-- > 0;) {
		_cleanup_free_ char *dn = hostvm_module_name(words[i]);
		if (!dn)
			return -ENOMEM;
		k = add_with_deps(m, dir, dep, dn, depth + 1);
		if (k < 0 && k != -ENOENT)
			return k;
	}
	return have(m, name) ? 0 : push(m, dir, buf);
}

static const char *walk_name;
static char walk_found[PATH_MAX];

static int walk_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type != FTW_F || !strstr(path, ".ko"))
		return 0;
	_cleanup_free_ char *n = hostvm_module_name(path);
	if (n && !strcmp(n, walk_name)) {
		snprintf(walk_found, sizeof(walk_found), "%s", path);
		return 1;
	}
	return 0;
}

/* name and its dependencies into m (dep: modules.dep's text; else a walk of dir); 0, -ENOENT or -ENOMEM */
static int add_one(struct hostvm_modules *m, const char *dir, const char *dep, const char *builtin, const char *name)
{
	if (in_builtin(builtin, name)) {
		if (!strcmp(name, "kvm"))
			m->kvm_builtin = true;
		return 0;
	}
	if (dep)
		return add_with_deps(m, dir, dep, name, 0);
	if (!dir)
		return -ENOENT;
	walk_name = name;
	walk_found[0] = '\0';
	nftw(dir, walk_cb, 16, FTW_PHYS);
	return *walk_found ? (have(m, name) ? 0 : push(m, dir, walk_found)) : -ENOENT;
}

static int read_tree(const char *dir, char **dep, char **builtin, struct sb_error *err)
{
	char path[PATH_MAX + 32];
	int r;

	if (!dir)
		return 0;
	snprintf(path, sizeof(path), "%s/modules.dep", dir);
	if ((r = read_text(path, dep, err)) < 0)
		return r;
	snprintf(path, sizeof(path), "%s/modules.builtin", dir);
	return read_text(path, builtin, err);
}

static int missing(const char *dir, const char *name, const char *why, struct sb_error *err)
{
	return sb_error_set(err, -ENOENT,
			    "modules tree %s: no module %s, and modules.builtin does not list it; build the kernel with %s (=m or =y)",
			    dir, name, why);
}

int hostvm_modules_resolve(const char *dir, const char *vendor, struct hostvm_modules *ret, struct sb_error *err)
{
	struct hostvm_modules m = {};
	_cleanup_free_ char *dep = NULL, *builtin = NULL;
	char vendor_mod[32];
	int k;

	snprintf(vendor_mod, sizeof(vendor_mod), "kvm_%s", vendor);
	if ((k = read_tree(dir, &dep, &builtin, err)) < 0)
		return k;
	if (dir) {
		m.dir = strdup(dir);
		if (!m.dir)
			return sb_error_set(err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < ARRAY_SIZE(wanted); i++) {
		const char *name = strcmp(wanted[i].name, "@vendor") ? wanted[i].name : vendor_mod;
		k = add_one(&m, dir, dep, builtin, name);
		if (k == -ENOMEM) {
			hostvm_modules_done(&m);
			return sb_error_set(err, k, "out of memory");
		}
		if (k < 0 && wanted[i].required && dir && builtin) {
			const char *why = wanted[i].why ? wanted[i].why
					  : !strcmp(vendor, "amd") ? "CONFIG_KVM_AMD (the host VM's CPU is AMD's, with svm)"
								   : "CONFIG_KVM_INTEL (the host VM's CPU is Intel's, with vmx)";
			hostvm_modules_done(&m);
			return missing(dir, name, why, err);
		}
	}
	*ret = m;
	return 0;
}

int hostvm_modules_add(struct hostvm_modules *m, const char *name, const char *why, struct sb_error *err)
{
	_cleanup_free_ char *dep = NULL, *builtin = NULL;
	int k;

	if ((k = read_tree(m->dir, &dep, &builtin, err)) < 0)
		return k;
	k = add_one(m, m->dir, dep, builtin, name);
	if (k == -ENOMEM)
		return sb_error_set(err, k, "out of memory");
	if (k < 0 && m->dir && builtin)
		return missing(m->dir, name, why, err);
	return 0;
}
