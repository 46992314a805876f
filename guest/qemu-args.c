// SPDX-License-Identifier: GPL-2.0-or-later
#include "qemu-args.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "qemu-binary.h"
#include "strv.h"
#include "wire.h"

#define MAX_ARGS 64

/* The argv being built; the first failure latches (-E2BIG or -ENOMEM) and later adds do nothing. */
struct args {
	char **v;
	size_t n;
	int oom;
};

static _printf_(2, 3) void add(struct args *s, const char *fmt, ...)
{
	va_list ap;
	char *arg;

	if (s->oom)
		return;
	if (s->n + 1 >= MAX_ARGS) {
		s->oom = -E2BIG;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&arg, fmt, ap) < 0) {
		s->oom = -ENOMEM;
		arg = NULL;
	}
	va_end(ap);
	if (arg && strv_consume(&s->v, arg) < 0)
		s->oom = -ENOMEM;
	else if (arg)
		s->n++;
}

/*
 * The guest's devices (wire.h): telemetry on an isa-debugcon whose
 * chardev writes to telemetry_path, the control line on COM1 when
 * control_fd is given (else the caller provides COM1), the exit port.
 */
static void add_devices(struct args *s, const char *telemetry_path, int control_fd)
{
	add(s, "-chardev");
	add(s, "file,id=sbtel,path=%s,append=on", telemetry_path);
	add(s, "-device");
	add(s, "isa-debugcon,iobase=0x%x,chardev=sbtel", GUEST_PORT_TELEMETRY);
	if (control_fd >= 0) {
		add(s, "-chardev");
		add(s, "socket,id=sbctl,fd=%d", control_fd);
		add(s, "-serial");
		add(s, "chardev:sbctl");
	}
	add(s, "-device");
	add(s, "isa-debug-exit,iobase=0x%x,iosize=4", GUEST_PORT_EXIT);
}

static int finish(struct args *s, char ***out, struct sb_error *err)
{
	if (s->oom) {
		int r = s->oom;
		strv_free(s->v);
		return sb_error_set(err, r,
				    r == -E2BIG ? "guest VM: more than %d QEMU arguments: pass fewer extra ones"
						: "guest VM: out of memory (%d arguments)",
				    MAX_ARGS);
	}
	*out = s->v;
	return 0;
}

int guest_qemu_device_args(const char *telemetry_path, char ***out, struct sb_error *err)
{
	struct args s = { 0 };

	if (!telemetry_path || !*telemetry_path)
		return sb_error_set(err, -EINVAL, "guest VM: no telemetry path given");
	add(&s, "-bios");
	add(&s, "%s", GUEST_FIRMWARE_DEFAULT);
	add_devices(&s, telemetry_path, -1);
	return finish(&s, out, err);
}

int guest_qemu_argv(const struct guest_vm *vm, char ***out, struct sb_error *err)
{
	struct args s = { 0 };
	const char *firmware = vm->firmware ? vm->firmware : GUEST_FIRMWARE_DEFAULT;
	char telemetry_path[32];

	if (!vm->image || !*vm->image)
		return sb_error_set(err, -EINVAL, "guest VM: no guest image given: use guest_image_find()");
	if (!vm->append)
		return sb_error_set(err, -EINVAL, "guest VM: no guest command line given: use guest_params_to_cmdline()");
	if (vm->vcpus < 1 || vm->vcpus > GUEST_MAX_VCPUS)
		return sb_error_set(err, -EINVAL, "guest VM: vcpus=%u: the micro guest runs 1 to %d vCPUs", vm->vcpus,
				    GUEST_MAX_VCPUS);
	if (vm->ram_mib < 16)
		return sb_error_set(err, -EINVAL, "guest VM: ram_mib=%u: give the VM at least 16 MiB", vm->ram_mib);
	if (vm->telemetry_fd < 0 || vm->control_fd < 0 || vm->telemetry_fd == vm->control_fd)
		return sb_error_set(err, -EINVAL,
				    "guest VM: telemetry_fd=%d, control_fd=%d: give a pipe's write end and a connected socket", vm->telemetry_fd,
				    vm->control_fd);

	if (vm->tcg && vm->dirty_ring_size)
		return sb_error_set(err, -EINVAL, "guest VM: the dirty ring is KVM's; under TCG use the dirty bitmap");
	add(&s, "%s", vm->qemu ? vm->qemu : QEMU_DEFAULT_BINARY);
	add(&s, "-machine");
	if (vm->tcg) {
		add(&s, "pc,accel=tcg");
	} else if (vm->dirty_ring_size) {
		/* the ring is a property of the accelerator object, which only -accel sets */
		add(&s, "pc");
		add(&s, "-accel");
		add(&s, "kvm,dirty-ring-size=%u", vm->dirty_ring_size);
	} else {
		add(&s, "pc,accel=kvm");
	}
	if (*firmware) {
		add(&s, "-bios");
		add(&s, "%s", firmware);
	}
	add(&s, "-m");
	add(&s, "%u", vm->ram_mib);
	add(&s, "-smp");
	add(&s, "%u", vm->vcpus);
	add(&s, "-nodefaults");
	add(&s, "-no-user-config");
	add(&s, "-display");
	add(&s, "none");
	add(&s, "-no-reboot");
	add(&s, "-kernel");
	add(&s, "%s", vm->image);
	add(&s, "-append");
	add(&s, "%s", vm->append);
	/* the fdset's id is the fd number; append=on because QEMU refuses
	 * O_TRUNC on a /dev/fdset path */
	add(&s, "-add-fd");
	add(&s, "fd=%d,set=%d", vm->telemetry_fd, vm->telemetry_fd);
	snprintf(telemetry_path, sizeof(telemetry_path), "/dev/fdset/%d", vm->telemetry_fd);
	add_devices(&s, telemetry_path, vm->control_fd);
	for (const char *const *e = vm->extra; e && *e; e++)
		add(&s, "%s", *e);
	return finish(&s, out, err);
}

int guest_telemetry_pipe(int fds[2], struct sb_error *err)
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		return sb_error_set(err, -errno, "telemetry pipe: %m");
	/* best effort: an unprivileged caller may be held to fs.pipe-max-size */
	(void)fcntl(fds[1], F_SETPIPE_SZ, GUEST_TELEMETRY_PIPE_SIZE);
	return 0;
}

int guest_image_find(char **out, struct sb_error *err)
{
	const char *env = getenv(GUEST_IMAGE_ENV);
	char *path;

	if (env && *env) {
		if (access(env, R_OK) < 0)
			return sb_error_set(err, -ENOENT, "guest image %s (from $%s): %m; point %s at the build's guest/%s",
					    env, GUEST_IMAGE_ENV, GUEST_IMAGE_ENV, GUEST_IMAGE_NAME);
		path = strdup(env);
	} else {
		if (asprintf(&path, "%s/%s", PKGDATADIR, GUEST_IMAGE_NAME) < 0)
			path = NULL;
		if (path && access(path, R_OK) < 0) {
			int r = sb_error_set(err, -ENOENT,
					     "guest image %s: %m; install snapbench (meson install) or set $%s to the build's guest/%s",
					     path, GUEST_IMAGE_ENV, GUEST_IMAGE_NAME);
			free(path);
			return r;
		}
	}
	if (!path)
		return sb_error_set(err, -ENOMEM, "guest image path: out of memory");
	*out = path;
	return 0;
}
