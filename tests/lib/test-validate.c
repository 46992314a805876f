// SPDX-License-Identifier: GPL-2.0-or-later
#include "test-validate.h"

#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

int test_validate_report(const char *validator, const char *schema, const char *path)
{
	char *argv[] = { "/usr/bin/python3", (char *)validator, (char *)schema, (char *)path, NULL };
	pid_t pid;
	int status;

	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0)
		return -1;
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
