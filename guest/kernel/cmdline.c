// SPDX-License-Identifier: GPL-2.0-or-later
#include "cmdline.h"

#include "fmt.h"

static const char *const pattern_names[GUEST_PATTERN_COUNT] = GUEST_PATTERN_NAMES;

const char *guest_pattern_name(unsigned pattern)
{
	return pattern < GUEST_PATTERN_COUNT ? pattern_names[pattern] : 0;
}

void guest_config_defaults(struct guest_config *cfg)
{
	*cfg = (struct guest_config){
		.mem_percent = 50,
		.page_shift = 12,
		.pattern = GUEST_PATTERN_WRITE64,
		.probe_vcpu = 0,
		.probe_gap_us = 100,
		.interval_ms = 100,
		.seed = 1,
		.populate = 1,
	};
	for (unsigned i = 0; i < GUEST_MAX_VCPUS; i++)
		cfg->vcpu_pattern[i] = GUEST_PATTERN_UNSET;
}

struct token {
	const char *p;
	size_t len;
};

static int tok_eq(struct token t, const char *s)
{
	size_t i;

	for (i = 0; i < t.len; i++)
		if (s[i] != t.p[i])
			return 0;
	return s[i] == '\0';
}

/* Decimal digits only, no sign, no overflow. */
static int parse_u64(struct token t, uint64_t *out)
{
	uint64_t v = 0;

	if (t.len == 0)
		return -1;
	for (size_t i = 0; i < t.len; i++) {
		unsigned d = (unsigned)(t.p[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int parse_pattern(struct token t)
{
	for (unsigned i = 0; i < GUEST_PATTERN_COUNT; i++)
		if (i != GUEST_PATTERN_PROBE && tok_eq(t, pattern_names[i]))
			return (int)i;
	return -1;
}

/* "64M", "1G", "4096", "4K"; or "50%". */
static int parse_mem(struct token t, struct guest_config *cfg)
{
	uint64_t v, mult = 1;
	char last;

	if (t.len == 0)
		return -1;
	last = t.p[t.len - 1];
	if (last == '%') {
		t.len--;
		if (parse_u64(t, &v) < 0 || v < 1 || v > 100)
			return -1;
		cfg->mem_bytes = 0;
		cfg->mem_percent = (uint32_t)v;
		return 0;
	}
	switch (last) {
	case 'K': case 'k': mult = 1ull << 10; t.len--; break;
	case 'M': case 'm': mult = 1ull << 20; t.len--; break;
	case 'G': case 'g': mult = 1ull << 30; t.len--; break;
	}
	if (parse_u64(t, &v) < 0 || v == 0 || v > UINT64_MAX / mult)
		return -1;
	cfg->mem_bytes = v * mult;
	return 0;
}

static int fail(char *err, size_t errlen, struct token key, struct token val, const char *fix)
{
	char k[64], v[64];
	size_t kl = key.len < sizeof(k) - 1 ? key.len : sizeof(k) - 1;
	size_t vl = val.len < sizeof(v) - 1 ? val.len : sizeof(v) - 1;

	for (size_t i = 0; i < kl; i++)
		k[i] = key.p[i];
	k[kl] = '\0';
	for (size_t i = 0; i < vl; i++)
		v[i] = val.p[i];
	v[vl] = '\0';
	k_snprintf(err, errlen, "guest command line: bad %s=%s: %s", k, v, fix);
	return -1;
}

/*
 * One key=value of the guest's command line. Long on purpose: one branch per
 * parameter, each with its fix, reads as the list of parameters; a table of
 * parsers would spread each over a function and an entry in this
 * freestanding kernel.
 */
static int parse_one(struct token key, struct token val, struct guest_config *cfg, char *err, size_t errlen)
{
	uint64_t v;
	int pat;

	if (tok_eq(key, "mem")) {
		if (parse_mem(val, cfg) < 0)
			return fail(err, errlen, key, val, "give a size such as 64M or 2G, or a share of free RAM such as 50%");
	} else if (tok_eq(key, "page")) {
		if (tok_eq(val, "4k") || tok_eq(val, "4K"))
			cfg->page_shift = 12;
		else if (tok_eq(val, "2m") || tok_eq(val, "2M"))
			cfg->page_shift = 21;
		else
			return fail(err, errlen, key, val, "use page=4k or page=2m");
	} else if (tok_eq(key, "pattern")) {
		pat = parse_pattern(val);
		if (pat < 0)
			return fail(err, errlen, key, val, "use read64, write64, rand-set, fault-linear or idle");
		cfg->pattern = (uint8_t)pat;
	} else if (key.len > 8 && tok_eq((struct token){ key.p, 8 }, "pattern.")) {
		struct token idx = { key.p + 8, key.len - 8 };

		if (parse_u64(idx, &v) < 0 || v >= GUEST_MAX_VCPUS)
			return fail(err, errlen, key, val, "pattern.N takes a vCPU index N from 0 to 254");
		pat = parse_pattern(val);
		if (pat < 0)
			return fail(err, errlen, key, val, "use read64, write64, rand-set, fault-linear or idle");
		cfg->vcpu_pattern[v] = (uint8_t)pat;
	} else if (tok_eq(key, "probe")) {
		if (tok_eq(val, "none"))
			cfg->probe_vcpu = -1;
		else if (parse_u64(val, &v) == 0 && v < GUEST_MAX_VCPUS)
			cfg->probe_vcpu = (int32_t)v;
		else
			return fail(err, errlen, key, val, "give the probe's vCPU index (0 to 254) or none");
	} else if (tok_eq(key, "probe-gap")) {
		if (parse_u64(val, &v) < 0 || v > GUEST_PROBE_GAP_MAX_US)
			return fail(err, errlen, key, val, "give the gap between probe reads in microseconds, 0 to 10000000");
		cfg->probe_gap_us = (uint32_t)v;
	} else if (tok_eq(key, "run")) {
		if (parse_u64(val, &v) < 0 || v > GUEST_RUN_MAX_MS)
			return fail(err, errlen, key, val, "give the run length in milliseconds (0: until stopped), at most 30 days");
		cfg->run_ms = v;
	} else if (tok_eq(key, "interval")) {
		if (parse_u64(val, &v) < 0 || v < GUEST_INTERVAL_MIN_MS || v > GUEST_INTERVAL_MAX_MS)
			return fail(err, errlen, key, val, "give the telemetry interval in milliseconds, 10 to 60000");
		cfg->interval_ms = (uint32_t)v;
	} else if (tok_eq(key, "seed")) {
		if (parse_u64(val, &cfg->seed) < 0)
			return fail(err, errlen, key, val, "give a decimal seed for rand-set");
	} else if (tok_eq(key, "populate")) {
		if (tok_eq(val, "on"))
			cfg->populate = 1;
		else if (tok_eq(val, "off"))
			cfg->populate = 0;
		else
			return fail(err, errlen, key, val, "use populate=on or populate=off");
	} else if (tok_eq(key, "fault")) {
		if (tok_eq(val, "read"))
			cfg->fault_access = GUEST_FAULT_READ;
		else if (tok_eq(val, "write"))
			cfg->fault_access = GUEST_FAULT_WRITE;
		else
			return fail(err, errlen, key, val, "use fault=read or fault=write (fault-linear's access)");
	} else if (tok_eq(key, "clock")) {
		if (tok_eq(val, "auto"))
			cfg->clock = 0;
		else if (tok_eq(val, "kvmclock"))
			cfg->clock = GUEST_CLOCK_KVMCLOCK;
		else if (tok_eq(val, "cpuid"))
			cfg->clock = GUEST_CLOCK_CPUID;
		else if (tok_eq(val, "pit"))
			cfg->clock = GUEST_CLOCK_PIT;
		else
			return fail(err, errlen, key, val, "use auto, kvmclock, cpuid or pit");
	} else {
		return fail(err, errlen, key, val,
			    "unknown parameter; known: mem, page, pattern, pattern.N, probe, probe-gap, run, interval, seed, populate, fault, clock");
	}
	return 0;
}

static struct token next_token(const char **pp)
{
	const char *p = *pp;
	struct token t;

	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	t.p = p;
	while (*p && *p != ' ' && *p != '\t' && *p != '\n')
		p++;
	t.len = (size_t)(p - t.p);
	*pp = p;
	return t;
}

int guest_cmdline_parse(const char *cmdline, struct guest_config *cfg, char *err, size_t errlen)
{
	const char *p = cmdline;
	struct token t;
	int have_marker = 0;

	guest_config_defaults(cfg);
	if (err && errlen)
		err[0] = '\0';

	for (const char *q = cmdline;;) {
		t = next_token(&q);
		if (t.len == 0)
			break;
		if (tok_eq(t, "--")) {
			have_marker = 1;
			p = q;
			break;
		}
	}
	if (!have_marker)
		(void)next_token(&p); /* the loader's kernel path */

	for (;;) {
		struct token key, val;
		size_t eq;

		t = next_token(&p);
		if (t.len == 0)
			break;
		for (eq = 0; eq < t.len && t.p[eq] != '='; eq++)
			;
		key = (struct token){ t.p, eq };
		val = eq < t.len ? (struct token){ t.p + eq + 1, t.len - eq - 1 } : (struct token){ t.p + t.len, 0 };
		if (eq == t.len) {
			char tok[64];
			size_t n = t.len < sizeof(tok) - 1 ? t.len : sizeof(tok) - 1;

			for (size_t i = 0; i < n; i++)
				tok[i] = t.p[i];
			tok[n] = '\0';
			k_snprintf(err, errlen, "guest command line: '%s' is not key=value: write it as key=value", tok);
			return -1;
		}
		if (parse_one(key, val, cfg, err, errlen) < 0)
			return -1;
	}
	if (cfg->probe_vcpu >= 0 && cfg->vcpu_pattern[cfg->probe_vcpu] != GUEST_PATTERN_UNSET) {
		k_snprintf(err, errlen,
			   "guest command line: pattern.%d names the probe's vCPU (probe=%d): move the probe or drop that pattern",
			   (int)cfg->probe_vcpu, (int)cfg->probe_vcpu);
		return -1;
	}
	return 0;
}
