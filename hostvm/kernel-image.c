// SPDX-License-Identifier: GPL-2.0-or-later
/* The kernel image's identity: bzImage setup header, build id, config hash. */
#include "kernel-image.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "sha256.h"
#include "spawn-program.h"

#define SETUP_MAGIC_OFF 0x202
#define SETUP_VERSION_PTR_OFF 0x20e
#define ELF_MAX_BYTES (1u << 30)
/* a RISC-V Image's header (Documentation/arch/riscv/boot-image-header.rst): magic2 at 0x38 */
#define RISCV_MAGIC2_OFF 0x38
#define RISCV_MAGIC2 "RSC\x05"
#define RISCV_IMAGE_MAX (512u << 20)

static int read_at(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

/* path opened for reading when it is a regular file (O_NONBLOCK: a FIFO must not hold the open), else -errno or -EINVAL. */
static int open_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int hostvm_elf_build_id(const char *path, char **ret)
{
	_cleanup_close_ int fd = open_file(path);
	Elf64_Ehdr eh;

	if (fd < 0)
		return fd;
	if (read_at(fd, &eh, sizeof(eh), 0) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum > 4096)
		return -ENOENT;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		if (read_at(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + (uint64_t)i * sizeof(sh))) < 0)
			return -ENOENT;
		if (sh.sh_type != SHT_NOTE || sh.sh_size > 65536)
			continue;
		_cleanup_free_ uint8_t *n = malloc(sh.sh_size);
		if (!n || read_at(fd, n, sh.sh_size, (off_t)sh.sh_offset) < 0)
			return -ENOENT;
		for (size_t o = 0; o + sizeof(Elf64_Nhdr) <= sh.sh_size;) {
			Elf64_Nhdr nh;
			memcpy(&nh, n + o, sizeof(nh));
			size_t name_off = o + sizeof(nh), desc_off = name_off + ((nh.n_namesz + 3) & ~3u);
			size_t next = desc_off + ((nh.n_descsz + 3) & ~3u);
			if (next > sh.sh_size)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(n + name_off, "GNU", 4) &&
			    nh.n_descsz && nh.n_descsz <= 64) {
				char *hex = malloc(2 * nh.n_descsz + 1);
				if (!hex)
					return -ENOMEM;
				for (size_t k = 0; k < nh.n_descsz; k++)
					snprintf(hex + 2 * k, 3, "%02x", n[desc_off + k]);
				*ret = hex;
				return 0;
			}
			o = next;
		}
	}
	return -ENOENT;
}

/*
 * Whether the ELF file is whole (every segment within the file) and has a
 * note of type type named name (Xen's PVH entry: "Xen", 18).
 */
static bool elf_has_note(const char *path, const char *name, uint32_t type)
{
	_cleanup_close_ int fd = open_file(path);
	size_t nl = strlen(name) + 1;
	bool found = false;
	struct stat st;
	Elf64_Ehdr eh;

	if (fd < 0 || fstat(fd, &st) < 0 || read_at(fd, &eh, sizeof(eh), 0) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
		return false;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (read_at(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) < 0)
			return false;
		if (ph.p_offset + ph.p_filesz > (uint64_t)st.st_size)
			return false; /* cut short */
		if (found || ph.p_type != PT_NOTE || ph.p_filesz > (1u << 20))
			continue;
		_cleanup_free_ uint8_t *n = malloc(ph.p_filesz);
		if (!n || read_at(fd, n, ph.p_filesz, (off_t)ph.p_offset) < 0)
			return false;
		for (size_t o = 0; o + sizeof(Elf64_Nhdr) <= ph.p_filesz;) {
			Elf64_Nhdr nh;
			memcpy(&nh, n + o, sizeof(nh));
			size_t name_off = o + sizeof(nh), next = name_off + ((nh.n_namesz + 3) & ~3u) + ((nh.n_descsz + 3) & ~3u);
			if (next > ph.p_filesz)
				break;
			if (nh.n_type == type && nh.n_namesz == nl && !memcmp(n + name_off, name, nl))
				found = true;
			o = next;
		}
	}
	return found;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * runs argv with stdin from in_path, its stdout copied to out_path: 0 when
 * it ran to its end (the kernel appends the uncompressed size to the
 * payload, which xz calls an unexpected end: the caller checks the output),
 * -EFBIG when it gave more than max bytes (killed there: no byte past max
 * is written), -ENOEXEC when it could not run
 */
static int run_filter(char *const argv[], const char *in_path, const char *out_path, uint64_t max)
{
	_cleanup_close_ int in = open(in_path, O_RDONLY | O_CLOEXEC), out = -1, rd = -1;
	uint64_t total = 0;
	char buf[1 << 16];
	int pipefd[2], st, r = 0;
	pid_t pid;

	if (in < 0)
		return -errno;
	out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0 || pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	rd = pipefd[0];
	const struct spawn_fd fds[] = { { in, 0 }, { pipefd[1], 1 }, { SPAWN_DEV_NULL, 2 } };
	/* a tool that is not there or cannot start is one this image cannot be read with: the caller's -ENOEXEC */
	r = spawn_start(&(struct spawn_options){ .argv = argv, .fds = fds, .n_fds = ARRAY_SIZE(fds) }, &pid, NULL);
	close(pipefd[1]);
	if (r < 0)
		return -ENOEXEC;
	for (r = 0; r == 0;) {
		ssize_t n = read(rd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		/* counted before it is written: a payload that inflates without end stops at max */
		if (total + (uint64_t)n > max)
			r = -EFBIG;
		else if ((r = write_all(out, buf, (size_t)n)) == 0)
			total += (uint64_t)n;
	}
	if (r < 0)
		kill(pid, SIGKILL);
	if (spawn_wait(pid, &st) < 0 && r == 0)
		r = -ECHILD;
	if (r < 0)
		return r;
	return WIFEXITED(st) && WEXITSTATUS(st) != 127 ? 0 : -ENOEXEC;
}

int hostvm_kernel_extract_vmlinux(const char *image, const char *out_path, char **build_id, struct sb_error *err)
{
	static const struct {
		const uint8_t magic[6];
		size_t len;
		const char *tool;
	} formats[] = {
		{ { 0xfd, '7', 'z', 'X', 'Z', 0 }, 6, "xz" },  { { 0x1f, 0x8b }, 2, "gzip" },
		{ { 0x28, 0xb5, 0x2f, 0xfd }, 4, "zstd" },     { { 0x02, 0x21, 0x4c, 0x18 }, 4, "lz4" },
		{ { 'B', 'Z', 'h' }, 3, "bzip2" },             { { 0x5d, 0x00, 0x00 }, 3, "xz" },
	};
	_cleanup_close_ int fd = open_file(image);
	_cleanup_free_ uint8_t *payload = NULL;
	char packed[PATH_MAX + 16];
	uint32_t offset, length, init_size = 0;
	uint64_t max = HOSTVM_VMLINUX_MAX;
	uint8_t setup_sects;
	uint16_t protocol;
	const char *tool = NULL;
	int k;

	if (fd < 0)
		return sb_error_set(err, fd, "kernel image %s: %s", image,
				    fd == -EINVAL ? "not a regular file" : strerror(-fd));
	if (read_at(fd, &setup_sects, 1, 0x1f1) < 0 || read_at(fd, &protocol, 2, 0x206) < 0 || protocol < 0x208 ||
	    read_at(fd, &offset, 4, 0x248) < 0 || read_at(fd, &length, 4, 0x24c) < 0 || length == 0 ||
	    length > HOSTVM_PAYLOAD_MAX)
		return 0;
	/* init_size (boot protocol 2.10): the memory the kernel's own decompressor unpacks this payload into */
	if (protocol >= 0x20a && read_at(fd, &init_size, 4, 0x260) == 0 && init_size > 0 && init_size < max)
		max = init_size;
	payload = malloc(length);
	if (!payload)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (read_at(fd, payload, length, (off_t)((setup_sects ? setup_sects : 4) + 1) * 512 + offset) < 0)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(formats) && !tool; i++)
		if (length >= formats[i].len && !memcmp(payload, formats[i].magic, formats[i].len))
			tool = formats[i].tool;
	if (!tool)
		return 0;
	snprintf(packed, sizeof(packed), "%s.packed", out_path);
	{
		_cleanup_close_ int pf = open(packed, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (pf < 0)
			return sb_error_set(err, -errno, "%s: %s", packed, strerror(errno));
		k = write_all(pf, payload, length);
		if (k < 0) {
			unlink(packed);
			return sb_error_set(err, k, "%s: %s", packed, strerror(-k));
		}
	}
	char *argv[] = { (char *)tool, "-dc", NULL };
	char *lzma_argv[] = { "xz", "-dc", "--format=lzma", NULL };
	k = run_filter(payload[0] == 0x5d ? lzma_argv : argv, packed, out_path, max);
	unlink(packed);
	if (k == -EFBIG) {
		unlink(out_path);
		return sb_error_set(err, -EFBIG, "kernel image %s: its %s payload unpacks to more than %llu bytes (its setup "
				    "header's init_size, at most %u MiB): not a kernel image; give a bzImage (arch/x86/boot/bzImage "
				    "or /boot/vmlinuz-RELEASE)", image, tool, (unsigned long long)max, HOSTVM_VMLINUX_MAX >> 20);
	}
	if (k < 0 || !elf_has_note(out_path, "Xen", 18 /* XEN_ELFNOTE_PHYS32_ENTRY */)) {
		unlink(out_path);
		return 0;
	}
	if (build_id && !*build_id)
		hostvm_elf_build_id(out_path, build_id);
	return 1;
}

static int file_sha256(const char *path, char **ret)
{
	_cleanup_close_ int fd = open_file(path);
	struct sha256 s;
	char buf[65536], hex[65];
	ssize_t n;

	if (fd < 0)
		return fd;
	sha256_init(&s);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sha256_update(&s, buf, (size_t)n);
	if (n < 0)
		return -errno;
	sha256_hex(&s, hex);
	*ret = strdup(hex);
	return *ret ? 0 : -ENOMEM;
}

/* the image's directory, "." for a bare name */
static void dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

bool hostvm_kernel_is_riscv_image(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	char magic[4];

	return fd >= 0 && read_at(fd, magic, 4, RISCV_MAGIC2_OFF) == 0 && !memcmp(magic, RISCV_MAGIC2, 4);
}

/*
 * A RISC-V Image has no pointer to its version: the uncompressed kernel
 * holds linux_banner ("Linux version RELEASE (...) ..."), found by a scan.
 */
static int riscv_version(int fd, off_t size, const char *path, char *version, size_t len, struct sb_error *err)
{
	static const char banner[] = "Linux version ";
	const char *p, *end;
	size_t n;
	void *map;

	if (size > (off_t)RISCV_IMAGE_MAX)
		return sb_error_set(err, -EFBIG, "kernel image %s: a RISC-V Image larger than %u MiB; give arch/riscv/boot/Image",
				    path, RISCV_IMAGE_MAX >> 20);
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return sb_error_set(err, -errno, "kernel image %s: %s", path, strerror(errno));
	end = (const char *)map + size;
	p = memmem(map, (size_t)size, banner, sizeof(banner) - 1);
	if (p) {
		p += sizeof(banner) - 1;
		for (n = 0; p + n < end && n + 1 < len && p[n] && p[n] != '\n'; n++)
			version[n] = p[n];
		version[n] = '\0';
	}
	munmap(map, (size_t)size);
	if (!p)
		return sb_error_set(err, -EINVAL, "kernel image %s: a RISC-V Image without a \"Linux version\" banner; "
				    "give an uncompressed arch/riscv/boot/Image", path);
	return 0;
}

/* The version string of an x86 bzImage (its setup header's pointer) or a RISC-V Image. */
static int image_version(int fd, off_t size, const char *path, char *version, size_t len, struct sb_error *err)
{
	char magic[4];
	uint16_t ptr;

	if (read_at(fd, magic, 4, RISCV_MAGIC2_OFF) == 0 && !memcmp(magic, RISCV_MAGIC2, 4))
		return riscv_version(fd, size, path, version, len, err);
	if (read_at(fd, magic, 4, SETUP_MAGIC_OFF) < 0 || memcmp(magic, "HdrS", 4)) {
		char elf[4];
		bool is_elf = read_at(fd, elf, 4, 0) == 0 && !memcmp(elf, ELFMAG, SELFMAG);
		return sb_error_set(err, -EINVAL,
				    "kernel image %s: not an x86 bzImage (no \"HdrS\" setup header at 0x202) or a RISC-V Image%s; give arch/x86/boot/bzImage, arch/riscv/boot/Image or /boot/vmlinuz-RELEASE",
				    path, is_elf ? ", it is an ELF file (vmlinux?)" : "");
	}
	if (read_at(fd, &ptr, 2, SETUP_VERSION_PTR_OFF) < 0 || ptr == 0 ||
	    read_at(fd, version, len - 1, (off_t)ptr + 0x200) < 0)
		return sb_error_set(err, -EINVAL, "kernel image %s: its setup header has no version string; rebuild it", path);
	version[len - 1] = '\0';
	return 0;
}

int hostvm_kernel_identify(const char *path, struct kernel_id *ret, struct sb_error *err)
{
	/* O_NONBLOCK: a FIFO is refused below rather than waited on */
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct kernel_id k = {};
	char version[512], dir[PATH_MAX], cand[PATH_MAX + 64];
	struct stat st;
	int r;

	if (fd < 0)
		return sb_error_set(err, -errno, "kernel image %s: %s; give a bzImage (arch/x86/boot/bzImage or /boot/vmlinuz-RELEASE)",
				    path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return sb_error_set(err, -errno, "kernel image %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return sb_error_set(err, -EINVAL, "kernel image %s: is %s, not a regular file; give a bzImage", path,
				    file_type_name(st.st_mode));
	if (st.st_size < 0x1000)
		return sb_error_set(err, -EINVAL, "kernel image %s: not a regular file the size of a kernel; give a bzImage", path);
	if ((r = image_version(fd, st.st_size, path, version, sizeof(version), err)) < 0)
		return r;
	size_t rl = strcspn(version, " ");
	if (rl == 0 || rl >= 128)
		return sb_error_set(err, -EINVAL, "kernel image %s: version string \"%.80s\" names no release", path, version);

	k.image = strdup(path);
	k.version = strdup(version);
	k.release = strndup(version, rl);
	if (!k.image || !k.version || !k.release) {
		kernel_id_done(&k);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	dir_of(path, dir, sizeof(dir));
	/* a kernel tree: arch/x86/boot/bzImage (arch/riscv/boot/Image) next to ../../../vmlinux and .config */
	snprintf(cand, sizeof(cand), "%s/../../../vmlinux", dir);
	hostvm_elf_build_id(cand, &k.build_id);
	for (int i = 0; i < 3 && !k.config_path; i++) {
		if (i == 0)
			snprintf(cand, sizeof(cand), "%s/config-%s", dir, k.release);
		else
			snprintf(cand, sizeof(cand), "%s/%s.config", dir, i == 1 ? "../../../" : "");
		if (access(cand, R_OK) == 0 && file_sha256(cand, &k.config_sha256) == 0)
			k.config_path = realpath(cand, NULL);
	}
	*ret = k;
	return 0;
}
