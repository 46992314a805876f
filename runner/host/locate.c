// SPDX-License-Identifier: GPL-2.0-or-later
/* Where the run engine finds its files: the build tree, the guest image, the results directory. */
#include "locate.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "qemu-args.h"

const char *runner_default_results_dir(void)
{
	return geteuid() == 0 ? "/var/lib/snapbench/runs" : "./snapbench-runs";
}

int runner_find_in_build_tree(const char *relpath, char **ret, struct sb_error *err)
{
	char exe[PATH_MAX], cand[PATH_MAX + 64];
	ssize_t n;

	/* a binary of a build tree (BUILD/cli/snapbench, BUILD/tests/X/test) uses that build's files */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	static const char *const ups[] = { "/..", "/../.." };
	for (size_t i = 0; i < ARRAY_SIZE(ups); i++) {
		snprintf(cand, sizeof(cand), "%s%s/build.ninja", exe, ups[i]);
		if (access(cand, F_OK) < 0)
			continue;
		snprintf(cand, sizeof(cand), "%s%s/%s", exe, ups[i], relpath);
		if (access(cand, R_OK) == 0) {
			*ret = realpath(cand, NULL);
			return *ret ? 1 : sb_error_set(err, -errno, "%s: %s", cand, strerror(errno));
		}
	}
	return 0;
}

int runner_find_guest_image(char **ret, struct sb_error *err)
{
	const char *env = getenv(GUEST_IMAGE_ENV);

	if (!(env && *env)) {
		int r = runner_find_in_build_tree("guest/" GUEST_IMAGE_NAME, ret, err);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	return guest_image_find(ret, err);
}
