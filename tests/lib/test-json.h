/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JSON paths for tests: "a/b/0/c" walks object keys and array indexes
 * ("/" because metric names hold dots: "invalidations_per_s.uffd-wp").
 * The checked getters fail the test (CHECK) with the path in the message.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

/* The value at path, or NULL if absent (or JSON null). */
struct json_object *jp(struct json_object *o, const char *path);
/* The value at path, which must be present (it may be JSON null: NULL). */
struct json_object *jget(struct json_object *o, const char *path);
/* present and JSON null */
bool jnull(struct json_object *o, const char *path);
/* A boolean at path, which must be one. */
bool jtrue(struct json_object *o, const char *path);
/* A number (integer or not) at path. */
double jnum(struct json_object *o, const char *path);
/* An integer at path. */
int64_t jint(struct json_object *o, const char *path);
/* A string at path. */
const char *jstr(struct json_object *o, const char *path);
