// SPDX-License-Identifier: GPL-2.0-or-later
#include "selftests.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "macro.h"
#include "mkdir-p.h"
#include "strbuf.h"
#include "strv.h"

#define SELFTESTS "tools/testing/selftests/kvm"
#define OUT_DIR ".snapbench-selftests"
#define PRINT_MARK "snapbench-selftests:"

/* make's lists of programs, printed by a makefile read after the selftests' own (after lib.mk prefixed OUTPUT) */
static const char print_mk[] = "snapbench-print-progs:\n"
			       "\t@echo '" PRINT_MARK "' $(patsubst $(OUTPUT)/%,%,$(TEST_GEN_PROGS))\n"
			       ".PHONY: snapbench-print-progs\n";

static bool name_ok(const char *n)
{
	size_t slashes = 0;

	if (!*n || n[0] == '/' || n[0] == '-' || strstr(n, "..") || n[strlen(n) - 1] == '/')
		return false;
	for (const char *p = n; *p; p++) {
		if (*p == '/')
			slashes++;
		else if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') || *p == '_' ||
			   *p == '-'))
			return false;
	}
	return slashes <= 1;
}

int kbuild_selftests_parse(const char *arg, char ***ret, struct sb_error *err)
{
	_cleanup_strv_free_ char **v = NULL;

	for (const char *p = arg;; p++) {
		size_t n = strcspn(p, ",");
		_cleanup_free_ char *name = strndup(p, n);

		if (!name)
			return sb_error_set(err, -ENOMEM, "out of memory");
		if (!name_ok(name))
			return sb_error_set(err, -EINVAL, "--selftests '%s': '%s' is not a KVM selftest's name (give names of "
					    "tools/testing/selftests/kvm's programs, comma-separated: dirty_log_perf_test,"
					    "demand_paging_test)", arg, name);
		if (strv_contains(v, name))
			return sb_error_set(err, -EINVAL, "--selftests '%s': %s is named twice", arg, name);
		if (strv_consume(&v, TAKE_PTR(name)) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
		p += n;
		if (!*p)
			break;
	}
	*ret = TAKE_PTR(v);
	return 0;
}

/* make -C TREE/tools/testing/selftests/kvm ARCH= [CROSS_COMPILE=] OUTPUT=out, then extra */
static int make_argv(const struct kbuild_arch *arch, const char *tree, const char *out, char ***argv)
{
	char *a = NULL;

	if (strv_push(argv, "make") < 0 || strv_push(argv, "-C") < 0 || asprintf(&a, "%s/" SELFTESTS, tree) < 0 ||
	    strv_consume(argv, a) < 0 || asprintf(&a, "ARCH=%s", arch->make_arch) < 0 || strv_consume(argv, a) < 0 ||
	    (arch->cross_compile && (asprintf(&a, "CROSS_COMPILE=%s", arch->cross_compile) < 0 || strv_consume(argv, a) < 0)) ||
	    asprintf(&a, "OUTPUT=%s", out) < 0 || strv_consume(argv, a) < 0)
		return -ENOMEM;
	return 0;
}

struct collect {
	char **progs;
	bool seen;
	const struct kbuild_selftests_io *io;
};

static void collect_line(void *userdata, const char *line)
{
	struct collect *c = userdata;

	if (!strncmp(line, PRINT_MARK, strlen(PRINT_MARK))) {
		_cleanup_free_ char *copy = strdup(line + strlen(PRINT_MARK));
		c->seen = true;
		for (char *save = NULL, *t = copy ? strtok_r(copy, " \t", &save) : NULL; t; t = strtok_r(NULL, " \t", &save))
			if (!strv_contains(c->progs, t))
				strv_push(&c->progs, t);
		return;
	}
	if (c->io && c->io->on_line)
		c->io->on_line(c->io->userdata, line);
}

int kbuild_selftests_offered(const struct kbuild_arch *arch, const char *tree, const char *scratch,
			     const struct kbuild_selftests_io *io, char ***ret, struct sb_error *err)
{
	_cleanup_free_ char *dir = NULL, *mk = NULL, *mkf = NULL;
	_cleanup_strv_free_ char **argv = NULL;
	struct collect c = { .io = io };
	struct stat st;
	int r;

	if (asprintf(&dir, "%s/" SELFTESTS "/Makefile", tree) < 0 || asprintf(&mk, "%s/print-progs.mk", scratch) < 0 ||
	    asprintf(&mkf, "--file=%s", mk) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (stat(dir, &st) < 0)
		return sb_error_set(err, -EINVAL, "--selftests: kernel tree %s has no " SELFTESTS "/Makefile", tree);
	if (mkdir_p(scratch, 0755) < 0)
		return sb_error_set(err, -errno, "%s: %s", scratch, strerror(errno));
	if ((r = atomic_file_write(mk, print_mk, strlen(print_mk), 0644, err)) < 0)
		return r;
	if (make_argv(arch, tree, scratch, &argv) < 0 || strv_push(&argv, "--file=Makefile") < 0 ||
	    strv_push(&argv, mkf) < 0 || strv_push(&argv, "snapbench-print-progs") < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = kbuild_spawn(&(struct kbuild_spawn){ .argv = argv, .log_fd = io ? io->log_fd : -1, .on_line = collect_line,
						 .userdata = &c, .env_add = io ? io->env : NULL },
			 err);
	if (r == 0 && !c.seen)
		r = 1;
	if (r != 0) {
		strv_free(c.progs);
		return r < 0 ? r : sb_error_set(err, -EIO, "--selftests: make could not list " SELFTESTS "'s programs for %s "
						"(make exited with %d)", arch->name, r);
	}
	*ret = c.progs ? c.progs : calloc(1, sizeof(char *));
	return *ret ? 0 : sb_error_set(err, -ENOMEM, "out of memory");
}

/* The offered program name stands for: itself, or the one whose last component it is. NULL: none or two. */
static const char *resolve(const char *name, char *const *offered)
{
	const char *found = NULL;

	if (strv_contains(offered, name))
		return name;
	for (char *const *o = offered; o && *o; o++) {
		const char *slash = strrchr(*o, '/');
		if (slash && !strcmp(slash + 1, name)) {
			if (found)
				return NULL;
			found = *o;
		}
	}
	return found;
}

/* Whether the selftests' directory has a source of name: NAME.c, or SUBDIR/NAME.c (another arch's program). */
static bool has_source(const char *tree, const char *name)
{
	_cleanup_free_ char *dir = NULL, *src = NULL;
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (asprintf(&dir, "%s/" SELFTESTS, tree) < 0 || asprintf(&src, "%s/%s.c", dir, name) < 0)
		return false;
	if (access(src, F_OK) == 0)
		return true;
	if (strchr(name, '/') || !(d = opendir(dir)))
		return false;
	while (!found && (de = readdir(d))) {
		_cleanup_free_ char *sub = NULL;
		if (de->d_name[0] != '.' && asprintf(&sub, "%s/%s/%s.c", dir, de->d_name, name) >= 0)
			found = access(sub, F_OK) == 0;
	}
	closedir(d);
	return found;
}

int kbuild_selftests_check(const struct kbuild_arch *arch, const char *tree, char *const *wanted,
			   char *const *offered, struct sb_error *err)
{
	_cleanup_strbuf_ struct strbuf b = {};
	size_t bad = 0;

	for (char *const *w = wanted; w && *w; w++) {
		if (resolve(*w, offered))
			continue;
		bad++;
		strbuf_appendf(&b, "%s%s (%s)", bad > 1 ? ", " : "", *w,
			       has_source(tree, *w) ? "the tree has its source, but not for this architecture"
						    : "no such program");
	}
	if (!bad)
		return 0;
	{
		_cleanup_free_ char *text = strbuf_steal(&b);
		return sb_error_set(err, -EINVAL, "--selftests: the kernel tree %s offers no KVM selftest %s for %s; "
				    "its " SELFTESTS "/Makefile lists %zu for %s (TEST_GEN_PROGS_*)", tree,
				    text ? text : "", arch->name, strv_length(offered), arch->name);
	}
}

static char *join3(const char *a, const char *b, const char *c)
{
	char *p = NULL;

	return a && b && c && asprintf(&p, "%s%s%s", a, b, c) >= 0 ? p : NULL;
}

/* Runs argv with io; a non-zero exit is -EIO naming what. */
static int run_make(char *const *argv, const char *what, const struct kbuild_selftests_io *io, struct sb_error *err)
{
	_cleanup_free_ char *cmd = kbuild_argv_text(argv);
	int r;

	if (io->log_fd >= 0 && cmd) {
		_cleanup_free_ char *head = NULL;
		if (asprintf(&head, "\n==> %s\n$ %s\n", what, cmd) > 0 && write(io->log_fd, head, strlen(head)) < 0) {
			/* the log is for the user to read; a failed write must not fail the build */
		}
	}
	r = kbuild_spawn(&(struct kbuild_spawn){ .argv = argv, .log_fd = io->log_fd, .on_line = io->on_line,
						 .userdata = io->userdata, .env_add = io->env },
			 err);
	if (r > 0)
		return sb_error_set(err, -EIO, "step '%s' failed: %s exited with status %d; the build log has its output",
				    what, argv[0], r);
	return r;
}

int kbuild_selftests_build(const struct kbuild_arch *arch, const char *tree, char *const *wanted,
			   char *const *offered, unsigned jobs, const char *dest, const struct kbuild_selftests_io *io,
			   struct sb_error *err)
{
	_cleanup_strv_free_ char **headers = NULL, **argv = NULL;
	_cleanup_free_ char *out = NULL, *a = NULL, *j = NULL;
	int r;

	if (asprintf(&out, "%s/" OUT_DIR, tree) < 0 || asprintf(&a, "ARCH=%s", arch->make_arch) < 0 ||
	    asprintf(&j, "-j%u", jobs ? jobs : 1) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	/* the selftests include the uapi headers of the same tree: make headers puts them in TREE/usr/include */
	if (strv_push(&headers, "make") < 0 || strv_push(&headers, "-C") < 0 || strv_push(&headers, tree) < 0 ||
	    strv_push(&headers, a) < 0 ||
	    (arch->cross_compile && strv_consume(&headers, join3("CROSS_COMPILE=", arch->cross_compile, "")) < 0) ||
	    strv_push(&headers, "headers") < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if ((r = run_make(headers, "make headers (for the KVM selftests)", io, err)) < 0)
		return r;
	/* -static: a host VM runs them from its 9p root whatever libraries that root has (or a riscv one has none) */
	if (make_argv(arch, tree, out, &argv) < 0 || strv_push(&argv, "EXTRA_CFLAGS=-static") < 0 || strv_push(&argv, j) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	for (char *const *w = wanted; *w; w++)
		if (strv_consume(&argv, join3(out, "/", resolve(*w, offered))) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
	if ((r = run_make(argv, "make the KVM selftests", io, err)) < 0)
		return r;
	if (mkdir_p(dest, 0755) < 0)
		return sb_error_set(err, -errno, "%s: %s", dest, strerror(errno));
	for (char *const *w = wanted; *w; w++) {
		const char *rel = resolve(*w, offered), *base = strrchr(rel, '/');
		_cleanup_free_ char *from = join3(out, "/", rel), *to = join3(dest, "/", base ? base + 1 : rel);
		char *cp[] = { "cp", "--", from, to, NULL };

		if (!from || !to)
			return sb_error_set(err, -ENOMEM, "out of memory");
		if ((r = run_make(cp, "installing a KVM selftest", io, err)) < 0)
			return r;
	}
	return 0;
}
