/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Assertions for test programs: always compiled in (NDEBUG does not remove
 * them), and they say what failed and where. Exit code 77 means "skipped"
 * to meson; skip() must name the missing feature.
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

#define CHECK_MSG(cond, ...)                                                         \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                \
			fputc('\n', stderr);                                         \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

#define EXIT_TEST_SKIP 77

#define SKIP_TEST(...)                                   \
	do {                                             \
		fprintf(stderr, "SKIP: this machine lacks "); \
		fprintf(stderr, __VA_ARGS__);            \
		fputc('\n', stderr);                     \
		exit(EXIT_TEST_SKIP);                    \
	} while (0)
