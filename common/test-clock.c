// SPDX-License-Identifier: GPL-2.0-or-later
#include "check.h"

#include <stdio.h>

#include "clock.h"

int main(void)
{
	/* poll() timeouts: < 0 is none, so the other wins; else the sooner */
	CHECK(poll_timeout_min(-1, -1) == -1);
	CHECK(poll_timeout_min(-1, 250) == 250);
	CHECK(poll_timeout_min(250, -1) == 250);
	CHECK(poll_timeout_min(0, 250) == 0);
	CHECK(poll_timeout_min(400, 250) == 250);

	/* a deadline past is 0; one ahead is rounded up, never 0 */
	uint64_t now = mono_ns();
	CHECK(ms_until(now) == 0);
	CHECK(ms_until(now - NSEC_PER_SEC) == 0);
	int ms = ms_until(mono_ns() + NSEC_PER_MSEC / 2);
	CHECK(ms == 0 || ms == 1);
	CHECK(ms_until(mono_ns() + 10 * NSEC_PER_SEC) > 9000);
	/* far ahead: the largest int, not a negative one */
	CHECK(ms_until(UINT64_MAX) == 0x7fffffff);
	printf("clock: ok\n");
	return 0;
}
