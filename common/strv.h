/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * String vectors: a NULL-terminated array of malloc'ed strings, the shape of
 * an argv. The empty vector is NULL or { NULL }; every function here takes
 * either. libc only (common_dep).
 *
 * Two ways in: strv_push() appends a copy, strv_consume() takes the string
 * itself (and frees it on failure, so `strv_consume(&v, strdup(x))` needs no
 * separate check). Both return 0 or -ENOMEM and leave the vector as it was
 * on failure.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

/* Frees the strings and the array; NULL is fine. Returns NULL. */
char **strv_free(char **v);
static inline void strv_freep(char ***v)
{
	strv_free(*v);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)

/* Strings before the terminating NULL; 0 for NULL. */
size_t strv_length(char *const *v);

/* Appends a copy of s. */
int strv_push(char ***v, const char *s);
/* Appends s itself: the vector owns it after a success, s is freed after a failure. NULL is -ENOMEM. */
int strv_consume(char ***v, char *s);
/* Appends a formatted string. */
_printf_(2, 3) int strv_pushf(char ***v, const char *fmt, ...);

/* A deep copy (NULL on ENOMEM); NULL gives an empty vector. */
char **strv_copy(char *const *v);

/* Sorts by strcmp(), in place. */
void strv_sort(char **v);

/* Whether s is one of v's strings. */
bool strv_contains(char *const *v, const char *s);
