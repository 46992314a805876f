// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bpf-read: the BPF part of one sample (docs/running.md, "Benchmark"):
 * bpf_source_read() with the probes open and attached, each counter put in
 * a report row the way the sampler does (its index by the hint, then the
 * delta), ROUNDS rounds of READS reads, CPU time of this thread per read,
 * median [min max]. The probes target this process, which holds an empty
 * KVM VM (the probes want one) and runs no vCPU, so they count nothing:
 * what is measured is the read and the naming, as on an idle VM. It
 * prints too what opening the probes cost (loading, verifying, attaching,
 * /proc/kallsyms), which a run pays once.
 *
 *   build/bench/bpf-read [ROUNDS [READS]]     (as root)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "bpf-source.h"
#include "clock.h"
#include "macro.h"
#include "report.h"

struct sink {
	struct report_rep *rep;
	struct report_row *row;
	size_t next;
	size_t counters;
};

static int emit(void *userdata, const char *name, uint64_t cumulative)
{
	struct sink *s = userdata;
	int idx = report_rep_counter_hint(s->rep, name, s->next);

	if (idx < 0)
		return idx;
	s->next = (size_t)idx + 1;
	s->counters++;
	return report_row_set_index(s->row, (size_t)idx, cumulative);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 9, reads = argc > 2 ? atoi(argv[2]) : 2000;
	_cleanup_report_ struct report *r = NULL;
	struct sb_error err = { 0 };
	struct bpf_source *src = NULL;
	struct sink s = { 0 };
	double *us;
	uint64_t open_cpu, open_wall;
	int k, kvm, vm;

	if (argc > 3 || rounds < 1 || reads < 1) {
		fprintf(stderr, "usage: bpf-read [ROUNDS [READS]]   (both at least 1)\n");
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bpf-read: run as root (it loads the BPF probes)\n");
		return 1;
	}
	us = calloc((size_t)rounds, sizeof(*us));
	if (!us || report_new("bench-bpf-read", 0, &r) < 0 || report_add_arm(r, "bench", NULL, 1) < 0 ||
	    report_add_rep(r, 0, 0, &s.rep) < 0 || report_rep_append_row(s.rep, 0, 0.1, REPORT_WINDOW_PRE, &s.row) < 0) {
		fprintf(stderr, "bpf-read: out of memory\n");
		return 1;
	}
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	vm = kvm < 0 ? -1 : ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		fprintf(stderr, "bpf-read: cannot create a KVM VM through /dev/kvm: %s\n", strerror(errno));
		return 1;
	}
	open_cpu = thread_cpu_ns();
	open_wall = mono_ns();
	k = bpf_source_open(getpid(), r, false, &src, &err);
	if (k < 0) {
		fprintf(stderr, "bpf-read: the probes did not open: %s\n", err.msg);
		return 1;
	}
	open_cpu = thread_cpu_ns() - open_cpu;
	open_wall = mono_ns() - open_wall;
	for (int i = 0; i < rounds; i++) {
		uint64_t t0 = thread_cpu_ns();

		for (int n = 0; n < reads; n++) {
			s.next = 0;
			s.counters = 0;
			k = bpf_source_read(src, emit, &s, &err);
			if (k < 0) {
				fprintf(stderr, "bpf-read: %s\n", err.msg);
				return 1;
			}
		}
		us[i] = (double)(thread_cpu_ns() - t0) / 1e3 / reads;
	}
	bpf_source_close(src);
	close(vm);
	close(kvm);
	qsort(us, (size_t)rounds, sizeof(*us), cmp);
	printf("bpf-read: %zu counters a read, %d rounds of %d reads, %ld CPUs configured\n", s.counters, rounds, reads,
	       sysconf(_SC_NPROCESSORS_CONF));
	printf("opening the probes: %.1f ms CPU (this thread; the kernel's verifying included), %.1f ms wall\n",
	       (double)open_cpu / 1e6, (double)open_wall / 1e6);
	printf("CPU per read: %.1f us [%.1f %.1f]\n", us[rounds / 2], us[0], us[rounds - 1]);
	free(us);
	return 0;
}
