// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench: the command-line front. Dispatches to one verb per file. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "exit-codes.h"
#include "help-fit.h"
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
	&verb_kernel,
};

static void usage(FILE *out)
{
	fprintf(out, "usage: snapbench [--json] VERB [OPTIONS...]\n\nverbs:\n");
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		fprintf(out, "  %-12s %s\n", verbs[i]->name, verbs[i]->summary);
	fprintf(out, "\n'snapbench help VERB' (or 'snapbench VERB --help') describes a verb; --json before the\n"
		"verb is the verb's --json. Exit codes: see snapbench(1).\n");
}

static const struct verb *find_verb(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		if (!strcmp(name, verbs[i]->name))
			return verbs[i];
	return NULL;
}

static int unknown_verb(const char *typed, bool json)
{
	const char *names[ARRAY_SIZE(verbs)];

	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		names[i] = verbs[i]->name;
	const char *near = verb_closest_word(typed, names, ARRAY_SIZE(verbs));
	verb_errors_begin(NULL, json);
	if (near)
		verb_error("unknown verb '%s' (did you mean '%s'?); run 'snapbench --help' for the list.", typed, near);
	else
		verb_error("unknown verb '%s'; run 'snapbench --help' for the list.", typed);
	return verb_errors_end(EXIT_USAGE);
}

/* snapbench help [VERB]: the list, or the verb's --help. */
static int help(int argc, char **argv)
{
	if (argc < 3) {
		help_print(stdout, usage);
		return EXIT_OK;
	}
	const struct verb *v = find_verb(argv[2]);
	if (!v)
		return unknown_verb(argv[2], false);
	char *args[] = { argv[2], (char *)"--help", NULL };
	verb_errors_begin(v->name, false);
	return verb_errors_end(v->run(2, args));
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
	bool global_json = false;

	/* "snapbench --json VERB ...": the verb's own --json, given before it */
	while (argc >= 2 && !strcmp(argv[1], "--json")) {
		global_json = true;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc < 2) {
		help_print(stderr, usage);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		help_print(stdout, usage);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "help"))
		return help(argc, argv);
	if (!strcmp(argv[1], "--version")) {
		printf("snapbench %s\n", PACKAGE_VERSION);
		return EXIT_OK;
	}
	const struct verb *v = find_verb(argv[1]);
	if (!v)
		return unknown_verb(argv[1], global_json || wants_json(argc, argv));
	if (!global_json || wants_json(argc, argv)) {
		verb_errors_begin(v->name, wants_json(argc, argv));
		return verb_errors_end(v->run(argc - 1, argv + 1));
	}
	/* the verb's arguments with --json first among them */
	_cleanup_free_ char **args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args) {
		fprintf(stderr, "snapbench: out of memory\n");
		return EXIT_FAIL;
	}
	args[0] = argv[1];
	args[1] = (char *)"--json";
	for (int i = 2; i < argc; i++)
		args[i] = argv[i];
	verb_errors_begin(v->name, true);
	return verb_errors_end(v->run(argc, args));
}
