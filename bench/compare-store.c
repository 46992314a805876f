// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * compare-store: compare, list and the label scan over a large results
 * store (docs/compare.md, "Performance"). Prints figures, asserts nothing.
 *
 * Builds a store of RUNS runs (default 1,000) in snapbenchd's layout
 * (STATE/runs/ID/report.json) from a real report (FIXTURE, 5 repetitions):
 * each run gets its own id and created time, 10 minutes apart, one of
 * LABELS arm labels in turn (default 10: 100 runs each), its metrics
 * perturbed, and each repetition's timeline stretched to ROWS rows (default
 * 100) with perturbed counters; each written as JSON with the store's
 * atomic writer and the first read back with the report reader. Then, over
 * ROUNDS interleaved rounds (default 5), each a separate process measured
 * with wait4() (wall time, CPU, peak RSS):
 *
 *   - the label scan alone (compare_select() of label=l0, this program run
 *     again as `compare-store --scan RUNS_DIR N`),
 *     without the store's label index (removed first) and with it;
 *   - `snapbench compare --store --baseline label=l0 --patched label=l1`
 *     (about 100 runs a side), without and with the index;
 *   - snapbenchd started on the store (its start-up reads every report for
 *     the queue's reconciliation), then `snapbench list` and `snapbench
 *     list --label l0` against it, and the daemon's own peak RSS and CPU.
 *
 * Figures are median [min max] over the rounds. The reports are in the page
 * cache (just written): these are CPU and memory figures, not disk ones.
 *
 *   build/bench/compare-store SNAPBENCH SNAPBENCHD FIXTURE [RUNS [ROUNDS [ROWS [LABELS]]]]
 *   meson test -C build --benchmark compare-store --verbose
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "atomic-file.h"
#include "compare.h"
#include "macro.h"
#include "report.h"
#include "spawn-program.h"
#include "store-index.h"
#include "test-tmp.h"

#define MAX_ROUNDS 50

static unsigned long long rng = 0x5eed;

static double uniform(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* A factor about 1 (+-5%, a rough gaussian). */
static double jitter(void)
{
	return 1.0 + 0.05 * (uniform() + uniform() + uniform() - 1.5) / 0.5;
}

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "compare-store: %s: %s\n", what, msg);
	exit(1);
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("path", "out of memory");
	va_end(ap);
	return s;
}

static void scale_numbers(struct json_object *o, double f)
{
	json_object_object_foreach(o, k, v) {
		(void)k;
		if (json_object_is_type(v, json_type_double))
			json_object_set_double(v, json_object_get_double(v) * f * jitter());
		else if (json_object_is_type(v, json_type_int))
			json_object_set_int64(v, llround((double)json_object_get_int64(v) * f * jitter()));
	}
}

/* The fixture's timeline stretched to rows rows over the same span, the windows in the same order. */
static struct json_object *stretch_timeline(struct json_object *tl, size_t rows)
{
	size_t nf = json_object_array_length(tl);
	struct json_object *out = json_object_new_array();
	double span = json_object_get_double(json_object_object_get(json_object_array_get_idx(tl, nf - 1), "t_s"));
	double dt = span / (double)rows;

	for (size_t j = 0; j < rows; j++) {
		struct json_object *row = NULL;
		json_object_deep_copy(json_object_array_get_idx(tl, j * nf / rows), &row, NULL);
		json_object_object_add(row, "t_s", json_object_new_double(dt * (double)(j + 1)));
		json_object_object_add(row, "dt_s", json_object_new_double(dt));
		scale_numbers(json_object_object_get(row, "counters"), (double)nf / (double)rows);
		json_object_array_add(out, row);
	}
	return out;
}

static void set_label(struct json_object *arms, const char *label)
{
	for (size_t i = 0; i < json_object_array_length(arms); i++)
		json_object_object_add(json_object_array_get_idx(arms, i), "label", json_object_new_string(label));
}

/* Run k of the store, from the fixture. */
static void write_run(const char *runs_dir, struct json_object *fixture, size_t k, size_t n_labels, size_t rows,
		      uint64_t t0_ns, char id[static REPORT_ID_MAX], size_t *bytes)
{
	struct json_object *r = NULL;
	char label[16], created[32], started[32], finished[32];
	uint64_t t = t0_ns + (uint64_t)k * 600 * 1000000000ull;
	struct sb_error err = {};

	snprintf(label, sizeof(label), "l%zu", k % n_labels);
	report_make_id(t, (uint32_t)k, id);
	report_format_time(t, created);
	report_format_time(t + 2000000000ull, started);
	report_format_time(t + 62000000000ull, finished);
	if (json_object_deep_copy(fixture, &r, NULL) < 0)
		die("fixture", "out of memory");
	json_object_object_add(r, "id", json_object_new_string(id));
	json_object_object_add(r, "created", json_object_new_string(created));
	json_object_object_add(r, "started", json_object_new_string(started));
	json_object_object_add(r, "finished", json_object_new_string(finished));
	set_label(json_object_object_get(r, "arms"), label);
	set_label(json_object_object_get(json_object_object_get(r, "spec"), "arms"), label);

	/* odd labels are "patched": 10% more faults and invalidations */
	double shift = k % n_labels % 2 ? 1.1 : 1.0;
	struct json_object *reps = json_object_object_get(r, "repetitions");
	for (size_t i = 0; i < json_object_array_length(reps); i++) {
		struct json_object *rep = json_object_array_get_idx(reps, i);

		json_object_object_add(rep, "arm", json_object_new_string(label));
		json_object_object_foreach(json_object_object_get(rep, "windows"), w, win) {
			(void)w;
			scale_numbers(json_object_object_get(win, "metrics"), shift);
		}
		struct json_object *tl = json_object_object_get(rep, "timeline");
		if (json_object_is_type(tl, json_type_array) && json_object_array_length(tl))
			json_object_object_add(rep, "timeline", stretch_timeline(tl, rows));
	}

	size_t len;
	const char *text = json_object_to_json_string_length(r, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
							     &len);
	_cleanup_free_ char *dir = xasprintf("%s/%s", runs_dir, id), *path = xasprintf("%s/report.json", dir);
	if (!text || mkdir(dir, 0755) < 0)
		die(dir, text ? strerror(errno) : "out of memory");
	if (atomic_file_write(path, text, len, 0644, &err) < 0)
		die(path, err.msg);
	*bytes += len;
	json_object_put(r);
}

struct figures {
	double wall[MAX_ROUNDS], cpu[MAX_ROUNDS], rss[MAX_ROUNDS];
	int n;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void record(struct figures *f, double wall, const struct rusage *ru)
{
	f->wall[f->n] = wall;
	f->cpu[f->n] = (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
		       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
	f->rss[f->n] = (double)ru->ru_maxrss / 1024.0;
	f->n++;
}

/* Waits for pid; its exit code (-1: killed by a signal). */
static int reap(pid_t pid, struct rusage *ru)
{
	int status;

	while (wait4(pid, &status, 0, ru) < 0)
		if (errno != EINTR)
			die("wait4", strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* argv started with its output to /dev/null; the caller reaps it */
static pid_t spawn(char *const argv[])
{
	const struct spawn_fd fds[] = { { SPAWN_DEV_NULL, STDOUT_FILENO } };
	struct sb_error err;
	pid_t pid;

	if (spawn_start(&(struct spawn_options){ .argv = argv, .path = argv[0], .fds = fds, .n_fds = ARRAY_SIZE(fds) },
			&pid, &err) < 0)
		die(argv[0], err.msg);
	return pid;
}

/* Runs argv to its end; ok: the exit codes taken as success. */
static void run(struct figures *f, char *const argv[], int ok1, int ok2)
{
	struct rusage ru;
	double t = now();
	int code = reap(spawn(argv), &ru);

	if (code != ok1 && code != ok2) {
		fprintf(stderr, "compare-store: %s %s exited %d\n", argv[0], argv[1], code);
		exit(1);
	}
	record(f, now() - t, &ru);
}

/* The label scan alone: this program run again with --scan (a fresh process, as compare is). */
static int scan_main(const char *runs_dir, const char *want_runs)
{
	struct compare_pool pool = { 0 };
	struct compare_side side = { 0 };
	struct sb_error err = {};

	if (compare_select(&pool, "baseline", "label=l0", NULL, 0, runs_dir, &side, &err) < 0) {
		fprintf(stderr, "compare-store: label scan: %s\n", err.msg);
		return 1;
	}
	if (side.n_reports != strtoul(want_runs, NULL, 10)) {
		fprintf(stderr, "compare-store: label scan: %zu runs selected, the store has %s\n", side.n_reports,
			want_runs);
		return 1;
	}
	compare_side_done(&side);
	compare_pool_done(&pool);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void med(double *v, int n, double *m, double *lo, double *hi)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	*m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*lo = v[0];
	*hi = v[n - 1];
}

static void print(const char *what, struct figures *f)
{
	double w, w0, w1, c, c0, c1, r, r0, r1;

	med(f->wall, f->n, &w, &w0, &w1);
	med(f->cpu, f->n, &c, &c0, &c1);
	med(f->rss, f->n, &r, &r0, &r1);
	printf("  %-44s wall %6.3f s [%.3f %.3f]  CPU %6.3f s [%.3f %.3f]  peak RSS %6.1f MiB [%.1f %.1f]\n", what, w,
	       w0, w1, c, c0, c1, r, r0, r1);
}

/* Writes the store's runs from the fixture, and says what it made. */
static int generate(const char *fixture_path, const char *runs_dir, size_t n_runs, size_t n_labels, size_t rows,
		    int rounds)
{
	struct json_object *fixture = NULL, *check = NULL;
	_cleanup_free_ char *first = NULL;
	struct sb_error err = {};
	size_t bytes = 0;
	char id[REPORT_ID_MAX];
	double t = now();

	if (report_read(fixture_path, &fixture, &err) < 0)
		die(fixture_path, err.msg);
	for (size_t k = 0; k < n_runs; k++) {
		write_run(runs_dir, fixture, k, n_labels, rows, 1793523600ull * 1000000000ull, id, &bytes);
		if (k == 0)
			first = xasprintf("%s/%s/report.json", runs_dir, id);
	}
	json_object_put(fixture);
	if (report_read(first, &check, &err) < 0)
		die(first, err.msg);
	size_t n_reps = json_object_array_length(json_object_object_get(check, "repetitions"));
	json_object_put(check);
	printf("store: %zu runs (%zu labels x %zu runs) x %zu repetitions x %zu timeline rows, %.1f MiB of reports, "
	       "written in %.1f s; %d rounds\n",
	       n_runs, n_labels, n_runs / n_labels, n_reps, rows, (double)bytes / 1048576.0, now() - t, rounds);
	fflush(stdout);
	return 0;
}

static pid_t start_daemon(const char *snapbenchd, const char *sock, const char *state, const char *log)
{
	char *argv[] = { (char *)snapbenchd, "--foreground", "--socket", (char *)sock, "--state-dir", (char *)state,
			 "--group", "root", "--metrics-file", "", NULL };
	_cleanup_close_ int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	struct sb_error err;
	pid_t pid;

	if (fd < 0)
		die(log, strerror(errno));
	const struct spawn_fd fds[] = { { fd, STDOUT_FILENO }, { fd, STDERR_FILENO } };
	if (spawn_start(&(struct spawn_options){ .argv = argv, .path = argv[0], .fds = fds, .n_fds = ARRAY_SIZE(fds) },
			&pid, &err) < 0)
		die(snapbenchd, err.msg);
	for (int i = 0; i < 6000 && access(sock, F_OK) < 0; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			die(snapbenchd, "exited before its socket appeared (see its log)");
		usleep(10000);
	}
	if (access(sock, F_OK) < 0)
		die(snapbenchd, "no socket after 60 s");
	return pid;
}

/*
 * The benchmark's script: make the store, warm up, the rounds (scan and
 * compare with and without the index, alternating which goes first, then
 * snapbenchd and list), print. Long on purpose: every step adds to the
 * figures printed at the end, which split functions would pass around as
 * nine out-parameters.
 */
int main(int argc, char **argv)
{
	size_t n_runs = argc > 4 ? strtoul(argv[4], NULL, 10) : 1000;
	int rounds = argc > 5 ? atoi(argv[5]) : 5;
	size_t rows = argc > 6 ? strtoul(argv[6], NULL, 10) : 100;
	size_t n_labels = argc > 7 ? strtoul(argv[7], NULL, 10) : 10;
	if (argc == 4 && !strcmp(argv[1], "--scan"))
		return scan_main(argv[2], argv[3]);
	if (argc < 4 || rounds < 1 || rounds > MAX_ROUNDS || n_runs < 2 * n_labels || rows < 1 || n_labels < 2 ||
	    n_labels > 1000 || n_runs > 100000) {
		fprintf(stderr, "usage: %s SNAPBENCH SNAPBENCHD FIXTURE [RUNS [ROUNDS [ROWS [LABELS]]]]\n"
				"  (RUNS >= 2 x LABELS, ROUNDS 1-%d, LABELS >= 2)\n",
			argv[0], MAX_ROUNDS);
		return 2;
	}
	const char *tmp = test_tmpdir("compare-store");
	char *state = xasprintf("%s/state", tmp), *runs_dir = xasprintf("%s/runs", state);
	char *sock = xasprintf("%s/snapbenchd.sock", tmp), *out = xasprintf("%s/out", tmp);
	char *log = xasprintf("%s/snapbenchd.log", tmp), *ixpath = xasprintf("%s/" STORE_INDEX_FILE, runs_dir);
	if (mkdir(state, 0755) < 0 || mkdir(runs_dir, 0755) < 0)
		die(state, strerror(errno));

	/*
	 * The store is made in a child: a process forked later starts with this
	 * one's resident pages until it execs, and its peak RSS would count them.
	 */
	fflush(stdout);
	pid_t gen = fork();
	if (gen < 0)
		die("fork", strerror(errno));
	if (gen == 0)
		_exit(generate(argv[3], runs_dir, n_runs, n_labels, rows, rounds));
	struct rusage gen_ru;
	if (reap(gen, &gen_ru) != 0)
		die("the store", "not made");

	char *compare[] = { (char *)argv[1], "compare", "--store", runs_dir, "--baseline", "label=l0", "--patched",
			    "label=l1", "--output", out, "-q", NULL };
	char *list[] = { (char *)argv[1], "list", "--socket", sock, NULL };
	char *list_label[] = { (char *)argv[1], "list", "--label", "l0", "--socket", sock, NULL };
	struct figures scan_no = {}, scan_ix = {}, cmp_no = {}, cmp_ix = {}, d_start = {}, d_list = {}, d_list_l = {},
		       d_self = {}, warm = {};
	size_t per_label = n_runs / n_labels + (n_runs % n_labels > 0);
	char want[32], self[4096];
	ssize_t n_self = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n_self < 0)
		die("/proc/self/exe", strerror(errno));
	self[n_self] = 0;
	snprintf(want, sizeof(want), "%zu", per_label);
	char *scan[] = { self, "--scan", runs_dir, want, NULL };

	run(&warm, compare, 0, 3); /* the page cache and the index, before the first round */
	for (int i = 0; i < rounds; i++) {
		/* alternate which goes first; each "without" starts from no index and writes it again */
		for (int k = 0; k < 2; k++) {
			if ((k == 0) == (i % 2 == 0)) {
				unlink(ixpath);
				run(&scan_no, scan, 0, 0);
				unlink(ixpath);
				run(&cmp_no, compare, 0, 3);
			} else {
				run(&scan_ix, scan, 0, 0);
				run(&cmp_ix, compare, 0, 3);
			}
		}

		struct rusage ru;
		double t0 = now();
		pid_t d = start_daemon(argv[2], sock, state, log);
		double started = now() - t0;
		run(&d_list, list, 0, 0);
		run(&d_list_l, list_label, 0, 0);
		kill(d, SIGTERM);
		if (reap(d, &ru) != 0)
			die(argv[2], "did not exit cleanly on SIGTERM (see its log)");
		d_start.wall[d_start.n] = started;
		d_start.cpu[d_start.n] = 0;
		d_start.rss[d_start.n++] = 0;
		record(&d_self, now() - t0, &ru);
	}

	printf("label scan of label=l0 (%zu of %zu runs), compare_select() in a process of its own:\n", per_label, n_runs);
	print("without the label index (then written)", &scan_no);
	print("with the label index", &scan_ix);
	printf("snapbench compare --baseline label=l0 --patched label=l1 (%zu runs a side):\n", per_label);
	print("without the label index (then written)", &cmp_no);
	print("with the label index", &cmp_ix);
	printf("snapbenchd on the store, and snapbench list against it:\n");
	double m, lo, hi;
	med(d_start.wall, d_start.n, &m, &lo, &hi);
	printf("  %-44s wall %6.3f s [%.3f %.3f]\n", "snapbenchd start to its socket", m, lo, hi);
	print("snapbench list (all runs)", &d_list);
	print("snapbench list --label l0", &d_list_l);
	print("snapbenchd, start to exit (its own)", &d_self);
	return 0;
}
