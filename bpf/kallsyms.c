// SPDX-License-Identifier: GPL-2.0-or-later
#include "kallsyms.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "macro.h"

/* Bounds against a malformed or hostile file (tests pass their own). */
#define KSYMS_MAX 4000000
#define KSYMS_MAX_LINE 512
#define KSYMS_MAX_BYTES ((size_t)1 << 30)

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

/* Hex digits of an address, then one space; false for anything else (or more than 64 bits). */
static bool parse_addr(const char *p, const char *end, unsigned long long *addr, const char **rest)
{
	unsigned long long v = 0;
	const char *q = p;

	for (; q < end && *q != ' '; q++) {
		unsigned d;

		if (*q >= '0' && *q <= '9')
			d = (unsigned)(*q - '0');
		else if ((*q | 0x20) >= 'a' && (*q | 0x20) <= 'f')
			d = (unsigned)((*q | 0x20) - 'a' + 10);
		else
			return false;
		if (q - p >= 16)
			return false;
		v = v << 4 | d;
	}
	if (q == p || q == end)
		return false;
	*addr = v;
	*rest = q;
	return true;
}

/*
 * One line of kallsyms ("ffffffff81000100 T name\t[module]", without its
 * newline), in place: true for a text symbol (t, T, w, W), with its address
 * and its name as "name [module]", NUL-terminated where the newline was.
 */
static bool parse_line(char *line, char *end, unsigned long long *addr, char **name)
{
	const char *sp;
	char type, *tab;

	if (!parse_addr(line, end, addr, &sp) || end - sp < 4 || sp[2] != ' ')
		return false;
	type = sp[1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return false;
	*name = (char *)sp + 3;
	*end = '\0';
	/* "name\t[module]" -> "name [module]" */
	tab = memchr(*name, '\t', (size_t)(end - *name));
	if (tab)
		*tab = ' ';
	return **name != '\0' && **name != ' ';
}

static int append(struct ksyms *k, size_t *cap, unsigned long long addr, const char *name, const char *path,
		  struct sb_error *err)
{
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
	k->syms[k->n].addr = addr;
	k->syms[k->n].name = name;
	k->n++;
	return 0;
}

/* Sorted by address (no sort when the file already is), each symbol's end. */
static void ksyms_index(struct ksyms *k)
{
	bool sorted = true;

	for (size_t i = 1; i < k->n && sorted; i++)
		sorted = k->syms[i - 1].addr <= k->syms[i].addr;
	if (!sorted)
		qsort(k->syms, k->n, sizeof(*k->syms), cmp_addr);
	for (size_t i = 0; i < k->n; i++) {
		size_t j = i + 1;

		while (j < k->n && k->syms[j].addr == k->syms[i].addr)
			j++;
		k->syms[i].end = j < k->n ? k->syms[j].addr : k->syms[i].addr + 1;
	}
}

/*
 * The file is read whole (one buffer, the names stay in it) and parsed in
 * place: a line at a time through stdio, with a copy of each name and a
 * sort, cost four times the kernel's own time to print the file.
 */
int ksyms_load(struct ksyms *ks, const char *path, struct sb_error *err)
{
	struct ksyms k = { 0 };
	size_t cap = 0, nonzero = 0, len = 0;
	char *text = NULL, *p, *end;
	int r;

	if (!path)
		path = "/proc/kallsyms";
	r = read_full_file(path, KSYMS_MAX_BYTES, &text, &len, err);
	if (r < 0)
		return r;
	end = text + len;
	for (p = text; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *name;
		char *line_end = nl ? nl : end;
		unsigned long long addr;
		bool ok = line_end - p < KSYMS_MAX_LINE && parse_line(p, line_end, &addr, &name);

		p = nl ? nl + 1 : end;
		if (!ok)
			continue; /* not a text symbol, malformed or overlong */
		r = append(&k, &cap, addr, name, path, err);
		if (r < 0)
			goto fail;
		if (addr)
			nonzero++;
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
	k.names = text;
	*ks = k;
	return 0;

fail:
	free(k.syms);
	free(text);
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

/* FNV-1a of a symbol's name up to its end or its " [module]" */
static uint32_t name_hash(const char *s, size_t *len)
{
	uint32_t h = 2166136261u;
	size_t i = 0;

	for (; s[i] && s[i] != ' '; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	*len = i;
	return h;
}

int ksyms_find_each(const struct ksyms *ks, const char *const *names, size_t n_names,
		    void (*fn)(void *userdata, size_t name, const struct ksym *sym), void *userdata)
{
	size_t size = 16, *slot;

	while (size < 2 * n_names)
		size *= 2;
	slot = malloc(size * sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	/* open addressing; SIZE_MAX: empty */
	for (size_t i = 0; i < size; i++)
		slot[i] = SIZE_MAX;
	for (size_t i = 0; i < n_names; i++) {
		size_t len, j = name_hash(names[i], &len) & (size - 1);

		while (slot[j] != SIZE_MAX)
			j = (j + 1) & (size - 1);
		slot[j] = i;
	}
	for (size_t i = 0; i < ks->n; i++) {
		size_t len, j = name_hash(ks->syms[i].name, &len) & (size - 1);

		for (; slot[j] != SIZE_MAX; j = (j + 1) & (size - 1)) {
			const char *want = names[slot[j]];

			if (!strncmp(want, ks->syms[i].name, len) && want[len] == '\0')
				fn(userdata, slot[j], &ks->syms[i]);
		}
	}
	free(slot);
	return 0;
}
