// SPDX-License-Identifier: GPL-2.0-or-later
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void log_msg(int priority, const char *fmt, ...)
{
	static int journal = -1;
	char buf[2048];
	va_list ap;

	if (journal < 0)
		journal = getenv("JOURNAL_STREAM") ? 1 : 0;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (journal)
		fprintf(stderr, "<%d>%s\n", priority, buf);
	else
		fprintf(stderr, "snapbenchd: %s\n", buf);
}
