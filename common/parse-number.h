/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Numbers from text (flags, spec values, files): all of the text, decimal,
 * within bounds. Each returns 0, -EINVAL when the text is not such a number
 * or -ERANGE when it is one outside [min, max], and sets *ret only on
 * success. err (may be NULL) gets a message that names the text and the
 * range; callers with a wording of their own pass NULL and map the code.
 * libc only (common_dep).
 */
#pragma once

#include <stdint.h>

#include "error.h"

/* Digits only: no sign, no space, no base prefix. */
int parse_uint64(const char *s, uint64_t min, uint64_t max, uint64_t *ret, struct sb_error *err);
int parse_unsigned(const char *s, unsigned min, unsigned max, unsigned *ret, struct sb_error *err);
/* Digits with an optional leading '-'. */
int parse_int64(const char *s, int64_t min, int64_t max, int64_t *ret, struct sb_error *err);

/* What strtod() reads, all of it, finite; inclusive bounds. */
int parse_double(const char *s, double min, double max, double *ret, struct sb_error *err);

/*
 * A size in bytes: digits, optionally with K (or k), M, G or T for binary
 * multiples, which may be followed by "B" or "iB" ("2M", "2MiB", "1GB").
 * -ERANGE also when the value does not fit 64 bits.
 */
int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *ret, struct sb_error *err);

/*
 * A duration, in seconds in *ret: a number (what parse_double() reads,
 * not negative) in unit_s seconds, or with a unit: ns, us, ms, s, m or h
 * ("500ms", "2s", "1.5m"). [min, max] in seconds, inclusive.
 */
int parse_duration(const char *s, double unit_s, double min, double max, double *ret, struct sb_error *err);
