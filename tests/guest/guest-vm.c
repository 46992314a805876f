// SPDX-License-Identifier: GPL-2.0-or-later
#include "guest-vm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "qemu-args.h"
#include "test-accel.h"

#define MAX_GUESTS 2
#define MAX_FILES 4
#define FD_TEL 3
#define FD_CTL 4
#define FD_QMP 5

static struct test_guest *guests[MAX_GUESTS];
static char temp_files[MAX_GUESTS][MAX_FILES][96];
static char temp_dirs[MAX_GUESTS][64];
static bool handlers_installed;

/* Async-signal-safe: kill, waitpid, close, unlink and rmdir only. */
static void cleanup_slot(int i, bool show_log)
{
	struct test_guest *g = guests[i];

	if (!g)
		return;
	if (g->pid > 0) {
		kill(g->pid, SIGKILL);
		waitpid(g->pid, NULL, 0);
		g->pid = 0;
	}
	if (show_log && g->log_path[0]) {
		char buf[4096];
		int fd = open(g->log_path, O_RDONLY | O_CLOEXEC);
		ssize_t n;

		if (fd >= 0) {
			(void)!write(STDERR_FILENO, "--- QEMU stderr ---\n", 20);
			while ((n = read(fd, buf, sizeof(buf))) > 0)
				(void)!write(STDERR_FILENO, buf, (size_t)n);
			close(fd);
		}
	}
	for (int f = 0; f < MAX_FILES; f++)
		if (temp_files[i][f][0]) {
			unlink(temp_files[i][f]);
			temp_files[i][f][0] = '\0';
		}
	if (temp_dirs[i][0]) {
		rmdir(temp_dirs[i]);
		temp_dirs[i][0] = '\0';
	}
	guests[i] = NULL;
}

static void cleanup_all(void)
{
	/* still registered at exit: the test failed */
	for (int i = 0; i < MAX_GUESTS; i++)
		cleanup_slot(i, true);
}

static void on_signal(int sig)
{
	for (int i = 0; i < MAX_GUESTS; i++)
		cleanup_slot(i, false);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int slot_of(const struct test_guest *g)
{
	for (int i = 0; i < MAX_GUESTS; i++)
		if (guests[i] == g)
			return i;
	return -1;
}

static void register_file(int slot, const char *path)
{
	for (int f = 0; f < MAX_FILES; f++)
		if (!temp_files[slot][f][0]) {
			snprintf(temp_files[slot][f], sizeof(temp_files[slot][f]), "%s", path);
			return;
		}
	CHECK_MSG(false, "too many temp files for one guest");
}

int test_guest_temp_file(struct test_guest *g, const char *name, char *path, size_t size)
{
	int slot = slot_of(g), fd;

	CHECK(slot >= 0);
	CHECK((size_t)snprintf(path, size, "%s/%s", temp_dirs[slot], name) < size);
	register_file(slot, path);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK_MSG(fd >= 0, "%s: %s", path, strerror(errno));
	return fd;
}

static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[512];

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);

		if ((size_t)snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, p, prog) < sizeof(buf) && access(buf, X_OK) == 0)
			return true;
		p += len + (colon ? 1 : 0);
	}
	return false;
}

/* socketpair, host end returned, QEMU end moved above the fds we dup to */
static int pair(int *qemu_end)
{
	int sv[2], high;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	high = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
	CHECK(high >= 10);
	close(sv[1]);
	*qemu_end = high;
	return sv[0];
}

void test_guest_start(struct test_guest *g, unsigned ram_mib, const struct guest_params *p, const char *append,
		      bool with_qmp)
{
	static const char *const qmp_args[] = { "-chardev", "socket,id=qmp,fd=5", "-mon", "chardev=qmp,mode=control",
						NULL };
	_cleanup_free_ char *image = NULL, *line = NULL;
	_cleanup_strv_free_ char **argv = NULL;
	struct sb_error err = { 0 };
	int q_tel, q_ctl, q_qmp = -1, slot = -1, logfd;
	const char *qemu = getenv("SNAPBENCH_QEMU");
	struct guest_vm vm;

	if (!qemu || !*qemu)
		qemu = "qemu-system-x86_64";
	if (!in_path(qemu))
		SKIP_TEST("%s: install qemu-system-x86 (scripts/install-deps)", qemu);
	CHECK_MSG(guest_image_find(&image, &err) == 0, "%s", err.msg);
	if (!append) {
		CHECK_MSG(guest_params_to_cmdline(p, &line, &err) == 0, "%s", err.msg);
		append = line;
	}

	memset(g, 0, sizeof(*g));
	g->qmp = -1;
	for (int i = 0; i < MAX_GUESTS; i++)
		if (!guests[i]) {
			slot = i;
			break;
		}
	CHECK_MSG(slot >= 0, "more than %d guests at once", MAX_GUESTS);
	if (!handlers_installed) {
		atexit(cleanup_all);
		signal(SIGTERM, on_signal);
		signal(SIGINT, on_signal);
		signal(SIGPIPE, SIG_IGN);
		handlers_installed = true;
	}
	snprintf(temp_dirs[slot], sizeof(temp_dirs[slot]), "/tmp/snapbench-guest-test.XXXXXX");
	CHECK(mkdtemp(temp_dirs[slot]));
	guests[slot] = g;
	logfd = test_guest_temp_file(g, "qemu.log", g->log_path, sizeof(g->log_path));

	{
		int fds[2];

		CHECK_MSG(guest_telemetry_pipe(fds, &err) == 0, "%s", err.msg);
		g->tel = fds[0];
		q_tel = fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
		CHECK(q_tel >= 10);
		close(fds[1]);
	}
	g->ctl = pair(&q_ctl);
	if (with_qmp)
		g->qmp = pair(&q_qmp);
	CHECK(guest_decoder_new(&g->dec) == 0);

	vm = (struct guest_vm){
		.qemu = qemu,
		.image = image,
		.vcpus = p->vcpus,
		.ram_mib = ram_mib,
		.append = append,
		.telemetry_fd = FD_TEL,
		.control_fd = FD_CTL,
		.extra = with_qmp ? qmp_args : NULL,
		.tcg = !test_kvm(),
	};
	CHECK_MSG(guest_qemu_argv(&vm, &argv, &err) == 0, "%s", err.msg);

	g->start_ns = mono_ns();
	g->pid = fork();
	CHECK(g->pid >= 0);
	if (g->pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(logfd, 2) < 0 ||
		    dup2(q_tel, FD_TEL) < 0 || dup2(q_ctl, FD_CTL) < 0 || (q_qmp >= 0 && dup2(q_qmp, FD_QMP) < 0))
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(logfd);
	close(q_tel);
	close(q_ctl);
	if (q_qmp >= 0)
		close(q_qmp);
}

const struct guest_record *test_guest_next(struct test_guest *g, int timeout_ms)
{
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;

	for (;;) {
		const struct guest_record *rec;
		struct sb_error err = { 0 };
		uint8_t buf[4096];
		struct pollfd pfd = { .fd = g->tel, .events = POLLIN };
		ssize_t n;
		int r;

		r = guest_decoder_next(g->dec, &rec, &err);
		CHECK_MSG(r >= 0, "decoding the guest's telemetry: %s", err.msg);
		if (r == 1)
			return rec;
		if (g->eof_ns)
			return NULL;
		r = poll(&pfd, 1, ms_until(deadline));
		CHECK(r >= 0 || errno == EINTR);
		if (r <= 0) {
			if (mono_ns() >= deadline)
				return NULL;
			continue;
		}
		n = read(g->tel, buf, sizeof(buf));
		CHECK(n >= 0 || errno == EINTR);
		if (n == 0) {
			g->eof_ns = mono_ns();
			CHECK_MSG(guest_decoder_pending(g->dec) == 0, "telemetry ended inside a record (%zu bytes)",
				  guest_decoder_pending(g->dec));
			continue;
		}
		if (n > 0)
			/* 4 KiB always fits: the decoder holds two whole frames */
			CHECK(guest_decoder_feed(g->dec, buf, (size_t)n) == (size_t)n);
	}
}

const struct guest_record *test_guest_expect(struct test_guest *g, int type, int timeout_ms)
{
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;

	for (;;) {
		const struct guest_record *rec = test_guest_next(g, ms_until(deadline));

		CHECK_MSG(rec, "no %s record from the guest within %d ms (%s)", guest_record_type_to_string(type), timeout_ms,
			  g->eof_ns ? "telemetry closed" : "timeout");
		if (rec->type == type)
			return rec;
		if (rec->type == GUEST_RECORD_LOG)
			fprintf(stderr, "guest: %s\n", rec->log.text);
		CHECK_MSG(rec->type != GUEST_RECORD_END || type == GUEST_RECORD_END,
			  "the guest ended (%s) while we waited for %s", guest_end_reason_to_string(rec->end.reason),
			  guest_record_type_to_string(type));
	}
}

void test_guest_request_stop(struct test_guest *g)
{
	char c = GUEST_CMD_STOP;

	CHECK(write(g->ctl, &c, 1) == 1);
}

int test_guest_wait_exit(struct test_guest *g, int timeout_ms)
{
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;
	int status;

	for (;;) {
		pid_t r = waitpid(g->pid, &status, WNOHANG);

		CHECK(r >= 0);
		if (r == g->pid)
			break;
		CHECK_MSG(mono_ns() < deadline, "QEMU did not exit within %d ms", timeout_ms);
		usleep(10000);
	}
	g->pid = 0;
	CHECK_MSG(WIFEXITED(status), "QEMU died of signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return WEXITSTATUS(status);
}

void test_guest_stop(struct test_guest *g)
{
	int slot = slot_of(g);

	if (g->tel > 0)
		close(g->tel);
	if (g->ctl > 0)
		close(g->ctl);
	if (g->qmp > 0)
		close(g->qmp);
	g->tel = g->ctl = g->qmp = -1;
	guest_decoder_free(g->dec);
	g->dec = NULL;
	if (slot >= 0)
		cleanup_slot(slot, false);
}
