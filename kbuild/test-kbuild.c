// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kbuild/ without a kernel build: the fragment's merge and check, kernel
 * trees recognised and identified (content hash, git commit), cache keys,
 * the config bases, and the build's steps on a tiny tree whose Makefile has
 * the kernel's targets (defconfig, allnoconfig, olddefconfig, bzImage, modules, kernelrelease,
 * modules_install) and builds in milliseconds: the layout of a result, a
 * cache hit, a patched build from the unpatched build's objects (only the
 * patched file rebuilt), patches applied to the copy and never to the
 * tree, failures that name their patch, option or step and log, and a
 * patched build killed mid-copy whose next attempt still applies the patch.
 * tests/kbuild/ runs the config steps on a real kernel tree.
 *
 * Usage: test-kbuild [CASE]  (all cases without one)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "build.h"
#include "ccache.h"
#include "check.h"
#include "clock.h"
#include "config-base.h"
#include "env.h"
#include "fileio.h"
#include "fragment.h"
#include "macro.h"
#include "mkdir-p.h"
#include "selftests.h"
#include "spawn.h"
#include "strv.h"
#include "test-tmp.h"
#include "tree.h"

#define RELEASE "6.99.0-fake"

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	CHECK(mkdir_p(path, 0755) == 0);
	*slash = '/';
	f = fopen(path, "we");
	CHECK_MSG(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	CHECK(fclose(f) == 0);
}

static char *read_file(const char *dir, const char *name)
{
	char path[4096], *text = NULL;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (read_full_file(path, 1 << 24, &text, NULL, NULL) < 0)
		return NULL;
	return text;
}

static bool exists(const char *dir, const char *name)
{
	_cleanup_free_ char *path = NULL;

	CHECK(asprintf(&path, "%s/%s", dir, name) > 0);
	return access(path, F_OK) == 0;
}

/* ---- the fragment ---- */

static void test_fragment(void)
{
	_cleanup_free_ char *merged = NULL, *text = kbuild_fragment_text(NULL), *config = NULL;
	struct sb_error err = {};
	const struct kbuild_option *o;
	size_t n;

	o = kbuild_fragment(&n);
	CHECK(n > 20 && text);
	for (size_t i = 0; i < n; i++) {
		char line[128];
		snprintf(line, sizeof(line), "CONFIG_%s=%c", o[i].name, o[i].value);
		CHECK_MSG(!strstr(text, line) == !kbuild_option_for(&o[i], NULL), "the x86_64 fragment text and %s", line);
		CHECK(o[i].why && *o[i].why);
	}
	/* the base's lines for the fragment's options go, others stay, the fragment's come once */
	CHECK(kbuild_fragment_merge(NULL, "CONFIG_A=y\n# CONFIG_KVM is not set\nCONFIG_PVH=n\nCONFIG_KVM_AMD=y\n# comment\n",
				    &merged, &err) == 0);
	CHECK(strstr(merged, "CONFIG_A=y\n") && strstr(merged, "# comment\n"));
	CHECK(!strstr(merged, "# CONFIG_KVM is not set") && !strstr(merged, "CONFIG_PVH=n") &&
	      !strstr(merged, "CONFIG_KVM_AMD=y"));
	CHECK(strstr(merged, "\nCONFIG_KVM=m\n") && strstr(merged, "\nCONFIG_KVM_AMD=m\n"));
	CHECK(strstr(merged, "CONFIG_PVH=y") && !strstr(strstr(merged, "CONFIG_PVH=y") + 1, "CONFIG_PVH=y"));
	/* check-only options are not written: they cannot be set by hand */
	CHECK(!strstr(merged, "CONFIG_TRACEPOINTS=") && !strstr(merged, "CONFIG_MEMFD_CREATE="));

	/* the merged fragment plus the selected options passes; y satisfies m */
	free(merged);
	merged = NULL;
	CHECK(kbuild_fragment_merge(NULL, "", &merged, &err) == 0);
	CHECK(asprintf(&config, "%sCONFIG_TRACEPOINTS=y\nCONFIG_MEMFD_CREATE=y\n", merged) > 0);
	CHECK_MSG(kbuild_fragment_check(NULL, config, "C", &err) == 0, "%s", err.msg);
	*strstr(config, "CONFIG_KVM=m") = '#'; /* "#ONFIG_KVM=m": the tree does not know it */
	char *amd = strstr(config, "CONFIG_KVM_AMD=m");
	amd[strlen("CONFIG_KVM_AMD=")] = 'y';
	CHECK_MSG(kbuild_fragment_check(NULL, config, "C", &err) == -ENOTSUP, "%s", err.msg);
	CHECK_MSG(strstr(err.msg, "CONFIG_KVM: the tree has no such option (dropped or renamed)") &&
		  !strstr(err.msg, "CONFIG_KVM_AMD") && strstr(err.msg, "1 option of"), "%s", err.msg);
	/* an option olddefconfig switched off: named with its hint; a check-only one the tree lacks */
	free(config);
	config = NULL;
	CHECK(asprintf(&config, "%sCONFIG_MEMFD_CREATE=y\n", merged) > 0);
	char *btf = strstr(config, "CONFIG_DEBUG_INFO_BTF=y\n");
	CHECK(btf);
	*btf = '\0';
	_cleanup_free_ char *off = NULL;
	CHECK(asprintf(&off, "%s# CONFIG_DEBUG_INFO_BTF is not set\n%s", config,
		       btf + strlen("CONFIG_DEBUG_INFO_BTF=y\n")) > 0);
	CHECK(kbuild_fragment_check(NULL, off, "C", &err) == -ENOTSUP);
	CHECK_MSG(strstr(err.msg, "C: 2 options") &&
		  strstr(err.msg, "CONFIG_DEBUG_INFO_BTF is not set after make olddefconfig") &&
		  strstr(err.msg, "package dwarves") && strstr(err.msg, "CONFIG_TRACEPOINTS: the tree has no such option"),
		  "%s", err.msg);
}

/* ---- trees ---- */

static const char fake_makefile[] =
	"VERSION = 6\n"
	"PATCHLEVEL = 99\n"
	"SUBLEVEL = 0\n"
	"EXTRAVERSION = -fake\n"
	"RELEASE := " RELEASE "\n"
	"OBJS := obj/a.o obj/b.o\n"
	"defconfig:\n"
	"\tprintf 'CONFIG_LOCALVERSION=\"\"\\nCONFIG_PVH=n\\n' > .config\n"
	/* the minimal base: what KCONFIG_ALLCONFIG gives, and a mark of allnoconfig */
	"allnoconfig:\n"
	"\ttest -f \"$(KCONFIG_ALLCONFIG)\"\n"
	"\t{ echo '# CONFIG_ALLNO is not set'; cat \"$(KCONFIG_ALLCONFIG)\"; } > .config\n"
	/* selected.config: the options others select (the fragment's and base's check-only ones) */
	"olddefconfig:\n"
	"\ttest -f .config\n"
	"\tif [ -e drop-pvh ]; then sed -i '/CONFIG_PVH/d' .config; fi\n"
	"\tif [ -e drop-smp ]; then sed -i '/CONFIG_SMP/d' .config; fi\n"
	"\tcat selected.config >> .config\n"
	"\techo '$(ARCH) $(CROSS_COMPILE)' > made-for\n"
	"obj/%.o: src/%.c\n"
	"\t@mkdir -p obj\n"
	"\tcp $< $@\n"
	"\techo $@ >> rebuilt.list\n"
	"bzImage: $(OBJS)\n"
	"\t@if [ -e src/fail ]; then echo 'src/fail: error: this tree does not build' >&2; exit 2; fi\n"
	"\tmkdir -p arch/x86/boot\n"
	"\tcat $(OBJS) > vmlinux\n"
	"\techo 'KCFLAGS=$(KCFLAGS) ARCH=$(ARCH)' >> vmlinux\n"
	"\tcp vmlinux arch/x86/boot/bzImage\n"
	/* a host tool's dependency file names the tree absolutely, as objtool's do */
	"\tmkdir -p tools/objtool && test -f tools/objtool/.x.o.cmd || "
	"echo 'cmd_$(CURDIR)/tools/objtool/x.o := gcc $(CURDIR)/tools/objtool/x.c' > tools/objtool/.x.o.cmd\n"
	"\tcp vmlinux System.map\n"
	/* riscv's boot image, made with the cross compiler's prefix */
	"Image: $(OBJS)\n"
	"\tmkdir -p arch/riscv/boot\n"
	"\t$(CROSS_COMPILE)gcc > arch/riscv/boot/Image\n"
	"\tcat $(OBJS) > vmlinux\n"
	"\tcp vmlinux System.map\n"
	"modules: obj/m.o\n"
	/* one real compile, through $(CC): with --ccache, ccache's */
	"\t$(CC) -x c -c src/m.c -o m-cc.o\n"
	"\tcp obj/m.o m.ko\n"
	"kernelrelease:\n"
	"\t@echo $(RELEASE)\n"
	"modules_install:\n"
	"\tmkdir -p $(INSTALL_MOD_PATH)/lib/modules/$(RELEASE)/kernel\n"
	"\tcp m.ko $(INSTALL_MOD_PATH)/lib/modules/$(RELEASE)/kernel/\n"
	"\tln -sfn $(CURDIR) $(INSTALL_MOD_PATH)/lib/modules/$(RELEASE)/build\n"
	"headers:\n"
	"\tmkdir -p usr/include && echo '$(ARCH)' > usr/include/made-for\n"
	".PHONY: headers defconfig allnoconfig olddefconfig bzImage Image modules kernelrelease modules_install\n";

/* The check-only options of the fragment and of the minimal base, as olddefconfig would select them. */
static void append_selected(char *buf, size_t len, const struct kbuild_option *o, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (o[i].check_only)
			snprintf(buf + strlen(buf), len - strlen(buf), "CONFIG_%s=%c\n", o[i].name, o[i].value);
}

static const char *fake_tree(const char *name)
{
	const char *dir = test_tmpdir(name);
	char selected[4096] = "";
	size_t n;
	const struct kbuild_option *o = kbuild_fragment(&n);

	append_selected(selected, sizeof(selected), o, n);
	o = kbuild_config_base_options(&n);
	append_selected(selected, sizeof(selected), o, n);

	write_file(dir, "Makefile", fake_makefile);
	write_file(dir, "Kconfig", "mainmenu \"fake\"\n");
	write_file(dir, "arch/x86/Kconfig", "config X86\n\tdef_bool y\n");
	write_file(dir, "src/a.c", "int a = 1;\n");
	write_file(dir, "src/b.c", "int b = 1;\n");
	write_file(dir, "src/m.c", "int m = 1;\n");
	write_file(dir, "selected.config", selected);
	return dir;
}

static void test_tree(void)
{
	const char *t = fake_tree("kbuild-tree"), *empty = test_tmpdir("kbuild-notree"), *copy = test_tmpdir("kbuild-copy");
	_cleanup_free_ char *version = NULL, *h1 = NULL, *h2 = NULL, *h3 = NULL, *h4 = NULL, *h5 = NULL;
	struct sb_error err = {};
	char path[4096];

	CHECK(kbuild_tree_check(t, &version, &err) == 0);
	CHECK_MSG(!strcmp(version, "6.99.0-fake"), "%s", version);
	CHECK(kbuild_tree_check(empty, NULL, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, empty) && strstr(err.msg, "not a Linux source tree"), "%s", err.msg);
	snprintf(path, sizeof(path), "%s/nonexistent", empty);
	CHECK(kbuild_tree_check(path, NULL, &err) == -ENOTDIR && strstr(err.msg, "no such directory"));
	write_file(empty, "Makefile", "VERSION = 6\nPATCHLEVEL = 1\n");
	write_file(empty, "Kconfig", "");
	CHECK(kbuild_tree_check(empty, NULL, &err) == -EINVAL && strstr(err.msg, "has no arch/x86"));

	/* the content hash: the same for a copy, another after a change of content or of the x bit; .git ignored */
	CHECK(kbuild_tree_hash(t, &h1, &err) == 0 && !strncmp(h1, "sha256:", 7));
	CHECK_MSG(kbuild_tree_copy(t, copy, -1, &err) == 0, "%s", err.msg);
	CHECK(kbuild_tree_hash(copy, &h2, &err) == 0);
	CHECK_MSG(!strcmp(h1, h2), "%s != %s", h1, h2);
	write_file(copy, ".git/HEAD", "ref: refs/heads/main\n");
	CHECK(kbuild_tree_hash(copy, &h3, &err) == 0 && !strcmp(h1, h3));
	snprintf(path, sizeof(path), "%s/src/a.c", copy);
	CHECK(chmod(path, 0755) == 0);
	CHECK(kbuild_tree_hash(copy, &h4, &err) == 0 && strcmp(h1, h4));
	CHECK(chmod(path, 0644) == 0);
	write_file(copy, "src/a.c", "int a = 2;\n");
	CHECK(kbuild_tree_hash(copy, &h5, &err) == 0 && strcmp(h1, h5) && strcmp(h4, h5));
	/* the copy leaves out the tree's .git */
	write_file(t, ".git/HEAD", "x\n");
	const char *copy2 = test_tmpdir("kbuild-copy2");
	CHECK(kbuild_tree_copy(t, copy2, -1, &err) == 0 && !exists(copy2, ".git") && exists(copy2, "src/b.c"));
}

static void git(const char *dir, char *const *args)
{
	_cleanup_strv_free_ char **argv = NULL;
	struct sb_error err = {};

	CHECK(strv_push(&argv, "git") == 0 && strv_push(&argv, "-C") == 0 && strv_push(&argv, dir) == 0);
	for (char *const *a = args; *a; a++)
		CHECK(strv_push(&argv, *a) == 0);
	char *env[] = { "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
			"GIT_CONFIG_NOSYSTEM=1", "HOME=/nonexistent", NULL };
	int r = kbuild_spawn(&(struct kbuild_spawn){ .argv = argv, .log_fd = 2, .env_add = env }, &err);
	CHECK_MSG(r == 0, "git %s: %d %s", args[0], r, err.msg);
}

static void test_git(void)
{
	const char *t = fake_tree("kbuild-git");
	struct kbuild_tree_id id = {};
	struct sb_error err = {};

	git(t, (char *[]){ "init", "-q", NULL });
	git(t, (char *[]){ "add", ".", NULL });
	git(t, (char *[]){ "commit", "-q", "-m", "fake", NULL });
	CHECK_MSG(kbuild_tree_identify(t, &id, &err) == 0, "%s", err.msg);
	CHECK_MSG(!strncmp(id.id, "git:", 4) && strlen(id.id) == 44 && !id.note, "%s", id.id);
	kbuild_tree_id_done(&id);
	/* a change the commit does not hold: the files decide */
	write_file(t, "src/new.c", "int n;\n");
	CHECK(kbuild_tree_identify(t, &id, &err) == 0);
	CHECK_MSG(!strncmp(id.id, "sha256:", 7) && id.note && strstr(id.note, "changes or untracked files"), "%s", id.id);
	kbuild_tree_id_done(&id);
}

/* ---- keys ---- */

static void test_key(void)
{
	const char *d = test_tmpdir("kbuild-key");
	char p1[4096], p2[4096], cfg[4096];
	char *pa[] = { p1, NULL }, *pab[] = { p1, p2, NULL }, *pba[] = { p2, p1, NULL };
	struct kbuild_request r = { .tree = d };
	struct sb_error err = {};
	char *k0, *b0, *k1, *b1, *k2, *k3, *k4, *k5, *k6;

	write_file(d, "one.patch", "one\n");
	write_file(d, "two.patch", "two\n");
	write_file(d, "my.config", "CONFIG_A=y\n");
	snprintf(p1, sizeof(p1), "%s/one.patch", d);
	snprintf(p2, sizeof(p2), "%s/two.patch", d);
	snprintf(cfg, sizeof(cfg), "%s/my.config", d);
	CHECK(kbuild_key(&r, "sha256:aa", &k0, &b0, &err) == 0);
	CHECK(strlen(k0) == 20 && !strcmp(k0, b0));
	r.patches = pa;
	CHECK(kbuild_key(&r, "sha256:aa", &k1, &b1, &err) == 0);
	CHECK(strcmp(k1, k0) && !strcmp(b1, k0)); /* the unpatched build is the base */
	r.patches = pab;
	CHECK(kbuild_key(&r, "sha256:aa", &k2, NULL, &err) == 0);
	r.patches = pba;
	CHECK(kbuild_key(&r, "sha256:aa", &k3, NULL, &err) == 0);
	CHECK(strcmp(k2, k3) && strcmp(k2, k1)); /* order matters */
	write_file(d, "one.patch", "one changed\n");
	r.patches = pa;
	CHECK(kbuild_key(&r, "sha256:aa", &k4, NULL, &err) == 0 && strcmp(k4, k1));
	r.patches = NULL;
	r.config = cfg;
	CHECK(kbuild_key(&r, "sha256:aa", &k5, NULL, &err) == 0 && strcmp(k5, k0));
	r.config = NULL;
	CHECK(kbuild_key(&r, "git:0123", &k6, NULL, &err) == 0 && strcmp(k6, k0));
	/* the environment make gets: two builds differing only in KCFLAGS are two keys, and two bases */
	char *kc0[] = { "KCFLAGS=-O0", NULL }, *kc2[] = { "KCFLAGS=-O2", NULL }, *kc2nl[] = { "KCFLAGS=-O2\nenv 3 A=b", NULL };
	char *ke0, *kb0, *ke2, *kb2, *ke3;
	r.env = kc0;
	CHECK(kbuild_key(&r, "sha256:aa", &ke0, &kb0, &err) == 0);
	r.env = kc2;
	CHECK(kbuild_key(&r, "sha256:aa", &ke2, &kb2, &err) == 0);
	r.env = kc2nl;
	CHECK(kbuild_key(&r, "sha256:aa", &ke3, NULL, &err) == 0);
	CHECK(strcmp(ke0, k0) && strcmp(ke2, k0) && strcmp(ke0, ke2) && strcmp(ke3, ke2) && !strcmp(ke0, kb0) &&
	      !strcmp(ke2, kb2));
	r.env = NULL;
	free(ke0);
	free(kb0);
	free(ke2);
	free(kb2);
	free(ke3);
	/* the same inputs: the same key */
	free(b1);
	CHECK(kbuild_key(&r, "sha256:aa", &b1, NULL, &err) == 0 && !strcmp(b1, k0));
	free(k0);
	k0 = NULL;
	r.patches = (char *[]){ "/nonexistent.patch", NULL };
	CHECK(kbuild_key(&r, "sha256:aa", &k0, NULL, &err) == -ENOENT && strstr(err.msg, "/nonexistent.patch"));
	CHECK(!k0); /* a failure leaves no key behind */
	free(b0);
	free(k1);
	free(b1);
	free(k2);
	free(k3);
	free(k4);
	free(k5);
	free(k6);
}

static void test_env(void)
{
	char *env[] = { "PATH=/bin", "KBUILD_OUTPUT=/elsewhere", "LLVM=1", "MAKEFLAGS=KCFLAGS=-O0", "KCFLAGS=-O0",
			"KCFLAGS=-O3", "ARCH=arm64", "LOCALVERSION=", "KCFLAGSX=1", "CC=clang", NULL };
	_cleanup_strv_free_ char **v = NULL;

	/* the listed ones, the first of a name's entries, sorted; what would move or bend the build is left out */
	CHECK(kbuild_env_from(env, &v) == 0);
	CHECK_MSG(strv_length(v) == 3 && !strcmp(v[0], "KCFLAGS=-O0") && !strcmp(v[1], "LLVM=1") &&
			  !strcmp(v[2], "LOCALVERSION="),
		  "%s %s", v && v[0] ? v[0] : "-", v && v[1] ? v[1] : "-");
	strv_free(v);
	v = NULL;
	CHECK(kbuild_env_from((char *[]){ "PATH=/bin", NULL }, &v) == 0 && !v);
}

/* ---- the build, on the fake tree ---- */

/* Keys of the cache that hold a scratch tree. */
static unsigned count_trees(const char *cache)
{
	DIR *d = opendir(cache);
	struct dirent *de;
	unsigned n = 0;

	CHECK(d);
	while ((de = readdir(d))) {
		char tree[512];
		snprintf(tree, sizeof(tree), "%s/tree", de->d_name);
		if (de->d_name[0] != '.' && exists(cache, tree))
			n++;
	}
	closedir(d);
	return n;
}

/* req with KCFLAGS given: another key than base's, make gets it, the record names it */
static void build_with_kcflags(struct kbuild_request *req, const struct kbuild_result *base)
{
	_cleanup_free_ char *text = NULL, *record = NULL;
	char *kcflags[] = { "KCFLAGS=-O0", NULL };
	struct kbuild_result r = {};
	struct sb_error err = {};

	req->env = kcflags;
	CHECK_MSG(kbuild_build(req, NULL, &r, &err) == 0, "%s", err.msg);
	CHECK(!r.cached && strcmp(r.key, base->key));
	CHECK((text = read_file(r.dir, "out/boot/vmlinuz-" RELEASE)) && strstr(text, "KCFLAGS=-O0 ARCH=x86_64\n"));
	CHECK((record = read_file(r.dir, "out/kbuild.json")) && strstr(record, "\"environment\": {") &&
	      strstr(record, "\"KCFLAGS\": \"-O0\""));
	kbuild_result_done(&r);
	req->env = NULL;
}

/* kbuild_config() of req into out: what an interrupted config left goes (a scratch tree, the command's stdout
 * file); one in use stays */
static void config_sweeps(const struct kbuild_request *req, const char *out)
{
	struct sb_error err = {};
	char inuse[4096];
	int fd;

	write_file(req->cache, "config-AAAAAA/tree/Makefile", "x\n");
	write_file(req->cache, "config-CCCCCC", "CONFIG_X=y\n");
	write_file(req->cache, "config-BBBBBB/build.log", "in use\n");
	snprintf(inuse, sizeof(inuse), "%s/config-BBBBBB", req->cache);
	CHECK((fd = open(inuse, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0 && flock(fd, LOCK_EX) == 0);
	CHECK_MSG(kbuild_config(req, NULL, out, &err) == 0, "%s", err.msg);
	CHECK(!exists(req->cache, "config-AAAAAA") && !exists(req->cache, "config-CCCCCC") &&
	      exists(req->cache, "config-BBBBBB/build.log"));
	close(fd);
}

static const char patch_b[] = "--- a/src/b.c\n+++ b/src/b.c\n@@ -1 +1 @@\n-int b = 1;\n+int b = 2;\n";
static const char patch_bad[] = "--- a/src/a.c\n+++ b/src/a.c\n@@ -1 +1 @@\n-int a = 7;\n+int a = 8;\n";
static const char patch_fail[] = "--- /dev/null\n+++ b/src/fail\n@@ -0,0 +1 @@\n+fail\n";

static void test_build(void)
{
	const char *t = fake_tree("kbuild-build"), *cache = test_tmpdir("kbuild-cache"), *d = test_tmpdir("kbuild-patches");
	char pb[4096], pbad[4096], pfail[4096], outdir[4096];
	struct kbuild_request req = { .tree = t, .cache = cache, .jobs = 2 };
	struct kbuild_result base = {}, again = {}, patched = {};
	struct sb_error err = {};
	_cleanup_free_ char *text = NULL, *rebuilt = NULL, *record = NULL;
	char *const one[] = { pb, NULL };

	write_file(d, "b.patch", patch_b);
	write_file(d, "bad.patch", patch_bad);
	write_file(d, "fail.patch", patch_fail);
	snprintf(pb, sizeof(pb), "%s/b.patch", d);
	snprintf(pbad, sizeof(pbad), "%s/bad.patch", d);
	snprintf(pfail, sizeof(pfail), "%s/fail.patch", d);

	/* the unpatched build: the result's layout, the fragment in its config, its tree kept; make never sees
	 * the caller's environment, only req.env */
	CHECK(setenv("KCFLAGS", "-Dleaked", 1) == 0 && setenv("ARCH", "arm64", 1) == 0);
	CHECK_MSG(kbuild_build(&req, NULL, &base, &err) == 0, "%s", err.msg);
	CHECK(unsetenv("KCFLAGS") == 0 && unsetenv("ARCH") == 0);
	CHECK((text = read_file(base.dir, "out/boot/vmlinuz-" RELEASE)) && strstr(text, "KCFLAGS= ARCH=x86_64\n"));
	free(text);
	text = NULL;
	CHECK(!base.cached && !base.incremental_from && !strcmp(base.release, RELEASE));
	CHECK(access(base.image, R_OK) == 0 && access(base.vmlinux, R_OK) == 0 && access(base.config, R_OK) == 0);
	CHECK(strstr(base.image, "/out/boot/vmlinuz-" RELEASE) && strstr(base.modules, "/out/lib/modules/" RELEASE));
	CHECK(exists(base.modules, "kernel/m.ko") && !exists(base.modules, "build"));
	CHECK((text = read_file(base.dir, "out/boot/config-" RELEASE)) && strstr(text, "CONFIG_PVH=y") &&
	      strstr(text, "CONFIG_KVM_AMD=m"));
	/* the default base is the minimal one: allnoconfig given its options; make told the arch */
	CHECK(strstr(text, "# CONFIG_ALLNO is not set") && strstr(text, "CONFIG_SMP=y") && strstr(text, "CONFIG_PRINTK=y"));
	free(text);
	CHECK((text = read_file(base.dir, "tree/made-for")) && !strcmp(text, "x86_64 \n"));
	CHECK((record = read_file(base.dir, "out/kbuild.json")) && strstr(record, "\"snapbench.kbuild/1\"") &&
	      strstr(record, "\"base\": \"minimal\"") &&
	      strstr(record, base.key) && strstr(record, "\"incremental_from\": null"));
	CHECK(exists(base.dir, "tree/obj/a.o") && exists(base.dir, "build.log"));

	/* the same inputs: a cache hit */
	CHECK(kbuild_build(&req, NULL, &again, &err) == 0);
	CHECK(again.cached && !strcmp(again.key, base.key) && !strcmp(again.image, base.image));
	kbuild_result_done(&again);

	build_with_kcflags(&req, &base);

	/* patched: from the base's objects, only the patched file rebuilt, the user's tree untouched */
	req.patches = one;
	req.keep_tree = true;
	CHECK_MSG(kbuild_build(&req, NULL, &patched, &err) == 0, "%s", err.msg);
	CHECK(!patched.cached && patched.incremental_from && !strcmp(patched.incremental_from, base.key));
	CHECK(strcmp(patched.key, base.key));
	free(text);
	CHECK((text = read_file(patched.dir, "out/boot/vmlinuz-" RELEASE)) && strstr(text, "int b = 2;"));
	CHECK((rebuilt = read_file(patched.dir, "tree/rebuilt.list")));
	/* the base's build made a.o, b.o and m.o in whatever order make -j took them; the patched one b.o alone */
	{
		size_t line = strlen("obj/a.o\n");
		char first[64] = "";

		if (strlen(rebuilt) == 4 * line)
			snprintf(first, sizeof(first), "%.*s", (int)(3 * line), rebuilt);
		CHECK_MSG(strstr(first, "obj/a.o\n") && strstr(first, "obj/b.o\n") && strstr(first, "obj/m.o\n") &&
				  !strcmp(rebuilt + 3 * line, "obj/b.o\n"),
			  "rebuilt: %s", rebuilt);
	}
	free(text);
	CHECK((text = read_file(t, "src/b.c")) && !strcmp(text, "int b = 1;\n"));
	/* the tools' dependency files name the patched tree, not the base's, and keep their time */
	{
		_cleanup_free_ char *cmd = read_file(patched.dir, "tree/tools/objtool/.x.o.cmd"), *want = NULL;
		char bp[4096], pp[4096];
		struct stat sb, sp;
		CHECK(asprintf(&want, "cmd_%s/tree/tools/objtool/x.o", patched.dir) > 0);
		CHECK_MSG(cmd && strstr(cmd, want) && !strstr(cmd, base.dir), "%s", cmd ? cmd : "no .x.o.cmd");
		snprintf(bp, sizeof(bp), "%s/tree/tools/objtool/.x.o.cmd", base.dir);
		snprintf(pp, sizeof(pp), "%s/tree/tools/objtool/.x.o.cmd", patched.dir);
		CHECK(stat(bp, &sb) == 0 && stat(pp, &sp) == 0 && sb.st_mtim.tv_sec == sp.st_mtim.tv_sec &&
		      sb.st_mtim.tv_nsec == sp.st_mtim.tv_nsec);
	}
	/* its record names the patch and the base */
	free(record);
	CHECK((record = read_file(patched.dir, "out/kbuild.json")) && strstr(record, "b.patch") &&
	      strstr(record, base.key));

	/* --output: a copy of boot/ and lib/ */
	snprintf(outdir, sizeof(outdir), "%s/exported", d);
	CHECK_MSG(kbuild_export(&patched, outdir, &err) == 0, "%s", err.msg);
	CHECK(exists(outdir, "boot/vmlinuz-" RELEASE) && exists(outdir, "lib/modules/" RELEASE "/kernel/m.ko"));
	CHECK(kbuild_export(&patched, outdir, &err) == -EEXIST && strstr(err.msg, "not an empty directory"));
	kbuild_result_done(&patched);

	/* a patch that does not apply: named, in a copy, the tree untouched */
	char *const bad[] = { pbad, NULL };
	req.patches = bad;
	CHECK(kbuild_build(&req, NULL, &patched, &err) == -EBADMSG);
	CHECK_MSG(strstr(err.msg, pbad) && strstr(err.msg, "does not apply to kernel tree") && strstr(err.msg, "FAILED"),
		  "%s", err.msg);
	free(text);
	CHECK((text = read_file(t, "src/a.c")) && !strcmp(text, "int a = 1;\n"));
	/* found on a copy of the one file it names, before any tree was copied: the base's, the KCFLAGS one's and the
	 * kept patched one */
	CHECK(count_trees(cache) == 3);

	/* make failing: the step, its status, its last line and the log */
	char *const fail[] = { pfail, NULL };
	req.patches = fail;
	CHECK(kbuild_build(&req, NULL, &patched, &err) == -EIO);
	CHECK_MSG(strstr(err.msg, "step 'make -j2 bzImage modules' failed: make exited with status 2") &&
		  strstr(err.msg, "build.log") && strstr(err.msg, "src/fail: error: this tree does not build"), "%s",
		  err.msg);
	CHECK(!exists(t, "src/fail"));

	/* an option the tree dropped: olddefconfig here removes CONFIG_PVH */
	write_file(t, "drop-pvh", "");
	req.patches = NULL;
	CHECK(kbuild_build(&req, NULL, &patched, &err) == -ENOTSUP);
	CHECK_MSG(strstr(err.msg, "CONFIG_PVH: the tree has no such option (dropped or renamed)"), "%s", err.msg);

	/* the config step alone, with a base config of the user's */
	char cfg[4096], out[4096];
	snprintf(cfg, sizeof(cfg), "%s/base.config", d);
	snprintf(out, sizeof(out), "%s/out.config", d);
	write_file(d, "base.config", "CONFIG_MINE=y\n");
	char drop[4096];
	snprintf(drop, sizeof(drop), "%s/drop-pvh", t);
	CHECK(unlink(drop) == 0);
	req.config = cfg;
	config_sweeps(&req, out);
	free(text);
	CHECK((text = read_file(d, "out.config")) && strstr(text, "CONFIG_MINE=y") && strstr(text, "CONFIG_KVM=m"));
	kbuild_result_done(&base);
}

/* ---- the config base ---- */

static void test_config_base(void)
{
	const char *t = fake_tree("kbuild-base"), *cache = test_tmpdir("kbuild-base-cache");
	_cleanup_free_ char *text = kbuild_config_base_text(NULL), *described = kbuild_config_base_describe(NULL), *config = NULL,
			    *km = NULL, *kd = NULL;
	struct kbuild_request req = { .tree = t, .cache = cache, .jobs = 1 };
	struct kbuild_result r = {};
	enum kbuild_config_base b;
	struct sb_error err = {};
	const struct kbuild_option *o;
	size_t n;

	CHECK(kbuild_config_base_parse("minimal", &b, &err) == 0 && b == KBUILD_BASE_MINIMAL);
	CHECK(kbuild_config_base_parse("defconfig", &b, &err) == 0 && b == KBUILD_BASE_DEFCONFIG);
	CHECK(kbuild_config_base_parse("tiny", &b, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "'tiny'") && strstr(err.msg, "minimal") && strstr(err.msg, "defconfig"), "%s", err.msg);

	/* allnoconfig's input: the base's options and the fragment's that are written, none of the checked ones */
	for (int set = 0; set < 2; set++) {
		o = set ? kbuild_fragment(&n) : kbuild_config_base_options(&n);
		for (size_t i = 0; i < n; i++) {
			char line[128];
			if (!kbuild_option_for(&o[i], NULL))
				continue;
			snprintf(line, sizeof(line), "\nCONFIG_%s=%c\n", o[i].name, o[i].value);
			CHECK_MSG(!strstr(text, line) == o[i].check_only, "%s in the allnoconfig input: %d", line,
				  !!strstr(text, line));
			CHECK(strstr(described, line + 1) || o[i].check_only || set);
			CHECK(o[i].why && *o[i].why);
		}
	}

	/* an option newer trees split out: checked only where the tree knows it */
	{
		const struct kbuild_option known[] = { { NULL, "SPLIT_OUT", 'y', false, "why", NULL, NULL, true } };
		CHECK(kbuild_options_check(known, 1, NULL, "S", "CONFIG_OTHER=y\n", "C", &err) == 0);
		CHECK(kbuild_options_check(known, 1, NULL, "S", "# CONFIG_SPLIT_OUT is not set\n", "C", &err) == -ENOTSUP);
		CHECK_MSG(strstr(err.msg, "CONFIG_SPLIT_OUT is not set after make olddefconfig"), "%s", err.msg);
	}

	/* the base is part of the key */
	CHECK(kbuild_key(&req, "sha256:aa", &km, NULL, &err) == 0);
	req.base = KBUILD_BASE_DEFCONFIG;
	CHECK(kbuild_key(&req, "sha256:aa", &kd, NULL, &err) == 0 && strcmp(km, kd));

	/* defconfig: the tree's defconfig, no base check (olddefconfig may drop CONFIG_SMP there) */
	write_file(t, "drop-smp", "");
	CHECK_MSG(kbuild_build(&req, NULL, &r, &err) == 0, "%s", err.msg);
	CHECK((config = read_file(r.dir, "out/boot/config-" RELEASE)) && strstr(config, "CONFIG_LOCALVERSION") &&
	      !strstr(config, "CONFIG_ALLNO") && !strstr(config, "CONFIG_SMP"));
	free(config);
	CHECK((config = read_file(r.dir, "out/kbuild.json")) && strstr(config, "\"base\": \"defconfig\""));
	kbuild_result_done(&r);

	/* the config step alone with the minimal base: its scratch directory goes, allnoconfig's input too */
	char out[4096], drop[4096];
	snprintf(out, sizeof(out), "%s/minimal.config", cache);
	snprintf(drop, sizeof(drop), "%s/drop-smp", t);
	CHECK(unlink(drop) == 0);
	req.base = KBUILD_BASE_MINIMAL;
	CHECK_MSG(kbuild_config(&req, NULL, out, &err) == 0, "%s", err.msg);
	{
		DIR *dir = opendir(cache);
		struct dirent *de;
		CHECK(dir);
		while ((de = readdir(dir)))
			CHECK_MSG(strncmp(de->d_name, "config-", 7), "%s/%s is left", cache, de->d_name);
		closedir(dir);
	}
	write_file(t, "drop-smp", "");

	/* minimal: a base option olddefconfig left off is named as the base's */
	CHECK(kbuild_build(&req, NULL, &r, &err) == -ENOTSUP);
	CHECK_MSG(strstr(err.msg, "of the minimal config base did not end up as asked") &&
		  strstr(err.msg, "CONFIG_SMP: the tree has no such option"), "%s", err.msg);
}

/* ---- the architecture ---- */

static void test_arch(void)
{
	const char *t = fake_tree("kbuild-arch"), *work = test_tmpdir("kbuild-arch-work");
	char cache[4096], bin[4096], empty[4096];
	struct kbuild_request req = { .tree = t, .cache = cache, .jobs = 1 };
	_cleanup_free_ char *path = strdup(getenv("PATH")), *text = NULL, *fakepath = NULL, *kx = NULL, *kr = NULL;
	struct kbuild_result r = {};
	struct sb_error err = {};
	const struct kbuild_arch *rv;

	snprintf(cache, sizeof(cache), "%s/cache", work);
	snprintf(bin, sizeof(bin), "%s/bin", work);
	snprintf(empty, sizeof(empty), "%s/empty", work);
	CHECK(mkdir(bin, 0755) == 0 && mkdir(empty, 0755) == 0);
	CHECK(kbuild_arch_find("riscv64", &rv, &err) == 0 && !strcmp(rv->make_arch, "riscv"));
	CHECK(kbuild_arch_find("arm64", &rv, &err) == -EINVAL && strstr(err.msg, "'arm64'") && strstr(err.msg, "riscv64"));
	CHECK(kbuild_arch_find("riscv64", &rv, &err) == 0);
	req.arch = rv;

	/* the arch is in the key; riscv's fragment has no AMD KVM and has virtio-mmio */
	CHECK(kbuild_key(&req, "sha256:aa", &kr, NULL, &err) == 0);
	req.arch = NULL;
	CHECK(kbuild_key(&req, "sha256:aa", &kx, NULL, &err) == 0 && strcmp(kx, kr));
	req.arch = rv;
	free(text);
	CHECK((text = kbuild_fragment_text("riscv64")) && strstr(text, "CONFIG_VIRTIO_MMIO=y") &&
	      !strstr(text, "CONFIG_KVM_AMD") && !strstr(text, "CONFIG_PVH") && strstr(text, "CONFIG_KVM=m"));
	free(text);
	CHECK((text = kbuild_config_base_text("riscv64")) && strstr(text, "CONFIG_MMU=y") && !strstr(text, "CONFIG_ACPI=y"));
	free(text);
	text = NULL;

	/* a tree without the arch's Kconfig; then no cross compiler on PATH: named with its package */
	CHECK(kbuild_build(&req, NULL, &r, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "no arch/riscv/Kconfig") && strstr(err.msg, "riscv64"), "%s", err.msg);
	write_file(t, "arch/riscv/Kconfig", "config RISCV\n\tdef_bool y\n");
	CHECK(setenv("PATH", empty, 1) == 0);
	CHECK(kbuild_build(&req, NULL, &r, &err) == -ENOENT);
	CHECK(setenv("PATH", path, 1) == 0);
	CHECK_MSG(strstr(err.msg, "riscv64-linux-gnu-gcc, which is not installed") &&
		  strstr(err.msg, "package gcc-riscv64-linux-gnu"), "%s", err.msg);

	/* a cross compiler (a script here): make gets ARCH=riscv CROSS_COMPILE=, the Image is the image */
	write_file(bin, "riscv64-linux-gnu-gcc", "#!/bin/sh\necho riscv64-image\n");
	char gcc[4200];
	snprintf(gcc, sizeof(gcc), "%s/riscv64-linux-gnu-gcc", bin);
	CHECK(chmod(gcc, 0755) == 0);
	CHECK(asprintf(&fakepath, "%s:%s", bin, path) > 0 && setenv("PATH", fakepath, 1) == 0);
	CHECK_MSG(kbuild_build(&req, NULL, &r, &err) == 0, "%s", err.msg);
	CHECK(setenv("PATH", path, 1) == 0);
	CHECK(!strcmp(r.arch, "riscv64"));
	CHECK((text = read_file(r.dir, "out/boot/vmlinuz-" RELEASE)) && !strcmp(text, "riscv64-image\n"));
	free(text);
	CHECK((text = read_file(r.dir, "tree/made-for")) && !strcmp(text, "riscv riscv64-linux-gnu-\n"));
	free(text);
	CHECK((text = read_file(r.dir, "out/kbuild.json")) && strstr(text, "\"arch\": \"riscv64\""));
	free(text);
	CHECK((text = read_file(r.dir, "out/boot/config-" RELEASE)) && strstr(text, "CONFIG_VIRTIO_MMIO=y") &&
	      strstr(text, "CONFIG_MMU=y") && !strstr(text, "CONFIG_KVM_AMD"));
	kbuild_result_done(&r);
}

static unsigned count_entries(const char *dir);

/* ---- inputs that are not what they should be: refused at once, named ---- */

/* kbuild_build() of req fails with code, its message holding want and every one of also (NULL-terminated). */
static void refused(const struct kbuild_request *req, int code, const char *want)
{
	struct kbuild_result r = {};
	struct sb_error err = {};
	int k = kbuild_build(req, NULL, &r, &err);

	CHECK_MSG(k == code && strstr(err.msg, want), "%d (want %d): %s (want \"%s\")", k, code, err.msg, want);
}

static void test_inputs(void)
{
	const char *t = fake_tree("kbuild-inputs"), *cache = test_tmpdir("kbuild-inputs-cache"),
		   *d = test_tmpdir("kbuild-inputs-files"), *bad = test_tmpdir("kbuild-inputs-badtree");
	char fifo[1024], empty[1024], garbage[1024], big[1024], good[1024], makefile[1024], want[2048];
	struct kbuild_request req = { .tree = t, .cache = cache, .jobs = 1 };
	char *patches[] = { NULL, NULL };
	int fd;

	snprintf(fifo, sizeof(fifo), "%s/fifo", d);
	snprintf(empty, sizeof(empty), "%s/empty.patch", d);
	snprintf(garbage, sizeof(garbage), "%s/garbage.patch", d);
	snprintf(big, sizeof(big), "%s/big.patch", d);
	snprintf(good, sizeof(good), "%s/good.patch", d);
	CHECK(mkfifo(fifo, 0600) == 0);
	write_file(d, "empty.patch", "");
	write_file(d, "garbage.patch", "Only a commit message.\n");
	write_file(d, "good.patch", patch_b);
	/* one byte over the 64 MiB a patch may have, sparse */
	CHECK((fd = open(big, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) >= 0 && ftruncate(fd, (64 << 20) + 1) == 0);
	close(fd);
	req.patches = patches;

	/* a FIFO with no writer, /dev/zero, a directory, too large, empty, no diff: each -EINVAL, named, at once */
	patches[0] = fifo;
	snprintf(want, sizeof(want), "patch %s: is a FIFO, not a regular file", fifo);
	refused(&req, -EINVAL, want);
	patches[0] = "/dev/zero";
	refused(&req, -EINVAL, "patch /dev/zero: is a character device, not a regular file");
	patches[0] = (char *)d;
	refused(&req, -EINVAL, "is a directory, not a regular file");
	patches[0] = big;
	refused(&req, -EINVAL, "larger than 67108864 bytes");
	patches[0] = empty;
	snprintf(want, sizeof(want), "patch %s: empty: it would build a \"patched\" kernel identical to the base", empty);
	refused(&req, -EINVAL, want);
	patches[0] = garbage;
	refused(&req, -EINVAL, "names no file to change");
	patches[0] = "/nonexistent.patch";
	refused(&req, -EINVAL, "patch /nonexistent.patch: cannot open: No such file or directory");
	/* the config the same way */
	patches[0] = good;
	req.config = fifo;
	snprintf(want, sizeof(want), "--config %s: is a FIFO, not a regular file", fifo);
	refused(&req, -EINVAL, want);
	req.config = NULL;
	CHECK(kbuild_config(&(struct kbuild_request){ .tree = t, .cache = cache, .patches = patches, .config = fifo },
			    NULL, empty, &(struct sb_error){}) == -EINVAL);
	/* nothing was started: no entry, no scratch directory */
	CHECK(count_entries(cache) == 0);

	/* a tree whose Makefile is a FIFO; one whose PATCHLEVEL is empty */
	req.patches = NULL;
	req.tree = bad;
	write_file(bad, "Kconfig", "");
	write_file(bad, "arch/x86/Kconfig", "");
	snprintf(makefile, sizeof(makefile), "%s/Makefile", bad);
	CHECK(mkfifo(makefile, 0600) == 0);
	refused(&req, -EINVAL, "its Makefile cannot be read");
	refused(&req, -EINVAL, "is a FIFO, not a regular file");
	CHECK(unlink(makefile) == 0);
	write_file(bad, "Makefile", "VERSION = 6\nPATCHLEVEL =\nSUBLEVEL = 0\n");
	refused(&req, -EINVAL, "no top Makefile with numeric VERSION and PATCHLEVEL");

	/* a tree the user cannot read: a permission error, named so (as nobody: root reads anything) */
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct sb_error err = {};
		int k;
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(77);
		k = kbuild_tree_check(t, NULL, &err);
		_exit(k == -EACCES && strstr(err.msg, "permission denied") && strstr(err.msg, t) ? 0 : 1);
	}
	int status;
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
	CHECK_MSG(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 77, "as nobody: %d", WEXITSTATUS(status));
	if (WEXITSTATUS(status) == 77)
		printf("the permission case needs root to become nobody: not run\n");
}

/* ---- KVM selftests ---- */

/* A selftests Makefile as the kernel's: per-arch lists, lib.mk's $(OUTPUT) prefix, the compiler's prefix. */
static const char selftests_makefile[] =
	"ARCH ?= x86\n"
	"ifeq ($(ARCH),riscv)\n"
	"TEST_GEN_PROGS = dirty_log_perf_test riscv/ebreak_test\n"
	"else\n"
	"TEST_GEN_PROGS = dirty_log_perf_test x86/only_x86 lib_test\n"
	"endif\n"
	"TEST_GEN_PROGS := $(patsubst %,$(OUTPUT)/%,$(TEST_GEN_PROGS))\n"
	"$(OUTPUT)/%: %.c\n"
	"\tmkdir -p $(dir $@)\n"
	"\t$(CROSS_COMPILE)gcc $(EXTRA_CFLAGS) -I../../../../usr/include $< -o $@\n";

static void test_selftests(void)
{
	const char *t = fake_tree("kbuild-selftests"), *cache = test_tmpdir("kbuild-selftests-cache");
	struct kbuild_request req = { .tree = t, .cache = cache, .jobs = 2 };
	struct kbuild_result r = {};
	struct sb_error err = {};
	_cleanup_strv_free_ char **names = NULL;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	char path[4096];

	/* the list's syntax */
	CHECK(kbuild_selftests_parse("dirty_log_perf_test,riscv/ebreak_test", &names, &err) == 0 && strv_length(names) == 2);
	strv_free(names);
	names = NULL;
	CHECK(kbuild_selftests_parse("a,,b", &names, &err) == -EINVAL && strstr(err.msg, "''"));
	CHECK(kbuild_selftests_parse("../x", &names, &err) == -EINVAL && strstr(err.msg, "'../x'"));
	CHECK(kbuild_selftests_parse("a,a", &names, &err) == -EINVAL && strstr(err.msg, "named twice"));
	CHECK(!names);

	write_file(t, "tools/testing/selftests/kvm/Makefile", selftests_makefile);
	write_file(t, "tools/testing/selftests/kvm/dirty_log_perf_test.c", "int main(void) { return 0; }\n");
	write_file(t, "tools/testing/selftests/kvm/x86/only_x86.c", "int main(void) { return 0; }\n");
	write_file(t, "tools/testing/selftests/kvm/riscv/ebreak_test.c", "int main(void) { return 0; }\n");
	write_file(t, "tools/testing/selftests/kvm/demand_paging_test.c", "int main(void) { return 0; }\n");

	/* one the tree does not have, one it has for another arch only: both named, before any copy */
	req.selftests = (char *[]){ "dirty_log_perf_test", "nope_test", "ebreak_test", NULL };
	CHECK(kbuild_build(&req, NULL, &r, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "offers no KVM selftest nope_test (no such program), ebreak_test (the tree has its "
				  "source, but not for this architecture) for x86_64") && !strstr(err.msg, "dirty_log"),
		  "%s", err.msg);
	CHECK(count_trees(cache) == 0);

	/* built statically with the kernel, installed with the modules; a name by its last component */
	req.selftests = (char *[]){ "dirty_log_perf_test", "only_x86", NULL };
	CHECK_MSG(kbuild_build(&req, NULL, &r, &err) == 0, "%s", err.msg);
	CHECK(r.selftests && strstr(r.selftests, "/out/lib/modules/" RELEASE "/kselftests/kvm"));
	snprintf(path, sizeof(path), "%s/only_x86", r.selftests);
	CHECK(access(path, X_OK) == 0);
	snprintf(path, sizeof(path), "%s/dirty_log_perf_test", r.selftests);
	CHECK(access(path, X_OK) == 0 && read_full_file(path, 64 << 20, &text, &len, NULL) == 0);
	/* static: no program interpreter (the dynamic loader's path) in it */
	CHECK(!memmem(text, len, "/lib64/ld-linux", 15));
	free(text);
	CHECK((text = read_file(r.dir, "out/kbuild.json")) && strstr(text, "\"selftests\": [") &&
	      strstr(text, "\"only_x86\""));
	kbuild_result_done(&r);
}

/* ---- ccache ---- */

static void test_ccache(void)
{
	const char *t = fake_tree("kbuild-ccache"), *work = test_tmpdir("kbuild-ccache-work");
	char cache[4096];
	struct kbuild_request req = { .tree = t, .cache = cache, .jobs = 1, .ccache = true };
	struct kbuild_result r = {};
	struct sb_error err = {};
	_cleanup_free_ char *dir = NULL, *text = NULL;

	snprintf(cache, sizeof(cache), "%s/kbuild", work);
	CHECK((dir = kbuild_ccache_dir(cache)) && !strcmp(dir + strlen(cache), "-ccache"));
	/* the first build: ccache stores the compile; the same again (--rebuild): ccache answers it */
	CHECK_MSG(kbuild_build(&req, NULL, &r, &err) == 0, "%s", err.msg);
	CHECK_MSG(r.ccache && r.ccache_hits == 0 && r.ccache_misses == 1, "%llu hits, %llu misses", r.ccache_hits,
		  r.ccache_misses);
	kbuild_result_done(&r);
	req.rebuild = true;
	CHECK_MSG(kbuild_build(&req, NULL, &r, &err) == 0, "%s", err.msg);
	CHECK_MSG(r.ccache && r.ccache_hits == 1 && r.ccache_misses == 0, "%llu hits, %llu misses", r.ccache_hits,
		  r.ccache_misses);
	CHECK(access(dir, X_OK) == 0);
	CHECK((text = read_file(r.dir, "out/kbuild.json")) && strstr(text, "\"ccache\": {") && strstr(text, "\"hits\": 1"));
	kbuild_result_done(&r);
}

/* ---- an attempt killed while it copies ---- */

/* Entries under dir, recursively (0 when it is not there). */
static unsigned count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char sub[4096];
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		n++;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR)
			n += count_entries(sub);
	}
	closedir(d);
	return n;
}

/* Whether dir/name is there with some content (cp creates a file before it writes it). */
static bool has_content(const char *dir, const char *name)
{
	_cleanup_free_ char *path = NULL;
	struct stat st;

	CHECK(asprintf(&path, "%s/%s", dir, name) > 0);
	return stat(path, &st) == 0 && st.st_size > 0;
}

/*
 * Starts the build of req in a child of its own process group and kills
 * the group (the build and its cp) with SIGKILL once the scratch tree holds
 * `at` entries, or once it holds the file `when` written (at 0), stopped first so
 * that the count at the kill is known.
 * Returns that count (the child's cp stopped mid-walk when it is below the
 * whole tree's).
 */
static unsigned kill_during_copy(const struct kbuild_request *req, const char *tree, unsigned at, const char *when)
{
	uint64_t deadline = mono_ns() + 120 * NSEC_PER_SEC;
	unsigned n = 0;
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		struct kbuild_result r = {};
		struct sb_error err = {};
		setpgid(0, 0);
		_exit(kbuild_build(req, NULL, &r, &err) == 0 ? 0 : 1);
	}
	setpgid(pid, pid);
	/* polled without sleeping: on a fast disk cp -a walks the tree in some milliseconds */
	while ((at ? (n = count_entries(tree)) < at : !has_content(tree, when)) && mono_ns() < deadline)
		if (waitpid(pid, &status, WNOHANG) == pid)
			CHECK_MSG(false, "the build ended (status %d) before its copy reached %u entries or %s", status, at,
				  when ? when : "-");
		else
			sched_yield();
	kill(-pid, SIGSTOP);
	n = count_entries(tree);
	kill(-pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status));
	return n;
}

/*
 * A base entry an earlier snapbench built (its state in tree/.snapbench-state, none beside the tree): a patched
 * build starts from its objects when that state was written after its record, not when the state is older (a
 * copy brought it).
 */
static void legacy_base(const struct kbuild_request *req, const struct kbuild_result *base)
{
	_cleanup_free_ char *state = NULL, *legacy = NULL;
	struct timespec past[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

	CHECK(asprintf(&state, "%s/state", base->dir) > 0 && asprintf(&legacy, "%s/tree/.snapbench-state", base->dir) > 0);
	CHECK(unlink(state) == 0);
	for (int older = 0; older < 2; older++) {
		struct kbuild_result r = {};
		struct sb_error err = {};
		char *rm[] = { "rm", "-rf", NULL, NULL };

		write_file(base->dir, "tree/.snapbench-state", "built\n");
		if (older)
			CHECK(utimensat(AT_FDCWD, legacy, past, 0) == 0);
		CHECK_MSG(kbuild_build(req, NULL, &r, &err) == 0, "%s", err.msg);
		CHECK_MSG(!r.cached && (older ? !r.incremental_from : r.incremental_from && !strcmp(r.incremental_from, base->key)),
			  "older %d: from %s", older, r.incremental_from ? r.incremental_from : "the tree");
		rm[2] = r.dir;
		CHECK(kbuild_spawn(&(struct kbuild_spawn){ .argv = rm, .log_fd = -1 }, &err) == 0);
		kbuild_result_done(&r);
	}
}

/*
 * A patched build that stopped after its config (its out/ gone, its state "configured KEY from BASE"): the next
 * attempt resumes, the patch not applied again, and its record still names the base its objects came from.
 */
static void resumed_from_base(struct kbuild_request *req, const struct kbuild_result *base)
{
	_cleanup_free_ char *state = NULL, *out = NULL, *text = NULL, *log = NULL;
	struct kbuild_result r = {};
	struct sb_error err = {};
	char *rm[] = { "rm", "-rf", NULL, NULL };

	req->keep_tree = true;
	CHECK_MSG(kbuild_build(req, NULL, &r, &err) == 0, "%s", err.msg);
	CHECK(asprintf(&state, "configured %s from %s\n", r.key, base->key) > 0 && asprintf(&out, "%s/out", r.dir) > 0);
	write_file(r.dir, "state", state);
	rm[2] = out;
	CHECK(kbuild_spawn(&(struct kbuild_spawn){ .argv = rm, .log_fd = -1 }, &err) == 0);
	kbuild_result_done(&r);
	CHECK_MSG(kbuild_build(req, NULL, &r, &err) == 0, "%s", err.msg);
	CHECK_MSG(!r.cached && r.incremental_from && !strcmp(r.incremental_from, base->key), "%s",
		  r.incremental_from ? r.incremental_from : "no base");
	CHECK((text = read_file(r.dir, "out/kbuild.json")) && strstr(text, base->key));
	CHECK((log = read_file(r.dir, "build.log")) && strstr(log, "resuming in the scratch tree of an earlier attempt"));
	rm[2] = r.dir;
	CHECK(kbuild_spawn(&(struct kbuild_spawn){ .argv = rm, .log_fd = -1 }, &err) == 0);
	kbuild_result_done(&r);
	req->keep_tree = false;
}

static void test_interrupted(void)
{
	const char *t = fake_tree("kbuild-kill"), *cache = test_tmpdir("kbuild-kill-cache"), *d = test_tmpdir("kbuild-kill-p");
	struct kbuild_request req = { .tree = t, .cache = cache, .jobs = 2 };
	struct kbuild_result base = {};
	struct sb_error err = {};
	char pb[4096], ptree[4096], *const one[] = { pb, NULL };
	unsigned total, mid = 0;

	/* a tree of some hundreds of files: cp -a walks it for long enough to be stopped anywhere in it */
	for (unsigned i = 0; i < 300; i++) {
		char name[64];
		snprintf(name, sizeof(name), "drivers/d%02u/f%04u.c", i % 10, i);
		write_file(t, name, "int f;\n");
	}
	write_file(d, "b.patch", patch_b);
	snprintf(pb, sizeof(pb), "%s/b.patch", d);
	CHECK_MSG(kbuild_build(&req, NULL, &base, &err) == 0, "%s", err.msg);
	/* a base tree from an earlier snapbench carries its state inside: the copy must not trust it either */
	write_file(base.dir, "tree/.snapbench-state", "built\n");
	snprintf(ptree, sizeof(ptree), "%s/tree", base.dir);
	total = count_entries(ptree);

	req.patches = one;
	for (unsigned point = 1; point <= 3; point++) {
		struct kbuild_result patched = {};
		_cleanup_free_ char *key = NULL, *dir = NULL, *image = NULL;
		char *rm[] = { "rm", "-rf", NULL, NULL };
		unsigned n;

		CHECK(kbuild_key(&req, base.tree_id, &key, NULL, &err) == 0);
		CHECK(asprintf(&dir, "%s/%s", cache, key) > 0);
		snprintf(ptree, sizeof(ptree), "%s/tree", dir);
		/* an eighth, the base's own state file (the copy then carries the state "built"), a half */
		n = kill_during_copy(&req, ptree, point == 2 ? 0 : total * (point == 1 ? 1 : 4) / 8, ".snapbench-state");
		printf("kill %u: %u of %u entries copied\n", point, n, total);
		mid += n < total;
		/*
		 * the next attempt copies again (from the base's objects) and applies the patch: the image has the patched
		 * source. A kill after the whole copy may have come after the patch too: that attempt resumes, its
		 * objects from the base as its state says.
		 */
		CHECK_MSG(kbuild_build(&req, NULL, &patched, &err) == 0, "%s", err.msg);
		CHECK(!patched.cached && patched.incremental_from && !strcmp(patched.incremental_from, base.key));
		CHECK((image = read_file(patched.dir, "out/boot/vmlinuz-" RELEASE)));
		CHECK_MSG(strstr(image, "int b = 2;") && !strstr(image, "int b = 1;"), "the image: %s", image);
		kbuild_result_done(&patched);
		rm[2] = dir;
		CHECK(kbuild_spawn(&(struct kbuild_spawn){ .argv = rm, .log_fd = -1 }, &err) == 0);
	}
	/* at least two of the three kills stopped cp mid-walk (a loaded machine may let one finish first) */
	CHECK_MSG(mid >= 2, "only %u of 3 kills came during the copy", mid);
	resumed_from_base(&req, &base);
	legacy_base(&req, &base);
	kbuild_result_done(&base);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} cases[] = {
		{ "fragment", test_fragment }, { "tree", test_tree }, { "git", test_git },
		{ "key", test_key },           { "env", test_env },           { "build", test_build },
		{ "config-base", test_config_base }, { "arch", test_arch },     { "inputs", test_inputs },
		{ "selftests", test_selftests }, { "ccache", test_ccache }, { "interrupted", test_interrupted },
	};
	bool ran = false;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (argc < 2 || !strcmp(argv[1], cases[i].name)) {
			cases[i].fn();
			ran = true;
		}
	CHECK_MSG(ran, "no case %s", argv[1]);
	return 0;
}
