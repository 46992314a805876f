// SPDX-License-Identifier: GPL-2.0-or-later
#include "build.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arch.h"
#include "atomic-file.h"
#include "ccache.h"
#include "clock.h"
#include "config-base.h"
#include "fileio.h"
#include "fragment.h"
#include "json-util.h"
#include "macro.h"
#include "mkdir-p.h"
#include "sha256.h"
#include "strbuf.h"
#include "strv.h"
#include "relocate.h"
#include "selftests.h"
#include "tree.h"

#define PATCH_MAX (64u * 1024 * 1024)
#define CONFIG_MAX (16u * 1024 * 1024)
#define KEY_HEX 20
#define TAIL_LINES 64

/*
 * How far an entry's scratch tree got: CACHE/KEY/state, "STATE KEY", written
 * atomically by the entry's own steps after each ran, and removed before its
 * tree is (re)made. It lives beside the tree, not in it, and names its key:
 * a copy of another entry's tree (a patched build starting from its base's)
 * never brings a state this entry would trust. A later attempt of the same
 * key resumes from there.
 */
enum tree_state { STATE_NONE, STATE_PATCHED, STATE_CONFIGURED, STATE_BUILT };
static const char *const state_names[] = { "none", "patched", "configured", "built" };
#define STATE_FILE "state"

struct build {
	const struct kbuild_request *req;
	const struct kbuild_arch *arch; /* req's, or the default */
	const struct kbuild_progress *progress;
	const char *dir, *key;  /* the cache entry whose state the steps write (CACHE/KEY); NULL: a scratch build */
	const char *from_key;   /* the base whose objects its tree started from, which its state names; NULL: none */
	int log_fd;
	const char *log_path;
	char *tail[TAIL_LINES]; /* the running step's last lines, for a failure's message */
	size_t n_tail;
	char **selftests_offered; /* what the tree's KVM selftests offer for the arch, when req->selftests */
	char *ccache_dir;         /* --ccache: CCACHE_DIR, else NULL */
	char **env;               /* req->env and CCACHE_DIR for make, when ccache; NULL: req->env */
};

static void tail_clear(struct build *b)
{
	for (size_t i = 0; i < TAIL_LINES; i++) {
		free(b->tail[i]);
		b->tail[i] = NULL;
	}
	b->n_tail = 0;
}

/*
 * Six of the running step's last lines, each on a line of its own and
 * indented, for a message (malloc'ed). errors: the last six that say
 * "error" or make's "***" when there are any (make -j goes on printing the
 * other jobs' lines after a compiler's error).
 */
static char *tail_text(struct build *b, bool errors)
{
	_cleanup_strbuf_ struct strbuf t = {};
	size_t first = b->n_tail > TAIL_LINES ? b->n_tail - TAIL_LINES : 0, picked[6], n = 0;

	for (size_t i = b->n_tail; errors && i-- > first && n < ARRAY_SIZE(picked);)
		if (b->tail[i % TAIL_LINES] &&
		    (strcasestr(b->tail[i % TAIL_LINES], "error") || strstr(b->tail[i % TAIL_LINES], "***")))
			picked[n++] = i;
	if (n == 0)
		for (size_t i = b->n_tail; i-- > first && n < ARRAY_SIZE(picked);)
			picked[n++] = i;
	while (n--)
		strbuf_appendf(&t, "\n  %s", b->tail[picked[n] % TAIL_LINES] ? b->tail[picked[n] % TAIL_LINES] : "");
	return strbuf_steal(&t);
}

static void on_line(void *userdata, const char *line)
{
	struct build *b = userdata;

	free(b->tail[b->n_tail % TAIL_LINES]);
	b->tail[b->n_tail % TAIL_LINES] = strdup(line);
	b->n_tail++;
	if (b->progress && b->progress->line)
		b->progress->line(b->progress->userdata, line);
}

static _printf_(2, 3) void logf_(struct build *b, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (b->log_fd >= 0 && n > 0 && write(b->log_fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) < 0) {
		/* the log is for the user to read; a failed write must not fail the build */
	}
}

static void step(struct build *b, const char *what)
{
	logf_(b, "\n==> %s\n", what);
	if (b->progress && b->progress->step)
		b->progress->step(b->progress->userdata, what);
}

/*
 * Runs one program of the build as step what. A non-zero exit is -EIO with
 * the command, its status, its last lines and the log named.
 */
static int run(struct build *b, const char *what, char *const *argv, struct sb_error *err)
{
	_cleanup_free_ char *cmd = kbuild_argv_text(argv), *tail = NULL;
	int r;

	step(b, what);
	logf_(b, "$ %s\n", cmd ? cmd : argv[0]);
	tail_clear(b);
	r = kbuild_spawn(&(struct kbuild_spawn){ .argv = argv, .log_fd = b->log_fd, .on_line = on_line, .userdata = b,
						 .env_add = b->env ? b->env : b->req->env },
			 err);
	if (r < 0)
		return sb_error_prefix(err, "step '%s'", what);
	if (r == 0)
		return 0;
	/* the last lines say what failed; make's own "Error N" lines come last, the compiler's message before them */
	tail = tail_text(b, true);
	return sb_error_set(err, -EIO, "step '%s' failed: %s exited with status %d; the build log is %s; it said:%s",
			    what, argv[0], r, b->log_path, tail ? tail : "");
}

static char *path_join(const char *a, const char *b)
{
	char *p = NULL;

	return asprintf(&p, "%s/%s", a, b) < 0 ? NULL : p;
}

static int rm_rf(struct build *b, const char *path, struct sb_error *err)
{
	char *argv[] = { "rm", "-rf", "--", (char *)path, NULL };
	int r;

	if (access(path, F_OK) < 0)
		return 0;
	r = kbuild_spawn(&(struct kbuild_spawn){ .argv = argv, .log_fd = b ? b->log_fd : -1 }, err);
	if (r > 0)
		return sb_error_set(err, -EIO, "cannot remove %s (rm exited with %d)", path, r);
	return r;
}

static int file_sha256(const char *path, size_t max, const char *what, char hex[static 65], struct sb_error *err)
{
	_cleanup_free_ char *text = NULL;
	struct sha256 h;
	size_t len;
	int r = read_regular_file(path, max, &text, &len, err);

	if (r < 0)
		return sb_error_prefix(err, "%s", what);
	sha256_init(&h);
	sha256_update(&h, text, len);
	sha256_hex(&h, hex);
	return 0;
}

/* The minimal base's KCONFIG_ALLCONFIG text's SHA-256: a change of the base's options is another key. */
static int base_sha256(const char *arch, char hex[static 65], struct sb_error *err)
{
	_cleanup_free_ char *text = kbuild_config_base_text(arch);
	struct sha256 h;

	if (!text)
		return sb_error_set(err, -ENOMEM, "out of memory");
	sha256_init(&h);
	sha256_update(&h, text, strlen(text));
	sha256_hex(&h, hex);
	return 0;
}

int kbuild_key(const struct kbuild_request *req, const char *tree_id, char **key, char **base_key, struct sb_error *err)
{
	const char *arch = req->arch ? req->arch->name : kbuild_arch_default()->name;
	_cleanup_free_ char *frag = kbuild_fragment_text(arch);
	char hex[65], cfg[65], fhex[65];
	struct sha256 h, base;
	int r;

	if (!frag)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (req->config && (r = file_sha256(req->config, CONFIG_MAX, "--config", cfg, err)) < 0)
		return r;
	if (!req->config && req->base == KBUILD_BASE_MINIMAL && (r = base_sha256(arch, cfg, err)) < 0)
		return r;
	sha256_init(&h);
	sha256_update(&h, frag, strlen(frag));
	sha256_hex(&h, fhex);

	/* one line per input; the unpatched build's key is the same lines without the patches' */
	sha256_init(&h);
	{
		_cleanup_strbuf_ struct strbuf s = {};
		_cleanup_free_ char *text = NULL;

		strbuf_appendf(&s, "snapbench-kbuild/1\narch %s\ntree %s\nconfig %s%s\nfragment sha256:%s\n",
			       arch, tree_id,
			       req->config ? "sha256:" : req->base == KBUILD_BASE_MINIMAL ? "minimal sha256:" : "defconfig",
			       req->config || req->base == KBUILD_BASE_MINIMAL ? cfg : "", fhex);
		/* a value may hold anything but a NUL: its length first, so no value can forge another line */
		for (char *const *e = req->env; e && *e; e++)
			strbuf_appendf(&s, "env %zu %s\n", strlen(*e), *e);
		/* in the unpatched base's key too: both arms of a seed ask for the same programs */
		for (char *const *t = req->selftests; t && *t; t++)
			strbuf_appendf(&s, "selftest %s\n", *t);
		if (!(text = strbuf_steal(&s)))
			return sb_error_set(err, -ENOMEM, "out of memory");
		sha256_update(&h, text, strlen(text));
	}
	base = h;
	for (char *const *p = req->patches; p && *p; p++) {
		_cleanup_free_ char *what = NULL;
		if (asprintf(&what, "patch %s", *p) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
		if ((r = file_sha256(*p, PATCH_MAX, what, hex, err)) < 0)
			return r;
		sha256_update(&h, "patch sha256:", 13);
		sha256_update(&h, hex, 64);
		sha256_update(&h, "\n", 1);
	}
	sha256_hex(&h, hex);
	if (!(*key = strndup(hex, KEY_HEX)))
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (base_key) {
		sha256_hex(&base, hex);
		if (!(*base_key = strndup(hex, KEY_HEX))) {
			free(*key);
			*key = NULL;
			return sb_error_set(err, -ENOMEM, "out of memory");
		}
	}
	return 0;
}

void kbuild_result_done(struct kbuild_result *r)
{
	free(r->key);
	free(r->dir);
	free(r->release);
	free(r->image);
	free(r->modules);
	free(r->selftests);
	free(r->vmlinux);
	free(r->config);
	free(r->log);
	free(r->record);
	free(r->tree_id);
	free(r->incremental_from);
	*r = (struct kbuild_result){};
}

/* ---- the scratch tree's state ---- */

/*
 * dir's state when it is key's own (CACHE/KEY/state, "STATE KEY", then
 * " from BASE" when the tree started from base BASE's objects), else
 * STATE_NONE. *from (may be NULL) gets BASE (malloc'ed) or NULL.
 */
static enum tree_state state_read(const char *dir, const char *key, char **from)
{
	_cleanup_free_ char *path = path_join(dir, STATE_FILE), *text = NULL;
	size_t kl = strlen(key);

	if (from)
		*from = NULL;
	if (!path || read_regular_file(path, 256, &text, NULL, NULL) < 0)
		return STATE_NONE;
	for (int s = STATE_BUILT; s > STATE_NONE; s--) {
		size_t n = strlen(state_names[s]);
		const char *rest = text + n + 1 + kl;

		if (strncmp(text, state_names[s], n) || text[n] != ' ' || strncmp(text + n + 1, key, kl))
			continue;
		if (*rest == '\n')
			return (enum tree_state)s;
		if (!strncmp(rest, " from ", 6) && strlen(rest + 6) == KEY_HEX + 1 && rest[6 + KEY_HEX] == '\n') {
			if (from && !(*from = strndup(rest + 6, KEY_HEX)))
				return STATE_NONE;
			return (enum tree_state)s;
		}
	}
	return STATE_NONE;
}

/* The entry's state after a step of its own ran; STATE_NONE removes it (before the tree is remade). */
static int state_write(struct build *b, enum tree_state s, struct sb_error *err)
{
	_cleanup_free_ char *path = NULL, *text = NULL;

	if (!b->dir)
		return 0;
	if (!(path = path_join(b->dir, STATE_FILE)))
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (s == STATE_NONE)
		return unlink(path) < 0 && errno != ENOENT ? sb_error_set(err, -errno, "%s: %s", path, strerror(errno)) : 0;
	if (asprintf(&text, "%s %s%s%s\n", state_names[s], b->key, b->from_key ? " from " : "",
		     b->from_key ? b->from_key : "") < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	return atomic_file_write(path, text, strlen(text), 0644, err);
}

/* ---- steps ---- */

static int apply_patches(struct build *b, const char *tree, struct sb_error *err)
{
	for (char *const *p = b->req->patches; p && *p; p++) {
		_cleanup_free_ char *what = NULL, *abs = realpath(*p, NULL);
		/*
		 * --forward: a patch already in the tree fails rather than being reversed; --fuzz=0: a hunk whose
		 * context changed fails rather than landing where it may not belong (git apply is as strict);
		 * rejects are not kept
		 */
		char *argv[] = { "patch", "-p1", "--forward", "--fuzz=0", "--batch", "--no-backup-if-mismatch",
				 "--reject-file=-", "-d", (char *)tree, "-i", abs ? abs : *p, NULL };
		int r;

		if (asprintf(&what, "applying %s", *p) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
		r = run(b, what, argv, err);
		if (r == -EIO) {
			/* patch says which file and hunk failed */
			_cleanup_free_ char *said = tail_text(b, false);
			return sb_error_set(err, -EBADMSG, "patch %s does not apply to kernel tree %s (patch -p1 in a scratch "
					    "copy; the tree itself is untouched); the build log is %s; patch said:%s", *p,
					    b->req->tree, b->log_path, said ? said : "");
		}
		if (r < 0)
			return r;
	}
	return 0;
}

/* ARCH= and CROSS_COMPILE= for every make of the build, so each sees the same configuration. */
static int arch_args(const struct kbuild_arch *arch, char ***argv)
{
	char *a = NULL;

	if (asprintf(&a, "ARCH=%s", arch->make_arch) < 0 || strv_consume(argv, a) < 0)
		return -ENOMEM;
	if (arch->cross_compile && (asprintf(&a, "CROSS_COMPILE=%s", arch->cross_compile) < 0 || strv_consume(argv, a) < 0))
		return -ENOMEM;
	return 0;
}

/* --ccache: CC="ccache [CROSS_COMPILE]gcc" (one argument: make splits it, no shell does) */
static int cc_args(const struct build *b, char ***argv)
{
	char *a = NULL;

	if (!b->ccache_dir)
		return 0;
	if (asprintf(&a, "CC=ccache %sgcc", b->arch->cross_compile ? b->arch->cross_compile : "") < 0 ||
	    strv_consume(argv, a) < 0)
		return -ENOMEM;
	return 0;
}

/* --ccache: its directory made, CCACHE_DIR added to what make gets. */
static int ccache_setup(struct build *b, struct sb_error *err)
{
	char *e = NULL;

	if (!(b->ccache_dir = kbuild_ccache_dir(b->req->cache)))
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (mkdir_p(b->ccache_dir, 0755) < 0)
		return sb_error_set(err, -errno, "ccache directory %s: %s", b->ccache_dir, strerror(errno));
	if (b->req->env && !(b->env = strv_copy(b->req->env)))
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (asprintf(&e, "CCACHE_DIR=%s", b->ccache_dir) < 0 || strv_consume(&b->env, e) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

static int make_in(struct build *b, const char *tree, const char *what, char *const *targets, struct sb_error *err)
{
	_cleanup_strv_free_ char **argv = NULL;

	if (strv_push(&argv, "make") < 0 || strv_push(&argv, "-C") < 0 || strv_push(&argv, tree) < 0 ||
	    arch_args(b->arch, &argv) < 0 || cc_args(b, &argv) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	for (char *const *t = targets; *t; t++)
		if (strv_push(&argv, *t) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
	return run(b, what, argv, err);
}

/*
 * The minimal base: make allnoconfig with the base's and the fragment's
 * options given as KCONFIG_ALLCONFIG (TREE-minimal.config beside the tree),
 * so what they depend on is decided with them.
 */
static int make_allnoconfig(struct build *b, const char *tree, struct sb_error *err)
{
	_cleanup_free_ char *text = kbuild_config_base_text(b->arch->name), *path = NULL, *arg = NULL;
	int r;

	if (!text || asprintf(&path, "%s-minimal.config", tree) < 0 || asprintf(&arg, "KCONFIG_ALLCONFIG=%s", path) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	step(b, "writing the minimal config base");
	if ((r = atomic_file_write(path, text, strlen(text), 0644, err)) < 0)
		return r;
	{
		char *t[] = { arg, "allnoconfig", NULL };
		return make_in(b, tree, "make allnoconfig (the minimal base)", t, err);
	}
}

/* The base (the minimal one, defconfig, or the user's config), the fragment merged in, olddefconfig, the check. */
static int configure(struct build *b, const char *tree, struct sb_error *err)
{
	_cleanup_free_ char *dotconfig = path_join(tree, ".config"), *base = NULL, *merged = NULL, *final = NULL;
	int r;

	if (!dotconfig)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (b->req->config) {
		step(b, "copying the base config");
		if ((r = read_regular_file(b->req->config, CONFIG_MAX, &base, NULL, err)) < 0)
			return sb_error_prefix(err, "--config");
		if ((r = atomic_file_write(dotconfig, base, strlen(base), 0644, err)) < 0)
			return r;
	} else if (b->req->base == KBUILD_BASE_DEFCONFIG) {
		char *t[] = { "defconfig", NULL };
		if ((r = make_in(b, tree, "make defconfig", t, err)) < 0)
			return r;
	} else if ((r = make_allnoconfig(b, tree, err)) < 0) {
		return r;
	}
	free(base);
	base = NULL;
	step(b, "merging snapbench's host VM fragment");
	if ((r = read_full_file(dotconfig, CONFIG_MAX, &base, NULL, err)) < 0 ||
	    (r = kbuild_fragment_merge(b->arch->name, base, &merged, err)) < 0 ||
	    (r = atomic_file_write(dotconfig, merged, strlen(merged), 0644, err)) < 0)
		return r;
	{
		char *t[] = { "olddefconfig", NULL };
		if ((r = make_in(b, tree, "make olddefconfig", t, err)) < 0)
			return r;
	}
	step(b, "checking the config against the fragment");
	if ((r = read_full_file(dotconfig, CONFIG_MAX, &final, NULL, err)) < 0)
		return r;
	r = kbuild_fragment_check(b->arch->name, final, dotconfig, err);
	if (r >= 0 && !b->req->config && b->req->base == KBUILD_BASE_MINIMAL)
		r = kbuild_config_base_check(b->arch->name, final, dotconfig, err);
	if (r < 0)
		logf_(b, "%s\n", err->msg);
	return r;
}

static void collect_first(void *userdata, const char *line)
{
	char **first = userdata;

	if (!*first && *line)
		*first = strdup(line);
}

static int kernel_release(struct build *b, const char *tree, char **ret, struct sb_error *err)
{
	_cleanup_strv_free_ char **argv = NULL;
	char *first = NULL;
	int r;

	if (strv_push(&argv, "make") < 0 || strv_push(&argv, "-s") < 0 || strv_push(&argv, "-C") < 0 ||
	    strv_push(&argv, tree) < 0 || arch_args(b->arch, &argv) < 0 || strv_push(&argv, "kernelrelease") < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = kbuild_spawn(&(struct kbuild_spawn){ .argv = argv, .log_fd = -1, .on_line = collect_first, .userdata = &first },
			 err);
	if (r == 0 && (!first || !*first || strchr(first, '/') || strchr(first, ' ')))
		r = 1;
	if (r != 0) {
		free(first);
		return r < 0 ? r : sb_error_set(err, -EIO, "make kernelrelease in %s gave no release; the build log is %s",
						tree, b->log_path);
	}
	*ret = first;
	return 0;
}

/* Copies one file (a vmlinux of hundreds of MiB included) with copy_file_range(). */
static int copy_file(const char *from, const char *to, struct sb_error *err)
{
	struct stat st;
	_cleanup_close_ int in = open_regular(from, &st, err), out = -1;

	if (in < 0)
		return in;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 0777);
	if (out < 0)
		return sb_error_set(err, -errno, "%s: %s", to, strerror(errno));
	for (off_t done = 0; done < st.st_size;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)(st.st_size - done), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return sb_error_set(err, n < 0 ? -errno : -EIO, "copying %s to %s: %s", from, to,
					    n < 0 ? strerror(errno) : "short copy");
		done += n;
	}
	return 0;
}

/* The boot files (make install's names, as /boot and an unpacked kernel package have them). */
static int install_boot(const struct kbuild_arch *arch, const char *tree, const char *boot, const char *release,
			struct sb_error *err)
{
	const struct {
		const char *from, *to;
	} files[] = {
		{ arch->image_path, "vmlinuz" },
		{ ".config", "config" },
		{ "System.map", "System.map" },
		{ "vmlinux", "vmlinux" },
	};
	int r;

	if (mkdir_p(boot, 0755) < 0)
		return sb_error_set(err, -errno, "%s: %s", boot, strerror(errno));
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *from = path_join(tree, files[i].from), *to = NULL;
		if (!from || asprintf(&to, "%s/%s-%s", boot, files[i].to, release) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
		if ((r = copy_file(from, to, err)) < 0)
			return r;
	}
	return 0;
}

/* lib/modules/RELEASE/build and source point into the scratch tree, which may go: not kept. */
static void drop_tree_links(const char *modules)
{
	static const char *const links[] = { "build", "source" };

	for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
		_cleanup_free_ char *p = path_join(modules, links[i]);
		struct stat st;
		if (p && lstat(p, &st) == 0 && S_ISLNK(st.st_mode))
			unlink(p);
	}
}

/* ---- the patches, tried before the tree is copied ---- */

/* The files a -p1 patch names ("--- a/mm/x.c", "+++ b/mm/x.c"), relative to the tree, added to *files. */
static int patch_files(const char *patch, char ***files, struct sb_error *err)
{
	_cleanup_free_ char *text = NULL;
	int r = read_regular_file(patch, PATCH_MAX, &text, NULL, err);

	if (r < 0)
		return sb_error_prefix(err, "patch %s", patch);
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		if (n > 4 && (!strncmp(p, "--- ", 4) || !strncmp(p, "+++ ", 4)) && p[4] != '/') {
			const char *f = p + 4;
			size_t len = strcspn(f, "\t\n"); /* diff -u puts a tab and a time after the name */
			const char *slash = memchr(f, '/', len);
			char *rel = slash ? strndup(slash + 1, len - (size_t)(slash + 1 - f)) : NULL;

			/* a name that would leave the tree is the real application's to refuse */
			if (rel && *rel && !strstr(rel, "..") && !strv_contains(*files, rel)) {
				if (strv_consume(files, rel) < 0)
					return sb_error_set(err, -ENOMEM, "out of memory");
			} else {
				free(rel);
			}
		}
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

/*
 * The patches applied, in order, to a copy of only the files they name, in
 * check_dir: one that does not apply fails in a second rather than after
 * the tree's copy. What the names miss, the real application still catches.
 */
static int precheck_patches(struct build *b, const char *tree, const char *check_dir, struct sb_error *err)
{
	_cleanup_strv_free_ char **files = NULL;
	char what[128];
	int r;

	if (!b->req->patches || !b->req->patches[0])
		return 0;
	for (char *const *p = b->req->patches; *p; p++)
		if ((r = patch_files(*p, &files, err)) < 0)
			return r;
	if ((r = rm_rf(b, check_dir, err)) < 0)
		return r;
	if (mkdir_p(check_dir, 0755) < 0)
		return sb_error_set(err, -errno, "%s: %s", check_dir, strerror(errno));
	for (char **f = files; f && *f; f++) {
		_cleanup_free_ char *from = path_join(tree, *f), *to = path_join(check_dir, *f);
		struct stat st;
		char *slash;

		if (!from || !to)
			return sb_error_set(err, -ENOMEM, "out of memory");
		if (stat(from, &st) < 0 || !S_ISREG(st.st_mode))
			continue; /* a file the patch creates */
		slash = strrchr(to, '/');
		*slash = '\0';
		if (mkdir_p(to, 0755) < 0)
			return sb_error_set(err, -errno, "%s: %s", to, strerror(errno));
		*slash = '/';
		if ((r = copy_file(from, to, err)) < 0)
			return r;
	}
	snprintf(what, sizeof(what), "checking that the patches apply (on a copy of the %zu files they name)",
		 strv_length(files));
	step(b, what);
	r = apply_patches(b, check_dir, err);
	rm_rf(b, check_dir, NULL);
	return r;
}

/* ---- the record: out/kbuild.json ---- */

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static int times_json(struct json_object *o, const struct kbuild_times *t)
{
	const struct {
		const char *name;
		double v;
	} f[] = {
		{ "identify", t->identify_s }, { "copy", t->copy_s }, { "patch", t->patch_s }, { "config", t->config_s },
		{ "make", t->make_s },         { "install", t->install_s }, { "total", t->total_s },
	};

	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		if (json_object_object_add(o, f[i].name, json_object_new_double(f[i].v)) < 0)
			return -ENOMEM;
	return 0;
}

/* config: the .config built (its SHA-256 goes in); the record itself names the files by release, not by path */
static int record_write(const struct kbuild_request *req, const struct kbuild_result *r, const char *path,
			const char *config_path, const char *version, const char *tree_note, unsigned jobs,
			struct sb_error *err)
{
	_cleanup_json_ struct json_object *o = json_object_new_object(), *tree = json_object_new_object(),
					  *patches = json_object_new_array(), *config = json_object_new_object(),
					  *times = json_object_new_object(), *env = json_object_new_object();
	char hex[65], now[32];
	time_t t = time(NULL);
	struct tm tm;
	int k;

	if (!o || !tree || !patches || !config || !times || !env)
		return sb_error_set(err, -ENOMEM, "out of memory");
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	json_object_object_add(tree, "path", json_object_new_string(req->tree));
	json_object_object_add(tree, "id", json_object_new_string(r->tree_id));
	json_object_object_add(tree, "version", str_or_null(version));
	json_object_object_add(tree, "note", str_or_null(tree_note));
	for (char *const *p = req->patches; p && *p; p++) {
		struct json_object *e = json_object_new_object();
		_cleanup_free_ char *abs = realpath(*p, NULL);
		if (!e || (k = file_sha256(*p, PATCH_MAX, "patch", hex, err)) < 0) {
			json_object_put(e);
			return e ? k : sb_error_set(err, -ENOMEM, "out of memory");
		}
		json_object_object_add(e, "path", json_object_new_string(abs ? abs : *p));
		json_object_object_add(e, "sha256", json_object_new_string(hex));
		json_object_array_add(patches, e);
	}
	for (char *const *e = req->env; e && *e; e++) {
		_cleanup_free_ char *name = strndup(*e, strcspn(*e, "="));
		if (!name)
			return sb_error_set(err, -ENOMEM, "out of memory");
		json_object_object_add(env, name, json_object_new_string(*e + strlen(name) + 1));
	}
	json_object_object_add(config, "base",
			       json_object_new_string(req->config ? req->config : kbuild_config_base_name(req->base)));
	if (req->config && file_sha256(req->config, CONFIG_MAX, "--config", hex, err) == 0)
		json_object_object_add(config, "base_sha256", json_object_new_string(hex));
	if ((k = file_sha256(config_path, CONFIG_MAX, "the config", hex, err)) < 0)
		return k;
	json_object_object_add(config, "sha256", json_object_new_string(hex));
	if (times_json(times, &r->times) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	json_object_object_add(o, "schema", json_object_new_string("snapbench.kbuild/1"));
	json_object_object_add(o, "key", json_object_new_string(r->key));
	json_object_object_add(o, "arch", json_object_new_string(r->arch));
	if (r->ccache) {
		struct json_object *c = json_object_new_object();
		json_object_object_add(c, "hits", json_object_new_int64((int64_t)r->ccache_hits));
		json_object_object_add(c, "misses", json_object_new_int64((int64_t)r->ccache_misses));
		json_object_object_add(o, "ccache", c);
	}
	if (req->selftests) {
		struct json_object *st = json_object_new_array();
		for (char *const *s = req->selftests; st && *s; s++)
			json_object_array_add(st, json_object_new_string(*s));
		json_object_object_add(o, "selftests", st);
	}
	json_object_object_add(o, "built", json_object_new_string(now));
	json_object_object_add(o, "release", json_object_new_string(r->release));
	json_object_object_add(o, "tree", json_object_get(tree));
	json_object_object_add(o, "patches", json_object_get(patches));
	json_object_object_add(o, "config", json_object_get(config));
	json_object_object_add(o, "environment", json_object_get(env));
	json_object_object_add(o, "incremental_from", str_or_null(r->incremental_from));
	json_object_object_add(o, "jobs", json_object_new_int((int)jobs));
	json_object_object_add(o, "times_s", json_object_get(times));
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							     JSON_C_TO_STRING_NOSLASHESCAPE);
	_cleanup_free_ char *line = NULL;
	if (!text || asprintf(&line, "%s\n", text) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	return atomic_file_write(path, line, strlen(line), 0644, err);
}

/* The result's paths under dir/out for release. */
static int result_paths(struct kbuild_result *r, const char *dir, const char *release)
{
	free(r->release);
	r->release = strdup(release);
	if (!r->release || asprintf(&r->image, "%s/out/boot/vmlinuz-%s", dir, release) < 0 ||
	    asprintf(&r->modules, "%s/out/lib/modules/%s", dir, release) < 0 ||
	    asprintf(&r->vmlinux, "%s/out/boot/vmlinux-%s", dir, release) < 0 ||
	    asprintf(&r->config, "%s/out/boot/config-%s", dir, release) < 0 ||
	    asprintf(&r->record, "%s/out/kbuild.json", dir) < 0)
		return -ENOMEM;
	return 0;
}

/* r->selftests when the result has the KVM selftests directory. */
static int selftests_path(struct kbuild_result *r)
{
	_cleanup_free_ char *p = path_join(r->modules, KBUILD_SELFTESTS_DIR);

	if (!p)
		return -ENOMEM;
	if (access(p, X_OK) == 0)
		r->selftests = TAKE_PTR(p);
	return 0;
}

/* A finished build of key in dir: its record (naming key) and image are there. 1 with r filled, 0 when not. */
static int cached_result(const char *dir, const char *key, struct kbuild_result *r)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	_cleanup_json_ struct json_object *o = NULL;
	struct json_object *times;
	const char *release;
	size_t len;

	if (asprintf(&path, "%s/out/kbuild.json", dir) < 0)
		return -ENOMEM;
	if (read_regular_file(path, 1 << 20, &text, &len, NULL) < 0 ||
	    json_parse_text(text, len, 16, JSON_PARSE_STRICT, &o, NULL) < 0 || !(release = json_lookup_string(o, "release")) ||
	    strchr(release, '/') || !json_lookup_string(o, "key") || strcmp(json_lookup_string(o, "key"), key))
		return 0;
	if (result_paths(r, dir, release) < 0)
		return -ENOMEM;
	if (access(r->image, R_OK) < 0 || access(r->modules, R_OK) < 0)
		return 0;
	if (selftests_path(r) < 0)
		return -ENOMEM;
	r->tree_id = json_lookup_string(json_lookup(o, "tree"), "id") ? strdup(json_lookup_string(json_lookup(o, "tree"), "id"))
								       : NULL;
	r->incremental_from = json_lookup_string(o, "incremental_from") ? strdup(json_lookup_string(o, "incremental_from"))
									 : NULL;
	if ((times = json_lookup(o, "times_s"))) {
		r->times.copy_s = json_object_get_double(json_lookup(times, "copy"));
		r->times.patch_s = json_object_get_double(json_lookup(times, "patch"));
		r->times.config_s = json_object_get_double(json_lookup(times, "config"));
		r->times.make_s = json_object_get_double(json_lookup(times, "make"));
		r->times.install_s = json_object_get_double(json_lookup(times, "install"));
		r->times.identify_s = json_object_get_double(json_lookup(times, "identify"));
		r->times.total_s = json_object_get_double(json_lookup(times, "total"));
	}
	return 1;
}

/* ---- the build ---- */

static double secs_since(uint64_t t0)
{
	return (double)(mono_ns() - t0) / 1e9;
}

/* An flock on dir (opened), shared or exclusive; says so when it has to wait for another build. */
static int lock_dir(struct build *b, const char *dir, int how, const char *key, struct sb_error *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return sb_error_set(err, -errno, "%s: %s", dir, strerror(errno));
	if (flock(fd, how | LOCK_NB) < 0) {
		char what[128];
		snprintf(what, sizeof(what), "waiting for another snapbench kernel build of %s", key);
		step(b, what);
		while (flock(fd, how) < 0)
			if (errno != EINTR) {
				int r = -errno;
				close(fd);
				return sb_error_set(err, r, "%s: cannot lock: %s", dir, strerror(-r));
			}
	}
	return fd;
}

static int open_log(struct build *b, const char *path, struct sb_error *err)
{
	char now[32];
	time_t t = time(NULL);
	struct tm tm;

	b->log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (b->log_fd < 0)
		return sb_error_set(err, -errno, "build log %s: %s", path, strerror(errno));
	b->log_path = path;
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	logf_(b, "\n=== snapbench kernel build of %s at %s\n", b->req->tree, now);
	return 0;
}

/* err's message as bad input (-EINVAL), with what before it and the fix after it. */
static int input_error(struct sb_error *err, const char *what, const char *fix)
{
	char said[SB_ERROR_MAX];

	snprintf(said, sizeof(said), "%s", err ? err->msg : "");
	return sb_error_set(err, -EINVAL, "%s %s; %s", what, said, fix);
}

#define PATCH_FIX "give a patch file (git format-patch or diff -u output, applied with patch -p1)"

/*
 * A patch: a regular file (never a FIFO, a device or a directory, which
 * would hang or fill the build) of at most PATCH_MAX bytes that names a
 * file to change. -EINVAL naming it and what it is.
 */
static int check_patch(const char *patch, struct sb_error *err)
{
	_cleanup_strv_free_ char **files = NULL;
	_cleanup_free_ char *text = NULL;
	size_t len;

	if (read_regular_file(patch, PATCH_MAX, &text, &len, err) < 0 || patch_files(patch, &files, err) < 0)
		return input_error(err, "patch", PATCH_FIX);
	if (!files)
		return sb_error_set(err, -EINVAL, "patch %s: %s: it would build a \"patched\" kernel identical to the base; "
				    PATCH_FIX, patch, len == 0 ? "empty" : "names no file to change (no '--- a/FILE' and "
				    "'+++ b/FILE' lines)");
	return 0;
}

/*
 * The inputs every entry point checks before any work: the tree, the
 * patches and the config are regular files that can be read and are not
 * empty or too large. Any of them wrong is -EINVAL (bad input) naming it.
 */
static int check_inputs(const struct kbuild_request *req, char **version, struct sb_error *err)
{
	_cleanup_free_ char *config = NULL;
	int r = kbuild_tree_check(req->tree, version, err);

	if (r < 0 || (r = kbuild_arch_check(req->arch ? req->arch : kbuild_arch_default(), req->tree, err)) < 0 ||
	    (req->ccache && (r = kbuild_ccache_check(err)) < 0))
		return r;
	for (char *const *p = req->patches; p && *p; p++)
		if ((r = check_patch(*p, err)) < 0)
			return r;
	if (req->config && read_regular_file(req->config, CONFIG_MAX, &config, NULL, err) < 0)
		return input_error(err, "--config", "give a kernel .config to start from (or leave --config out for the "
				   "tree's defconfig)");
	return 0;
}

/* Copy (from the user's tree, or from base_tree's objects) and patch into tree. */
static int prepare_tree(struct build *b, const char *tree, const char *from, struct kbuild_times *t, struct sb_error *err)
{
	_cleanup_free_ char *what = NULL, *check = NULL;
	uint64_t t0;
	int r;

	if (asprintf(&what, "copying %s to %s", from, tree) < 0 || asprintf(&check, "%s.patch-check", tree) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	/* the state goes first: an attempt killed anywhere from here on finds none and starts over */
	if ((r = state_write(b, STATE_NONE, err)) < 0 || (r = rm_rf(b, tree, err)) < 0 ||
	    (r = precheck_patches(b, from, check, err)) < 0)
		return r;
	if (mkdir_p(tree, 0755) < 0)
		return sb_error_set(err, -errno, "%s: %s", tree, strerror(errno));
	step(b, what);
	t0 = mono_ns();
	if ((r = kbuild_tree_copy(from, tree, b->log_fd, err)) < 0)
		return r;
	/* a base's built tree: its tools' dependency files name it, or make rebuilds objtool and so everything */
	if (strcmp(from, b->req->tree)) {
		unsigned n = 0;
		if ((r = kbuild_relocate_tools(tree, from, &n, err)) < 0)
			return r;
		logf_(b, "renamed %s to this tree in %u dependency files of its tools\n", from, n);
	}
	t->copy_s = secs_since(t0);
	t0 = mono_ns();
	if ((r = apply_patches(b, tree, err)) < 0)
		return r;
	t->patch_s = secs_since(t0);
	return state_write(b, STATE_PATCHED, err);
}

static unsigned jobs_of(const struct kbuild_request *req)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return req->jobs ? req->jobs : n > 0 ? (unsigned)n : 1;
}

static struct kbuild_selftests_io selftests_io(struct build *b)
{
	return (struct kbuild_selftests_io){ .log_fd = b->log_fd, .on_line = on_line, .userdata = b, .env = b->req->env };
}

/*
 * What req->selftests name, checked against what the tree offers for the
 * arch (make asked in CACHE/KEY/selftests-list), before any copy or make.
 */
static int check_selftests(struct build *b, const char *dir, struct sb_error *err)
{
	_cleanup_free_ char *scratch = path_join(dir, "selftests-list");
	struct kbuild_selftests_io io = selftests_io(b);
	int k;

	if (!scratch)
		return sb_error_set(err, -ENOMEM, "out of memory");
	step(b, "listing the tree's KVM selftests for the architecture");
	k = kbuild_selftests_offered(b->arch, b->req->tree, scratch, &io, &b->selftests_offered, err);
	rm_rf(b, scratch, NULL);
	if (k < 0)
		return k;
	return kbuild_selftests_check(b->arch, b->req->tree, b->req->selftests, b->selftests_offered, err);
}

/* The KVM selftests asked for, built statically in the tree, into MODULES/kselftests/kvm. */
static int build_selftests(struct build *b, const char *tree, const char *mods, struct sb_error *err)
{
	_cleanup_free_ char *dest = path_join(mods, KBUILD_SELFTESTS_DIR);
	struct kbuild_selftests_io io = selftests_io(b);

	if (!dest)
		return sb_error_set(err, -ENOMEM, "out of memory");
	step(b, "building the KVM selftests (static)");
	tail_clear(b);
	return kbuild_selftests_build(b->arch, tree, b->req->selftests, b->selftests_offered, jobs_of(b->req), dest, &io,
				      err);
}

/* make IMAGE modules (bzImage, Image), modules_install into out.partial with the boot files, then out. */
static int make_and_install(struct build *b, const char *dir, const char *tree, struct kbuild_result *r,
			    const char *version, const char *tree_note, uint64_t t_start, struct sb_error *err)
{
	_cleanup_free_ char *stage = path_join(dir, "out.partial"), *out = path_join(dir, "out"), *boot = NULL,
			    *mods = NULL, *jobs = NULL, *mod_path = NULL, *what = NULL, *release = NULL, *record = NULL;
	uint64_t t0 = mono_ns();
	int k;

	if (!stage || !out || asprintf(&jobs, "-j%u", jobs_of(b->req)) < 0 ||
	    asprintf(&what, "make %s %s modules", jobs, b->arch->image_target) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	{
		char *t[] = { jobs, (char *)b->arch->image_target, "modules", NULL };
		struct kbuild_ccache_stats before = {}, after = {};
		if (b->ccache_dir && (k = kbuild_ccache_stats(b->ccache_dir, &before, err)) < 0)
			return k;
		if ((k = make_in(b, tree, what, t, err)) < 0)
			return k;
		/* what ccache answered during this make: the directory is shared with other builds, so a difference */
		if (b->ccache_dir && (k = kbuild_ccache_stats(b->ccache_dir, &after, err)) < 0)
			return k;
		r->ccache = b->ccache_dir;
		r->ccache_hits = after.hits - before.hits;
		r->ccache_misses = after.misses - before.misses;
	}
	r->times.make_s = secs_since(t0);
	t0 = mono_ns();
	if ((k = kernel_release(b, tree, &release, err)) < 0)
		return k;
	if ((k = rm_rf(b, stage, err)) < 0)
		return k;
	if (asprintf(&mod_path, "INSTALL_MOD_PATH=%s", stage) < 0 || !(boot = path_join(stage, "boot")) ||
	    asprintf(&mods, "%s/lib/modules/%s", stage, release) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	{
		/* stripped of their DWARF like a distribution's modules; their .BTF section stays */
		char *t[] = { mod_path, "INSTALL_MOD_STRIP=1", "modules_install", NULL };
		if ((k = make_in(b, tree, "make modules_install", t, err)) < 0)
			return k;
	}
	drop_tree_links(mods);
	if (b->req->selftests && (k = build_selftests(b, tree, mods, err)) < 0)
		return k;
	step(b, "installing the image, config, System.map and vmlinux");
	if ((k = install_boot(b->arch, tree, boot, release, err)) < 0)
		return k;
	if (result_paths(r, dir, release) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r->times.install_s = secs_since(t0);
	r->times.total_s = secs_since(t_start);
	{
		_cleanup_free_ char *staged_config = NULL;
		if (asprintf(&staged_config, "%s/config-%s", boot, release) < 0 || !(record = path_join(stage, "kbuild.json")))
			return sb_error_set(err, -ENOMEM, "out of memory");
		if ((k = record_write(b->req, r, record, staged_config, version, tree_note, jobs_of(b->req), err)) < 0)
			return k;
	}
	if ((k = rm_rf(b, out, err)) < 0)
		return k;
	if (rename(stage, out) < 0)
		return sb_error_set(err, -errno, "%s: cannot move into place: %s", out, strerror(errno));
	return state_write(b, STATE_BUILT, err);
}

static void build_done(struct build *b)
{
	tail_clear(b);
	strv_free(b->selftests_offered);
	b->selftests_offered = NULL;
	strv_free(b->env);
	b->env = NULL;
	free(b->ccache_dir);
	b->ccache_dir = NULL;
	if (b->log_fd >= 0)
		close(b->log_fd);
	b->log_fd = -1;
}

/*
 * Whether base_dir finished its build: its own state says so; or, for an
 * entry an earlier snapbench built (no CACHE/KEY/state), its tree's
 * .snapbench-state says "built" and is no older than its out/kbuild.json,
 * which names the key. A base is an unpatched build, whose tree is a copy
 * of the user's tree, never of another entry's; and that state was written
 * after its result was in place (a state file a copy brought keeps its
 * older time). The objects of a 30-minute build stay of use.
 */
static bool base_built(const char *base_dir, const char *base_key)
{
	_cleanup_free_ char *state = path_join(base_dir, STATE_FILE), *legacy = path_join(base_dir, "tree/.snapbench-state"),
			    *record = path_join(base_dir, "out/kbuild.json"), *text = NULL;
	struct kbuild_result r = {};
	struct stat s, l, rec;
	int k;

	if (state_read(base_dir, base_key, NULL) == STATE_BUILT)
		return true;
	if (!state || !legacy || !record || lstat(state, &s) == 0 || lstat(legacy, &l) < 0 || stat(record, &rec) < 0 ||
	    !S_ISREG(l.st_mode) || l.st_mtim.tv_sec < rec.st_mtim.tv_sec ||
	    (l.st_mtim.tv_sec == rec.st_mtim.tv_sec && l.st_mtim.tv_nsec < rec.st_mtim.tv_nsec) ||
	    read_regular_file(legacy, 64, &text, NULL, NULL) < 0 || strcmp(text, "built\n"))
		return false;
	k = cached_result(base_dir, base_key, &r);
	kbuild_result_done(&r);
	return k > 0;
}

/* The base key's tree, when it is a finished unpatched build a patched one can start from (locked shared), or NULL. */
static char *base_objects(struct build *b, const char *base_dir, const char *base_key, int *lock_fd, struct sb_error *err)
{
	_cleanup_free_ char *tree = path_join(base_dir, "tree");
	struct stat st;
	int fd;

	*lock_fd = -1;
	if (!tree || stat(base_dir, &st) < 0 || !base_built(base_dir, base_key))
		return NULL;
	/* shared: a rebuild of the base key must not change the tree while it is copied */
	fd = lock_dir(b, base_dir, LOCK_SH, base_key, err);
	if (fd < 0)
		return NULL;
	if (!base_built(base_dir, base_key)) {
		close(fd);
		return NULL;
	}
	*lock_fd = fd;
	return TAKE_PTR(tree);
}

/* Where a build lives in the cache: its key (and its unpatched base's), directory, scratch tree and log. */
struct build_paths {
	char *key, *base_key, *dir, *base_dir, *tree, *log;
};

static void build_paths_done(struct build_paths *p)
{
	free(p->key);
	free(p->base_key);
	free(p->dir);
	free(p->base_dir);
	free(p->tree);
	free(p->log);
}

/* The build's place in the cache, created; r gets its key, directory and log. */
static int build_paths_make(const struct kbuild_request *req, const char *tree_id, struct build_paths *p,
			    struct kbuild_result *r, struct sb_error *err)
{
	int k = kbuild_key(req, tree_id, &p->key, &p->base_key, err);

	if (k < 0)
		return k;
	if (!(p->dir = path_join(req->cache, p->key)) || !(p->base_dir = path_join(req->cache, p->base_key)) ||
	    !(p->tree = path_join(p->dir, "tree")) || !(p->log = path_join(p->dir, "build.log")) ||
	    !(r->key = strdup(p->key)) || !(r->dir = strdup(p->dir)) || !(r->log = strdup(p->log)))
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (mkdir_p(p->dir, 0755) < 0) /* bad input (--cache), never a program missing for an ENOENT */
		return sb_error_set(err, -EINVAL, "kernel build cache %s: %s; give a writable one (--cache DIR or "
				    "$SNAPBENCH_KBUILD_CACHE)", req->cache, strerror(errno));
	return 0;
}

/*
 * The scratch tree, copied and patched (a patched build from its unpatched
 * base's objects when the cache has them) or an earlier attempt's resumed,
 * then configured.
 */
static int build_tree_ready(struct build *b, const struct build_paths *p, bool patched, struct kbuild_result *r,
			    struct sb_error *err)
{
	const struct kbuild_request *req = b->req;
	uint64_t t0;
	int k;

	if (req->rebuild || state_read(p->dir, p->key, &r->incremental_from) < STATE_PATCHED) {
		_cleanup_close_ int base_lock = -1;
		_cleanup_free_ char *from = patched && !req->rebuild ? base_objects(b, p->base_dir, p->base_key, &base_lock, err)
								      : NULL;
		free(r->incremental_from);
		r->incremental_from = NULL;
		if (from && !(r->incremental_from = strdup(p->base_key)))
			return sb_error_set(err, -ENOMEM, "out of memory");
		b->from_key = r->incremental_from;
		if ((k = prepare_tree(b, p->tree, from ? from : req->tree, &r->times, err)) < 0)
			return k;
	} else {
		/* the objects came from where the state says */
		b->from_key = r->incremental_from;
		step(b, "resuming in the scratch tree of an earlier attempt");
	}
	if (state_read(p->dir, p->key, NULL) < STATE_CONFIGURED) {
		t0 = mono_ns();
		if ((k = configure(b, p->tree, err)) < 0 || (k = state_write(b, STATE_CONFIGURED, err)) < 0)
			return k;
		r->times.config_s = secs_since(t0);
	}
	return 0;
}

int kbuild_build(const struct kbuild_request *req, const struct kbuild_progress *progress, struct kbuild_result *ret,
		 struct sb_error *err)
{
	struct build b = { .req = req, .arch = req->arch ? req->arch : kbuild_arch_default(), .progress = progress,
			   .log_fd = -1 };
	_cleanup_free_ char *version = NULL;
	_cleanup_close_ int lock_fd = -1;
	struct build_paths p = {};
	struct kbuild_tree_id tid = {};
	struct kbuild_result r = { .arch = b.arch->name };
	bool patched = req->patches && req->patches[0];
	uint64_t t_start = mono_ns(), t0;
	int k;

	if ((k = check_inputs(req, &version, err)) < 0)
		return k;
	step(&b, "identifying the tree (its git commit, or a hash of its files)");
	t0 = mono_ns();
	if ((k = kbuild_tree_identify(req->tree, &tid, err)) < 0)
		return k;
	r.times.identify_s = secs_since(t0);
	if ((k = build_paths_make(req, tid.id, &p, &r, err)) < 0)
		goto out;
	b.dir = p.dir;
	b.key = p.key;
	if ((k = lock_fd = lock_dir(&b, p.dir, LOCK_EX, p.key, err)) < 0)
		goto out;
	if (!req->rebuild && (k = cached_result(p.dir, p.key, &r)) != 0) {
		if (k > 0) {
			r.cached = true;
			*ret = r;
			r = (struct kbuild_result){};
			k = 0;
		} else {
			k = sb_error_set(err, k, "out of memory");
		}
		goto out;
	}
	if ((k = open_log(&b, p.log, err)) < 0)
		goto out;
	if (req->selftests && (k = check_selftests(&b, p.dir, err)) < 0)
		goto out;
	if (req->ccache && (k = ccache_setup(&b, err)) < 0)
		goto out;
	r.tree_id = TAKE_PTR(tid.id);
	if ((k = build_tree_ready(&b, &p, patched, &r, err)) < 0)
		goto out;
	if ((k = make_and_install(&b, p.dir, p.tree, &r, version, tid.note, t_start, err)) < 0)
		goto out;
	if (selftests_path(&r) < 0) {
		k = sb_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (patched && !req->keep_tree) {
		step(&b, "removing the patched scratch tree");
		if ((k = rm_rf(&b, p.tree, err)) < 0)
			goto out;
	}
	logf_(&b, "\n=== built %s in %.1f s\n", r.image, secs_since(t_start));
	*ret = r;
	r = (struct kbuild_result){};
	k = 0;
out:
	build_done(&b);
	build_paths_done(&p);
	kbuild_tree_id_done(&tid);
	kbuild_result_done(&r);
	return k;
}

/*
 * Removes what interrupted configs left in the cache: CACHE/config-XXXXXX
 * entries (scratch directories, the command's own files) that no running
 * config holds locked. Each is locked before it goes, so one in use stays.
 */
static void sweep_config_scratch(const char *cache)
{
	DIR *d = opendir(cache);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		_cleanup_free_ char *path = NULL;
		_cleanup_close_ int fd = -1;
		struct stat st;

		if (strncmp(de->d_name, "config-", 7) || strlen(de->d_name) != 13 || !(path = path_join(cache, de->d_name)))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		if (fd < 0 || fstat(fd, &st) < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			rm_rf(NULL, path, NULL);
		else if (S_ISREG(st.st_mode))
			unlink(path);
	}
	closedir(d);
}

/* A scratch directory CACHE/config-XXXXXX, locked (its fd in *lock_fd) while it is used, so no sweep takes it. */
static int config_scratch(const char *cache, char **ret, int *lock_fd, struct sb_error *err)
{
	_cleanup_free_ char *dir = NULL;
	struct stat a, b;
	int fd;

	if (asprintf(&dir, "%s/config-XXXXXX", cache) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (!mkdtemp(dir))
		return sb_error_set(err, -EINVAL, "kernel build cache %s: %s; give a writable one (--cache DIR or "
				    "$SNAPBENCH_KBUILD_CACHE)", cache, strerror(errno));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX) < 0 || fstat(fd, &a) < 0 || stat(dir, &b) < 0 || a.st_ino != b.st_ino) {
		/* a sweep took it between its mkdtemp and its lock */
		if (fd >= 0)
			close(fd);
		return sb_error_set(err, -EAGAIN, "%s: removed while it was being made (another config swept it); try again",
				    dir);
	}
	*lock_fd = fd;
	*ret = TAKE_PTR(dir);
	return 0;
}

int kbuild_config(const struct kbuild_request *req, const struct kbuild_progress *progress, const char *out_path,
		  struct sb_error *err)
{
	struct build b = { .req = req, .arch = req->arch ? req->arch : kbuild_arch_default(), .progress = progress,
			   .log_fd = -1 };
	_cleanup_free_ char *scratch = NULL, *tree = NULL, *log = NULL, *dotconfig = NULL, *text = NULL;
	_cleanup_close_ int lock_fd = -1;
	struct kbuild_times t = {};
	int k;

	if ((k = check_inputs(req, NULL, err)) < 0)
		return k;
	if (mkdir_p(req->cache, 0755) < 0)
		return sb_error_set(err, -EINVAL, "kernel build cache %s: %s; give a writable one (--cache DIR or "
				    "$SNAPBENCH_KBUILD_CACHE)", req->cache, strerror(errno));
	sweep_config_scratch(req->cache);
	if ((k = config_scratch(req->cache, &scratch, &lock_fd, err)) < 0)
		return k;
	if (!(tree = path_join(scratch, "tree")) || !(log = path_join(scratch, "build.log")) ||
	    !(dotconfig = path_join(tree, ".config"))) {
		rmdir(scratch);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	if ((k = open_log(&b, log, err)) < 0) {
		rmdir(scratch);
		return k;
	}
	k = prepare_tree(&b, tree, req->tree, &t, err);
	if (k >= 0)
		k = configure(&b, tree, err);
	if (k >= 0 && (k = read_full_file(dotconfig, CONFIG_MAX, &text, NULL, err)) >= 0)
		k = atomic_file_write(out_path, text, strlen(text), 0644, err);
	build_done(&b);
	/* the tree goes either way; a failure's log stays for the message that names it */
	if (rm_rf(NULL, tree, NULL) == 0 && k >= 0) {
		_cleanup_free_ char *base = NULL;
		if (asprintf(&base, "%s-minimal.config", tree) > 0)
			unlink(base);
		unlink(log);
		rmdir(scratch);
	}
	return k;
}

int kbuild_export(const struct kbuild_result *r, const char *dir, struct sb_error *err)
{
	_cleanup_free_ char *boot = NULL, *lib = NULL;
	char *argv[] = { "cp", "-a", "--", NULL, NULL, (char *)dir, NULL };
	struct stat st;
	int k;

	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode) || rmdir(dir) < 0) /* rmdir: only an empty directory is taken */
			return sb_error_set(err, -EEXIST, "--output %s: exists and is not an empty directory; give a new one",
					    dir);
	}
	if (mkdir_p(dir, 0755) < 0)
		return sb_error_set(err, -errno, "--output %s: %s", dir, strerror(errno));
	if (asprintf(&boot, "%s/out/boot", r->dir) < 0 || asprintf(&lib, "%s/out/lib", r->dir) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	argv[3] = boot;
	argv[4] = lib;
	k = kbuild_spawn(&(struct kbuild_spawn){ .argv = argv, .log_fd = -1 }, err);
	if (k > 0)
		return sb_error_set(err, -EIO, "copying the build to --output %s failed (cp exited with %d)", dir, k);
	return k;
}
