// SPDX-License-Identifier: GPL-2.0-or-later
/* Read a stream on its own thread into a consumer, paced by it (pump.h). */
#include "pump.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.h"

struct pump {
	int fd;
	int stop; /* eventfd: asks the thread to end */
	size_t chunk;
	char *buf;
	const struct pump_ops *ops;
	void *userdata;
	pthread_t thread;
	_Atomic uint64_t cpu_ns; /* the thread's CPU time once it ended */
	atomic_bool ended;
};

static struct timespec to_timespec(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / NSEC_PER_SEC), .tv_nsec = (long)(ns % NSEC_PER_SEC) };
}

/* Sleeps wait_ns unless stopped first; true when stopped. */
static bool sleep_unless_stopped(struct pump *p, uint64_t wait_ns)
{
	struct pollfd stop = { .fd = p->stop, .events = POLLIN };
	struct timespec ts = to_timespec(wait_ns);

	return ppoll(&stop, 1, &ts, NULL) > 0;
}

static void *pump_thread(void *arg)
{
	struct pump *p = arg;
	int reason;

	for (;;) {
		size_t want = p->chunk;

		if (p->ops->budget) {
			uint64_t wait_ns = 0;
			size_t b = p->ops->budget(p->userdata, mono_ns(), &wait_ns);
			if (b == 0) {
				if (sleep_unless_stopped(p, wait_ns ? wait_ns : NSEC_PER_MSEC)) {
					reason = -ECANCELED;
					break;
				}
				continue;
			}
			if (b < want)
				want = b;
		}
		struct pollfd fds[2] = { { .fd = p->fd, .events = POLLIN }, { .fd = p->stop, .events = POLLIN } };
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			reason = -errno;
			break;
		}
		if (fds[1].revents) {
			reason = -ECANCELED;
			break;
		}
		ssize_t n = read(p->fd, p->buf, want);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			reason = -errno;
			break;
		}
		if (n == 0) {
			reason = 0;
			break;
		}
		reason = p->ops->deliver(p->userdata, p->buf, (size_t)n);
		if (reason < 0)
			break;
	}
	if (p->ops->end)
		p->ops->end(p->userdata, reason);
	atomic_store(&p->cpu_ns, thread_cpu_ns());
	atomic_store(&p->ended, true);
	return NULL;
}

int pump_start(int fd, size_t chunk, const char *name, const struct pump_ops *ops, void *userdata,
	       struct pump **ret)
{
	struct pump *p;
	sigset_t all, old;
	int r;

	if (fd < 0 || chunk == 0 || !ops || !ops->deliver)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->fd = fd;
	p->chunk = chunk;
	p->ops = ops;
	p->userdata = userdata;
	p->buf = malloc(chunk);
	p->stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!p->buf || p->stop < 0) {
		r = p->buf ? -errno : -ENOMEM;
		goto fail;
	}
	/* signals are the main thread's business (SIGINT cancels a run there) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&p->thread, NULL, pump_thread, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		goto fail;
	if (name)
		pthread_setname_np(p->thread, name); /* a name too long is refused: it stays unnamed */
	*ret = p;
	return 0;
fail:
	if (p->stop >= 0)
		close(p->stop);
	free(p->buf);
	free(p);
	return r;
}

uint64_t pump_cpu_ns(struct pump *p)
{
	clockid_t id;

	if (!p)
		return 0;
	if (!atomic_load(&p->ended) && pthread_getcpuclockid(p->thread, &id) == 0) {
		struct timespec ts;
		if (clock_gettime(id, &ts) == 0)
			return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
	}
	/* ended: the clock of a thread that exited cannot be read, it left its time behind */
	return atomic_load(&p->cpu_ns);
}

void pump_free(struct pump *p)
{
	uint64_t one = 1;

	if (!p)
		return;
	if (write(p->stop, &one, sizeof(one)) < 0) {
		/* an eventfd only refuses at 2^64-1: cannot happen */
	}
	pthread_join(p->thread, NULL);
	close(p->stop);
	free(p->buf);
	free(p);
}
