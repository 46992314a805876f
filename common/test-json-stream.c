// SPDX-License-Identifier: GPL-2.0-or-later
/* Framing: split and joined messages, bounds, invalid input. */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json-stream.h"

/* Feed text in pieces of step bytes; collect the values; return the first error or the count. */
static int feed_all(struct json_stream *s, const char *text, size_t step, struct json_object **out, int max_out,
		    struct sb_error *err)
{
	size_t len = strlen(text), off = 0;
	int n = 0;

	while (off < len) {
		size_t piece = len - off < step ? len - off : step;
		size_t used = 0;
		struct json_object *obj = NULL;
		int r = json_stream_feed(s, text + off, piece, &used, &obj, "peer", err);

		if (r < 0)
			return r;
		CHECK(used <= piece);
		off += used;
		if (r == 1) {
			CHECK(obj);
			CHECK(n < max_out);
			out[n++] = obj;
		} else {
			CHECK(!obj);
			CHECK(used == piece);
		}
	}
	return n;
}

static void test_split_and_joined(void)
{
	const char *text = "{\"QMP\": {\"version\": {}}}\r\n{\"return\": {}, \"id\": \"sb-1\"}\r\n"
			   "{\"event\": \"STOP\", \"timestamp\": {\"seconds\": 1, \"microseconds\": 2}}\r\n";

	/* Every piece size from one byte to the whole text gives the same three values. */
	for (size_t step = 1; step <= strlen(text); step++) {
		struct json_stream *s = json_stream_new(1 << 20, 16);
		struct json_object *out[4] = { 0 };
		struct sb_error err = { 0 };
		int n = feed_all(s, text, step, out, 4, &err);

		CHECK_MSG(n == 3, "step %zu: %d (%s)", step, n, err.msg);
		CHECK(json_object_object_get_ex(out[0], "QMP", NULL));
		CHECK(json_object_object_get_ex(out[1], "return", NULL));
		CHECK(json_object_object_get_ex(out[2], "event", NULL));
		CHECK(json_stream_pending(s) == 0);
		for (int i = 0; i < n; i++)
			json_object_put(out[i]);
		json_stream_free(s);
	}
}

static void test_pending(void)
{
	struct json_stream *s = json_stream_new(1 << 20, 16);
	struct json_object *obj = NULL;
	struct sb_error err = { 0 };
	size_t used;

	CHECK(json_stream_feed(s, "\r\n  ", 4, &used, &obj, "peer", &err) == 0);
	CHECK(json_stream_pending(s) == 0); /* whitespace only: not mid-message */
	CHECK(json_stream_feed(s, "{\"ret", 5, &used, &obj, "peer", &err) == 0);
	CHECK(json_stream_pending(s) == 5);
	json_stream_free(s);
}

static void test_oversized(void)
{
	/* 100-byte limit: a 101-byte message fails, a 100-byte one passes. */
	char big[200], ok[200];
	struct json_object *out[2] = { 0 };
	struct sb_error err = { 0 };
	struct json_stream *s;

	snprintf(ok, sizeof(ok), "{\"a\":\"%0*d\"}", 100 - 8, 0);
	CHECK(strlen(ok) == 100);
	snprintf(big, sizeof(big), "{\"a\":\"%0*d\"}", 101 - 8, 0);
	CHECK(strlen(big) == 101);

	s = json_stream_new(100, 16);
	CHECK(feed_all(s, ok, 7, out, 2, &err) == 1);
	json_object_put(out[0]);
	json_stream_free(s);

	s = json_stream_new(100, 16);
	CHECK(feed_all(s, big, 7, out, 2, &err) == -EMSGSIZE);
	CHECK_MSG(strstr(err.msg, "larger than the limit of 100 bytes"), "%s", err.msg);
	/* A failed stream stays failed. */
	CHECK(feed_all(s, ok, 7, out, 2, &err) == -EBADMSG);
	json_stream_free(s);

	/* An endless string that never closes hits the limit too. */
	s = json_stream_new(1000, 16);
	char *endless = malloc(5000);
	CHECK(endless);
	memset(endless, 'x', 4999);
	endless[0] = '{';
	endless[1] = '"';
	endless[4999] = '\0';
	CHECK(feed_all(s, endless, 4999, out, 2, &err) == -EMSGSIZE);
	free(endless);
	json_stream_free(s);
}

static void test_depth(void)
{
	struct json_object *out[2] = { 0 };
	struct sb_error err = { 0 };
	struct json_stream *s = json_stream_new(1 << 20, 4);

	CHECK(feed_all(s, "{\"a\":[[[1]]]}", 3, out, 2, &err) == 1);
	json_object_put(out[0]);
	CHECK(feed_all(s, "{\"a\":[[[[[[1]]]]]]}", 3, out, 2, &err) == -EMSGSIZE);
	CHECK_MSG(strstr(err.msg, "nested deeper than 4"), "%s", err.msg);
	json_stream_free(s);
}

static void test_invalid(void)
{
	static const char *const bad[] = {
		"garbage\r\n",
		"{\"a\":1,,}",
		"{\"a\":\"\xff\xfe\"}",   /* not UTF-8 */
		"}",
		"{\"a\" 1}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json_stream *s = json_stream_new(1 << 20, 16);
		struct json_object *out[2] = { 0 };
		struct sb_error err = { 0 };

		CHECK_MSG(feed_all(s, bad[i], 1, out, 2, &err) == -EBADMSG, "input %zu", i);
		CHECK_MSG(strstr(err.msg, "peer sent invalid JSON"), "%s", err.msg);
		json_stream_free(s);
	}
}

int main(void)
{
	test_split_and_joined();
	test_pending();
	test_oversized();
	test_depth();
	test_invalid();
	printf("ok\n");
	return 0;
}
