/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared between the files of qmp/; not part of the library's API. */
#pragma once

#include <json-c/json.h>

#include "qmp.h"

/* o's member key if it exists and has type, else NULL. */
struct json_object *qmp_json_member(struct json_object *o, const char *key, enum json_type type);

/* Fill ret from a VersionInfo object ({"qemu": {...}, "package": ...}); -EPROTO without "qemu". */
int qmp_version_from_json(struct json_object *info, struct qmp_version *ret);
