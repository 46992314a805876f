// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The throttled sink without QEMU: this test plays QEMU and writes into the
 * pipe. The bytes arrive whole and in order; t seconds never move more
 * than burst + rate * t; a sink that fails (/dev/full: ENOSPC) closes the
 * pipe so the writer gets EPIPE instead of blocking; stopping the sink
 * unblocks a writer stuck on a full pipe. (tests/runner/test-run-throttle.c
 * does it with QEMU.)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "sink-throttle.h"

/* Waits (bounded) for the pump to end. */
static void wait_ended(struct sink_throttle *t, struct sink_throttle_stats *st)
{
	uint64_t deadline = mono_ns() + 60 * NSEC_PER_SEC;

	for (;;) {
		sink_throttle_stats(t, st);
		if (st->ended)
			return;
		CHECK_MSG(mono_ns() < deadline, "the sink did not end within 60 s (%llu bytes moved)",
			  (unsigned long long)st->bytes);
		usleep(5000);
	}
}

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 7 + (i >> 12));
}

/* Writes n pattern bytes in chunks; returns how many went in before an error (errno set). */
static size_t write_all(int fd, size_t n)
{
	static unsigned char buf[65536];
	size_t done = 0;

	while (done < n) {
		size_t len = n - done < sizeof(buf) ? n - done : sizeof(buf);
		for (size_t i = 0; i < len; i++)
			buf[i] = pattern(done + i);
		ssize_t w = write(fd, buf, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return done;
		}
		done += (size_t)w;
	}
	return done;
}

static void test_rate_and_content(void)
{
	char path[] = "/tmp/test-sink-throttle-XXXXXX";
	const uint64_t rate = 8u << 20;
	const size_t total = 6u << 20;
	struct sink_throttle *t;
	struct sink_throttle_stats st;
	int sink = mkstemp(path), wfd;
	uint64_t start;

	CHECK(sink >= 0);
	CHECK(sink_throttle_start(sink, rate, &wfd, &t) == 0);
	start = mono_ns();
	CHECK(write_all(wfd, total) == total);
	close(wfd);
	wait_ended(t, &st);
	sink_throttle_free(t);

	double took = (double)(st.end_ns - start) / 1e9, bound = ((double)total - (double)st.burst) / (double)rate;
	printf("rate: %zu bytes in %.3f s at %llu B/s (lower bound %.3f s, burst %llu, waited %.3f s)\n", total, took,
	       (unsigned long long)rate, bound, (unsigned long long)st.burst, (double)st.waited_ns / 1e9);
	CHECK(st.error == 0 && !st.sink_error);
	CHECK(st.bytes == total);
	CHECK(st.rate == rate && st.burst > 0);
	CHECK_MSG(took >= bound, "%zu bytes in %.3f s: faster than %llu B/s allows", total, took,
		  (unsigned long long)rate);
	CHECK(st.waited_ns > 0);

	/* the file holds every byte, in order */
	FILE *f = fopen(path, "rb");
	size_t i = 0;
	int c;
	CHECK(f);
	while ((c = fgetc(f)) != EOF) {
		CHECK_MSG((unsigned char)c == pattern(i), "byte %zu differs", i);
		i++;
	}
	fclose(f);
	CHECK(i == total);
	unlink(path);
}

static void test_sink_error(void)
{
	struct sink_throttle *t;
	struct sink_throttle_stats st;
	int sink = open("/dev/full", O_WRONLY | O_CLOEXEC), wfd;
	size_t wrote;

	if (sink < 0)
		SKIP_TEST("/dev/full (%s)", strerror(errno));
	CHECK(sink_throttle_start(sink, 64u << 20, &wfd, &t) == 0);
	/* far more than the pipe holds: without the pipe closed, this would block for good */
	wrote = write_all(wfd, 16u << 20);
	CHECK_MSG(wrote < (16u << 20) && errno == EPIPE, "wrote %zu bytes, then %s", wrote, strerror(errno));
	wait_ended(t, &st);
	CHECK(st.error == -ENOSPC && st.sink_error);
	CHECK(st.bytes == 0);
	printf("sink error: the writer got EPIPE after %zu bytes; the sink says %s\n", wrote, strerror(-st.error));
	close(wfd);
	sink_throttle_free(t);
}

struct writer {
	int fd;
	size_t wrote;
	int error;
};

static void *blocked_writer(void *arg)
{
	struct writer *w = arg;

	w->wrote = write_all(w->fd, 64u << 20);
	w->error = errno;
	return NULL;
}

static void test_stop_unblocks_writer(void)
{
	struct sink_throttle *t;
	struct sink_throttle_stats st;
	struct writer w = {};
	pthread_t thread;
	int sink = open("/dev/null", O_WRONLY | O_CLOEXEC);
	uint64_t t0;

	CHECK(sink >= 0);
	/* 1 KiB/s: the writer soon blocks on the full pipe, as QEMU does */
	CHECK(sink_throttle_start(sink, 1024, &w.fd, &t) == 0);
	CHECK(pthread_create(&thread, NULL, blocked_writer, &w) == 0);
	usleep(300000);
	t0 = mono_ns();
	sink_throttle_stop(t);
	CHECK(pthread_join(thread, NULL) == 0);
	printf("stop: the blocked writer returned %.3f s after the stop, %zu bytes in (%s)\n",
	       (double)(mono_ns() - t0) / 1e9, w.wrote, strerror(w.error));
	CHECK(w.wrote < (64u << 20) && w.error == EPIPE);
	sink_throttle_stats(t, &st);
	CHECK(st.ended && st.error == 0); /* stopped: no error of its own */
	close(w.fd);
	sink_throttle_free(t);

	/* stopping a sink nobody writes to, and freeing without a stop */
	CHECK(sink_throttle_start(open("/dev/null", O_WRONLY | O_CLOEXEC), 1024, &w.fd, &t) == 0);
	sink_throttle_free(t);
	close(w.fd);
	sink_throttle_free(NULL);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* QEMU ignores it too: a closed pipe is EPIPE */
	test_rate_and_content();
	test_sink_error();
	test_stop_unblocks_writer();
	return 0;
}
