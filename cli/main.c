// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench: the command-line front. Dispatches to one verb per file. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "exit-codes.h"
#include "macro.h"
#include "verb-args.h"
#include "verbs.h"

static const struct verb *const verbs[] = {
	&verb_run,
	&verb_status,
	&verb_list,
	&verb_show,
	&verb_cancel,
	&verb_logs,
	&verb_qmp,
	&verb_compare,
	&verb_bisect_step,
	&verb_probe,
	&verb_top,
	&verb_import_lava,
};

static void usage(FILE *out)
{
	fprintf(out, "usage: snapbench VERB [OPTIONS...]\n\nverbs:\n");
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		fprintf(out, "  %-12s %s\n", verbs[i]->name, verbs[i]->summary);
	fprintf(out, "\n'snapbench VERB --help' describes a verb. Exit codes: see snapbench(1).\n");
}

/* --json among the verb's options (before "--"): its errors are JSON too, even those of the options before it */
static bool wants_json(int argc, char **argv)
{
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("snapbench %s\n", PACKAGE_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		if (!strcmp(argv[1], verbs[i]->name)) {
			verb_errors_begin(verbs[i]->name, wants_json(argc, argv));
			return verb_errors_end(verbs[i]->run(argc - 1, argv + 1));
		}

	verb_errors_begin(NULL, wants_json(argc, argv));
	verb_error("unknown verb '%s'; run 'snapbench --help' for the list.", argv[1]);
	return verb_errors_end(EXIT_USAGE);
}
