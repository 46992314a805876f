/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The verbs of the snapbench command. Each lives in cli/verb-<name>.c. */
#pragma once

struct verb {
	const char *name;
	const char *summary;
	/* argv[0] is the verb name; returns an exit code from exit-codes.h */
	int (*run)(int argc, char **argv);
};

/* Register a verb here and in cli/meson.build. */
extern const struct verb verb_qmp;
extern const struct verb verb_compare;
extern const struct verb verb_bisect_step;
extern const struct verb verb_probe;
extern const struct verb verb_top;
extern const struct verb verb_import_lava;
extern const struct verb verb_kernel;
extern const struct verb verb_run;
extern const struct verb verb_status;
extern const struct verb verb_list;
extern const struct verb verb_show;
extern const struct verb verb_cancel;
extern const struct verb verb_logs;
