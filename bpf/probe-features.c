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
 * A BTF's own named types (ids from first on: a module's split BTF sits on
 * vmlinux's) by name, in a hash: btf__find_by_name_kind() walks every type
 * for each lookup, and an open looks up some thirty tracepoints and
 * functions, each missed in vmlinux's ~100,000 types before its module's.
 */
struct btf_index {
	struct btf *btf;
	__u32 mask;   /* slots - 1 */
	__u32 *slots; /* type ids, 0: empty; NULL: not built yet */
};

struct kernel_btf_module {
	__u32 id; /* its BTF object's id */
	char name[64];
	bool preferred; /* KVM's: looked in first */
	bool loaded;    /* tried: ix.btf NULL when it could not be read */
	struct btf_index ix;
};

struct kernel_btf {
	const struct btf *vmlinux;
	struct btf_index vm;
	bool listed;
	struct kernel_btf_module *mods;
	size_t n_mods;
};

static __u32 name_hash(const char *s)
{
	__u32 h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The slot where name of kind is, or the empty one where it would go. */
static __u32 *index_slot(const struct btf_index *ix, const char *name, __u32 kind)
{
	for (__u32 i = name_hash(name) & ix->mask;; i = (i + 1) & ix->mask) {
		const struct btf_type *t;
		const char *n;

		if (!ix->slots[i])
			return &ix->slots[i];
		t = btf__type_by_id(ix->btf, ix->slots[i]);
		n = btf__name_by_offset(ix->btf, t->name_off);
		if (btf_kind(t) == kind && n && !strcmp(n, name))
			return &ix->slots[i];
	}
}

/* Index btf's named types from first on; the first of a name and kind wins, as in btf__find_by_name_kind(). */
static int index_build(struct btf_index *ix, struct btf *btf, __u32 first)
{
	__u32 n = btf__type_cnt(btf), named = 0, size = 16;

	ix->btf = btf;
	for (__u32 id = first; id < n; id++)
		named += btf__type_by_id(btf, id)->name_off != 0;
	while (size < 2 * named)
		size *= 2;
	ix->slots = calloc(size, sizeof(*ix->slots));
	if (!ix->slots)
		return -ENOMEM;
	ix->mask = size - 1;
	for (__u32 id = first; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name = t->name_off ? btf__name_by_offset(btf, t->name_off) : NULL;
		__u32 *slot;

		if (!name || !name[0])
			continue;
		slot = index_slot(ix, name, btf_kind(t));
		if (!*slot)
			*slot = id;
	}
	return 0;
}

static int index_find(const struct btf_index *ix, const char *name, __u32 kind)
{
	__u32 id = ix->slots ? *index_slot(ix, name, kind) : 0;

	return id ? (int)id : -ENOENT;
}

struct kernel_btf *kernel_btf_new(const struct btf *vmlinux)
{
	struct kernel_btf *kb = calloc(1, sizeof(*kb));

	if (kb)
		kb->vmlinux = vmlinux;
	return kb;
}

const struct btf *kernel_btf_vmlinux(const struct kernel_btf *kb)
{
	return kb ? kb->vmlinux : NULL;
}

void kernel_btf_free(struct kernel_btf *kb)
{
	if (!kb)
		return;
	free(kb->vm.slots);
	for (size_t i = 0; i < kb->n_mods; i++) {
		btf__free(kb->mods[i].ix.btf);
		free(kb->mods[i].ix.slots);
	}
	free(kb->mods);
	free(kb);
}

/* The loaded modules' BTF objects, in id order (their BTF is read on first use). */
static int modules_list(struct kernel_btf *kb)
{
	static const char *const first[] = { "kvm", "kvm_amd", "kvm_intel" };
	__u32 id = 0;

	kb->listed = true;
	while (bpf_btf_get_next_id(id, &id) == 0) {
		struct kernel_btf_module *m;
		char module[sizeof(m->name)];
		int fd;

		if (btf_object_name(id, &fd, module, sizeof(module)) < 0)
			continue;
		close(fd);
		if (!strcmp(module, "vmlinux"))
			continue;
		m = realloc(kb->mods, (kb->n_mods + 1) * sizeof(*m));
		if (!m)
			return -ENOMEM;
		kb->mods = m;
		m = &kb->mods[kb->n_mods++];
		*m = (struct kernel_btf_module){ .id = id };
		snprintf(m->name, sizeof(m->name), "%s", module);
		for (size_t i = 0; i < ARRAY_SIZE(first); i++)
			m->preferred = m->preferred || !strcmp(module, first[i]);
	}
	return 0;
}

/*
 * Look name (of BTF kind) up in the BTF of each loaded module, the modules
 * KVM's code lives in first (distribution kernels build KVM as modules, each
 * with its own BTF under /sys/kernel/btf/). Pass 0 tries those, pass 1 the
 * others.
 */
static int module_btf_find(struct kernel_btf *kb, const char *name, __u32 kind, struct kernel_btf_target *t)
{
	if (!kb->listed && modules_list(kb) < 0)
		return -ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < kb->n_mods; i++) {
			struct kernel_btf_module *m = &kb->mods[i];
			struct btf *b;
			int tid;

			if (m->preferred != (pass == 0))
				continue;
			if (!m->loaded) {
				m->loaded = true;
				b = btf__load_from_kernel_by_id_split(m->id, (struct btf *)kb->vmlinux);
				if (b && index_build(&m->ix, b, btf__type_cnt(kb->vmlinux)) < 0) {
					btf__free(b);
					m->ix.btf = NULL;
					return -ENOMEM;
				}
			}
			if (!m->ix.btf || (tid = index_find(&m->ix, name, kind)) < 0)
				continue;
			/* the module may have gone since it was listed: then look on */
			t->obj_fd = bpf_btf_get_fd_by_id(m->id);
			if (t->obj_fd < 0)
				continue;
			t->id = (__u32)tid;
			snprintf(t->module, sizeof(t->module), "%s", m->name);
			return 0;
		}
	}
	return -ENOENT;
}

int kernel_btf_find_vmlinux(struct kernel_btf *kb, const char *name, __u32 kind)
{
	if (!kb || !kb->vmlinux)
		return -ENOENT;
	if (!kb->vm.slots && index_build(&kb->vm, (struct btf *)kb->vmlinux, 1) < 0)
		return -ENOMEM;
	return index_find(&kb->vm, name, kind);
}

int kernel_btf_find(struct kernel_btf *kb, const char *name, __u32 kind, struct kernel_btf_target *t)
{
	int id;

	t->id = 0;
	t->obj_fd = -1;
	t->module[0] = '\0';
	if (!kb || !kb->vmlinux)
		return -ENOENT;
	id = kernel_btf_find_vmlinux(kb, name, kind);
	if (id == -ENOMEM)
		return id;
	if (id > 0) {
		t->id = (__u32)id;
		return 0;
	}
	return module_btf_find(kb, name, kind, t);
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

int feature_tp_btf(struct kernel_btf *kb, const char *name, char *origin, size_t origin_size,
		   struct sb_error *err)
{
	char type[256], what[300];
	_cleanup_(kernel_btf_target_done) struct kernel_btf_target t = { .obj_fd = -1 };
	_cleanup_close_ int fd = -1, link = -1;
	int r;

	if (!kernel_btf_vmlinux(kb))
		return sb_error_set(err, -ENOENT, "no kernel BTF (/sys/kernel/btf/vmlinux), which tp_btf needs");
	snprintf(type, sizeof(type), "btf_trace_%s", name);
	r = kernel_btf_find(kb, type, BTF_KIND_TYPEDEF, &t);
	if (r == -ENOMEM)
		return sb_error_set(err, r, "out of memory looking %s up in the kernel's BTF", type);
	if (r < 0)
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

int feature_fentry(struct kernel_btf *kb, const char *name, char *origin, size_t origin_size,
		   struct sb_error *err)
{
	char what[300];
	_cleanup_(kernel_btf_target_done) struct kernel_btf_target t = { .obj_fd = -1 };
	_cleanup_close_ int fd = -1, link = -1;
	int r;

	if (!kernel_btf_vmlinux(kb))
		return sb_error_set(err, -ENOENT, "no kernel BTF (/sys/kernel/btf/vmlinux), which fentry needs");
	r = kernel_btf_find(kb, name, BTF_KIND_FUNC, &t);
	if (r == -ENOMEM)
		return sb_error_set(err, r, "out of memory looking %s up in the kernel's BTF", name);
	if (r < 0)
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
