// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench kernel: a host-VM-ready kernel from a source tree and patches,
 * for kernel arms (docs/kernel-build.md). A thin front for kbuild/: build
 * (or find in the cache) and print the image and modules to give
 * --arm LABEL:kernel=...,modules=...; config, the checked configuration
 * alone; fragment, the configuration fragment snapbench ships.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"
#include "clock.h"
#include "env.h"
#include "exit-codes.h"
#include "fragment.h"
#include "help-fit.h"
#include "selftests.h"
#include "json-util.h"
#include "macro.h"
#include "mkdir-p.h"
#include "parse-number.h"
#include "spec.h"
#include "strv.h"
#include "verb-args.h"
#include "verbs.h"

#define DEFAULT_CACHE "/var/cache/snapbench/kbuild"
#define MAX_JOBS 1024

static const char *default_cache(void)
{
	const char *e = getenv("SNAPBENCH_KBUILD_CACHE");

	return e && *e ? e : DEFAULT_CACHE;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench kernel build --tree DIR [--patch FILE]... [--arch ARCH] [--selftests NAMES]\n"
		"                              [--config-base minimal|defconfig]\n"
		"                              [--config FILE] [--output DIR]\n"
		"                              [--cache DIR] [--jobs N] [--rebuild] [--keep-tree] [--label LABEL]\n"
		"                              [--quiet] [--json]\n"
		"       snapbench kernel config --tree DIR [--patch FILE]... [--arch ARCH] [--config-base minimal|defconfig]\n"
		"                               [--config FILE] [--cache DIR] [--output FILE] [--quiet]\n"
		"       snapbench kernel fragment [--arch ARCH] [--config-base minimal]\n"
		"\n"
		"build: builds a kernel a kernel arm's host VM can boot from the Linux tree DIR and\n"
		"patches, and prints its image and modules for --arm LABEL:kernel=IMAGE,modules=DIR,arch=ARCH.\n"
		"DIR is only read: it is copied into the cache, the patches are applied there\n"
		"(patch -p1, in order), a config base (--config-base) gets snapbench's fragment\n"
		"(snapbench kernel fragment) through make olddefconfig, and an option\n"
		"that did not end up set is named; then make -jN bzImage modules and modules_install.\n"
		"The result is cached by the tree's git commit (or a hash of its files), the\n"
		"patches' SHA-256s, the config's and the environment variables the build takes\n"
		"(KCFLAGS, LLVM, LOCALVERSION, CROSS_COMPILE, KBUILD_BUILD_*, ...: the programs of\n"
		"a build get those and PATH alone): the same inputs again print the cached build.\n"
		"A patched build starts from the objects of the same tree's unpatched build when\n"
		"the cache has them (build that first), so make rebuilds only what the patches touch.\n"
		"\n"
		"config: the copy, the patches and the config steps only; writes the checked\n"
		".config to --output FILE (default: stdout).\n"
		"fragment: prints the fragment, each option with why a kernel arm needs it\n"
		"(--config-base minimal: the minimal base's options beyond the fragment).\n"
		"\n"
		"  --tree DIR       the top of a Linux source tree (a git clone, an unpacked linux-source)\n"
		"  --patch FILE     a patch to apply (git format-patch or diff -u, -p1); repeatable\n"
		"  --arch x86_64|riscv64\n"
		"                   the kernel's architecture (default x86_64); riscv64 is a cross build\n"
		"                   (ARCH=riscv CROSS_COMPILE=riscv64-linux-gnu-, package gcc-riscv64-linux-gnu)\n"
		"  --selftests NAME[,NAME]\n"
		"                   also build these programs of tools/testing/selftests/kvm for the arch,\n"
		"                   statically linked, into MODULES/kselftests/kvm\n"
		"  --ccache         compile through ccache (its directory: the cache's, -ccache); the summary\n"
		"                   gives its hits\n"
		"  --config-base minimal|defconfig\n"
		"                   minimal (the default): make allnoconfig with what a host VM needs and the\n"
		"                   fragment; defconfig: the tree's defconfig with the fragment\n"
		"  --config FILE    a .config to start from instead of a config base\n"
		"  --output DIR     also copy the result (boot/ and lib/modules/) into DIR (new or empty);\n"
		"                   config: the file to write\n"
		"  --cache DIR      the build cache (default $SNAPBENCH_KBUILD_CACHE, else %s)\n"
		"  --jobs N         make -jN (default: the online CPUs)\n"
		"  --rebuild        build from a fresh copy even when the cache holds the result\n"
		"  --keep-tree      keep a patched build's scratch tree (an unpatched one's is always kept)\n"
		"  --label LABEL    the arm label in the printed --arm option, as run's --arm takes it\n"
		"                   (default: the tree's directory name)\n"
		"  --quiet          no progress on stderr\n"
		"  --json           print the result as one JSON object (errors too)\n"
		"\n"
		"Progress goes to stderr (one redrawn line on a terminal); every step's command and\n"
		"output go to the build log, CACHE/KEY/build.log, which a failure names.\n"
		"Exit codes: 0 built or found in the cache; 1 a step failed (make, the copy, the\n"
		"install); 2 bad input, refused before any work: not a kernel tree (or unreadable),\n"
		"a patch or config that is not a regular file of the right size (a FIFO, a device),\n"
		"an empty patch, a bad --label, an --output that cannot be used; or a patch that\n"
		"does not apply, a config option the tree dropped or could not enable; 4 a\n"
		"program the build needs is missing.\n"
		"docs/kernel-build.md describes the layout and the fragment.\n",
		DEFAULT_CACHE);
}

enum { OPT_TREE = 0x100, OPT_PATCH, OPT_ARCH, OPT_SELFTESTS, OPT_CCACHE, OPT_CONFIG, OPT_CONFIG_BASE, OPT_OUTPUT, OPT_CACHE, OPT_JOBS, OPT_REBUILD, OPT_KEEP_TREE, OPT_LABEL,
       OPT_QUIET, OPT_JSON };

extern char **environ;

struct kernel_args {
	const char *sub;
	struct kbuild_request req;
	char **patches;
	char **selftests; /* --selftests, parsed */
	char **env; /* the variables of our environment make gets, keyed (env.h) */
	char *cache; /* --cache made absolute: the printed paths are */
	const char *output, *label, *config_base;
	bool quiet, json;
};

static void args_done(struct kernel_args *a)
{
	strv_free(a->patches);
	strv_free(a->selftests);
	strv_free(a->env);
	free(a->cache);
}

/* The subcommand, first (argv[1]), into a->sub and verb ("kernel build"); *shift when there was one. */
static int parse_subcommand(int argc, char **argv, struct kernel_args *a, char *verb, size_t verb_len, int *shift)
{
	*shift = 0;
	snprintf(verb, verb_len, "kernel");
	if (argc < 2 || argv[1][0] == '-')
		return ARGS_GO_ON; /* options before one are only read for --help and their errors */
	if (strcmp(argv[1], "build") && strcmp(argv[1], "config") && strcmp(argv[1], "fragment")) {
		verb_error("unknown subcommand '%s': give build, config or fragment; try 'snapbench kernel --help'",
			   argv[1]);
		return EXIT_USAGE;
	}
	a->sub = argv[1];
	snprintf(verb, verb_len, "kernel %s", a->sub);
	*shift = 1;
	return ARGS_GO_ON;
}

/* What the options given ask of the subcommand. */
static int check_args(int argc, char **argv, const struct kernel_args *a)
{
	if (!a->sub) {
		verb_error("give a subcommand first: build, config or fragment; try 'snapbench kernel --help'");
		return EXIT_USAGE;
	}
	if (optind < argc) {
		verb_error("unexpected argument '%s'; try 'snapbench kernel --help'", argv[optind]);
		return EXIT_USAGE;
	}
	if (strcmp(a->sub, "fragment") && !a->req.tree) {
		verb_error("give the kernel tree to build (--tree DIR); try 'snapbench kernel --help'");
		return EXIT_USAGE;
	}
	if (!strcmp(a->sub, "fragment") && (a->req.tree || a->patches || a->req.config || a->output)) {
		verb_error("fragment takes no tree, patch, config or output: it prints snapbench's own fragment "
			   "(with --config-base minimal, the minimal base's options)");
		return EXIT_USAGE;
	}
	if (a->selftests && strcmp(a->sub, "build")) {
		verb_error("--selftests is for kernel build: the programs are built with the kernel");
		return EXIT_USAGE;
	}
	if (a->config_base && a->req.config) {
		verb_error("--config-base %s and --config %s: give one (--config is the whole base)", a->config_base,
			   a->req.config);
		return EXIT_USAGE;
	}
	if (a->label && !spec_label_valid(a->label)) {
		/* not echoed: it may hold a newline or an escape sequence that would forge the terminal's lines */
		verb_error("--label: not an arm label; use 1-64 letters, digits, '.', '_', '+' or '-', starting with a "
			   "letter or digit (as run's --arm takes)");
		return EXIT_USAGE;
	}
	return ARGS_GO_ON;
}

/* ARGS_GO_ON, or the exit code (having said why) */
static int parse_argv(int argc, char **argv, struct kernel_args *a)
{
	static const struct option longopts[] = {
		{ "tree", required_argument, NULL, OPT_TREE },     { "patch", required_argument, NULL, OPT_PATCH },
		{ "config", required_argument, NULL, OPT_CONFIG }, { "output", required_argument, NULL, OPT_OUTPUT },
		{ "cache", required_argument, NULL, OPT_CACHE },   { "jobs", required_argument, NULL, OPT_JOBS },
		{ "rebuild", no_argument, NULL, OPT_REBUILD },     { "keep-tree", no_argument, NULL, OPT_KEEP_TREE },
		{ "label", required_argument, NULL, OPT_LABEL },   { "quiet", no_argument, NULL, OPT_QUIET },
		{ "json", no_argument, NULL, OPT_JSON },           { "help", no_argument, NULL, 'h' },
		{ "config-base", required_argument, NULL, OPT_CONFIG_BASE }, { "arch", required_argument, NULL, OPT_ARCH },
		{ "selftests", required_argument, NULL, OPT_SELFTESTS }, { "ccache", no_argument, NULL, OPT_CCACHE },
		{},
	};
	char verb[32];
	int c, r, shift;

	*a = (struct kernel_args){ .req.cache = default_cache() };
	r = parse_subcommand(argc, argv, a, verb, sizeof(verb), &shift);
	if (r != ARGS_GO_ON)
		return r;
	argc -= shift;
	argv += shift;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_TREE:
			a->req.tree = optarg;
			break;
		case OPT_PATCH:
			if (strv_push(&a->patches, optarg) < 0) {
				verb_error("out of memory");
				return EXIT_FAIL;
			}
			break;
		case OPT_CONFIG:
			a->req.config = optarg;
			break;
		case OPT_CCACHE:
			a->req.ccache = true;
			break;
		case OPT_SELFTESTS: {
			struct sb_error err = {};
			strv_free(a->selftests);
			a->selftests = NULL;
			if (kbuild_selftests_parse(optarg, &a->selftests, &err) < 0) {
				verb_error("%s", err.msg);
				return EXIT_USAGE;
			}
			break;
		}
		case OPT_ARCH: {
			struct sb_error err = {};
			if (kbuild_arch_find(optarg, &a->req.arch, &err) < 0) {
				verb_error("%s", err.msg);
				return EXIT_USAGE;
			}
			break;
		}
		case OPT_CONFIG_BASE: {
			struct sb_error err = {};
			if (kbuild_config_base_parse(optarg, &a->req.base, &err) < 0) {
				verb_error("%s", err.msg);
				return EXIT_USAGE;
			}
			a->config_base = optarg;
			break;
		}
		case OPT_OUTPUT:
			a->output = optarg;
			break;
		case OPT_CACHE:
			a->req.cache = optarg;
			break;
		case OPT_JOBS:
			if (parse_unsigned(optarg, 1, MAX_JOBS, &a->req.jobs, NULL) < 0) {
				verb_error("--jobs '%s': give a number of parallel jobs from 1 to %d", optarg, MAX_JOBS);
				return EXIT_USAGE;
			}
			break;
		case OPT_REBUILD:
			a->req.rebuild = true;
			break;
		case OPT_KEEP_TREE:
			a->req.keep_tree = true;
			break;
		case OPT_LABEL:
			a->label = optarg;
			break;
		case OPT_QUIET:
			a->quiet = true;
			break;
		case OPT_JSON:
			a->json = true;
			break;
		case 'h':
			help_print(stdout, usage);
			return EXIT_OK;
		default:
			verb_option_error(verb, c, argv, longopts);
			return EXIT_USAGE;
		}
	}
	r = check_args(argc, argv, a);
	if (r != ARGS_GO_ON)
		return r;
	a->req.patches = a->patches;
	a->req.selftests = a->selftests;
	if (kbuild_env_from(environ, &a->env) < 0) {
		verb_error("out of memory");
		return EXIT_FAIL;
	}
	a->req.env = a->env;
	return ARGS_GO_ON;
}

/* ---- progress on stderr ---- */

struct progress {
	bool tty, quiet;
	uint64_t t0;
	char step[256];
	uint64_t last_draw;
};

static unsigned columns(void)
{
	struct winsize ws;

	return ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 ? ws.ws_col : 80;
}

static void on_step(void *userdata, const char *what)
{
	struct progress *p = userdata;
	unsigned s = (unsigned)((mono_ns() - p->t0) / NSEC_PER_SEC);

	snprintf(p->step, sizeof(p->step), "%s", what);
	if (p->quiet)
		return;
	/* a step is a line of its own, its program's output one redrawn line under it */
	fprintf(stderr, "%s[%02u:%02u] %s\n", p->tty ? "\r\033[K" : "", s / 60, s % 60, what);
}

static void on_line(void *userdata, const char *line)
{
	struct progress *p = userdata;
	uint64_t now = mono_ns();
	unsigned s = (unsigned)((now - p->t0) / NSEC_PER_SEC), w;

	if (p->quiet || !p->tty || now - p->last_draw < 100 * NSEC_PER_MSEC)
		return;
	p->last_draw = now;
	w = columns() - 10;
	while (*line == ' ')
		line++;
	fprintf(stderr, "\r\033[K[%02u:%02u]   %.*s", s / 60, s % 60, (int)w, line);
	fflush(stderr);
}

static void progress_end(struct progress *p)
{
	if (!p->quiet && p->tty)
		fprintf(stderr, "\r\033[K");
}

static int exit_code_of(int r)
{
	switch (r) {
	case -ENOTDIR:
	case -EINVAL:
	case -EBADMSG:
	case -ENOTSUP:
	case -EEXIST:
	case -EACCES:
		return EXIT_USAGE;
	case -ENOENT:
		return EXIT_UNAVAILABLE;
	default:
		return EXIT_FAIL;
	}
}

/*
 * The label of the printed --arm: --label, else the tree's directory name
 * when it makes an arm label, else "patched"/"baseline".
 */
static void arm_label(const struct kernel_args *a, char *buf, size_t len)
{
	_cleanup_free_ char *abs = realpath(a->req.tree, NULL);
	const char *base = abs ? strrchr(abs, '/') : NULL;

	if (a->label) {
		snprintf(buf, len, "%s", a->label);
		return;
	}
	if (base && base[1] && snprintf(buf, len, "%s%s", base + 1, a->patches ? "-patched" : "") < (int)len &&
	    spec_label_valid(buf))
		return;
	snprintf(buf, len, "%s", a->patches ? "patched" : "baseline");
}

static void print_json(const struct kbuild_result *r, const char *image, const char *modules, const char *arm,
		       char *const *env)
{
	_cleanup_json_ struct json_object *o = json_object_new_object(), *t = json_object_new_object(),
					  *e = json_object_new_object();
	const struct {
		const char *name;
		double v;
	} times[] = {
		{ "identify", r->times.identify_s }, { "copy", r->times.copy_s }, { "patch", r->times.patch_s },
		{ "config", r->times.config_s },     { "make", r->times.make_s }, { "install", r->times.install_s },
		{ "total", r->times.total_s },
	};

	if (!o || !t || !e)
		return;
	for (char *const *v = env; v && *v; v++) {
		_cleanup_free_ char *name = strndup(*v, strcspn(*v, "="));
		if (name)
			json_object_object_add(e, name, json_object_new_string(*v + strlen(name) + 1));
	}
	for (size_t i = 0; i < ARRAY_SIZE(times); i++)
		json_object_object_add(t, times[i].name, json_object_new_double(times[i].v));
	json_object_object_add(o, "key", json_object_new_string(r->key));
	json_object_object_add(o, "arch", json_object_new_string(r->arch));
	if (r->selftests)
		json_object_object_add(o, "selftests", json_object_new_string(r->selftests));
	if (r->ccache) {
		json_object_object_add(o, "ccache_hits", json_object_new_int64((int64_t)r->ccache_hits));
		json_object_object_add(o, "ccache_misses", json_object_new_int64((int64_t)r->ccache_misses));
	}
	json_object_object_add(o, "cached", json_object_new_boolean(r->cached));
	json_object_object_add(o, "release", json_object_new_string(r->release));
	json_object_object_add(o, "image", json_object_new_string(image));
	json_object_object_add(o, "modules", json_object_new_string(modules));
	json_object_object_add(o, "vmlinux", json_object_new_string(r->vmlinux));
	json_object_object_add(o, "config", json_object_new_string(r->config));
	json_object_object_add(o, "log", json_object_new_string(r->log));
	json_object_object_add(o, "record", json_object_new_string(r->record));
	json_object_object_add(o, "tree_id", r->tree_id ? json_object_new_string(r->tree_id) : NULL);
	json_object_object_add(o, "incremental_from", r->incremental_from ? json_object_new_string(r->incremental_from) : NULL);
	json_object_object_add(o, "times_s", json_object_get(t));
	json_object_object_add(o, "environment", json_object_get(e));
	json_object_object_add(o, "arm", json_object_new_string(arm));
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static void print_text(const struct kbuild_result *r, const char *image, const char *modules, const char *arm,
		       char *const *env)
{
	if (r->cached)
		printf("kernel %s: in the cache (built in %.1f s, make %.1f s%s)\n", r->release, r->times.total_s,
		       r->times.make_s, r->incremental_from ? ", from the unpatched build's objects" : "");
	else
		printf("kernel %s: built in %.1f s (copy %.1f s, config %.1f s, make %.1f s, install %.1f s)%s\n", r->release,
		       r->times.total_s, r->times.copy_s, r->times.config_s, r->times.make_s, r->times.install_s,
		       r->incremental_from ? ", from the unpatched build's objects" : "");
	printf("  arch     %s\n", r->arch);
	if (r->selftests)
		printf("  selftests %s\n", r->selftests);
	if (r->ccache)
		printf("  ccache   %llu hits, %llu misses during make\n", r->ccache_hits, r->ccache_misses);
	printf("  image    %s\n  modules  %s\n  vmlinux  %s\n  config   %s\n  log      %s\n  key      %s (tree %s)\n",
	       image, modules, r->vmlinux, r->config, r->log, r->key, r->tree_id ? r->tree_id : "?");
	if (r->incremental_from)
		printf("  objects  from %s\n", r->incremental_from);
	for (char *const *e = env; e && *e; e++)
		printf("  env      %s\n", *e);
	printf("%s\n", arm);
}

/*
 * --output DIR of build, made ready before any work: an empty directory,
 * created when absent (*created: removed again when the build fails),
 * whose absolute path *abs gets. ARGS_GO_ON, or EXIT_USAGE having said why.
 */
static int output_dir_ready(const char *output, char **abs, bool *created)
{
	struct stat st;
	DIR *d;

	*created = false;
	if (stat(output, &st) < 0) {
		if (errno != ENOENT) {
			verb_error("--output %s: %s; give a new or empty directory", output, strerror(errno));
			return EXIT_USAGE;
		}
		if (mkdir_p(output, 0755) < 0) {
			verb_error("--output %s: cannot be made: %s; give a new or empty directory in a writable place",
				   output, strerror(errno));
			return EXIT_USAGE;
		}
		*created = true;
	} else if (!S_ISDIR(st.st_mode) || !(d = opendir(output))) {
		verb_error("--output %s: %s; give a new or empty directory", output,
			   S_ISDIR(st.st_mode) ? strerror(errno) : "exists and is not a directory");
		return EXIT_USAGE;
	} else {
		struct dirent *de;
		bool empty = true;
		while (empty && (de = readdir(d)))
			empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
		closedir(d);
		if (!empty || access(output, W_OK) < 0) {
			verb_error("--output %s: %s; give a new or empty directory", output,
				   !empty ? "exists and is not an empty directory" : "permission denied");
			return EXIT_USAGE;
		}
	}
	if (!(*abs = realpath(output, NULL))) {
		verb_error("--output %s: %s", output, strerror(errno));
		return EXIT_USAGE;
	}
	return ARGS_GO_ON;
}

/*
 * --output FILE of config, checked before any work: a file can be made in
 * its directory (one is, and removed), and it is not a directory.
 * ARGS_GO_ON, or EXIT_USAGE having said why.
 */
static int output_file_ready(const char *output)
{
	_cleanup_free_ char *probe = NULL;
	const char *slash = strrchr(output, '/');
	struct stat st;
	int fd;

	/* the directory: what comes before the last '/' ("" for "/FILE"), "." without one */
	if (asprintf(&probe, "%.*s/.snapbench-output-XXXXXX", slash ? (int)(slash - output) : 1, slash ? output : ".") < 0) {
		verb_error("out of memory");
		return EXIT_FAIL;
	}
	if (stat(output, &st) == 0 && S_ISDIR(st.st_mode)) {
		verb_error("--output %s: is a directory; give the file to write", output);
		return EXIT_USAGE;
	}
	if ((fd = mkostemp(probe, O_CLOEXEC)) < 0) {
		verb_error("--output %s: cannot write in its directory: %s; give a file in a writable directory", output,
			   strerror(errno));
		return EXIT_USAGE;
	}
	close(fd);
	unlink(probe);
	return ARGS_GO_ON;
}

static int run_build(struct kernel_args *a, struct progress *p)
{
	struct kbuild_progress cb = { .step = on_step, .line = on_line, .userdata = p };
	_cleanup_free_ char *image = NULL, *modules = NULL, *arm = NULL, *output = NULL;
	struct kbuild_result r = {};
	struct sb_error err = {};
	char label[NAME_MAX + 16];
	bool created = false;
	int k;

	if (a->output && (k = output_dir_ready(a->output, &output, &created)) != ARGS_GO_ON)
		return k;
	k = kbuild_build(&a->req, &cb, &r, &err);
	progress_end(p);
	if (k < 0) {
		if (created)
			rmdir(output);
		verb_error("%s", err.msg);
		return exit_code_of(k);
	}
	if (output) {
		on_step(p, "copying the result to --output");
		if ((k = kbuild_export(&r, output, &err)) < 0) {
			kbuild_result_done(&r);
			verb_error("%s", err.msg);
			return exit_code_of(k);
		}
	}
	arm_label(a, label, sizeof(label));
	if (output ? asprintf(&image, "%s/boot/vmlinuz-%s", output, r.release) < 0 ||
			      asprintf(&modules, "%s/lib/modules/%s", output, r.release) < 0
		      : !(image = strdup(r.image)) || !(modules = strdup(r.modules))) {
		kbuild_result_done(&r);
		verb_error("out of memory");
		return EXIT_FAIL;
	}
	if (asprintf(&arm, "--arm %s:kernel=%s,modules=%s,arch=%s", label, image, modules,
		     a->req.arch ? a->req.arch->name : kbuild_arch_default()->name) < 0) {
		kbuild_result_done(&r);
		verb_error("out of memory");
		return EXIT_FAIL;
	}
	if (a->json)
		print_json(&r, image, modules, arm, a->env);
	else
		print_text(&r, image, modules, arm, a->env);
	kbuild_result_done(&r);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int run_config(struct kernel_args *a, struct progress *p)
{
	struct kbuild_progress cb = { .step = on_step, .line = on_line, .userdata = p };
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int tmp_lock = -1;
	struct sb_error err = {};
	const char *out = a->output;
	int k;

	if (out && (k = output_file_ready(out)) != ARGS_GO_ON)
		return k;

	if (!out) {
		/*
		 * stdout gets the config only once it is whole and checked; the file is a CACHE/config-XXXXXX,
		 * locked while it is used: an interrupted config's is removed by the next (kbuild_config())
		 */
		int fd;
		if (asprintf(&tmp, "%s/config-XXXXXX", a->req.cache) < 0) {
			verb_error("out of memory");
			return EXIT_FAIL;
		}
		if (mkdir_p(a->req.cache, 0755) < 0 || (fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
			verb_error("kernel build cache %s: %s; give a writable one (--cache DIR or $SNAPBENCH_KBUILD_CACHE)",
				   a->req.cache, strerror(errno));
			return EXIT_USAGE;
		}
		tmp_lock = fd;
		if (flock(fd, LOCK_EX) < 0) {
			verb_error("%s: cannot lock: %s", tmp, strerror(errno));
			unlink(tmp);
			return EXIT_FAIL;
		}
		out = tmp;
	}
	k = kbuild_config(&a->req, &cb, out, &err);
	progress_end(p);
	if (k < 0) {
		if (tmp)
			unlink(tmp);
		verb_error("%s", err.msg);
		return exit_code_of(k);
	}
	if (tmp) {
		FILE *f = fopen(tmp, "re");
		char buf[65536];
		size_t n;

		if (!f) {
			verb_error("%s: %s", tmp, strerror(errno));
			return EXIT_FAIL;
		}
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, stdout);
		fclose(f);
		unlink(tmp);
	}
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int run(struct kernel_args *a)
{
	struct progress p = { .tty = isatty(STDERR_FILENO), .quiet = a->quiet, .t0 = mono_ns() };
	int r;

	if (!strcmp(a->sub, "fragment")) {
		/* --config-base minimal: the base's own options; the fragment otherwise */
		const char *arch = a->req.arch ? a->req.arch->name : NULL;
		_cleanup_free_ char *text = a->config_base && a->req.base == KBUILD_BASE_MINIMAL
						    ? kbuild_config_base_describe(arch)
						    : kbuild_fragment_text(arch);
		if (!text) {
			verb_error("out of memory");
			return EXIT_FAIL;
		}
		fputs(text, stdout);
		return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
	}
	/* made (it is made anyway) and absolute before any work: a relative --cache prints absolute paths */
	if (mkdir_p(a->req.cache, 0755) < 0 || !(a->cache = realpath(a->req.cache, NULL))) {
		verb_error("kernel build cache %s: %s; give a writable one (--cache DIR or $SNAPBENCH_KBUILD_CACHE)",
			   a->req.cache, strerror(errno));
		return EXIT_USAGE;
	}
	a->req.cache = a->cache;
	r = !strcmp(a->sub, "build") ? run_build(a, &p) : run_config(a, &p);
	return r;
}

static int kernel_main(int argc, char **argv)
{
	struct kernel_args a;
	int r = parse_argv(argc, argv, &a);

	if (r == ARGS_GO_ON)
		r = run(&a);
	args_done(&a);
	return r;
}

const struct verb verb_kernel = {
	.name = "kernel",
	.summary = "build a kernel for kernel arms from a source tree and patches (cached)",
	.run = kernel_main,
};
