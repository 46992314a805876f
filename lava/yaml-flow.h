/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The subset of YAML a LAVA job log is written in: one flow node per record,
 *
 *   - {"dt": "2026-12-01T10:00:00.123456", "lvl": "target", "msg": "text"}
 *   - {"dt": "...", "lvl": "results", "msg": {"case": "pf_per_s", "measurement": ! "1234.5"}}
 *
 * A flow mapping ({k: v, ...}), a flow sequence ([a, b]), a double-quoted
 * scalar (YAML's escapes: \" \\ \/ \0 \a \b \t \n \v \f \r \e, space, \N \_
 * \L \P, \xXX, \uXXXX, \UXXXXXXXX), a single-quoted one ('' for a quote) or a
 * plain one, each optionally after a tag (!, !!str, !tag), which is dropped:
 * every scalar becomes a string, as it was written (no numbers, no nulls,
 * no booleans), so "! \"1234.5\"" is the string 1234.5. Not YAML's block
 * styles, anchors, aliases, multi-line scalars or complex keys: a line
 * that needs them is refused. docs/lava.md.
 */
#pragma once

#include <stddef.h>

#include <json-c/json.h>

#include "error.h"

#define YAML_FLOW_MAX_DEPTH 16

/*
 * Parses text (len bytes, one line without its newline) as one flow node
 * followed by nothing but spaces. Returns 0 with *ret a json-c object,
 * array or string; -EBADMSG (err says where and why), -ENOMEM. *ret is
 * set only on success.
 */
int yaml_flow_parse(const char *text, size_t len, struct json_object **ret, struct sb_error *err);
