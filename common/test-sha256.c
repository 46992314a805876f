// SPDX-License-Identifier: GPL-2.0-or-later
/* SHA-256 against the FIPS 180-2 examples, fed whole and in uneven pieces. */
#include <string.h>

#include "check.h"
#include "sha256.h"

static void test_sha256(void)
{
	struct sha256 s;
	char hex[65];

	sha256_init(&s);
	sha256_update(&s, "abc", 3);
	sha256_hex(&s, hex);
	CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
	static char a[1001];
	memset(a, 'a', sizeof(a));
	sha256_init(&s);
	for (int i = 0; i < 1000; i++)
		sha256_update(&s, a, i % 2 ? 999 : 1001); /* a million, in uneven pieces */
	sha256_hex(&s, hex);
	CHECK(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

int main(void)
{
	test_sha256();
	return 0;
}
