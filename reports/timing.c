// SPDX-License-Identifier: GPL-2.0-or-later
/* A report's timing (native or emulated) and which metrics it touches. */
#include <stdio.h>
#include <string.h>

#include "json-util.h"
#include "timing.h"

static bool is_tcg(struct json_object *kernel)
{
	const char *accel = json_lookup_string(json_lookup(kernel, "host_vm"), "accel");

	return accel && !strcmp(accel, "tcg");
}

void report_timing_of(struct json_object *report, const char *label, struct report_timing *out)
{
	struct json_object *accel = json_lookup(report, "accel");
	const char *timing = json_lookup_string(accel, "timing");
	struct json_object *arms = json_lookup(report, "arms");
	size_t n = arms && json_object_is_type(arms, json_type_array) ? json_object_array_length(arms) : 0;

	*out = (struct report_timing){ .source = "none recorded" };
	if (timing) {
		const char *reason = json_lookup_string(accel, "reason");
		out->emulated = !strcmp(timing, "emulated");
		out->source = "accel.timing";
		snprintf(out->why, sizeof(out->why), "%s", reason && *reason ? reason : timing);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *arm = json_object_array_get_idx(arms, i);
		const char *l = json_lookup_string(arm, "label");
		if (label && (!l || strcmp(l, label)))
			continue;
		if (is_tcg(json_lookup(arm, "kernel"))) {
			out->emulated = true;
			out->source = "arms[].kernel.host_vm.accel";
			snprintf(out->why, sizeof(out->why), "arm %s's host VM ran under TCG", l ? l : "?");
			return;
		}
	}
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

bool report_metric_time_based(const char *metric, const char *unit)
{
	static const char *const times[] = { "ns", "us", "\xc2\xb5s", "ms", "s" };

	if (unit && *unit) {
		size_t len = strlen(unit);
		for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
			if (!strcmp(unit, times[i]))
				return true;
		return ends_with(unit, len, "/s");
	}
	if (!metric)
		return false;
	size_t len = strcspn(metric, ".");
	return ends_with(metric, len, "_per_s") || ends_with(metric, len, "_ns") || ends_with(metric, len, "_ms") ||
	       ends_with(metric, len, "_s");
}

bool report_metric_time_based_in(struct json_object *report, const char *metric)
{
	struct json_object *info = json_lookup(report, "metric_info");
	const char *unit = json_lookup_string(json_lookup(info, metric), "unit");

	if (!unit && strchr(metric, '.')) {
		char base[128];
		snprintf(base, sizeof(base), "%.*s", (int)strcspn(metric, "."), metric);
		unit = json_lookup_string(json_lookup(info, base), "unit");
	}
	return report_metric_time_based(metric, unit);
}
