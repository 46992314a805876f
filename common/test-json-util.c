// SPDX-License-Identifier: GPL-2.0-or-later
#include "check.h"

#include <errno.h>
#include <string.h>

#include "json-util.h"

static int parse(const char *text, int depth, unsigned flags, struct json_object **o, struct json_parse_info *info)
{
	return json_parse_text(text, strlen(text), depth, flags, o, info);
}

int main(void)
{
	struct json_parse_info info;
	struct sb_error err = {};

	/* one value, whitespace around it */
	{
		_cleanup_json_ struct json_object *o = NULL;
		CHECK(parse(" {\"a\": [1, 2]}\r\n\t ", 3, 0, &o, &info) == 0);
		CHECK(info.status == JSON_PARSE_OK && json_object_is_type(o, json_type_object));
	}
	/* a bare number or literal is a whole document; "null" gives NULL */
	{
		struct json_object *o = NULL;
		CHECK(parse("12", 3, 0, &o, &info) == 0 && json_object_get_int(o) == 12);
		json_object_put(o);
		CHECK(parse(" true ", 3, JSON_PARSE_STRICT, &o, &info) == 0 && json_object_get_boolean(o));
		json_object_put(o);
		o = (struct json_object *)&info;
		CHECK(parse("null", 3, 0, &o, &info) == 0 && o == NULL);
		CHECK(parse("tru", 3, 0, &o, &info) == -EBADMSG && info.status == JSON_PARSE_TRUNCATED);
		CHECK(!strcmp(info.reason, "unexpected end of data"));
	}
	/* depth: json-c's, the top level counts */
	{
		struct json_object *o = NULL;
		CHECK(parse("{\"a\": [1, 2]}", 2, 0, &o, &info) == -EBADMSG);
		CHECK(info.status == JSON_PARSE_TOO_DEEP && o == NULL);
	}
	/* truncated, empty, invalid, trailing */
	{
		struct json_object *o = NULL;
		CHECK(parse("{\"a\": ", 8, 0, &o, &info) == -EBADMSG && info.status == JSON_PARSE_TRUNCATED);
		CHECK(parse("", 8, 0, &o, &info) == -EBADMSG && info.status == JSON_PARSE_TRUNCATED);
		CHECK(parse("{\"a\" 1}", 8, 0, &o, &info) == -EBADMSG && info.status == JSON_PARSE_INVALID);
		CHECK(info.offset == 5 && *info.reason);
		CHECK(parse("{} x", 8, 0, &o, &info) == -EBADMSG);
		CHECK(info.status == JSON_PARSE_TRAILING && info.offset == 3);
		CHECK(parse("{} {}", 8, JSON_PARSE_STRICT, &o, &info) == -EBADMSG && info.status == JSON_PARSE_INVALID);
		CHECK(parse("{} \r\n", 8, JSON_PARSE_STRICT, &o, &info) == 0);
		json_object_put(o);
		o = NULL;
		CHECK(parse("{} x}", 8, JSON_PARSE_STRICT | JSON_PARSE_ALLOW_TRAILING, &o, &info) == 0);
		CHECK(info.status == JSON_PARSE_OK && json_object_is_type(o, json_type_object));
		json_object_put(o);
		o = NULL;
		/* a NUL byte is not whitespace */
		CHECK(json_parse_text("{}\0", 3, 8, 0, &o, &info) == -EBADMSG && info.status == JSON_PARSE_TRAILING);
		/* strict: no trailing comma; the default takes one */
		CHECK(parse("[1, ]", 8, JSON_PARSE_STRICT, &o, &info) == -EBADMSG && info.status == JSON_PARSE_INVALID);
		CHECK(parse("[1, ]", 8, 0, &o, NULL) == 0);
		json_object_put(o);
		o = NULL;
		/* strict: valid UTF-8 only */
		CHECK(parse("[\"\xff\"]", 8, JSON_PARSE_STRICT, &o, &info) == -EBADMSG && info.status == JSON_PARSE_INVALID);
		CHECK(o == NULL);
	}

	/* typed getters */
	{
		_cleanup_json_ struct json_object *o = NULL;
		struct json_object *v = NULL;
		const char *s = "kept";
		int64_t i = 7;
		bool b = false;

		CHECK(parse("{\"s\": \"x\", \"i\": -3, \"big\": 18446744073709551615, \"b\": true, \"o\": {}, "
			    "\"a\": [], \"n\": null, \"d\": 1.5}",
			    8, JSON_PARSE_STRICT, &o, NULL) == 0);
		CHECK(json_get_string(o, "s", &s, &err) == 0 && !strcmp(s, "x"));
		CHECK(json_get_int64(o, "i", &i, &err) == 0 && i == -3);
		CHECK(json_get_bool(o, "b", &b, &err) == 0 && b);
		CHECK(json_get_object(o, "o", &v, &err) == 0 && json_object_is_type(v, json_type_object));
		CHECK(json_get_array(o, "a", &v, &err) == 0 && json_object_is_type(v, json_type_array));

		s = "kept";
		CHECK(json_get_string(o, "missing", &s, &err) == -ENOENT && !strcmp(err.msg, "missing \"missing\""));
		CHECK(json_get_string(o, "i", &s, &err) == -EINVAL);
		CHECK_MSG(!strcmp(err.msg, "\"i\" is an integer, not a string"), "%s", err.msg);
		CHECK(json_get_string(o, "n", &s, &err) == -EINVAL && !strcmp(err.msg, "\"n\" is null, not a string"));
		CHECK(!strcmp(s, "kept"));
		i = 7;
		CHECK(json_get_int64(o, "d", &i, &err) == -EINVAL && !strcmp(err.msg, "\"d\" is a fractional number, not an integer"));
		CHECK(json_get_int64(o, "big", &i, &err) == -ERANGE && i == 7);
		CHECK(json_get_bool(o, "s", &b, &err) == -EINVAL && !strcmp(err.msg, "\"s\" is a string, not true or false"));
		CHECK(json_get_object(o, "a", &v, &err) == -EINVAL && !strcmp(err.msg, "\"a\" is an array, not an object"));
		CHECK(json_get_array(NULL, "a", &v, NULL) == -ENOENT);

		CHECK(json_lookup(o, "s") && !json_lookup(o, "n") && !json_lookup(o, "missing") && !json_lookup(NULL, "s"));
		CHECK(!strcmp(json_lookup_string(o, "s"), "x") && !json_lookup_string(o, "i"));
		CHECK(json_is_number(json_lookup(o, "d")) && json_is_number(json_lookup(o, "i")));
		CHECK(!json_is_number(json_lookup(o, "s")) && !json_is_number(NULL));
	}

	/* the element of a list of named things */
	{
		_cleanup_json_ struct json_object *a = json_tokener_parse(
			"[1, {\"name\": 2}, {\"name\": \"run-with\", \"i\": 1}, {\"name\": \"run-with\", \"i\": 2}]");

		CHECK(a);
		CHECK(json_object_get_int(json_lookup(json_array_find(a, "name", "run-with"), "i")) == 1);
		CHECK(!json_array_find(a, "name", "user") && !json_array_find(a, "other", "run-with"));
		CHECK(!json_array_find(json_object_array_get_idx(a, 2), "name", "run-with") &&
		      !json_array_find(NULL, "name", "x"));
	}
	return 0;
}
