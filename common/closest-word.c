// SPDX-License-Identifier: GPL-2.0-or-later
/* The word a typed one is a slip of: "did you mean" for verbs, options and metric names. */
#include "closest-word.h"

#include <string.h>

/* The edit distance (insertions, deletions, substitutions, swaps of neighbours) of a and b, capped at 9. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[33][33];

	if (la > 32 || lb > 32)
		return 9;
	for (size_t i = 0; i <= la; i++)
		for (size_t j = 0; j <= lb; j++) {
			if (!i || !j) {
				d[i][j] = i + j;
				continue;
			}
			size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
			d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < d[i][j])
				d[i][j] = d[i - 2][j - 2] + 1;
		}
	return d[la][lb] < 9 ? d[la][lb] : 9;
}

const char *closest_word(const char *typed, const char *const *words, size_t n)
{
	const char *best = NULL;
	size_t best_d = 9, len = strlen(typed);

	for (size_t i = 0; i < n; i++) {
		size_t dist = edit_distance(typed, words[i]);
		if (dist < best_d) {
			best_d = dist;
			best = words[i];
		}
	}
	/* a slip of a key or two, not a different word: at most 2 edits, and fewer than a third of the word */
	return best && best_d <= 2 && best_d * 3 <= len + 1 ? best : NULL;
}
