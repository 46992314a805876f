/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapbench compare's comparison (verb-compare.c), which bisect-step
 * (verb-bisect-step.c) runs with its own usage and its judgement.
 */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "compare.h"

/* bisect-step's judgement of a comparison, made before it is rendered: every rendering says its exit code. */
struct compare_outcome {
	/* fills the rest from the computed comparison; a pointer, so that compare's file does not call bisect-step's */
	void (*judge)(const struct compare_result *res, struct compare_outcome *out);
	bool computed;                 /* the comparison ran */
	bool no_repetitions;           /* not computed: a side had no completed repetition (its runs failed) */
	int code;                      /* the bisect exit code (BISECT_*), once computed */
	char why[1024];                /* the line bisect-step prints after its verdict */
	char **trouble;                /* a copy of the patched side's notes of a kernel in trouble (NULL on ENOMEM) */
};

/*
 * snapbench compare with argv, its --help from usage_fn; with outcome,
 * bisect-step's comparison, judged by outcome->judge before it is
 * rendered. The exit code (the comparison's, EXIT_USAGE, EXIT_FAIL).
 */
int compare_run(int argc, char **argv, void (*usage_fn)(FILE *), struct compare_outcome *outcome);
