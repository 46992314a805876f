// SPDX-License-Identifier: GPL-2.0-or-later
/* base64: RFC 4648 vectors, round trips, rejections. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base64.h"

static void vector(const char *plain, const char *enc)
{
	char out[64], dec[64];
	ssize_t n;

	base64_encode(plain, strlen(plain), out);
	CHECK_MSG(!strcmp(out, enc), "encode(%s) = %s, want %s", plain, out, enc);
	CHECK(base64_encoded_len(strlen(plain)) == strlen(enc));
	CHECK(base64_decoded_len(enc, strlen(enc)) == strlen(plain));
	n = base64_decode(enc, strlen(enc), dec);
	CHECK_MSG(n == (ssize_t)strlen(plain) && !memcmp(dec, plain, (size_t)n), "decode(%s)", enc);
}

int main(void)
{
	/* RFC 4648 section 10 */
	vector("", "");
	vector("f", "Zg==");
	vector("fo", "Zm8=");
	vector("foo", "Zm9v");
	vector("foob", "Zm9vYg==");
	vector("fooba", "Zm9vYmE=");
	vector("foobar", "Zm9vYmFy");

	/* every byte value and every length up to 300 round-trips */
	unsigned char in[300], dec[300];
	char enc[401];
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 3);
	for (size_t n = 0; n <= sizeof(in); n++) {
		base64_encode(in, n, enc);
		CHECK(strlen(enc) == base64_encoded_len(n));
		ssize_t k = base64_decode(enc, strlen(enc), dec);
		CHECK_MSG(k == (ssize_t)n && !memcmp(in, dec, n), "round trip of %zu bytes", n);
		CHECK(base64_decoded_len(enc, strlen(enc)) == n);
	}

	/* what a hostile or broken agent might send */
	static const char *const bad[] = { "Zg=", "Zg", "Z===", "====", "Zm9v\n", "Zm 9", "Zm9*", "Zg==Zg==", "Z=g=", "Zm=v" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_MSG(base64_decode(bad[i], strlen(bad[i]), dec) == -EINVAL, "accepted bad input \"%s\"", bad[i]);
	/* decode never writes more than decoded_len, also for input it rejects */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned char guard[8];
		memset(guard, 0x5a, sizeof(guard));
		(void)base64_decode(bad[i], strlen(bad[i]), guard);
		for (size_t k = base64_decoded_len(bad[i], strlen(bad[i])); k < sizeof(guard); k++)
			CHECK_MSG(guard[k] == 0x5a, "decoding \"%s\" wrote byte %zu", bad[i], k);
	}
	return 0;
}
