// SPDX-License-Identifier: GPL-2.0-or-later
/* The shared options of snapbenchd's verbs: --socket, --json, --help, the run ID. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "exit-codes.h"
#include "macro.h"
#include "verb-args.h"

static const struct option shared_options[] = {
	{ "socket", required_argument, NULL, DAEMON_OPT_SOCKET },
	{ "json", no_argument, NULL, DAEMON_OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
};

static size_t n_options(const struct option *o)
{
	size_t n = 0;

	while (o && o[n].name)
		n++;
	return n;
}

static size_t n_flags(const struct verb_flag *f)
{
	size_t n = 0;

	while (f && f[n].name)
		n++;
	return n;
}

static int check_positional(const struct daemon_verb_parser *p, int argc, char **argv, struct daemon_args *a)
{
	if (p->positional == ARGS_NONE) {
		if (optind != argc) {
			fprintf(stderr, "snapbench %s: unexpected argument '%s'; see 'snapbench %s --help'\n", p->name,
				argv[optind], p->name);
			return EXIT_USAGE;
		}
		return ARGS_GO_ON;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "snapbench %s: give one run ID ('snapbench list' shows them); see 'snapbench %s --help'\n",
			p->name, p->name);
		return EXIT_USAGE;
	}
	a->id = argv[optind];
	return ARGS_GO_ON;
}

int daemon_args_parse(const struct daemon_verb_parser *p, int argc, char **argv, struct daemon_args *a,
		      void *userdata)
{
	size_t n_flag = n_flags(p->flags), n_own = n_options(p->options), k = 0;
	_cleanup_free_ struct option *options =
		calloc(n_flag + n_own + ARRAY_SIZE(shared_options) + 1, sizeof(*options));
	char shortopts[32];
	int opt, r;

	if (!options) {
		fprintf(stderr, "snapbench %s: out of memory\n", p->name);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < n_flag; i++)
		options[k++] = (struct option){ p->flags[i].name, no_argument, NULL, DAEMON_OPT_FLAG + (int)i };
	for (size_t i = 0; i < n_own; i++)
		options[k++] = p->options[i];
	for (size_t i = 0; i < ARRAY_SIZE(shared_options); i++)
		options[k++] = shared_options[i];
	snprintf(shortopts, sizeof(shortopts), "h%s", p->shortopts ? p->shortopts : "");

	*a = (struct daemon_args){};
	optind = 1;
	while ((opt = getopt_long(argc, argv, shortopts, options, NULL)) >= 0) {
		switch (opt) {
		case DAEMON_OPT_SOCKET:
			a->socket_path = optarg;
			break;
		case DAEMON_OPT_JSON:
			a->json = true;
			break;
		case 'h':
			p->usage(stdout);
			return EXIT_OK;
		case '?':
		case ':':
			if (p->brief_usage_error)
				fprintf(stderr, "snapbench %s: see 'snapbench %s --help'\n", p->name, p->name);
			else
				p->usage(stderr);
			return EXIT_USAGE;
		default:
			if (opt >= DAEMON_OPT_FLAG && opt < DAEMON_OPT_FLAG + (int)n_flag) {
				*(bool *)((char *)userdata + p->flags[opt - DAEMON_OPT_FLAG].offset) = true;
				break;
			}
			r = p->parse_option ? p->parse_option(opt, optarg, userdata) : EXIT_USAGE;
			if (r)
				return r;
		}
	}
	return check_positional(p, argc, argv, a);
}
