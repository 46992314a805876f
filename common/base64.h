/* SPDX-License-Identifier: GPL-2.0-or-later */
/* base64 (RFC 4648, with padding): what the guest agent speaks (qga/), and
 * the report a LAVA job prints on its console (lava/). libc only. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Encoded length of n bytes, NUL excluded. */
size_t base64_encoded_len(size_t n);
/* Encodes n bytes into out (base64_encoded_len(n) + 1 bytes), NUL-terminated. */
void base64_encode(const void *in, size_t n, char *out);
/*
 * The length s (len chars) decodes to, from its length and trailing
 * padding alone; what base64_decode() writes at most, for a bound
 * before decoding.
 */
size_t base64_decoded_len(const char *s, size_t len);
/*
 * Decodes s (len chars; whitespace is not allowed) into out (at least
 * base64_decoded_len(s, len) bytes). Returns the decoded length or
 * -EINVAL for bad input.
 */
ssize_t base64_decode(const char *s, size_t len, void *out);
