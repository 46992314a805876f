// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * spec.snapshot.max_bandwidth for real: QEMU ignores max-bandwidth for a
 * background snapshot, so snapbench's sink applies it (docs/running.md).
 *
 *   file       a 128 MiB guest at 8 MiB/s: the snapshot completes, the
 *              file holds QEMU's whole stream (its first and last bytes
 *              where QEMU put them, as many bytes as the sink moved), and
 *              it took at least (bytes - burst) / rate: the bound a
 *              working token bucket guarantees
 *   null       the same bound with the null sink
 *   sink-full  the throttled sink on a full (tiny) tmpfs: the snapshot
 *              fails with the sink's error (ENOSPC), no hang, no file left
 *   cancel     cancelled while QEMU waits on the throttled pipe: the run
 *              ends cancelled, the sink's thread ended, no QEMU, no file
 *
 * After every run no thread of the run engine (named sb-...) is left.
 *
 * (QEMU killed mid-snapshot with a throttle: test-run-failures qemu-killed.)
 * argv[3] (optional) runs one case only.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "macro.h"
#include "run-test.h"
#include "runner.h"
#include "sink-throttle.h"
#include "spec.h"

/* what the limiter may be off by in the duration: clocks read a few instructions apart */
#define ALLOWANCE_S 0.01

static void throttled_spec(struct run_spec *spec, const char *rate)
{
	struct sb_error err = {};

	run_test_spec_init(spec);
	CHECK(spec_set(spec, "repetitions", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "vm.memory", "128M", NULL, &err) == 0);
	CHECK(spec_set(spec, "bpf.enabled", "false", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.warmup_s", "0.5", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.pre_s", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.post_s", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.interval_ms", "500", NULL, &err) == 0);
	CHECK(spec_set(spec, "snapshot.max_bandwidth", rate, NULL, &err) == 0);
}

/* Threads of this process whose name starts with prefix (the run engine's pumps are "sb-..."). */
static unsigned count_threads(const char *prefix)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	unsigned n = 0;

	CHECK(d);
	while ((e = readdir(d))) {
		char path[300];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (!strncmp(run_test_read_file(path), prefix, strlen(prefix)))
			n++;
	}
	closedir(d);
	return n;
}

/* run_test_run(), then: the sink's thread (and the telemetry drain's) ended with the run. */
static int run(const char *name, const struct run_spec *spec, struct runner_options *opts, struct json_object **report,
	       struct sb_error *err)
{
	int k = run_test_run(name, spec, opts, report, err);

	CHECK_MSG(count_threads("sb-") == 0, "%u of the run's threads are left", count_threads("sb-"));
	return k;
}

/* The throttle section and the lower bound on the duration; returns the bytes the sink moved. */
static double check_throttled(struct json_object *r, double rate)
{
	double bytes = jnum(r, "repetitions/0/snapshot/throttle/bytes");
	double burst = jnum(r, "repetitions/0/snapshot/throttle/burst");
	double duration = jnum(r, "repetitions/0/snapshot/duration_s");
	double bound = (bytes - burst) / rate;

	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/status"), "completed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/throttle/by"), "sink"));
	CHECK(jnum(r, "repetitions/0/snapshot/throttle/rate") == rate);
	CHECK(burst > 0 && burst <= rate);
	/* the sink moved all QEMU wrote: its RAM and the device state after it */
	CHECK_MSG(bytes > jnum(r, "repetitions/0/snapshot/bytes"), "the sink moved %.0f bytes, QEMU wrote %.0f of RAM",
		  bytes, jnum(r, "repetitions/0/snapshot/bytes"));
	/* else the test proves nothing: the limit must matter for several seconds */
	CHECK_MSG(bound >= 3, "only %.0f bytes at %.0f B/s", bytes, rate);
	printf("moved %.0f bytes in %.3f s (%.2f MiB/s for a limit of %.2f MiB/s); lower bound %.3f s; waited %.3f s\n",
	       bytes, duration, bytes / duration / 1048576, rate / 1048576, bound,
	       jnum(r, "repetitions/0/snapshot/throttle/waited_s"));
	CHECK_MSG(duration >= bound - ALLOWANCE_S, "the snapshot took %.3f s, a limit of %.0f B/s needs at least %.3f s",
		  duration, rate, bound);
	CHECK(jnum(r, "repetitions/0/snapshot/throttle/waited_s") > 0);
	CHECK(jnum(r, "repetitions/0/windows/snapshot/duration_s") >= bound - ALLOWANCE_S);
	return bytes;
}

/*
 * The file is QEMU's whole stream: it starts with QEMU's magic and ends
 * with the device-state description QEMU writes last (QEMU_VM_VMDESCRIPTION,
 * a 32-bit length, then that many bytes of JSON), exactly at its end.
 */
static void check_stream_whole(const char *path, double bytes)
{
	FILE *f = fopen(path, "rb");
	static char tail[1 << 20];
	char magic[4];
	long size;
	size_t n;

	CHECK_MSG(f, "%s: %s", path, strerror(errno));
	CHECK(fread(magic, 1, 4, f) == 4 && !memcmp(magic, "QEVM", 4));
	CHECK(fseek(f, 0, SEEK_END) == 0);
	size = ftell(f);
	CHECK_MSG((double)size == bytes, "%s has %ld bytes, the sink moved %.0f", path, size, bytes);
	n = size < (long)sizeof(tail) ? (size_t)size : sizeof(tail);
	CHECK(fseek(f, size - (long)n, SEEK_SET) == 0 && fread(tail, 1, n, f) == n);
	fclose(f);
	for (size_t i = n - 13; i >= 5; i--) {
		uint32_t len;
		if (memcmp(tail + i, "{\"page_size\"", 12) || tail[i - 5] != 0x06)
			continue;
		memcpy(&len, tail + i - 4, 4);
		CHECK_MSG(i + ntohl(len) == n, "the device-state description ends %ld bytes before the file does",
			  (long)n - (long)(i + ntohl(len)));
		printf("%s: QEMU's stream, whole (%ld bytes, device state at the end)\n", path, size);
		return;
	}
	CHECK_MSG(false, "%s: no device-state description in its last %zu bytes", path, n);
}

static void test_file(void)
{
	struct run_spec spec;
	struct sb_error err = {};
	struct runner_options opts = {};
	struct json_object *r;
	char dir[PATH_MAX], path[PATH_MAX + 32];

	throttled_spec(&spec, "8M");
	CHECK(spec_set(&spec, "snapshot.keep", "true", NULL, &err) == 0);
	snprintf(dir, sizeof(dir), "%s/run", test_tmpdir("throttle-file"));
	opts.run_dir = dir;
	CHECK_MSG(run("file", &spec, &opts, &r, &err) == 0, "%s", err.msg);
	CHECK(!strcmp(jstr(r, "state"), "completed"));
	double bytes = check_throttled(r, 8 << 20);
	CHECK(jnum(r, "repetitions/0/snapshot/file_bytes") == bytes);
	snprintf(path, sizeof(path), "%s/snapshot-rep0.bin", dir);
	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/path"), path));
	check_stream_whole(path, bytes);
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

static void test_null(void)
{
	struct run_spec spec;
	struct sb_error err = {};
	struct runner_options opts = {};
	struct json_object *r;
	char dir[PATH_MAX];

	throttled_spec(&spec, "16M");
	CHECK(spec_set(&spec, "snapshot.sink", "null", NULL, &err) == 0);
	snprintf(dir, sizeof(dir), "%s/run", test_tmpdir("throttle-null"));
	opts.run_dir = dir;
	CHECK_MSG(run("null", &spec, &opts, &r, &err) == 0, "%s", err.msg);
	check_throttled(r, 16 << 20);
	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/sink"), "null"));
	CHECK(jnull(r, "repetitions/0/snapshot/file_bytes"));
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

static void test_sink_full(void)
{
	const char *tmpfs_dir = test_tmpfs("throttle-sink-full", "16m");
	struct run_spec spec;
	struct sb_error err = {};
	struct runner_options opts = { .skip_preflight = true };
	struct json_object *r;
	char dir[PATH_MAX], path[PATH_MAX + 32];

	throttled_spec(&spec, "32M");
	snprintf(dir, sizeof(dir), "%s/run", tmpfs_dir);
	opts.run_dir = dir;
	CHECK(run("sink-full", &spec, &opts, &r, &err) < 0);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/error/phase"), "rep 0 snapshot"));
	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/status"), "failed"));
	printf("sink-full: %s\n", jstr(r, "repetitions/0/error/message"));
	snprintf(path, sizeof(path), "%s/snapshot-rep0.bin", dir);
	/* the report names the sink, the file and the error, not only QEMU's broken pipe */
	CHECK_MSG(strstr(jstr(r, "repetitions/0/error/message"), "writing the snapshot to") &&
			  strstr(jstr(r, "repetitions/0/error/message"), path) &&
			  strstr(jstr(r, "repetitions/0/error/message"), strerror(ENOSPC)),
		  "%s", jstr(r, "repetitions/0/error/message"));
	CHECK(strstr(jstr(r, "repetitions/0/snapshot/error"), strerror(ENOSPC)));
	/* what it moved before the disk was full, no more than fits */
	CHECK(jnum(r, "repetitions/0/snapshot/throttle/bytes") > 0);
	CHECK(jnum(r, "repetitions/0/snapshot/throttle/bytes") <= 16 << 20);
	CHECK(jnull(r, "repetitions/0/snapshot/duration_s"));
	/* no half-written file left to pass for a snapshot */
	CHECK(access(path, F_OK) < 0);
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

static volatile sig_atomic_t cancel_flag;
static uint64_t cancelled_ns;
static unsigned sink_threads_during;

static void cancel_in_snapshot(const struct runner_progress *p, void *userdata)
{
	(void)userdata;
	if (!cancel_flag && !strcmp(p->step, "snapshot") && p->snapshot_fraction > 0.2) {
		printf("cancel: cancelling at %.0f%% of the snapshot\n", p->snapshot_fraction * 100);
		sink_threads_during = count_threads(SINK_THROTTLE_THREAD);
		cancelled_ns = mono_ns();
		cancel_flag = 1;
	}
}

static void test_cancel(void)
{
	struct run_spec spec;
	struct sb_error err = {};
	struct runner_options opts = { .cancel = &cancel_flag, .progress = cancel_in_snapshot };
	struct json_object *r;
	char dir[PATH_MAX], path[PATH_MAX + 32];

	/* about 16 s at 4 MiB/s: QEMU spends most of it blocked on the pipe */
	throttled_spec(&spec, "4M");
	snprintf(dir, sizeof(dir), "%s/run", test_tmpdir("throttle-cancel"));
	opts.run_dir = dir;
	CHECK(run("cancel", &spec, &opts, &r, &err) == -ECANCELED);
	CHECK_MSG(cancelled_ns, "the snapshot never reached 20%%");
	/* the sink's thread was there (and run() saw it gone) */
	CHECK_MSG(sink_threads_during == 1, "%u %s threads during the snapshot", sink_threads_during,
		  SINK_THROTTLE_THREAD);
	printf("cancel: the run ended %.2f s after the cancel\n", (double)(mono_ns() - cancelled_ns) / 1e9);
	CHECK(!strcmp(jstr(r, "state"), "cancelled"));
	CHECK(!strcmp(jstr(r, "repetitions/0/state"), "cancelled"));
	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/status"), "cancelled"));
	CHECK(jnum(r, "repetitions/0/snapshot/throttle/bytes") > 0);
	snprintf(path, sizeof(path), "%s/snapshot-rep0.bin", dir);
	CHECK(access(path, F_OK) < 0);
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

int main(int argc, char **argv)
{
	static const struct run_test_case cases[] = {
		{ "file", test_file },
		{ "null", test_null },
		{ "sink-full", test_sink_full },
		{ "cancel", test_cancel },
	};

	run_test_init(argc, argv);
	run_test_require_root();
	run_test_cases(cases, ARRAY_SIZE(cases), argc > 3 ? argv[3] : NULL);
	return 0;
}
