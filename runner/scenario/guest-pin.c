// SPDX-License-Identifier: GPL-2.0-or-later
#include "guest-pin.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fileio.h"

#define MEMFD_LINK GUEST_MEMFD_NAME /* QEMU names its memfds by the backend's type */
#define MAX_BUFFER (1ull << 30)                   /* io_uring's limit per fixed buffer */
#define PAGE_4K 4096ull

struct guest_pin {
	int ring;
	void *map;
	uint64_t bytes;
};

/* The fd number of pid's memfd guest RAM, or -errno. */
static int find_memfd(pid_t pid, struct sb_error *err)
{
	int found = proc_find_fd(pid, MEMFD_LINK, err);

	if (found == -ENOENT)
		return sb_error_set(err, -ENOENT,
				    "QEMU (pid %d) has no memfd guest RAM to pin (no fd links to %s): set vm.backing "
				    "\"memfd\" for guest.pin",
				    (int)pid, MEMFD_LINK);
	return found;
}

int guest_memfd_map(pid_t pid, uint64_t bytes, void **map, struct sb_error *err)
{
	char path[96];
	int memfd, nr, k;

	*map = MAP_FAILED;
	if (!bytes || bytes % PAGE_4K)
		return sb_error_set(err, -EINVAL, "guest RAM of %llu bytes: not a whole number of pages",
				    (unsigned long long)bytes);
	nr = find_memfd(pid, err);
	if (nr < 0)
		return nr;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, nr);
	memfd = open(path, O_RDWR | O_CLOEXEC);
	if (memfd < 0)
		return sb_error_set(err, -errno, "cannot open QEMU's guest RAM (%s): %s", path, strerror(errno));
	*map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	k = -errno;
	close(memfd);
	if (*map == MAP_FAILED)
		return sb_error_set(err, k, "cannot map %llu bytes of QEMU's guest RAM: %s", (unsigned long long)bytes,
				    strerror(-k));
	return 0;
}

int guest_pin_open(pid_t pid, uint64_t bytes, struct guest_pin **ret, struct sb_error *err)
{
	struct io_uring_params params = { 0 };
	struct guest_pin *p;
	struct iovec *iov = NULL;
	size_t n_iov = (size_t)((bytes + MAX_BUFFER - 1) / MAX_BUFFER);
	int k;

	p = calloc(1, sizeof(*p));
	iov = calloc(n_iov ? n_iov : 1, sizeof(*iov));
	if (!p || !iov) {
		free(p);
		free(iov);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	p->ring = -1;
	p->bytes = bytes;
	k = guest_memfd_map(pid, bytes, &p->map, err);
	if (k < 0)
		goto fail;
	p->ring = (int)syscall(__NR_io_uring_setup, 1, &params);
	if (p->ring < 0) {
		k = -errno;
		k = sb_error_set(err, k, "io_uring_setup: %s%s", strerror(-k),
				 k == -EPERM || k == -ENOSYS ? ": io_uring is disabled or absent (kernel.io_uring_disabled, "
							       "CONFIG_IO_URING); guest.pin needs it"
							     : "");
		goto fail;
	}
	for (size_t i = 0; i < n_iov; i++) {
		uint64_t off = (uint64_t)i * MAX_BUFFER;
		iov[i].iov_base = (char *)p->map + off;
		iov[i].iov_len = (size_t)(bytes - off < MAX_BUFFER ? bytes - off : MAX_BUFFER);
	}
	/* pin_user_pages(FOLL_WRITE | FOLL_LONGTERM) of every page: they are faulted in and pinned */
	if (syscall(__NR_io_uring_register, p->ring, IORING_REGISTER_BUFFERS, iov, (unsigned)n_iov) < 0) {
		k = -errno;
		k = sb_error_set(err, k, "pinning %llu bytes of guest RAM (io_uring fixed buffers): %s%s",
				 (unsigned long long)bytes, strerror(-k),
				 k == -ENOMEM ? ": RLIMIT_MEMLOCK is too low (run as root, or raise it)" : "");
		goto fail;
	}
	free(iov);
	*ret = p;
	return 0;
fail:
	free(iov);
	guest_pin_close(p);
	return k;
}

uint64_t guest_pin_pages(const struct guest_pin *p)
{
	return p ? p->bytes / PAGE_4K : 0;
}

void guest_pin_close(struct guest_pin *p)
{
	if (!p)
		return;
	if (p->ring >= 0)
		close(p->ring); /* the ring's teardown unpins its buffers */
	if (p->map != MAP_FAILED)
		munmap(p->map, p->bytes);
	free(p);
}
