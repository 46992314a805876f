// SPDX-License-Identifier: GPL-2.0-or-later
/* Drain a stream on its own thread into a bounded buffer. */
#include "drain.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct drain {
	int fd;
	int notify;     /* eventfd: readable while bytes or the end wait */
	int stop;       /* eventfd: asks the thread to end */
	pthread_t thread;
	pthread_mutex_t lock;
	char *buf;
	size_t start, len, cap;
	bool eof;
	uint64_t dropped;
};

static void signal_fd(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0) {
		/* an eventfd only refuses at 2^64-1: cannot happen */
	}
}

static void clear_fd(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing was signalled */
	}
}

static void append(struct drain *d, const char *data, size_t n)
{
	pthread_mutex_lock(&d->lock);
	if (d->start && d->start + d->len + n > d->cap) {
		memmove(d->buf, d->buf + d->start, d->len);
		d->start = 0;
	}
	if (d->len + n > d->cap) {
		size_t cap = d->cap ? d->cap : 65536;
		while (cap < d->len + n && cap < DRAIN_MAX_BUFFERED)
			cap *= 2;
		if (cap > DRAIN_MAX_BUFFERED)
			cap = DRAIN_MAX_BUFFERED;
		char *nb = cap > d->cap ? realloc(d->buf, cap) : d->buf;
		if (nb) {
			d->buf = nb;
			d->cap = cap;
		}
	}
	size_t fit = d->cap - d->start - d->len < n ? d->cap - d->start - d->len : n;
	memcpy(d->buf + d->start + d->len, data, fit);
	d->len += fit;
	d->dropped += n - fit;
	pthread_mutex_unlock(&d->lock);
	signal_fd(d->notify);
}

static void *drain_thread(void *arg)
{
	struct drain *d = arg;
	char tmp[65536];

	for (;;) {
		struct pollfd p[2] = { { .fd = d->fd, .events = POLLIN }, { .fd = d->stop, .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		ssize_t n = read(d->fd, tmp, sizeof(tmp));
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			break;
		}
		if (n == 0)
			break;
		append(d, tmp, (size_t)n);
		/* the guest writes byte by byte: take the stream in batches, not per byte
		 * (the pipe holds minutes of it), so neither thread wakes hundreds of times a second */
		struct pollfd stop = { .fd = d->stop, .events = POLLIN };
		if (poll(&stop, 1, DRAIN_BATCH_MS) > 0)
			break;
	}
	pthread_mutex_lock(&d->lock);
	d->eof = true;
	pthread_mutex_unlock(&d->lock);
	signal_fd(d->notify);
	return NULL;
}

int drain_start(int fd, struct drain **ret)
{
	struct drain *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	d->fd = fd;
	d->notify = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	d->stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->notify < 0 || d->stop < 0) {
		r = -errno;
		goto fail;
	}
	pthread_mutex_init(&d->lock, NULL);
	r = -pthread_create(&d->thread, NULL, drain_thread, d);
	if (r < 0) {
		pthread_mutex_destroy(&d->lock);
		goto fail;
	}
	*ret = d;
	return 0;
fail:
	if (d->notify >= 0)
		close(d->notify);
	if (d->stop >= 0)
		close(d->stop);
	free(d);
	return r;
}

void drain_free(struct drain *d)
{
	if (!d)
		return;
	signal_fd(d->stop);
	pthread_join(d->thread, NULL);
	pthread_mutex_destroy(&d->lock);
	close(d->notify);
	close(d->stop);
	free(d->buf);
	free(d);
}

size_t drain_take(struct drain *d, void *buf, size_t len, bool *eof)
{
	size_t n;

	pthread_mutex_lock(&d->lock);
	clear_fd(d->notify);
	n = d->len < len ? d->len : len;
	if (n)
		memcpy(buf, d->buf + d->start, n);
	d->start += n;
	d->len -= n;
	if (d->len == 0)
		d->start = 0;
	else
		signal_fd(d->notify); /* more left: stay readable */
	*eof = d->eof && d->len == 0;
	if (*eof)
		signal_fd(d->notify);
	pthread_mutex_unlock(&d->lock);
	return n;
}

int drain_poll_fd(const struct drain *d)
{
	return d->notify;
}

uint64_t drain_dropped(struct drain *d)
{
	uint64_t v;

	pthread_mutex_lock(&d->lock);
	v = d->dropped;
	pthread_mutex_unlock(&d->lock);
	return v;
}
