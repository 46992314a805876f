// SPDX-License-Identifier: GPL-2.0-or-later
/* One YAML flow node of a LAVA log record as json-c (yaml-flow.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "json-util.h"
#include "strbuf.h"
#include "yaml-flow.h"

struct cursor {
	const char *start, *p, *end;
	struct sb_error *err;
};

static int fail(struct cursor *c, const char *what)
{
	return sb_error_set(c->err, -EBADMSG, "column %zu: %s", (size_t)(c->p - c->start) + 1, what);
}

static void skip_spaces(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

/* Appends code point cp as UTF-8; false for a surrogate or one past U+10FFFF. */
static bool append_utf8(struct strbuf *b, uint32_t cp)
{
	char u[4];
	size_t n;

	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return false;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	strbuf_append_mem(b, u, n);
	return true;
}

static int hex_escape(struct cursor *c, struct strbuf *b, int digits)
{
	uint32_t cp = 0;

	if (c->end - c->p < digits)
		return fail(c, "the string ends inside an escape");
	for (int i = 0; i < digits; i++) {
		char h = *c->p++;
		int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
						 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
		if (v < 0)
			return fail(c, "a hexadecimal escape with a non-hex digit");
		cp = cp << 4 | (uint32_t)v;
	}
	if (!append_utf8(b, cp))
		return fail(c, "an escape of a surrogate or past U+10FFFF");
	return 0;
}

static int double_quoted(struct cursor *c, struct strbuf *b)
{
	static const char simple[] = "0\0a\ab\bt\tn\nv\vf\fr\re\x1b \x20\"\"//\\\\";

	c->p++; /* the opening quote */
	while (c->p < c->end && *c->p != '"') {
		if (*c->p != '\\') {
			strbuf_append_mem(b, c->p++, 1);
			continue;
		}
		if (++c->p >= c->end)
			return fail(c, "the string ends inside an escape");
		char e = *c->p++;
		const char *s = NULL;
		for (size_t i = 0; i + 1 < sizeof(simple); i += 2)
			if (simple[i] == e) {
				s = &simple[i + 1];
				break;
			}
		int r = 0;
		if (s)
			strbuf_append_mem(b, s, 1);
		else if (e == '\t')
			strbuf_append_mem(b, "\t", 1);
		else if (e == 'N')
			append_utf8(b, 0x85);
		else if (e == '_')
			append_utf8(b, 0xa0);
		else if (e == 'L')
			append_utf8(b, 0x2028);
		else if (e == 'P')
			append_utf8(b, 0x2029);
		else if (e == 'x')
			r = hex_escape(c, b, 2);
		else if (e == 'u')
			r = hex_escape(c, b, 4);
		else if (e == 'U')
			r = hex_escape(c, b, 8);
		else
			return fail(c, "an unknown escape in a double-quoted string");
		if (r < 0)
			return r;
	}
	if (c->p >= c->end)
		return fail(c, "a double-quoted string without its closing quote (a record cut off?)");
	c->p++;
	return 0;
}

static int single_quoted(struct cursor *c, struct strbuf *b)
{
	c->p++;
	for (;;) {
		if (c->p >= c->end)
			return fail(c, "a single-quoted string without its closing quote (a record cut off?)");
		if (*c->p == '\'') {
			if (c->p + 1 < c->end && c->p[1] == '\'') {
				strbuf_append_mem(b, "'", 1);
				c->p += 2;
				continue;
			}
			c->p++;
			return 0;
		}
		strbuf_append_mem(b, c->p++, 1);
	}
}

/* A plain scalar in flow context: up to ",[]{}", ": " or ":" at the end, trailing spaces dropped. */
static int plain(struct cursor *c, struct strbuf *b)
{
	const char *s = c->p, *last = c->p;

	if (c->p < c->end && strchr("&*|>%@`#", *c->p))
		return fail(c, "anchors, aliases, block scalars and directives are not part of a LAVA log record");
	while (c->p < c->end && !strchr(",[]{}", *c->p)) {
		if (*c->p == ':' && (c->p + 1 == c->end || strchr(" ,[]{}", c->p[1])))
			break;
		if (*c->p == '#' && c->p > s && c->p[-1] == ' ')
			break; /* a comment */
		c->p++;
		if (c->p[-1] != ' ' && c->p[-1] != '\t')
			last = c->p;
	}
	if (last == s)
		return fail(c, "a value is missing");
	strbuf_append_mem(b, s, (size_t)(last - s));
	return 0;
}

static int node(struct cursor *c, int depth, struct json_object **ret);

static int scalar(struct cursor *c, struct json_object **ret)
{
	_cleanup_strbuf_ struct strbuf b = {};
	int r;

	strbuf_append(&b, ""); /* "" for an empty quoted string */
	if (*c->p == '"')
		r = double_quoted(c, &b);
	else if (*c->p == '\'')
		r = single_quoted(c, &b);
	else
		r = plain(c, &b);
	if (r < 0)
		return r;
	if (b.oom)
		return sb_error_set(c->err, -ENOMEM, "out of memory reading a log record");
	*ret = json_object_new_string_len(b.s, (int)b.len);
	return *ret ? 0 : sb_error_set(c->err, -ENOMEM, "out of memory reading a log record");
}

/* { key: value, ... } or [ value, ... ]; the cursor is on the opening bracket. */
static int collection(struct cursor *c, int depth, struct json_object **ret)
{
	bool mapping = *c->p == '{';
	char close = mapping ? '}' : ']';
	_cleanup_json_ struct json_object *o = mapping ? json_object_new_object() : json_object_new_array();

	if (!o)
		return sb_error_set(c->err, -ENOMEM, "out of memory reading a log record");
	c->p++;
	for (;;) {
		_cleanup_json_ struct json_object *key = NULL, *value = NULL;
		int r;

		skip_spaces(c);
		if (c->p >= c->end)
			return fail(c, mapping ? "a mapping without its closing '}' (a record cut off?)"
					       : "a sequence without its closing ']' (a record cut off?)");
		if (*c->p == close) {
			c->p++;
			*ret = TAKE_PTR(o);
			return 0;
		}
		r = node(c, depth + 1, mapping ? &key : &value);
		if (r < 0)
			return r;
		skip_spaces(c);
		if (mapping) {
			if (!json_object_is_type(key, json_type_string))
				return fail(c, "a mapping key that is not a scalar");
			if (c->p >= c->end || *c->p != ':')
				return fail(c, "a mapping key without ':'");
			c->p++;
			skip_spaces(c);
			if (c->p < c->end && (*c->p == ',' || *c->p == '}'))
				value = json_object_new_string(""); /* "key:" with no value: an empty scalar */
			else if ((r = node(c, depth + 1, &value)) < 0)
				return r;
			if (!value || json_object_object_add(o, json_object_get_string(key), TAKE_PTR(value)) < 0)
				return sb_error_set(c->err, -ENOMEM, "out of memory reading a log record");
		} else if (json_object_array_add(o, value) < 0) {
			return sb_error_set(c->err, -ENOMEM, "out of memory reading a log record");
		} else {
			value = NULL; /* the array has it */
		}
		skip_spaces(c);
		if (c->p < c->end && *c->p == ',')
			c->p++;
		else if (c->p < c->end && *c->p != close)
			return fail(c, "',' or the closing bracket expected");
	}
}

static int node(struct cursor *c, int depth, struct json_object **ret)
{
	if (depth > YAML_FLOW_MAX_DEPTH)
		return fail(c, "nested deeper than a LAVA log record is");
	skip_spaces(c);
	if (c->p < c->end && *c->p == '!') { /* a tag: !, !!str, !local ... dropped */
		while (c->p < c->end && *c->p != ' ')
			c->p++;
		skip_spaces(c);
	}
	if (c->p >= c->end)
		return fail(c, "a value is missing");
	if (*c->p == '{' || *c->p == '[')
		return collection(c, depth, ret);
	return scalar(c, ret);
}

int yaml_flow_parse(const char *text, size_t len, struct json_object **ret, struct sb_error *err)
{
	struct cursor c = { .start = text, .p = text, .end = text + len, .err = err };
	struct json_object *o = NULL;
	int r = node(&c, 0, &o);

	if (r < 0)
		return r;
	skip_spaces(&c);
	if (c.p != c.end) {
		json_object_put(o);
		return fail(&c, "text after the record");
	}
	*ret = o;
	return 0;
}
