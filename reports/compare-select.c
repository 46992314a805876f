// SPDX-License-Identifier: GPL-2.0-or-later
/* Which repetitions each side of a comparison uses: selectors, the store. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare.h"
#include "compare-private.h"
#include "report.h"
#include "store-index.h"
#include "run-dir.h"

struct selector {
	char **files;
	char **ids;
	const char *label; /* points into the parsed copy */
	char *copy;
};

static void selector_done(struct selector *s)
{
	strv_free(s->files);
	strv_free(s->ids);
	free(s->copy);
	*s = (struct selector){ 0 };
}

static bool valid_id(const char *id)
{
	return *id && !strchr(id, '/') && strcmp(id, ".") && strcmp(id, "..");
}

static int selector_parse(const char *role, const char *text, struct selector *s, struct sb_error *err)
{
	char *save = NULL;

	*s = (struct selector){ 0 };
	if (!text || !*text)
		return sb_error_set(err, -EINVAL, "--%s: empty selector; give label=NAME, id=RUN_ID or a report file",
				    role);
	/* A selector that names an existing file is a path, commas and all. */
	if (access(text, F_OK) == 0)
		return strv_push(&s->files, text) < 0 ? sb_error_set(err, -ENOMEM, "out of memory") : 0;

	s->copy = strdup(text);
	if (!s->copy)
		return sb_error_set(err, -ENOMEM, "out of memory");
	for (char *t = strtok_r(s->copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int r = 0;

		if (!strncmp(t, "label=", 6)) {
			if (s->label)
				return sb_error_set(err, -EINVAL, "--%s %s: more than one label= term", role, text);
			if (!t[6])
				return sb_error_set(err, -EINVAL, "--%s %s: label= needs a name", role, text);
			s->label = t + 6;
		} else if (!strncmp(t, "id=", 3)) {
			if (!valid_id(t + 3))
				return sb_error_set(err, -EINVAL, "--%s %s: '%s' is not a run id (a run directory's "
						    "name, without '/')", role, text, t + 3);
			r = strv_push(&s->ids, t + 3);
		} else if (!strncmp(t, "file=", 5)) {
			if (!t[5])
				return sb_error_set(err, -EINVAL, "--%s %s: file= needs a path", role, text);
			r = strv_push(&s->files, t + 5);
		} else if (strchr(t, '/') || strstr(t, ".json")) {
			r = strv_push(&s->files, t);
		} else {
			return sb_error_set(err, -EINVAL, "--%s: '%s' is neither label=NAME, id=RUN_ID, file=PATH nor "
					    "an existing report file", role, t);
		}
		if (r < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

void compare_side_done(struct compare_side *side)
{
	free(side->role);
	free(side->selector);
	free(side->label);
	free(side->reports);
	free(side->reps);
	strv_free(side->notes);
	strv_free(side->trouble);
	*side = (struct compare_side){ 0 };
}

static int cmp_report(const void *a, const void *b)
{
	const struct compare_report *x = *(const struct compare_report *const *)a;
	const struct compare_report *y = *(const struct compare_report *const *)b;
	int c = strcmp(x->id, y->id);

	return c ? c : strcmp(x->path, y->path);
}

static bool report_has_arm(const struct compare_report *rep, const char *label)
{
	struct json_object *arms = json_lookup(rep->root, "arms");

	for (size_t i = 0; i < json_object_array_length(arms); i++)
		if (!strcmp(json_lookup_string(json_object_array_get_idx(arms, i), "label"), label))
			return true;
	return false;
}

static void arm_list(const struct compare_report *rep, char *buf, size_t size)
{
	struct json_object *arms = json_lookup(rep->root, "arms");
	struct strbuf b = { 0 };

	for (size_t i = 0; i < json_object_array_length(arms); i++)
		strbuf_appendf(&b, "%s%s", i ? ", " : "", json_lookup_string(json_object_array_get_idx(arms, i), "label"));
	_cleanup_free_ char *s = strbuf_steal(&b);
	text_sanitize(s && *s ? s : "(none)", buf, size);
}

/*
 * A note when the host VM's kernel of any repetition of arm want in rep
 * went wrong itself (a WARN, an oops, a soft lockup: its taint's trouble
 * letters): figures from a kernel that warned may not be the patch's.
 */
static int note_kernel_trouble(struct compare_side *side, const struct compare_report *rep, const char *want)
{
	struct json_object *reps = json_lookup(rep->root, "repetitions");
	size_t of = 0, tainted = 0;
	char letters[8] = "", first[300] = "";

	for (size_t j = 0; j < json_object_array_length(reps); j++) {
		struct json_object *rp = json_object_array_get_idx(reps, j), *hv = json_lookup(rp, "host_vm");
		const char *flags = json_lookup_string(hv, "kernel_taint_flags");
		bool trouble = false;
		if (strcmp(json_lookup_string(rp, "arm"), want) || !flags)
			continue;
		of++;
		for (const char *c = flags; *c; c++) {
			size_t n = strlen(letters);
			if (!report_taint_trouble(*c))
				continue;
			trouble = true;
			if (!strchr(letters, *c) && n + 1 < sizeof(letters)) {
				letters[n] = *c;
				letters[n + 1] = '\0';
			}
		}
		if (!trouble)
			continue;
		tainted++;
		struct json_object *w = json_lookup(hv, "kernel_warnings");
		if (!*first && json_object_is_type(w, json_type_array) && json_object_array_length(w) > 0)
			text_sanitize(json_object_get_string(json_object_array_get_idx(w, 0)), first, sizeof(first));
	}
	if (!tainted)
		return 0;
	struct strbuf what = { 0 };
	for (const char *c = letters; *c; c++)
		strbuf_appendf(&what, "%s%c: %s", c == letters ? "" : ", ", *c, report_taint_trouble(*c));
	_cleanup_free_ char *w = strbuf_steal(&what);
	int r = strv_pushf(&side->notes, "run %s, arm %s: the host VM's kernel was tainted (%s) in %zu of %zu "
			   "repetition%s%s%s%s; figures from a kernel in trouble may not be the patch's "
			   "(host_vm.kernel_warnings)", rep->id, want, w ? w : "", tainted, of, of == 1 ? "" : "s",
			   *first ? ": \"" : "", first, *first ? "\"" : "");
	if (r < 0)
		return r;
	return strv_push(&side->trouble, side->notes[strv_length(side->notes) - 1]);
}

/*
 * The counters rep's self-check found partial (probes' "partial",
 * docs/report-format.md#self-check), each with its numbers: a count and its
 * causes that miss events KVM counted are not figures to compare as exact.
 * Their causes (COUNTER.CAUSE) carry the same text and are not repeated.
 */
static int note_partial(struct compare_side *side, const struct compare_report *rep)
{
	struct json_object *probes = json_lookup(rep->root, "probes");

	if (!probes || !json_object_is_type(probes, json_type_object))
		return 0;
	json_object_object_foreach(probes, counter, p) {
		const char *partial = json_lookup_string(p, "partial");
		const char *dot = strchr(counter, '.');

		if (!partial || (dot && strchr(dot + 1, '.')))
			continue;
		if (strv_pushf(&side->notes, "run %s: %s is partial, not exact: %s", rep->id, counter, partial) < 0)
			return -ENOMEM;
	}
	return 0;
}

enum source_kind {
	SOURCE_NAMED,   /* file= or id= terms: each must have the arm */
	SOURCE_DEFAULT, /* positional reports: at least one must have the arm */
	SOURCE_STORE,   /* the store scan: at least one must have the arm, unfinished runs skipped */
};

/* The completed repetitions of arm want in rep, and rep itself, onto side (noting what is left out). */
static int side_add_report(struct compare_side *side, const struct compare_report *rep, const char *want,
			   const char *role, const char *selector, struct sb_error *err)
{
	struct json_object *reps = json_lookup(rep->root, "repetitions");
	size_t used = 0, left_out = 0;

	for (size_t j = 0; j < json_object_array_length(reps); j++) {
		struct json_object *rp = json_object_array_get_idx(reps, j);
		if (strcmp(json_lookup_string(rp, "arm"), want))
			continue;
		if (strcmp(json_lookup_string(rp, "state"), "completed")) {
			left_out++;
			continue;
		}
		if (side->n_reps >= COMPARE_MAX_REPS)
			return sb_error_set(err, -E2BIG, "--%s %s: more than %d repetitions", role, selector,
					    COMPARE_MAX_REPS);
		struct compare_rep *nv = realloc(side->reps, (side->n_reps + 1) * sizeof(*nv));
		if (!nv)
			goto oom;
		side->reps = nv;
		side->reps[side->n_reps++] = (struct compare_rep){
			.report = rep,
			.rep = rp,
			.timeline = j < rep->n_timelines ? &rep->timelines[j] : NULL,
			.index = json_object_get_int64(json_lookup(rp, "index")),
		};
		used++;
	}
	if (left_out &&
	    strv_pushf(&side->notes, "run %s: %zu repetition%s of %s did not complete and %s "
		       "left out", rep->id, left_out, left_out == 1 ? "" : "s", want,
		       left_out == 1 ? "is" : "are") < 0)
		goto oom;
	if (note_kernel_trouble(side, rep, want) < 0 || note_partial(side, rep) < 0)
		goto oom;
	if (strcmp(rep->state, "completed") &&
	    strv_pushf(&side->notes, "run %s is %s: using its %zu completed repetition%s",
		       rep->id, rep->state, used, used == 1 ? "" : "s") < 0)
		goto oom;

	const struct compare_report **nr = realloc(side->reports, (side->n_reports + 1) * sizeof(*nr));
	if (!nr)
		goto oom;
	side->reports = nr;
	side->reports[side->n_reports++] = rep;
	return 0;
oom:
	return sb_error_set(err, -ENOMEM, "out of memory");
}

/* Fills side from reports (sorted here) for label (NULL: the reports' only arm). */
static int side_fill(const char *role, const char *selector, const char *label,
		     const struct compare_report **reports, size_t n_reports, enum source_kind kind,
		     const char *where, struct compare_side *side, struct sb_error *err)
{
	_cleanup_free_ char *chosen = NULL;
	char arms[256];
	int r;

	*side = (struct compare_side){ 0 };
	if (!(side->role = strdup(role)) || !(side->selector = strdup(selector)))
		goto oom;
	if (n_reports) /* the label index may have spared every load: no array */
		qsort(reports, n_reports, sizeof(*reports), cmp_report);

	for (size_t i = 0; i < n_reports; i++) {
		const struct compare_report *rep = reports[i];
		const char *want = label ? label : chosen;
		struct json_object *armv = json_lookup(rep->root, "arms");

		if (!want) {
			if (json_object_array_length(armv) != 1) {
				arm_list(rep, arms, sizeof(arms));
				return sb_error_set(err, -EINVAL, "--%s %s: run %s (%s) has %zu arms (%s): add label=NAME "
						    "to choose one", role, selector, rep->id, rep->path,
						    json_object_array_length(armv), arms);
			}
			if (!(chosen = strdup(json_lookup_string(json_object_array_get_idx(armv, 0), "label"))))
				goto oom;
			want = chosen;
		} else if (!report_has_arm(rep, want)) {
			if (kind != SOURCE_NAMED && label)
				continue;
			arm_list(rep, arms, sizeof(arms));
			if (!label)
				return sb_error_set(err, -EINVAL, "--%s %s: run %s has arm %s, run %s has %s: pooling "
						    "different labels needs label=NAME", role, selector,
						    side->reports[0]->id, want, rep->id, arms);
			return sb_error_set(err, -EINVAL, "--%s %s: run %s (%s) has no arm labelled '%s'; its arms: %s",
					    role, selector, rep->id, rep->path, want, arms);
		}

		if (kind == SOURCE_STORE && (!strcmp(rep->state, "running") || !strcmp(rep->state, "queued"))) {
			if (strv_pushf(&side->notes, "run %s skipped: it is still %s", rep->id,
				       rep->state) < 0)
				goto oom;
			continue;
		}

		r = side_add_report(side, rep, want, role, selector, err);
		if (r < 0)
			return r;
	}

	const char *final_label = label ? label : chosen;
	if (!final_label || side->n_reports == 0)
		return sb_error_set(err, -ENOENT, "--%s %s: no run with an arm labelled '%s' in %s", role, selector,
				    final_label ? final_label : "?", where);
	if (!(side->label = strdup(final_label)))
		goto oom;
	if (side->n_reps == 0)
		return sb_error_set(err, -ENODATA, "--%s %s: no completed repetition of '%s' in %s; the runs "
				    "failed or are still running", role, selector, side->label, where);
	return 0;
oom:
	r = sb_error_set(err, -ENOMEM, "out of memory");
	return r;
}

/* The store's entries, sorted, bounded by COMPARE_MAX_STORE_ENTRIES. */
static int list_store(const char *store, char ***ret, size_t *n_ret, struct sb_error *err)
{
	_cleanup_strv_free_ char **names = NULL;
	size_t n_names = 0;
	struct dirent *e;
	DIR *d;
	int r = 0;

	if (!store || !*store)
		return sb_error_set(err, -EINVAL, "no results store given; pass --store DIR or report files");
	d = opendir(store);
	if (!d)
		return sb_error_set(err, -errno, "cannot read the results store %s: %s; pass --store DIR (the "
				    "directory holding one directory per run) or report files", store, strerror(errno));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n_names >= COMPARE_MAX_STORE_ENTRIES) {
			r = sb_error_set(err, -E2BIG, "results store %s has more than %d entries; select runs by "
					 "id= or file= instead", store, COMPARE_MAX_STORE_ENTRIES);
			break;
		}
		if (strv_push(&names, e->d_name) < 0) {
			r = sb_error_set(err, -ENOMEM, "out of memory");
			break;
		}
		n_names++;
	}
	closedir(d);
	if (r < 0)
		return r;
	strv_sort(names);
	*ret = TAKE_PTR(names);
	*n_ret = n_names;
	return 0;
}

/*
 * One entry of the store: its report loaded and kept in *out when it has
 * label's arm (the index spares the load of one it knows lacks it); one
 * that cannot be read is a note, not an error.
 */
static int scan_run(struct compare_pool *pool, struct store_index *ix, const char *store, const char *name,
		    const char *label, const struct compare_report ***out, size_t *n_out, char ***notes,
		    struct sb_error *err)
{
	_cleanup_free_ char *file = NULL;
	struct compare_report *rep;
	struct sb_error lerr = { 0 };
	struct stat st;
	bool has;

	if (asprintf(&file, "%s/%s/" RUN_DIR_REPORT, store, name) < 0) {
		file = NULL;
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	if (stat(file, &st) < 0)
		return 0; /* not a run directory */
	if (store_index_lookup(ix, name, &st, label, &has) == 1 && !has)
		return 0;
	size_t loaded = pool->n;
	if (compare_pool_load(pool, file, &rep, &lerr) < 0) {
		if (lerr.code == -ENOMEM || lerr.code == -E2BIG)
			return sb_error_set(err, lerr.code, "%s", lerr.msg);
		if (strv_pushf(notes, "skipped %s", lerr.msg) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
		return 0;
	}
	if (store_index_update(ix, name, &st, json_lookup(rep->root, "arms")) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (!report_has_arm(rep, label)) {
		/* not this label's: only the index keeps what it has (a scan without one loads every report) */
		if (pool->n > loaded)
			compare_pool_drop_last(pool);
		return 0;
	}
	const struct compare_report **nv = realloc(*out, (*n_out + 1) * sizeof(*nv));
	if (!nv)
		return sb_error_set(err, -ENOMEM, "out of memory");
	*out = nv;
	(*out)[(*n_out)++] = rep;
	return 0;
}

/*
 * Every run directory in store that has an arm labelled label, loaded;
 * those that do not load are noted and skipped. The store's label index
 * (store-index.h) spares the loads of runs it knows lack the label; a run
 * loaded and found to lack it is dropped from the pool at once, so that
 * memory and the pool's bound are those of the selected runs.
 */
static int scan_store(struct compare_pool *pool, const char *store, const char *label,
		      const struct compare_report ***out, size_t *n_out, char ***notes, struct sb_error *err)
{
	_cleanup_strv_free_ char **names = NULL;
	_cleanup_(store_index_freep) struct store_index *ix = NULL;
	size_t n_names = 0;
	int r;

	r = list_store(store, &names, &n_names, err);
	if (r < 0)
		return r;
	if (store_index_open(store, &ix) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n_names; i++) {
		r = scan_run(pool, ix, store, names[i], label, out, n_out, notes, err);
		if (r < 0)
			return r;
	}
	if (store_index_prune(ix, names, n_names) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	/* a store this user may not write is scanned in full next time, as without an index */
	(void)store_index_save(ix, store, NULL);
	return 0;
}

static int push_report(const struct compare_report ***v, size_t *n, const struct compare_report *rep)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == rep)
			return 0;
	const struct compare_report **nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	(*v)[(*n)++] = rep;
	return 0;
}

/* Loads path into the pool and adds it to v (once). */
static int load_push(struct compare_pool *pool, const char *path, const struct compare_report ***v, size_t *n,
		     struct sb_error *err)
{
	struct compare_report *rep;
	int r = compare_pool_load(pool, path, &rep, err);

	if (r < 0)
		return r;
	if (push_report(v, n, rep) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* The runs a selector names: file=PATH, then id=RUN_ID in the store. */
static int load_named(struct compare_pool *pool, const char *role, const char *selector, const struct selector *sel,
		      const char *store, const struct compare_report ***v, size_t *n, struct sb_error *err)
{
	size_t n_files = strv_length(sel->files), n_ids = strv_length(sel->ids);
	int r;

	for (size_t i = 0; i < n_files + n_ids; i++) {
		_cleanup_free_ char *path = NULL;

		if (i < n_files) {
			path = strdup(sel->files[i]);
		} else {
			if (!store || !*store)
				return sb_error_set(err, -EINVAL, "--%s %s: id= needs the results store; pass "
						    "--store DIR", role, selector);
			if (asprintf(&path, "%s/%s", store, sel->ids[i - n_files]) < 0)
				path = NULL;
		}
		if (!path)
			return sb_error_set(err, -ENOMEM, "out of memory");
		r = load_push(pool, path, v, n, err);
		/* the loader's message names the file; an id needs saying where it was looked for */
		if (r == -ENOENT && i >= n_files)
			return sb_error_set(err, r, "--%s %s: no run %s in the results store %s", role, selector,
					    sel->ids[i - n_files], store);
		if (r < 0)
			return r;
	}
	return 0;
}

int compare_select(struct compare_pool *pool, const char *role, const char *selector,
		   char *const *default_sources, size_t n_default_sources, const char *store,
		   struct compare_side *side, struct sb_error *err)
{
	_cleanup_free_ const struct compare_report **reports = NULL;
	_cleanup_free_ char *where = NULL;
	_cleanup_strv_free_ char **notes = NULL;
	size_t n_reports = 0;
	struct selector sel;
	enum source_kind kind;
	int r;

	*side = (struct compare_side){ 0 };
	r = selector_parse(role, selector, &sel, err);
	if (r < 0)
		goto out;

	if (sel.files || sel.ids) {
		kind = SOURCE_NAMED;
		r = load_named(pool, role, selector, &sel, store, &reports, &n_reports, err);
		if (r < 0)
			goto out;
		where = strdup("the named runs");
	} else if (n_default_sources) {
		kind = SOURCE_DEFAULT;
		for (size_t i = 0; i < n_default_sources && r >= 0; i++)
			r = load_push(pool, default_sources[i], &reports, &n_reports, err);
		if (r < 0)
			goto out;
		where = strdup("the reports given");
	} else {
		kind = SOURCE_STORE;
		if (!sel.label) {
			r = sb_error_set(err, -EINVAL, "--%s %s: say which runs: label=NAME searches the results "
					 "store, id=RUN_ID or file=PATH name runs", role, selector);
			goto out;
		}
		r = scan_store(pool, store, sel.label, &reports, &n_reports, &notes, err);
		if (r < 0)
			goto out;
		if (asprintf(&where, "the results store %s", store) < 0)
			where = NULL;
	}
	if (!where) {
		r = sb_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}

	r = side_fill(role, selector, sel.label, reports, n_reports, kind, where, side, err);
	if (r < 0)
		goto out;
	for (size_t i = 0; notes && notes[i]; i++)
		if (strv_push(&side->notes, notes[i]) < 0) {
			r = sb_error_set(err, -ENOMEM, "out of memory");
			goto out;
		}
out:
	if (r < 0)
		compare_side_done(side);
	selector_done(&sel);
	return r;
}

int compare_select_two_arms(struct compare_pool *pool, const char *path, struct compare_side *baseline,
			    struct compare_side *patched, struct sb_error *err)
{
	_cleanup_free_ char *sel_a = NULL, *sel_b = NULL;
	struct compare_report *rep;
	const struct compare_report *one[1];
	char arms[256];
	int r;

	r = compare_pool_load(pool, path, &rep, err);
	if (r < 0)
		return r;
	struct json_object *armv = json_lookup(rep->root, "arms");
	if (json_object_array_length(armv) != 2) {
		arm_list(rep, arms, sizeof(arms));
		if (json_object_array_length(armv) < 2) /* nothing in it to pair: the other side is another run */
			return sb_error_set(err, -EINVAL, "%s: a single report compares its two arms, but run %s has "
					    "%zu (%s); give the other side's report too: 'snapbench compare "
					    "BASELINE.json %s' (or --baseline SEL --patched SEL, docs/compare.md)",
					    path, rep->id, json_object_array_length(armv), arms, path);
		return sb_error_set(err, -EINVAL, "%s: a single report compares its two arms, but run %s has %zu "
				    "(%s); pick two: --baseline label=A --patched label=B %s", path, rep->id,
				    json_object_array_length(armv), arms, path);
	}
	const char *a = json_lookup_string(json_object_array_get_idx(armv, 0), "label");
	const char *b = json_lookup_string(json_object_array_get_idx(armv, 1), "label");
	if (asprintf(&sel_a, "file=%s,label=%s", path, a) < 0 || asprintf(&sel_b, "file=%s,label=%s", path, b) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	one[0] = rep;
	r = side_fill("baseline", sel_a, a, one, 1, SOURCE_NAMED, path, baseline, err);
	if (r < 0)
		return r;
	r = side_fill("patched", sel_b, b, one, 1, SOURCE_NAMED, path, patched, err);
	if (r < 0) {
		compare_side_done(baseline);
		return r;
	}
	return 0;
}

int compare_select_arm(const char *role, const char *label, const struct compare_report *const *reports,
		       size_t n_reports, struct compare_side *side, struct sb_error *err)
{
	_cleanup_free_ const struct compare_report **copy = calloc(n_reports ? n_reports : 1, sizeof(*copy));
	_cleanup_free_ char *selector = NULL;
	int r;

	if (!copy || asprintf(&selector, "label=%s", label) < 0) {
		selector = NULL;
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	memcpy(copy, reports, n_reports * sizeof(*copy)); /* side_fill() sorts them */
	r = side_fill(role, selector, label, copy, n_reports, SOURCE_NAMED, "the reports given", side, err);
	if (r < 0)
		compare_side_done(side);
	return r;
}

static int side_copy_head(const struct compare_side *all, const char *role, struct compare_side *s)
{
	*s = (struct compare_side){ 0 };
	if (!(s->role = strdup(role)) || !(s->selector = strdup(all->selector)) || !(s->label = strdup(all->label)))
		return -ENOMEM;
	s->reports = calloc(all->n_reports, sizeof(*s->reports));
	s->reps = calloc(all->n_reps, sizeof(*s->reps));
	if (!s->reports || !s->reps)
		return -ENOMEM;
	memcpy(s->reports, all->reports, all->n_reports * sizeof(*s->reports));
	s->n_reports = all->n_reports;
	for (size_t i = 0; all->notes && all->notes[i]; i++)
		if (strv_push(&s->notes, all->notes[i]) < 0)
			return -ENOMEM;
	return 0;
}

int compare_split_aa(const struct compare_side *all, enum compare_aa_split split, struct compare_side *a,
		     struct compare_side *b, struct sb_error *err)
{
	if (all->n_reps < 2)
		return sb_error_set(err, -EINVAL, "--aa %s: an A/A split needs at least 2 completed repetitions of "
				    "'%s', found %zu", all->selector, all->label, all->n_reps);
	if (side_copy_head(all, "A", a) < 0 || side_copy_head(all, "B", b) < 0) {
		compare_side_done(a);
		compare_side_done(b);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	size_t half = (all->n_reps + 1) / 2;
	for (size_t i = 0; i < all->n_reps; i++) {
		bool to_a = split == COMPARE_AA_ALTERNATE ? i % 2 == 0 : i < half;
		struct compare_side *s = to_a ? a : b;
		s->reps[s->n_reps++] = all->reps[i];
	}
	return 0;
}
