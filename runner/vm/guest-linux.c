// SPDX-License-Identifier: GPL-2.0-or-later
/* A Linux guest's workload through qemu-guest-agent (guest-linux.h). */
#include "guest-linux.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "fileio.h"
#include "locate.h"
#include "macro.h"
#include "qga.h"

#define PROBE_ENV "SNAPBENCH_LINUX_PROBE"
#define PROBE_NAME "snapbench-linux-probe"
#define PROBE_MAX_BYTES (64u << 20)

struct linux_workload {
	struct qga_client *agent;
	char probe_path[PATH_MAX];  /* in the guest */
	char tel_path[PATH_MAX];    /* in the guest */
	int64_t probe_pid, stress_pid;
	bool probe_running, stress_running;
	int64_t handle;             /* guest-file handle of the telemetry file, -1 */
	int pipe_w;                 /* our write end; the caller reads the other */
	unsigned interval_ms;
	pthread_t reader;
	bool reader_running;
	int stop;                   /* asks the reader to end (atomic) */
	char reader_error[SB_ERROR_MAX];
	char *stress_output;
	char *buf;                  /* QGA_FILE_CHUNK bytes for guest-file-read */
};

int linux_probe_find(char **ret, struct sb_error *err)
{
	const char *env = getenv(PROBE_ENV);
	char cand[PATH_MAX + 64];
	int r;

	if (env && *env) {
		if (access(env, R_OK) < 0)
			return sb_error_set(err, -ENOENT, "Linux guest probe %s (from $%s): %s", env, PROBE_ENV, strerror(errno));
		*ret = strdup(env);
		return *ret ? 0 : -ENOMEM;
	}
	r = runner_find_in_build_tree("guest/linux-probe/" PROBE_NAME, ret, err);
	if (r != 0)
		return r < 0 ? r : 0;
	snprintf(cand, sizeof(cand), "%s/snapbench/%s", LIBEXECDIR, PROBE_NAME);
	if (access(cand, R_OK) < 0)
		return sb_error_set(err, -ENOENT, "Linux guest probe %s: %s; install snapbench (meson install) or set $%s",
				    cand, strerror(errno), PROBE_ENV);
	*ret = strdup(cand);
	return *ret ? 0 : -ENOMEM;
}

static int read_file(const char *path, void **buf, size_t *len, struct sb_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *text = NULL;
	size_t n = 0;
	int r;

	if (fd < 0 || fstat(fd, &st) < 0)
		return sb_error_set(err, -errno, "Linux guest probe %s: %s", path, strerror(errno));
	if (st.st_size <= 0 || st.st_size > PROBE_MAX_BYTES)
		return sb_error_set(err, -EFBIG, "Linux guest probe %s: %lld bytes is not a plausible size", path,
				    (long long)st.st_size);
	r = read_full_fd(fd, PROBE_MAX_BYTES, &text, &n);
	if (r == -ENOMEM)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (r < 0 || n != (size_t)st.st_size) {
		free(text);
		return sb_error_set(err, -EIO, "Linux guest probe %s: short read", path);
	}
	*buf = text;
	*len = n;
	return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -errno;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Moves what the probe wrote since the last call into the pipe. 1 at the file's current end. */
static int pump(struct linux_workload *w, struct sb_error *err)
{
	size_t got;
	bool eof = false;
	int r;

	if (w->handle < 0) {
		r = qga_file_open(w->agent, w->tel_path, "r", &w->handle, err);
		if (r < 0) {
			w->handle = -1;
			return r == -EREMOTEIO ? 1 : r; /* not created yet */
		}
	}
	do {
		r = qga_file_read(w->agent, w->handle, w->buf, QGA_FILE_CHUNK, &got, &eof, err);
		if (r < 0)
			return r;
		if (got && write_all(w->pipe_w, w->buf, got) < 0)
			return sb_error_set(err, -EPIPE, "the telemetry reader stopped reading");
	} while (!eof && got);
	return 1;
}

static void *reader_main(void *p)
{
	struct linux_workload *w = p;
	struct timespec ts = { (time_t)(w->interval_ms / 1000), (long)(w->interval_ms % 1000) * 1000000L };

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		struct sb_error e = {};
		if (pump(w, &e) < 0) {
			snprintf(w->reader_error, sizeof(w->reader_error), "%s", e.msg);
			break;
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static int wait_agent(struct qga_client *agent, int timeout_ms, struct sb_error *err)
{
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;
	char version[64];
	int r;

	for (;;) {
		struct sb_error e = {};
		int saved = qga_client_command_timeout(agent);
		qga_client_set_command_timeout(agent, 5000);
		r = qga_sync(agent, 5000, &e);
		if (r >= 0)
			r = qga_info(agent, version, sizeof(version), &e);
		qga_client_set_command_timeout(agent, saved);
		if (r >= 0)
			return 0;
		/* an agent that is not configured at all will not appear by waiting */
		if (r != -ENOTCONN && r != -ETIMEDOUT && r != -ECONNRESET)
			return sb_error_set(err, r, "%s", e.msg);
		if (r == -ENOTCONN && strstr(e.msg, "not configured"))
			return sb_error_set(err, r, "%s", e.msg);
		if (mono_ns() >= deadline)
			return sb_error_set(err, -ENOTCONN,
					    "the guest agent did not answer within %d s of the guest's start (%s); install and start qemu-guest-agent in the guest (docs/linux-guests.md) or raise spec.guest.linux.agent_timeout_s",
					    timeout_ms / 1000, e.msg);
		struct timespec ts = { 1, 0 };
		nanosleep(&ts, NULL);
	}
}

static void kill_guest_pid(struct linux_workload *w, int64_t pid, const char *sig)
{
	char p[32];
	struct sb_error e = {};

	snprintf(p, sizeof(p), "%lld", (long long)pid);
	const char *const argv[] = { sig, p, NULL };
	qga_run(w->agent, "/bin/kill", argv, 10000, NULL, &e);
}

int linux_workload_start(struct qga_client *agent, const struct run_spec *spec, const char *probe_path,
			 int timeout_ms, struct linux_workload **ret, int *telemetry_fd, struct sb_error *err)
{
	struct linux_workload *w;
	_cleanup_free_ void *bin = NULL;
	size_t len = 0;
	int fds[2], r;
	char workers[16], interval[16], gap[16], region[32], timeout_s[16];

	r = wait_agent(agent, timeout_ms, err);
	if (r < 0)
		return r;
	r = read_file(probe_path, &bin, &len, err);
	if (r < 0)
		return r;
	w = calloc(1, sizeof(*w));
	if (!w)
		return sb_error_set(err, -ENOMEM, "out of memory");
	w->agent = agent;
	w->handle = -1;
	w->buf = malloc(QGA_FILE_CHUNK);
	if (!w->buf) {
		free(w);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	w->pipe_w = -1;
	w->interval_ms = spec->guest.telemetry_interval_ms;
	snprintf(w->probe_path, sizeof(w->probe_path), "%s/snapbench-linux-probe", spec->guest.linux_guest.dir);
	snprintf(w->tel_path, sizeof(w->tel_path), "%s/snapbench-telemetry", spec->guest.linux_guest.dir);

	r = qga_copy_in(agent, bin, len, w->probe_path, 0755, err);
	if (r < 0)
		goto fail;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		r = sb_error_set(err, -errno, "telemetry pipe: %s", strerror(errno));
		goto fail;
	}
	(void)fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
	w->pipe_w = fds[1];
	*telemetry_fd = fds[0];

	/* stress-ng --vm: the workload the seeds ran; it ends by itself if snapbench vanishes */
	snprintf(workers, sizeof(workers), "%u", spec->guest.linux_guest.workers);
	snprintf(timeout_s, sizeof(timeout_s), "%us", 86400u);
	const char *const sargs[] = { "--vm", workers, "--vm-bytes", spec->guest.linux_guest.vm_bytes, "--vm-method",
				      spec->guest.linux_guest.method, "--vm-populate", "--metrics-brief", "--timeout",
				      timeout_s, NULL };
	r = qga_exec(agent, spec->guest.linux_guest.stress_ng, sargs, NULL, true, &w->stress_pid, err);
	if (r < 0) {
		sb_error_prefix(err, "stress-ng (spec.guest.linux.stress_ng; install stress-ng in the guest)");
		goto fail_close;
	}
	w->stress_running = true;

	snprintf(interval, sizeof(interval), "%u", spec->guest.telemetry_interval_ms);
	snprintf(gap, sizeof(gap), "%u", spec->guest.probe_gap_us);
	snprintf(region, sizeof(region), "%llu", (unsigned long long)(spec->guest.linux_guest.probe_region >> 20));
	const char *const pargs[] = { "--out", w->tel_path, "--interval-ms", interval, "--gap-us", gap, "--region-mib",
				      region, NULL };
	r = qga_exec(agent, w->probe_path, pargs, NULL, true, &w->probe_pid, err);
	if (r < 0)
		goto fail_close;
	w->probe_running = true;

	r = -pthread_create(&w->reader, NULL, reader_main, w);
	if (r < 0) {
		sb_error_set(err, r, "cannot start the telemetry reader: %s", strerror(-r));
		goto fail_close;
	}
	w->reader_running = true;
	*ret = w;
	return 0;
fail_close:
	close(*telemetry_fd);
	*telemetry_fd = -1;
fail:
	linux_workload_free(w);
	return r;
}

int linux_workload_stop(struct linux_workload *w, int timeout_ms, struct sb_error *err)
{
	struct qga_exec_status st = {};
	int r = 0, k;

	if (w->reader_running) {
		__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
		pthread_join(w->reader, NULL);
		w->reader_running = false;
	}
	/* the probe's last SAMPLE and END, then everything it wrote */
	if (w->probe_running) {
		kill_guest_pid(w, w->probe_pid, "-TERM");
		k = qga_exec_wait(w->agent, w->probe_pid, timeout_ms / 2, 50, &st, err);
		if (k < 0) {
			kill_guest_pid(w, w->probe_pid, "-KILL");
			r = k;
		}
		qga_exec_status_clear(&st);
		w->probe_running = false;
	}
	k = pump(w, r < 0 ? NULL : err);
	if (k < 0 && r == 0)
		r = k;
	if (w->stress_running) {
		kill_guest_pid(w, w->stress_pid, "-TERM");
		k = qga_exec_wait(w->agent, w->stress_pid, timeout_ms / 2, 100, &st, r < 0 ? NULL : err);
		if (k < 0) {
			kill_guest_pid(w, w->stress_pid, "-KILL");
			if (r == 0)
				r = k;
		}
		free(w->stress_output);
		w->stress_output = st.err_len ? strndup(st.err, st.err_len) : st.out_len ? strndup(st.out, st.out_len) : NULL;
		qga_exec_status_clear(&st);
		w->stress_running = false;
	}
	if (w->pipe_w >= 0) {
		close(w->pipe_w); /* the reader of the stream sees its end */
		w->pipe_w = -1;
	}
	if (*w->reader_error && r == 0)
		r = sb_error_set(err, -EIO, "reading the probe's telemetry: %s", w->reader_error);
	return r;
}

const char *linux_workload_stress_output(const struct linux_workload *w)
{
	return w->stress_output ? w->stress_output : "";
}

void linux_workload_free(struct linux_workload *w)
{
	struct sb_error e = {};

	if (!w)
		return;
	if (w->reader_running || w->probe_running || w->stress_running)
		linux_workload_stop(w, 10000, &e);
	if (w->handle >= 0)
		qga_file_close(w->agent, w->handle, NULL);
	if (*w->probe_path) {
		const char *const argv[] = { "-f", w->probe_path, w->tel_path, NULL };
		qga_run(w->agent, "/bin/rm", argv, 10000, NULL, NULL);
	}
	if (w->pipe_w >= 0)
		close(w->pipe_w);
	free(w->stress_output);
	free(w->buf);
	free(w);
}
