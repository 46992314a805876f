// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the LAVA job log importer (lava-log.h), as a hostile
 * DUT or lab sees it: the input is a whole job log, one YAML flow record a
 * line, with reports between their markers. Any log must end in a clean
 * error or in reports that are what their markers promise: each one's
 * length and SHA-256 are recomputed here from the bytes handed back, and a
 * mismatch aborts (the importer writes those bytes into the results store).
 * The test cases of the same log (lava_log_cases(), import-lava --partial)
 * must come back as strings, each with its case, definition and result.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true && meson compile -C build-fuzz
 *   build-fuzz/lava/fuzz-lava-log -max_total_time=60 -dict=lava/fuzz-lava-log.dict lava/fuzz-corpus
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lava-log.h"
#include "sha256.h"

#define MAX_INPUT (1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lava_log log = { 0 };
	struct lava_cases cases = { 0 };
	struct sb_error err = { 0 };

	if (size > MAX_INPUT)
		return 0;
	if (lava_log_cases("fuzz.log", (const char *)data, size, &cases, &err) == 0) {
		for (size_t i = 0; i < cases.n_cases; i++)
			if (!cases.cases[i].name || !cases.cases[i].definition || !cases.cases[i].result ||
			    !strcmp(cases.cases[i].definition, "lava"))
				abort();
		if (cases.n_cases > LAVA_MAX_CASES || (cases.begin_id && !cases.begin_line))
			abort();
		lava_cases_done(&cases);
	}
	if (lava_log_parse("fuzz.log", (const char *)data, size, &log, &err) < 0)
		return 0;
	if (log.n_reports == 0 || log.n_reports > LAVA_MAX_REPORTS)
		abort();
	for (size_t i = 0; i < log.n_reports; i++) {
		const struct lava_report *r = &log.reports[i];
		struct sha256 s;
		char hex[65];

		if (!r->id || !r->data || r->data[r->len] != '\0' || r->len > LAVA_REPORT_MAX_BYTES)
			abort();
		sha256_init(&s);
		sha256_update(&s, r->data, r->len);
		sha256_hex(&s, hex);
		if (strcmp(hex, r->sha256))
			abort();
	}
	lava_log_done(&log);
	return 0;
}
