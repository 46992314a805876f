// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kbuild/ without a kernel build: the fragment's merge and check, kernel
 * trees recognised and identified (content hash, git commit), cache keys,
 * and the build's steps on a tiny tree whose Makefile has the kernel's
 * targets (defconfig, olddefconfig, bzImage, modules, kernelrelease,
 * modules_install) and builds in milliseconds: the layout of a result, a
 * cache hit, a patched build from the unpatched build's objects (only the
 * patched file rebuilt), patches applied to the copy and never to the
 * tree, and failures that name their patch, option or step and log.
 * tests/kbuild/ runs the config steps on a real kernel tree.
 *
 * Usage: test-kbuild [CASE]  (all cases without one)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"
#include "check.h"
#include "fileio.h"
#include "fragment.h"
#include "macro.h"
#include "mkdir-p.h"
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
	_cleanup_free_ char *merged = NULL, *text = kbuild_fragment_text(), *config = NULL;
	struct sb_error err = {};
	const struct kbuild_option *o;
	size_t n;

	o = kbuild_fragment(&n);
	CHECK(n > 20 && text);
	for (size_t i = 0; i < n; i++) {
		char line[128];
		snprintf(line, sizeof(line), "CONFIG_%s=%c", o[i].name, o[i].value);
		CHECK_MSG(strstr(text, line), "the fragment text lacks %s", line);
		CHECK(o[i].why && *o[i].why);
	}
	/* the base's lines for the fragment's options go, others stay, the fragment's come once */
	CHECK(kbuild_fragment_merge("CONFIG_A=y\n# CONFIG_KVM is not set\nCONFIG_PVH=n\nCONFIG_KVM_AMD=y\n# comment\n",
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
	CHECK(kbuild_fragment_merge("", &merged, &err) == 0);
	CHECK(asprintf(&config, "%sCONFIG_TRACEPOINTS=y\nCONFIG_MEMFD_CREATE=y\n", merged) > 0);
	CHECK_MSG(kbuild_fragment_check(config, "C", &err) == 0, "%s", err.msg);
	*strstr(config, "CONFIG_KVM=m") = '#'; /* "#ONFIG_KVM=m": the tree does not know it */
	char *amd = strstr(config, "CONFIG_KVM_AMD=m");
	amd[strlen("CONFIG_KVM_AMD=")] = 'y';
	CHECK_MSG(kbuild_fragment_check(config, "C", &err) == -ENOTSUP, "%s", err.msg);
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
	CHECK(kbuild_fragment_check(off, "C", &err) == -ENOTSUP);
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
	"olddefconfig:\n"
	"\ttest -f .config\n"
	"\tif [ -e drop-pvh ]; then sed -i '/CONFIG_PVH/d' .config; fi\n"
	"\tprintf 'CONFIG_TRACEPOINTS=y\\nCONFIG_MEMFD_CREATE=y\\n' >> .config\n"
	"obj/%.o: src/%.c\n"
	"\t@mkdir -p obj\n"
	"\tcp $< $@\n"
	"\techo $@ >> rebuilt.list\n"
	"bzImage: $(OBJS)\n"
	"\t@if [ -e src/fail ]; then echo 'src/fail: error: this tree does not build' >&2; exit 2; fi\n"
	"\tmkdir -p arch/x86/boot\n"
	"\tcat $(OBJS) > vmlinux\n"
	"\tcp vmlinux arch/x86/boot/bzImage\n"
	"\tcp vmlinux System.map\n"
	"modules: obj/m.o\n"
	"\tcp obj/m.o m.ko\n"
	"kernelrelease:\n"
	"\t@echo $(RELEASE)\n"
	"modules_install:\n"
	"\tmkdir -p $(INSTALL_MOD_PATH)/lib/modules/$(RELEASE)/kernel\n"
	"\tcp m.ko $(INSTALL_MOD_PATH)/lib/modules/$(RELEASE)/kernel/\n"
	"\tln -sfn $(CURDIR) $(INSTALL_MOD_PATH)/lib/modules/$(RELEASE)/build\n"
	".PHONY: defconfig olddefconfig bzImage modules kernelrelease modules_install\n";

static const char *fake_tree(const char *name)
{
	const char *dir = test_tmpdir(name);

	write_file(dir, "Makefile", fake_makefile);
	write_file(dir, "Kconfig", "mainmenu \"fake\"\n");
	write_file(dir, "arch/x86/Kconfig", "config X86\n\tdef_bool y\n");
	write_file(dir, "src/a.c", "int a = 1;\n");
	write_file(dir, "src/b.c", "int b = 1;\n");
	write_file(dir, "src/m.c", "int m = 1;\n");
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

	/* the unpatched build: the result's layout, the fragment in its config, its tree kept */
	CHECK_MSG(kbuild_build(&req, NULL, &base, &err) == 0, "%s", err.msg);
	CHECK(!base.cached && !base.incremental_from && !strcmp(base.release, RELEASE));
	CHECK(access(base.image, R_OK) == 0 && access(base.vmlinux, R_OK) == 0 && access(base.config, R_OK) == 0);
	CHECK(strstr(base.image, "/out/boot/vmlinuz-" RELEASE) && strstr(base.modules, "/out/lib/modules/" RELEASE));
	CHECK(exists(base.modules, "kernel/m.ko") && !exists(base.modules, "build"));
	CHECK((text = read_file(base.dir, "out/boot/config-" RELEASE)) && strstr(text, "CONFIG_PVH=y") &&
	      strstr(text, "CONFIG_KVM_AMD=m"));
	CHECK((record = read_file(base.dir, "out/kbuild.json")) && strstr(record, "\"snapbench.kbuild/1\"") &&
	      strstr(record, base.key) && strstr(record, "\"incremental_from\": null"));
	CHECK(exists(base.dir, "tree/obj/a.o") && exists(base.dir, "build.log"));

	/* the same inputs: a cache hit */
	CHECK(kbuild_build(&req, NULL, &again, &err) == 0);
	CHECK(again.cached && !strcmp(again.key, base.key) && !strcmp(again.image, base.image));
	kbuild_result_done(&again);

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
	/* found on a copy of the one file it names, before any tree was copied: the base's and the kept patched one */
	CHECK(count_trees(cache) == 2);

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
	CHECK_MSG(kbuild_config(&req, NULL, out, &err) == 0, "%s", err.msg);
	free(text);
	CHECK((text = read_file(d, "out.config")) && strstr(text, "CONFIG_MINE=y") && strstr(text, "CONFIG_KVM=m"));
	kbuild_result_done(&base);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} cases[] = {
		{ "fragment", test_fragment }, { "tree", test_tree }, { "git", test_git },
		{ "key", test_key },           { "build", test_build },
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
