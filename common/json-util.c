// SPDX-License-Identifier: GPL-2.0-or-later
#include "json-util.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>

int json_parse_text(const char *text, size_t len, int max_depth, unsigned flags, struct json_object **ret,
		    struct json_parse_info *info)
{
	struct json_parse_info dummy;
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error jerr;
	size_t end;

	if (!info)
		info = &dummy;
	*info = (struct json_parse_info){ .status = JSON_PARSE_OK, .reason = "" };
	if (len > INT_MAX)
		return -EMSGSIZE;
	tok = json_tokener_new_ex(max_depth);
	if (!tok)
		return -ENOMEM;
	/* strict: json-c itself refuses text after the value (JSON_PARSE_INVALID), whitespace aside */
	if (flags & JSON_PARSE_STRICT)
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8 |
						    (flags & JSON_PARSE_ALLOW_TRAILING ? JSON_TOKENER_ALLOW_TRAILING_CHARS : 0));
	o = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue && end == len) {
		/* the text ends here: that completes a bare number or literal, or leaves a value truncated */
		o = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
	}
	json_tokener_free(tok);

	if (jerr != json_tokener_success) {
		json_object_put(o);
		*info = (struct json_parse_info){
			.status = jerr == json_tokener_error_depth ? JSON_PARSE_TOO_DEEP
				  : jerr == json_tokener_error_parse_eof ? JSON_PARSE_TRUNCATED
								   : JSON_PARSE_INVALID,
			.reason = json_tokener_error_desc(jerr),
			.offset = end,
		};
		return -EBADMSG;
	}
	/* (o is NULL for the document "null": a value, not a failure) */
	for (; !(flags & JSON_PARSE_ALLOW_TRAILING) && end < len; end++)
		if (!strchr(" \t\r\n", text[end]) || text[end] == '\0') {
			json_object_put(o);
			*info = (struct json_parse_info){ .status = JSON_PARSE_TRAILING, .reason = "", .offset = end };
			return -EBADMSG;
		}
	*ret = o;
	return 0;
}

const char *json_type_phrase(struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
		return "a fractional number";
	case json_type_int:
		return "an integer";
	case json_type_string:
		return "a string";
	case json_type_array:
		return "an array";
	case json_type_object:
		return "an object";
	default:
		return "null";
	}
}

struct json_object *json_lookup(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	if (!json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

const char *json_lookup_string(struct json_object *o, const char *key)
{
	struct json_object *v = json_lookup(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

bool json_is_number(struct json_object *o)
{
	return o && (json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double));
}

struct json_object *json_array_find(struct json_object *a, const char *key, const char *value)
{
	size_t n = a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(a, i);
		const char *v = json_lookup_string(e, key);

		if (v && !strcmp(v, value))
			return e;
	}
	return NULL;
}

/* The member key with type t: 0, -ENOENT or -EINVAL (with err). */
static int get_typed(struct json_object *o, const char *key, enum json_type t, const char *want,
		     struct json_object **ret, struct sb_error *err)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
		return sb_error_set(err, -ENOENT, "missing \"%s\"", key);
	if (!json_object_is_type(v, t))
		return sb_error_set(err, -EINVAL, "\"%s\" is %s, not %s", key, json_type_phrase(v), want);
	*ret = v;
	return 0;
}

int json_get_string(struct json_object *o, const char *key, const char **ret, struct sb_error *err)
{
	struct json_object *v;
	int r = get_typed(o, key, json_type_string, "a string", &v, err);

	if (r < 0)
		return r;
	*ret = json_object_get_string(v);
	return 0;
}

int json_get_int64(struct json_object *o, const char *key, int64_t *ret, struct sb_error *err)
{
	struct json_object *v;
	int r = get_typed(o, key, json_type_int, "an integer", &v, err);

	if (r < 0)
		return r;
	/* json-c keeps integers above INT64_MAX as uint64 */
	if (json_object_get_int64(v) == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX)
		return sb_error_set(err, -ERANGE, "\"%s\" is larger than %" PRId64, key, INT64_MAX);
	*ret = json_object_get_int64(v);
	return 0;
}

int json_get_bool(struct json_object *o, const char *key, bool *ret, struct sb_error *err)
{
	struct json_object *v;
	int r = get_typed(o, key, json_type_boolean, "true or false", &v, err);

	if (r < 0)
		return r;
	*ret = json_object_get_boolean(v);
	return 0;
}

int json_get_object(struct json_object *o, const char *key, struct json_object **ret, struct sb_error *err)
{
	return get_typed(o, key, json_type_object, "an object", ret, err);
}

int json_get_array(struct json_object *o, const char *key, struct json_object **ret, struct sb_error *err)
{
	return get_typed(o, key, json_type_array, "an array", ret, err);
}
