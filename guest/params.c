// SPDX-License-Identifier: GPL-2.0-or-later
#include "params.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "strbuf.h"

#define PAGE_4K 4096u
#define PAGE_2M (2u << 20)

static const char *const clock_strings[] = {
	[0] = "auto",
	[GUEST_CLOCK_KVMCLOCK] = "kvmclock",
	[GUEST_CLOCK_CPUID] = "cpuid",
	[GUEST_CLOCK_PIT] = "pit",
};

const char *guest_pattern_to_string(int pattern)
{
	return pattern >= 0 ? guest_pattern_name((unsigned)pattern) : NULL; /* the guest's own table (cmdline.c) */
}

int guest_pattern_from_string(const char *s, int *pattern)
{
	for (int i = 0; i < GUEST_PATTERN_COUNT; i++)
		if (i != GUEST_PATTERN_PROBE && !strcmp(s, guest_pattern_name((unsigned)i))) {
			*pattern = i;
			return 0;
		}
	return -EINVAL;
}

void guest_params_init(struct guest_params *p, unsigned vcpus)
{
	*p = (struct guest_params){
		.vcpus = vcpus,
		.region_percent = 50,
		.page_size = PAGE_4K,
		.pattern = GUEST_PATTERN_WRITE64,
		.probe_vcpu = vcpus > 1 ? 0 : -1,
		.probe_gap_us = 100,
		.interval_ms = 100,
		.seed = 1,
		.populate = true,
	};
	for (unsigned i = 0; i < GUEST_MAX_VCPUS; i++)
		p->vcpu_pattern[i] = GUEST_PATTERN_DEFAULT;
}

static int is_worker_pattern(int pattern)
{
	return pattern >= 0 && pattern < GUEST_PATTERN_COUNT && pattern != GUEST_PATTERN_PROBE;
}

static bool has_vcpu_pattern(const struct guest_params *p, int pattern)
{
	for (unsigned i = 0; i < p->vcpus && i < GUEST_MAX_VCPUS; i++)
		if (p->vcpu_pattern[i] == pattern)
			return true;
	return false;
}

int guest_params_validate(const struct guest_params *p, struct sb_error *err)
{
	if (p->vcpus < 1 || p->vcpus > GUEST_MAX_VCPUS)
		return sb_error_set(err, -EINVAL, "guest parameter vcpus=%u: the micro guest runs 1 to %u vCPUs", p->vcpus,
				    GUEST_MAX_VCPUS);
	if (p->region_bytes == 0 && (p->region_percent < 1 || p->region_percent > 100))
		return sb_error_set(err, -EINVAL,
				    "guest parameter region_percent=%u: give 1 to 100, or a size in region_bytes", p->region_percent);
	if (p->page_size != PAGE_4K && p->page_size != PAGE_2M)
		return sb_error_set(err, -EINVAL, "guest parameter page_size=%u: use 4096 (4K) or 2097152 (2M)", p->page_size);
	if (p->region_bytes && p->region_bytes % p->page_size)
		return sb_error_set(err, -EINVAL,
				    "guest parameter region_bytes=%" PRIu64 ": not a multiple of the page size %u; round it",
				    p->region_bytes, p->page_size);
	if (p->region_bytes && p->ram_bytes && p->region_bytes >= p->ram_bytes)
		return sb_error_set(err, -EINVAL,
				    "guest parameter region_bytes=%" PRIu64 ": the VM has %" PRIu64
				    " bytes of RAM and the guest needs some for itself; lower it or give the VM more memory",
				    p->region_bytes, p->ram_bytes);
	if (!is_worker_pattern(p->pattern))
		return sb_error_set(err, -EINVAL, "guest parameter pattern=%d: use read64, write64, rand-set, fault-linear or idle", p->pattern);
	if (p->probe_vcpu < -1 || p->probe_vcpu >= (int)p->vcpus)
		return sb_error_set(err, -EINVAL, "guest parameter probe_vcpu=%d: the VM has vCPUs 0 to %u; pick one or -1 for no probe",
				    p->probe_vcpu, p->vcpus - 1);
	for (unsigned i = 0; i < GUEST_MAX_VCPUS; i++) {
		int pat = p->vcpu_pattern[i];

		if (pat == GUEST_PATTERN_DEFAULT)
			continue;
		if (i >= p->vcpus)
			return sb_error_set(err, -EINVAL, "guest parameter vcpu_pattern[%u]: the VM has vCPUs 0 to %u; drop it", i,
					    p->vcpus - 1);
		if (!is_worker_pattern(pat))
			return sb_error_set(err, -EINVAL,
					    "guest parameter vcpu_pattern[%u]=%d: use read64, write64, rand-set, fault-linear or idle", i, pat);
		if ((int)i == p->probe_vcpu)
			return sb_error_set(err, -EINVAL,
					    "guest parameter vcpu_pattern[%u]: vCPU %u runs the probe (probe_vcpu); move the probe or drop the pattern",
					    i, i);
	}
	if (!p->populate && (p->pattern == GUEST_PATTERN_FAULT_LINEAR || has_vcpu_pattern(p, GUEST_PATTERN_FAULT_LINEAR)))
		return sb_error_set(err, -EINVAL,
				    "guest parameter populate=off: the fault-linear pattern checks what populate writes; turn populate on");
	if (p->probe_gap_us > GUEST_PROBE_GAP_MAX_US)
		return sb_error_set(err, -EINVAL, "guest parameter probe_gap_us=%u: at most %u (10 s)", p->probe_gap_us,
				    GUEST_PROBE_GAP_MAX_US);
	if (p->run_ms > GUEST_RUN_MAX_MS)
		return sb_error_set(err, -EINVAL, "guest parameter run_ms=%" PRIu64 ": at most %llu (30 days); 0 runs until stopped",
				    p->run_ms, GUEST_RUN_MAX_MS);
	if (p->interval_ms < GUEST_INTERVAL_MIN_MS || p->interval_ms > GUEST_INTERVAL_MAX_MS)
		return sb_error_set(err, -EINVAL, "guest parameter interval_ms=%u: give %u to %u", p->interval_ms,
				    GUEST_INTERVAL_MIN_MS, GUEST_INTERVAL_MAX_MS);
	if (p->clock < 0 || p->clock > GUEST_CLOCK_PIT)
		return sb_error_set(err, -EINVAL, "guest parameter clock=%d: use 0 (auto) or an enum guest_clock_source value",
				    p->clock);
	return 0;
}

int guest_params_to_cmdline(const struct guest_params *p, char **out, struct sb_error *err)
{
	_cleanup_free_ char *s = NULL;
	struct strbuf b = {};
	int r;

	r = guest_params_validate(p, err);
	if (r < 0)
		return r;

	strbuf_append(&b, "--");
	if (p->region_bytes)
		strbuf_appendf(&b, " mem=%" PRIu64 "K", p->region_bytes >> 10);
	else
		strbuf_appendf(&b, " mem=%u%%", p->region_percent);
	strbuf_appendf(&b, " page=%s", p->page_size == PAGE_2M ? "2m" : "4k");
	strbuf_appendf(&b, " pattern=%s", guest_pattern_name((unsigned)p->pattern));
	for (unsigned i = 0; i < p->vcpus; i++)
		if (p->vcpu_pattern[i] != GUEST_PATTERN_DEFAULT)
			strbuf_appendf(&b, " pattern.%u=%s", i, guest_pattern_name((unsigned)p->vcpu_pattern[i]));
	if (p->probe_vcpu < 0)
		strbuf_append(&b, " probe=none");
	else
		strbuf_appendf(&b, " probe=%d", p->probe_vcpu);
	strbuf_appendf(&b, " probe-gap=%u run=%" PRIu64 " interval=%u seed=%" PRIu64 " populate=%s clock=%s", p->probe_gap_us,
		       p->run_ms, p->interval_ms, p->seed, p->populate ? "on" : "off", clock_strings[p->clock]);
	if (p->fault_write)
		strbuf_append(&b, " fault=write");
	/* 255 vCPUs with a pattern each stays far below the limit; still, never
	 * hand QEMU a command line the guest would cut. */
	s = strbuf_steal(&b);
	if (!s)
		return sb_error_set(err, -ENOMEM, "guest command line: out of memory");
	if (strlen(s) >= GUEST_CMDLINE_MAX)
		return sb_error_set(err, -E2BIG, "guest command line longer than %d bytes: set fewer per-vCPU patterns",
				    GUEST_CMDLINE_MAX - 1);
	/* The guest's own parser must agree; if not, this file has a bug. */
	{
		struct guest_config cfg;
		char msg[512];

		if (guest_cmdline_parse(s, &cfg, msg, sizeof(msg)) < 0)
			return sb_error_set(err, -EINVAL, "internal error: the guest would reject its command line: %s", msg);
	}
	*out = TAKE_PTR(s);
	return 0;
}
