/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The telemetry records' CRC-32 (wire.h): IEEE 802.3, reflected, polynomial
 * 0xedb88320, initial and final xor 0xffffffff, as zlib's crc32().
 *
 * Header-only because its users are built apart: the guest kernel
 * (freestanding), the Linux guests' probe (static, its own compiler line)
 * and the host decoder. Like wire.h it needs nothing but <stdint.h> and
 * <stddef.h>. The unit test keeps an encoder of its own, bit by bit, so
 * that this one is checked against the format and not against itself.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct wire_crc32 {
	uint32_t table[256];
};

static inline void wire_crc32_init(struct wire_crc32 *t)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		t->table[i] = c;
	}
}

static inline uint32_t wire_crc32(const struct wire_crc32 *t, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t c = 0xffffffffu;

	while (len--)
		c = t->table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}
