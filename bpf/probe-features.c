// SPDX-License-Identifier: GPL-2.0-or-later
#include "probe-features.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"

static const struct bpf_insn return_zero[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

/* Load return_zero; on failure fill err with the verifier's first line, if any. */
static int load_trivial(enum bpf_prog_type type, enum bpf_attach_type attach, __u32 btf_id, int btf_obj_fd,
			const char *what, struct sb_error *err)
{
	char log[1024] = "";
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach, .attach_btf_id = btf_id,
		    .attach_btf_obj_fd = btf_obj_fd, .log_buf = log, .log_size = sizeof(log), .log_level = 1);
	int fd, r;

	fd = bpf_prog_load(type, "sb_probe", "GPL", return_zero, ARRAY_SIZE(return_zero), &opts);
	if (fd >= 0)
		return fd;
	r = -errno;
	/* retry without a log: some kernels refuse log_level on tiny programs */
	if (r == -ENOSPC || r == -EINVAL) {
		LIBBPF_OPTS(bpf_prog_load_opts, opts2, .expected_attach_type = attach, .attach_btf_id = btf_id,
			    .attach_btf_obj_fd = btf_obj_fd);

		fd = bpf_prog_load(type, "sb_probe", "GPL", return_zero, ARRAY_SIZE(return_zero), &opts2);
		if (fd >= 0)
			return fd;
		r = -errno;
	}
	char *nl = strchr(log, '\n');
	if (nl)
		*nl = '\0';
	if (r == -EPERM && geteuid() == 0)
		return sb_error_set(err, r,
				    "the kernel refused to load %s (EPERM) although we run as root%s%s%s", what,
				    log[0] ? " (verifier: " : "", log, log[0] ? ")" : "");
	if (r == -EPERM)
		return sb_error_set(err, r, "loading %s needs CAP_BPF and CAP_PERFMON (or root): run as root", what);
	return sb_error_set(err, r, "the kernel refused to load %s: %s%s%s%s", what, strerror(-r),
			    log[0] ? " (verifier: " : "", log, log[0] ? ")" : "");
}

/* The BTF object id's name and whether it is a kernel's (vmlinux or a module's); fd stays open. */
static int btf_object_name(__u32 id, int *fd, char *name, size_t size)
{
	struct bpf_btf_info info = { 0 };
	__u32 len = sizeof(info);

	*fd = bpf_btf_get_fd_by_id(id);
	if (*fd < 0)
		return -errno;
	name[0] = '\0';
	info.name = (__u64)(uintptr_t)name;
	info.name_len = (__u32)size;
	if (bpf_obj_get_info_by_fd(*fd, &info, &len) < 0 || !info.kernel_btf) {
		close(*fd);
		*fd = -1;
		return -ENOENT;
	}
	name[size - 1] = '\0';
	return 0;
}

/*
 * Look name (of BTF kind) up in the BTF of each loaded module, the modules
 * KVM's code lives in first (distribution kernels build KVM as modules, each
 * with its own BTF under /sys/kernel/btf/). Pass 0 tries those, pass 1 the
 * others.
 */
static int module_btf_find(const struct btf *vmlinux, const char *name, __u32 kind, struct kernel_btf_target *t)
{
	static const char *const first[] = { "kvm", "kvm_amd", "kvm_intel" };

	for (int pass = 0; pass < 2; pass++) {
		__u32 id = 0;

		while (bpf_btf_get_next_id(id, &id) == 0) {
			char module[sizeof(t->module)];
			bool preferred = false;
			struct btf *m;
			int fd, tid;

			if (btf_object_name(id, &fd, module, sizeof(module)) < 0)
				continue;
			for (size_t i = 0; i < ARRAY_SIZE(first); i++)
				preferred = preferred || !strcmp(module, first[i]);
			if (!strcmp(module, "vmlinux") || preferred != (pass == 0)) {
				close(fd);
				continue;
			}
			m = btf__load_from_kernel_by_id_split(id, (struct btf *)vmlinux);
			tid = m ? btf__find_by_name_kind(m, name, kind) : -ENOENT;
			btf__free(m);
			if (tid > 0) {
				t->id = (__u32)tid;
				t->obj_fd = fd;
				snprintf(t->module, sizeof(t->module), "%s", module);
				return 0;
			}
			close(fd);
		}
	}
	return -ENOENT;
}

int kernel_btf_find(const struct btf *vmlinux, const char *name, __u32 kind, struct kernel_btf_target *t)
{
	int id;

	t->id = 0;
	t->obj_fd = -1;
	t->module[0] = '\0';
	if (!vmlinux)
		return -ENOENT;
	id = btf__find_by_name_kind(vmlinux, name, kind);
	if (id > 0) {
		t->id = (__u32)id;
		return 0;
	}
	return module_btf_find(vmlinux, name, kind, t);
}

void kernel_btf_target_done(struct kernel_btf_target *t)
{
	if (t->obj_fd >= 0)
		close(t->obj_fd);
	t->obj_fd = -1;
}

/* "vmlinux" or "module kvm", for messages and probe notes. */
static void btf_origin(const struct kernel_btf_target *t, char *buf, size_t size)
{
	if (t->module[0])
		snprintf(buf, size, "module %s", t->module);
	else
		snprintf(buf, size, "vmlinux");
}

int feature_tp_btf(const struct btf *vmlinux, const char *name, char *origin, size_t origin_size,
		   struct sb_error *err)
{
	char type[256], what[300];
	_cleanup_(kernel_btf_target_done) struct kernel_btf_target t = { .obj_fd = -1 };
	_cleanup_close_ int fd = -1, link = -1;

	if (!vmlinux)
		return sb_error_set(err, -ENOENT, "no kernel BTF (/sys/kernel/btf/vmlinux), which tp_btf needs");
	snprintf(type, sizeof(type), "btf_trace_%s", name);
	if (kernel_btf_find(vmlinux, type, BTF_KIND_TYPEDEF, &t) < 0)
		return sb_error_set(err, -ENOENT,
				    "the kernel's BTF has no %s, nor has a loaded module's (no such tracepoint)", type);
	btf_origin(&t, origin, origin_size);
	snprintf(what, sizeof(what), "a tp_btf program for %s (BTF of %s)", name, origin);
	fd = load_trivial(BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP, t.id, t.obj_fd < 0 ? 0 : t.obj_fd, what, err);
	if (fd < 0)
		return fd;
	link = bpf_raw_tracepoint_open(NULL, fd);
	if (link < 0)
		return sb_error_set(err, -errno, "attaching %s failed: %s", what, strerror(errno));
	return 0;
}

int feature_raw_tp(const char *name, struct sb_error *err)
{
	char what[300];
	_cleanup_close_ int fd = -1, link = -1;

	snprintf(what, sizeof(what), "a raw_tp program for %s", name);
	fd = load_trivial(BPF_PROG_TYPE_RAW_TRACEPOINT, 0, 0, 0, what, err);
	if (fd < 0)
		return fd;
	link = bpf_raw_tracepoint_open(name, fd);
	if (link < 0) {
		int r = -errno;

		if (r == -ENOENT)
			return sb_error_set(err, r, "the kernel has no raw tracepoint %s", name);
		return sb_error_set(err, r, "attaching %s failed: %s", what, strerror(-r));
	}
	return 0;
}

static bool dir_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int tracefs_events_dir(char *buf, size_t size, struct sb_error *err)
{
	static const char *const candidates[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

	if (!buf || size == 0) /* also tells gcc -fsanitize builds buf is not NULL */
		return sb_error_set(err, -EINVAL, "tracefs_events_dir: no buffer");
	for (size_t i = 0; i < ARRAY_SIZE(candidates); i++) {
		snprintf(buf, size, "%s/events", candidates[i]);
		if (dir_exists(buf))
			return 0;
	}
	/* Not mounted: classic tracepoints need it, so mount it where it belongs. */
	if (!dir_exists("/sys/kernel/tracing"))
		return sb_error_set(err, -ENOENT,
				    "tracefs is not mounted and /sys/kernel/tracing does not exist: this kernel "
				    "lacks CONFIG_TRACING, so classic tracepoints cannot be used");
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return sb_error_set(err, -errno,
				    "tracefs is not mounted and mounting it on /sys/kernel/tracing failed: %s; mount "
				    "it as root with 'mount -t tracefs tracefs /sys/kernel/tracing' "
				    "(scripts/host-setup does)",
				    strerror(errno));
	snprintf(buf, size, "/sys/kernel/tracing/events");
	if (!dir_exists(buf))
		return sb_error_set(err, -ENOENT, "mounted tracefs on /sys/kernel/tracing but it has no events/");
	return 0;
}

static int read_event_id(const char *path, unsigned long long *id)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[32];
	ssize_t n;
	char *end;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	errno = 0;
	*id = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return -EIO;
	return 0;
}

int feature_tracepoint(const char *category, const char *name, unsigned long long *id, struct sb_error *err)
{
	char events[256], path[600], what[300];
	struct perf_event_attr attr = { 0 };
	_cleanup_close_ int fd = -1, pfd = -1;
	int r;

	r = tracefs_events_dir(events, sizeof(events), err);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/%s/%s/id", events, category, name);
	r = read_event_id(path, id);
	if (r == -ENOENT)
		return sb_error_set(err, r, "no tracefs event %s:%s (%s does not exist)", category, name, path);
	if (r < 0)
		return sb_error_set(err, r, "cannot read %s: %s", path, strerror(-r));

	snprintf(what, sizeof(what), "a tracepoint program for %s:%s", category, name);
	fd = load_trivial(BPF_PROG_TYPE_TRACEPOINT, 0, 0, 0, what, err);
	if (fd < 0)
		return fd;
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = *id;
	attr.sample_period = 1;
	pfd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return sb_error_set(err, -errno, "perf_event_open of tracepoint %s:%s failed: %s", category, name,
				    strerror(errno));
	if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, fd) < 0)
		return sb_error_set(err, -errno, "attaching %s failed: %s", what, strerror(errno));
	return 0;
}

int feature_fentry(const struct btf *vmlinux, const char *name, char *origin, size_t origin_size,
		   struct sb_error *err)
{
	char what[300];
	_cleanup_(kernel_btf_target_done) struct kernel_btf_target t = { .obj_fd = -1 };
	_cleanup_close_ int fd = -1, link = -1;
	int r;

	if (!vmlinux)
		return sb_error_set(err, -ENOENT, "no kernel BTF (/sys/kernel/btf/vmlinux), which fentry needs");
	if (kernel_btf_find(vmlinux, name, BTF_KIND_FUNC, &t) < 0)
		return sb_error_set(err, -ENOENT,
				    "the kernel's BTF has no function %s, nor has a loaded module's (inlined, absent, "
				    "or its module, e.g. kvm, not loaded)",
				    name);
	btf_origin(&t, origin, origin_size);
	snprintf(what, sizeof(what), "an fentry program for %s (BTF of %s)", name, origin);
	fd = load_trivial(BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, t.id, t.obj_fd < 0 ? 0 : t.obj_fd, what, err);
	if (fd < 0) {
		if (fd == -EPERM && geteuid() == 0) {
			char msg[SB_ERROR_MAX];

			snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
			return sb_error_set(err, fd,
					    "%s; kernels that refuse BPF trampolines (fentry, fexit and LSM "
					    "programs) answer this way (docs/probes.md)",
					    msg);
		}
		return fd;
	}
	link = bpf_raw_tracepoint_open(NULL, fd);
	if (link < 0) {
		r = -errno;
		return sb_error_set(err, r, "attaching %s failed: %s", what, strerror(-r));
	}
	return 0;
}
