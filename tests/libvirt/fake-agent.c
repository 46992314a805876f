// SPDX-License-Identifier: GPL-2.0-or-later
/* The scripted fake guest agent (fake-agent.h). */
#include "fake-agent.h"

#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define MAX_STEPS 64

struct step {
	char *command, *want_args, *reply;
	int delay_ms;
};

struct fake_agent {
	enum fake_agent_mode mode;
	char dir[64], path[128];
	int listen_fd, stop_fd;
	pthread_t thread;
	pthread_mutex_t lock;
	struct step steps[MAX_STEPS];
	size_t n_steps, next;
	char *stale_before_sync;
	unsigned syncs, failures;
	char failure_text[4096];
	struct {
		char *command, *args;
	} last[MAX_STEPS];
	size_t n_last;
};

static void add_failure(struct fake_agent *a, const char *what, const char *x)
{
	size_t n = strlen(a->failure_text);

	a->failures++;
	snprintf(a->failure_text + n, sizeof(a->failure_text) - n, "fake agent: %s: %.300s\n", what, x);
}

static void send_text(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
		if (k <= 0)
			return;
		s += k;
		n -= (size_t)k;
	}
}

static void remember(struct fake_agent *a, const char *command, const char *args)
{
	for (size_t i = 0; i < a->n_last; i++)
		if (!strcmp(a->last[i].command, command)) {
			free(a->last[i].args);
			a->last[i].args = strdup(args);
			return;
		}
	if (a->n_last < MAX_STEPS) {
		a->last[a->n_last].command = strdup(command);
		a->last[a->n_last].args = strdup(args);
		a->n_last++;
	}
}

static void handle(struct fake_agent *a, int fd, struct json_object *msg)
{
	struct json_object *ex, *args = NULL, *id;
	char reply[256];

	if (!json_object_object_get_ex(msg, "execute", &ex) || !json_object_is_type(ex, json_type_string)) {
		send_text(fd, "{\"error\": {\"class\": \"GenericError\", \"desc\": \"no execute\"}}\n", 59);
		return;
	}
	const char *cmd = json_object_get_string(ex);
	json_object_object_get_ex(msg, "arguments", &args);
	const char *atext = args ? json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN) : "{}";

	if (!strcmp(cmd, "guest-sync-delimited") || !strcmp(cmd, "guest-sync")) {
		int64_t v = json_object_object_get_ex(args, "id", &id) ? json_object_get_int64(id) : 0;
		pthread_mutex_lock(&a->lock);
		a->syncs++;
		char *stale = a->stale_before_sync;
		a->stale_before_sync = NULL;
		pthread_mutex_unlock(&a->lock);
		if (stale) {
			send_text(fd, stale, strlen(stale));
			free(stale);
		}
		if (!strcmp(cmd, "guest-sync-delimited"))
			send_text(fd, "\xff", 1);
		int n = snprintf(reply, sizeof(reply), "{\"return\": %lld}\n", (long long)v);
		send_text(fd, reply, (size_t)n);
		return;
	}

	pthread_mutex_lock(&a->lock);
	remember(a, cmd, atext);
	struct step *s = a->next < a->n_steps ? &a->steps[a->next] : NULL;
	if (!s || strcmp(s->command, cmd)) {
		add_failure(a, "unexpected command", cmd);
		pthread_mutex_unlock(&a->lock);
		send_text(fd, "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"unexpected\"}}\n", 64);
		return;
	}
	a->next++;
	if (s->want_args && !strstr(atext, s->want_args))
		add_failure(a, "arguments do not contain what the test expects", atext);
	int delay = s->delay_ms;
	char *text = s->reply ? strdup(s->reply) : NULL;
	pthread_mutex_unlock(&a->lock);
	if (delay > 0) {
		struct timespec ts = { delay / 1000, (long)(delay % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	if (text) {
		send_text(fd, text, strlen(text));
		free(text);
	}
}

static void serve(struct fake_agent *a, int fd)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	json_tokener *tok = json_tokener_new();

	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = a->stop_fd, .events = POLLIN } };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & (POLLIN | POLLHUP)))
			continue;
		if (len + 65536 > cap) {
			cap = (len + 65536) * 2;
			buf = realloc(buf, cap);
			CHECK(buf);
		}
		ssize_t k = recv(fd, buf + len, cap - len, 0);
		if (k <= 0)
			break;
		len += (size_t)k;
		if (a->mode == FAKE_AGENT_SILENT) {
			len = 0;
			continue;
		}
		for (;;) {
			size_t start = 0;
			while (start < len && (buf[start] == ' ' || buf[start] == '\n' || (unsigned char)buf[start] == 0xff))
				start++;
			memmove(buf, buf + start, len - start);
			len -= start;
			if (!len)
				break;
			json_tokener_reset(tok);
			struct json_object *msg = json_tokener_parse_ex(tok, buf, (int)len);
			if (!msg) {
				if (json_tokener_get_error(tok) != json_tokener_continue)
					len = 0; /* garbage: the real agent resets on 0xFF */
				break;
			}
			size_t used = json_tokener_get_parse_end(tok);
			memmove(buf, buf + used, len - used);
			len -= used;
			handle(a, fd, msg);
			json_object_put(msg);
		}
	}
	json_tokener_free(tok);
	free(buf);
}

static void *agent_main(void *p)
{
	struct fake_agent *a = p;
	struct pollfd pf[2] = { { .fd = a->listen_fd, .events = POLLIN }, { .fd = a->stop_fd, .events = POLLIN } };

	while (poll(pf, 2, -1) >= 0 || errno == EINTR) {
		if (pf[1].revents)
			break;
		if (!pf[0].revents)
			continue;
		int fd = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve(a, fd);
		close(fd);
		break; /* one connection per agent, as a guest's port has one host side */
	}
	return NULL;
}

/* Directories of agents not stopped yet: removed at exit, also after a failed CHECK. */
static char live_dirs[16][64];

static void remove_live_dirs(void)
{
	char path[128];

	for (size_t i = 0; i < sizeof(live_dirs) / sizeof(live_dirs[0]); i++)
		if (live_dirs[i][0]) {
			snprintf(path, sizeof(path), "%.63s/qga.sock", live_dirs[i]);
			unlink(path);
			rmdir(live_dirs[i]);
		}
}

static void track_dir(const char *dir, bool add)
{
	static bool registered;

	if (!registered) {
		atexit(remove_live_dirs);
		registered = true;
	}
	for (size_t i = 0; i < sizeof(live_dirs) / sizeof(live_dirs[0]); i++)
		if (add ? !live_dirs[i][0] : !strcmp(live_dirs[i], dir)) {
			snprintf(live_dirs[i], sizeof(live_dirs[i]), "%s", add ? dir : "");
			return;
		}
}

struct fake_agent *fake_agent_start(enum fake_agent_mode mode)
{
	struct fake_agent *a = calloc(1, sizeof(*a));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	CHECK(a);
	a->mode = mode;
	snprintf(a->dir, sizeof(a->dir), "/tmp/snapbench-fake-qga-XXXXXX");
	CHECK(mkdtemp(a->dir));
	track_dir(a->dir, true);
	snprintf(a->path, sizeof(a->path), "%s/qga.sock", a->dir);
	memcpy(sa.sun_path, a->path, strlen(a->path) + 1);
	a->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(a->listen_fd >= 0);
	CHECK(bind(a->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(listen(a->listen_fd, 1) == 0);
	a->stop_fd = eventfd(0, EFD_CLOEXEC);
	CHECK(a->stop_fd >= 0);
	pthread_mutex_init(&a->lock, NULL);
	CHECK(pthread_create(&a->thread, NULL, agent_main, a) == 0);
	return a;
}

void fake_agent_expect(struct fake_agent *a, const char *command, const char *want_args, int delay_ms,
		       const char *reply)
{
	pthread_mutex_lock(&a->lock);
	CHECK(a->n_steps < MAX_STEPS);
	a->steps[a->n_steps++] = (struct step){
		.command = strdup(command),
		.want_args = want_args ? strdup(want_args) : NULL,
		.reply = reply ? strdup(reply) : NULL,
		.delay_ms = delay_ms,
	};
	pthread_mutex_unlock(&a->lock);
}

void fake_agent_stale_before_sync(struct fake_agent *a, const char *text)
{
	pthread_mutex_lock(&a->lock);
	free(a->stale_before_sync);
	a->stale_before_sync = strdup(text);
	pthread_mutex_unlock(&a->lock);
}

const char *fake_agent_path(const struct fake_agent *a)
{
	return a->path;
}

unsigned fake_agent_syncs(struct fake_agent *a)
{
	pthread_mutex_lock(&a->lock);
	unsigned n = a->syncs;
	pthread_mutex_unlock(&a->lock);
	return n;
}

char *fake_agent_last_args(struct fake_agent *a, const char *command)
{
	char *r = NULL;

	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->n_last; i++)
		if (!strcmp(a->last[i].command, command))
			r = strdup(a->last[i].args);
	pthread_mutex_unlock(&a->lock);
	return r;
}

unsigned fake_agent_stop(struct fake_agent *a, bool require_all)
{
	uint64_t one = 1;
	unsigned failures;

	CHECK(write(a->stop_fd, &one, sizeof(one)) == sizeof(one));
	pthread_join(a->thread, NULL);
	if (require_all && a->next < a->n_steps)
		add_failure(a, "expected command never came", a->steps[a->next].command);
	if (a->failures)
		fprintf(stderr, "%s", a->failure_text);
	failures = a->failures;
	close(a->listen_fd);
	close(a->stop_fd);
	unlink(a->path);
	rmdir(a->dir);
	track_dir(a->dir, false);
	for (size_t i = 0; i < a->n_steps; i++) {
		free(a->steps[i].command);
		free(a->steps[i].want_args);
		free(a->steps[i].reply);
	}
	for (size_t i = 0; i < a->n_last; i++) {
		free(a->last[i].command);
		free(a->last[i].args);
	}
	free(a->stale_before_sync);
	pthread_mutex_destroy(&a->lock);
	free(a);
	return failures;
}
