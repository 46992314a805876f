/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JSON numbers for reports: doubles with 10 significant digits (enough for
 * any rate or duration we write, without the 17-digit noise of the default
 * "%.17g"), and null for NAN or infinity, which JSON cannot hold. The
 * format is set per value, so nothing process-wide changes.
 */
#pragma once

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>

static inline struct json_object *json_number_new(double v)
{
	char buf[64];

	if (!isfinite(v))
		return NULL; /* JSON null */
	if (v == 0)
		v = 0; /* no "-0" */
	snprintf(buf, sizeof(buf), "%.10g", v);
	return json_object_new_double_s(v, buf);
}
