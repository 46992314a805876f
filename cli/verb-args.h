/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The options every verb that talks to snapbenchd takes (--socket, --json,
 * --help) and its run ID argument, parsed in one place. Each verb keeps its
 * own options: it lists them in a table and handles them in a callback.
 */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "macro.h"

struct daemon_args {
	const char *socket_path; /* --socket; NULL: $SNAPBENCH_SOCKET, else the default */
	bool json;               /* --json */
	const char *id;          /* the run ID, for verbs with ARGS_ONE_ID */
};

enum verb_positional {
	ARGS_NONE,   /* no argument: "unexpected argument 'X'" */
	ARGS_ONE_ID, /* exactly one run ID */
};

/* getopt values of the shared options (a verb's own options use others) */
enum {
	DAEMON_OPT_SOCKET = 0x1100,
	DAEMON_OPT_JSON,
	DAEMON_OPT_FLAG = 0x1200, /* + the index in flags */
};

/* A verb's option without a value that sets a bool in its arguments (userdata). */
struct verb_flag {
	const char *name;      /* "wait" for --wait */
	size_t offset;         /* offsetof() the bool in the verb's struct */
};

struct daemon_verb_parser {
	const char *name;                /* "status": messages read "snapbench status: ..." */
	void (*usage)(FILE *out);
	const struct verb_flag *flags;   /* the verb's own flags ({} ends), or NULL; first in the table */
	const struct option *options;    /* the verb's own long options ({} ends), or NULL */
	const char *shortopts;           /* the verb's own short options (besides h), or NULL */
	enum verb_positional positional;
	const char *positional_what;     /* ARGS_ONE_ID: what the argument may be, NULL: "one run ID ('snapbench list' shows them)" */
	/*
	 * One of the verb's own options (opt from its table or shortopts, arg
	 * its optarg); returns 0, or the exit code to stop with having printed
	 * why. NULL when the verb has no options of its own.
	 */
	int (*parse_option)(int opt, const char *arg, void *userdata);
};

/*
 * After getopt_long() returned '?' or ':' (with opterr 0 and an optstring
 * that starts with ':'): says on stderr, in the one style of every verb,
 * "snapbench VERB: unknown option '--bogus'; try 'snapbench VERB --help'"
 * (or "option '--metric' needs a value", "option '--force' takes no value",
 * "ambiguous option '--a' (--aa, --all)"), naming the option as typed.
 */
void verb_option_error(const char *verb, int c, char **argv, const struct option *longopts);

/*
 * --interval ARG of run, top, probe and status --watch, the one grammar:
 * a duration with its unit (500ms, 2s; parse_duration()'s units) or a
 * bare number of milliseconds, whole milliseconds from min_ms to max_ms
 * (each verb's, which its --help names too); 0 with *ret_ms, or -EINVAL
 * having said, in one form for every verb, what it takes ("--interval
 * '5': give whole milliseconds from 10ms to 1h, such as 500ms or 2s; a
 * bare number is milliseconds").
 */
int verb_parse_interval(const char *arg, unsigned min_ms, unsigned max_ms, unsigned *ret_ms);

/* The word of words that typed is a slip of (at most 2 edits away, and close for its length), or NULL: "did you mean". */
const char *verb_closest_word(const char *typed, const char *const *words, size_t n);

/*
 * A verb's errors, said in one place. main() calls verb_errors_begin()
 * before the verb and returns verb_errors_end(its exit code).
 *
 * verb_error() prints "snapbench VERB: MESSAGE" on stderr, one line per
 * line of MESSAGE (each with the prefix), and keeps the first error of the
 * verb. Under --json (json_errors), verb_errors_end() then prints that error
 * as one JSON object on stdout, {"verb": VERB, "error": MESSAGE,
 * "exit_code": N}, when the verb exits non-zero. A verb that reports its
 * failure in its own JSON output (run --local's outcome, compare's verdict)
 * says it with verb_message() or not at all, so stdout holds one answer.
 */
void verb_errors_begin(const char *verb, bool json_errors);
_printf_(1, 2) void verb_error(const char *fmt, ...);
/* The same with another prefix than "snapbench VERB" (the client's "who"); kept as "who: message" unless who is that. */
_printf_(2, 3) void verb_error_as(const char *who, const char *fmt, ...);
/* A note or warning in the same form ("snapbench VERB: ..." per line), not an error: never kept. */
_printf_(1, 2) void verb_message(const char *fmt, ...);
/*
 * The verb printed its JSON answer, which tells how it ended (run --wait's
 * summary with the run's state): an error kept before it (a cancel that
 * failed while the run went on) is not printed as a second object.
 */
void verb_errors_answered(void);
/* exit_code, having printed the kept error as JSON on stdout under --json if exit_code is not 0. */
int verb_errors_end(int exit_code);

/* daemon_args_parse(): the arguments are good, go on with the verb */
#define ARGS_GO_ON (-1)

/*
 * Parses argv (argv[0] is the verb name) into *a and, through
 * p->parse_option, the verb's own options. The shared options come after
 * the verb's own in the table getopt_long sees. Returns ARGS_GO_ON, or the
 * exit code to return: EXIT_OK after --help (usage on stdout), EXIT_USAGE
 * after a bad option or argument (the reason on stderr, verb_option_error()).
 */
int daemon_args_parse(const struct daemon_verb_parser *p, int argc, char **argv, struct daemon_args *a,
		      void *userdata);

/*
 * The entry of a verb split systemd's way: static int NAME(argc, argv) that
 * fills a struct TYPE with parse_argv(argc, argv, &a) (ARGS_GO_ON or an exit
 * code) and then returns run(&a).
 */
#define VERB_MAIN(name, type)                          \
	static int name(int argc, char **argv)         \
	{                                              \
		type a;                                \
		int r = parse_argv(argc, argv, &a);    \
                                                       \
		return r != ARGS_GO_ON ? r : run(&a);  \
	}
