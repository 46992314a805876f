/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapbench top's rooms and what they share: the options (top-args.c),
 * the targets found and opened, one or every VM on the host
 * (top-discover.c), each VM's rows for a refresh (top-rows.c), and the
 * refresh printed as a table or a JSON line (top-output.c); verb-top.c
 * runs the refreshes. They call one way: verb-top.c calls the others,
 * top-discover.c and top-output.c call top-rows.c, and none calls back.
 */
#pragma once

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "probes.h"
#include "top-kvm.h"

#define TOP_MAX_ROWS (SB_C_MAX + SB_ATTR_MAX * SB_CAUSE_MAX + SB_EXIT_SLOTS)
/* one probes instance (its own BPF programs) per VM without a target: few VMs are expected */
#define TOP_MAX_VMS 16

enum top_sort { TOP_SORT_CURRENT, TOP_SORT_TOTAL, TOP_SORT_NAME };

struct top_args {
	struct sb_probe_options opts;
	unsigned long pid;
	const char *qmp, *vm;
	unsigned count;
	double interval_s;
	enum top_sort sort;
	const char *filter;
	regex_t re;
	bool json, have_re, no_qmp;
};

struct row {
	char name[96];
	/* "counter", "cause", "exit_reason" or "kvm": %Total is of the row's group (a cause: of its counter's causes) */
	const char *group;
	uint64_t total;    /* since the start */
	double current;    /* per second over the last interval */
	double share;      /* of the group's total, 0..1; < 0: none (a kvm.*_ns duration is no count of events) */
	int64_t value;     /* kvm: the stat as KVM has counted it since the VM started, at the last read; else -1 */
};

/* One VM top shows: its probes, and KVM's own stats when it has a source for them. */
struct top_vm {
	pid_t pid;
	char name[33];                  /* QEMU's -name, "" if none */
	char prefix[64];                /* "PID:NAME:" before its rows without a target; "" with one */
	struct sb_probes *p;
	struct sb_probe_snapshot first, prev, cur;
	struct libvirt_domain *dom;     /* --vm */
	struct top_kvm *kvm;            /* NULL: no KVM stats, kvm_reason says why ("" when not looked for) */
	struct top_kvm_sample kfirst, kprev, kcur;
	char kvm_reason[SB_ERROR_MAX];
	struct row *rows;
	size_t nrows, nbpf;             /* rows[0, nbpf) from the probes, then the kvm.* rows */
	double since_s;                 /* top's time when it took this VM: its totals are since then */
	bool gone;
};

/* Without a target: a VM top took or dropped since the last refresh it printed. */
struct top_event {
	pid_t pid;
	char name[33];
};

struct top {
	struct top_args *a;
	struct top_vm *vms;             /* TOP_MAX_VMS slots: vms[0, n_vms) in use, in pid order, the rest zero */
	size_t n_vms;
	size_t found;                   /* without a target: the VMs on the host, shown or not */
	bool all;                       /* no target: every VM, the host scanned again every refresh */
	pid_t *refused;                 /* all: running VMs whose probes failed, not tried again */
	size_t n_refused;
	struct top_event added[TOP_MAX_VMS], exited[TOP_MAX_VMS];
	size_t n_added, n_exited;
	uint64_t t0_ns;
};

/* top-args.c: argv into a (ARGS_GO_ON, or the exit code having said why); top_args_done() after either */
int top_parse_argv(int argc, char **argv, struct top_args *a);
void top_args_done(struct top_args *a);

/* top-rows.c: v's rows for this refresh, sorted by a->sort; whether a's --filter takes a name */
void top_make_rows(struct top_vm *v, const struct top_args *a);
bool top_filter_takes(const struct top_args *a, const char *name);

/*
 * top-discover.c. The one target of --pid, --qmp or --vm opened, or
 * (no target) the host scanned again: the VMs that exited leave, those
 * started since come in, the first that could not be probed's exit code
 * in *first_fail. Exit codes, having said why.
 */
int top_open_one(struct top *t);
int top_rescan(struct top *t, double since_s, int *first_fail);
/* v's probes are open: its rows' room and its first read, the start of its totals; -errno with err set */
int top_vm_start(struct top_vm *v, double since_s, struct sb_error *err);
void top_vm_clear(struct top_vm *v);
/* v's KVM stats are lost: it has none from now, why says why */
void top_drop_kvm(struct top_vm *v, const char *why);

/* top-output.c: one refresh, as a JSON line or a table; EXIT_OK or EXIT_FAIL */
int top_print_refresh(const struct top *t, double elapsed_s, bool tty, unsigned refresh);
