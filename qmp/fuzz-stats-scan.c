// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the query-stats scanner (stats-scan.c): any text,
 * scanned as a reply of either target; where the scanner takes it, json-c's
 * path must take it too and give the same stats (stats-scan-check.c), or
 * the target aborts. Seeds: QEMU's lines in fuzz-corpus-stats/.
 *
 *   build-fuzz/qmp/fuzz-stats-scan -dict=qmp/fuzz-stats-scan.dict qmp/fuzz-corpus-stats
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "stats-scan-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];

	if (size > (1u << 16))
		return 0;
	if (qmp_stats_scan_check((const char *)data, size, why, sizeof(why)) == -1) {
		fprintf(stderr, "fuzz-stats-scan: %s\n", why);
		abort();
	}
	return 0;
}
