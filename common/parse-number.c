// SPDX-License-Identifier: GPL-2.0-or-later
#include "parse-number.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The leading digits of s as a value: -EINVAL without a digit, -ERANGE past 64 bits. */
static int digits(const char *s, uint64_t *ret, const char **end)
{
	char *e;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &e, 10);
	*end = e;
	if (errno)
		return -ERANGE;
	*ret = v;
	return 0;
}

int parse_uint64(const char *s, uint64_t min, uint64_t max, uint64_t *ret, struct sb_error *err)
{
	const char *end;
	uint64_t v;
	int r;

	r = digits(s, &v, &end);
	if (r == -EINVAL || (r == 0 && *end))
		return sb_error_set(err, -EINVAL, "'%s' is not a whole number", s);
	if (r < 0 || v < min || v > max)
		return sb_error_set(err, -ERANGE, "'%s' is out of range: give %" PRIu64 " to %" PRIu64, s, min, max);
	*ret = v;
	return 0;
}

int parse_unsigned(const char *s, unsigned min, unsigned max, unsigned *ret, struct sb_error *err)
{
	uint64_t v;
	int r = parse_uint64(s, min, max, &v, err);

	if (r < 0)
		return r;
	*ret = (unsigned)v;
	return 0;
}

int parse_int64(const char *s, int64_t min, int64_t max, int64_t *ret, struct sb_error *err)
{
	const char *p = s[0] == '-' ? s + 1 : s, *end;
	uint64_t mag;
	int64_t v = 0;
	int r;

	r = digits(p, &mag, &end);
	if (r == -EINVAL || (r == 0 && *end))
		return sb_error_set(err, -EINVAL, "'%s' is not a whole number", s);
	if (r == 0 && p == s && mag <= INT64_MAX)
		v = (int64_t)mag;
	else if (r == 0 && p != s && mag <= (uint64_t)INT64_MAX + 1)
		v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	else
		r = -ERANGE;
	if (r < 0 || v < min || v > max)
		return sb_error_set(err, -ERANGE, "'%s' is out of range: give %" PRId64 " to %" PRId64, s, min, max);
	*ret = v;
	return 0;
}

int parse_double(const char *s, double min, double max, double *ret, struct sb_error *err)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || end == s || *end || (errno && errno != ERANGE) || isnan(v))
		return sb_error_set(err, -EINVAL, "'%s' is not a number", s);
	if (errno == ERANGE || !isfinite(v) || !(v >= min && v <= max))
		return sb_error_set(err, -ERANGE, "'%s' is out of range: give %g to %g", s, min, max);
	*ret = v;
	return 0;
}

int parse_duration(const char *s, double unit_s, double min, double max, double *ret, struct sb_error *err)
{
	static const struct {
		const char *suffix;
		double s;
	} units[] = { { "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1 }, { "m", 60 }, { "h", 3600 } };
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || end == s || (errno && errno != ERANGE) || isnan(v) || v < 0 || !isfinite(v) || isspace((unsigned char)*s))
		goto invalid;
	if (*end) {
		size_t i;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].suffix))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			goto invalid;
		unit_s = units[i].s;
	}
	v *= unit_s;
	if (!(v >= min && v <= max))
		return sb_error_set(err, -ERANGE, "'%s' is out of range: give %g s to %g s", s, min, max);
	*ret = v;
	return 0;
invalid:
	return sb_error_set(err, -EINVAL, "'%s' is not a duration: give a number, or one with a unit (ns, us, ms, s, m, h) such as 500ms or 2s", s);
}

int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *ret, struct sb_error *err)
{
	const char *end;
	uint64_t v, mul = 1;
	int r;

	r = digits(s, &v, &end);
	if (r == -EINVAL)
		goto invalid;
	if (r < 0)
		goto range;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		mul = UINT64_C(1) << 10;
		break;
	case 'M':
		mul = UINT64_C(1) << 20;
		break;
	case 'G':
		mul = UINT64_C(1) << 30;
		break;
	case 'T':
		mul = UINT64_C(1) << 40;
		break;
	default:
		goto invalid;
	}
	if (mul > 1) {
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
	}
	if (*end)
		goto invalid;
	if (v > UINT64_MAX / mul || v * mul < min || v * mul > max)
		goto range;
	*ret = v * mul;
	return 0;

range:
	return sb_error_set(err, -ERANGE, "'%s' is out of range: give %" PRIu64 " to %" PRIu64 " bytes", s, min,
				    max);

invalid:
	return sb_error_set(err, -EINVAL, "'%s' is not a size: give bytes, or a number with K, M, G or T such as 256M",
			    s);
}
