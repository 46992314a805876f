// SPDX-License-Identifier: GPL-2.0-or-later
/* hostvm/'s pure parts: SHA-256, the cpio writer, the bzImage header and its payload's bound, module names, argv,
 * modules.dep. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cpio.h"
#include "kernel-image.h"
#include "launch.h"
#include "macro.h"
#include "module-params.h"
#include "modules.h"
#include "spawn-program.h"
#include "strv.h"

static char dir[] = "/tmp/test-hostvm-XXXXXX";

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, data, len) == (ssize_t)len);
	close(fd);
}

static void test_cpio(void)
{
	char path[128];
	struct sb_error err = {};
	struct cpio *c;
	char buf[1024];
	int fd;

	snprintf(path, sizeof(path), "%s/a.cpio", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(cpio_new(fd, &c) == 0);
	CHECK(cpio_add_dir(c, "dev", 0755, &err) == 0);
	CHECK(cpio_add_chardev(c, "dev/console", 0600, 5, 1, &err) == 0);
	CHECK(cpio_add_data(c, "init", 0755, "hello", 5, &err) == 0);
	CHECK(cpio_add_data(c, "/abs", 0644, "x", 1, &err) == -EINVAL);
	snprintf(path, sizeof(path), "%s/file-in", dir);
	write_file(path, "from a file", 11);
	CHECK(cpio_add_file(c, "etc/f", 0644, path, &err) == 0);
	CHECK(cpio_add_file(c, "etc/d", 0644, dir, &err) == -EINVAL && strstr(err.msg, dir));
	snprintf(path, sizeof(path), "%s/no-such-file", dir);
	CHECK(cpio_add_file(c, "etc/n", 0644, path, &err) == -ENOENT && strstr(err.msg, "no-such-file"));
	CHECK(cpio_finish(c, &err) == 0);
	CHECK(cpio_add_dir(c, "late", 0755, &err) == -EINVAL);
	cpio_free(c);
	off_t size = lseek(fd, 0, SEEK_END);
	CHECK(size % 512 == 0);
	CHECK(pread(fd, buf, sizeof(buf), 0) >= 400);
	close(fd);
	/* first header: magic, inode 1, mode 040755, namesize 4 ("dev" + NUL) */
	CHECK(!memcmp(buf, "070701", 6));
	CHECK(!memcmp(buf + 14, "000041ED", 8));
	CHECK(!memcmp(buf + 94, "00000004", 8));
	CHECK(!memcmp(buf + 110, "dev", 4));
	/* second header at 116 (110 + 4 = 114, padded to 116): a char device 5:1 */
	CHECK(!memcmp(buf + 116, "070701", 6));
	CHECK(!memcmp(buf + 116 + 14, "00002180", 8));
	CHECK(!memcmp(buf + 116 + 78, "00000005", 8));
	CHECK(!memcmp(buf + 116 + 86, "00000001", 8));
	CHECK(memmem(buf, sizeof(buf), "hello", 5));
	CHECK(memmem(buf, sizeof(buf), "from a file", 11));
	CHECK(memmem(buf, sizeof(buf), "TRAILER!!!", 10));
}

static void test_kernel_image(void)
{
	char image[256], config[256], boot[64];
	static char img[0x3000];
	struct kernel_id k = {};
	struct sb_error err = {};
	const char *v = "6.1.0-57-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3";
	uint16_t ptr = 0x1000;

	snprintf(boot, sizeof(boot), "%s/boot", dir);
	CHECK(mkdir(boot, 0755) == 0);
	snprintf(image, sizeof(image), "%s/vmlinuz-6.1.0-57-amd64", boot);
	write_file(image, img, sizeof(img));
	CHECK(hostvm_kernel_identify(image, &k, &err) == -EINVAL);
	CHECK(strstr(err.msg, "HdrS") && strstr(err.msg, image));

	memcpy(img + 0x202, "HdrS", 4);
	memcpy(img + 0x20e, &ptr, 2);
	memcpy(img + 0x1200, v, strlen(v) + 1);
	write_file(image, img, sizeof(img));
	snprintf(config, sizeof(config), "%s/config-6.1.0-57-amd64", boot);
	write_file(config, "abc", 3);
	CHECK(hostvm_kernel_identify(image, &k, &err) == 0);
	CHECK(!strcmp(k.release, "6.1.0-57-amd64"));
	CHECK(!strcmp(k.version, v));
	CHECK(k.build_id == NULL);
	CHECK(k.config_sha256 && !strcmp(k.config_sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
	kernel_id_done(&k);
	kernel_id_done(NULL);

	/* a FIFO (no writer: an open() that waits would never return), a directory, /dev/zero: refused, named */
	char fifo[256];
	snprintf(fifo, sizeof(fifo), "%s/fifo-image", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(hostvm_kernel_identify(fifo, &k, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, fifo) && strstr(err.msg, "is a FIFO, not a regular file"), "%s", err.msg);
	CHECK(hostvm_kernel_extract_vmlinux(fifo, config, NULL, &err) == -EINVAL && strstr(err.msg, fifo));
	CHECK(hostvm_kernel_identify(dir, &k, &err) == -EINVAL && strstr(err.msg, "is a directory"));
	CHECK(hostvm_kernel_identify("/dev/zero", &k, &err) == -EINVAL && strstr(err.msg, "is a character device"));
	/* a FIFO where the image's config would be is passed over, not waited on */
	CHECK(unlink(config) == 0 && mkfifo(config, 0600) == 0);
	CHECK(hostvm_kernel_identify(image, &k, &err) == 0 && !k.config_sha256);
	kernel_id_done(&k);
	CHECK(unlink(config) == 0 && unlink(fifo) == 0);
}

/*
 * A bzImage whose gzip payload unpacks to 8 MiB of zeros: with an init_size
 * of 1 MiB the decompressor is stopped at 1 MiB, nothing more written, the
 * image named; with 16 MiB it unpacks (not an ELF with a PVH note: 0).
 */
static void test_payload_bound(void)
{
	char zeros[256], packed[256], image[256], out[256];
	int fd, st;
	struct stat sb;
	struct sb_error err = {};

	snprintf(zeros, sizeof(zeros), "%s/zeros", dir);
	snprintf(packed, sizeof(packed), "%s/zeros.gz", dir);
	snprintf(image, sizeof(image), "%s/bomb-image", dir);
	snprintf(out, sizeof(out), "%s/bomb-vmlinux", dir);
	CHECK((fd = open(zeros, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >= 0 && ftruncate(fd, 8 << 20) == 0);
	close(fd);
	int in = open(zeros, O_RDONLY | O_CLOEXEC), gz = open(packed, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const struct spawn_fd fds[] = { { in, 0 }, { gz, 1 } };
	CHECK(in >= 0 && gz >= 0);
	CHECK(spawn_run(&(struct spawn_options){ .argv = (char *[]){ "gzip", "-c", NULL }, .fds = fds, .n_fds = 2 }, &st,
			NULL) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(in);
	close(gz);
	CHECK(stat(packed, &sb) == 0 && sb.st_size < 65536);

	/* the setup header: 4 setup sectors, protocol 2.15, the payload right after the setup code */
	size_t setup = 5 * 512, len = (size_t)sb.st_size;
	uint8_t *img = calloc(1, setup + len);
	uint16_t protocol = 0x20f;
	uint32_t offset = 0, length = (uint32_t)len, init_size = 1 << 20;
	CHECK(img);
	img[0x1f1] = 4;
	memcpy(img + 0x202, "HdrS", 4);
	memcpy(img + 0x206, &protocol, 2);
	memcpy(img + 0x248, &offset, 4);
	memcpy(img + 0x24c, &length, 4);
	memcpy(img + 0x260, &init_size, 4);
	CHECK((fd = open(packed, O_RDONLY | O_CLOEXEC)) >= 0 && read(fd, img + setup, len) == (ssize_t)len);
	close(fd);
	write_file(image, img, setup + len);
	CHECK(hostvm_kernel_extract_vmlinux(image, out, NULL, &err) == -EFBIG);
	CHECK_MSG(strstr(err.msg, image) && strstr(err.msg, "unpacks to more than 1048576 bytes"), "%s", err.msg);
	CHECK(access(out, F_OK) < 0);

	init_size = 16 << 20;
	memcpy(img + 0x260, &init_size, 4);
	write_file(image, img, setup + len);
	CHECK(hostvm_kernel_extract_vmlinux(image, out, NULL, &err) == 0 && access(out, F_OK) < 0);
	free(img);
}

static void test_modules(void)
{
	char tree[128], path[320], *found = NULL;
	struct hostvm_modules m = {};
	struct sb_error err = {};
	static const char *const kos[] = { "virtio_ring", "virtio", "virtio_pci", "9pnet", "9pnet_virtio", "9p",
					   "virtio_console", "irqbypass", "kvm", "kvm-amd", "ccp" };

	_cleanup_free_ char *n = hostvm_module_name("kernel/arch/x86/kvm/kvm-amd.ko.xz");
	CHECK(n && !strcmp(n, "kvm_amd"));

	snprintf(tree, sizeof(tree), "%s/lib/modules/6.1.0-57-amd64", dir);
	snprintf(path, sizeof(path), "%s/lib", dir);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/lib/modules", dir);
	CHECK(mkdir(path, 0755) == 0);
	CHECK(mkdir(tree, 0755) == 0);
	for (size_t i = 0; i < ARRAY_SIZE(kos); i++) {
		snprintf(path, sizeof(path), "%s/%s.ko", tree, kos[i]);
		write_file(path, "x", 1);
	}
	const char *dep = "virtio_ring.ko:\nvirtio.ko:\nvirtio_pci.ko: virtio.ko virtio_ring.ko\n9pnet.ko:\n"
			  "9pnet_virtio.ko: 9pnet.ko virtio.ko virtio_ring.ko\n9p.ko: 9pnet.ko\n"
			  "virtio_console.ko: virtio.ko virtio_ring.ko\nirqbypass.ko:\nkvm.ko: irqbypass.ko\n"
			  "kvm-amd.ko: ccp.ko kvm.ko irqbypass.ko\nccp.ko:\n";
	snprintf(path, sizeof(path), "%s/modules.dep", tree);
	write_file(path, dep, strlen(dep));
	snprintf(path, sizeof(path), "%s/modules.builtin", tree);
	write_file(path, "kernel/fs/netfs/netfs.ko\n", 25);

	/* the image beside lib/modules: found without --modules */
	snprintf(path, sizeof(path), "%s/boot/vmlinuz-6.1.0-57-amd64", dir);
	CHECK(hostvm_modules_dir(NULL, path, "6.1.0-57-amd64", &found, &err) == 0);
	CHECK(found && strstr(found, "/lib/modules/6.1.0-57-amd64"));
	free(found);
	CHECK(hostvm_modules_dir(tree, path, "6.2.0", &found, &err) == -EINVAL);
	CHECK(strstr(err.msg, "6.2.0") && strstr(err.msg, "6.1.0-57-amd64"));

	CHECK(hostvm_modules_resolve(tree, "amd", &m, &err) == 0);
	CHECK(!m.kvm_builtin);
	/* dependencies first; kvm_amd last, after ccp and kvm */
	size_t ccp = 0, kvm = 0, amd = 0, ring = 0, pci = 0;
	for (size_t i = 0; i < m.n; i++) {
		if (!strcmp(m.items[i].name, "ccp"))
			ccp = i + 1;
		if (!strcmp(m.items[i].name, "kvm"))
			kvm = i + 1;
		if (!strcmp(m.items[i].name, "kvm_amd"))
			amd = i + 1;
		if (!strcmp(m.items[i].name, "virtio_ring"))
			ring = i + 1;
		if (!strcmp(m.items[i].name, "virtio_pci"))
			pci = i + 1;
	}
	CHECK(m.n == ARRAY_SIZE(kos));
	CHECK(ccp && kvm && amd == m.n && ccp < amd && kvm < amd && ring < pci);
	hostvm_modules_done(&m);

	/* no kvm: the error names the module and the config option */
	snprintf(path, sizeof(path), "%s/modules.dep", tree);
	write_file(path, "virtio_pci.ko:\n", 15);
	CHECK(hostvm_modules_resolve(tree, "amd", &m, &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "CONFIG_"), "%s", err.msg);

	/* a modules.dep that cannot be read is named, not taken for an empty one */
	CHECK(unlink(path) == 0 && mkdir(path, 0755) == 0);
	CHECK(hostvm_modules_resolve(tree, "amd", &m, &err) < 0);
	CHECK_MSG(strstr(err.msg, "modules.dep") && strstr(err.msg, "directory"), "%s", err.msg);
	CHECK(rmdir(path) == 0);

	/*
	 * snapbench kernel build's minimal base: the drivers built in (modules.builtin), KVM alone a module;
	 * the virtio and 9p modules still on disk are not loaded
	 */
	const char *mini_dep = "irqbypass.ko:\nkvm.ko: irqbypass.ko\nkvm-amd.ko: kvm.ko irqbypass.ko\n";
	const char *mini_builtin = "kernel/drivers/virtio/virtio.ko\nkernel/drivers/virtio/virtio_ring.ko\n"
				   "kernel/drivers/virtio/virtio_pci.ko\nkernel/drivers/virtio/virtio_pci_modern_dev.ko\n"
				   "kernel/net/9p/9pnet.ko\nkernel/net/9p/9pnet_virtio.ko\nkernel/fs/9p/9p.ko\n"
				   "kernel/drivers/char/virtio_console.ko\n";
	write_file(path, mini_dep, strlen(mini_dep));
	snprintf(path, sizeof(path), "%s/modules.builtin", tree);
	write_file(path, mini_builtin, strlen(mini_builtin));
	CHECK_MSG(hostvm_modules_resolve(tree, "amd", &m, &err) == 0, "%s", err.msg);
	CHECK_MSG(m.n == 3 && !strcmp(m.items[0].name, "irqbypass") && !strcmp(m.items[1].name, "kvm") &&
			  !strcmp(m.items[2].name, "kvm_amd") && !m.kvm_builtin,
		  "%zu modules, the first %s", m.n, m.n ? m.items[0].name : "none");
	hostvm_modules_done(&m);
	/* and a driver neither a module nor built in is named */
	write_file(path, "kernel/fs/9p/9p.ko\n", 19);
	CHECK(hostvm_modules_resolve(tree, "amd", &m, &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "CONFIG_VIRTIO_PCI"), "%s", err.msg);
}

static void test_argv(void)
{
	struct hostvm_config cfg = {
		.kernel = "/k", .initrd = "/i", .append = "console=ttyS0", .memory = 2ull << 30, .vcpus = 2,
		.numa_nodes = 2, .accel = "tcg", .log_path = "/dev/null", .n_shares = 1,
		.shares = { { .tag = "root", .path = "/a,b", .readonly = true } },
	};
	struct sb_error err = {};
	char **v = NULL;
	bool numa = false, share = false, cpu = false;

	CHECK(hostvm_argv(&cfg, "/usr/bin/qemu-system-x86_64", 3, &v, &err) == 0);
	for (size_t i = 0; v[i]; i++) {
		numa |= !strcmp(v[i], "node,nodeid=1,memdev=sbmem1,cpus=1");
		share |= !strcmp(v[i], "local,id=sbfs0,path=/a,,b,security_model=none,readonly=on,multidevs=remap");
		cpu |= !strcmp(v[i], "qemu64,+svm,+npt");
	}
	CHECK(numa && share && cpu);
	strv_free(v);
	cfg.vcpus = 3;
	CHECK(hostvm_argv(&cfg, "q", 3, &v, &err) == -EINVAL);
	CHECK(strstr(err.msg, "numa_nodes"));

	/* icount: tcg and one vCPU, else an error naming what to change */
	bool icount = false;
	cfg.vcpus = 1;
	cfg.numa_nodes = 1;
	cfg.icount = true;
	CHECK(hostvm_argv(&cfg, "q", 3, &v, &err) == 0);
	for (size_t i = 0; v[i]; i++)
		icount |= !strcmp(v[i], "-icount") && v[i + 1] && !strcmp(v[i + 1], "shift=0");
	CHECK(icount);
	strv_free(v);
	cfg.vcpus = 2;
	CHECK(hostvm_argv(&cfg, "q", 3, &v, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "one vCPU"), "%s", err.msg);
	cfg.vcpus = 1;
	cfg.accel = "kvm";
	CHECK(hostvm_argv(&cfg, "q", 3, &v, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "accel tcg"), "%s", err.msg);
}

/* riscv64: the virt board under TCG with the H extension and OpenSBI; x86's CPU never; TCG only */
static void test_argv_riscv64(void)
{
	struct hostvm_config cfg = {
		.kernel = "/Image", .initrd = "/i", .append = "console=ttyS0", .memory = 1ull << 30, .vcpus = 2,
		.accel = "tcg", .log_path = "/dev/null", .arch = "riscv64",
	};
	struct sb_error err = {};
	char **v = NULL;
	bool virt = false, h = false, sbi = false, x86 = false;

	CHECK(hostvm_arch_riscv64("riscv64") && !hostvm_arch_riscv64(NULL) && !hostvm_arch_riscv64("x86_64"));
	CHECK_MSG(hostvm_argv(&cfg, "/usr/bin/qemu-system-riscv64", 3, &v, &err) == 0, "%s", err.msg);
	for (size_t i = 0; v[i]; i++) {
		virt |= !strcmp(v[i], "-M") && v[i + 1] && !strcmp(v[i + 1], "virt");
		h |= !strcmp(v[i], "-cpu") && v[i + 1] && !strcmp(v[i + 1], "rv64,h=true");
		sbi |= !strcmp(v[i], "-bios") && v[i + 1] && !strcmp(v[i + 1], HOSTVM_RISCV64_FIRMWARE);
		x86 |= strstr(v[i], "svm") != NULL;
	}
	CHECK(virt && h && sbi && !x86);
	strv_free(v);
	cfg.accel = "kvm";
	CHECK(hostvm_argv(&cfg, "q", 3, &v, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "TCG only"), "%s", err.msg);
	cfg.accel = "tcg";
	cfg.arch = "arm64";
	CHECK(hostvm_argv(&cfg, "q", 3, &v, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "x86_64 or riscv64"), "%s", err.msg);
}

static int rm_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

/* A module's parameters: a plain .ko's .modinfo, a built-in module's modules.builtin.modinfo, a compressed one through modinfo(8) */
static void test_module_params(void)
{
	char tree[160], path[320];
	struct hostvm_modules m = {};
	struct sb_error err = {};
	static const char ko[] = "\x7f" "ELF junk\0license=GPL\0parmtype=tdp_mmu_prefetch_pages:uint\0parm=halt_poll_ns:x\0";
	static const char builtin[] = "kvm_amd.parmtype=npt:int\0kvm_amd.parm=npt:Enable\0kvm.xparmtype=fake:int\0";

	snprintf(tree, sizeof(tree), "%s/params", dir);
	CHECK(mkdir(tree, 0755) == 0);
	snprintf(path, sizeof(path), "%s/kvm.ko", tree);
	write_file(path, ko, sizeof(ko) - 1);
	snprintf(path, sizeof(path), "%s/modules.builtin.modinfo", tree);
	write_file(path, builtin, sizeof(builtin) - 1);
	m.dir = strdup(tree);
	m.n = 1;
	m.items = calloc(1, sizeof(*m.items));
	m.items[0].name = strdup("kvm");
	snprintf(path, sizeof(path), "%s/kvm.ko", tree);
	m.items[0].path = strdup(path);
	CHECK(hostvm_module_has_param(&m, "kvm", "tdp_mmu_prefetch_pages", &err) == 1);
	/* parm= (a description) is not parmtype=, and a name is whole */
	CHECK(hostvm_module_has_param(&m, "kvm", "halt_poll_ns", &err) == 0);
	CHECK(hostvm_module_has_param(&m, "kvm", "tdp_mmu_prefetch", &err) == 0);
	/* built in: modules.builtin.modinfo, the module's own entries only */
	CHECK(hostvm_module_has_param(&m, "kvm_amd", "npt", &err) == 1);
	CHECK(hostvm_module_has_param(&m, "kvm_amd", "nested", &err) == 0);
	CHECK(hostvm_module_has_param(&m, "kvm_intel", "ept", &err) == -ENODATA && strstr(err.msg, "kvm_intel"));
	/* without modules.builtin.modinfo it cannot tell, and says so */
	snprintf(path, sizeof(path), "%s/modules.builtin.modinfo", tree);
	CHECK(unlink(path) == 0);
	CHECK(hostvm_module_has_param(&m, "kvm_amd", "npt", &err) == -ENODATA && strstr(err.msg, "modules.builtin.modinfo"));
	/* a compressed module goes through modinfo(8), which refuses this one: it cannot tell */
	snprintf(path, sizeof(path), "%s/kvm.ko.xz", tree);
	write_file(path, "not xz", 6);
	free(m.items[0].path);
	m.items[0].path = strdup(path);
	CHECK(hostvm_module_has_param(&m, "kvm", "tdp_mmu_prefetch_pages", &err) == -ENODATA && strstr(err.msg, "kvm.ko.xz"));
	hostvm_modules_done(&m);
}

int main(void)
{
	CHECK(mkdtemp(dir));
	test_cpio();
	test_kernel_image();
	test_payload_bound();
	test_modules();
	test_module_params();
	test_argv();
	test_argv_riscv64();
	CHECK(nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS) == 0);
	return 0;
}
