// SPDX-License-Identifier: GPL-2.0-or-later
/* The throttled snapshot sink (sink-throttle.h). */
#include "sink-throttle.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "pump.h"
#include "token-bucket.h"

#define SINK_READ_MAX (1u << 20) /* per read(); the pipe rarely holds this much */

struct sink_throttle {
	int read_fd, sink_fd;    /* the pump's thread closes read_fd when the sink fails */
	struct pump *pump;
	struct token_bucket bucket; /* the pump's thread only */
	uint64_t step;
	pthread_mutex_t lock;    /* guards st */
	struct sink_throttle_stats st;
};

static size_t throttle_budget(void *userdata, uint64_t now_ns, uint64_t *wait_ns)
{
	struct sink_throttle *t = userdata;
	uint64_t g = token_bucket_grant(&t->bucket, t->step, now_ns, wait_ns);

	if (g == 0) {
		pthread_mutex_lock(&t->lock);
		t->st.waited_ns += *wait_ns;
		pthread_mutex_unlock(&t->lock);
	}
	return g > SINK_READ_MAX ? SINK_READ_MAX : (size_t)g;
}

static int throttle_deliver(void *userdata, const void *buf, size_t n)
{
	struct sink_throttle *t = userdata;
	const char *p = buf;
	size_t left = n;
	int r = 0;

	token_bucket_take(&t->bucket, n);
	while (left > 0) {
		ssize_t w = write(t->sink_fd, p, left);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (w == 0) {
			r = -EIO;
			break;
		}
		p += w;
		left -= (size_t)w;
		pthread_mutex_lock(&t->lock);
		t->st.bytes += (uint64_t)w;
		pthread_mutex_unlock(&t->lock);
	}
	if (r < 0) {
		pthread_mutex_lock(&t->lock);
		t->st.sink_error = true;
		pthread_mutex_unlock(&t->lock);
	}
	return r;
}

static void throttle_end(void *userdata, int reason)
{
	struct sink_throttle *t = userdata;

	if (reason < 0 && reason != -ECANCELED) {
		/* QEMU's next write fails with EPIPE rather than waiting on a pipe nobody reads */
		close(t->read_fd);
		t->read_fd = -1;
	}
	pthread_mutex_lock(&t->lock);
	t->st.ended = true;
	t->st.end_ns = mono_ns();
	t->st.error = reason == -ECANCELED ? 0 : reason;
	pthread_mutex_unlock(&t->lock);
}

static const struct pump_ops throttle_ops = {
	.budget = throttle_budget,
	.deliver = throttle_deliver,
	.end = throttle_end,
};

int sink_throttle_start(int sink_fd, uint64_t rate, int *write_fd, struct sink_throttle **ret)
{
	struct sink_throttle *t;
	int fds[2], r;

	t = calloc(1, sizeof(*t));
	if (!t) {
		close(sink_fd);
		return -ENOMEM;
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		r = -errno;
		close(sink_fd);
		free(t);
		return r;
	}
	t->read_fd = fds[0];
	t->sink_fd = sink_fd;
	token_bucket_sizes(rate, &t->st.burst, &t->step);
	t->st.rate = rate;
	token_bucket_init(&t->bucket, rate, t->st.burst, mono_ns());
	pthread_mutex_init(&t->lock, NULL);
	r = pump_start(t->read_fd, SINK_READ_MAX, SINK_THROTTLE_THREAD, &throttle_ops, t, &t->pump);
	if (r < 0) {
		close(fds[1]);
		close(t->read_fd);
		close(sink_fd);
		pthread_mutex_destroy(&t->lock);
		free(t);
		return r;
	}
	*write_fd = fds[1];
	*ret = t;
	return 0;
}

void sink_throttle_stats(struct sink_throttle *t, struct sink_throttle_stats *st)
{
	pthread_mutex_lock(&t->lock);
	*st = t->st;
	pthread_mutex_unlock(&t->lock);
}

void sink_throttle_stop(struct sink_throttle *t)
{
	pump_free(t->pump);
	t->pump = NULL;
	if (t->read_fd >= 0)
		close(t->read_fd);
	t->read_fd = -1;
}

void sink_throttle_free(struct sink_throttle *t)
{
	if (!t)
		return;
	sink_throttle_stop(t);
	close(t->sink_fd);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
