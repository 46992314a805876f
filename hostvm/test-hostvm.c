// SPDX-License-Identifier: GPL-2.0-or-later
/* hostvm/'s pure parts: SHA-256, the cpio writer, the bzImage header, module names, argv, modules.dep. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cpio.h"
#include "kernel-image.h"
#include "launch.h"
#include "macro.h"
#include "modules.h"
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

static int rm_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

int main(void)
{
	CHECK(mkdtemp(dir));
	test_cpio();
	test_kernel_image();
	test_modules();
	test_argv();
	CHECK(nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS) == 0);
	return 0;
}
