// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A QEMU background snapshot (qmp/) while the guest runs write64 on vCPU 1
 * and the probe on vCPU 0: the snapshot completes, and the guest keeps
 * making progress during it (userfaultfd write-protect faults slow the
 * writer down, they must not stop it) and after it, then stops cleanly.
 *
 * The snapshot goes into a pipe that a thread drains at SINK_RATE, slow
 * storage, so that it spans many telemetry samples. (QEMU's max-bandwidth
 * cannot do this: its background-snapshot thread never checks the rate
 * limit.) The guest populates its region first, so there are real pages
 * to save.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "guest-vm.h"
#include "qmp-commands.h"
#include "qmp.h"

#define TIMEOUT_MS 60000
#define SNAPSHOT_TIMEOUT_MS 300000
#define SINK_RATE (8 << 20) /* bytes/s */
#define SINK_CHUNK (64 << 10)
#define MAX_SAMPLES 4096

struct timed_sample {
	struct guest_sample s;
	int phase; /* 0 before, 1 during, 2 after */
};

static struct timed_sample samples[MAX_SAMPLES];
static unsigned nr_samples;

static void take(struct test_guest *g, const struct guest_record *rec, int phase)
{
	CHECK(rec->type == GUEST_RECORD_SAMPLE);
	CHECK(nr_samples < MAX_SAMPLES);
	samples[nr_samples].s = rec->sample;
	samples[nr_samples].phase = phase;
	nr_samples++;
}

struct sink {
	int fd;
	uint64_t bytes;
};

/* Reads the snapshot at SINK_RATE until QEMU closes its end. */
static void *sink_thread(void *opaque)
{
	static char buf[SINK_CHUNK];
	struct sink *s = opaque;
	uint64_t start = mono_ns();

	for (;;) {
		ssize_t n = read(s->fd, buf, sizeof(buf));
		uint64_t due;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		s->bytes += (uint64_t)n;
		due = start + s->bytes * NSEC_PER_SEC / SINK_RATE;
		while (mono_ns() < due)
			usleep((useconds_t)((due - mono_ns()) / 1000 + 1));
	}
	return NULL;
}

static void percentiles(const struct guest_hello *h, const struct guest_sample *a, const struct guest_sample *b,
			double ns[2])
{
	static uint64_t window[GUEST_HIST_BUCKETS];
	static const double pct[] = { 50, 99 };
	struct sb_error err = { 0 };

	CHECK(guest_hist_window(b->hist, a->hist, window, &err) == 0);
	if (guest_hist_percentiles(window, h->tsc_hz, pct, 2, ns, &err) < 0)
		ns[0] = ns[1] = 0;
}

int main(void)
{
	_cleanup_qmp_client_ struct qmp_client *c = NULL;
	struct qmp_migration_info info = { 0 };
	const struct guest_record *rec;
	struct sb_error err = { 0 };
	struct guest_hello hello;
	struct guest_params p;
	struct test_guest g;
	struct sink sink = { .fd = -1 };
	pthread_t sink_tid;
	int pipefd[2];
	uint64_t start_ns, last_active_ns = 0, deadline;
	int r, first_during = -1, last_during = -1, before = -1, after;
	double ns_before[2], ns_during[2];

	guest_params_init(&p, 2); /* probe on vCPU 0, write64 on vCPU 1 */
	p.region_bytes = 32u << 20;
	test_guest_start(&g, 128, &p, NULL, true);
	hello = test_guest_expect(&g, GUEST_RECORD_HELLO, TIMEOUT_MS)->hello;
	CHECK(hello.vcpu[1].pattern == GUEST_PATTERN_WRITE64);

	r = qmp_connect_fd(g.qmp, "the guest's QMP socket", TIMEOUT_MS, NULL, &c, &err);
	g.qmp = -1; /* the client owns it now */
	CHECK_MSG(r == 0, "%s", err.msg);

	/* warm up: a few samples before the snapshot */
	for (int i = 0; i < 5; i++)
		take(&g, test_guest_expect(&g, GUEST_RECORD_SAMPLE, TIMEOUT_MS), 0);
	before = (int)nr_samples - 1;

	CHECK(pipe2(pipefd, O_CLOEXEC) == 0);
	sink.fd = pipefd[0];
	CHECK(pthread_create(&sink_tid, NULL, sink_thread, &sink) == 0);
	r = qmp_snapshot_background_start(c, pipefd[1], &err);
	close(pipefd[1]); /* QEMU has its own copy: EOF for the sink when it is done */
	if (r == -EOPNOTSUPP)
		SKIP_TEST("userfaultfd write-protect for QEMU's background snapshot: %s", err.msg);
	CHECK_MSG(r == 0, "%s", err.msg);
	start_ns = mono_ns();

	/* drain telemetry while polling the migration state */
	deadline = start_ns + (uint64_t)SNAPSHOT_TIMEOUT_MS * NSEC_PER_MSEC;
	for (;;) {
		uint64_t t;

		while ((rec = test_guest_next(&g, 100)))
			take(&g, rec, 1);
		CHECK_MSG(!g.eof_ns, "the guest's telemetry closed during the snapshot");
		t = mono_ns();
		qmp_migration_info_clear(&info);
		CHECK_MSG(qmp_query_migrate(c, &info, &err) == 0, "%s", err.msg);
		if (info.status == QMP_MIGRATION_COMPLETED)
			break;
		CHECK_MSG(info.status == QMP_MIGRATION_ACTIVE || info.status == QMP_MIGRATION_SETUP,
			  "snapshot status %s: %s", info.status_name, info.error_desc ? info.error_desc : "");
		last_active_ns = t;
		/* samples read so far were sent while the snapshot was still active */
		if (first_during < 0 && nr_samples > (unsigned)before + 2)
			first_during = before + 2; /* before + 1 may have been in flight at the start */
		if (first_during >= 0)
			last_during = (int)nr_samples - 1;
		CHECK_MSG(mono_ns() < deadline, "the snapshot did not complete within %d s (%s, %lld of %lld bytes)",
			  SNAPSHOT_TIMEOUT_MS / 1000, info.status_name, (long long)info.ram_transferred,
			  (long long)info.ram_total);
	}
	CHECK(pthread_join(sink_tid, NULL) == 0);
	close(sink.fd);
	printf("snapshot: %.1f s, %llu bytes written, %lld normal pages of RAM\n", (double)(mono_ns() - start_ns) / 1e9,
	       (unsigned long long)sink.bytes, (long long)info.ram_normal);
	CHECK(info.ram_total >= (120ll << 20));
	/* the populated region, at least, was saved */
	CHECK_MSG(sink.bytes >= p.region_bytes, "only %llu bytes of snapshot", (unsigned long long)sink.bytes);

	/* progress during the snapshot, over samples certainly sent inside it */
	CHECK_MSG(first_during >= 0 && last_during > first_during,
		  "too few samples during the snapshot (%u in all, active for %.1f s)", nr_samples,
		  (double)(last_active_ns - start_ns) / 1e9);
	CHECK_MSG(samples[last_during].s.ops[1] > samples[first_during].s.ops[1],
		  "write64 made no progress during the snapshot");
	CHECK_MSG(samples[last_during].s.probe_reads > samples[first_during].s.probe_reads,
		  "the probe made no progress during the snapshot");

	/* and after it */
	after = (int)nr_samples;
	for (int i = 0; i < 3; i++)
		take(&g, test_guest_expect(&g, GUEST_RECORD_SAMPLE, TIMEOUT_MS), 2);
	CHECK(samples[nr_samples - 1].s.ops[1] > samples[after].s.ops[1]);

	percentiles(&hello, &samples[0].s, &samples[before].s, ns_before);
	percentiles(&hello, &samples[first_during].s, &samples[last_during].s, ns_during);
	printf("write64: %.0f ops/s before, %.0f during, %.0f after; probe p50/p99: %.0f/%.0f ns before, %.0f/%.0f during\n",
	       guest_ops_per_sec(&hello, &samples[0].s, &samples[before].s, 1),
	       guest_ops_per_sec(&hello, &samples[first_during].s, &samples[last_during].s, 1),
	       guest_ops_per_sec(&hello, &samples[after].s, &samples[nr_samples - 1].s, 1), ns_before[0], ns_before[1],
	       ns_during[0], ns_during[1]);

	test_guest_request_stop(&g);
	rec = test_guest_expect(&g, GUEST_RECORD_END, TIMEOUT_MS);
	CHECK(rec->end.reason == GUEST_END_HOST_REQUEST && rec->end.vcpus_stopped == 2);
	CHECK(test_guest_wait_exit(&g, 30000) == GUEST_EXIT_STATUS(GUEST_EXIT_STOPPED));
	qmp_migration_info_clear(&info);
	test_guest_stop(&g);
	printf("all checks passed\n");
	return 0;
}
