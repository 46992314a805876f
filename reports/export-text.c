// SPDX-License-Identifier: GPL-2.0-or-later
/* Text and numbers as the exports write them: UTF-8 without controls, CSV fields, shortest numbers. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export-private.h"
#include "json-util.h"
#include "xml-escape.h"

/* The length of the valid UTF-8 sequence at p (its code point in *cp), or 0. */
static size_t utf8_sequence(const unsigned char *p, uint32_t *cp)
{
	size_t n;
	uint32_t c, min;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, c = p[0] & 0x1f, min = 0x80;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, c = p[0] & 0x0f, min = 0x800;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, c = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0; /* overlong, past Unicode, or a surrogate */
	*cp = c;
	return n;
}

static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

/* Whether export_append_text() appends the byte c (< 0x80) as it is. */
static bool plain_ascii(unsigned char c, enum export_escape e)
{
	if (c < 0x20 || c == 0x7f)
		return false;
	if (e == EXPORT_ESCAPE_XML)
		return c != '&' && c != '<' && c != '>' && c != '"' && c != '\'';
	if (e == EXPORT_ESCAPE_LABEL)
		return c != '\\' && c != '"';
	return true;
}

/* How many bytes at p export_append_text() appends unchanged: whole UTF-8 sequences. */
static size_t unchanged_run(const unsigned char *p, enum export_escape e)
{
	const unsigned char *q = p;

	for (;;) {
		uint32_t cp;
		size_t n;

		if (*q && *q < 0x80) {
			if (!plain_ascii(*q, e))
				break;
			q++;
			continue;
		}
		n = *q ? utf8_sequence(q, &cp) : 0;
		if (n == 0 || is_control(cp))
			break;
		q += n;
	}
	return (size_t)(q - p);
}

bool export_text_unchanged(const char *s, enum export_escape e)
{
	return !s || !s[unchanged_run((const unsigned char *)s, e)];
}

static void append_escaped(struct strbuf *b, char c, enum export_escape e)
{
	if (e == EXPORT_ESCAPE_XML && xml_entity(c)) {
		strbuf_append(b, xml_entity(c));
		return;
	} else if (e == EXPORT_ESCAPE_LABEL && (c == '\\' || c == '"')) {
		strbuf_append_repeat(b, '\\', 1);
	}
	strbuf_append_mem(b, &c, 1);
}

void export_append_text(struct strbuf *b, const char *s, enum export_escape e)
{
	const unsigned char *p = (const unsigned char *)s;

	while (p && *p) {
		size_t run = unchanged_run(p, e), n;
		uint32_t cp;

		if (run) { /* most text: appended in one piece */
			strbuf_append_mem(b, (const char *)p, run);
			p += run;
			continue;
		}
		n = utf8_sequence(p, &cp);
		if (n == 0 || is_control(cp)) {
			strbuf_append_mem(b, "?", 1);
			p += n ? n : 1;
		} else { /* an ASCII byte to escape */
			append_escaped(b, (char)*p++, e);
		}
	}
}

void export_append_csv_field(struct strbuf *b, const char *s)
{
	size_t len = s ? strlen(s) : 0;
	bool quote = len && (strpbrk(s, ",\"") || s[0] == ' ' || s[len - 1] == ' ');

	if (!quote) {
		export_append_text(b, s, EXPORT_ESCAPE_NONE);
		return;
	}
	strbuf_append(b, "\"");
	for (const char *p = s; *p;) {
		const char *q = strchr(p, '"');
		size_t n = q ? (size_t)(q - p) : strlen(p);
		_cleanup_free_ char *part = strndup(p, n);

		if (!part) {
			b->oom = true;
			return;
		}
		export_append_text(b, part, EXPORT_ESCAPE_NONE);
		if (!q)
			break;
		strbuf_append(b, "\"\"");
		p = q + 1;
	}
	strbuf_append(b, "\"");
}

void export_append_csv_row(struct strbuf *b, const char *const *fields, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_append(b, ",");
		export_append_csv_field(b, fields[i]);
	}
	strbuf_append(b, "\r\n");
}

void export_format_number(double v, char buf[static EXPORT_NUMBER_MAX])
{
	if (!isfinite(v)) {
		buf[0] = '\0';
		return;
	}
	if (v == 0)
		v = 0; /* no "-0" */
	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(buf, EXPORT_NUMBER_MAX, "%.0f", v);
		return;
	}
	/*
	 * The shortest "%.*g" that reads back as v. A decimal of up to
	 * DBL_DIG (15) digits survives the trip through a double, so when the
	 * shortest has p <= 15 digits, "%.15g" rounds v back to those same
	 * digits and %g drops the trailing zeros: one try stands for
	 * precisions 1 to 15. %g picks the same style too, as v is no integer
	 * below 1e15 here. Only 16 and 17 remain. Subnormals carry fewer
	 * digits than DBL_DIG, so their search starts at 1.
	 */
	for (int prec = fabs(v) < DBL_MIN ? 1 : DBL_DIG; prec <= 17; prec++) {
		snprintf(buf, EXPORT_NUMBER_MAX, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

void export_format_scaled(double v, int pow10, char buf[static EXPORT_NUMBER_MAX])
{
	char e[40], digits[24];
	size_t nd = 0;
	int exp10, prec;

	if (pow10 == 0 || !isfinite(v) || v == 0) {
		export_format_number(v, buf);
		return;
	}
	/* v's shortest decimal, "d.ddde+XX": its digits are what the report holds, whatever the division makes of them */
	for (prec = 0; prec <= 16; prec++) {
		snprintf(e, sizeof(e), "%.*e", prec, v);
		if (strtod(e, NULL) == v)
			break;
	}
	const char *p = e + (e[0] == '-');
	for (; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9' && nd + 1 < sizeof(digits))
			digits[nd++] = *p;
	digits[nd] = '\0';
	exp10 = atoi(p + 1) - pow10;
	char *out = buf;
	size_t left = EXPORT_NUMBER_MAX;
	int n = snprintf(out, left, "%s", v < 0 ? "-" : "");
	out += n, left -= (size_t)n;
	if (exp10 >= -5 && exp10 < 15) {
		/* fixed: the point moved, "0.00001177144704", "11.77144704", "1500" */
		if (exp10 < 0) {
			snprintf(out, left, "0.%0*d%s", -exp10 - 1, 0, digits);
			if (-exp10 - 1 == 0) /* "%0*d" of width 0 still prints a 0 */
				snprintf(out, left, "0.%s", digits);
		} else if ((size_t)exp10 + 1 >= nd) {
			snprintf(out, left, "%s%0*d", digits, exp10 + 1 - (int)nd, 0);
			if (exp10 + 1 - (int)nd == 0)
				snprintf(out, left, "%s", digits);
		} else {
			snprintf(out, left, "%.*s.%s", exp10 + 1, digits, digits + exp10 + 1);
		}
	} else {
		snprintf(out, left, "%c%s%s" "e%c%02d", digits[0], nd > 1 ? "." : "", digits + 1, exp10 < 0 ? '-' : '+',
			 abs(exp10));
	}
}

int export_report_parts(struct json_object *report, const char **id, struct json_object **reps,
			struct sb_error *err)
{
	const char *i = json_lookup_string(report, "id");
	struct json_object *r = json_lookup(report, "repetitions");

	if (!json_object_is_type(report, json_type_object) || !i)
		return sb_error_set(err, -EINVAL, "not a run report: a JSON object with an \"id\" is expected");
	if (r && !json_object_is_type(r, json_type_array))
		return sb_error_set(err, -EINVAL, "run %s: \"repetitions\" is %s, not an array", i,
				    json_type_phrase(r));
	*id = i;
	*reps = r;
	return 0;
}

const char *export_metric_unit(struct json_object *report, const char *name)
{
	struct json_object *info = json_lookup(report, "metric_info");
	const char *unit = json_lookup_string(json_lookup(info, name), "unit");
	const char *dot = strchr(name, '.');

	if (!unit && dot) {
		char base[128];
		snprintf(base, sizeof(base), "%.*s", (int)(dot - name), name);
		unit = json_lookup_string(json_lookup(info, base), "unit");
	}
	return unit ? unit : "";
}
