// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uffd-restore (seed 003, docs/scenarios.md): in its fault-in window the
 * runner starts snapbench-uffd-restore (libexec/uffd-restore/), a KVM user
 * of its own whose one vCPU touches a region once while a userfaultfd
 * handler places the aligned chunk around each fault; its JSON (the
 * handler's requests, the pass's time, KVM's stats of its vCPU) becomes
 * the repetition's uffd_restore block, whose figures are the window's
 * restore_* metrics. The VM the runner started is not what is measured:
 * the program's VM is (a kernel arm's KVM in its host VM), and its counts
 * are its own vCPU's, so QEMU's guest beside it cannot move them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "json-util.h"
#include "kvm-flavour.h"
#include "locate.h"
#include "macro.h"
#include "scenario.h"
#include "spawn-program.h"

#define PROGRAM "snapbench-uffd-restore"
#define OUT_MAX 4096

struct uffd_restore {
	char path[PATH_MAX];
	pid_t pid;                 /* 0: not running */
	int out_fd, err_fd;        /* its stdout and stderr, non-blocking; -1: closed */
	char out[OUT_MAX], err[OUT_MAX];
	size_t n_out, n_err;
	int status;                /* its wait status, once reaped */
	bool exited;
	uint64_t deadline_ns;      /* 0: not started */
	struct report_uffd_restore r;
	char error[512];
};

static int ur_prepare(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	struct uffd_restore *s = state;
	_cleanup_free_ char *found = NULL;
	int k = runner_find_in_build_tree("libexec/uffd-restore/" PROGRAM, &found, err);

	s->out_fd = s->err_fd = -1;
	s->r.pass_ms = -1;
	s->r.uffd_requests = s->r.uffd_woken = s->r.uffd_bytes = -1;
	s->r.pf_taken = s->r.pf_fixed = s->r.pf_spurious = s->r.pf_prefetched = -1;
	s->r.exit_status = -1;
	s->r.chunk_bytes = spec_arm_chunk(ctx->spec, ctx->arm);
	s->r.region_bytes = ctx->spec->uffd_restore.region;
	s->r.pages = s->r.region_bytes / 4096;
	snprintf(s->r.access, sizeof(s->r.access), "%s", ctx->spec->uffd_restore.access == SPEC_FAULT_WRITE ? "write" : "read");
	if (k < 0)
		return k;
	if (k > 0) {
		snprintf(s->path, sizeof(s->path), "%s", found);
		return 0;
	}
	snprintf(s->path, sizeof(s->path), "%s/%s", LIBEXECDIR, PROGRAM);
	if (access(s->path, X_OK) < 0)
		return sb_error_set(err, -ENOENT, "the uffd-restore scenario runs %s, which is not installed (%s: %s); install snapbench or run it from its build tree",
				    PROGRAM, s->path, strerror(errno));
	return 0;
}

static int ur_start(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	struct uffd_restore *s = state;
	char region[32], chunk[32];
	char *argv[] = { PROGRAM, "--region", region, "--chunk", chunk, NULL, NULL };
	int out[2] = { -1, -1 }, errp[2] = { -1, -1 };
	int k;

	snprintf(region, sizeof(region), "%" PRIu64, s->r.region_bytes);
	snprintf(chunk, sizeof(chunk), "%" PRIu64, s->r.chunk_bytes);
	if (ctx->spec->uffd_restore.access == SPEC_FAULT_WRITE)
		argv[5] = "--write";
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		k = -errno;
		if (out[0] >= 0) {
			close(out[0]);
			close(out[1]);
		}
		return sb_error_set(err, k, "%s: pipe: %s", PROGRAM, strerror(-k));
	}
	struct spawn_fd fds[] = { { SPAWN_DEV_NULL, 0 }, { out[1], 1 }, { errp[1], 2 } };
	struct spawn_options o = { .argv = argv, .path = s->path, .fds = fds, .n_fds = ARRAY_SIZE(fds),
				   .new_process_group = true, .parent_death_signal = SIGKILL, .reset_signals = true };
	k = spawn_start(&o, &s->pid, err);
	close(out[1]);
	close(errp[1]);
	s->out_fd = out[0];
	s->err_fd = errp[0];
	if (k < 0) {
		s->pid = 0;
		return k;
	}
	(void)fcntl(s->out_fd, F_SETFL, O_NONBLOCK);
	(void)fcntl(s->err_fd, F_SETFL, O_NONBLOCK);
	s->deadline_ns = mono_ns() + (uint64_t)(ctx->spec->uffd_restore.timeout_s * 1e9);
	return 0;
}

/* What fd has for us now, into buf (what does not fit is dropped); closes it at EOF. */
static void drain(int *fd, char *buf, size_t *n)
{
	char tmp[1024];
	ssize_t r;

	while (*fd >= 0 && (r = read(*fd, tmp, sizeof(tmp))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				break;
			return;
		}
		size_t room = OUT_MAX - 1 - *n, take = (size_t)r < room ? (size_t)r : room;
		memcpy(buf + *n, tmp, take);
		*n += take;
		buf[*n] = '\0';
	}
	close(*fd);
	*fd = -1;
}

/* The program's last stderr line, for messages. */
static const char *last_line(struct uffd_restore *s)
{
	while (s->n_err && (s->err[s->n_err - 1] == '\n' || s->err[s->n_err - 1] == ' '))
		s->err[--s->n_err] = '\0';
	const char *nl = strrchr(s->err, '\n');
	return nl ? nl + 1 : s->n_err ? s->err : "it printed nothing on stderr";
}

static void kill_program(struct uffd_restore *s)
{
	if (s->pid > 0 && !s->exited) {
		kill(-s->pid, SIGKILL);
		kill(s->pid, SIGKILL);
		if (spawn_wait(s->pid, &s->status) == 0)
			s->exited = true;
	}
}

static int ur_poll(void *state, const struct scenario_ctx *ctx, bool *done, struct sb_error *err)
{
	struct uffd_restore *s = state;

	(void)ctx;
	*done = false;
	drain(&s->out_fd, s->out, &s->n_out);
	drain(&s->err_fd, s->err, &s->n_err);
	if (!s->exited) {
		pid_t p = waitpid(s->pid, &s->status, WNOHANG);
		if (p == s->pid)
			s->exited = true;
		else if (p < 0 && errno != EINTR)
			return sb_error_set(err, -errno, "%s (pid %d): waitpid: %s", PROGRAM, (int)s->pid, strerror(errno));
	}
	if (s->exited && s->out_fd < 0 && s->err_fd < 0) {
		*done = true;
		return 0;
	}
	if (mono_ns() >= s->deadline_ns) {
		kill_program(s);
		snprintf(s->error, sizeof(s->error), "%s did not end within spec.uffd_restore.timeout_s (%g s); lengthen it or shrink spec.uffd_restore.region",
			 PROGRAM, ctx->spec->uffd_restore.timeout_s);
		return sb_error_set(err, -ETIMEDOUT, "%s", s->error);
	}
	return 0;
}

static int64_t stat_or_null(struct json_object *kvm, const char *name)
{
	struct json_object *v = json_lookup(kvm, name);

	return v && json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0 ? json_object_get_int64(v) : -1;
}

/* Its JSON into s->r; -EBADMSG when it is not the object it prints. */
static int parse_output(struct uffd_restore *s)
{
	_cleanup_json_ struct json_object *o = NULL;
	struct json_object *kvm, *ms;
	int64_t req, woken, bytes, mism;

	if (json_parse_text(s->out, s->n_out, 8, JSON_PARSE_STRICT, &o, NULL) < 0 || !o ||
	    !(ms = json_lookup(o, "pass_ms")) || !json_is_number(ms) || json_get_int64(o, "uffd_requests", &req, NULL) < 0 ||
	    json_get_int64(o, "uffd_woken", &woken, NULL) < 0 || json_get_int64(o, "uffd_bytes", &bytes, NULL) < 0 ||
	    json_get_int64(o, "mismatches", &mism, NULL) < 0 || json_get_object(o, "kvm", &kvm, NULL) < 0)
		return -EBADMSG;
	s->r.pass_ms = json_object_get_double(ms);
	s->r.uffd_requests = req;
	s->r.uffd_woken = woken;
	s->r.uffd_bytes = bytes;
	s->r.mismatches = (uint64_t)mism;
	s->r.pf_taken = stat_or_null(kvm, "pf_taken");
	s->r.pf_fixed = stat_or_null(kvm, "pf_fixed");
	s->r.pf_spurious = stat_or_null(kvm, "pf_spurious");
	s->r.pf_prefetched = stat_or_null(kvm, "pf_prefetched");
	return 0;
}

static int ur_finish(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	struct uffd_restore *s = state;
	char why[64];

	(void)ctx;
	if (WIFEXITED(s->status))
		s->r.exit_status = WEXITSTATUS(s->status);
	if (s->n_out && parse_output(s) < 0)
		snprintf(s->error, sizeof(s->error), "%s printed what is not its JSON object: %.200s", PROGRAM, s->out);
	else if (!WIFEXITED(s->status) || WEXITSTATUS(s->status) != 0) {
		spawn_describe_status(s->status, why, sizeof(why));
		snprintf(s->error, sizeof(s->error), "%s failed (%s): %.300s", PROGRAM, why, last_line(s));
	} else if (!s->n_out)
		snprintf(s->error, sizeof(s->error), "%s printed no JSON: %.300s", PROGRAM, last_line(s));
	return *s->error ? sb_error_set(err, -EIO, "%s", s->error) : 0;
}

static void ur_summarize(void *state, const struct scenario_ctx *ctx, struct report_rep *rep)
{
	struct uffd_restore *s = state;
	/* the program's VM is on this host's KVM, whatever runs QEMU's guest */
	const char *cannot = kvm_flavour_cannot_count(kvm_flavour_host(), "kvm.pf_taken");

	(void)ctx;
	free(rep->uffd_restore.error);
	free(rep->uffd_restore.kvm_unavailable);
	rep->uffd_restore = s->r;
	rep->uffd_restore.set = true;
	rep->uffd_restore.error = *s->error ? strdup(s->error) : NULL;
	rep->uffd_restore.kvm_unavailable = cannot ? strdup(cannot) : NULL;
}

static void ur_cleanup(void *state, const struct scenario_ctx *ctx)
{
	struct uffd_restore *s = state;

	(void)ctx;
	kill_program(s);
	if (s->out_fd >= 0)
		close(s->out_fd);
	if (s->err_fd >= 0)
		close(s->err_fd);
	s->out_fd = s->err_fd = -1;
}

static uint64_t ur_deadline(void *state, const struct scenario_ctx *ctx)
{
	struct uffd_restore *s = state;

	(void)ctx;
	return s->deadline_ns ? s->deadline_ns : UINT64_MAX;
}

/* the pass: seconds over 16 MiB in a TCG host VM (docs/scenarios.md) */
static double ur_planned_s(const struct run_spec *spec)
{
	return 2 + (double)(spec->uffd_restore.region >> 20) / 4;
}

const struct scenario_ops scenario_uffd_restore = {
	.name = "uffd-restore",
	.window = REPORT_WINDOW_FAULT_IN,
	.state_size = sizeof(struct uffd_restore),
	.prepare = ur_prepare,
	.start = ur_start,
	.poll = ur_poll,
	.finish = ur_finish,
	.summarize = ur_summarize,
	.cleanup = ur_cleanup,
	.deadline = ur_deadline,
	.planned_s = ur_planned_s,
};
