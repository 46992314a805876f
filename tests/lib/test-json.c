// SPDX-License-Identifier: GPL-2.0-or-later
#include "test-json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* True when every step of path exists; *ret the value (NULL for JSON null). */
static bool walk(struct json_object *o, const char *path, struct json_object **ret)
{
	char buf[512], *save = NULL;

	CHECK_MSG(strlen(path) < sizeof(buf), "JSON path too long: %s", path);
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		if (!o)
			return false;
		if (json_object_is_type(o, json_type_array)) {
			char *end;
			long i = strtol(t, &end, 10);

			if (*end || end == t || i < 0 || (size_t)i >= json_object_array_length(o))
				return false;
			o = json_object_array_get_idx(o, (size_t)i);
		} else if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, t, &o)) {
			return false;
		}
	}
	*ret = o;
	return true;
}

struct json_object *jp(struct json_object *o, const char *path)
{
	struct json_object *v;

	return walk(o, path, &v) ? v : NULL;
}

struct json_object *jget(struct json_object *o, const char *path)
{
	struct json_object *v = NULL;

	CHECK_MSG(walk(o, path, &v), "no %s in %s", path, o ? json_object_to_json_string(o) : "null");
	return v;
}

bool jnull(struct json_object *o, const char *path)
{
	struct json_object *v;

	return walk(o, path, &v) && !v;
}

bool jtrue(struct json_object *o, const char *path)
{
	struct json_object *v = jget(o, path);

	CHECK_MSG(v && json_object_is_type(v, json_type_boolean), "%s: not a boolean", path);
	return json_object_get_boolean(v);
}

double jnum(struct json_object *o, const char *path)
{
	struct json_object *v = jp(o, path);

	CHECK_MSG(v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)),
		  "%s is not a number", path);
	return json_object_get_double(v);
}

int64_t jint(struct json_object *o, const char *path)
{
	struct json_object *v = jp(o, path);

	CHECK_MSG(v && json_object_is_type(v, json_type_int), "%s is not an integer", path);
	return json_object_get_int64(v);
}

const char *jstr(struct json_object *o, const char *path)
{
	struct json_object *v = jp(o, path);

	CHECK_MSG(v && json_object_is_type(v, json_type_string), "%s is not a string", path);
	return json_object_get_string(v);
}
