// SPDX-License-Identifier: GPL-2.0-or-later
/* The restore's userfaultfd handler: one aligned chunk placed per fault. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "restore-handler.h"

static int fail(struct handler *h, const char *what)
{
	h->error = -errno;
	snprintf(h->what, sizeof(h->what), "%s", what);
	return h->error;
}

/* Places the chunk around addr; 0 or a negative errno. */
static int serve(struct handler *h, uint64_t addr)
{
	uint64_t off = (addr - (uint64_t)(uintptr_t)h->region) & ~(uint64_t)(h->chunk - 1);
	struct uffdio_copy copy = {
		.dst = (uint64_t)(uintptr_t)h->region + off,
		.src = (uint64_t)(uintptr_t)h->source + off,
		.len = h->chunk,
	};

	if (off >= h->region_bytes)
		return 0; /* not ours: cannot happen, only the region is registered */
	for (;;) {
		if (ioctl(h->uffd, UFFDIO_COPY, &copy) == 0) {
			h->requests++;
			h->bytes += (uint64_t)copy.copy;
			return 0;
		}
		if (errno == EEXIST) { /* a second fault in a chunk already placed: wake it */
			struct uffdio_range r = { .start = copy.dst, .len = h->chunk };
			h->woken++;
			return ioctl(h->uffd, UFFDIO_WAKE, &r) == 0 ? 0 : fail(h, "UFFDIO_WAKE");
		}
		if (errno != EAGAIN)
			return fail(h, "UFFDIO_COPY");
		/* the mapping changed under the copy: what it did place counts, the rest is tried again */
		if (copy.copy > 0) {
			h->bytes += (uint64_t)copy.copy;
			copy.dst += (uint64_t)copy.copy;
			copy.src += (uint64_t)copy.copy;
			copy.len -= (uint64_t)copy.copy;
		}
	}
}

static void *run(void *arg)
{
	struct handler *h = arg;
	struct pollfd p = { .fd = h->uffd, .events = POLLIN };

	while (!atomic_load(&h->stop)) {
		struct uffd_msg msg;
		int n = poll(&p, 1, 100);
		if (n < 0 && errno != EINTR) {
			fail(h, "poll");
			break;
		}
		if (n <= 0)
			continue;
		ssize_t got = read(h->uffd, &msg, sizeof(msg));
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (got != (ssize_t)sizeof(msg)) {
			fail(h, "read of the userfaultfd");
			break;
		}
		if (msg.event == UFFD_EVENT_PAGEFAULT && serve(h, msg.arg.pagefault.address) < 0)
			break;
	}
	if (h->error) {
		/* a fault left waiting would hang the vCPU: without the registration it maps a zero page, which the
		 * check after the pass counts as a mismatch, and the error is reported */
		struct uffdio_range r = { .start = (uint64_t)(uintptr_t)h->region, .len = h->region_bytes };
		(void)ioctl(h->uffd, UFFDIO_UNREGISTER, &r);
	}
	return NULL;
}

int handler_start(struct handler *h)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (uint64_t)(uintptr_t)h->region, .len = h->region_bytes },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};

	/* not UFFD_USER_MODE_ONLY: the faults to serve are KVM's, taken in the kernel through GUP */
	h->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (h->uffd < 0)
		return fail(h, "userfaultfd (as root, or with vm.unprivileged_userfaultfd=1)");
	int r = 0;
	if (ioctl(h->uffd, UFFDIO_API, &api) < 0)
		r = fail(h, "UFFDIO_API");
	else if (ioctl(h->uffd, UFFDIO_REGISTER, &reg) < 0)
		r = fail(h, "UFFDIO_REGISTER");
	else {
		atomic_store(&h->stop, false);
		int e = pthread_create(&h->thread, NULL, run, h);
		if (e) {
			errno = e;
			r = fail(h, "pthread_create");
		}
	}
	if (r < 0) {
		close(h->uffd);
		h->uffd = -1;
	}
	return r;
}

void handler_stop(struct handler *h)
{
	atomic_store(&h->stop, true);
	pthread_join(h->thread, NULL);
	close(h->uffd);
	h->uffd = -1;
}
