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

/* The entry of longopts that typed ("--name" or "--name=value") names: exact, or the one it abbreviates; NULL
 * when none, *n_prefix the number of entries it abbreviates. */
static const struct option *typed_option(const char *typed, const struct option *longopts, size_t *n_prefix)
{
	size_t len = strcspn(typed + 2, "=");
	const struct option *match = NULL;

	*n_prefix = 0;
	for (const struct option *o = longopts; o && o->name; o++) {
		if (strncmp(o->name, typed + 2, len))
			continue;
		if (strlen(o->name) == len) {
			*n_prefix = 1;
			return o;
		}
		match = o;
		(*n_prefix)++;
	}
	return *n_prefix == 1 ? match : NULL;
}

void verb_option_error(const char *verb, int c, char **argv, const struct option *longopts)
{
	const char *typed = optind > 0 ? argv[optind - 1] : "";
	size_t n_prefix = 0;
	const struct option *o = NULL;
	bool is_long = !strncmp(typed, "--", 2) && typed[2];

	/* a short option inside a bundle ("-xq") leaves optind on the bundle: the one before may be a long option */
	if (is_long) {
		o = typed_option(typed, longopts, &n_prefix);
		is_long = optopt == 0 || (o && o->val == optopt);
	}
	fprintf(stderr, "snapbench %s: ", verb);
	if (!is_long) {
		fprintf(stderr, c == ':' ? "option '-%c' needs a value" : "unknown option '-%c'", optopt);
	} else {
		int len = (int)strcspn(typed, "=");
		if (c == ':') {
			fprintf(stderr, "option '%.*s' needs a value", len, typed);
		} else if (optopt) {
			fprintf(stderr, "option '%.*s' takes no value", len, typed);
		} else if (n_prefix > 1) {
			fprintf(stderr, "ambiguous option '%.*s' (", len, typed);
			size_t shown = 0;
			for (const struct option *p = longopts; p->name; p++)
				if (!strncmp(p->name, typed + 2, (size_t)len - 2))
					fprintf(stderr, "%s--%s", shown++ ? ", " : "", p->name);
			fprintf(stderr, ")");
		} else {
			fprintf(stderr, "unknown option '%.*s'", len, typed);
		}
	}
	fprintf(stderr, "; try 'snapbench %s --help'\n", verb);
}

static int check_positional(const struct daemon_verb_parser *p, int argc, char **argv, struct daemon_args *a)
{
	if (p->positional == ARGS_NONE) {
		if (optind != argc) {
			fprintf(stderr, "snapbench %s: unexpected argument '%s'; try 'snapbench %s --help'\n", p->name,
				argv[optind], p->name);
			return EXIT_USAGE;
		}
		return ARGS_GO_ON;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "snapbench %s: give one run ID ('snapbench list' shows them); try 'snapbench %s --help'\n",
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
	/* ':' first: a missing value is ':', not '?'; opterr 0: the messages are ours */
	snprintf(shortopts, sizeof(shortopts), ":h%s", p->shortopts ? p->shortopts : "");

	*a = (struct daemon_args){};
	optind = 1;
	opterr = 0;
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
			verb_option_error(p->name, opt, argv, options);
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
