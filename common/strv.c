// SPDX-License-Identifier: GPL-2.0-or-later
#include "strv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char **strv_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
	return NULL;
}

size_t strv_length(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

int strv_consume(char ***v, char *s)
{
	size_t n = strv_length(*v);
	char **nv;

	if (!s)
		return -ENOMEM;
	nv = realloc(*v, (n + 2) * sizeof(*nv));
	if (!nv) {
		free(s);
		return -ENOMEM;
	}
	nv[n] = s;
	nv[n + 1] = NULL;
	*v = nv;
	return 0;
}

int strv_push(char ***v, const char *s)
{
	return strv_consume(v, strdup(s));
}

int strv_pushf(char ***v, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	return strv_consume(v, s);
}

char **strv_copy(char *const *v)
{
	size_t n = strv_length(v);
	char **c = calloc(n + 1, sizeof(*c));

	for (size_t i = 0; c && i < n; i++)
		if (!(c[i] = strdup(v[i])))
			return strv_free(c);
	return c;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strv_sort(char **v)
{
	size_t n = strv_length(v);

	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_str);
}

bool strv_contains(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (!strcmp(*v, s))
			return true;
	return false;
}
