// SPDX-License-Identifier: GPL-2.0-or-later
/* kallsyms parsing, lookup and the hidden-addresses error, on crafted files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kallsyms.h"

static char path[] = "/tmp/test-kallsyms.XXXXXX";

static void write_file(const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	CHECK(fputs(text, f) >= 0);
	CHECK(fclose(f) == 0);
}

struct each {
	size_t n[4];
	const struct ksym *last[4];
};

static void on_each(void *userdata, size_t name, const struct ksym *sym)
{
	struct each *e = userdata;

	CHECK(name < 4);
	CHECK(!e->last[name] || e->last[name]->addr < sym->addr); /* in address order */
	e->n[name]++;
	e->last[name] = sym;
}

static void cleanup(void)
{
	unlink(path);
}

int main(void)
{
	struct ksyms ks = { 0 };
	struct sb_error err = { 0 };
	const struct ksym *s, *found[4];
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	atexit(cleanup);

	/* unsorted, a data symbol, a module symbol, a static duplicate, a malformed line */
	write_file("ffffffff81000200 T second\n"
		   "ffffffff81000100 t first\n"
		   "ffffffff82000000 D some_data\n"
		   "ffffffff81000300 t dup\n"
		   "ffffffff81000400 t dup\n"
		   "garbage line\n"
		   "ffffffffc0000000 t mod_func\t[kvm]\n"
		   "ffffffffc0000100 T mod_end\t[kvm]\n");
	CHECK(ksyms_load(&ks, path, &err) == 0);
	CHECK_MSG(ks.n == 6, "n=%zu", ks.n);

	s = ksyms_lookup(&ks, 0xffffffff81000100);
	CHECK(s && !strcmp(s->name, "first") && s->end == 0xffffffff81000200);
	s = ksyms_lookup(&ks, 0xffffffff810001ff);
	CHECK(s && !strcmp(s->name, "first"));
	s = ksyms_lookup(&ks, 0xffffffff81000250);
	CHECK(s && !strcmp(s->name, "second"));
	CHECK(ksyms_lookup(&ks, 0xffffffff81000000) == NULL); /* before the first symbol */
	s = ksyms_lookup(&ks, 0xffffffffc0000010);
	CHECK(s && !strcmp(s->name, "mod_func [kvm]"));

	CHECK(ksyms_find(&ks, "dup", found, 4) == 2);
	CHECK(found[0]->addr != found[1]->addr);
	CHECK(ksyms_find(&ks, "mod_func", found, 4) == 1 && found[0]->end == 0xffffffffc0000100);
	CHECK(ksyms_find(&ks, "some_data", found, 4) == 0); /* not text */
	CHECK(ksyms_find(&ks, "firs", found, 4) == 0);       /* whole names only */

	/* many names in one pass: what ksyms_find() finds for each */
	const char *names[4] = { "dup", "mod_func", "some_data", "firs" };
	struct each e = { 0 };
	CHECK(ksyms_find_each(&ks, names, 4, on_each, &e) == 0);
	CHECK(e.n[0] == 2 && e.n[1] == 1 && e.n[2] == 0 && e.n[3] == 0);
	CHECK(e.last[1]->end == 0xffffffffc0000100 && !strcmp(e.last[1]->name, "mod_func [kvm]"));
	ksyms_free(&ks);

	/* a last line without its newline counts; a line of 512 bytes or more does not; uppercase hex */
	char big[700];
	memset(big, 'x', sizeof(big));
	memcpy(big, "ffffffff81000500 t ", 19);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	char text[1024];
	snprintf(text, sizeof(text), "%sFFFFFFFF81000100 t upper\nffffffff81000200 T last", big);
	write_file(text);
	CHECK(ksyms_load(&ks, path, &err) == 0);
	CHECK_MSG(ks.n == 2, "n=%zu", ks.n);
	CHECK(ksyms_find(&ks, "upper", found, 4) == 1 && found[0]->addr == 0xffffffff81000100 &&
	      found[0]->end == 0xffffffff81000200);
	CHECK(ksyms_find(&ks, "last", found, 4) == 1);
	ksyms_free(&ks);

	/* an address of more than 64 bits is not one */
	write_file("1ffffffff81000100 t toolong\nffffffff81000100 t fine\n");
	CHECK(ksyms_load(&ks, path, &err) == 0 && ks.n == 1 && !strcmp(ks.syms[0].name, "fine"));
	ksyms_free(&ks);

	/* kptr_restrict: every address 0 -> an error that says what to do */
	write_file("0000000000000000 T a\n0000000000000000 t b\n");
	CHECK(ksyms_load(&ks, path, &err) == -EPERM);
	CHECK_MSG(strstr(err.msg, "kptr_restrict"), "%s", err.msg);

	/* no text symbols at all */
	write_file("ffffffff82000000 D only_data\n");
	CHECK(ksyms_load(&ks, path, &err) == -ENOENT);
	CHECK(strstr(err.msg, path));

	/* a missing file names the path */
	CHECK(ksyms_load(&ks, "/nonexistent/kallsyms", &err) == -ENOENT);
	CHECK(strstr(err.msg, "/nonexistent/kallsyms"));

	/* the real one, when readable */
	if (ksyms_load(&ks, NULL, &err) == 0) {
		CHECK(ksyms_find(&ks, "schedule", found, 4) >= 1);
		s = ksyms_lookup(&ks, found[0]->addr + 1);
		CHECK(s && !strcmp(s->name, "schedule"));
		/* one pass finds what one search per name finds */
		const char *real[3] = { "schedule", "do_madvise", "no_such_function_here" };
		struct each r = { 0 };
		CHECK(ksyms_find_each(&ks, real, 3, on_each, &r) == 0);
		for (int i = 0; i < 3; i++)
			CHECK_MSG(r.n[i] == ksyms_find(&ks, real[i], found, 4), "%s", real[i]);
		ksyms_free(&ks);
	}
	printf("ok\n");
	return 0;
}
