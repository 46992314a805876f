// SPDX-License-Identifier: GPL-2.0-or-later
/* dirty_log_perf_test's per-iteration lines, and median (min max) of a phase's figures. */
#include "selftest-parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *text, *name;
} phases[SELFTEST_N_PHASES] = {
	[SELFTEST_DIRTY_MEMORY] = { " dirty memory time: ", "dirty_memory" },
	[SELFTEST_GET_DIRTY_LOG] = { " get dirty log time: ", "get_dirty_log" },
	[SELFTEST_CLEAR_DIRTY_LOG] = { " clear dirty log time: ", "clear_dirty_log" },
};

const char *selftest_phase_name(enum selftest_phase p)
{
	return p < SELFTEST_N_PHASES ? phases[p].name : "?";
}

int selftest_parse_line(const char *line, unsigned *iteration, enum selftest_phase *phase, double *seconds)
{
	static const char prefix[] = "Iteration ";
	const char *p = strstr(line, prefix);
	char *end;
	unsigned long it;
	double s;

	if (!p)
		return 0;
	p += sizeof(prefix) - 1;
	it = strtoul(p, &end, 10);
	if (end == p)
		return 0;
	for (int i = 0; i < SELFTEST_N_PHASES; i++) {
		size_t n = strlen(phases[i].text);
		if (strncmp(end, phases[i].text, n))
			continue;
		s = strtod(end + n, &end);
		/* "0.123456789s": the selftest's %ld.%.9lds */
		if (*end != 's' || s < 0)
			return 0;
		*iteration = (unsigned)it;
		*phase = (enum selftest_phase)i;
		*seconds = s;
		return 1;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void selftest_summary(double *v, size_t n, double *median, double *min, double *max)
{
	qsort(v, n, sizeof(*v), cmp_double);
	*min = v[0];
	*max = v[n - 1];
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
