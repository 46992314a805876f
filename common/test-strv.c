// SPDX-License-Identifier: GPL-2.0-or-later
#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strv.h"

int main(void)
{
	/* the empty vector is NULL */
	CHECK(strv_length(NULL) == 0);
	CHECK(strv_free(NULL) == NULL);
	strv_sort(NULL);
	CHECK(!strv_contains(NULL, "a"));

	{
		_cleanup_strv_free_ char **v = NULL;
		char x[] = "pushed";

		CHECK(strv_push(&v, "b") == 0);
		/* a copy: the caller's string stays the caller's */
		CHECK(strv_push(&v, x) == 0);
		x[0] = 'P';
		CHECK(!strcmp(v[1], "pushed"));
		CHECK(strv_pushf(&v, "%s-%d", "a", 7) == 0);
		CHECK(strv_consume(&v, strdup("c")) == 0);
		CHECK(strv_length(v) == 4);
		CHECK(v[4] == NULL);
		CHECK(strv_contains(v, "a-7") && !strv_contains(v, "a"));

		strv_sort(v);
		CHECK(!strcmp(v[0], "a-7") && !strcmp(v[1], "b") && !strcmp(v[2], "c") && !strcmp(v[3], "pushed"));
		CHECK(v[4] == NULL);

		/* a deep copy */
		_cleanup_strv_free_ char **c = strv_copy(v);
		CHECK(c && c != v && strv_length(c) == 4);
		for (size_t i = 0; i < 4; i++)
			CHECK(c[i] != v[i] && !strcmp(c[i], v[i]));
	}

	/* consume of NULL (a failed strdup) is ENOMEM and leaves the vector alone */
	{
		_cleanup_strv_free_ char **v = NULL;

		CHECK(strv_consume(&v, NULL) == -ENOMEM);
		CHECK(v == NULL);
		CHECK(strv_push(&v, "one") == 0);
		CHECK(strv_consume(&v, NULL) == -ENOMEM);
		CHECK(strv_length(v) == 1 && !strcmp(v[0], "one"));
	}

	/* the copy of nothing is an empty vector, not NULL */
	{
		_cleanup_strv_free_ char **c = strv_copy(NULL);
		CHECK(c && c[0] == NULL);
	}
	return 0;
}
