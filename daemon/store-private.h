/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The store's insides, shared by store.c (directories) and store-index.c (summaries). */
#pragma once

#include <json-c/json.h>
#include <sys/types.h>
#include <time.h>

#include "report.h"

/* One run's summary and the report.json it was made from (stat identity). */
struct store_entry {
	char id[REPORT_ID_MAX];
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
	struct json_object *summary;
};

struct store {
	char *state_dir;
	char *runs_dir;
	size_t n, cap;
	struct store_entry *entries; /* sorted by id */
};

/* Field key of object o, NULL when o is not an object or has no such field (borrowed). */
static inline struct json_object *store_get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (o && json_object_is_type(o, json_type_object))
		json_object_object_get_ex(o, key, &v);
	return v;
}
