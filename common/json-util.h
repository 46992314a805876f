/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JSON helpers on json-c: the cleanup attribute, the one parse of a whole
 * document with a depth bound and a check for trailing data, and typed
 * field access that tells a missing field from one of the wrong type.
 * Link common_json_dep; common_dep stays free of json-c (the guest and the
 * libraries that need no JSON do not link it). A message of a QMP or guest
 * agent stream, bounded in bytes as well, goes through json-stream.h
 * (json_stream_feed(), json_parse_bounded()) instead.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "error.h"
#include "macro.h"

/* _cleanup_json_: json_object_put() when the variable goes out of scope. */
static inline void json_putp(struct json_object **o)
{
	json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_putp)

/* ---- parsing a whole document ---- */

enum json_parse_status {
	JSON_PARSE_OK,
	JSON_PARSE_TOO_DEEP,  /* containers nested deeper than max_depth */
	JSON_PARSE_TRUNCATED, /* the text ends inside the value (or is empty); reason "unexpected end of data" */
	JSON_PARSE_INVALID,   /* not JSON: reason says why, offset where */
	JSON_PARSE_TRAILING,  /* text other than whitespace after the value, at offset */
};

/* What went wrong, for callers that word the message themselves. */
struct json_parse_info {
	enum json_parse_status status;
	const char *reason; /* json-c's description of the failure (static) */
	size_t offset;      /* the byte where parsing stopped, or of the trailing text */
};

/*
 * JSON_PARSE_STRICT: strict JSON (no trailing commas, comments ...) and valid
 * UTF-8; json-c then reports text after the value itself, as
 * JSON_PARSE_INVALID at its first byte.
 */
#define JSON_PARSE_STRICT 1u
/* JSON_PARSE_ALLOW_TRAILING: what follows the value is not looked at (a record rewritten in place). */
#define JSON_PARSE_ALLOW_TRAILING 2u

/*
 * Parses text (len bytes) as exactly one JSON value; whitespace (space, tab,
 * CR, LF) may follow it. The text's end ends the value: "12" is a number,
 * "{" is truncated. max_depth is json-c's depth: the top-level value
 * counts as a level. Returns 0 with *ret set (NULL for the document
 * "null"), -ENOMEM, -EMSGSIZE when len exceeds what json-c takes (INT_MAX),
 * or -EBADMSG with info filled; *ret is set only on success. info may be
 * NULL; it is filled (status JSON_PARSE_OK) on success too.
 */
int json_parse_text(const char *text, size_t len, int max_depth, unsigned flags, struct json_object **ret,
		    struct json_parse_info *info);

/* ---- field access ---- */

/* "a string", "an integer", "a fractional number", "an object", "null" ...: for messages. */
const char *json_type_phrase(struct json_object *o);

/* The member key of o, or NULL when o is not an object or has no such member (or it is null). */
struct json_object *json_lookup(struct json_object *o, const char *key);
/* The member's string, or NULL when it is missing or not a string. */
const char *json_lookup_string(struct json_object *o, const char *key);
/* An int or a double. */
bool json_is_number(struct json_object *o);
/*
 * The first element of array a that is an object whose string member key is
 * value (QMP's lists of named things: {"name": ...}, {"capability": ...}),
 * or NULL; NULL also when a is not an array.
 */
struct json_object *json_array_find(struct json_object *a, const char *key, const char *value);

/*
 * Typed getters: 0 with *ret set; -ENOENT when o has no member key (or o is
 * not an object): "missing \"KEY\""; -EINVAL when it has the wrong type:
 * "\"KEY\" is TYPE, not a string". *ret is set only on success; err may be
 * NULL. A JSON null counts as present and of type null.
 */
int json_get_string(struct json_object *o, const char *key, const char **ret, struct sb_error *err);
/* An integer (json-c int) in int64_t range. */
int json_get_int64(struct json_object *o, const char *key, int64_t *ret, struct sb_error *err);
int json_get_bool(struct json_object *o, const char *key, bool *ret, struct sb_error *err);
int json_get_object(struct json_object *o, const char *key, struct json_object **ret, struct sb_error *err);
int json_get_array(struct json_object *o, const char *key, struct json_object **ret, struct sb_error *err);
