// SPDX-License-Identifier: GPL-2.0-or-later
#include "kallsyms.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

/* Bounds against a malformed or hostile file (tests pass their own). */
#define KSYMS_MAX 4000000
#define KSYMS_MAX_LINE 512

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

static int pool_add(struct ksyms *ks, size_t *cap, const char *s, size_t len, size_t *off)
{
	if (ks->names_len + len + 1 > *cap) {
		size_t ncap = *cap ? *cap * 2 : 1 << 20;
		char *p;

		while (ncap < ks->names_len + len + 1)
			ncap *= 2;
		p = realloc(ks->names, ncap);
		if (!p)
			return -ENOMEM;
		ks->names = p;
		*cap = ncap;
	}
	memcpy(ks->names + ks->names_len, s, len);
	ks->names[ks->names_len + len] = '\0';
	*off = ks->names_len;
	ks->names_len += len + 1;
	return 0;
}

/*
 * One line of kallsyms ("ffffffff81000100 T name\t[module]", the newline cut
 * off): true for a text symbol (t, T, w, W), with its address and its name
 * as "name [module]" (in line).
 */
static bool parse_line(char *line, unsigned long long *addr, char **name)
{
	char *sp1, *sp2, *end;
	char type;

	errno = 0;
	*addr = strtoull(line, &end, 16);
	if (errno || end == line || *end != ' ')
		return false;
	sp1 = end;
	type = sp1[1];
	if (!type || sp1[2] != ' ')
		return false;
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return false;
	*name = sp1 + 3;
	/* "name\t[module]" -> "name [module]" */
	sp2 = strchr(*name, '\t');
	if (sp2)
		*sp2 = ' ';
	return **name != '\0';
}

/* Appends a symbol; its name is an offset into the pool until ksyms_index(). */
static int append(struct ksyms *k, size_t *cap, size_t *pool_cap, unsigned long long addr, const char *name,
		  const char *path, struct sb_error *err)
{
	size_t off;
	int r;

	if (k->n >= KSYMS_MAX)
		return sb_error_set(err, -E2BIG, "%s: more than %d text symbols; is it a kallsyms file?", path,
				    KSYMS_MAX);
	if (k->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 65536;
		struct ksym *p = realloc(k->syms, ncap * sizeof(*p));

		if (!p)
			return sb_error_set(err, -ENOMEM, "%s: out of memory", path);
		k->syms = p;
		*cap = ncap;
	}
	r = pool_add(k, pool_cap, name, strlen(name), &off);
	if (r < 0)
		return sb_error_set(err, r, "%s: out of memory", path);
	k->syms[k->n].addr = addr;
	k->syms[k->n].name = (const char *)(uintptr_t)off; /* fixed up in ksyms_index() */
	k->n++;
	return 0;
}

/* The names from pool offsets to pointers, sorted by address, each symbol's end. */
static void ksyms_index(struct ksyms *k)
{
	for (size_t i = 0; i < k->n; i++)
		k->syms[i].name = k->names + (uintptr_t)k->syms[i].name;
	qsort(k->syms, k->n, sizeof(*k->syms), cmp_addr);
	for (size_t i = 0; i < k->n; i++) {
		size_t j = i + 1;

		while (j < k->n && k->syms[j].addr == k->syms[i].addr)
			j++;
		k->syms[i].end = j < k->n ? k->syms[j].addr : k->syms[i].addr + 1;
	}
}

int ksyms_load(struct ksyms *ks, const char *path, struct sb_error *err)
{
	_cleanup_fclose_ FILE *f = NULL;
	char line[KSYMS_MAX_LINE];
	size_t cap = 0, pool_cap = 0, nonzero = 0;
	struct ksyms k = { 0 };
	int r;

	if (!path)
		path = "/proc/kallsyms";
	f = fopen(path, "re");
	if (!f)
		return sb_error_set(err, -errno, "cannot open %s: %s", path, strerror(errno));

	while (fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n'), *name;
		unsigned long long addr;

		if (!nl) {
			/* an overlong line: skip the rest of it */
			int ch;

			while ((ch = fgetc(f)) != EOF && ch != '\n')
				;
			continue;
		}
		*nl = '\0';
		if (!parse_line(line, &addr, &name))
			continue;
		r = append(&k, &cap, &pool_cap, addr, name, path, err);
		if (r < 0)
			goto fail;
		if (addr)
			nonzero++;
	}
	if (ferror(f)) {
		r = sb_error_set(err, -EIO, "cannot read %s", path);
		goto fail;
	}
	if (k.n == 0) {
		r = sb_error_set(err, -ENOENT, "%s lists no kernel text symbols", path);
		goto fail;
	}
	if (nonzero == 0) {
		r = sb_error_set(err, -EPERM,
				 "%s shows every address as 0 (kernel.kptr_restrict hides them): run as root, or "
				 "set sysctl kernel.kptr_restrict=0",
				 path);
		goto fail;
	}
	ksyms_index(&k);
	*ks = k;
	return 0;

fail:
	free(k.syms);
	free(k.names);
	return r;
}

void ksyms_free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->names);
	*ks = (struct ksyms){ 0 };
}

const struct ksym *ksyms_lookup(const struct ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->n;

	/* the last symbol whose address is <= addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (addr >= ks->syms[lo - 1].end)
		return NULL;
	return &ks->syms[lo - 1];
}

size_t ksyms_find(const struct ksyms *ks, const char *name, const struct ksym **out, size_t max)
{
	size_t found = 0, len = strlen(name);

	for (size_t i = 0; i < ks->n; i++) {
		const char *s = ks->syms[i].name;

		/* "name" or "name [module]" */
		if (strncmp(s, name, len) || (s[len] != '\0' && s[len] != ' '))
			continue;
		if (found < max)
			out[found] = &ks->syms[i];
		found++;
	}
	return found;
}
