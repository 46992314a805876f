// SPDX-License-Identifier: GPL-2.0-or-later
#include "check.h"

#include <string.h>

#include "closest-word.h"
#include "macro.h"

int main(void)
{
	static const char *const words[] = { "show", "status", "latency_p99_ns", "latency_p999_ns", "pf_per_s" };
	const size_t n = ARRAY_SIZE(words);

	/* a letter missing, extra, wrong, two swapped */
	CHECK(!strcmp(closest_word("shw", words, n), "show"));
	CHECK(!strcmp(closest_word("shoow", words, n), "show"));
	CHECK(!strcmp(closest_word("stauts", words, n), "status"));
	CHECK(!strcmp(closest_word("latency_p98_ns", words, n), "latency_p99_ns"));
	CHECK(!strcmp(closest_word("pf_per_z", words, n), "pf_per_s"));
	/* a different word, or too many edits for its length, is no slip */
	CHECK(closest_word("frobnicate", words, n) == NULL);
	CHECK(closest_word("ab", words, n) == NULL);
	CHECK(closest_word("x", words, 0) == NULL);
	return 0;
}
