/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The query-stats scanner's property (stats-scan.c), for its test and fuzz target. */
#pragma once

#include <stddef.h>

/*
 * text as a reply to the command id "sb-7", scanned for both targets and,
 * where the scanner takes it, parsed by json-c's path as the client would:
 * 1: taken for a target and the same sets both ways; 0: declined for both;
 * -1: the property broken (why says how); -2: out of memory.
 */
int qmp_stats_scan_check(const char *text, size_t len, char *why, size_t why_size);
