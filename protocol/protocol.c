// SPDX-License-Identifier: GPL-2.0-or-later
/* The snapbenchd wire protocol: framing, envelope checks, message builders. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "macro.h"
#include "protocol.h"

static const char *const op_names[_PROTO_OP_MAX] = {
	[PROTO_OP_SUBMIT] = "submit",
	[PROTO_OP_STATUS] = "status",
	[PROTO_OP_LIST] = "list",
	[PROTO_OP_SHOW] = "show",
	[PROTO_OP_CANCEL] = "cancel",
	[PROTO_OP_LOGS] = "logs",
	[PROTO_OP_WATCH] = "watch",
};

const char *protocol_op_to_string(enum protocol_op op)
{
	return (unsigned)op < _PROTO_OP_MAX ? op_names[op] : NULL;
}

int protocol_op_from_string(const char *s)
{
	for (int i = 0; i < _PROTO_OP_MAX; i++)
		if (!strcmp(s, op_names[i]))
			return i;
	return -EINVAL;
}

const char *protocol_op_list(void)
{
	return "submit, status, list, show, cancel, logs, watch";
}

bool protocol_op_writes(enum protocol_op op)
{
	return op == PROTO_OP_SUBMIT || op == PROTO_OP_CANCEL;
}

/* ---- line framing ---- */

void linebuf_init(struct linebuf *b, size_t max)
{
	*b = (struct linebuf){ .max = max };
}

void linebuf_done(struct linebuf *b)
{
	free(b->data);
	*b = (struct linebuf){ .max = b->max };
}

static void linebuf_compact(struct linebuf *b)
{
	if (b->drop == 0)
		return;
	memmove(b->data, b->data + b->drop, b->len - b->drop);
	b->len -= b->drop;
	b->scan = b->scan > b->drop ? b->scan - b->drop : 0;
	b->drop = 0;
}

int linebuf_reserve(struct linebuf *b, size_t want, char **where, size_t *room)
{
	/* one byte beyond max (plus the newline) is enough to know a line is too long */
	size_t limit = b->max + 2;

	if (b->overflow)
		return -ENOBUFS;
	linebuf_compact(b);
	if (want == 0)
		want = 1;
	if (b->len >= limit)
		return -ENOBUFS;
	if (want > limit - b->len)
		want = limit - b->len;
	if (b->cap - b->len < want) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap - b->len < want)
			cap *= 2;
		if (cap > limit)
			cap = limit;
		p = realloc(b->data, cap);
		if (!p)
			return -ENOMEM;
		b->data = p;
		b->cap = cap;
	}
	*where = b->data + b->len;
	*room = b->cap - b->len;
	return 0;
}

void linebuf_commit(struct linebuf *b, size_t n)
{
	b->len += n;
}

int linebuf_next_line(struct linebuf *b, char **line, size_t *len)
{
	char *nl;

	if (b->overflow)
		return -EMSGSIZE;
	linebuf_compact(b);
	nl = b->scan < b->len ? memchr(b->data + b->scan, '\n', b->len - b->scan) : NULL;
	if (!nl) {
		b->scan = b->len;
		if (b->len > b->max) {
			b->overflow = true;
			return -EMSGSIZE;
		}
		return 0;
	}
	size_t n = (size_t)(nl - b->data);
	if (n > b->max) {
		b->overflow = true;
		return -EMSGSIZE;
	}
	b->drop = n + 1;
	b->scan = 0;
	*nl = '\0';
	if (n > 0 && b->data[n - 1] == '\r') /* tolerate CRLF from hand-typed clients (socat, nc -C) */
		b->data[--n] = '\0';
	*line = b->data;
	*len = n;
	return 1;
}

size_t linebuf_pending(const struct linebuf *b)
{
	return b->len - b->drop;
}

/* ---- messages ---- */

/*
 * Where the JSON text has a \u0000 escape in a string (a key or a value),
 * or -1: json-c keeps the NUL, and C code would see the string cut short
 * there ("status\u0000evil" is "status"; keys are cut when stored).
 */
static ssize_t nul_escape_at(const char *s, size_t len)
{
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"') {
			in_string = !in_string;
		} else if (in_string && s[i] == '\\' && i + 1 < len) {
			if (s[i + 1] == 'u' && i + 5 < len && !strncmp(s + i + 2, "0000", 4))
				return (ssize_t)i;
			i++; /* the escaped character */
		}
	}
	return -1;
}

int protocol_parse_line(const char *line, size_t len, int max_depth, struct json_object **ret,
			struct sb_error *err)
{
	struct json_parse_info info;
	struct json_object *o = NULL;
	int r;

	if (len == 0)
		return sb_error_set(err, -EBADMSG, "empty line: send one JSON object per line");
	if (len > INT_MAX)
		return sb_error_set(err, -EBADMSG, "line too long");
	if (memchr(line, '\0', len))
		return sb_error_set(err, -EBADMSG, "the line contains a NUL byte: send one JSON object per line");
	ssize_t nul = nul_escape_at(line, len);
	if (nul >= 0)
		return sb_error_set(err, -EBADMSG, "a string holds \\u0000 (byte %zd), which the protocol refuses: strings "
				    "are text without NUL",
				    nul);
	r = json_parse_text(line, len, max_depth, JSON_PARSE_STRICT, &o, &info);
	if (r == -ENOMEM)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (r < 0 && info.status == JSON_PARSE_TRUNCATED)
		return sb_error_set(err, -EBADMSG, "invalid JSON: the line ends inside a value; send one whole JSON object per line");
	if (r < 0 && info.status == JSON_PARSE_TRAILING)
		return sb_error_set(err, -EBADMSG,
				    "invalid JSON: text after the object at byte %zu; send one JSON object per line", info.offset);
	if (r < 0)
		return sb_error_set(err, -EBADMSG, "invalid JSON at byte %zu: %s", info.offset, info.reason);
	/* json-c lets overlong forms, encoded surrogates and code points past U+10FFFF through */
	size_t bad;
	if (!protocol_utf8_valid(line, len, &bad)) {
		sb_error_set(err, -EBADMSG,
			     "invalid UTF-8 at byte %zu (an overlong form, a surrogate or a code point past U+10FFFF): "
			     "send UTF-8",
			     bad);
		json_object_put(o);
		return -EBADMSG;
	}
	if (!json_object_is_type(o, json_type_object)) {
		sb_error_set(err, -EBADMSG, "the request must be a JSON object (got %s)", json_type_phrase(o));
		json_object_put(o);
		return -EBADMSG;
	}
	*ret = o;
	return 0;
}

int protocol_check_envelope(struct json_object *req, enum protocol_op *op, struct json_object **id,
			    const char **code, const char **field, struct sb_error *err)
{
	struct json_object *v;

	*id = NULL;
	if (json_object_object_get_ex(req, "id", &v) && v) {
		if (json_object_is_type(v, json_type_int) ||
		    (json_object_is_type(v, json_type_string) &&
		     json_object_get_string_len(v) <= PROTOCOL_MAX_ID_STRING))
			*id = v;
		else {
			*code = PROTO_ERR_BAD_REQUEST;
			*field = "id";
			return sb_error_set(err, -EINVAL,
					    "id: must be an integer or a string of at most %d bytes (got %s)",
					    PROTOCOL_MAX_ID_STRING, json_type_phrase(v));
		}
	}

	if (!json_object_object_get_ex(req, "v", &v)) {
		*code = PROTO_ERR_BAD_REQUEST;
		*field = "v";
		return sb_error_set(err, -EINVAL, "v: missing; add \"v\": %d (the protocol version)", PROTOCOL_VERSION);
	}
	if (!json_object_is_type(v, json_type_int)) {
		*code = PROTO_ERR_BAD_REQUEST;
		*field = "v";
		return sb_error_set(err, -EINVAL, "v: must be an integer, the protocol version %d (got %s)",
				    PROTOCOL_VERSION, json_type_phrase(v));
	}
	if (json_object_get_int64(v) != PROTOCOL_VERSION) {
		*code = PROTO_ERR_VERSION;
		*field = "v";
		return sb_error_set(err, -EPROTONOSUPPORT,
				    "v: protocol version %lld is not supported; this daemon speaks version %d",
				    (long long)json_object_get_int64(v), PROTOCOL_VERSION);
	}

	if (!json_object_object_get_ex(req, "op", &v)) {
		*code = PROTO_ERR_BAD_REQUEST;
		*field = "op";
		return sb_error_set(err, -EINVAL, "op: missing; one of %s", protocol_op_list());
	}
	if (!json_object_is_type(v, json_type_string)) {
		*code = PROTO_ERR_BAD_REQUEST;
		*field = "op";
		return sb_error_set(err, -EINVAL, "op: must be a string, one of %s (got %s)", protocol_op_list(),
				    json_type_phrase(v));
	}
	int o = protocol_op_from_string(json_object_get_string(v));
	if (o < 0) {
		char shown[64];

		snprintf(shown, sizeof(shown), "%s", json_object_get_string(v));
		protocol_sanitize_utf8(shown, strlen(shown));
		*code = PROTO_ERR_UNKNOWN_OP;
		*field = "op";
		return sb_error_set(err, -EOPNOTSUPP, "op: unknown operation '%s'; one of %s", shown,
				    protocol_op_list());
	}
	*op = (enum protocol_op)o;
	return 0;
}

struct json_object *protocol_reply_new(struct json_object *id, bool ok)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	if (json_object_object_add(o, "v", json_object_new_int(PROTOCOL_VERSION)) < 0 ||
	    (id && json_object_object_add(o, "id", json_object_get(id)) < 0) ||
	    json_object_object_add(o, "ok", json_object_new_boolean(ok)) < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

struct json_object *protocol_error_new(struct json_object *id, const char *code, const char *field,
				       const char *message)
{
	struct json_object *o = protocol_reply_new(id, false);
	struct json_object *e = json_object_new_object();

	if (!o || !e)
		goto fail;
	if (json_object_object_add(e, "code", json_object_new_string(code)) < 0 ||
	    json_object_object_add(e, "message", json_object_new_string(message ? message : code)) < 0 ||
	    (field && json_object_object_add(e, "field", json_object_new_string(field)) < 0))
		goto fail;
	if (json_object_object_add(o, "error", e) < 0)
		goto fail;
	return o;
fail:
	json_object_put(e);
	json_object_put(o);
	return NULL;
}

struct json_object *protocol_event_new(struct json_object *id, const char *name, const char *run)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	if (json_object_object_add(o, "v", json_object_new_int(PROTOCOL_VERSION)) < 0 ||
	    (id && json_object_object_add(o, "id", json_object_get(id)) < 0) ||
	    json_object_object_add(o, "event", json_object_new_string(name)) < 0 ||
	    (run && json_object_object_add(o, "run", json_object_new_string(run)) < 0)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int protocol_get_string(struct json_object *o, const char *key, size_t max_len, const char **ret,
			struct sb_error *err)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return sb_error_set(err, -EINVAL, "%s: must be a string (got %s)", key, json_type_phrase(v));
	if ((size_t)json_object_get_string_len(v) > max_len)
		return sb_error_set(err, -EINVAL, "%s: longer than %zu bytes", key, max_len);
	*ret = json_object_get_string(v);
	return 1;
}

int protocol_get_bool(struct json_object *o, const char *key, bool *ret, struct sb_error *err)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return sb_error_set(err, -EINVAL, "%s: must be true or false (got %s)", key, json_type_phrase(v));
	*ret = json_object_get_boolean(v);
	return 1;
}

int protocol_get_uint(struct json_object *o, const char *key, unsigned long long max, unsigned long long *ret,
		      struct sb_error *err)
{
	struct json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return sb_error_set(err, -EINVAL, "%s: must be an integer from 0 to %llu (got %s)", key, max,
				    json_type_phrase(v));
	n = json_object_get_int64(v);
	/* json-c clamps huge values to INT64_MAX; a uint64 above it reads as such */
	if (n < 0 || (unsigned long long)n > max)
		return sb_error_set(err, -EINVAL, "%s: must be an integer from 0 to %llu (got %s)", key, max,
				    json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	*ret = (unsigned long long)n;
	return 1;
}

int protocol_serialize(struct json_object *o, char **ret, size_t *len)
{
	size_t n;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
							  &n);
	char *buf;

	if (!s)
		return -ENOMEM;
	buf = malloc(n + 2);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, s, n);
	buf[n] = '\n';
	buf[n + 1] = '\0';
	*ret = buf;
	*len = n + 1;
	return 0;
}

/*
 * The length of the UTF-8 sequence at s (at most left bytes): 1 to 4, or 0
 * when it is not valid UTF-8 (a NUL, a stray continuation byte, a truncated
 * sequence, an overlong form, a surrogate, beyond U+10FFFF).
 */
static size_t utf8_sequence(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t need;
	uint32_t cp;

	if (c == 0)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (need >= left)
		return 0; /* the continuation bytes are not all there */
	for (size_t k = 1; k <= need; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need + 1;
}

bool protocol_utf8_valid(const char *s, size_t len, size_t *bad_at)
{
	for (size_t i = 0; i < len;) {
		size_t n = utf8_sequence((const unsigned char *)s + i, len - i);
		if (!n) {
			if (bad_at)
				*bad_at = i;
			return false;
		}
		i += n;
	}
	return true;
}

void protocol_sanitize_utf8(char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t n = utf8_sequence((const unsigned char *)s + i, len - i);
		if (!n) {
			s[i++] = '?';
			continue;
		}
		i += n;
	}
}
