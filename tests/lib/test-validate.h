/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A report checked by reports/schema/validate-report.py against the JSON Schema. */
#pragma once

/* Runs python3 VALIDATOR SCHEMA PATH: its exit status (0: valid), or -1 when it could not run. */
int test_validate_report(const char *validator, const char *schema, const char *path);
