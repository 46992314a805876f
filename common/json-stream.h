/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Framing: cut a byte stream into JSON values, one at a time, with bounds,
 * for the clients of QEMU's monitor (qmp/) and guest agent (qga/). QEMU ends
 * each message with "\r\n", but framing follows the JSON itself so a
 * message split across reads (or several in one read) is handled alike.
 * JSON is strict and valid UTF-8. Uses json-c: link common_stream_dep.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct json_object;
struct json_stream;

/*
 * max_message: bytes per value, whitespace around it included; max_depth:
 * containers nested in one another ({"a": [1]} is 2 deep).
 */
struct json_stream *json_stream_new(size_t max_message, int max_depth);
void json_stream_free(struct json_stream *s);

/*
 * Feed up to len bytes. Sets *consumed to the bytes used. Returns 1 with
 * *ret set when a value is complete (bytes after it were not consumed),
 * 0 when all bytes were used and the value is still incomplete, or
 * -EMSGSIZE / -EBADMSG with err set. After an error the stream is done.
 * label names the peer in messages.
 */
int json_stream_feed(struct json_stream *s, const char *buf, size_t len, size_t *consumed,
		     struct json_object **ret, const char *label, struct sb_error *err);

/* Bytes of the incomplete value fed so far, whitespace excluded; 0 between values. */
size_t json_stream_pending(const struct json_stream *s);

/* Drops the incomplete value and a failure: the next byte fed starts a new value. */
void json_stream_reset(struct json_stream *s);

/*
 * Parses text (len bytes) as exactly one JSON value under the same bounds,
 * whitespace around it allowed: for a whole message some other transport
 * delivered. -EMSGSIZE, or -EBADMSG also for a truncated value or text after
 * it; label names the source in messages.
 */
int json_parse_bounded(const char *text, size_t len, size_t max_message, int max_depth, const char *label,
		       struct json_object **ret, struct sb_error *err);
