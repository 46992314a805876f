// SPDX-License-Identifier: GPL-2.0-or-later
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

int main(void)
{
	/* nothing appended: "" */
	{
		struct strbuf b = {};
		_cleanup_free_ char *s = strbuf_steal(&b);
		CHECK(s && !strcmp(s, ""));
	}

	/* appends, and growth past the first allocation */
	{
		_cleanup_strbuf_ struct strbuf b = {};
		_cleanup_free_ char *s = NULL;

		strbuf_append(&b, "a");
		strbuf_appendf(&b, "-%d-%s", 42, "x");
		strbuf_append_mem(&b, "yz!", 2);
		strbuf_append_repeat(&b, '.', 3);
		CHECK(b.len == 11 && !strcmp(b.s, "a-42-xyz..."));
		for (int i = 0; i < 1000; i++)
			strbuf_appendf(&b, "%04d", i);
		CHECK(b.len == 11 + 4000);
		CHECK(!memcmp(b.s + 11, "0000000100020003", 16));
		CHECK(!strcmp(b.s + b.len - 4, "0999"));
		strbuf_append_repeat(&b, '-', 600);
		CHECK(b.len == 4611 && b.s[4610] == '-' && b.s[4611] == '\0');
		s = strbuf_steal(&b);
		CHECK(s && strlen(s) == 4611);
		CHECK(b.s == NULL && b.len == 0 && !b.oom);
	}

	/* an out-of-memory latches: appends do nothing, steal gives NULL */
	{
		struct strbuf b = {};

		strbuf_append(&b, "kept");
		strbuf_append_repeat(&b, 'x', SIZE_MAX - 2);
		CHECK(b.oom);
		strbuf_append(&b, "more");
		CHECK(b.len == 4);
		CHECK(strbuf_steal(&b) == NULL);
		CHECK(b.s == NULL && !b.oom);
	}

	strbuf_free(NULL);
	return 0;
}
