// SPDX-License-Identifier: GPL-2.0-or-later
/* A kernel arm's repetition in a host VM: preflight, initramfs, QEMU, progress, the inner report. */
#include "hostvm-rep.h"

#include "run-dir.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "initramfs.h"
#include "json-util.h"
#include "kernel-image.h"
#include "launch.h"
#include "locate.h"
#include "macro.h"
#include "mkdir-p.h"
#include "module-params.h"
#include "modules.h"
#include "rep.h"
#include "run-dir.h"
#include "spawn-program.h"
#include "strbuf.h"
#include "strv.h"

#define INIT_NAME "snapbench-hostvm-init"
#define INNER_NAME "snapbench-hostvm-run"
#define CONSOLE_TAIL_LINES 12
/* no line from inside for this long (it sends one every HOSTVM_HEARTBEAT_S): its kernel is stuck */
#define SILENCE_LIMIT_S 60
#define EXIT_GRACE_MS 30000
#define MAX_PARAMS 4096

/* what an arm's host VM boots and loads */
struct hostvm_arm {
	struct kernel_id kernel;
	struct hostvm_modules modules;
	char *params[64];          /* load-time parameters of modules.items[i] ("npt=0 nested=1"), or NULL */
	char builtin_params[MAX_PARAMS]; /* parameters of built-in modules: on the kernel command line */
	struct spec_knobs runtime; /* the arm's other knobs: applied inside */
	char *vmlinux;             /* the bzImage's payload unpacked (PVH entry), booted instead; NULL: the bzImage */
	char cmdline[MAX_PARAMS * 2];
};

struct hostvm_run {
	size_t n_arms;
	struct hostvm_arm *arms;
	char accel[8], vendor[8], accel_reason[384];
	char *init_path, *inner_path;
};

void hostvm_run_free(struct hostvm_run *hr)
{
	if (!hr)
		return;
	for (size_t a = 0; a < hr->n_arms; a++) {
		kernel_id_done(&hr->arms[a].kernel);
		hostvm_modules_done(&hr->arms[a].modules);
		for (size_t i = 0; i < ARRAY_SIZE(hr->arms[a].params); i++)
			free(hr->arms[a].params[i]);
		spec_knobs_done(&hr->arms[a].runtime);
		if (hr->arms[a].vmlinux)
			unlink(hr->arms[a].vmlinux);
		free(hr->arms[a].vmlinux);
	}
	free(hr->arms);
	free(hr->init_path);
	free(hr->inner_path);
	free(hr);
}

static int find_program(const char *build_rel, const char *name, char **ret, struct sb_error *err)
{
	char cand[PATH_MAX];
	int k = runner_find_in_build_tree(build_rel, ret, err);

	if (k != 0)
		return k < 0 ? k : 0;
	snprintf(cand, sizeof(cand), "%s/%s", LIBEXECDIR, name);
	if (access(cand, X_OK) < 0)
		return sb_error_set(err, -ENOENT, "host VM: %s is not installed (%s); install snapbench or run it from its build tree",
				    name, cand);
	*ret = strdup(cand);
	return *ret ? 0 : sb_error_set(err, -ENOMEM, "out of memory");
}

static int append_param(char *buf, size_t len, const char *fmt_mod, const char *param, const char *value)
{
	size_t used = strlen(buf);
	int n = snprintf(buf + used, len - used, "%s%s%s%s=%s", used ? " " : "", fmt_mod ? fmt_mod : "",
			 fmt_mod ? "." : "", param, value);

	return n < 0 || (size_t)n >= len - used ? -E2BIG : 0;
}

/*
 * A load-time parameter the module does not have is ignored by the kernel
 * (a message on the console, no error): the arm would run as if the knob
 * were unset. Refused here, before a boot, where the module's .modinfo
 * says; let through where it cannot be read (module-params.h).
 */
static int check_param(const struct hostvm_arm *arm, const char *mod, const char *param, const char *knob,
		       struct sb_error *err)
{
	struct sb_error e = {};
	int r = hostvm_module_has_param(&arm->modules, mod, param, &e);

	if (r == 0)
		return sb_error_set(err, -EINVAL,
				    "knob %s: kernel %s's module %s has no parameter %s (its modinfo lists none), so the "
				    "kernel would ignore it and the arm run as if it were unset; drop the knob from the arm, "
				    "or give the arm a kernel whose %s has it (a patched build that adds it)",
				    knob, arm->kernel.release, mod, param, mod);
	if (r < 0 && r != -ENODATA)
		return sb_error_set(err, r, "knob %s: %s", knob, e.msg);
	return 0;
}

/*
 * The arm's knobs: module:M.P of a module the host VM loads is passed when
 * it loads M; of a built-in one on the kernel command line; the rest
 * (sysctls, other modules' writable parameters) are applied inside.
 */
static int split_knobs(const struct run_spec *spec, size_t a, struct hostvm_arm *arm, struct sb_error *err)
{
	struct spec_knobs k = {};
	int r = spec_arm_knobs(spec, a, &k);

	if (r < 0)
		return sb_error_set(err, r, "out of memory");
	for (size_t i = 0; i < k.n; i++) {
		const char *name = k.items[i].name, *value = k.items[i].value;
		char mod[128];
		const char *dot;
		bool placed = false;

		if (!strncmp(name, "module:", 7) && (dot = strchr(name + 7, '.')) && (size_t)(dot - name - 7) < sizeof(mod)) {
			snprintf(mod, sizeof(mod), "%.*s", (int)(dot - name - 7), name + 7);
			for (char *p = mod; *p; p++)
				if (*p == '-')
					*p = '_';
			r = check_param(arm, mod, dot + 1, name, err);
			if (r < 0) {
				spec_knobs_done(&k);
				return r;
			}
			for (size_t m = 0; m < arm->modules.n && m < ARRAY_SIZE(arm->params); m++) {
				if (strcmp(arm->modules.items[m].name, mod))
					continue;
				char buf[MAX_PARAMS] = "";
				if (arm->params[m])
					snprintf(buf, sizeof(buf), "%s", arm->params[m]);
				r = append_param(buf, sizeof(buf), NULL, dot + 1, value);
				free(arm->params[m]);
				arm->params[m] = r < 0 ? NULL : strdup(buf);
				placed = true;
			}
			if (!placed && (!strcmp(mod, "kvm") || !strncmp(mod, "kvm_", 4))) {
				r = append_param(arm->builtin_params, sizeof(arm->builtin_params), mod, dot + 1, value);
				placed = true;
			}
			if (r < 0) {
				spec_knobs_done(&k);
				return sb_error_set(err, r, "spec.arms[%zu]: the module parameters are too long", a);
			}
		}
		if (placed)
			continue;
		struct spec_knob *n = realloc(arm->runtime.items, (arm->runtime.n + 1) * sizeof(*n));
		if (!n) {
			spec_knobs_done(&k);
			return sb_error_set(err, -ENOMEM, "out of memory");
		}
		arm->runtime.items = n;
		n[arm->runtime.n].name = strdup(name);
		n[arm->runtime.n].value = strdup(value);
		arm->runtime.n++;
	}
	spec_knobs_done(&k);
	return 0;
}

static struct report_kernel *kernel_report(const struct run_spec *spec, const struct hostvm_run *hr,
					   const struct hostvm_arm *arm)
{
	struct report_kernel *k = calloc(1, sizeof(*k));
	char params[MAX_PARAMS * 2] = "";

	if (!k)
		return NULL;
	for (size_t m = 0; m < arm->modules.n && m < ARRAY_SIZE(arm->params); m++) {
		_cleanup_free_ char *copy = arm->params[m] ? strdup(arm->params[m]) : NULL;
		char *save = NULL;
		for (char *t = copy ? strtok_r(copy, " ", &save) : NULL; t; t = strtok_r(NULL, " ", &save)) {
			size_t u = strlen(params);
			snprintf(params + u, sizeof(params) - u, "%s%s.%s", u ? " " : "", arm->modules.items[m].name, t);
		}
	}
	if (*arm->builtin_params) {
		size_t u = strlen(params);
		snprintf(params + u, sizeof(params) - u, "%s%s", u ? " " : "", arm->builtin_params);
	}
	if (kernel_id_copy(&arm->kernel, &k->id) < 0) {
		free(k);
		return NULL;
	}
	k->modules = arm->modules.dir ? strdup(arm->modules.dir) : NULL;
	k->cmdline = strdup(arm->cmdline);
	k->module_params = *params ? strdup(params) : NULL;
	k->booted = strdup(arm->vmlinux ? "pvh" : "bzimage");
	k->accel = strdup(hr->accel);
	k->accel_reason = strdup(hr->accel_reason);
	k->vcpus = spec->host_vm.vcpus;
	k->numa_nodes = spec->host_vm.numa_nodes;
	k->memory_bytes = spec->host_vm.memory;
	return k;
}

/*
 * Under TCG the emulated CPU takes seconds to decompress a bzImage: boot its
 * payload, unpacked here once per arm, through its PVH entry when it has one.
 */
static int unpack_vmlinux(const char *run_dir, size_t a, struct hostvm_arm *arm, struct sb_error *err)
{
	char path[PATH_MAX];
	int k;

	snprintf(path, sizeof(path), "%.4000s/hostvm-vmlinux-%zu", run_dir, a);
	k = hostvm_kernel_extract_vmlinux(arm->kernel.image, path, &arm->kernel.build_id, err);
	if (k < 0)
		return k;
	if (k > 0 && !(arm->vmlinux = strdup(path))) {
		unlink(path);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * An arm whose kernel is a RISC-V Image (Debian's riscv64 vmlinuz, a
 * `snapbench kernel build --arch riscv64`): its host VM is riscv64's
 * (docs/kernel-arms.md#the-riscv64-host-vm), which needs
 * qemu-system-riscv64 and cannot run this run's guest, an x86 one (the
 * micro guest or a Linux guest's disk image). Refused before any boot,
 * naming what to do instead (the caller names the arm). A libvirt backend
 * is refused before, for every host VM (spec validation).
 */
static int refuse_riscv64_arm(const struct run_spec *spec, const char *image, struct sb_error *err)
{
	_cleanup_free_ char *qemu = NULL;
	int k;

	if (!hostvm_kernel_is_riscv_image(image))
		return 0;
	k = spawn_find_program(HOSTVM_RISCV64_QEMU, &qemu);
	if (k == -ENOMEM)
		return sb_error_set(err, k, "out of memory");
	if (k < 0)
		return sb_error_set(err, -ENOENT, "kernel %s is a riscv64 Image, whose host VM needs " HOSTVM_RISCV64_QEMU
				    ", not found in PATH: install qemu-system-misc and opensbi (scripts/install-deps)", image);
	return sb_error_set(err, -EOPNOTSUPP,
			    "kernel %s is a riscv64 Image: a riscv64 host VM cannot run this run's %s guest, an x86 "
			    "one; snapbench run takes x86 kernels only, a riscv64 kernel's KVM selftest runs through "
			    "tests/realkvm/hostvm-exec --riscv64 (docs/kernel-arms.md, \"The riscv64 host VM\")",
			    image, spec->guest.kind == SPEC_GUEST_LINUX ? "Linux" : "micro");
}

int hostvm_run_prepare(const struct run_spec *spec, struct report *report, const char *run_dir,
		       struct hostvm_run **ret, struct sb_error *err)
{
	struct hostvm_run *hr = calloc(1, sizeof(*hr));
	int k;

	if (!hr)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (geteuid() != 0) {
		k = sb_error_set(err, -EPERM,
				 "kernel arms: the host VM loads KVM and BPF inside and shares this host's / as root; run snapbench as root");
		goto fail;
	}
	k = hostvm_choose_accel(spec->host_vm.accel, NULL, hr->accel, hr->vendor, hr->accel_reason,
				sizeof(hr->accel_reason), err);
	if (k < 0)
		goto fail;
	k = find_program("libexec/hostvm-init/" INIT_NAME, INIT_NAME, &hr->init_path, err);
	if (k >= 0)
		k = find_program("libexec/hostvm-run/" INNER_NAME, INNER_NAME, &hr->inner_path, err);
	if (k < 0)
		goto fail;
	hr->arms = calloc(spec->n_arms, sizeof(*hr->arms));
	if (!hr->arms) {
		k = sb_error_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	hr->n_arms = spec->n_arms;
	for (size_t a = 0; a < spec->n_arms; a++) {
		struct hostvm_arm *arm = &hr->arms[a];
		_cleanup_free_ char *dir = NULL;
		const char *image = spec_arm_kernel(spec, a);

		k = refuse_riscv64_arm(spec, image, err);
		if (k >= 0)
			k = hostvm_kernel_identify(image, &arm->kernel, err);
		if (k >= 0)
			k = hostvm_modules_dir(spec_arm_modules(spec, a), image, arm->kernel.release, &dir, err);
		if (k >= 0)
			k = hostvm_modules_resolve(dir, hr->vendor, &arm->modules, err);
		if (k >= 0 && arm->modules.n > ARRAY_SIZE(arm->params))
			k = sb_error_set(err, -E2BIG, "modules tree %s: more than %zu modules to load", dir, ARRAY_SIZE(arm->params));
		if (k >= 0)
			k = split_knobs(spec, a, arm, err);
		if (k >= 0 && run_dir)
			k = unpack_vmlinux(run_dir, a, arm, err);
		if (k < 0) {
			sb_error_prefix(err, "arm '%s'", spec->arms[a].label);
			goto fail;
		}
		/*
		 * pci=noacpi: the PCI devices' interrupt links are not run through
		 * ACPI's AML (0.2-0.26 s each for the three virtio devices under
		 * TCG; virtio uses MSI-X); cryptomgr.notests: no self-test of every
		 * crypto algorithm at boot (0.3 s). Neither touches KVM or MM.
		 */
		snprintf(arm->cmdline, sizeof(arm->cmdline), HOSTVM_CMDLINE "%s%s%s%s",
			 *arm->builtin_params ? " " : "", arm->builtin_params, spec->host_vm.cmdline ? " " : "",
			 spec->host_vm.cmdline ? spec->host_vm.cmdline : "");
		struct report_kernel *rk = kernel_report(spec, hr, arm);
		if (!rk || report_arm_set_kernel(report, a, rk) < 0) {
			k = sb_error_set(err, -ENOMEM, "out of memory");
			goto fail;
		}
	}
	*ret = hr;
	return 0;
fail:
	hostvm_run_free(hr);
	return k;
}

/* ---- one repetition ---- */

static int write_text(const char *path, const char *text, struct sb_error *err)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = strlen(text);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		return sb_error_set(err, -errno ? -errno : -EIO, "%s: %s", path, strerror(errno));
	return 0;
}

/*
 * The spec the run engine inside runs: this arm only (as spec_to_json()
 * writes it, so every arm field goes in), one repetition, its runtime
 * knobs, and no kernel of its own (the engine inside runs on it), nor a
 * host VM of its own should its KVM be missing (host_vm.fallback false).
 */
static int inner_spec(const struct run_spec *spec, const struct hostvm_arm *arm, size_t arm_index, const char *path,
		      struct sb_error *err)
{
	struct json_object *o = NULL, *all = NULL, *arms, *a, *knobs;
	int k = spec_to_json(spec, &o);

	if (k < 0)
		return sb_error_set(err, k, "out of memory");
	/* inside, KVM is the kernel under test's: a host VM with no usable KVM refuses rather than nest another */
	struct json_object *h = json_object_new_object();
	json_object_object_add(h, "fallback", json_object_new_boolean(false));
	json_object_object_add(o, "host_vm", h);
	json_object_object_add(o, "repetitions", json_object_new_int(1));
	json_object_object_add(o, "knobs", json_object_new_object());
	json_object_object_get_ex(o, "arms", &all);
	a = json_object_get(json_object_array_get_idx(all, arm_index));
	arms = json_object_new_array();
	knobs = json_object_new_object();
	for (size_t i = 0; knobs && i < arm->runtime.n; i++)
		json_object_object_add(knobs, arm->runtime.items[i].name, json_object_new_string(arm->runtime.items[i].value));
	if (!a || !arms || !knobs) {
		json_object_put(a);
		json_object_put(arms);
		json_object_put(knobs);
		json_object_put(o);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	json_object_object_del(a, "kernel");
	json_object_object_del(a, "modules");
	json_object_object_add(a, "knobs", knobs);
	json_object_array_add(arms, a);
	json_object_object_add(o, "arms", arms);
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	k = text ? write_text(path, text, err) : sb_error_set(err, -ENOMEM, "out of memory");
	json_object_put(o);
	return k;
}

/* The paths the host VM must see as they are on this host: no tmpfs over them. */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return path && !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

static int build_initramfs(const struct hostvm_run *hr, const struct hostvm_arm *arm, const struct hostvm_rep_ctx *ctx,
			   const char *rep_dir, const char *inner_spec_path, const char *out_dir, const char *path,
			   struct sb_error *err)
{
	static const char *const tmpfs[] = { "/run", "/tmp", "/var/tmp", "/root" };
	_cleanup_free_ char *conf = NULL;
	struct strbuf b = {};

	for (size_t i = 0; i < ARRAY_SIZE(tmpfs); i++) {
		if (under(rep_dir, tmpfs[i]) || under(hr->inner_path, tmpfs[i]) || under(ctx->guest_image, tmpfs[i]) ||
		    under(ctx->qemu_binary, tmpfs[i]))
			continue;
		strbuf_appendf(&b, "tmpfs %s\n", tmpfs[i]);
	}
	strbuf_appendf(&b, "port %s\n", HOSTVM_PORT_NAME);
	strbuf_appendf(&b, "out out %s\n", rep_dir);
	strbuf_append(&b, "env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n");
	strbuf_append(&b, "env HOME=/root\n");
	if (ctx->guest_image)
		strbuf_appendf(&b, "env SNAPBENCH_GUEST_IMAGE=%s\n", ctx->guest_image);
	if (!inner_spec_path) {
		/* hostvm_boot_once(): the runner says it is ready and exits */
		strbuf_appendf(&b, "arg %s\narg --boot-only\n", hr->inner_path);
	} else {
		/* the knob journal's directory; not /run/snapbench, whose knobs.lock is the host-wide lock */
		strbuf_appendf(&b, "arg %s\narg --spec\narg %s\narg --output\narg %s\narg --state-dir\narg /run/snapbench-hostvm\n",
			       hr->inner_path, inner_spec_path, out_dir);
	}
	if (ctx->guest_image)
		strbuf_appendf(&b, "arg --guest-image\narg %s\n", ctx->guest_image);
	if (ctx->qemu_binary)
		strbuf_appendf(&b, "arg --qemu\narg %s\n", ctx->qemu_binary);
	conf = strbuf_steal(&b);
	if (!conf)
		return sb_error_set(err, -ENOMEM, "out of memory");
	return hostvm_initramfs_write(path, hr->init_path, &arm->modules, (const char *const *)arm->params, conf, err);
}

/*
 * A PVH boot needs no BIOS services: QEMU's qboot (qemu-system-data) starts
 * the kernel about half a second sooner than SeaBIOS under TCG
 * (docs/kernel-arms.md); a bzImage, or a host without it, keeps SeaBIOS
 */
#define QBOOT_ROM "/usr/share/qemu/qboot.rom"

/* The host VM of ctx's arm: its kernel, this initramfs, the root and results shares. */
static void vm_config(const struct hostvm_run *hr, const struct hostvm_rep_ctx *ctx, const char *initrd,
		      const char *log_path, const char *out_dir, struct hostvm_config *cfg)
{
	const struct hostvm_arm *arm = &hr->arms[ctx->arm];

	*cfg = (struct hostvm_config){
		.qemu_binary = ctx->qemu_binary,
		.kernel = arm->vmlinux ? arm->vmlinux : arm->kernel.image,
		.initrd = initrd,
		.append = arm->cmdline,
		.memory = ctx->spec->host_vm.memory,
		.vcpus = ctx->spec->host_vm.vcpus,
		.numa_nodes = ctx->spec->host_vm.numa_nodes,
		.accel = hr->accel,
		.log_path = log_path,
		.firmware = arm->vmlinux && access(QBOOT_ROM, R_OK) == 0 ? QBOOT_ROM : NULL,
		.n_shares = 2,
		.shares = { { .tag = "root", .path = "/", .readonly = true }, { .tag = "out", .path = out_dir } },
	};
}

struct follow {
	const struct hostvm_rep_ctx *ctx;
	struct report_rep *rep; /* the repetition's record; NULL for a boot alone (hostvm_boot_once()) */
	struct hostvm *vm;
	bool ready, done, exit_seen;
	double boot_s;
	double init_uptime_s, ready_uptime_s; /* the host VM's own clock at its init's and runner's first words */
	char error[1024];
	char step[32];
	uint64_t last_word_ns; /* mono_ns() of the last line from inside */
};

/*
 * The init's {"event":"kernel","taint":N,"warnings":[...]}
 * (libexec/hostvm-init): the kernel's taint once the run ended and its
 * first warnings, into the repetition (none: not known, as again() leaves it).
 */
static void on_kernel_event(struct follow *f, struct json_object *o)
{
	struct report_rep *rep = f->rep;
	struct json_object *v;

	if (!rep || !json_object_object_get_ex(o, "taint", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return;
	rep->host_vm_taint = json_object_get_int64(v);
	rep->host_vm_kernel_warnings = strv_free(rep->host_vm_kernel_warnings);
	if (!json_object_object_get_ex(o, "warnings", &v) || !json_object_is_type(v, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		struct json_object *w = json_object_array_get_idx(v, i);
		if (json_object_is_type(w, json_type_string) &&
		    strv_push(&rep->host_vm_kernel_warnings, json_object_get_string(w)) < 0)
			break; /* out of memory: the warnings that fit */
	}
}

static double num_or_nan(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && v &&
			       (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))
		       ? json_object_get_double(v)
		       : NAN;
}

/* The port's lines are one JSON object each, none nested deeper than this. */
#define PORT_MAX_DEPTH 4

static void on_line(const char *text, void *userdata)
{
	struct follow *f = userdata;
	struct json_object *o = NULL, *v;
	const char *event = NULL;

	f->last_word_ns = mono_ns();
	if (json_parse_text(text, strlen(text), PORT_MAX_DEPTH, 0, &o, NULL) < 0 || !o)
		return;
	if (json_object_object_get_ex(o, "event", &v))
		event = json_object_get_string(v);
	if (!event) {
		json_object_put(o);
		return;
	}
	if (!strcmp(event, "ready") && !f->ready) {
		f->ready = true;
		f->boot_s = (double)(mono_ns() - f->vm->start_ns) / 1e9;
		f->ready_uptime_s = num_or_nan(o, "t_s");
	} else if (!strcmp(event, "init")) {
		f->init_uptime_s = num_or_nan(o, "t_s");
	} else if (!strcmp(event, "error")) {
		if (json_object_object_get_ex(o, "message", &v))
			snprintf(f->error, sizeof(f->error), "%s", json_object_get_string(v));
	} else if (!strcmp(event, "done")) {
		f->done = true;
	} else if (!strcmp(event, "kernel")) {
		on_kernel_event(f, o);
	} else if (!strcmp(event, "exit")) {
		f->exit_seen = true;
	} else if (!strcmp(event, "progress") && f->ctx->progress) {
		struct run_progress_buf b;
		if (run_progress_from_json(o, &b) == 0) {
			if (b.p.step)
				snprintf(f->step, sizeof(f->step), "%s", b.p.step);
			b.p.step = f->step;
			f->ctx->progress(&b.p, f->ctx->userdata);
		}
	}
	json_object_put(o);
}

static void say_step(const struct hostvm_rep_ctx *ctx, const char *step)
{
	struct runner_progress p = {
		.step = step,
		.rates = RUN_RATES_NONE,
		.snapshot_fraction = NAN,
		.waiting_s = NAN,
	};

	if (ctx->progress)
		ctx->progress(&p, ctx->userdata);
}

static void fail_rep(struct report_rep *rep, enum report_rep_state state, const char *phase, const char *msg)
{
	rep->state = state;
	report_error_set(&rep->error, phase, msg);
}

/* RUN_DIR/hostvm-repN: the repetition's host VM files. */
static void rep_dir_path(const char *run_dir, unsigned index, char *buf, size_t len)
{
	snprintf(buf, len, "%.3900s/hostvm-rep%u", run_dir, index);
}

/* The files of one repetition's host VM, under RUN_DIR/hostvm-repN. */
struct rep_paths {
	char rep_dir[PATH_MAX], out_dir[PATH_MAX + 8], spec_path[PATH_MAX + 16], initrd[PATH_MAX + 16];
	char log_path[PATH_MAX + 16], pid_path[PATH_MAX + 16], report_path[PATH_MAX + 32];
};

static void rep_paths_fill(const char *run_dir, unsigned index, struct rep_paths *p)
{
	rep_dir_path(run_dir, index, p->rep_dir, sizeof(p->rep_dir));
	snprintf(p->out_dir, sizeof(p->out_dir), "%s/run", p->rep_dir);
	snprintf(p->spec_path, sizeof(p->spec_path), "%s/spec.json", p->rep_dir);
	snprintf(p->initrd, sizeof(p->initrd), "%s/initramfs.cpio", p->rep_dir);
	snprintf(p->log_path, sizeof(p->log_path), "%s/console.log", p->rep_dir);
	/* where a supervisor looks for a crashed run's QEMU (snapbenchd's recovery) */
	snprintf(p->pid_path, sizeof(p->pid_path), "%.3900s/%s", run_dir, RUN_DIR_QEMU_PID);
	snprintf(p->report_path, sizeof(p->report_path), "%s/" RUN_DIR_REPORT, p->out_dir);
}

/* one repetition in a host VM: the state of hostvm_rep_phases (rep.h) */
struct hostvm_rep {
	struct hostvm_run *hr;
	const struct hostvm_rep_ctx *ctx;
	struct report_rep *rep; /* made by the first prepare; an attempt again keeps it */
	char phase[64]; /* the report's error phase: "rep N host-vm" */
	struct rep_paths paths;
	struct hostvm *vm;
	struct follow f;
	bool inner_failed; /* the run inside failed its repetition: the error it reported stands */
	bool retried;      /* this is the fresh host VM after a silent one */
};

/* prepare: the host VM's files' paths, and the repetition's record in the report (once) with them */
static int hostvm_rep_prepare(void *userdata, struct sb_error *err)
{
	struct hostvm_rep *h = userdata;
	const struct hostvm_rep_ctx *ctx = h->ctx;
	struct report_rep *rep;
	_cleanup_free_ char *run_dir = realpath(ctx->run_dir, NULL);
	int k;

	snprintf(h->phase, sizeof(h->phase), "rep %u host-vm", ctx->index);
	if (!run_dir)
		return sb_error_set(err, -errno, "run directory %s: %s", ctx->run_dir, strerror(errno));
	if (!h->rep) {
		k = ctx->record(ctx->userdata, ctx->index, ctx->arm, &h->rep, err);
		if (k < 0)
			return k;
	}
	rep = h->rep;
	rep_paths_fill(run_dir, ctx->index, &h->paths);
	h->vm = NULL;
	h->f = (struct follow){ .ctx = ctx, .rep = rep, .boot_s = -1 };
	h->inner_failed = false;
	rep->host_vm = true;
	rep->host_vm_console = strdup(h->paths.log_path);
	rep->memory_bytes = ctx->spec->vm.memory;
	rep->vcpus = ctx->spec->vm.vcpus;
	return 0;
}

/* boot: the host VM's spec and initramfs written, then it started */
static int hostvm_rep_boot(void *userdata, struct sb_error *err)
{
	struct hostvm_rep *h = userdata;
	const struct hostvm_rep_ctx *ctx = h->ctx;
	const struct rep_paths *p = &h->paths;
	struct hostvm_arm *arm = &h->hr->arms[ctx->arm];
	struct hostvm_config cfg;
	char name[96];
	int k;

	k = mkdir_p(p->out_dir, 0755);
	if (k < 0)
		return sb_error_set(err, k, "host VM results directory %s: %s", p->out_dir, strerror(-k));
	k = inner_spec(ctx->spec, arm, ctx->arm, p->spec_path, err);
	if (k >= 0)
		k = build_initramfs(h->hr, arm, ctx, p->rep_dir, p->spec_path, p->out_dir, p->initrd, err);
	if (k < 0)
		return k;
	snprintf(name, sizeof(name), "snapbench-hostvm-%s-rep%u", ctx->report->id, ctx->index);
	vm_config(h->hr, ctx, p->initrd, p->log_path, p->rep_dir, &cfg);
	cfg.pid_path = p->pid_path;
	cfg.name = name;
	k = hostvm_start(&cfg, &h->vm, err);
	if (k < 0)
		return k;
	h->f.vm = h->vm;
	h->rep->host_vm_pid = h->vm->pid;
	/* a step of its own: the report is written with the QEMU's pid before the host VM can be ready */
	say_step(ctx, "host-vm-boot");
	return 0;
}

/*
 * windows (the run engine inside measures them): follows the host VM's port
 * until it ends: 0 once it exited or said it was done; -ECANCELED when the
 * run was cancelled; -ETIMEDOUT when it did not boot or run in time;
 * -EHOSTDOWN when it went silent. The host VM is killed on every error.
 */
static int hostvm_rep_follow(void *userdata, struct sb_error *err)
{
	struct hostvm_rep *h = userdata;
	const struct hostvm_rep_ctx *ctx = h->ctx;
	const struct hostvm_run *hr = h->hr;
	struct hostvm *vm = h->vm;
	struct follow *f = &h->f;
	const char *log_path = h->paths.log_path;
	const struct run_spec *spec = ctx->spec;
	double run_s = spec->timing.warmup_s + spec->timing.pre_s + spec->timing.post_s + spec->snapshot.timeout_s + 240;
	uint64_t boot_deadline = vm->start_ns + (uint64_t)(spec->host_vm.boot_timeout_s * 1e9), run_deadline = 0;
	bool port_open = true;
	char tail[2048];

	for (;;) {
		struct pollfd p = { .fd = vm->port_fd, .events = POLLIN };
		uint64_t now = mono_ns();

		if (ctx->cancel && *ctx->cancel) {
			hostvm_kill(vm);
			return sb_error_set(err, -ECANCELED, "cancelled while the host VM ran; QEMU (pid %d) was killed", vm->pid);
		}
		if (port_open) {
			poll(&p, 1, 100);
			if (hostvm_read_port(vm, on_line, f) == -EPIPE)
				port_open = false;
		} else {
			usleep(100000);
		}
		if (f->ready && !run_deadline)
			run_deadline = now + (uint64_t)(run_s * 1e9);
		if (hostvm_exited(vm))
			return 0;
		if (!f->ready && now > boot_deadline) {
			hostvm_kill(vm);
			hostvm_console_tail(log_path, CONSOLE_TAIL_LINES, tail, sizeof(tail));
			return sb_error_set(err, -ETIMEDOUT,
					    "the host VM did not reach the runner within %.0f s (host_vm.boot_timeout_s; %s) and was killed; console: %s",
					    spec->host_vm.boot_timeout_s, hr->accel, *tail ? tail : "(empty)");
		}
		if (f->ready && !f->done && !f->exit_seen && f->last_word_ns &&
		    now > f->last_word_ns + (uint64_t)SILENCE_LIMIT_S * NSEC_PER_SEC) {
			hostvm_kill(vm);
			hostvm_console_tail(log_path, CONSOLE_TAIL_LINES, tail, sizeof(tail));
			return sb_error_set(err, -EHOSTDOWN,
					    "the host VM went silent in the %s step: no word from the runner inside for %d s "
					    "(it sends one every %d s, so the host VM's kernel is stuck; under TCG a soft lockup "
					    "of a vCPU in KVM was seen) and was killed; console: %s",
					    *f->step ? f->step : "first", SILENCE_LIMIT_S, HOSTVM_HEARTBEAT_S, *tail ? tail : "(empty)");
		}
		if (run_deadline && now > run_deadline) {
			hostvm_kill(vm);
			hostvm_console_tail(log_path, CONSOLE_TAIL_LINES, tail, sizeof(tail));
			return sb_error_set(err, -ETIMEDOUT, "the host VM's run took longer than %.0f s and was killed; console: %s",
					    run_s, *tail ? tail : "(empty)");
		}
		if ((f->done || f->exit_seen) && hostvm_wait(vm, EXIT_GRACE_MS) < 0)
			return 0;
	}
}

/* How the host VM's QEMU ended, for a message. */
static void describe_qemu_end(int wait_status, char *buf, size_t len)
{
	/* -no-reboot: status 0 is the host VM's kernel resetting (panic=-1, a triple fault) or powering off */
	if (WIFEXITED(wait_status))
		snprintf(buf, len, "QEMU exited with status %d%s", WEXITSTATUS(wait_status),
			 WEXITSTATUS(wait_status) == 0 ? ": its kernel reset, panicked or powered off" : "");
	else if (WIFSIGNALED(wait_status))
		snprintf(buf, len, "QEMU was killed by signal %d", WTERMSIG(wait_status));
	else
		snprintf(buf, len, "QEMU ended");
}

/*
 * Takes over the repetition the run engine inside wrote through the results
 * share (what was measured before the end is kept); an error when its run
 * did not finish or failed before its repetition.
 */
static int rep_import_inner(const struct hostvm_rep_ctx *ctx, const struct hostvm *vm, const struct follow *f,
			    const struct rep_paths *p, struct sb_error *err)
{
	_cleanup_json_ struct json_object *inner = NULL;
	struct json_object *reps = NULL, *st = NULL, *ie = NULL, *im = NULL;
	struct sb_error e = {};
	char tail[2048], how[96];
	bool have = report_read(p->report_path, &inner, &e) >= 0;
	bool finished = have && json_object_object_get_ex(inner, "state", &st) &&
			strcmp(json_object_get_string(st), "running") && strcmp(json_object_get_string(st), "queued");
	size_t n_reps = have && json_object_object_get_ex(inner, "repetitions", &reps) ? json_object_array_length(reps) : 0;

	if (n_reps && report_rep_import(ctx->report, f->rep, inner, 0, &e) < 0 && finished) {
		*err = e;
		return e.code;
	}
	if (!finished) {
		/* the host VM ended before its run did: killed, panicked, or init gave up */
		hostvm_console_tail(p->log_path, CONSOLE_TAIL_LINES, tail, sizeof(tail));
		describe_qemu_end(vm->wait_status, how, sizeof(how));
		return sb_error_set(err, -EIO, "the host VM ended (%s%s%s) before its run %s%s; console: %s", how,
				    *f->error ? ": " : "", f->error, have ? "finished" : "wrote a report",
				    f->ready ? "" : " (it never reached the runner)", *tail ? tail : "(empty)");
	}
	if (!n_reps) {
		/* the run inside failed before its repetition (preflight, knobs): say why */
		json_object_object_get_ex(inner, "error", &ie);
		json_object_object_get_ex(ie, "message", &im);
		return sb_error_set(err, -EIO, "the run inside the host VM failed before its repetition: %s",
				    im ? json_object_get_string(im) : "(no message)");
	}
	return 0;
}

/*
 * summarize: the port drained of what QEMU's end left in it (the init's word
 * on the kernel among it), then the repetition taken over from the run
 * inside; an error when that repetition did not complete.
 */
static int hostvm_rep_take_over(void *userdata, struct sb_error *err)
{
	struct hostvm_rep *h = userdata;
	struct report_rep *rep = h->rep;
	int k;

	hostvm_read_port(h->vm, on_line, &h->f);
	rep->host_vm_boot_s = h->f.boot_s;
	k = rep_import_inner(h->ctx, h->vm, &h->f, &h->paths, err);
	if (k < 0)
		return k;
	if (rep->state != REPORT_REP_COMPLETED) {
		h->inner_failed = true;
		return sb_error_set(err, -EIO, "%s", rep->error.message ? rep->error.message : "the repetition inside the host VM failed");
	}
	return 0;
}

/* teardown: after an error the repetition cancelled or failed with it; the host VM killed and freed */
static void hostvm_rep_end(void *userdata, int k, enum rep_phase failed, const struct sb_error *err)
{
	struct hostvm_rep *h = userdata;
	struct report_rep *rep = h->rep;

	(void)failed;
	if (k == -ECANCELED)
		fail_rep(rep, REPORT_REP_CANCELLED, h->phase, err->msg);
	else if (k < 0 && !h->inner_failed)
		fail_rep(rep, REPORT_REP_FAILED, h->phase, err->msg);
	if (h->vm) {
		hostvm_kill(h->vm);
		rep->host_vm_boot_s = h->f.boot_s;
	}
	hostvm_free(h->vm);
	h->vm = NULL;
	rep->finished_ns = realtime_ns();
}

/*
 * again: a host VM whose kernel hung (a soft lockup of a vCPU in KVM was
 * seen under TCG, intermittently) measured nothing of the kernel under
 * test: the repetition gets one fresh host VM, the report says why
 * (host_vm.retried_after), and the first one's directory is kept as
 * hostvm-repN.silent. Any other failure, and a second silence, fail the
 * repetition.
 */
static bool hostvm_rep_again(void *userdata, int k, struct sb_error *err)
{
	struct hostvm_rep *h = userdata;
	const struct hostvm_rep_ctx *ctx = h->ctx;
	struct report_rep *rep = h->rep;
	char dir[PATH_MAX], kept[PATH_MAX + 8];
	_cleanup_free_ char *run_dir = NULL;

	if (k != -EHOSTDOWN || h->retried || (ctx->cancel && *ctx->cancel))
		return false;
	run_dir = realpath(ctx->run_dir, NULL);
	if (!run_dir)
		return false;
	rep_dir_path(run_dir, ctx->index, dir, sizeof(dir));
	snprintf(kept, sizeof(kept), "%s.silent", dir);
	if (rename(dir, kept) < 0)
		return false; /* the error stands */
	h->retried = true;
	free(rep->host_vm_retried);
	rep->host_vm_retried = strdup(err->msg);
	free(rep->host_vm_console);
	rep->host_vm_console = NULL;
	rep->host_vm_pid = 0;
	rep->host_vm_boot_s = -1;
	rep->host_vm_taint = -1;
	rep->host_vm_kernel_warnings = strv_free(rep->host_vm_kernel_warnings);
	rep->state = REPORT_REP_RUNNING;
	report_error_set(&rep->error, NULL, NULL);
	sb_error_clear(err);
	return true;
}

static const struct rep_phases hostvm_rep_phases = {
	.prepare = hostvm_rep_prepare,
	.boot = hostvm_rep_boot,
	.windows = hostvm_rep_follow,
	.summarize = hostvm_rep_take_over,
	.teardown = hostvm_rep_end,
	.again = hostvm_rep_again,
};

int hostvm_rep_run(struct hostvm_run *hr, const struct hostvm_rep_ctx *ctx, struct sb_error *err)
{
	struct hostvm_rep h = { .hr = hr, .ctx = ctx };

	return rep_phases_run(&hostvm_rep_phases, &h, err);
}

int hostvm_boot_once(struct hostvm_run *hr, const struct hostvm_rep_ctx *ctx, const char *work_dir,
		     struct hostvm_boot_figures *fig, struct sb_error *err)
{
	const struct run_spec *spec = ctx->spec;
	struct hostvm_arm *arm = &hr->arms[ctx->arm];
	_cleanup_free_ char *dir = realpath(work_dir, NULL);
	char initrd[PATH_MAX + 16], log_path[PATH_MAX + 16], tail[1024];
	struct follow f = { .ctx = ctx, .boot_s = -1, .init_uptime_s = NAN, .ready_uptime_s = NAN };
	struct hostvm *vm = NULL;
	uint64_t ready_ns = 0;
	int k;

	if (!dir)
		return sb_error_set(err, -errno, "%s: %s", work_dir, strerror(errno));
	snprintf(initrd, sizeof(initrd), "%.4000s/initramfs.cpio", dir);
	snprintf(log_path, sizeof(log_path), "%.4000s/console.log", dir);
	k = build_initramfs(hr, arm, ctx, dir, NULL, dir, initrd, err);
	if (k < 0)
		return k;
	struct hostvm_config cfg;
	vm_config(hr, ctx, initrd, log_path, dir, &cfg);
	cfg.name = "snapbench-hostvm-boot";
	k = hostvm_start(&cfg, &vm, err);
	if (k < 0)
		return k;
	f.vm = vm;
	uint64_t deadline = vm->start_ns + (uint64_t)(spec->host_vm.boot_timeout_s * 1e9) + 30 * NSEC_PER_SEC;
	while (!hostvm_exited(vm)) {
		struct pollfd p = { .fd = vm->port_fd, .events = POLLIN };
		poll(&p, 1, 50);
		hostvm_read_port(vm, on_line, &f);
		if (f.ready && !ready_ns)
			ready_ns = mono_ns();
		if (mono_ns() > deadline) {
			hostvm_kill(vm);
			break;
		}
	}
	uint64_t end = mono_ns();
	if (!f.ready) {
		hostvm_console_tail(log_path, CONSOLE_TAIL_LINES, tail, sizeof(tail));
		hostvm_free(vm);
		return sb_error_set(err, -ETIMEDOUT, "the host VM did not reach the runner; console: %s", *tail ? tail : "(empty)");
	}
	fig->boot_s = f.boot_s;
	fig->init_uptime_s = f.init_uptime_s;
	fig->ready_uptime_s = f.ready_uptime_s;
	fig->teardown_s = (double)(end - ready_ns) / 1e9;
	hostvm_free(vm);
	return 0;
}
