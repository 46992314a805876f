// SPDX-License-Identifier: GPL-2.0-or-later
/* Drain a stream on its own thread (a pump, pump.h) into a bounded buffer. */
#include "drain.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.h"
#include "pump.h"

#define DRAIN_READ_MAX 65536

struct drain {
	struct pump *pump;
	int notify;     /* eventfd: readable while bytes or the end wait */
	bool signalled; /* notify is readable (under lock): it is written and read only on a change */
	uint64_t next_read_ns; /* the pump's thread only */
	pthread_mutex_t lock;
	char *buf;
	size_t start, len, cap;
	bool eof;
	uint64_t dropped;
	uint64_t reads; /* deliveries: the thread's wakeups with data */
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

/* notify readable, with a system call only when it was not (d->lock held) */
static void notify_locked(struct drain *d)
{
	if (!d->signalled) {
		signal_fd(d->notify);
		d->signalled = true;
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
	d->reads++;
	notify_locked(d); /* the sampler takes several reads' bytes at once */
	pthread_mutex_unlock(&d->lock);
}

/* the guest writes byte by byte: take the stream in batches, not per byte
 * (the pipe holds minutes of it), so neither thread wakes hundreds of times a second */
static size_t drain_budget(void *userdata, uint64_t now_ns, uint64_t *wait_ns)
{
	struct drain *d = userdata;

	if (now_ns < d->next_read_ns) {
		*wait_ns = d->next_read_ns - now_ns;
		return 0;
	}
	return SIZE_MAX;
}

static int drain_deliver(void *userdata, const void *buf, size_t n)
{
	struct drain *d = userdata;

	append(d, buf, n);
	d->next_read_ns = mono_ns() + DRAIN_BATCH_MS * NSEC_PER_MSEC;
	return 0;
}

static void drain_end(void *userdata, int reason)
{
	struct drain *d = userdata;

	(void)reason; /* stopped, read error or end of stream: the reader sees the end alike */
	pthread_mutex_lock(&d->lock);
	d->eof = true;
	notify_locked(d);
	pthread_mutex_unlock(&d->lock);
}

static const struct pump_ops drain_ops = {
	.budget = drain_budget,
	.deliver = drain_deliver,
	.end = drain_end,
};

int drain_start(int fd, struct drain **ret)
{
	struct drain *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	d->notify = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->notify < 0) {
		r = -errno;
		free(d);
		return r;
	}
	pthread_mutex_init(&d->lock, NULL);
	r = pump_start(fd, DRAIN_READ_MAX, "sb-drain", &drain_ops, d, &d->pump);
	if (r < 0) {
		pthread_mutex_destroy(&d->lock);
		close(d->notify);
		free(d);
		return r;
	}
	*ret = d;
	return 0;
}

void drain_free(struct drain *d)
{
	if (!d)
		return;
	pump_free(d->pump);
	pthread_mutex_destroy(&d->lock);
	close(d->notify);
	free(d->buf);
	free(d);
}

size_t drain_take(struct drain *d, void *buf, size_t len, bool *eof)
{
	size_t n;

	pthread_mutex_lock(&d->lock);
	n = d->len < len ? d->len : len;
	if (n)
		memcpy(buf, d->buf + d->start, n);
	d->start += n;
	d->len -= n;
	if (d->len == 0)
		d->start = 0;
	*eof = d->eof && d->len == 0;
	/* readable while bytes are left or the end waits; cleared when the last byte is taken */
	if (d->signalled && d->len == 0 && !d->eof) {
		clear_fd(d->notify);
		d->signalled = false;
	}
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

uint64_t drain_reads(struct drain *d)
{
	uint64_t v;

	if (!d)
		return 0;
	pthread_mutex_lock(&d->lock);
	v = d->reads;
	pthread_mutex_unlock(&d->lock);
	return v;
}

uint64_t drain_cpu_ns(struct drain *d)
{
	return d ? pump_cpu_ns(d->pump) : 0;
}
