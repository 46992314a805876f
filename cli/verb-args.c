// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The shared options of snapbenchd's verbs: --socket, --json, --help, the run ID;
 * the one message style of every verb's option errors; every verb's errors (JSON under --json).
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "closest-word.h"
#include "exit-codes.h"
#include "macro.h"
#include "parse-number.h"
#include "strbuf.h"
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

static struct {
	const char *verb; /* NULL: before a verb was found */
	bool json;
	char *first;      /* the verb's first error, without "snapbench VERB: " */
} errors;

void verb_errors_begin(const char *verb, bool json_errors)
{
	free(errors.first);
	errors.first = NULL;
	errors.verb = verb;
	errors.json = json_errors;
}

/* "snapbench VERB" (or "snapbench" before a verb was found), the prefix of the verb's messages */
static const char *self_prefix(char buf[static 64])
{
	snprintf(buf, 64, "snapbench%s%s", errors.verb ? " " : "", errors.verb ? errors.verb : "");
	return buf;
}

/* "snapbench VERB: " (or "snapbench: ") before each line of msg, on stderr */
static void print_lines(const char *who, const char *msg)
{
	for (const char *l = msg;;) {
		size_t n = strcspn(l, "\n");

		fprintf(stderr, "%s: %.*s\n", who, (int)n, l);
		if (!l[n] || !l[n + 1])
			break;
		l += n + 1;
	}
}

static void keep(const char *who, const char *msg)
{
	char self[64];

	if (errors.first)
		return;
	if (!strcmp(who, self_prefix(self)))
		errors.first = strdup(msg);
	else if (asprintf(&errors.first, "%s: %s", !strncmp(who, "snapbench: ", 11) ? who + 11 : who, msg) < 0)
		errors.first = NULL;
}

static _printf_(3, 0) void say(bool error, const char *who, const char *fmt, va_list ap)
{
	char self[64], *msg = NULL;
	int saved_errno = errno; /* callers may still read errno after saying why */

	if (!who)
		who = self_prefix(self);
	if (vasprintf(&msg, fmt, ap) < 0) {
		fprintf(stderr, "%s: out of memory\n", who);
	} else {
		print_lines(who, msg);
		if (error)
			keep(who, msg);
		free(msg);
	}
	errno = saved_errno;
}

void verb_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(true, NULL, fmt, ap);
	va_end(ap);
}

void verb_error_as(const char *who, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(true, who, fmt, ap);
	va_end(ap);
}

void verb_message(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(false, NULL, fmt, ap);
	va_end(ap);
}

void verb_errors_answered(void)
{
	free(errors.first);
	errors.first = NULL;
}

int verb_errors_end(int exit_code)
{
	if (exit_code != 0 && errors.json && errors.first) {
		struct json_object *o = json_object_new_object();

		if (o) {
			json_object_object_add(o, "verb", errors.verb ? json_object_new_string(errors.verb) : NULL);
			json_object_object_add(o, "error", json_object_new_string(errors.first));
			json_object_object_add(o, "exit_code", json_object_new_int(exit_code));
			printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
									     JSON_C_TO_STRING_NOSLASHESCAPE));
			fflush(stdout);
			json_object_put(o);
		}
	}
	verb_errors_begin(NULL, false);
	return exit_code;
}

/* A bound as the message says it: 10ms, 100ms, 1s, 1m, 1h. */
static void fmt_bound(unsigned ms, char *buf, size_t size)
{
	if (ms >= 3600000 && ms % 3600000 == 0)
		snprintf(buf, size, "%uh", ms / 3600000);
	else if (ms >= 60000 && ms % 60000 == 0)
		snprintf(buf, size, "%um", ms / 60000);
	else if (ms >= 1000 && ms % 1000 == 0)
		snprintf(buf, size, "%us", ms / 1000);
	else
		snprintf(buf, size, "%ums", ms);
}

int verb_parse_interval(const char *arg, unsigned min_ms, unsigned max_ms, unsigned *ret_ms)
{
	char lo[16], hi[16];
	double s, ms;

	/* whole milliseconds: what every verb counts its interval in (a spec's timing.interval_ms) */
	if (parse_duration(arg, 0.001, min_ms / 1000.0, max_ms / 1000.0, &s, NULL) >= 0) {
		ms = floor(s * 1000 + 0.5);
		if (fabs(s * 1000 - ms) < 1e-6) {
			*ret_ms = (unsigned)ms;
			return 0;
		}
	}
	fmt_bound(min_ms, lo, sizeof(lo));
	fmt_bound(max_ms, hi, sizeof(hi));
	verb_error("--interval '%s': give whole milliseconds from %s to %s, such as 500ms or 2s; a bare number "
		   "is milliseconds", arg, lo, hi);
	return -EINVAL;
}

const char *verb_closest_word(const char *typed, const char *const *words, size_t n)
{
	return closest_word(typed, words, n);
}

void verb_option_error(const char *verb, int c, char **argv, const struct option *longopts)
{
	const char *typed = optind > 0 ? argv[optind - 1] : "";
	size_t n_prefix = 0;
	const struct option *o = NULL;
	bool is_long = !strncmp(typed, "--", 2) && typed[2];
	_cleanup_strbuf_ struct strbuf msg = {};
	char who[64];

	/* a short option inside a bundle ("-xq") leaves optind on the bundle: the one before may be a long option */
	if (is_long) {
		o = typed_option(typed, longopts, &n_prefix);
		is_long = optopt == 0 || (o && o->val == optopt);
	}
	if (!is_long) {
		strbuf_appendf(&msg, c == ':' ? "option '-%c' needs a value" : "unknown option '-%c'", optopt);
	} else {
		int len = (int)strcspn(typed, "=");
		if (c == ':') {
			strbuf_appendf(&msg, "option '%.*s' needs a value", len, typed);
		} else if (optopt) {
			strbuf_appendf(&msg, "option '%.*s' takes no value", len, typed);
		} else if (n_prefix > 1) {
			strbuf_appendf(&msg, "ambiguous option '%.*s' (", len, typed);
			size_t shown = 0;
			for (const struct option *p = longopts; p->name; p++)
				if (!strncmp(p->name, typed + 2, (size_t)len - 2))
					strbuf_appendf(&msg, "%s--%s", shown++ ? ", " : "", p->name);
			strbuf_append(&msg, ")");
		} else {
			const char *names[256];
			size_t n = 0;
			char name[64];
			for (const struct option *p = longopts; p->name && n < ARRAY_SIZE(names); p++)
				names[n++] = p->name;
			snprintf(name, sizeof(name), "%.*s", len - 2, typed + 2);
			const char *near = verb_closest_word(name, names, n);
			strbuf_appendf(&msg, "unknown option '%.*s'", len, typed);
			if (near)
				strbuf_appendf(&msg, " (did you mean '--%s'?)", near);
		}
	}
	strbuf_appendf(&msg, "; try 'snapbench %s --help'", verb);
	snprintf(who, sizeof(who), "snapbench %s", verb);
	verb_error_as(who, "%s", msg.oom ? "bad option (out of memory)" : msg.s);
}

static int check_positional(const struct daemon_verb_parser *p, int argc, char **argv, struct daemon_args *a)
{
	if (p->positional == ARGS_NONE) {
		if (optind != argc) {
			verb_error("unexpected argument '%s'; try 'snapbench %s --help'", argv[optind], p->name);
			return EXIT_USAGE;
		}
		return ARGS_GO_ON;
	}
	if (optind + 1 != argc) {
		verb_error("give %s; try 'snapbench %s --help'",
			   p->positional_what ? p->positional_what : "one run ID ('snapbench list' shows them)", p->name);
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
		verb_error("out of memory");
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
