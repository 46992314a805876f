// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the daemon's request parser, as a hostile local
 * client sees it: the line framing (fed in chunks whose size the first
 * input byte picks), the JSON parse with its UTF-8 and \u0000 checks, the
 * envelope, the typed fields, and the UTF-8 sanitizer the daemon uses on
 * text it echoes. Whatever the parser accepts must also sanitize cleanly.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true && meson compile -C build-fuzz
 *   build-fuzz/protocol/fuzz-protocol -max_total_time=60 -dict=protocol/fuzz-protocol.dict protocol/fuzz-corpus
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void handle(const char *line, size_t len)
{
	_cleanup_json_ struct json_object *req = NULL;
	struct json_object *id = NULL;
	struct sb_error err = {};
	enum protocol_op op;
	const char *code = NULL, *field = NULL, *s = NULL;
	unsigned long long n;
	char *copy;

	if (protocol_parse_line(line, len, PROTOCOL_MAX_DEPTH, &req, &err) < 0) {
		/* the daemon echoes the error: it must be text it can send */
		protocol_sanitize_utf8(err.msg, strlen(err.msg));
		if (!protocol_utf8_valid(err.msg, strlen(err.msg), NULL))
			abort();
		return;
	}
	/* an accepted line is valid UTF-8 without NUL */
	if (!protocol_utf8_valid(line, len, NULL))
		abort();
	if (protocol_check_envelope(req, &op, &id, &code, &field, &err) < 0)
		return;
	if (protocol_get_string(req, "run", 64, &s, &err) == 1) {
		copy = strdup(s);
		if (copy) {
			protocol_sanitize_utf8(copy, strlen(copy));
			free(copy);
		}
	}
	(void)protocol_get_uint(req, "limit", 1000, &n, &err);
	(void)protocol_get_uint(req, "max_bytes", 1u << 20, &n, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct linebuf b;
	size_t chunk, off = 1;
	char *line;
	size_t len;

	if (size < 1)
		return 0;
	chunk = (data[0] & 0x3f) + 1;
	linebuf_init(&b, 4096);
	while (off < size) {
		char *where;
		size_t room, n;

		if (linebuf_reserve(&b, chunk, &where, &room) < 0)
			break;
		n = size - off < chunk ? size - off : chunk;
		if (n > room)
			n = room;
		memcpy(where, data + off, n);
		linebuf_commit(&b, n);
		off += n;
		int r;
		while ((r = linebuf_next_line(&b, &line, &len)) == 1)
			handle(line, len);
		if (r < 0)
			break;
	}
	linebuf_done(&b);
	return 0;
}
