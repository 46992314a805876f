/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a KVM selftest prints per iteration, read by snapbench-hostvm-selftest
 * (docs/kernel-arms.md, "The riscv64 host VM"): dirty_log_perf_test's
 * "Iteration N dirty memory time: S.NNNNNNNNNs", "... get dirty log time:
 * ...", "... clear dirty log time: ...". Plain C, no snapbench library: the
 * program is linked statically for riscv64 with Debian's cross compiler.
 */
#pragma once

#include <stddef.h>

enum selftest_phase {
	SELFTEST_DIRTY_MEMORY,
	SELFTEST_GET_DIRTY_LOG,
	SELFTEST_CLEAR_DIRTY_LOG,
	SELFTEST_N_PHASES,
};

/* "dirty_memory" ... (the report's window names) */
const char *selftest_phase_name(enum selftest_phase p);

/* 1 when line is an iteration's figure (*iteration, *phase, *seconds set), 0 when it is not one. */
int selftest_parse_line(const char *line, unsigned *iteration, enum selftest_phase *phase, double *seconds);

/* median, min and max of v[0..n) (sorted in place); n > 0 */
void selftest_summary(double *v, size_t n, double *median, double *min, double *max);
