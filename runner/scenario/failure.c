// SPDX-License-Identifier: GPL-2.0-or-later
/* A scenario's first failure (failure.h): apart, called by the scenarios and calling none of them. */
#include <stdarg.h>
#include <stdio.h>

#include "failure.h"

void scenario_fail(struct scenario_failure *f, const char *fmt, ...)
{
	va_list ap;

	if (f->failed)
		return;
	f->failed = true;
	va_start(ap, fmt);
	vsnprintf(f->error, sizeof(f->error), fmt, ap);
	va_end(ap);
}
