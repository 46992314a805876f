// SPDX-License-Identifier: GPL-2.0-or-later
#include "check.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "parse-number.h"

int main(void)
{
	struct sb_error err = {};
	uint64_t u = 7;
	int64_t i = 7;
	unsigned x = 7;
	double d = 7;

	CHECK(parse_uint64("0", 0, 10, &u, NULL) == 0 && u == 0);
	CHECK(parse_uint64("18446744073709551615", 0, UINT64_MAX, &u, NULL) == 0 && u == UINT64_MAX);
	u = 7;
	/* not numbers; *ret stays */
	const char *bad[] = { "", "-1", "+1", " 1", "1 ", "0x10", "1.5", "1k", "abc" };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		CHECK(parse_uint64(bad[k], 0, 100, &u, NULL) == -EINVAL);
		CHECK(parse_unsigned(bad[k], 0, 100, &x, NULL) == -EINVAL);
	}
	CHECK(u == 7 && x == 7);
	CHECK(parse_uint64("abc", 0, 100, &u, &err) == -EINVAL && !strcmp(err.msg, "'abc' is not a whole number"));
	CHECK(parse_uint64("101", 0, 100, &u, &err) == -ERANGE);
	CHECK_MSG(!strcmp(err.msg, "'101' is out of range: give 0 to 100"), "%s", err.msg);
	CHECK(parse_uint64("18446744073709551616", 0, UINT64_MAX, &u, NULL) == -ERANGE);
	CHECK(parse_unsigned("4", 5, 9, &x, NULL) == -ERANGE && x == 7);
	CHECK(parse_unsigned("9", 5, 9, &x, NULL) == 0 && x == 9);

	CHECK(parse_int64("-5", -10, 10, &i, NULL) == 0 && i == -5);
	CHECK(parse_int64("-9223372036854775808", INT64_MIN, 0, &i, NULL) == 0 && i == INT64_MIN);
	CHECK(parse_int64("9223372036854775808", INT64_MIN, INT64_MAX, &i, NULL) == -ERANGE);
	CHECK(parse_int64("-", -10, 10, &i, NULL) == -EINVAL);
	CHECK(parse_int64("--1", -10, 10, &i, NULL) == -EINVAL);
	CHECK(parse_int64("-11", -10, 10, &i, &err) == -ERANGE);
	CHECK_MSG(!strcmp(err.msg, "'-11' is out of range: give -10 to 10"), "%s", err.msg);

	CHECK(parse_double("0.5", 0, 1, &d, NULL) == 0 && d == 0.5);
	CHECK(parse_double("1e3", 0, 1000, &d, NULL) == 0 && d == 1000);
	d = 7;
	CHECK(parse_double("", 0, 1, &d, NULL) == -EINVAL);
	CHECK(parse_double("nan", 0, 1, &d, NULL) == -EINVAL);
	CHECK(parse_double("0.5s", 0, 1, &d, &err) == -EINVAL && !strcmp(err.msg, "'0.5s' is not a number"));
	CHECK(parse_double("inf", 0, 1e300, &d, NULL) == -ERANGE);
	CHECK(parse_double("1e999", 0, 1e300, &d, NULL) == -ERANGE);
	CHECK(parse_double("2", 0, 1.5, &d, &err) == -ERANGE);
	CHECK_MSG(!strcmp(err.msg, "'2' is out of range: give 0 to 1.5"), "%s", err.msg);
	CHECK(d == 7);

	/* durations: a bare number in the caller's unit, or with one of its own */
	CHECK(parse_duration("500", 1e-3, 0, 60, &d, NULL) == 0 && fabs(d - 0.5) < 1e-12);
	CHECK(parse_duration("500ms", 1, 0, 60, &d, NULL) == 0 && fabs(d - 0.5) < 1e-12);
	CHECK(parse_duration("2s", 1e-3, 0, 60, &d, NULL) == 0 && d == 2);
	CHECK(parse_duration("1.5m", 1, 0, 600, &d, NULL) == 0 && d == 90);
	CHECK(parse_duration("1h", 1, 0, 7200, &d, NULL) == 0 && d == 3600);
	CHECK(parse_duration("250us", 1, 0, 1, &d, NULL) == 0 && fabs(d - 250e-6) < 1e-15);
	CHECK(parse_duration("10ns", 1, 0, 1, &d, NULL) == 0 && fabs(d - 10e-9) < 1e-18);
	d = 7;
	const char *bad_durations[] = { "", "s", "-1s", "2x", "2 s", " 2s", "2S", "nan", "inf", "2sec", "1e" };
	for (size_t k = 0; k < sizeof(bad_durations) / sizeof(bad_durations[0]); k++)
		CHECK_MSG(parse_duration(bad_durations[k], 1, 0, 1e9, &d, NULL) == -EINVAL, "%s", bad_durations[k]);
	CHECK(parse_duration("2x", 1, 0, 60, &d, &err) == -EINVAL);
	CHECK_MSG(!strcmp(err.msg, "'2x' is not a duration: give a number, or one with a unit (ns, us, ms, s, m, h) such as 500ms or 2s"),
		  "%s", err.msg);
	CHECK(parse_duration("2m", 1, 0, 60, &d, &err) == -ERANGE);
	CHECK_MSG(!strcmp(err.msg, "'2m' is out of range: give 0 s to 60 s"), "%s", err.msg);
	CHECK(d == 7);

	CHECK(parse_size("4096", 0, UINT64_MAX, &u, NULL) == 0 && u == 4096);
	CHECK(parse_size("2M", 0, UINT64_MAX, &u, NULL) == 0 && u == 2u << 20);
	CHECK(parse_size("2MiB", 0, UINT64_MAX, &u, NULL) == 0 && u == 2u << 20);
	CHECK(parse_size("1GB", 0, UINT64_MAX, &u, NULL) == 0 && u == 1u << 30);
	CHECK(parse_size("3k", 0, UINT64_MAX, &u, NULL) == 0 && u == 3072);
	CHECK(parse_size("1T", 0, UINT64_MAX, &u, NULL) == 0 && u == UINT64_C(1) << 40);
	u = 7;
	CHECK(parse_size("1.5G", 0, UINT64_MAX, &u, NULL) == -EINVAL);
	CHECK(parse_size("G", 0, UINT64_MAX, &u, NULL) == -EINVAL);
	CHECK(parse_size("", 0, UINT64_MAX, &u, NULL) == -EINVAL);
	CHECK(parse_size("1B", 0, UINT64_MAX, &u, NULL) == -EINVAL);
	CHECK(parse_size("1Mx", 0, UINT64_MAX, &u, NULL) == -EINVAL);
	CHECK(parse_size("20000000T", 0, UINT64_MAX, &u, NULL) == -ERANGE);
	CHECK(parse_size("3K", 4096, UINT64_MAX, &u, &err) == -ERANGE);
	CHECK_MSG(!strcmp(err.msg, "'3K' is out of range: give 4096 to 18446744073709551615 bytes"), "%s", err.msg);
	CHECK(parse_size("x", 0, 1, &u, &err) == -EINVAL);
	CHECK(!strcmp(err.msg, "'x' is not a size: give bytes, or a number with K, M, G or T such as 256M"));
	CHECK(u == 7);
	return 0;
}
