// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The drain (drain.h) on a real pipe and its thread: every byte written
 * comes out in order; the notify fd is readable exactly while bytes or the
 * end wait (it is written and read only when that changes), and the end
 * of the stream is seen once everything was taken.
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "drain.h"

static bool readable(struct drain *d, int timeout_ms)
{
	struct pollfd p = { .fd = drain_poll_fd(d), .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1;
}

/* takes everything there is now into out at *off */
static size_t take_all(struct drain *d, char *out, size_t *off, size_t cap, bool *eof)
{
	size_t n, total = 0;

	while ((n = drain_take(d, out + *off, cap - *off > 7 ? 7 : cap - *off, eof)) > 0) {
		*off += n;
		total += n;
	}
	return total;
}

int main(void)
{
	struct drain *d = NULL;
	char out[4096];
	size_t off = 0;
	bool eof = false;
	int p[2];

	CHECK(pipe(p) == 0);
	CHECK(drain_start(p[0], &d) == 0);
	CHECK(!readable(d, 50)); /* nothing yet */

	/* three writes before a take: one notification, all of it taken in small pieces, in order */
	CHECK(write(p[1], "abc", 3) == 3);
	CHECK(readable(d, 5000));
	CHECK(write(p[1], "defg", 4) == 4);
	CHECK(write(p[1], "hij", 3) == 3);
	for (int i = 0; i < 100 && off < 10; i++) {
		CHECK(readable(d, 5000));
		take_all(d, out, &off, sizeof(out), &eof);
	}
	CHECK_MSG(off == 10 && !memcmp(out, "abcdefghij", 10), "%zu", off);
	CHECK(!eof);
	CHECK(!readable(d, 50)); /* all taken: no longer readable */
	CHECK(drain_take(d, out, sizeof(out), &eof) == 0 && !eof);

	/* more comes: readable again */
	CHECK(write(p[1], "klm", 3) == 3);
	CHECK(readable(d, 5000));
	for (int i = 0; i < 100 && off < 13; i++) {
		CHECK(readable(d, 5000));
		take_all(d, out, &off, sizeof(out), &eof);
	}
	CHECK(off == 13 && !memcmp(out + 10, "klm", 3));
	CHECK(!readable(d, 50));

	/* the end: readable, and it stays so once the last bytes are taken */
	CHECK(write(p[1], "no", 2) == 2);
	close(p[1]);
	for (int i = 0; i < 100 && !eof; i++) {
		CHECK(readable(d, 5000));
		take_all(d, out, &off, sizeof(out), &eof);
	}
	CHECK(eof && off == 15 && !memcmp(out + 13, "no", 2));
	CHECK(readable(d, 0));
	CHECK(drain_take(d, out, sizeof(out), &eof) == 0 && eof);
	CHECK(drain_dropped(d) == 0 && drain_reads(d) >= 3);
	drain_free(d);
	close(p[0]);
	printf("ok\n");
	return 0;
}
