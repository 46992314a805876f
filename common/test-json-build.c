// SPDX-License-Identifier: GPL-2.0-or-later
/* The JSON builder: a document built through it, and the out-of-memory latch. */
#include <string.h>

#include "check.h"
#include "json-build.h"

int main(void)
{
	struct json_build b = {};
	struct json_object *o = jb_obj(&b), *a = jb_arr(&b);

	jb_add(&b, o, "s", jb_str(&b, "x"));
	jb_add(&b, o, "null", jb_str(&b, NULL));
	jb_put(&b, o, "absent", NULL);
	jb_put(&b, o, "n", jb_i64(&b, -3));
	jb_add(&b, o, "u", jb_u64(&b, UINT64_MAX));
	jb_add(&b, o, "t", jb_bool(&b, true));
	jb_push(&b, a, jb_i64(&b, 1));
	jb_push(&b, a, NULL);
	jb_push_some(&b, a, NULL);
	jb_add(&b, o, "a", a);
	CHECK(!b.oom);
	CHECK_MSG(!strcmp(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			  "{\"s\":\"x\",\"null\":null,\"n\":-3,\"u\":18446744073709551615,\"t\":true,\"a\":[1,null]}"),
		  "%s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));

	/* a container that failed: what it is given is freed, the failure latched (ASan sees a leak otherwise) */
	struct json_build f = {};
	jb_add(&f, NULL, "k", jb_str(&f, "leaked?"));
	CHECK(f.oom);
	f.oom = false;
	jb_push(&f, NULL, jb_obj(&f));
	CHECK(f.oom);
	f.oom = false;
	CHECK(!jb_check(&f, NULL) && f.oom);
	json_object_put(o);
	return 0;
}
