/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel symbols from /proc/kallsyms: address -> function (stack
 * symbolization) and function -> address range (the classifier's stack
 * rules). A function's range ends where the next text symbol starts; the
 * file has no sizes.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct ksym {
	uint64_t addr;
	uint64_t end;      /* next text symbol's address (last one: addr + 1) */
	const char *name;  /* "name" or "name [module]" */
};

struct ksyms {
	struct ksym *syms; /* text symbols sorted by address */
	size_t n;
	char *names;       /* the text read, which the names point into */
};

/*
 * Load text symbols (types t, T, w, W) from path (NULL: /proc/kallsyms).
 * Fails with -EPERM and a message when every address reads as zero
 * (kernel.kptr_restrict hides them from this user).
 */
int ksyms_load(struct ksyms *ks, const char *path, struct sb_error *err);
void ksyms_free(struct ksyms *ks);

/* The symbol containing addr, or NULL. */
const struct ksym *ksyms_lookup(const struct ksyms *ks, uint64_t addr);

/*
 * Every symbol named exactly name (static functions may appear more than
 * once); stores up to max pointers in out and returns how many exist. A
 * search of every symbol per call: for many names, ksyms_find_each().
 */
size_t ksyms_find(const struct ksyms *ks, const char *name, const struct ksym **out, size_t max);

/*
 * One pass over the symbols for many names: fn(userdata, i, sym) for every
 * symbol named exactly names[i] (as ksyms_find() matches), in address
 * order. -ENOMEM, else 0.
 */
int ksyms_find_each(const struct ksyms *ks, const char *const *names, size_t n_names,
		    void (*fn)(void *userdata, size_t name, const struct ksym *sym), void *userdata);
