// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench compare --grid ROWS,COLUMNS: one table per metric, rows by columns, each cell against its row's baseline. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic-file.h"
#include "compare-grid.h"
#include "daemon-format.h"
#include "exit-codes.h"
#include "export-grid.h"
#include "macro.h"
#include "verb-compare-grid.h"
#include "verb-args.h"

enum { GRID_TEXT, GRID_JSON, GRID_MARKDOWN, GRID_CSV, _GRID_MAX };

static const char *const grid_files[_GRID_MAX] = {
	[GRID_TEXT] = "compare-grid.txt",
	[GRID_JSON] = "compare-grid.json",
	[GRID_MARKDOWN] = "compare-grid.md",
	[GRID_CSV] = "compare-grid.csv",
};

static int format_index(const char *name)
{
	static const char *const names[_GRID_MAX] = { "text", "json", "markdown", "csv" };

	if (!strcmp(name, "table"))
		return GRID_TEXT;
	for (int i = 0; i < _GRID_MAX; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

static int write_outputs(const char *dir, char *const text[static _GRID_MAX])
{
	struct sb_error err = { 0 };

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		int r = -errno;
		verb_error("--output %s: cannot create the directory: %s", dir, strerror(-r));
		return r;
	}
	for (int i = 0; i < _GRID_MAX; i++) {
		_cleanup_free_ char *path = NULL;
		if (asprintf(&path, "%s/%s", dir, grid_files[i]) < 0) {
			path = NULL;
			verb_error("out of memory");
			return -ENOMEM;
		}
		if (atomic_file_write(path, text[i], strlen(text[i]), 0644, &err) < 0) {
			verb_error("%s", err.msg);
			return err.code;
		}
	}
	return 0;
}

/* "ROWS,COLUMNS" into its two names (copied into buf); -EINVAL when it is not two names. */
static int split_grid(const char *grid, char *buf, size_t size, struct compare_grid_request *req)
{
	char *comma;

	if (snprintf(buf, size, "%s", grid) >= (int)size || !(comma = strchr(buf, ',')) || strchr(comma + 1, ','))
		return -EINVAL;
	*comma = '\0';
	req->rows = buf;
	req->columns = comma + 1;
	return *req->rows && *req->columns ? 0 : -EINVAL;
}

int compare_grid_verb(const struct compare_grid_cli *c, const struct compare_options *o)
{
	struct compare_grid_request req = { .baseline = c->baseline };
	struct compare_pool pool = { 0 };
	struct compare_grid *g = NULL;
	struct sb_error err = { 0 };
	char *text[_GRID_MAX] = { 0 }, names[256];
	int f = format_index(c->format), ret = EXIT_USAGE;

	if (f < 0) {
		verb_error("--format %s: --grid writes text, json, markdown or csv", c->format);
		return EXIT_USAGE;
	}
	if (!c->grid || split_grid(c->grid, names, sizeof(names), &req) < 0) {
		verb_error("--grid %s: give the row and the column parameter, ROWS,COLUMNS (e.g. --grid chunk,nr_pages)",
			   c->grid ? c->grid : "(missing)");
		return EXIT_USAGE;
	}
	if (compare_grid_compute(&pool, c->reports, c->n_reports, &req, o, &g, &err) < 0) {
		verb_error("%s", err.msg);
		ret = err.code == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
		goto out;
	}
	text[GRID_TEXT] = compare_grid_format_text(g, f == GRID_TEXT && output_ascii());
	text[GRID_JSON] = compare_grid_json_string(g);
	text[GRID_MARKDOWN] = compare_grid_format_markdown(g);
	text[GRID_CSV] = export_compare_grid_csv(g);
	ret = EXIT_FAIL;
	for (int i = 0; i < _GRID_MAX; i++)
		if (!text[i]) {
			verb_error("out of memory");
			goto out;
		}
	if (c->output && write_outputs(c->output, text) < 0)
		goto out;
	if (!c->quiet && (fputs(text[f], stdout) < 0 || fflush(stdout) != 0)) {
		verb_error("cannot write to stdout: %s", strerror(errno));
		goto out;
	}
	ret = g->exit_code;
out:
	for (int i = 0; i < _GRID_MAX; i++)
		free(text[i]);
	compare_grid_free(g);
	compare_pool_done(&pool);
	return ret;
}
