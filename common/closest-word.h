/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/*
 * The word of words that typed is a slip of: at most 2 edits away
 * (insertions, deletions, substitutions, swaps of neighbours) and close for
 * its length; NULL when none is.
 */
const char *closest_word(const char *typed, const char *const *words, size_t n);
