// SPDX-License-Identifier: GPL-2.0-or-later
#include "json-stream.h"

#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>

struct json_stream {
	struct json_tokener *tok;
	size_t max_message;
	int max_depth;
	size_t fed;         /* bytes fed for the current value, leading whitespace included */
	size_t pending;     /* the same without leading whitespace */
	bool failed;
};

struct json_stream *json_stream_new(size_t max_message, int max_depth)
{
	struct json_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	/* json-c counts the top-level value as a level: d allows d - 1 nested containers. */
	s->tok = json_tokener_new_ex(max_depth + 1);
	if (!s->tok) {
		free(s);
		return NULL;
	}
	/*
	 * Strict JSON, valid UTF-8; trailing characters allowed because the
	 * next message may follow in the same read.
	 */
	json_tokener_set_flags(s->tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
					       JSON_TOKENER_VALIDATE_UTF8);
	s->max_message = max_message;
	s->max_depth = max_depth;
	return s;
}

void json_stream_free(struct json_stream *s)
{
	if (!s)
		return;
	json_tokener_free(s->tok);
	free(s);
}

size_t json_stream_pending(const struct json_stream *s)
{
	return s->pending;
}

void json_stream_reset(struct json_stream *s)
{
	json_tokener_reset(s->tok);
	s->fed = 0;
	s->pending = 0;
	s->failed = false;
}

static bool is_json_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

int json_stream_feed(struct json_stream *s, const char *buf, size_t len, size_t *consumed,
		     struct json_object **ret, const char *label, struct sb_error *err)
{
	size_t room, chunk, end;
	struct json_object *obj;
	enum json_tokener_error jerr;

	*consumed = 0;
	*ret = NULL;
	if (s->failed)
		return sb_error_set(err, -EBADMSG, "%s: the message stream already failed", label);
	if (len == 0)
		return 0;

	/*
	 * Feed at most one byte past the limit, so an oversized message is
	 * caught as soon as it crosses max_message, not a whole read later.
	 */
	room = s->max_message - s->fed + 1;
	chunk = len < room ? len : room;
	if (chunk > INT_MAX)
		chunk = INT_MAX;

	obj = json_tokener_parse_ex(s->tok, buf, (int)chunk);
	jerr = json_tokener_get_error(s->tok);
	end = json_tokener_get_parse_end(s->tok);

	if (jerr == json_tokener_success) {
		/* A value ends a message; whatever follows belongs to the next one. */
		s->fed += end;
		if (s->fed > s->max_message) {
			json_object_put(obj);
			goto too_big;
		}
		*consumed = end;
		*ret = obj;
		s->fed = 0;
		s->pending = 0;
		json_tokener_reset(s->tok);
		return 1;
	}

	if (jerr == json_tokener_continue) {
		for (size_t i = 0; i < chunk; i++)
			if (s->pending > 0 || !is_json_space(buf[i]))
				s->pending++;
		s->fed += chunk;
		*consumed = chunk;
		if (s->fed > s->max_message)
			goto too_big;
		return 0;
	}

	s->failed = true;
	if (jerr == json_tokener_error_depth)
		return sb_error_set(err, -EMSGSIZE, "%s sent a message nested deeper than %d levels", label,
				    s->max_depth);
	return sb_error_set(err, -EBADMSG, "%s sent invalid JSON (%s) after %zu bytes of a message", label,
			    json_tokener_error_desc(jerr), s->fed + end);

too_big:
	s->failed = true;
	return sb_error_set(err, -EMSGSIZE, "%s sent a message larger than the limit of %zu bytes", label,
			    s->max_message);
}

int json_parse_bounded(const char *text, size_t len, size_t max_message, int max_depth, const char *label,
		       struct json_object **ret, struct sb_error *err)
{
	struct json_stream *s = json_stream_new(max_message, max_depth);
	struct json_object *obj = NULL;
	size_t used = 0;
	int r;

	if (!s)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = json_stream_feed(s, text, len, &used, &obj, label, err);
	json_stream_free(s);
	if (r < 0)
		return r;
	/* (a text above max_message failed in json_stream_feed already) */
	if (r == 0)
		return sb_error_set(err, -EBADMSG, "%s gave truncated JSON (%zu bytes)", label, len);
	for (size_t i = used; i < len; i++)
		if (!is_json_space(text[i])) {
			json_object_put(obj);
			return sb_error_set(err, -EBADMSG, "%s gave text after the JSON value", label);
		}
	*ret = obj;
	return 0;
}
