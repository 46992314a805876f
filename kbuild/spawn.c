// SPDX-License-Identifier: GPL-2.0-or-later
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "spawn-program.h"
#include "strbuf.h"
#include "strv.h"

#define LINE_MAX_LEN 4096

/*
 * A clean environment: the caller's PATH (a default without one), HOME and
 * TMPDIR, LC_ALL=C (messages in English, which a failure's "error" lines
 * are picked by), then add's "NAME=VALUE" (replacing a name's value). Make
 * takes every variable of its environment as one of its own: what the
 * build may read comes from add alone (env.h).
 */
static char **environment(char *const *add)
{
	static const char *const kept[] = { "PATH", "HOME", "TMPDIR" };
	_cleanup_strv_free_ char **env = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(kept); i++) {
		const char *v = getenv(kept[i]);
		if (!v && !strcmp(kept[i], "PATH"))
			v = "/usr/local/bin:/usr/bin:/bin";
		if (v && strv_pushf(&env, "%s=%s", kept[i], v) < 0)
			return NULL;
	}
	if (strv_push(&env, "LC_ALL=C") < 0)
		return NULL;
	for (char *const *a = add; a && *a; a++) {
		size_t n = strcspn(*a, "=");
		for (char **e = env; *e; e++)
			if (!strncmp(*e, *a, n) && (*e)[n] == '=') {
				/* getenv() takes a name's first entry: the replaced one goes */
				free(*e);
				memmove(e, e + 1, (strv_length(e + 1) + 1) * sizeof(*e));
				break;
			}
		if (strv_push(&env, *a) < 0)
			return NULL;
	}
	return TAKE_PTR(env);
}

char *kbuild_argv_text(char *const *argv)
{
	_cleanup_strbuf_ struct strbuf b = {};

	for (char *const *a = argv; a && *a; a++)
		strbuf_appendf(&b, "%s%s", a == argv ? "" : " ", *a);
	return strbuf_steal(&b);
}

/* Hands each complete line of buf[0, *len) to s->on_line and keeps the rest at the start of buf. */
static void emit_lines(const struct kbuild_spawn *s, char *buf, size_t *len, bool flush)
{
	size_t start = 0;

	for (size_t i = 0; i < *len; i++)
		if (buf[i] == '\n') {
			buf[i] = '\0';
			if (s->on_line)
				s->on_line(s->userdata, buf + start);
			start = i + 1;
		}
	/* a line longer than the buffer is handed over in pieces rather than lost */
	if (start == 0 && (*len == LINE_MAX_LEN || (flush && *len > 0))) {
		buf[*len < LINE_MAX_LEN ? *len : LINE_MAX_LEN - 1] = '\0';
		if (s->on_line)
			s->on_line(s->userdata, buf);
		start = *len;
	}
	memmove(buf, buf + start, *len - start);
	*len -= start;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (fd >= 0 && n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* a full disk loses log text, not the build's outcome */
		p += w;
		n -= (size_t)w;
	}
}

int kbuild_spawn(const struct kbuild_spawn *s, struct sb_error *err)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_strv_free_ char **env = NULL;
	char buf[LINE_MAX_LEN + 1];
	size_t len = 0;
	int pipefd[2], status, r;
	pid_t pid;

	if (spawn_find_program(s->argv[0], &path) < 0)
		return sb_error_set(err, -ENOENT, "%s: no such program in PATH; install it (make, patch, cp and git come with "
				    "the packages scripts/install-deps installs)", s->argv[0]);
	if (!(env = environment(s->env_add)))
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return sb_error_set(err, -errno, "pipe: %s", strerror(errno));
	const struct spawn_fd fds[] = { { SPAWN_DEV_NULL, 0 }, { pipefd[1], 1 }, { pipefd[1], 2 } };
	/* make and the compilers expect default signals; the caller's process group keeps a terminal's ^C theirs too */
	r = spawn_start(&(struct spawn_options){ .argv = s->argv, .path = path, .envp = env, .cwd = s->cwd, .fds = fds,
						 .n_fds = ARRAY_SIZE(fds), .parent_death_signal = SIGTERM,
						 .reset_signals = true },
			&pid, err);
	close(pipefd[1]);
	if (r < 0) {
		close(pipefd[0]);
		return r;
	}
	for (;;) {
		ssize_t n = read(pipefd[0], buf + len, LINE_MAX_LEN - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		write_all(s->log_fd, buf + len, (size_t)n);
		len += (size_t)n;
		emit_lines(s, buf, &len, false);
	}
	emit_lines(s, buf, &len, true);
	close(pipefd[0]);
	r = spawn_wait(pid, &status);
	if (r < 0)
		return sb_error_set(err, r, "waitpid %s: %s", s->argv[0], strerror(-r));
	if (WIFSIGNALED(status))
		return sb_error_set(err, -EINTR, "%s was killed by signal %d (%s)", s->argv[0], WTERMSIG(status),
				    strsignal(WTERMSIG(status)));
	return WEXITSTATUS(status);
}
