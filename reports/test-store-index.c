// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The store's label index (store-index.h) against the truth: a label=
 * selection through the index picks exactly the runs that a selection
 * loading every report picks (and that the test's own model of the store
 * says), with no index, a fresh one, after runs are added, removed and
 * rewritten with other labels, with an old (stale) index put back, and with
 * an index that does not parse or has the wrong shape; and with a fresh
 * index only the selected runs' reports are loaded; without one, only the
 * selected runs' reports stay loaded.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "compare.h"
#include "fileio.h"
#include "macro.h"
#include "store-index.h"
#include "strbuf.h"

#define MAX_RUNS 16
#define N_LABELS 3

static const char *const label_names[N_LABELS] = { "x", "y", "z" };

static char tmpdir[] = "/tmp/test-store-index.XXXXXX";
static char *store, *index_path;

/* The model: which runs the store holds and which labels each has. */
static struct {
	char id[32];
	bool present;
	bool has[N_LABELS];
} runs[MAX_RUNS];
static size_t n_runs;

static char *run_path(size_t i, const char *name)
{
	char *p;

	CHECK(asprintf(&p, "%s/%s%s%s", store, runs[i].id, name ? "/" : "", name ? name : "") > 0);
	return p;
}

static struct json_object *str(const char *s)
{
	return json_object_new_string(s);
}

/* Writes run i's report for the labels the model gives it, through a rename (a new inode, as the run engine does). */
static void write_run(size_t i, size_t n_reps)
{
	struct json_object *root = json_object_new_object(), *spec = json_object_new_object();
	struct json_object *vm = json_object_new_object(), *guest = json_object_new_object();
	struct json_object *info = json_object_new_object(), *mi = json_object_new_object();
	struct json_object *arms = json_object_new_array(), *reps = json_object_new_array();
	_cleanup_free_ char *dir = run_path(i, NULL), *tmp = run_path(i, "report.json.tmp");
	_cleanup_free_ char *file = run_path(i, "report.json");

	json_object_object_add(root, "schema", str("snapbench.run/1"));
	json_object_object_add(root, "id", str(runs[i].id));
	json_object_object_add(root, "state", str("completed"));
	json_object_object_add(spec, "scenario", str("background-snapshot"));
	json_object_object_add(vm, "memory", json_object_new_int64(268435456));
	json_object_object_add(vm, "vcpus", json_object_new_int(2));
	json_object_object_add(spec, "vm", vm);
	json_object_object_add(guest, "kind", str("micro"));
	json_object_object_add(guest, "pattern", str("write64"));
	json_object_object_add(spec, "guest", guest);
	json_object_object_add(root, "spec", spec);
	json_object_object_add(mi, "unit", str("1/s"));
	json_object_object_add(mi, "better", str("lower"));
	json_object_object_add(info, "pf_per_s", mi);
	json_object_object_add(root, "metric_info", info);
	for (size_t l = 0; l < N_LABELS; l++) {
		if (!runs[i].has[l])
			continue;
		struct json_object *arm = json_object_new_object();
		json_object_object_add(arm, "label", str(label_names[l]));
		json_object_array_add(arms, arm);
		for (size_t k = 0; k < n_reps; k++) {
			struct json_object *rep = json_object_new_object(), *wins = json_object_new_object();
			struct json_object *snap = json_object_new_object(), *metrics = json_object_new_object();

			json_object_object_add(rep, "index", json_object_new_int((int)json_object_array_length(reps)));
			json_object_object_add(rep, "arm", str(label_names[l]));
			json_object_object_add(rep, "state", str("completed"));
			json_object_object_add(metrics, "pf_per_s", json_object_new_double(1000.0 + (double)(i * 10 + k)));
			json_object_object_add(snap, "metrics", metrics);
			json_object_object_add(snap, "unavailable", json_object_new_object());
			json_object_object_add(wins, "snapshot", snap);
			json_object_object_add(rep, "windows", wins);
			json_object_array_add(reps, rep);
		}
	}
	json_object_object_add(root, "arms", arms);
	json_object_object_add(root, "repetitions", reps);

	if (!runs[i].present)
		CHECK(mkdir(dir, 0755) == 0);
	CHECK(json_object_to_file(tmp, root) == 0);
	CHECK(rename(tmp, file) == 0);
	json_object_put(root);
	runs[i].present = true;
}

static void add_run(const char *id, bool x, bool y, bool z)
{
	CHECK(n_runs < MAX_RUNS);
	snprintf(runs[n_runs].id, sizeof(runs[n_runs].id), "%s", id);
	runs[n_runs].has[0] = x;
	runs[n_runs].has[1] = y;
	runs[n_runs].has[2] = z;
	write_run(n_runs++, 2);
}

static void remove_run(size_t i)
{
	_cleanup_free_ char *dir = run_path(i, NULL), *file = run_path(i, "report.json");

	CHECK(unlink(file) == 0 && rmdir(dir) == 0);
	runs[i].present = false;
}

static size_t model_count(size_t l)
{
	size_t n = 0;

	for (size_t i = 0; i < n_runs; i++)
		n += runs[i].present && runs[i].has[l];
	return n;
}

/* The ids side selected, one line each (the side's reports are sorted by id). */
static char *side_ids(const struct compare_side *side)
{
	struct strbuf b = { 0 };

	for (size_t i = 0; i < side->n_reports; i++)
		strbuf_appendf(&b, "%s\n", side->reports[i]->id);
	return strbuf_steal(&b);
}

static char *model_ids(size_t l)
{
	struct strbuf b = { 0 };

	for (size_t i = 0; i < n_runs; i++) /* runs are added in id order */
		if (runs[i].present && runs[i].has[l])
			strbuf_appendf(&b, "%s\n", runs[i].id);
	return strbuf_steal(&b);
}

/* Selects label l's runs; *loaded gets how many reports the selection loaded. */
static char *select_ids(size_t l, size_t *loaded)
{
	_cleanup_free_ char *sel = NULL;
	struct compare_pool pool = { 0 };
	struct compare_side side = { 0 };
	struct sb_error err = { 0 };
	char *ids;

	CHECK(asprintf(&sel, "label=%s", label_names[l]) > 0);
	CHECK_MSG(compare_select(&pool, "baseline", sel, NULL, 0, store, &side, &err) == 0, "%s", err.msg);
	ids = side_ids(&side);
	CHECK(ids);
	CHECK_MSG(side.n_reps == 2 * side.n_reports, "%zu repetitions of %zu runs", side.n_reps, side.n_reports);
	*loaded = pool.n_parsed;
	CHECK_MSG(pool.n == side.n_reports, "%zu reports kept in the pool, %zu selected", pool.n, side.n_reports);
	compare_side_done(&side);
	compare_pool_done(&pool);
	return ids;
}

/* The index file's text, NULL when there is none. */
static char *index_text(void)
{
	char *text = NULL;
	size_t len;
	struct sb_error err = { 0 };

	if (read_full_file(index_path, 1 << 20, &text, &len, &err) < 0) {
		CHECK_MSG(err.code == -ENOENT, "%s", err.msg);
		return NULL;
	}
	return text;
}

static void put_index(const char *text)
{
	if (!text) {
		CHECK(unlink(index_path) == 0 || errno == ENOENT);
		return;
	}
	FILE *f = fopen(index_path, "w");
	CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

/*
 * Label l selected through whatever index the store has, then with the
 * index removed (every report loaded), then the index the first selection
 * left put back: both pick the model's runs. want_loaded (unless -1) is
 * what the first selection must have loaded.
 */
static void check_label(size_t l, long want_loaded, const char *what)
{
	_cleanup_free_ char *want = model_ids(l), *got = NULL, *full = NULL, *kept = NULL;
	size_t loaded, loaded_full;

	got = select_ids(l, &loaded);
	CHECK_MSG(!strcmp(got, want), "%s, label %s: the index selected\n%swant\n%s", what, label_names[l], got,
		  want);
	if (want_loaded >= 0)
		CHECK_MSG(loaded == (size_t)want_loaded, "%s, label %s: %zu reports loaded, want %ld", what,
			  label_names[l], loaded, want_loaded);

	kept = index_text();
	CHECK_MSG(kept, "%s: the selection wrote no index", what);
	put_index(NULL);
	full = select_ids(l, &loaded_full);
	CHECK_MSG(!strcmp(full, want), "%s, label %s: loading every report selected\n%swant\n%s", what,
		  label_names[l], full, want);
	size_t present = 0;
	for (size_t i = 0; i < n_runs; i++)
		present += runs[i].present;
	CHECK_MSG(loaded_full == present, "%s: without the index %zu reports loaded, want all %zu", what, loaded_full,
		  present);
	put_index(kept);
}

static void check_all(const char *what)
{
	for (size_t l = 0; l < N_LABELS; l++)
		check_label(l, (long)model_count(l), what);
}

int main(void)
{
	static const char *const ids[] = {
		"20261201T000000Z-000001", "20261201T000000Z-000002", "20261201T000000Z-000003",
		"20261201T000000Z-000004", "20261201T000000Z-000005", "20261201T000000Z-000006",
		"20261201T000000Z-000007", "20261201T000000Z-000008", "20261201T000000Z-000009",
	};
	_cleanup_free_ char *noise = NULL, *old = NULL, *text = NULL;
	size_t total;

	CHECK(mkdtemp(tmpdir));
	CHECK(asprintf(&store, "%s/store", tmpdir) > 0 && mkdir(store, 0755) == 0);
	CHECK(asprintf(&index_path, "%s/" STORE_INDEX_FILE, store) > 0);
	/* an entry that is not a run directory, as a store may hold */
	CHECK(asprintf(&noise, "%s/README", store) > 0);
	put_index(NULL);
	FILE *f = fopen(noise, "w");
	CHECK(f && fputs("not a run\n", f) >= 0 && fclose(f) == 0);

	for (size_t i = 0; i < ARRAY_SIZE(ids); i++) /* x, y, z in turn; every third also z; one x+y */
		add_run(ids[i], i % 3 == 0 || i == 4, i % 3 == 1, i % 3 == 2 || i % 3 == 0);

	/* no index: every report loaded (and the index written); then only the label's */
	total = n_runs;
	check_label(0, (long)total, "no index");
	check_all("a fresh index");
	old = index_text();

	/* added runs: loaded once (unknown to the index), then known */
	add_run("20261202T000000Z-00000a", false, true, false);
	add_run("20261202T000000Z-00000b", true, false, true);
	check_label(1, (long)model_count(1) + 1, "two runs added");
	check_all("two runs added, indexed");

	/* a removed run: not selected, and its entry dropped from the index */
	remove_run(0);
	check_all("a run removed");
	text = index_text();
	CHECK_MSG(!strstr(text, runs[0].id), "the index still has removed run %s: %s", runs[0].id, text);
	free(TAKE_PTR(text));

	/* a run rewritten with other labels: its entry no longer holds */
	runs[1].has[1] = false;
	runs[1].has[0] = runs[1].has[2] = true;
	write_run(1, 2);
	check_label(0, (long)model_count(0), "a run relabelled"); /* it has x now: loaded, and selected */
	check_all("a run relabelled, indexed");

	/* the index of before the changes put back: stale for the changed runs, which are loaded */
	for (size_t l = 0; l < N_LABELS; l++) {
		put_index(old);
		check_label(l, -1, "a stale index");
	}

	/* an index that does not parse, or whose entries have the wrong shape: no index */
	put_index("{\"schema\": \"snapbench.store-index/1\", \"runs\": {\"2026");
	check_label(2, (long)(n_runs - 1), "a truncated index");
	put_index("{\"schema\": \"snapbench.store-index/1\", \"runs\": {\"20261201T000000Z-000002\": "
		  "{\"size\": \"1\", \"labels\": \"y\"}, \"20261201T000000Z-000003\": 7}}");
	check_label(1, (long)(n_runs - 1), "an index of the wrong shape");
	put_index("{\"schema\": \"snapbench.store-index/0\", \"runs\": {}}");
	check_label(0, (long)(n_runs - 1), "an index of another schema");
	put_index("[]");
	check_label(0, (long)(n_runs - 1), "an index of the wrong type");
	check_all("after an index of the wrong type, rebuilt");

	for (size_t i = 0; i < n_runs; i++)
		if (runs[i].present)
			remove_run(i);
	put_index(NULL);
	CHECK(unlink(noise) == 0 && rmdir(store) == 0);
	CHECK_MSG(rmdir(tmpdir) == 0, "%s left files behind", tmpdir);
	free(store);
	free(index_path);
	printf("ok\n");
	return 0;
}
