// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the run spec parser (spec files and the submit op's
 * spec come from users). Property: a spec that parses and validates,
 * written back with spec_to_json() and parsed again, validates to the same
 * JSON (the normalized spec is a fixed point).
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true && meson compile -C build-fuzz
 *   build-fuzz/runner/spec/fuzz-spec -max_total_time=60 -dict=runner/spec/fuzz-spec.dict runner/spec/fuzz-corpus
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The normalized JSON text of a spec read from text, or NULL when it does not parse or validate. */
static char *normalized(const char *text, size_t len)
{
	struct run_spec spec;
	struct sb_error err = {};
	_cleanup_json_ struct json_object *j = NULL;
	char *out = NULL;

	if (spec_init(&spec) < 0)
		return NULL;
	if (spec_apply_json(&spec, text, len, "fuzz", &err) == 0 && spec_validate(&spec, &err) == 0 &&
	    spec_to_json(&spec, &j) == 0)
		out = strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
	spec_done(&spec);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *first = normalized((const char *)data, size), *second;

	if (!first)
		return 0;
	second = normalized(first, strlen(first));
	if (!second || strcmp(first, second))
		abort(); /* the normalized spec must re-validate to itself */
	free(first);
	free(second);
	return 0;
}
