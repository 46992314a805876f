// SPDX-License-Identifier: GPL-2.0-or-later
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "qemu-args.h"

static int find(char **argv, const char *opt, const char *value)
{
	for (int i = 0; argv[i] && argv[i + 1]; i++)
		if (!strcmp(argv[i], opt) && !strcmp(argv[i + 1], value))
			return i;
	return -1;
}

int main(void)
{
	static const char *const extra[] = { "-qmp", "unix:/x,server=on,wait=off", NULL };
	struct guest_vm vm = {
		.image = "/path with space/snapbench-guest.elf",
		.vcpus = 2,
		.ram_mib = 128,
		.append = "-- mem=50% pattern=write64; rm -rf /",
		.telemetry_fd = 3,
		.control_fd = 4,
		.extra = extra,
	};
	struct sb_error err = { 0 };
	char **argv = NULL;
	int n = 0;

	CHECK_MSG(guest_qemu_argv(&vm, &argv, &err) == 0, "%s", err.msg);
	while (argv[n])
		n++;
	CHECK(!strcmp(argv[0], "qemu-system-x86_64"));
	CHECK(find(argv, "-bios", "qboot.rom") > 0);
	CHECK(find(argv, "-smp", "2") > 0 && find(argv, "-m", "128") > 0);
	/* paths and the command line stay single arguments: no shell in between */
	CHECK(find(argv, "-kernel", vm.image) > 0);
	CHECK(find(argv, "-append", vm.append) > 0);
	CHECK(find(argv, "-add-fd", "fd=3,set=3") > 0);
	CHECK(find(argv, "-chardev", "file,id=sbtel,path=/dev/fdset/3,append=on") > 0);
	CHECK(find(argv, "-device", "isa-debugcon,iobase=0xe9,chardev=sbtel") > 0);
	CHECK(find(argv, "-chardev", "socket,id=sbctl,fd=4") > 0);
	CHECK(find(argv, "-serial", "chardev:sbctl") > 0);
	CHECK(find(argv, "-device", "isa-debug-exit,iobase=0xf4,iosize=4") > 0);
	CHECK(find(argv, "-qmp", extra[1]) == n - 2);
	strv_free(argv);

	/* firmware "" leaves QEMU's default */
	vm.firmware = "";
	vm.qemu = "/opt/qemu/bin/qemu-system-x86_64";
	vm.extra = NULL;
	CHECK(guest_qemu_argv(&vm, &argv, &err) == 0);
	CHECK(!strcmp(argv[0], vm.qemu));
	for (int i = 0; argv[i]; i++)
		CHECK(strcmp(argv[i], "-bios"));
	strv_free(argv);

	vm.vcpus = 0;
	CHECK(guest_qemu_argv(&vm, &argv, &err) == -EINVAL && strstr(err.msg, "vcpus=0"));
	vm.vcpus = 2;
	vm.control_fd = 3;
	CHECK(guest_qemu_argv(&vm, &argv, &err) == -EINVAL && strstr(err.msg, "pipe's write end"));
	vm.control_fd = 4;
	vm.ram_mib = 8;
	CHECK(guest_qemu_argv(&vm, &argv, &err) == -EINVAL && strstr(err.msg, "ram_mib=8"));
	vm.ram_mib = 128;
	vm.append = NULL;
	CHECK(guest_qemu_argv(&vm, &argv, &err) == -EINVAL && strstr(err.msg, "guest_params_to_cmdline"));

	/* the device list alone (the libvirt backend's domain XML), in the order the argv has it */
	{
		static const char *const want[] = {
			"-bios", "qboot.rom", "-chardev", "file,id=sbtel,path=/run/x/telemetry,append=on",
			"-device", "isa-debugcon,iobase=0xe9,chardev=sbtel", "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
		};
		size_t k = 0;

		CHECK_MSG(guest_qemu_device_args("/run/x/telemetry", &argv, &err) == 0, "%s", err.msg);
		for (; argv[k]; k++)
			CHECK_MSG(k < sizeof(want) / sizeof(want[0]) && !strcmp(argv[k], want[k]), "argument %zu: %s", k, argv[k]);
		CHECK(k == sizeof(want) / sizeof(want[0]));
		strv_free(argv);
		CHECK(guest_qemu_device_args("", &argv, &err) == -EINVAL && strstr(err.msg, "telemetry path"));
	}

	/* the telemetry pipe */
	{
		int fds[2];

		CHECK(guest_telemetry_pipe(fds, &err) == 0);
		CHECK(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
		CHECK(fcntl(fds[1], F_GETFD) & FD_CLOEXEC);
		CHECK(fcntl(fds[1], F_GETPIPE_SZ) >= 65536);
		close(fds[0]);
		close(fds[1]);
	}

	/* the image: from the environment, with a message naming the fix */
	{
		char *path = NULL;
		char tmp[] = "/tmp/test-guest-image.XXXXXX";
		int fd = mkstemp(tmp);

		CHECK(fd >= 0);
		close(fd);
		setenv(GUEST_IMAGE_ENV, tmp, 1);
		CHECK(guest_image_find(&path, &err) == 0 && !strcmp(path, tmp));
		free(path);
		unlink(tmp);
		CHECK(guest_image_find(&path, &err) == -ENOENT);
		CHECK_MSG(strstr(err.msg, tmp) && strstr(err.msg, GUEST_IMAGE_ENV), "%s", err.msg);
	}
	printf("qemu-args: all checks passed\n");
	return 0;
}
