// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench import-lava: the run reports a LAVA job printed on its console
 * (lava/lava-log.h), checked and written into the results store as runs of
 * their own, with where they came from (origin.json). All or nothing: a log
 * with one bad report imports none. With --partial, a log without a good
 * report but with the job's test cases gives a partial report of the run
 * they measured (docs/report-format.md; import-lava-partial.c). docs/lava.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exit-codes.h"
#include "fileio.h"
#include "help-fit.h"
#include "json-util.h"
#include "import-lava.h"
#include "lava-log.h"
#include "macro.h"
#include "mkdir-p.h"
#include "report.h"
#include "runner.h"
#include "verb-args.h"
#include "verbs.h"

#define REPORT_MAX_DEPTH 64

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench import-lava [--store DIR] [--job-id ID] [--device NAME] [--json]\n"
		"                             [--device-type TYPE] [--partial] LOG\n"
		"\n"
		"Reads a LAVA job log (lava-run's output, or 'lavacli jobs logs --raw ID'; - is\n"
		"stdin), finds each snapbench report the job printed between its\n"
		"SNAPBENCH-REPORT-BEGIN and -END markers, checks its length and SHA-256 and\n"
		"writes it into the results store as a run of its own, with its origin (the\n"
		"LAVA job, device and device type) in origin.json beside it. A log whose report\n"
		"is cut off, lost lines or fails its checksum is refused and nothing is\n"
		"written. Then 'snapbench compare --baseline label=... --patched label=...'\n"
		"reads the runs.\n"
		"\n"
		"  --store DIR          results store (default %s)\n"
		"  --job-id ID          the LAVA job (default: what the report's marker says)\n"
		"  --device NAME        the device it ran on (default: the marker's)\n"
		"  --device-type TYPE   its device type (default: the marker's)\n"
		"  --partial            when the log holds no good report (cut off, damaged,\n"
		"                       never printed) but the job's test cases: write the\n"
		"                       run they give, a partial report (state failed, each\n"
		"                       window's metrics the test cases' measurements, the\n"
		"                       rest null), origin.json saying partial\n"
		"  --json               one JSON object a line per imported run: id, bytes,\n"
		"                       sha256, job_id, device, device_type, run_dir (and\n"
		"                       partial: true for a partial run)\n"
		"\n"
		"Exit codes: 0 imported, 2 bad flags or a log that holds no good report (with\n"
		"--partial: nor test cases to rebuild the run from),\n"
		"1 the store cannot take it (a run of that id exists, a write failed).\n"
		"docs/lava.md describes the markers.\n",
		runner_default_results_dir());
}

enum { OPT_STORE = 0x100, OPT_JOB_ID, OPT_DEVICE, OPT_DEVICE_TYPE, OPT_JSON, OPT_PARTIAL };

/* 0, 1 after --help, or -EINVAL (said why on stderr). */
static int parse_argv(int argc, char **argv, struct import_lava_args *a)
{
	static const struct option longopts[] = {
		{ "store", required_argument, NULL, OPT_STORE },
		{ "job-id", required_argument, NULL, OPT_JOB_ID },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "device-type", required_argument, NULL, OPT_DEVICE_TYPE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "partial", no_argument, NULL, OPT_PARTIAL },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c;

	*a = (struct import_lava_args){};
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_STORE:
			a->store = optarg;
			break;
		case OPT_JOB_ID:
			a->job = optarg;
			break;
		case OPT_DEVICE:
			a->device = optarg;
			break;
		case OPT_DEVICE_TYPE:
			a->device_type = optarg;
			break;
		case OPT_JSON:
			a->json = true;
			break;
		case OPT_PARTIAL:
			a->partial = true;
			break;
		case 'h':
			help_print(stdout, usage);
			return 1;
		default:
			verb_option_error(argv[0], c, argv, longopts);
			return -EINVAL;
		}
	}
	if (argc - optind != 1) {
		verb_error("give one LOG (a LAVA job log, or - for stdin); try 'snapbench "
			"import-lava --help'");
		return -EINVAL;
	}
	a->log = argv[optind];
	if (!a->store)
		a->store = runner_default_results_dir();
	return 0;
}

/* The report's JSON checked against its marker: a snapbench.run/1 report of the marker's run id. */
static int check_report(const struct lava_report *r, struct sb_error *err)
{
	_cleanup_json_ struct json_object *doc = NULL;
	struct json_parse_info info;
	const char *schema, *id;

	if (json_parse_text(r->data, r->len, REPORT_MAX_DEPTH, JSON_PARSE_STRICT, &doc, &info) < 0)
		return sb_error_set(err, -EBADMSG, "the report of run %s (log line %zu) is not JSON: %s at byte %zu", r->id,
				    r->line, info.reason ? info.reason : "invalid", info.offset);
	schema = json_lookup_string(doc, "schema");
	id = json_lookup_string(doc, "id");
	if (!schema || strcmp(schema, "snapbench.run/1"))
		return sb_error_set(err, -EBADMSG, "the report of run %s (log line %zu) is not a snapbench.run/1 report "
				    "(schema %s)", r->id, r->line, schema ? schema : "missing");
	if (!id || strcmp(id, r->id) || !report_id_valid(id))
		return sb_error_set(err, -EBADMSG, "the report at log line %zu is run %s, its marker names run %s", r->line,
				    id ? id : "(no id)", r->id);
	return 0;
}

/* The job's log, from a file or stdin ("-"): EXIT_OK, or the exit code with the error said. */
static int read_log(const struct import_lava_args *a, char **text, size_t *len)
{
	struct sb_error err = { 0 };
	int r;

	if (!strcmp(a->log, "-")) {
		r = read_full_fd(STDIN_FILENO, LAVA_LOG_MAX_BYTES, text, len);
		if (r < 0) {
			verb_error("cannot read the log from stdin: %s",
				r == -EFBIG ? "larger than 1 GiB" : strerror(-r));
			return EXIT_USAGE;
		}
	} else if (read_full_file(a->log, LAVA_LOG_MAX_BYTES, text, len, &err) < 0) {
		verb_error("%s", err.msg);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* Every report checked, and its place in the store free (once), before anything is written. */
static int check_reports(const struct import_lava_args *a, const struct lava_log *log)
{
	struct sb_error err = { 0 };
	int ret = EXIT_OK;

	for (size_t i = 0; i < log->n_reports && ret == EXIT_OK; i++) {
		_cleanup_free_ char *dest = NULL;
		struct stat st;

		if (check_report(&log->reports[i], &err) < 0) {
			verb_error("%s: %s; nothing imported", a->log, err.msg);
			ret = EXIT_USAGE;
		} else if (asprintf(&dest, "%s/%s", a->store, log->reports[i].id) < 0) {
			dest = NULL;
			ret = EXIT_FAIL;
		} else if (lstat(dest, &st) == 0) {
			verb_error("%s: run %s is already in the store (imported before?); "
				"nothing imported", dest, log->reports[i].id);
			ret = EXIT_FAIL;
		}
		for (size_t j = 0; j < i && ret == EXIT_OK; j++)
			if (!strcmp(log->reports[j].id, log->reports[i].id)) {
				verb_error("%s: run %s twice (log lines %zu and %zu); nothing "
					"imported", a->log, log->reports[i].id, log->reports[j].line, log->reports[i].line);
				ret = EXIT_USAGE;
			}
	}
	return ret;
}

/* Writes every report into the store, all or nothing. */
static int write_reports(const struct import_lava_args *a, const struct lava_log *log)
{
	struct sb_error err = { 0 };
	size_t written = 0;
	int r, ret = EXIT_OK;

	if ((r = mkdir_p(a->store, 0755)) < 0) {
		verb_error("--store %s: cannot create it: %s", a->store, strerror(-r));
		return EXIT_FAIL;
	}
	for (; ret == EXIT_OK && written < log->n_reports; written++)
		if (import_lava_write_run(a, &log->reports[written], false, &err) < 0) {
			verb_error("%s; nothing imported", err.msg);
			ret = EXIT_FAIL;
		}
	if (ret != EXIT_OK)
		for (size_t i = 0; i < written; i++) { /* all or nothing */
			_cleanup_free_ char *dest = NULL;
			if (asprintf(&dest, "%s/%s", a->store, log->reports[i].id) >= 0)
				import_lava_remove_run(dest);
		}
	return ret;
}

/* What was imported: a line for each run, or with --json one object a line. */
static int print_imported(const struct import_lava_args *a, const struct lava_log *log)
{
	for (size_t i = 0; i < log->n_reports; i++) {
		const struct lava_report *rp = &log->reports[i];
		const char *job = a->job ? a->job : rp->job, *dev = a->device ? a->device : rp->device;
		const char *type = a->device_type ? a->device_type : rp->device_type;
		if (a->json) {
			_cleanup_json_ struct json_object *o = json_object_new_object();
			_cleanup_free_ char *dir = NULL;
			const char *line = NULL;
			if (o && asprintf(&dir, "%s/%s", a->store, rp->id) >= 0) {
				json_object_object_add(o, "id", json_object_new_string(rp->id));
				json_object_object_add(o, "bytes", json_object_new_int64((int64_t)rp->len));
				json_object_object_add(o, "sha256", json_object_new_string(rp->sha256));
				json_object_object_add(o, "job_id", import_lava_string_or_null(job));
				json_object_object_add(o, "device", import_lava_string_or_null(dev));
				json_object_object_add(o, "device_type", import_lava_string_or_null(type));
				json_object_object_add(o, "run_dir", json_object_new_string(dir));
				line = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
			} else {
				dir = NULL;
			}
			if (!line) {
				verb_error("out of memory");
				return EXIT_FAIL;
			}
			printf("%s\n", line);
			continue;
		}
		printf("imported run %s (%zu bytes, sha256 %.12s...) from LAVA job %s, device %s (%s) into %s/%s\n", rp->id,
		       rp->len, rp->sha256, job ? job : "(unknown)", dev ? dev : "(unknown)", type ? type : "type unknown",
		       a->store, rp->id);
	}
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int run(const struct import_lava_args *a)
{
	_cleanup_free_ char *text = NULL;
	struct lava_log log = { 0 };
	struct sb_error err = { 0 };
	size_t len;
	int r, ret;

	ret = read_log(a, &text, &len);
	if (ret != EXIT_OK)
		return ret;
	r = lava_log_parse(a->log, text, len, &log, &err);
	if (r < 0 && r != -ENOMEM && a->partial)
		return import_lava_partial(a, text, len, err.msg);
	if (r < 0) {
		verb_error("%s%s", err.msg, r == -ENOENT ? "" : "; nothing imported");
		return r == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
	}
	ret = check_reports(a, &log);
	if (ret == EXIT_OK)
		ret = write_reports(a, &log);
	if (ret == EXIT_OK)
		ret = print_imported(a, &log);
	lava_log_done(&log);
	return ret;
}

static int import_lava_main(int argc, char **argv)
{
	struct import_lava_args a;
	int r = parse_argv(argc, argv, &a);

	if (r != 0)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	return run(&a);
}

const struct verb verb_import_lava = {
	.name = "import-lava",
	.summary = "import the run reports a LAVA job printed on its console into the results store",
	.run = import_lava_main,
};
