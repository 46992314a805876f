// SPDX-License-Identifier: GPL-2.0-or-later
/* The qemu VM backend: QEMU launched by us with an argv vector (vm-qemu.h). */
#include "vm-qemu.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "drain.h"
#include "guest-linux.h"
#include "macro.h"
#include "numa-host.h"
#include "qemu-args.h"
#include "qemu-binary.h"
#include "qga.h"
#include "run-dir.h"
#include "spawn-program.h"
#include "strv.h"
#include "telemetry.h"
#include "qmp-commands.h"
#include "qmp.h"
#include "vm.h"
#include "wire.h"

/* fd numbers QEMU gets (named in its argv) */
#define CHILD_TELEMETRY_FD 3
#define CHILD_CONTROL_FD 4
#define CHILD_QMP_FD 5
#define MEM_BACKEND_ID "sbram"

static bool reap(struct vm *vm, bool block)
{
	int st;
	pid_t r;

	if (vm->exited || vm->pid <= 0)
		return true;
	do
		r = waitpid(vm->pid, &st, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == vm->pid || (r < 0 && errno == ECHILD)) {
		vm->exited = true;
		vm->wait_status = r == vm->pid ? st : 0;
		if (vm->pid_path)
			unlink(vm->pid_path);
		return true;
	}
	return false;
}

static bool qemu_exited(struct vm *vm, char *desc, size_t len)
{
	char tail[512];

	if (!reap(vm, false))
		return false;
	if (desc && len) {
		vm_describe_status(vm->wait_status, desc, len);
		vm_log_tail(vm, tail, sizeof(tail));
		if (*tail) {
			size_t n = strlen(desc);
			snprintf(desc + n, len - n, "; QEMU said: %s", tail);
		}
	}
	return true;
}

/*
 * Waits for QEMU to exit until deadline_ns. It sleeps in poll(2) on a pidfd,
 * which wakes at the exit (a stop takes seconds: polling every 5 ms cost the
 * run engine tens of ms of CPU per repetition); kernels without pidfd_open
 * (before 5.3) poll every 5 ms.
 */
static bool wait_exit(struct vm *vm, uint64_t deadline_ns)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	int pidfd = -1;
	bool done;

	if (!reap(vm, false))
		pidfd = (int)syscall(SYS_pidfd_open, vm->pid, 0);
	for (;;) {
		uint64_t now;

		done = reap(vm, false);
		now = mono_ns();
		if (done || now >= deadline_ns)
			break;
		if (pidfd >= 0) {
			struct pollfd p = { .fd = pidfd, .events = POLLIN };
			uint64_t ms = (deadline_ns - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;

			poll(&p, 1, ms > INT32_MAX ? INT32_MAX : (int)ms);
		} else
			nanosleep(&ts, NULL);
	}
	if (pidfd >= 0)
		close(pidfd);
	return done;
}

/* Our additions to the guest library's argv: machine, memory backend, CPU, QMP, user, extras. */
static int extra_args(const struct vm_config *cfg, char ***ret)
{
	const struct run_spec *s = cfg->spec;
	char **v = NULL, policy[160] = "";
	int r = 0;

	if (cfg->spread_nodes && s->vm.backing == SPEC_BACKING_MEMFD) {
		/* spread over every online node (the scenario asked: docs/scenarios.md); NUMA balancing does not scan it yet */
		uint64_t nodes = 0;
		if (numa_host_nodes(&nodes, NULL) == 0 && numa_node_count(nodes) > 1) {
			size_t n = (size_t)snprintf(policy, sizeof(policy), ",policy=interleave");
			for (unsigned b = 0; b < NUMA_HOST_MAX_NODES && n < sizeof(policy) - 16; b++)
				if (nodes & (1ull << b))
					n += (size_t)snprintf(policy + n, sizeof(policy) - n, ",host-nodes=%u", b);
		}
	}
	r |= strv_push(&v, "-machine");
	r |= strv_pushf(&v, "%s,memory-backend=%s", s->vm.machine, MEM_BACKEND_ID);
	r |= strv_push(&v, "-object");
	if (s->vm.backing == SPEC_BACKING_HUGETLB)
		r |= strv_pushf(&v, "memory-backend-memfd,id=%s,size=%llu,hugetlb=on,hugetlbsize=%llu,prealloc=%s",
				MEM_BACKEND_ID, (unsigned long long)s->vm.memory,
				(unsigned long long)(s->vm.hugepage_size ? s->vm.hugepage_size : 2ull << 20),
				s->vm.prealloc ? "on" : "off");
	else if (s->vm.backing == SPEC_BACKING_MEMFD)
		r |= strv_pushf(&v, "memory-backend-memfd,id=%s,size=%llu,share=on,prealloc=%s%s", MEM_BACKEND_ID,
				(unsigned long long)s->vm.memory, s->vm.prealloc ? "on" : "off", policy);
	else
		r |= strv_pushf(&v, "memory-backend-ram,id=%s,size=%llu,prealloc=%s", MEM_BACKEND_ID,
			       (unsigned long long)s->vm.memory, s->vm.prealloc ? "on" : "off");
	if (s->vm.cpu) {
		r |= strv_push(&v, "-cpu");
		r |= strv_push(&v, s->vm.cpu);
	}
	r |= strv_push(&v, "-chardev");
	r |= strv_pushf(&v, "socket,id=sbqmp,fd=%d", CHILD_QMP_FD);
	r |= strv_push(&v, "-mon");
	r |= strv_push(&v, "chardev=sbqmp,mode=control");
	if (cfg->name) {
		r |= strv_push(&v, "-name");
		r |= strv_push(&v, cfg->name);
	}
	if (cfg->incoming) {
		r |= strv_push(&v, "-incoming");
		r |= strv_push(&v, cfg->incoming);
	}
	if (s->vm.user && cfg->run_with_user) {
		_cleanup_free_ char *user = NULL;

		r |= asprintf(&user, "user=%s", s->vm.user) < 0 ? -ENOMEM : 0;
		r |= strv_push(&v, "-run-with");
		r |= user ? strv_push(&v, user) : -ENOMEM;
	} else if (s->vm.user) {
		r |= strv_push(&v, "-runas");
		r |= strv_push(&v, s->vm.user);
	}
	for (size_t i = 0; i < s->vm.n_extra_args; i++)
		r |= strv_push(&v, s->vm.extra_args[i]);
	if (r) {
		strv_free(v);
		return -ENOMEM;
	}
	*ret = v;
	return 0;
}

/*
 * A Linux guest's argv: its disk (snapshot=on: every repetition boots the
 * same image, nothing is written to it) and qemu-guest-agent's port,
 * org.qemu.guest_agent.0 on virtio-serial, whose host side is the socket
 * on fd agent_fd. Then our additions (extra) as for the micro guest.
 */
static int linux_argv(const struct vm_config *cfg, const char *qemu, int agent_fd, char **extra, char ***ret)
{
	const struct run_spec *s = cfg->spec;
	char **v = NULL;
	int r = 0;

	r |= strv_push(&v, qemu);
	r |= strv_push(&v, "-machine");
	r |= strv_push(&v, cfg->tcg ? "accel=tcg" : "accel=kvm");
	r |= strv_push(&v, "-m");
	r |= strv_pushf(&v, "%llu", (unsigned long long)(s->vm.memory >> 20));
	r |= strv_push(&v, "-smp");
	r |= strv_pushf(&v, "%u", s->vm.vcpus);
	r |= strv_push(&v, "-nodefaults");
	r |= strv_push(&v, "-no-user-config");
	r |= strv_push(&v, "-display");
	r |= strv_push(&v, "none");
	r |= strv_push(&v, "-no-reboot");
	r |= strv_push(&v, "-drive");
	r |= strv_pushf(&v, "file=%s,format=%s,if=virtio,snapshot=on", s->vm.disk, s->vm.disk_format);
	r |= strv_push(&v, "-chardev");
	r |= strv_pushf(&v, "socket,id=sbqga,fd=%d", agent_fd);
	r |= strv_push(&v, "-device");
	r |= strv_push(&v, "virtio-serial-pci,id=sbvser");
	r |= strv_push(&v, "-device");
	r |= strv_push(&v, "virtserialport,bus=sbvser.0,chardev=sbqga,name=org.qemu.guest_agent.0");
	for (size_t i = 0; extra && extra[i]; i++)
		r |= strv_push(&v, extra[i]);
	if (r) {
		strv_free(v);
		return -ENOMEM;
	}
	*ret = v;
	return 0;
}

/* A Linux guest once QEMU runs: its agent, then stress-ng and the probe (guest-linux.h). */
static int start_linux_workload(const struct vm_config *cfg, struct vm *vm, struct sb_error *err)
{
	_cleanup_free_ char *probe = NULL;
	char label[64];
	int r;

	r = linux_probe_find(&probe, err);
	if (r < 0)
		return r;
	snprintf(label, sizeof(label), "guest agent of QEMU pid %d", vm->pid);
	r = qga_client_new_fd(TAKE_FD(vm->control_fd), label, NULL, &vm->agent, err);
	if (r < 0)
		return r;
	r = linux_workload_start(vm->agent, cfg->spec, probe, (int)(cfg->spec->guest.linux_guest.agent_timeout_s * 1000),
				 &vm->workload, &vm->telemetry_fd, err);
	if (r < 0)
		return r;
	r = drain_start(vm->telemetry_fd, &vm->telemetry);
	return r < 0 ? sb_error_set(err, r, "cannot start the telemetry reader: %s", strerror(-r)) : 0;
}

static void qemu_free(struct vm *vm);
static void qemu_freep(struct vm **vm)
{
	if (*vm)
		qemu_free(*vm);
}

/* The binary, the log and pid file paths. */
static int qemu_paths(const struct vm_config *cfg, struct vm *vm, struct sb_error *err)
{
	int r = vm_find_binary(cfg->qemu_binary ? cfg->qemu_binary : QEMU_DEFAULT_BINARY, &vm->qemu_path, err);

	if (r < 0)
		return r;
	if (asprintf(&vm->log_path, "%s/" RUN_DIR_QEMU_LOG_PREFIX "%s" RUN_DIR_QEMU_LOG_SUFFIX, cfg->run_dir, cfg->tag ? cfg->tag : "vm") < 0 ||
	    asprintf(&vm->pid_path, "%s/%s", cfg->run_dir, cfg->pid_file ? cfg->pid_file : RUN_DIR_QEMU_PID) < 0) {
		vm->log_path = vm->pid_path = NULL;
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/* QEMU's argv into vm->argv: a Linux guest's, or the micro guest's from the guest library, with our extras. */
static int qemu_argv(const struct vm_config *cfg, struct vm *vm, struct sb_error *err)
{
	_cleanup_strv_free_ char **extra = NULL;
	int r;

	r = extra_args(cfg, &extra);
	if (r < 0)
		return sb_error_set(err, r, "out of memory");
	if (cfg->spec->guest.kind == SPEC_GUEST_LINUX) {
		r = linux_argv(cfg, vm->qemu_path, CHILD_CONTROL_FD, extra, &vm->argv);
		return r < 0 ? sb_error_set(err, r, "out of memory") : 0;
	}
	struct guest_vm gvm = {
		.qemu = vm->qemu_path,
		.image = cfg->guest_image,
		.vcpus = cfg->spec->vm.vcpus,
		.ram_mib = (unsigned)(cfg->spec->vm.memory >> 20),
		.append = cfg->guest_append,
		.telemetry_fd = CHILD_TELEMETRY_FD,
		.control_fd = CHILD_CONTROL_FD,
		.extra = (const char *const *)extra,
		.dirty_ring_size = cfg->dirty_ring_size,
		.tcg = cfg->tcg,
	};
	return guest_qemu_argv(&gvm, &vm->argv, err);
}

/*
 * Starts QEMU with its log as stdout and stderr and the telemetry pipe,
 * the control socket and the QMP socket at their CHILD_*_FD; keeps our ends
 * of the first two in vm and returns the QMP one in *ret_qmp_fd.
 */
static int qemu_spawn(const struct vm_config *cfg, struct vm *vm, int *ret_qmp_fd, struct sb_error *err)
{
	_cleanup_close_ int log_fd = -1, tel_ours = -1, tel_child = -1, ctl_child = -1, qmp_ours = -1, qmp_child = -1;
	int tel[2], ctl[2], qmp[2], r;

	log_fd = open(vm->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
	if (log_fd < 0)
		return sb_error_set(err, -errno, "%s: cannot create QEMU's log: %s", vm->log_path, strerror(errno));
	r = guest_telemetry_pipe(tel, err);
	if (r < 0)
		return r;
	tel_ours = tel[0];
	tel_child = tel[1];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0)
		return sb_error_set(err, -errno, "cannot create QEMU's sockets: %s", strerror(errno));
	vm->control_fd = ctl[0]; /* a Linux guest's: the agent's socket */
	ctl_child = ctl[1];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, qmp) < 0)
		return sb_error_set(err, -errno, "cannot create QEMU's sockets: %s", strerror(errno));
	qmp_ours = qmp[0];
	qmp_child = qmp[1];

	const struct spawn_fd fds[] = { { SPAWN_DEV_NULL, 0 },
					{ log_fd, 1 },
					{ log_fd, 2 },
					{ tel_child, CHILD_TELEMETRY_FD },
					{ ctl_child, CHILD_CONTROL_FD },
					{ qmp_child, CHILD_QMP_FD } };
	/* its own process group: a terminal's ^C goes to snapbench, which stops QEMU in order */
	r = spawn_start(&(struct spawn_options){ .argv = vm->argv, .path = vm->qemu_path, .fds = fds,
						 .n_fds = ARRAY_SIZE(fds), .new_process_group = true,
						 .parent_death_signal = SIGKILL, .reset_signals = true,
						 .thp_disable = cfg->spec->vm.backing == SPEC_BACKING_ANON_NOTHP,
						 .umask = 077 },
			&vm->pid, err);
	if (r < 0)
		return sb_error_prefix(err, "QEMU");
	if (cfg->spec->guest.kind != SPEC_GUEST_LINUX) {
		/* a Linux guest's telemetry comes from the probe in the guest, through the agent */
		vm->telemetry_fd = TAKE_FD(tel_ours);
		r = drain_start(vm->telemetry_fd, &vm->telemetry);
		if (r < 0)
			return sb_error_set(err, r, "cannot start the telemetry reader: %s", strerror(-r));
	}
	*ret_qmp_fd = TAKE_FD(qmp_ours);
	return 0;
}

/* QEMU's pid in the run directory: a convenience for supervisors, so a failure does not stop the run. */
static void qemu_write_pid_file(const struct vm *vm)
{
	char buf[32];
	int fd = open(vm->pid_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return;
	snprintf(buf, sizeof(buf), "%d\n", vm->pid);
	if (write(fd, buf, strlen(buf)) < 0) {
		/* see above */
	}
	close(fd);
}

static int qemu_start(const struct vm_config *cfg, struct vm **ret, struct sb_error *err)
{
	_cleanup_(qemu_freep) struct vm *vm = NULL;
	char buf[256], desc[768];
	int r, qmp_fd = -1;

	vm = calloc(1, sizeof(*vm));
	if (!vm)
		return sb_error_set(err, -ENOMEM, "out of memory");
	vm->backend = &vm_backend_qemu;
	vm->tcg = cfg->tcg;
	vm->telemetry_fd = vm->control_fd = -1;

	r = qemu_paths(cfg, vm, err);
	if (r >= 0)
		r = qemu_argv(cfg, vm, err);
	if (r >= 0)
		r = qemu_spawn(cfg, vm, &qmp_fd, err);
	if (r < 0)
		return r;
	qemu_write_pid_file(vm);

	snprintf(buf, sizeof(buf), "QEMU pid %d", vm->pid);
	struct qmp_options qo = { .command_timeout_ms = cfg->command_timeout_ms > 0 ? cfg->command_timeout_ms : 0 };
	r = qmp_connect_fd(qmp_fd, buf, cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms : 30000, &qo, &vm->qmp,
			   err);
	if (r < 0) {
		/* most often QEMU refused its arguments and exited: say what it said */
		wait_exit(vm, mono_ns() + 2 * NSEC_PER_SEC);
		if (qemu_exited(vm, desc, sizeof(desc)))
			return sb_error_set(err, -ECHILD, "QEMU (%s) exited at start-up: %s", vm->qemu_path, desc);
		return sb_error_prefix(err, "QEMU (%s) started but its monitor did not answer", vm->qemu_path);
	}
	if (cfg->spec->guest.kind == SPEC_GUEST_LINUX) {
		r = start_linux_workload(cfg, vm, err);
		if (r < 0) {
			if (qemu_exited(vm, desc, sizeof(desc)))
				return sb_error_set(err, -ECHILD, "QEMU (%s) exited while the Linux guest booted: %s", vm->qemu_path, desc);
			return r;
		}
	}
	*ret = TAKE_PTR(vm);
	return 0;
}

static int qemu_stop(struct vm *vm, int timeout_ms, struct sb_error *err)
{
	uint64_t start = mono_ns(), deadline = start + (uint64_t)(timeout_ms > 0 ? timeout_ms : 10000) * NSEC_PER_MSEC;
	uint64_t span = deadline - start;
	char cmd = GUEST_CMD_STOP;

	if (reap(vm, false))
		return 0;
	if (vm->workload) {
		/* a Linux guest: the probe's last records and stress-ng's summary, then an ACPI power-off */
		int r = linux_workload_stop(vm->workload, (int)(span / 4 / NSEC_PER_MSEC), err);
		qmp_client_set_command_timeout(vm->qmp, (int)(span / 8 / NSEC_PER_MSEC) + 1);
		if (qmp_execute(vm->qmp, "system_powerdown", NULL, -1, qmp_client_command_timeout(vm->qmp), NULL, NULL) >= 0 &&
		    wait_exit(vm, start + span / 2))
			return r;
	}
	/* 1. the guest stops itself: its last telemetry record goes out */
	else if (vm->control_fd >= 0 && send(vm->control_fd, &cmd, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1 &&
		 wait_exit(vm, start + span / 2))
		return 0;
	/* 2. QEMU quits */
	if (vm->qmp) {
		qmp_client_set_command_timeout(vm->qmp, (int)(span / 4 / NSEC_PER_MSEC) + 1);
		qmp_quit(vm->qmp, NULL);
		if (wait_exit(vm, start + span / 4 * 3))
			return 0;
	}
	/* 3. and 4. */
	kill(vm->pid, SIGTERM);
	if (wait_exit(vm, deadline > mono_ns() + NSEC_PER_SEC ? deadline : mono_ns() + NSEC_PER_SEC))
		return sb_error_set(err, -ETIMEDOUT, "QEMU pid %d did not stop when asked; it took SIGTERM", vm->pid);
	kill(vm->pid, SIGKILL);
	reap(vm, true);
	return sb_error_set(err, -ETIMEDOUT, "QEMU pid %d did not stop when asked nor on SIGTERM; it was killed",
			    vm->pid);
}

static void qemu_kill(struct vm *vm)
{
	if (reap(vm, false))
		return;
	kill(vm->pid, SIGKILL);
	reap(vm, true);
}

static void qemu_free(struct vm *vm)
{
	linux_workload_free(vm->workload); /* while the guest may still answer */
	qga_client_free(vm->agent);
	qemu_kill(vm);
	drain_free(vm->telemetry);
	qmp_client_free(vm->qmp);
	if (vm->telemetry_fd >= 0)
		close(vm->telemetry_fd);
	if (vm->control_fd >= 0)
		close(vm->control_fd);
	strv_free(vm->argv);
	free(vm->qemu_path);
	free(vm->log_path);
	free(vm->pid_path);
	free(vm);
}

static void qemu_exit_summary(const struct vm *vm, char *buf, size_t len)
{
	vm_describe_status(vm->wait_status, buf, len);
}

const struct vm_backend vm_backend_qemu = {
	.name = "qemu",
	.start = qemu_start,
	.stop = qemu_stop,
	.kill = qemu_kill,
	.free = qemu_free,
	.exited = qemu_exited,
	.exit_summary = qemu_exit_summary,
};
