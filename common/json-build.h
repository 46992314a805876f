/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Building a JSON document with json-c without checking every allocation:
 * a builder latches the first failure (out of memory), each step after it
 * does nothing harmful (a NULL container takes nothing, what it was given
 * is freed), and the caller checks b->oom once, at the end. The report's
 * JSON, the KCIDB export and the run spec's JSON are built this way. Link
 * common_json_dep.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

struct json_build {
	bool oom;
};

/* o as it is; a NULL o latches out-of-memory. For values made by other means (json_object_new_double_s()). */
struct json_object *jb_check(struct json_build *b, struct json_object *o);

struct json_object *jb_obj(struct json_build *b);
struct json_object *jb_arr(struct json_build *b);
/* A string; NULL for a NULL s (JSON null, or no member with jb_put()), which is no failure. */
struct json_object *jb_str(struct json_build *b, const char *s);
struct json_object *jb_i64(struct json_build *b, int64_t v);
struct json_object *jb_u64(struct json_build *b, uint64_t v);
struct json_object *jb_bool(struct json_build *b, bool v);

/* o[key] = v, a NULL v as JSON null. Takes v. A NULL o (a failed jb_obj()) latches out-of-memory. */
void jb_add(struct json_build *b, struct json_object *o, const char *key, struct json_object *v);
/* o[key] = v when v is not NULL: a NULL v means no such member. Takes v. */
void jb_put(struct json_build *b, struct json_object *o, const char *key, struct json_object *v);
/* Appends v to array a, a NULL v as JSON null. Takes v. */
void jb_push(struct json_build *b, struct json_object *a, struct json_object *v);
/* Appends v to a when v is not NULL. Takes v. */
void jb_push_some(struct json_build *b, struct json_object *a, struct json_object *v);
