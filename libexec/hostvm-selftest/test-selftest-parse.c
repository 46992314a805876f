// SPDX-License-Identifier: GPL-2.0-or-later
/* The selftest's lines as 7.2's dirty_log_perf_test prints them, and the summary. */
#include "selftest-parse.h"

#include <stdio.h>
#include <stdlib.h>

/* libexec/hostvm-selftest/ uses libc only (docs/architecture.md): its own check */
#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                              \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

int main(void)
{
	unsigned it = 0;
	enum selftest_phase ph = SELFTEST_N_PHASES;
	double s = -1, med, lo, hi;
	double v[] = { 3.0, 1.0, 2.0, 10.0 };

	CHECK(selftest_parse_line("Iteration 2 dirty memory time: 0.004210000s", &it, &ph, &s) == 1);
	CHECK(it == 2 && ph == SELFTEST_DIRTY_MEMORY && s > 0.0042099 && s < 0.0042101);
	CHECK(selftest_parse_line("Iteration 3 get dirty log time: 1.000000001s\n", &it, &ph, &s) == 1);
	CHECK(it == 3 && ph == SELFTEST_GET_DIRTY_LOG);
	CHECK(selftest_parse_line("Iteration 3 clear dirty log time: 3.020000000s", &it, &ph, &s) == 1);
	CHECK(ph == SELFTEST_CLEAR_DIRTY_LOG && s > 3.0199 && s < 3.0201);
	/* the totals and other lines are not an iteration's */
	CHECK(selftest_parse_line("Clear dirty log over 3 iterations took 9.0s. (Avg 3.0s/iteration)", &it, &ph, &s) == 0);
	CHECK(selftest_parse_line("Populate memory time: 1.0s", &it, &ph, &s) == 0);
	CHECK(selftest_parse_line("Iteration 1 dirty memory time: 1.0", &it, &ph, &s) == 0);
	CHECK(selftest_parse_line("Iteration x dirty memory time: 1.0s", &it, &ph, &s) == 0);
	selftest_summary(v, 4, &med, &lo, &hi);
	CHECK(med == 2.5 && lo == 1.0 && hi == 10.0);
	selftest_summary(v, 3, &med, &lo, &hi);
	CHECK(med == 2.0 && lo == 1.0 && hi == 3.0);
	return 0;
}
