/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The symbolization of recorded kernel stacks (sb_probes_top_stacks()):
 * each frame as "func+0x1f" or "func+0x1f [module]" from kallsyms, the BPF
 * and tracepoint plumbing on top of every recorded stack dropped.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kallsyms.h"
#include "probes.h"

/* True when sym (a symbol or "func+0x..") is BPF or tracepoint plumbing. */
bool stack_is_plumbing(const char *sym);

/* ip as "func+0x1f", "func+0x1f [module]", or "0x..." when ks has no symbol for it. */
void stack_symbol(const struct ksyms *ks, uint64_t ip, char *buf, size_t size);

/*
 * Symbolizes s's raw frames (frames[i].ip, s->nr of them) in place: the
 * plumbing frames at the top go, the others get their symbol.
 */
void stack_symbolize(const struct ksyms *ks, struct sb_stack *s);
