/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --help text within 80 columns, whatever width it was written at: a line
 * too long is broken at a space, its rest carried into the next line of the
 * same block (an option's description, a sentence, a usage synopsis) and
 * that one refitted in turn.
 */
#pragma once

#include <stddef.h>
#include <stdio.h>

#define HELP_WIDTH 80

/* text, its lines fitted to width columns, on out. */
void help_fit(FILE *out, const char *text, size_t width);

/* What usage() writes, fitted to HELP_WIDTH, on out (a verb's --help). */
void help_print(FILE *out, void (*usage)(FILE *out));
