// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit test: line framing bounds, request parsing and envelope checks, helpers. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "protocol.h"

static void feed(struct linebuf *b, const char *s, size_t n)
{
	while (n > 0) {
		char *where;
		size_t room;
		CHECK(linebuf_reserve(b, n, &where, &room) == 0);
		if (room > n)
			room = n;
		memcpy(where, s, room);
		linebuf_commit(b, room);
		s += room;
		n -= room;
	}
}

static void test_linebuf_lines(void)
{
	struct linebuf b;
	char *line;
	size_t len;

	linebuf_init(&b, 16);
	CHECK(linebuf_next_line(&b, &line, &len) == 0);
	feed(&b, "ab", 2);
	CHECK(linebuf_next_line(&b, &line, &len) == 0);
	CHECK(linebuf_pending(&b) == 2);
	feed(&b, "c\r\nde\n\nf", 8);
	CHECK(linebuf_next_line(&b, &line, &len) == 1);
	CHECK(len == 3 && !strcmp(line, "abc")); /* CR stripped */
	CHECK(linebuf_next_line(&b, &line, &len) == 1);
	CHECK(len == 2 && !strcmp(line, "de"));
	CHECK(linebuf_next_line(&b, &line, &len) == 1);
	CHECK(len == 0); /* empty line */
	CHECK(linebuf_next_line(&b, &line, &len) == 0);
	CHECK(linebuf_pending(&b) == 1);
	feed(&b, "\n", 1);
	CHECK(linebuf_next_line(&b, &line, &len) == 1);
	CHECK(len == 1 && line[0] == 'f');
	CHECK(linebuf_pending(&b) == 0);
	linebuf_done(&b);
}

static void test_linebuf_bounds(void)
{
	struct linebuf b;
	char big[64], *line, *where;
	size_t len, room;

	/* exactly max bytes is fine */
	linebuf_init(&b, 16);
	memset(big, 'x', sizeof(big));
	feed(&b, big, 16);
	feed(&b, "\n", 1);
	CHECK(linebuf_next_line(&b, &line, &len) == 1);
	CHECK(len == 16);
	linebuf_done(&b);

	/* max + 1 without a newline: overflow, and the buffer never grows past max + 2 */
	linebuf_init(&b, 16);
	feed(&b, big, 17);
	CHECK(linebuf_next_line(&b, &line, &len) == -EMSGSIZE);
	CHECK(linebuf_reserve(&b, 1, &where, &room) == -ENOBUFS);
	CHECK(linebuf_next_line(&b, &line, &len) == -EMSGSIZE);
	CHECK(b.cap <= 18);
	linebuf_done(&b);

	/* a long line with its newline in the same chunk is refused as well */
	linebuf_init(&b, 16);
	CHECK(linebuf_reserve(&b, 64, &where, &room) == 0);
	CHECK(room <= 18);
	memset(where, 'y', room);
	where[room - 1] = '\n';
	linebuf_commit(&b, room);
	CHECK(linebuf_next_line(&b, &line, &len) == -EMSGSIZE);
	linebuf_done(&b);

	/* many short lines through a small buffer: compaction keeps it bounded */
	linebuf_init(&b, 8);
	for (int i = 0; i < 1000; i++) {
		feed(&b, "1234567\n", 8);
		CHECK(linebuf_next_line(&b, &line, &len) == 1);
		CHECK(len == 7 && !strcmp(line, "1234567"));
	}
	CHECK(b.cap <= 10);
	linebuf_done(&b);
}

static struct json_object *parse_ok(const char *s)
{
	struct json_object *o = NULL;
	struct sb_error err = {};
	int r = protocol_parse_line(s, strlen(s), PROTOCOL_MAX_DEPTH, &o, &err);
	CHECK_MSG(r == 0, "%s: %s", s, err.msg);
	return o;
}

static void parse_bad(const char *s, size_t len, const char *needle)
{
	struct json_object *o = NULL;
	struct sb_error err = {};
	int r = protocol_parse_line(s, len, PROTOCOL_MAX_DEPTH, &o, &err);
	CHECK_MSG(r == -EBADMSG, "%s: got %d", s, r);
	CHECK(o == NULL);
	CHECK_MSG(strstr(err.msg, needle), "'%s' not in '%s'", needle, err.msg);
}

static void parse_bad_str(const char *s, const char *needle)
{
	parse_bad(s, strlen(s), needle);
}

static void test_parse(void)
{
	struct json_object *o = parse_ok("  {\"v\": 1, \"op\": \"status\"}  ");
	json_object_put(o);

	parse_bad("{\"v\": 1,", 8, "ends inside");
	parse_bad("{\"v\": 1} {}", 11, "invalid JSON");
	parse_bad("[1, 2]", 6, "must be a JSON object");
	parse_bad("\"status\"", 8, "must be a JSON object");
	parse_bad("{\"v\": 1\0}", 9, "NUL");
	parse_bad("{v: 1}", 6, "invalid JSON");
	parse_bad("", 0, "empty");
	parse_bad("{\"a\": \"\xff\xfe\"}", 11, "invalid JSON");
	/* what json-c lets through: overlong, encoded surrogate, past U+10FFFF, and \u0000 */
	parse_bad_str("{\"a\": \"\xc0\xaf\"}", "invalid UTF-8 at byte 7");
	parse_bad_str("{\"a\": \"\xe0\x80\xaf\"}", "invalid UTF-8 at byte 7");
	parse_bad_str("{\"a\": \"\xed\xa0\x80\"}", "invalid UTF-8 at byte 7");
	parse_bad_str("{\"a\": \"\xf4\x90\x80\x80\"}", "invalid UTF-8 at byte 7");
	parse_bad_str("{\"op\": \"status\\u0000evil\"}", "holds \\u0000 (byte 14)");
	parse_bad_str("{\"op\\u0000x\": 1}", "holds \\u0000");
	/* valid forms around them stay valid: an escaped backslash before u0000, 4-byte UTF-8, U+FFFD */
	o = parse_ok("{\"a\": \"\\\\u0000\", \"b\": \"\xf0\x9f\x98\x80\", \"c\": \"\xef\xbf\xbd\"}");
	json_object_put(o);
	char s1[] = "ok \xc0\xaf \xed\xa0\x80 \xe2\x82\xac";
	protocol_sanitize_utf8(s1, strlen(s1));
	CHECK_MSG(!strcmp(s1, "ok ?? ??? \xe2\x82\xac"), "sanitized to %s", s1);

	/* nesting beyond the bound */
	char deep[200] = "{\"a\":";
	for (int i = 0; i < 40; i++)
		strcat(deep, "[");
	for (int i = 0; i < 40; i++)
		strcat(deep, "]");
	strcat(deep, "}");
	parse_bad(deep, strlen(deep), "invalid JSON");
}

static void envelope_bad(const char *s, const char *code, const char *field, const char *needle, bool has_id)
{
	struct json_object *o = parse_ok(s), *id = NULL;
	enum protocol_op op;
	const char *c = NULL, *f = NULL;
	struct sb_error err = {};

	CHECK_MSG(protocol_check_envelope(o, &op, &id, &c, &f, &err) < 0, "%s accepted", s);
	CHECK_MSG(!strcmp(c, code), "%s: code %s, expected %s", s, c, code);
	CHECK_MSG(f && !strcmp(f, field), "%s: field %s, expected %s", s, f ? f : "(null)", field);
	CHECK_MSG(strstr(err.msg, needle), "'%s' not in '%s'", needle, err.msg);
	CHECK((id != NULL) == has_id);
	json_object_put(o);
}

static void test_envelope(void)
{
	struct json_object *o, *id;
	enum protocol_op op;
	const char *c, *f;
	struct sb_error err = {};

	o = parse_ok("{\"v\": 1, \"id\": 7, \"op\": \"watch\", \"run\": \"x\"}");
	CHECK(protocol_check_envelope(o, &op, &id, &c, &f, &err) == 0);
	CHECK(op == PROTO_OP_WATCH);
	CHECK(json_object_get_int(id) == 7);
	json_object_put(o);

	o = parse_ok("{\"v\": 1, \"id\": \"ci-42\", \"op\": \"submit\"}");
	CHECK(protocol_check_envelope(o, &op, &id, &c, &f, &err) == 0);
	CHECK(op == PROTO_OP_SUBMIT && protocol_op_writes(op));
	CHECK(!strcmp(json_object_get_string(id), "ci-42"));
	json_object_put(o);

	envelope_bad("{\"op\": \"status\", \"id\": 3}", PROTO_ERR_BAD_REQUEST, "v", "missing", true);
	envelope_bad("{\"v\": \"1\", \"op\": \"status\"}", PROTO_ERR_BAD_REQUEST, "v", "must be an integer", false);
	envelope_bad("{\"v\": 2, \"op\": \"status\", \"id\": 1}", PROTO_ERR_VERSION, "v", "speaks version 1", true);
	envelope_bad("{\"v\": 1}", PROTO_ERR_BAD_REQUEST, "op", "missing", false);
	envelope_bad("{\"v\": 1, \"op\": 5}", PROTO_ERR_BAD_REQUEST, "op", "must be a string", false);
	envelope_bad("{\"v\": 1, \"op\": \"reboot\", \"id\": 9}", PROTO_ERR_UNKNOWN_OP, "op", "unknown operation 'reboot'",
		     true);
	envelope_bad("{\"v\": 1, \"op\": \"status\", \"id\": [1]}", PROTO_ERR_BAD_REQUEST, "id", "integer or a string",
		     false);
	envelope_bad("{\"v\": 1, \"op\": \"status\", \"id\": 1.5}", PROTO_ERR_BAD_REQUEST, "id", "integer or a string",
		     false);

	char longid[400];
	snprintf(longid, sizeof(longid), "{\"v\": 1, \"op\": \"status\", \"id\": \"%0200d\"}", 0);
	envelope_bad(longid, PROTO_ERR_BAD_REQUEST, "id", "at most", false);
}

static void test_getters(void)
{
	struct json_object *o = parse_ok("{\"s\": \"abc\", \"b\": true, \"n\": 12, \"neg\": -1, \"f\": 1.5, \"big\": 99999999999999999999}");
	struct sb_error err = {};
	const char *s = NULL;
	bool b = false;
	unsigned long long n = 0;

	CHECK(protocol_get_string(o, "s", 8, &s, &err) == 1 && !strcmp(s, "abc"));
	CHECK(protocol_get_string(o, "s", 2, &s, &err) == -EINVAL && strstr(err.msg, "longer than"));
	CHECK(protocol_get_string(o, "b", 8, &s, &err) == -EINVAL && strstr(err.msg, "b: must be a string (got a boolean)"));
	CHECK(protocol_get_string(o, "missing", 8, &s, &err) == 0);
	CHECK(protocol_get_bool(o, "b", &b, &err) == 1 && b);
	CHECK(protocol_get_bool(o, "n", &b, &err) == -EINVAL);
	CHECK(protocol_get_uint(o, "n", 100, &n, &err) == 1 && n == 12);
	CHECK(protocol_get_uint(o, "n", 10, &n, &err) == -EINVAL && strstr(err.msg, "from 0 to 10"));
	CHECK(protocol_get_uint(o, "neg", 10, &n, &err) == -EINVAL);
	CHECK(protocol_get_uint(o, "f", 10, &n, &err) == -EINVAL && strstr(err.msg, "got a fractional number"));
	CHECK(protocol_get_uint(o, "big", 1000, &n, &err) == -EINVAL);
	json_object_put(o);
}

static void test_messages(void)
{
	struct json_object *id = json_object_new_int(5), *e, *v;
	char *line;
	size_t len;

	e = protocol_error_new(id, PROTO_ERR_DENIED, "run", "no");
	CHECK(protocol_serialize(e, &line, &len) == 0);
	CHECK(line[len - 1] == '\n' && strlen(line) == len);
	CHECK(!strchr(line, '\n') || strchr(line, '\n') == line + len - 1);
	CHECK(!strcmp(line, "{\"v\":1,\"id\":5,\"ok\":false,\"error\":{\"code\":\"denied\",\"message\":\"no\",\"field\":\"run\"}}\n"));
	free(line);
	json_object_put(e);

	e = protocol_event_new(id, "progress", "20261130T034512Z-3f9c2a");
	CHECK(json_object_object_get_ex(e, "event", &v) && !strcmp(json_object_get_string(v), "progress"));
	json_object_put(e);
	json_object_put(id);

	/* a string with a newline inside serializes escaped: one message, one line */
	e = json_object_new_object();
	json_object_object_add(e, "text", json_object_new_string("a\nb"));
	CHECK(protocol_serialize(e, &line, &len) == 0);
	CHECK(strchr(line, '\n') == line + len - 1);
	free(line);
	json_object_put(e);
}

static void test_sanitize(void)
{
	char s1[] = "plain ascii";
	char s2[] = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
	char s3[] = "bad \xff \xc3 \xe2\x82 \xc0\xaf \xed\xa0\x80 end";
	char s4[] = "cut \xe2\x82";

	protocol_sanitize_utf8(s1, strlen(s1));
	CHECK(!strcmp(s1, "plain ascii"));
	protocol_sanitize_utf8(s2, strlen(s2));
	CHECK(!strcmp(s2, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
	protocol_sanitize_utf8(s3, strlen(s3));
	CHECK_MSG(!strcmp(s3, "bad ? ? ?? ?? ??? end"), "%s", s3);
	protocol_sanitize_utf8(s4, strlen(s4));
	CHECK(!strcmp(s4, "cut ??"));
	/* the result always parses as a JSON string */
	struct json_object *o = json_object_new_string(s3);
	const char *text = json_object_to_json_string(o);
	struct json_tokener *tok = json_tokener_new();
	json_tokener_set_flags(tok, JSON_TOKENER_VALIDATE_UTF8);
	struct json_object *back = json_tokener_parse_ex(tok, text, (int)strlen(text));
	CHECK(back && !strcmp(json_object_get_string(back), s3));
	json_object_put(back);
	json_tokener_free(tok);
	json_object_put(o);
}

int main(void)
{
	test_linebuf_lines();
	test_linebuf_bounds();
	test_parse();
	test_envelope();
	test_getters();
	test_messages();
	test_sanitize();
	return 0;
}
