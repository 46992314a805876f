// SPDX-License-Identifier: GPL-2.0-or-later
#include "json-build.h"

struct json_object *jb_check(struct json_build *b, struct json_object *o)
{
	if (!o)
		b->oom = true;
	return o;
}

struct json_object *jb_obj(struct json_build *b)
{
	return jb_check(b, json_object_new_object());
}

struct json_object *jb_arr(struct json_build *b)
{
	return jb_check(b, json_object_new_array());
}

struct json_object *jb_str(struct json_build *b, const char *s)
{
	return s ? jb_check(b, json_object_new_string(s)) : NULL;
}

struct json_object *jb_i64(struct json_build *b, int64_t v)
{
	return jb_check(b, json_object_new_int64(v));
}

struct json_object *jb_u64(struct json_build *b, uint64_t v)
{
	return jb_check(b, json_object_new_uint64(v));
}

struct json_object *jb_bool(struct json_build *b, bool v)
{
	return jb_check(b, json_object_new_boolean(v));
}

void jb_add(struct json_build *b, struct json_object *o, const char *key, struct json_object *v)
{
	if (!o || json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		b->oom = true;
	}
}

void jb_put(struct json_build *b, struct json_object *o, const char *key, struct json_object *v)
{
	if (v)
		jb_add(b, o, key, v);
}

void jb_push(struct json_build *b, struct json_object *a, struct json_object *v)
{
	if (!a || json_object_array_add(a, v) < 0) {
		json_object_put(v);
		b->oom = true;
	}
}

void jb_push_some(struct json_build *b, struct json_object *a, struct json_object *v)
{
	if (v)
		jb_push(b, a, v);
}
