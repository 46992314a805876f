// SPDX-License-Identifier: GPL-2.0-or-later
/* base64 (RFC 4648, with padding). */
#include <errno.h>
#include <stdint.h>

#include "base64.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

void base64_encode(const void *in, size_t n, char *out)
{
	const unsigned char *p = in;
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		out[o++] = b64[(v >> 18) & 63];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	out[o] = '\0';
}

static int b64_value(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

size_t base64_decoded_len(const char *s, size_t len)
{
	size_t pad = 0;

	if (len == 0 || len % 4)
		return len / 4 * 3;
	pad = (s[len - 1] == '=') + (s[len - 1] == '=' && s[len - 2] == '=');
	return len / 4 * 3 - pad;
}

ssize_t base64_decode(const char *s, size_t len, void *out)
{
	unsigned char *o = out;
	size_t n = 0;

	if (len % 4)
		return -EINVAL;
	for (size_t i = 0; i < len; i += 4) {
		int v[4], pad = 0;
		for (int k = 0; k < 4; k++) {
			if (s[i + k] == '=') {
				/* padding only at the very end, at most two */
				if (i + 4 != len || k < 2)
					return -EINVAL;
				v[k] = 0;
				pad++;
				continue;
			}
			if (pad)
				return -EINVAL;
			v[k] = b64_value(s[i + k]);
			if (v[k] < 0)
				return -EINVAL;
		}
		uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
		o[n++] = (unsigned char)(x >> 16);
		if (pad < 2)
			o[n++] = (unsigned char)(x >> 8);
		if (pad < 1)
			o[n++] = (unsigned char)x;
	}
	return (ssize_t)n;
}
