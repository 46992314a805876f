/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Exit codes of the snapbench command, the same for every verb. CI scripts
 * rely on them; docs/cli.md and snapbench(1) list them. Never renumber.
 */
#pragma once

enum {
	EXIT_OK = 0,          /* done; for compare: no significant regression */
	EXIT_FAIL = 1,        /* the operation ran and failed (run failed, QMP error, ...) */
	EXIT_USAGE = 2,       /* bad flags, bad spec, bad input file */
	EXIT_REGRESSION = 3,  /* compare: a significant regression beyond threshold */
	EXIT_UNAVAILABLE = 4, /* daemon, socket, QEMU or kernel feature not reachable */
	EXIT_DENIED = 5,      /* not authorized for this request */
	EXIT_CANCELLED = 6,   /* the run was cancelled */
};
