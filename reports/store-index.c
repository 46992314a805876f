// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The label index of a results store (store-index.h): STORE/.labels.json,
 *
 *   {"schema": "snapbench.store-index/1",
 *    "runs": {"RUN-ID": {"size": N, "mtime_ns": N, "ino": N, "labels": ["a", "b"]}}}
 *
 * An entry holds while its report.json has the size, mtime and inode it
 * records; anything else in the file (a bad type, a missing field, a file
 * that does not parse) is a missing entry, never an error.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic-file.h"
#include "fileio.h"
#include "json-util.h"
#include "macro.h"
#include "store-index.h"
#include "strv.h"

#define INDEX_SCHEMA "snapbench.store-index/1"
#define INDEX_MAX_BYTES (64u << 20)
#define INDEX_MAX_DEPTH 6

struct store_index {
	struct json_object *root; /* the whole document */
	struct json_object *runs; /* root's "runs", borrowed */
	bool dirty;
};

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static int index_path(const char *store, char **ret)
{
	return asprintf(ret, "%s/" STORE_INDEX_FILE, store) < 0 ? -ENOMEM : 0;
}

static int index_new(struct store_index *ix)
{
	ix->root = json_object_new_object();
	ix->runs = json_object_new_object();
	if (!ix->root || !ix->runs || json_object_object_add(ix->root, "schema", json_object_new_string(INDEX_SCHEMA)) < 0 ||
	    json_object_object_add(ix->root, "runs", ix->runs) < 0) {
		json_object_put(ix->runs);
		ix->runs = NULL;
		return -ENOMEM;
	}
	return 0;
}

int store_index_open(const char *store, struct store_index **ret)
{
	_cleanup_free_ struct store_index *ix = calloc(1, sizeof(*ix));
	_cleanup_free_ char *path = NULL, *text = NULL;
	struct json_object *doc = NULL;
	struct sb_error err = {};
	size_t len;

	if (!ix || index_path(store, &path) < 0)
		return -ENOMEM;
	if (read_regular_file(path, INDEX_MAX_BYTES, &text, &len, &err) == 0 &&
	    json_parse_text(text, len, INDEX_MAX_DEPTH, 0, &doc, NULL) == 0) {
		const char *schema = json_lookup_string(doc, "schema");
		struct json_object *runs = json_lookup(doc, "runs");

		if (schema && !strcmp(schema, INDEX_SCHEMA) && json_object_is_type(runs, json_type_object)) {
			ix->root = doc;
			ix->runs = runs;
		} else {
			json_object_put(doc);
		}
	} else if (err.code == -ENOMEM) {
		return -ENOMEM;
	}
	if (!ix->root && index_new(ix) < 0) {
		json_object_put(ix->root);
		return -ENOMEM;
	}
	*ret = TAKE_PTR(ix);
	return 0;
}

static bool entry_holds(struct json_object *e, const struct stat *st)
{
	struct json_object *v;

	return (v = json_lookup(e, "size")) && json_object_is_type(v, json_type_int) &&
	       json_object_get_int64(v) == (int64_t)st->st_size && (v = json_lookup(e, "mtime_ns")) &&
	       json_object_is_type(v, json_type_int) && json_object_get_int64(v) == mtime_ns(st) &&
	       (v = json_lookup(e, "ino")) && json_object_is_type(v, json_type_int) &&
	       (uint64_t)json_object_get_int64(v) == (uint64_t)st->st_ino;
}

int store_index_lookup(const struct store_index *ix, const char *name, const struct stat *st, const char *label,
		       bool *has)
{
	struct json_object *e = json_lookup(ix->runs, name), *labels;

	if (!e || !entry_holds(e, st))
		return 0;
	labels = json_lookup(e, "labels");
	if (!json_object_is_type(labels, json_type_array))
		return 0;
	*has = false;
	for (size_t i = 0; i < json_object_array_length(labels); i++) {
		struct json_object *l = json_object_array_get_idx(labels, i);
		if (!json_object_is_type(l, json_type_string))
			return 0;
		if (!strcmp(json_object_get_string(l), label))
			*has = true;
	}
	return 1;
}

int store_index_update(struct store_index *ix, const char *name, const struct stat *st, struct json_object *arms)
{
	_cleanup_json_ struct json_object *e = json_object_new_object();
	struct json_object *labels = json_object_new_array();

	if (!e || !labels || json_object_object_add(e, "labels", labels) < 0) {
		json_object_put(labels);
		return -ENOMEM;
	}
	for (size_t i = 0; i < json_object_array_length(arms); i++) {
		const char *l = json_lookup_string(json_object_array_get_idx(arms, i), "label");
		if (l && json_object_array_add(labels, json_object_new_string(l)) < 0)
			return -ENOMEM;
	}
	if (json_object_object_add(e, "size", json_object_new_int64((int64_t)st->st_size)) < 0 ||
	    json_object_object_add(e, "mtime_ns", json_object_new_int64(mtime_ns(st))) < 0 ||
	    json_object_object_add(e, "ino", json_object_new_int64((int64_t)st->st_ino)) < 0 ||
	    json_object_object_add(ix->runs, name, TAKE_PTR(e)) < 0)
		return -ENOMEM;
	ix->dirty = true;
	return 0;
}

static int cmp_name(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

int store_index_prune(struct store_index *ix, char *const *names, size_t n)
{
	_cleanup_strv_free_ char **gone = NULL;

	json_object_object_foreach(ix->runs, name, e) {
		(void)e;
		if (!bsearch(name, names, n, sizeof(*names), cmp_name) && strv_push(&gone, name) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; gone && gone[i]; i++) {
		json_object_object_del(ix->runs, gone[i]);
		ix->dirty = true;
	}
	return 0;
}

int store_index_save(struct store_index *ix, const char *store, struct sb_error *err)
{
	_cleanup_free_ char *path = NULL;
	const char *text;
	size_t len;

	if (!ix->dirty)
		return 0;
	if (index_path(store, &path) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	text = json_object_to_json_string_length(ix->root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (!text)
		return sb_error_set(err, -ENOMEM, "out of memory");
	int r = atomic_file_write(path, text, len, 0644, err);
	if (r == 0)
		ix->dirty = false;
	return r;
}

void store_index_free(struct store_index *ix)
{
	if (!ix)
		return;
	json_object_put(ix->root);
	free(ix);
}
