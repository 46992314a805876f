// SPDX-License-Identifier: GPL-2.0-or-later
/* Recorded kernel stacks, symbolized with /proc/kallsyms. */
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "stack-symbols.h"

bool stack_is_plumbing(const char *sym)
{
	static const char *const prefixes[] = { "bpf_prog_", "bpf_trace_run", "__bpf_trace_", "__traceiter_",
						"perf_trace_", "trace_call_bpf", "perf_tp_event", "bpf_get_stack",
						"__bpf_get_stack", "bpf_trampoline_", "__bpf_prog_enter", "__bpf_prog_exit",
						"__bpf_tramp_" };

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(sym, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

void stack_symbol(const struct ksyms *ks, uint64_t ip, char *buf, size_t size)
{
	const struct ksym *s = ksyms_lookup(ks, ip);
	const char *mod;

	if (!s) {
		snprintf(buf, size, "0x%llx", (unsigned long long)ip);
		return;
	}
	mod = strchr(s->name, ' ');
	if (mod)
		snprintf(buf, size, "%.*s+0x%llx%s", (int)(mod - s->name), s->name,
			 (unsigned long long)(ip - s->addr), mod);
	else
		snprintf(buf, size, "%s+0x%llx", s->name, (unsigned long long)(ip - s->addr));
}

void stack_symbolize(const struct ksyms *ks, struct sb_stack *s)
{
	size_t out = 0;
	bool top = true;

	for (size_t i = 0; i < s->nr; i++) {
		char sym[128];

		stack_symbol(ks, s->frames[i].ip, sym, sizeof(sym));
		if (top && stack_is_plumbing(sym))
			continue;
		top = false;
		s->frames[out].ip = s->frames[i].ip;
		snprintf(s->frames[out].symbol, sizeof(s->frames[out].symbol), "%s", sym);
		out++;
	}
	s->nr = out;
}
