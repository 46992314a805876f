// SPDX-License-Identifier: GPL-2.0-or-later
#include "ccache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "spawn-program.h"
#include "spawn.h"

char *kbuild_ccache_dir(const char *cache)
{
	char *p = NULL;

	return asprintf(&p, "%s-ccache", cache) < 0 ? NULL : p;
}

int kbuild_ccache_check(struct sb_error *err)
{
	_cleanup_free_ char *found = NULL;
	int r = spawn_find_program("ccache", &found);

	if (r == -ENOMEM)
		return sb_error_set(err, r, "out of memory");
	if (r < 0)
		return sb_error_set(err, -ENOENT, "--ccache: ccache is not installed: install Debian's package ccache "
				    "(scripts/install-deps does)");
	return 0;
}

/* "direct_cache_hit\t12": the counters a build's summary sums */
static void stats_line(void *userdata, const char *line)
{
	struct kbuild_ccache_stats *s = userdata;
	const char *tab = strchr(line, '\t');
	unsigned long long v;

	if (!tab || sscanf(tab + 1, "%llu", &v) != 1)
		return;
	if (!strncmp(line, "direct_cache_hit\t", 17) || !strncmp(line, "preprocessed_cache_hit\t", 23))
		s->hits += v;
	else if (!strncmp(line, "cache_miss\t", 11))
		s->misses += v;
}

int kbuild_ccache_stats(const char *dir, struct kbuild_ccache_stats *ret, struct sb_error *err)
{
	_cleanup_free_ char *env = NULL;
	char *argv[] = { "ccache", "--print-stats", NULL };
	int r;

	if (asprintf(&env, "CCACHE_DIR=%s", dir) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	*ret = (struct kbuild_ccache_stats){};
	r = kbuild_spawn(&(struct kbuild_spawn){ .argv = argv, .log_fd = -1, .on_line = stats_line, .userdata = ret,
						 .env_add = (char *[]){ env, NULL } },
			 err);
	if (r > 0)
		return sb_error_set(err, -EIO, "ccache --print-stats of %s exited with %d", dir, r);
	return r;
}
