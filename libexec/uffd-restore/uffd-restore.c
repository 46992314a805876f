// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench-uffd-restore: seed 003's restore with a chunked userfaultfd
 * handler (docs/scenarios.md, "The seed's 512 KiB handler"). A KVM guest of
 * one vCPU touches each 4 KiB page of its region once, in order; the
 * region's pages arrive through userfaultfd, the aligned --chunk around
 * each fault placed at once. Prints one JSON object: the pass time, the
 * requests served, pages that did not hold what was restored, and the
 * vCPU's KVM stats over the pass.
 *
 *   snapbench-uffd-restore [--region SIZE] [--chunk SIZE] [--write]
 *
 * Exit 0 when every page was restored, 1 when the restore failed, 2 for
 * bad options.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "error.h"
#include "restore-handler.h"
#include "restore-kvm-stats.h"
#include "parse-number.h"
#include "restore-vm.h"

#define PAGE 4096u

static const char *const stat_names[] = { "pf_taken", "pf_fixed", "pf_spurious", "pf_prefetched" };
#define N_STATS (sizeof(stat_names) / sizeof(stat_names[0]))

struct options {
	uint64_t region, chunk;
	bool write;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: snapbench-uffd-restore [--region SIZE] [--chunk SIZE] [--write]\n"
		"  --region SIZE  guest memory restored and touched once, linearly (default 128M, at most 2G)\n"
		"  --chunk SIZE   what the userfaultfd handler places per fault: a power of two from 4K to 2M,\n"
		"                 aligned (default 4K)\n"
		"  --write        the guest writes each page instead of reading it\n");
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "region", required_argument, NULL, 'r' }, { "chunk", required_argument, NULL, 'c' },
		{ "write", no_argument, NULL, 'w' },        { "help", no_argument, NULL, 'h' }, {},
	};
	struct sb_error err = { 0 };
	int c;

	*o = (struct options){ .region = 128ull << 20, .chunk = PAGE };
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if ((c == 'r' && parse_size(optarg, PAGE, VM_REGION_MAX, &o->region, &err) < 0) ||
		    (c == 'c' && parse_size(optarg, PAGE, 2u << 20, &o->chunk, &err) < 0)) {
			fprintf(stderr, "snapbench-uffd-restore: --%s %s: %s\n", c == 'r' ? "region" : "chunk", optarg,
				err.msg);
			return -EINVAL;
		}
		if (c == 'w')
			o->write = true;
		else if (c != 'r' && c != 'c') {
			usage(stderr);
			return -EINVAL;
		}
	}
	if (o->region % PAGE) {
		fprintf(stderr, "snapbench-uffd-restore: --region %llu: give a multiple of 4K (e.g. 128M)\n",
			(unsigned long long)o->region);
		return -EINVAL;
	}
	if (o->chunk & (o->chunk - 1) || o->region % o->chunk) {
		fprintf(stderr, "snapbench-uffd-restore: --chunk %llu: give a power of two from 4K to 2M that divides "
			"--region (%llu bytes)\n", (unsigned long long)o->chunk, (unsigned long long)o->region);
		return -EINVAL;
	}
	return 0;
}

/* An anonymous mapping of bytes aligned to align (a power of two), without THP; NULL on failure. */
static char *map_aligned(size_t bytes, size_t align)
{
	char *p = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	char *a = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	munmap(a + bytes, (size_t)(p + align - a));
	/* 4 KiB pages, as the seed's handler places them: no huge page mapped behind KVM's back */
	(void)madvise(a, bytes, MADV_NOHUGEPAGE);
	return a;
}

/* The snapshot: each page holds its index at byte 8 (the guest's write touches bytes 0-3 only). */
static void fill_source(char *src, size_t bytes)
{
	for (size_t off = 0; off < bytes; off += PAGE) {
		uint64_t index = off / PAGE;
		memcpy(src + off + 8, &index, sizeof(index));
	}
}

static uint64_t count_mismatches(const char *region, const char *src, size_t bytes)
{
	uint64_t bad = 0;

	for (size_t off = 0; off < bytes; off += PAGE)
		bad += memcmp(region + off + 8, src + off + 8, 8) != 0;
	return bad;
}

static void print_json(const struct options *o, const struct handler *h, uint64_t ns, uint64_t mismatches,
		       const struct kvm_stats *st, const uint64_t *before, const uint64_t *after)
{
	printf("{\"region_bytes\": %llu, \"chunk_bytes\": %llu, \"pages\": %llu, \"access\": \"%s\", "
	       "\"pass_ms\": %.3f, \"uffd_requests\": %llu, \"uffd_woken\": %llu, \"uffd_bytes\": %llu, "
	       "\"mismatches\": %llu, \"kvm\": {",
	       (unsigned long long)o->region, (unsigned long long)o->chunk, (unsigned long long)(o->region / PAGE),
	       o->write ? "write" : "read", (double)ns / 1e6, (unsigned long long)h->requests,
	       (unsigned long long)h->woken, (unsigned long long)h->bytes, (unsigned long long)mismatches);
	for (size_t k = 0; k < N_STATS; k++) {
		if (st->found[k])
			printf("%s\"%s\": %llu", k ? ", " : "", stat_names[k], (unsigned long long)(after[k] - before[k]));
		else
			printf("%s\"%s\": null", k ? ", " : "", stat_names[k]);
	}
	printf("}}\n");
}

/* The pass itself, the VM and the handler set up: KVM's stats around it. 0, or 1 having said why. */
static int pass(const struct options *o, struct vm *vm, struct handler *h, const char *src)
{
	struct kvm_stats st;
	uint64_t before[N_STATS] = { 0 }, after[N_STATS] = { 0 }, ns = 0;
	int r = kvm_stats_open(&st, vm->vcpu_fd, stat_names, N_STATS);

	if (r < 0 || kvm_stats_read(&st, before) < 0) {
		fprintf(stderr, "snapbench-uffd-restore: the vCPU's KVM stats (KVM_GET_STATS_FD): %s\n", strerror(-r));
		return 1;
	}
	r = vm_run_pass(vm, &ns);
	if (r >= 0)
		r = kvm_stats_read(&st, after);
	uint64_t bad = r >= 0 ? count_mismatches(h->region, src, o->region) : 0;
	handler_stop(h);
	kvm_stats_close(&st);
	if (r < 0) {
		fprintf(stderr, "snapbench-uffd-restore: %s: %s\n", vm->what[0] ? vm->what : "KVM stats", strerror(-r));
		return 1;
	}
	print_json(o, h, ns, bad, &st, before, after);
	if (h->error) {
		fprintf(stderr, "snapbench-uffd-restore: the handler failed: %s: %s\n", h->what, strerror(-h->error));
		return 1;
	}
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct vm vm;
	struct handler h = { .uffd = -1 };
	int r, ret = 1;

	if (parse_options(argc, argv, &o) < 0)
		return 2;
	h.region = map_aligned(o.region, o.chunk);
	char *src = map_aligned(o.region, PAGE);
	if (!h.region || !src) {
		fprintf(stderr, "snapbench-uffd-restore: cannot map 2 x %llu bytes: %s\n", (unsigned long long)o.region,
			strerror(errno));
		return 1;
	}
	fill_source(src, o.region);
	h.source = src;
	h.region_bytes = o.region;
	h.chunk = o.chunk;
	r = vm_create(&vm, h.region, o.region, o.write);
	if (r < 0)
		fprintf(stderr, "snapbench-uffd-restore: %s: %s\n", vm.what, strerror(-r));
	else if ((r = handler_start(&h)) < 0)
		fprintf(stderr, "snapbench-uffd-restore: %s: %s\n", h.what, strerror(-r));
	else
		ret = pass(&o, &vm, &h, src);
	vm_destroy(&vm);
	return ret;
}
