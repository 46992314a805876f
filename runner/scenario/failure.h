/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The first failure of a scenario's action, kept for its window's error:
 * what failed first is the cause, what fails after it (the destination
 * gone, the migration cancelled) its consequences. The migrating
 * scenarios (dirty-log, postcopy-restore) latch theirs here.
 */
#pragma once

#include <stdbool.h>

#include "error.h"
#include "macro.h"

struct scenario_failure {
	bool failed;
	char error[SB_ERROR_MAX]; /* the first failure's message; may be set without failed (a step's own error) */
};

/* Notes the failure, unless one was noted already. */
void scenario_fail(struct scenario_failure *f, const char *fmt, ...) _printf_(2, 3);
