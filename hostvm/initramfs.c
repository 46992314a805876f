// SPDX-License-Identifier: GPL-2.0-or-later
/* A host VM's initramfs: the init, its modules and /hostvm.conf in one cpio. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cpio.h"
#include "initramfs.h"
#include "macro.h"
#include "strbuf.h"

/* name's directories, then name itself (0755) */
static int add_file_with_dirs(struct cpio *c, const char *name, const char *path, struct sb_error *err)
{
	char dir[PATH_MAX];
	int k;

	if (!*name || name[0] == '/' || strstr(name, ".."))
		return sb_error_set(err, -EINVAL, "initramfs: \"%s\" is not a relative name without \"..\"", name);
	for (const char *slash = strchr(name, '/'); slash; slash = strchr(slash + 1, '/')) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - name), name);
		if ((k = cpio_add_dir(c, dir, 0755, err)) < 0)
			return k;
	}
	return cpio_add_file(c, name, 0755, path, err);
}

int hostvm_initramfs_write(const char *path, const char *init_path, const struct hostvm_modules *mods,
			   const char *const *params, const char *directives, struct sb_error *err)
{
	return hostvm_initramfs_write_files(path, init_path, mods, params, directives, NULL, 0, err);
}

int hostvm_initramfs_write_files(const char *path, const char *init_path, const struct hostvm_modules *mods,
				 const char *const *params, const char *directives,
				 const struct hostvm_initramfs_file *files, size_t n_files, struct sb_error *err)
{
	/* mount points the init uses before the root is there (lower, rw: the overlay's) */
	static const char *const dirs[] = { "dev", "proc", "sys", "newroot", "lower", "rw", "modules" };
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	_cleanup_cpio_ struct cpio *c = NULL;
	_cleanup_free_ char *conf = NULL;
	struct strbuf b = {};
	char name[PATH_MAX];
	int k;

	if (fd < 0)
		return sb_error_set(err, -errno, "initramfs %s: %s", path, strerror(errno));
	if (cpio_new(fd, &c) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if ((k = cpio_add_dir(c, dirs[i], 0755, err)) < 0)
			return k;
	if ((k = cpio_add_chardev(c, "dev/console", 0600, 5, 1, err)) < 0 ||
	    (k = cpio_add_file(c, "init", 0755, init_path, err)) < 0)
		return k;
	for (size_t m = 0; mods && m < mods->n; m++) {
		const char *p = mods->items[m].path, *ko = strstr(p, ".ko");
		const char *par = params && params[m] ? params[m] : "";

		snprintf(name, sizeof(name), "modules/%02zu-%s%s", m, mods->items[m].name, ko ? ko : ".ko");
		if ((k = cpio_add_file(c, name, 0644, p, err)) < 0)
			return k;
		strbuf_appendf(&b, "module /%s%s%s\n", name, *par ? " " : "", par);
	}
	for (size_t i = 0; i < n_files; i++)
		if ((k = add_file_with_dirs(c, files[i].name, files[i].path, err)) < 0)
			return k;
	strbuf_append(&b, directives ? directives : "");
	conf = strbuf_steal(&b);
	if (!conf)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if ((k = cpio_add_data(c, "hostvm.conf", 0644, conf, strlen(conf), err)) < 0 || (k = cpio_finish(c, err)) < 0)
		return k;
	return 0;
}
