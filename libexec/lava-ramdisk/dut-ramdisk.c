// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench-lava-ramdisk: the ramdisk of a LAVA DUT that is a QEMU VM on a
 * host with snapbench built (docs/lava.md, "A DUT without a root file
 * system"): the host VM's init (libexec/hostvm-init/) and the kernel's
 * modules, set up to mount this host's / read-only over 9p as the DUT's
 * root, with an overlay in memory above it (so LAVA's test shell can write
 * anywhere), to keep LAVA's /lava-JOB overlay (which lava-dispatcher
 * unpacks into the ramdisk), and to run an interactive shell on the serial
 * console for LAVA's test shell. The job's QEMU options give the 9p share "root" (this
 * host's /) and any writable shares named with --share.
 *
 *   snapbench-lava-ramdisk --kernel IMAGE --output FILE [--modules DIR]
 *                          [--vendor amd|intel] [--share TAG:PATH]...
 *                          [--init PATH] [--prompt TEXT]
 *
 * A lab's real DUT boots its own root file system with snapbench installed
 * instead; this is what lets a job run here without an image.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "error.h"
#include "initramfs.h"
#include "kernel-image.h"
#include "macro.h"
#include "modules.h"
#include "strbuf.h"

#define MAX_SHARES 4
#define DEFAULT_PROMPT "snapbench-dut# "

struct options {
	const char *kernel, *output, *modules, *vendor, *init, *prompt;
	const char *shares[MAX_SHARES];
	size_t n_shares;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: snapbench-lava-ramdisk --kernel IMAGE --output FILE [--modules DIR] [--vendor amd|intel]\n"
		   "                              [--share TAG:PATH]... [--init PATH] [--prompt TEXT]\n"
		   "\n"
		   "Writes the cpio ramdisk of a LAVA DUT that boots IMAGE in QEMU with this host's / as its root\n"
		   "(the 9p share \"root\", read-only, an overlay in memory above it), LAVA's /lava-JOB overlay kept,\n"
		   "and a shell on ttyS0 whose prompt is TEXT (default \"" DEFAULT_PROMPT "\").\n"
		   "\n"
		   "  --kernel IMAGE   the DUT's kernel (bzImage); its modules from --modules DIR, else\n"
		   "                   lib/modules/RELEASE beside it or on this host\n"
		   "  --output FILE    the ramdisk (cpio newc, uncompressed: a LAVA job's format: cpio.newc)\n"
		   "  --vendor V       which KVM module the DUT loads: amd (default: QEMU's TCG emulates svm) or intel\n"
		   "  --share TAG:PATH a writable 9p share the job's QEMU options give, mounted on PATH\n"
		   "  --init PATH      snapbench-hostvm-init (default " LIBEXECDIR "/snapbench-hostvm-init)\n");
}

static int parse_argv(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "kernel", required_argument, NULL, 'k' }, { "output", required_argument, NULL, 'o' },
		{ "modules", required_argument, NULL, 'm' }, { "vendor", required_argument, NULL, 'v' },
		{ "share", required_argument, NULL, 's' },  { "init", required_argument, NULL, 'i' },
		{ "prompt", required_argument, NULL, 'p' }, { "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	*o = (struct options){ .vendor = "amd", .init = LIBEXECDIR "/snapbench-hostvm-init", .prompt = DEFAULT_PROMPT };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'k': o->kernel = optarg; break;
		case 'o': o->output = optarg; break;
		case 'm': o->modules = optarg; break;
		case 'i': o->init = optarg; break;
		case 'p': o->prompt = optarg; break;
		case 'v':
			if (strcmp(optarg, "amd") && strcmp(optarg, "intel")) {
				fprintf(stderr, "snapbench-lava-ramdisk: --vendor %s: use amd or intel\n", optarg);
				return -EINVAL;
			}
			o->vendor = optarg;
			break;
		case 's': {
			const char *colon = strchr(optarg, ':');
			if (!colon || colon == optarg || colon[1] != '/' || strchr(optarg, '\n') || strchr(optarg, ' ')) {
				fprintf(stderr, "snapbench-lava-ramdisk: --share %s: want TAG:/ABSOLUTE/PATH (no spaces)\n", optarg);
				return -EINVAL;
			}
			if (o->n_shares == MAX_SHARES) {
				fprintf(stderr, "snapbench-lava-ramdisk: at most %d --share\n", MAX_SHARES);
				return -EINVAL;
			}
			o->shares[o->n_shares++] = optarg;
			break;
		}
		case 'h':
			usage(stdout);
			exit(0);
		default:
			if (optopt)
				fprintf(stderr, "snapbench-lava-ramdisk: option '-%c' %s\n", optopt,
					strchr("kompsvi", optopt) ? "needs a value" : "is unknown");
			else
				fprintf(stderr, "snapbench-lava-ramdisk: option '%s' is unknown or needs a value\n", argv[optind - 1]);
			fprintf(stderr, "try 'snapbench-lava-ramdisk --help'\n");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "snapbench-lava-ramdisk: unexpected argument '%s'\ntry 'snapbench-lava-ramdisk --help'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (!o->kernel || !o->output) {
		fprintf(stderr, "snapbench-lava-ramdisk: --kernel and --output are required\n"
				"try 'snapbench-lava-ramdisk --help'\n");
		return -EINVAL;
	}
	if (strchr(o->prompt, '\n')) {
		fprintf(stderr, "snapbench-lava-ramdisk: --prompt: one line\n");
		return -EINVAL;
	}
	return 0;
}

/* hostvm.conf after the modules: the overlay root, LAVA's overlay, the shares, a shell on the console */
static char *directives(const struct options *o)
{
	struct strbuf b = {};

	strbuf_append(&b, "overlay\nkeep lava-\ntmpfs /run\n");
	for (size_t i = 0; i < o->n_shares; i++) {
		const char *colon = strchr(o->shares[i], ':');
		strbuf_appendf(&b, "out %.*s %s\n", (int)(colon - o->shares[i]), o->shares[i], colon + 1);
	}
	strbuf_append(&b, "env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
			  "env HOME=/root\nenv TERM=dumb\n");
	strbuf_appendf(&b, "env PS1=%s\n", o->prompt);
	strbuf_append(&b, "tty /dev/ttyS0\narg /bin/bash\narg --norc\narg --noprofile\narg -i\n");
	return strbuf_steal(&b);
}

int main(int argc, char **argv)
{
	struct kernel_id kernel = {};
	struct hostvm_modules mods = {};
	_cleanup_free_ char *dir = NULL, *conf = NULL;
	struct sb_error err = { 0 };
	struct options o;
	int k;

	if (parse_argv(argc, argv, &o) < 0)
		return 2;
	if (access(o.init, X_OK) < 0) {
		fprintf(stderr, "snapbench-lava-ramdisk: --init %s: %s; give the build's libexec/hostvm-init/snapbench-hostvm-init\n",
			o.init, strerror(errno));
		return 2;
	}
	k = hostvm_kernel_identify(o.kernel, &kernel, &err);
	if (k >= 0)
		k = hostvm_modules_dir(o.modules, o.kernel, kernel.release, &dir, &err);
	if (k >= 0)
		k = hostvm_modules_resolve(dir, o.vendor, &mods, &err);
	if (k >= 0)
		k = hostvm_modules_add(&mods, "overlay", "CONFIG_OVERLAY_FS (the DUT's root is an overlay over the 9p share)",
				       &err);
	if (k >= 0 && !(conf = directives(&o)))
		k = sb_error_set(&err, -ENOMEM, "out of memory");
	if (k >= 0)
		k = hostvm_initramfs_write(o.output, o.init, &mods, NULL, conf, &err);
	if (k < 0)
		fprintf(stderr, "snapbench-lava-ramdisk: %s\n", err.msg);
	else
		printf("snapbench-lava-ramdisk: %s: kernel %s, %zu modules, init %s\n", o.output, kernel.release, mods.n,
		       o.init);
	hostvm_modules_done(&mods);
	kernel_id_done(&kernel);
	return k < 0 ? 1 : 0;
}
