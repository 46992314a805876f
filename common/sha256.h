/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SHA-256 (FIPS 180-4): the kernel config's hash in reports, a report's checksum in a LAVA log. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t n;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
/* 64 hex digits and a NUL */
void sha256_hex(struct sha256 *s, char out[static 65]);
