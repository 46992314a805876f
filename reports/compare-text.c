// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare-private.h"

void sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	if (b->oom)
		return;
	va_copy(aq, ap);
	n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, aq);
	va_end(aq);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if (!b->s || b->len + (size_t)n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + (size_t)n + 1)
			cap *= 2;
		char *s = realloc(b->s, cap);
		if (!s) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
		vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	}
	b->len += (size_t)n;
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbuf_vprintf(b, fmt, ap);
	va_end(ap);
}

void sbuf_puts(struct sbuf *b, const char *s)
{
	sbuf_printf(b, "%s", s);
}

void sbuf_putc_n(struct sbuf *b, char c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sbuf_printf(b, "%c", c);
}

char *sbuf_steal(struct sbuf *b)
{
	if (b->oom) {
		free(b->s);
		*b = (struct sbuf){ 0 };
		return NULL;
	}
	if (!b->s)
		return strdup("");
	char *s = b->s;
	*b = (struct sbuf){ 0 };
	return s;
}

int strv_push(char ***v, size_t *n, const char *s)
{
	char *copy = strdup(s);
	char **nv;

	if (!copy)
		return -ENOMEM;
	nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv) {
		free(copy);
		return -ENOMEM;
	}
	nv[(*n)++] = copy;
	*v = nv;
	return 0;
}

int strv_pushf(char ***v, size_t *n, const char *fmt, ...)
{
	_cleanup_free_ char *s = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0) {
		s = NULL;
		return -ENOMEM;
	}
	return strv_push(v, n, s);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strv_sort(char **v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_str);
}

void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

struct json_object *json_get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	if (!json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

const char *json_get_string(struct json_object *o, const char *key)
{
	struct json_object *v = json_get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

bool json_is_number(struct json_object *o)
{
	return o && (json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double));
}

void text_sanitize(const char *in, char *out, size_t size)
{
	size_t i = 0, max = size - 1;
	const char *p = in;

	for (; *p && i < max; p++)
		out[i++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
	if (*p && max >= 3)
		memcpy(out + max - 3, "...", 3), i = max;
	out[i] = '\0';
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

void metric_display_name(const char *metric, char *buf, size_t size)
{
	char base[128], stem[128];
	const char *dot = strchr(metric, '.');
	size_t len = dot ? (size_t)(dot - metric) : strlen(metric);
	const char *unit = "";

	if (len >= sizeof(base))
		len = sizeof(base) - 1;
	memcpy(base, metric, len);
	base[len] = '\0';

	if (ends_with(base, len, "_per_s")) {
		base[len - 6] = '\0';
		unit = "/s";
	} else if (ends_with(base, len, "_ns")) {
		base[len - 3] = '\0';
		unit = " (ns)";
	} else if (ends_with(base, len, "_s")) {
		base[len - 2] = '\0';
		unit = " (s)";
	}

	/* "latency_p999" reads as p99.9, the seed's name for it */
	size_t j = 0;
	for (const char *p = base; *p && j + 2 < sizeof(stem); p++) {
		if (!strncmp(p, "p999", 4) && (p[4] == '\0' || p[4] == '_')) {
			if (j + 6 >= sizeof(stem))
				break;
			memcpy(stem + j, "p99.9", 5);
			j += 5;
			p += 3;
			continue;
		}
		stem[j++] = *p == '_' ? ' ' : *p;
	}
	stem[j] = '\0';

	char raw[256];
	if (dot)
		snprintf(raw, sizeof(raw), "%s%s (%s)", stem, unit, dot + 1);
	else
		snprintf(raw, sizeof(raw), "%s%s", stem, unit);
	text_sanitize(raw, buf, size);
}
