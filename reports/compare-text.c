// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdio.h>
#include <string.h>

#include "compare-private.h"
#include "compare.h"

void text_sanitize(const char *in, char *out, size_t size)
{
	size_t i = 0, max = size - 1;
	const char *p = in;

	for (; *p && i < max; p++)
		out[i++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
	if (*p && max >= 3)
		memcpy(out + max - 3, "...", 3), i = max;
	out[i] = '\0';
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

void metric_display_name(const char *metric, char *buf, size_t size)
{
	char base[128], stem[128];
	const char *dot = strchr(metric, '.');
	size_t len = dot ? (size_t)(dot - metric) : strlen(metric);
	const char *unit = "";

	if (len >= sizeof(base))
		len = sizeof(base) - 1;
	memcpy(base, metric, len);
	base[len] = '\0';

	if (ends_with(base, len, "_per_s")) {
		base[len - 6] = '\0';
		unit = "/s";
	} else if (ends_with(base, len, "_ns")) {
		base[len - 3] = '\0';
		unit = " (ns)";
	} else if (ends_with(base, len, "_s")) {
		base[len - 2] = '\0';
		unit = " (s)";
	}

	/* "latency_p999" reads as p99.9, the seed's name for it */
	size_t j = 0;
	for (const char *p = base; *p && j + 2 < sizeof(stem); p++) {
		if (!strncmp(p, "p999", 4) && (p[4] == '\0' || p[4] == '_')) {
			if (j + 6 >= sizeof(stem))
				break;
			memcpy(stem + j, "p99.9", 5);
			j += 5;
			p += 3;
			continue;
		}
		stem[j++] = *p == '_' ? ' ' : *p;
	}
	stem[j] = '\0';

	char raw[256];
	if (dot)
		snprintf(raw, sizeof(raw), "%s%s (%s)", stem, unit, dot + 1);
	else
		snprintf(raw, sizeof(raw), "%s%s", stem, unit);
	text_sanitize(raw, buf, size);
}

/* A kernel arm's "kernel" object in report root (docs/kernel-arms.md), or NULL: the arm ran on the report's host. */
struct json_object *compare_arm_kernel(struct json_object *root, const char *label)
{
	struct json_object *arms = json_lookup(root, "arms");
	size_t n = arms && json_object_is_type(arms, json_type_array) ? json_object_array_length(arms) : 0;

	for (size_t i = 0; i < n; i++) {
		struct json_object *a = json_object_array_get_idx(arms, i);
		const char *l = json_lookup_string(a, "label");
		if (l && label && !strcmp(l, label))
			return json_lookup(a, "kernel");
	}
	return NULL;
}

/* the release a side's repetitions ran on: its arm's host VM kernel, else the host's */
const char *compare_side_release(const struct compare_side *s, size_t i, bool *host_vm)
{
	struct json_object *k = compare_arm_kernel(s->reports[i]->root, s->label);

	*host_vm = k != NULL;
	return k ? json_lookup_string(k, "release") : json_lookup_string(json_lookup(s->reports[i]->root, "host"), "kernel_release");
}
