// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The host-side parameter builder against the guest's own command-line
 * parser (kernel/cmdline.c, the code the guest runs): what the host builds,
 * the guest reads back unchanged; what either rejects, it names.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cmdline.h"
#include "params.h"

static void roundtrip(const struct guest_params *p, struct guest_config *cfg)
{
	_cleanup_free_ char *line = NULL;
	struct sb_error err = { 0 };
	char msg[512];

	CHECK_MSG(guest_params_to_cmdline(p, &line, &err) == 0, "%s", err.msg);
	CHECK(!strncmp(line, "-- ", 3));
	CHECK_MSG(guest_cmdline_parse(line, cfg, msg, sizeof(msg)) == 0, "%s: %s", line, msg);
}

static void test_defaults(void)
{
	struct guest_params p;
	struct guest_config cfg;

	guest_params_init(&p, 2);
	roundtrip(&p, &cfg);
	CHECK(cfg.mem_bytes == 0 && cfg.mem_percent == 50);
	CHECK(cfg.page_shift == 12 && cfg.pattern == GUEST_PATTERN_WRITE64);
	CHECK(cfg.probe_vcpu == 0 && cfg.probe_gap_us == 100 && cfg.interval_ms == 100);
	CHECK(cfg.run_ms == 0 && cfg.seed == 1 && cfg.clock == 0 && cfg.populate == 1);
	for (unsigned i = 0; i < GUEST_MAX_VCPUS; i++)
		CHECK(cfg.vcpu_pattern[i] == GUEST_PATTERN_UNSET);

	/* one vCPU: no probe by default, so the one vCPU works */
	guest_params_init(&p, 1);
	roundtrip(&p, &cfg);
	CHECK(cfg.probe_vcpu == -1);
}

static void test_everything_set(void)
{
	struct guest_params p;
	struct guest_config cfg;

	guest_params_init(&p, 8);
	p.region_bytes = 6ull << 30;
	p.page_size = 2u << 20;
	p.pattern = GUEST_PATTERN_RAND_SET;
	p.vcpu_pattern[1] = GUEST_PATTERN_READ64;
	p.vcpu_pattern[7] = GUEST_PATTERN_IDLE;
	p.probe_vcpu = 3;
	p.probe_gap_us = 0;
	p.run_ms = 12345;
	p.interval_ms = 250;
	p.seed = UINT64_MAX;
	p.clock = GUEST_CLOCK_PIT;
	p.populate = false;
	roundtrip(&p, &cfg);
	CHECK(cfg.populate == 0);
	CHECK(cfg.mem_bytes == 6ull << 30);
	CHECK(cfg.page_shift == 21 && cfg.pattern == GUEST_PATTERN_RAND_SET);
	CHECK(cfg.vcpu_pattern[1] == GUEST_PATTERN_READ64 && cfg.vcpu_pattern[7] == GUEST_PATTERN_IDLE);
	CHECK(cfg.vcpu_pattern[0] == GUEST_PATTERN_UNSET && cfg.vcpu_pattern[3] == GUEST_PATTERN_UNSET);
	CHECK(cfg.probe_vcpu == 3 && cfg.probe_gap_us == 0 && cfg.run_ms == 12345 && cfg.interval_ms == 250);
	CHECK(cfg.seed == UINT64_MAX && cfg.clock == GUEST_CLOCK_PIT);

	p.region_bytes = 0;
	p.region_percent = 100;
	p.probe_vcpu = -1;
	roundtrip(&p, &cfg);
	CHECK(cfg.mem_bytes == 0 && cfg.mem_percent == 100 && cfg.probe_vcpu == -1);

	/* every vCPU with its own pattern still fits the guest's limit */
	guest_params_init(&p, GUEST_MAX_VCPUS);
	p.probe_vcpu = -1;
	for (unsigned i = 0; i < GUEST_MAX_VCPUS; i++)
		p.vcpu_pattern[i] = GUEST_PATTERN_RAND_SET;
	roundtrip(&p, &cfg);
	CHECK(cfg.vcpu_pattern[GUEST_MAX_VCPUS - 1] == GUEST_PATTERN_RAND_SET);
}

#define EXPECT_BAD(mutate, field)                                                        \
	do {                                                                             \
		struct guest_params p;                                                   \
		struct sb_error err = { 0 };                                             \
		char *line = NULL;                                                       \
                                                                                         \
		guest_params_init(&p, 4);                                                \
		mutate;                                                                  \
		CHECK(guest_params_to_cmdline(&p, &line, &err) == -EINVAL);              \
		CHECK(line == NULL);                                                     \
		CHECK_MSG(strstr(err.msg, "guest parameter " field), "%s", err.msg);     \
	} while (0)

static void test_validation(void)
{
	EXPECT_BAD(p.vcpus = 0, "vcpus=0");
	EXPECT_BAD(p.vcpus = 256, "vcpus=256");
	EXPECT_BAD(p.region_percent = 0, "region_percent=0");
	EXPECT_BAD(p.region_percent = 101, "region_percent=101");
	EXPECT_BAD(p.page_size = 8192, "page_size=8192");
	EXPECT_BAD((p.page_size = 2u << 20, p.region_bytes = 3u << 20), "region_bytes=3145728");
	EXPECT_BAD((p.ram_bytes = 128u << 20, p.region_bytes = 128u << 20), "region_bytes");
	EXPECT_BAD(p.pattern = GUEST_PATTERN_PROBE, "pattern=4");
	EXPECT_BAD(p.pattern = -1, "pattern=-1");
	EXPECT_BAD(p.probe_vcpu = 4, "probe_vcpu=4");
	EXPECT_BAD(p.probe_vcpu = -2, "probe_vcpu=-2");
	EXPECT_BAD(p.vcpu_pattern[4] = GUEST_PATTERN_READ64, "vcpu_pattern[4]");
	EXPECT_BAD(p.vcpu_pattern[1] = 17, "vcpu_pattern[1]=17");
	EXPECT_BAD(p.vcpu_pattern[0] = GUEST_PATTERN_IDLE, "vcpu_pattern[0]: vCPU 0 runs the probe");
	EXPECT_BAD(p.probe_gap_us = GUEST_PROBE_GAP_MAX_US + 1, "probe_gap_us");
	EXPECT_BAD(p.run_ms = GUEST_RUN_MAX_MS + 1, "run_ms");
	EXPECT_BAD(p.interval_ms = 9, "interval_ms=9");
	EXPECT_BAD(p.interval_ms = 60001, "interval_ms=60001");
	EXPECT_BAD(p.clock = 4, "clock=4");
}

static void expect_guest_rejects(const char *line, const char *needle)
{
	struct guest_config cfg;
	char msg[512];

	CHECK_MSG(guest_cmdline_parse(line, &cfg, msg, sizeof(msg)) == -1, "accepted: %s", line);
	CHECK_MSG(strstr(msg, needle), "'%s' gave '%s', not '%s'", line, msg, needle);
}

static void test_guest_parser(void)
{
	struct guest_config cfg;
	char msg[512];

	/* QEMU's multiboot loader puts the kernel path first */
	CHECK(guest_cmdline_parse("/usr/share/snapbench/snapbench-guest.elf mem=64M pattern=read64", &cfg, msg,
				  sizeof(msg)) == 0);
	CHECK(cfg.mem_bytes == 64ull << 20 && cfg.pattern == GUEST_PATTERN_READ64);
	/* the marker makes a path with spaces (or '=') harmless */
	CHECK(guest_cmdline_parse("/tmp/a b=c/guest.elf -- mem=1G  page=2M", &cfg, msg, sizeof(msg)) == 0);
	CHECK(cfg.mem_bytes == 1ull << 30 && cfg.page_shift == 21);
	CHECK(guest_cmdline_parse("", &cfg, msg, sizeof(msg)) == 0 && cfg.pattern == GUEST_PATTERN_WRITE64);
	CHECK(guest_cmdline_parse("guest.elf", &cfg, msg, sizeof(msg)) == 0);
	CHECK(guest_cmdline_parse("-- mem=4096", &cfg, msg, sizeof(msg)) == 0 && cfg.mem_bytes == 4096);

	expect_guest_rejects("-- bogus=1", "bad bogus=1: unknown parameter");
	expect_guest_rejects("-- mem=0", "bad mem=0");
	expect_guest_rejects("-- mem=101%", "bad mem=101%");
	expect_guest_rejects("-- mem=99999999999999999999", "bad mem=");
	expect_guest_rejects("-- mem=20000000000G", "bad mem=");
	expect_guest_rejects("-- mem=12T", "bad mem=12T");
	expect_guest_rejects("-- page=1g", "use page=4k or page=2m");
	expect_guest_rejects("-- pattern=probe", "bad pattern=probe");
	expect_guest_rejects("-- pattern.255=read64", "pattern.N takes");
	expect_guest_rejects("-- pattern.x=read64", "pattern.N takes");
	expect_guest_rejects("-- probe=-1", "bad probe=-1");
	expect_guest_rejects("-- probe-gap=10000001", "bad probe-gap");
	expect_guest_rejects("-- run=-5", "bad run=-5");
	expect_guest_rejects("-- interval=5", "bad interval=5");
	expect_guest_rejects("-- seed=0x10", "bad seed=0x10");
	expect_guest_rejects("-- clock=tsc", "bad clock=tsc");
	expect_guest_rejects("-- populate=yes", "use populate=on or populate=off");
	expect_guest_rejects("-- quiet", "'quiet' is not key=value");
	expect_guest_rejects("-- probe=2 pattern.2=idle", "pattern.2 names the probe's vCPU");
}

/* fault-linear: its access travels as fault=, read by default; it needs the populated pattern */
static void test_fault_linear(void)
{
	_cleanup_free_ char *line = NULL, *line2 = NULL;
	struct guest_params p;
	struct guest_config cfg;
	struct sb_error err = { 0 };
	char msg[512];

	guest_params_init(&p, 2);
	p.pattern = GUEST_PATTERN_FAULT_LINEAR;
	CHECK(guest_params_to_cmdline(&p, &line, &err) == 0);
	CHECK(strstr(line, " pattern=fault-linear ") && !strstr(line, "fault="));
	CHECK(guest_cmdline_parse(line, &cfg, msg, sizeof(msg)) == 0);
	CHECK(cfg.pattern == GUEST_PATTERN_FAULT_LINEAR && cfg.fault_access == GUEST_FAULT_READ);
	p.fault_write = true;
	CHECK(guest_params_to_cmdline(&p, &line2, &err) == 0 && strstr(line2, " fault=write"));
	CHECK(guest_cmdline_parse(line2, &cfg, msg, sizeof(msg)) == 0 && cfg.fault_access == GUEST_FAULT_WRITE);

	p.populate = false;
	CHECK(guest_params_validate(&p, &err) == -EINVAL && strstr(err.msg, "populate=off"));
	p.pattern = GUEST_PATTERN_IDLE;
	p.vcpu_pattern[1] = GUEST_PATTERN_FAULT_LINEAR;
	CHECK(guest_params_validate(&p, &err) == -EINVAL && strstr(err.msg, "fault-linear"));
	p.populate = true;
	CHECK(guest_params_validate(&p, &err) == 0);

	expect_guest_rejects("-- fault=exec", "use fault=read or fault=write");
	CHECK(guest_cmdline_parse("-- pattern=fault-linear fault=read", &cfg, msg, sizeof(msg)) == 0);
}

static void test_pattern_strings(void)
{
	int pat;

	CHECK(guest_pattern_from_string("rand-set", &pat) == 0 && pat == GUEST_PATTERN_RAND_SET);
	CHECK(guest_pattern_from_string("idle", &pat) == 0 && pat == GUEST_PATTERN_IDLE);
	CHECK(guest_pattern_from_string("fault-linear", &pat) == 0 && pat == GUEST_PATTERN_FAULT_LINEAR);
	CHECK(guest_pattern_from_string("probe", &pat) == -EINVAL);
	CHECK(guest_pattern_from_string("READ64", &pat) == -EINVAL);
	CHECK(!strcmp(guest_pattern_to_string(GUEST_PATTERN_WRITE64), "write64"));
	CHECK(!strcmp(guest_pattern_to_string(GUEST_PATTERN_PROBE), "probe"));
	CHECK(guest_pattern_to_string(GUEST_PATTERN_COUNT) == NULL && guest_pattern_to_string(-1) == NULL);
	for (int i = 0; i < GUEST_PATTERN_COUNT; i++)
		CHECK(!strcmp(guest_pattern_to_string(i), guest_pattern_name((unsigned)i)));
}

int main(void)
{
	test_defaults();
	test_everything_set();
	test_validation();
	test_guest_parser();
	test_fault_linear();
	test_pattern_strings();
	printf("params: all checks passed\n");
	return 0;
}
