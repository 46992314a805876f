// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench import-lava: the run reports a LAVA job printed on its console
 * (lava/lava-log.h), checked and written into the results store as runs of
 * their own, with where they came from (origin.json). All or nothing: a log
 * with one bad report imports none. docs/lava.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic-file.h"
#include "exit-codes.h"
#include "fileio.h"
#include "json-util.h"
#include "lava-log.h"
#include "macro.h"
#include "mkdir-p.h"
#include "report.h"
#include "run-dir.h"
#include "runner.h"
#include "verb-args.h"
#include "verbs.h"

#define REPORT_MAX_DEPTH 64

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench import-lava [--store DIR] [--job-id ID] [--device NAME] [--json]\n"
		"                             [--device-type TYPE] LOG\n"
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
		"  --json               one JSON object a line per imported run: id, bytes,\n"
		"                       sha256, job_id, device, device_type, run_dir\n"
		"\n"
		"Exit codes: 0 imported, 2 bad flags or a log that holds no good report,\n"
		"1 the store cannot take it (a run of that id exists, a write failed).\n"
		"docs/lava.md describes the markers.\n",
		runner_default_results_dir());
}

enum { OPT_STORE = 0x100, OPT_JOB_ID, OPT_DEVICE, OPT_DEVICE_TYPE, OPT_JSON };

struct args {
	const char *store, *job, *device, *device_type, *log;
	bool json;
};

/* 0, 1 after --help, or -EINVAL (said why on stderr). */
static int parse_argv(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "store", required_argument, NULL, OPT_STORE },
		{ "job-id", required_argument, NULL, OPT_JOB_ID },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "device-type", required_argument, NULL, OPT_DEVICE_TYPE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c;

	*a = (struct args){};
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
		case 'h':
			usage(stdout);
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

static struct json_object *string_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/* origin.json: where the run came from. */
static char *origin_json(const struct args *a, const struct lava_report *r)
{
	_cleanup_json_ struct json_object *o = json_object_new_object(), *lava = json_object_new_object();
	struct timespec ts;
	char now[32];
	const char *text;

	if (!o || !lava)
		return NULL;
	clock_gettime(CLOCK_REALTIME, &ts);
	report_format_time((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, now);
	json_object_object_add(o, "schema", json_object_new_string("snapbench.origin/1"));
	json_object_object_add(o, "source", json_object_new_string("lava"));
	json_object_object_add(o, "imported", json_object_new_string(now));
	json_object_object_add(o, "log", json_object_new_string(a->log));
	json_object_object_add(o, "log_line", json_object_new_int64((int64_t)r->line));
	json_object_object_add(o, "encoding", json_object_new_string(r->encoding));
	json_object_object_add(o, "report_sha256", json_object_new_string(r->sha256));
	json_object_object_add(lava, "job_id", string_or_null(a->job ? a->job : r->job));
	json_object_object_add(lava, "device", string_or_null(a->device ? a->device : r->device));
	json_object_object_add(lava, "device_type", string_or_null(a->device_type ? a->device_type : r->device_type));
	json_object_object_add(o, "lava", json_object_get(lava));
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							 JSON_C_TO_STRING_NOSLASHESCAPE);
	char *out = NULL;
	return text && asprintf(&out, "%s\n", text) >= 0 ? out : NULL;
}

/* Removes a run directory this import made (its two files, then it). */
static void remove_run_dir(const char *dir)
{
	_cleanup_free_ char *report = NULL, *origin = NULL;

	if (asprintf(&report, "%s/%s", dir, RUN_DIR_REPORT) >= 0)
		unlink(report);
	if (asprintf(&origin, "%s/%s", dir, RUN_DIR_ORIGIN) >= 0)
		unlink(origin);
	rmdir(dir);
}

/* STORE/ID made whole in a temp directory beside it, then renamed into place. */
static int write_run(const struct args *a, const struct lava_report *r, struct sb_error *err)
{
	_cleanup_free_ char *tmp = NULL, *dest = NULL, *report = NULL, *origin = NULL, *origin_text = NULL;
	int ret;

	if (asprintf(&tmp, "%s/.import-%s.XXXXXX", a->store, r->id) < 0 || asprintf(&dest, "%s/%s", a->store, r->id) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (!mkdtemp(tmp))
		return sb_error_set(err, -errno, "%s: cannot create a directory in the store: %s", a->store, strerror(errno));
	if (asprintf(&report, "%s/%s", tmp, RUN_DIR_REPORT) < 0 || asprintf(&origin, "%s/%s", tmp, RUN_DIR_ORIGIN) < 0 ||
	    !(origin_text = origin_json(a, r))) {
		rmdir(tmp);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	if ((ret = atomic_file_write(report, r->data, r->len, 0644, err)) < 0 ||
	    (ret = atomic_file_write(origin, origin_text, strlen(origin_text), 0644, err)) < 0) {
		remove_run_dir(tmp);
		return ret;
	}
	if (chmod(tmp, 0755) < 0 || rename(tmp, dest) < 0) {
		ret = -errno;
		remove_run_dir(tmp);
		return sb_error_set(err, ret, "%s: cannot move the imported run into place: %s", dest,
				    ret == -EEXIST || ret == -ENOTEMPTY ? "a run of that id is already in the store"
									: strerror(-ret));
	}
	return 0;
}

static int run(const struct args *a)
{
	_cleanup_free_ char *text = NULL;
	struct lava_log log = { 0 };
	struct sb_error err = { 0 };
	size_t len, written = 0;
	int r, ret = EXIT_OK;

	if (!strcmp(a->log, "-")) {
		r = read_full_fd(STDIN_FILENO, LAVA_LOG_MAX_BYTES, &text, &len);
		if (r < 0) {
			verb_error("cannot read the log from stdin: %s",
				r == -EFBIG ? "larger than 1 GiB" : strerror(-r));
			return EXIT_USAGE;
		}
	} else if (read_full_file(a->log, LAVA_LOG_MAX_BYTES, &text, &len, &err) < 0) {
		verb_error("%s", err.msg);
		return EXIT_USAGE;
	}
	r = lava_log_parse(a->log, text, len, &log, &err);
	if (r < 0) {
		verb_error("%s%s", err.msg, r == -ENOENT ? "" : "; nothing imported");
		return r == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
	}
	/* every report checked, and its place in the store free, before anything is written */
	for (size_t i = 0; i < log.n_reports && ret == EXIT_OK; i++) {
		_cleanup_free_ char *dest = NULL;
		struct stat st;

		if (check_report(&log.reports[i], &err) < 0) {
			verb_error("%s: %s; nothing imported", a->log, err.msg);
			ret = EXIT_USAGE;
		} else if (asprintf(&dest, "%s/%s", a->store, log.reports[i].id) < 0) {
			dest = NULL;
			ret = EXIT_FAIL;
		} else if (lstat(dest, &st) == 0) {
			verb_error("%s: run %s is already in the store (imported before?); "
				"nothing imported", dest, log.reports[i].id);
			ret = EXIT_FAIL;
		}
		for (size_t j = 0; j < i && ret == EXIT_OK; j++)
			if (!strcmp(log.reports[j].id, log.reports[i].id)) {
				verb_error("%s: run %s twice (log lines %zu and %zu); nothing "
					"imported", a->log, log.reports[i].id, log.reports[j].line, log.reports[i].line);
				ret = EXIT_USAGE;
			}
	}
	if (ret == EXIT_OK && (r = mkdir_p(a->store, 0755)) < 0) {
		verb_error("--store %s: cannot create it: %s", a->store, strerror(-r));
		ret = EXIT_FAIL;
	}
	for (; ret == EXIT_OK && written < log.n_reports; written++)
		if (write_run(a, &log.reports[written], &err) < 0) {
			verb_error("%s; nothing imported", err.msg);
			ret = EXIT_FAIL;
		}
	if (ret != EXIT_OK) {
		for (size_t i = 0; i < written; i++) { /* all or nothing */
			_cleanup_free_ char *dest = NULL;
			if (asprintf(&dest, "%s/%s", a->store, log.reports[i].id) >= 0)
				remove_run_dir(dest);
		}
		lava_log_done(&log);
		return ret;
	}
	for (size_t i = 0; i < log.n_reports; i++) {
		const struct lava_report *rp = &log.reports[i];
		const char *job = a->job ? a->job : rp->job, *dev = a->device ? a->device : rp->device;
		const char *type = a->device_type ? a->device_type : rp->device_type;
		if (a->json) {
			/* one object a line per imported run */
			_cleanup_json_ struct json_object *o = json_object_new_object();
			_cleanup_free_ char *dir = NULL;
			const char *line = NULL;
			if (o && asprintf(&dir, "%s/%s", a->store, rp->id) >= 0) {
				json_object_object_add(o, "id", json_object_new_string(rp->id));
				json_object_object_add(o, "bytes", json_object_new_int64((int64_t)rp->len));
				json_object_object_add(o, "sha256", json_object_new_string(rp->sha256));
				json_object_object_add(o, "job_id", string_or_null(job));
				json_object_object_add(o, "device", string_or_null(dev));
				json_object_object_add(o, "device_type", string_or_null(type));
				json_object_object_add(o, "run_dir", json_object_new_string(dir));
				line = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
			} else {
				dir = NULL;
			}
			if (!line) {
				verb_error("out of memory");
				lava_log_done(&log);
				return EXIT_FAIL;
			}
			printf("%s\n", line);
			continue;
		}
		printf("imported run %s (%zu bytes, sha256 %.12s...) from LAVA job %s, device %s (%s) into %s/%s\n", rp->id,
		       rp->len, rp->sha256, job ? job : "(unknown)", dev ? dev : "(unknown)", type ? type : "type unknown",
		       a->store, rp->id);
	}
	lava_log_done(&log);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int import_lava_main(int argc, char **argv)
{
	struct args a;
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
