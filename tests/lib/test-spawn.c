// SPDX-License-Identifier: GPL-2.0-or-later
/* A program run by a test, its stdout read as it prints (test-spawn.h). */
#include "test-spawn.h"

#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* the most a test takes from one program: more is a runaway */
#define OUTPUT_MAX (16u << 20)

extern char **environ;

void test_spawn(struct test_child *c, char *const argv[])
{
	posix_spawn_file_actions_t fa;
	int pipefd[2];

	CHECK(pipe(pipefd) == 0);
	CHECK(posix_spawn_file_actions_init(&fa) == 0);
	CHECK(posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO) == 0);
	CHECK(posix_spawn_file_actions_addclose(&fa, pipefd[0]) == 0);
	CHECK_MSG(posix_spawn(&c->pid, argv[0], &fa, NULL, argv, environ) == 0, "cannot run %s", argv[0]);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	c->out = fdopen(pipefd[0], "r");
	CHECK(c->out);
}

char *test_child_line(struct test_child *c)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, c->out);

	if (n < 0) {
		free(line);
		return NULL;
	}
	if (n && line[n - 1] == '\n')
		line[n - 1] = '\0';
	return line;
}

int test_child_wait(struct test_child *c)
{
	char buf[4096];
	int status;

	while (fread(buf, 1, sizeof(buf), c->out) > 0)
		;
	fclose(c->out);
	c->out = NULL;
	CHECK(waitpid(c->pid, &status, 0) == c->pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int test_run(char *const argv[], char **out)
{
	struct test_child c;
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	size_t n;

	CHECK(buf);
	test_spawn(&c, argv);
	while ((n = fread(buf + len, 1, cap - len - 1, c.out)) > 0) {
		len += n;
		CHECK_MSG(len < OUTPUT_MAX, "%s printed more than %u bytes", argv[0], OUTPUT_MAX);
		if (cap - len - 1 == 0) {
			buf = realloc(buf, cap *= 2);
			CHECK(buf);
		}
	}
	buf[len] = '\0';
	*out = buf;
	return test_child_wait(&c);
}
