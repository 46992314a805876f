// SPDX-License-Identifier: GPL-2.0-or-later
/* Client connections: accept, credentials, bounded I/O, deadlines. */
#include <errno.h>
#include <json-c/json.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "conn.h"
#include "daemon.h"
#include "log.h"
#include "macro.h"

void daemon_describe_peer(const struct conn *c, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	if (getpwuid_r(c->cred.uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, len, "uid %u (%s)", (unsigned)c->cred.uid, res->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)c->cred.uid);
}

void conn_free(struct conn *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	linebuf_done(&c->in);
	free(c->out);
	json_object_put(c->watch_id);
	free(c);
}

static bool peer_in_group(int fd, gid_t gid, const struct ucred *cred)
{
	gid_t small[64], *groups = small;
	socklen_t len = sizeof(small);
	bool found = false;

	if (cred->gid == gid)
		return true;
	/* the peer's supplementary groups at connect time (Linux 4.13) */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
		if (errno != ERANGE)
			return false;
		groups = malloc(len);
		if (!groups)
			return false;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
			free(groups);
			return false;
		}
	}
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == gid)
			found = true;
	if (groups != small)
		free(groups);
	return found;
}

/* Best effort, for a connection refused before it was set up. */
static void refuse(int fd, const char *code, const char *message)
{
	struct json_object *o = protocol_error_new(NULL, code, NULL, message);
	_cleanup_free_ char *line = NULL;
	size_t len;

	if (o && protocol_serialize(o, &line, &len) == 0) {
		ssize_t n = send(fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		(void)n;
	}
	json_object_put(o);
	close(fd);
}

unsigned conn_count_uid(const struct daemon *d, uid_t uid, bool watching_only)
{
	unsigned n = 0;

	for (size_t i = 0; i < d->n_conns; i++)
		if (d->conns[i]->cred.uid == uid && !d->conns[i]->dead && (!watching_only || d->conns[i]->watching))
			n++;
	return n;
}

/*
 * One local user may not take every connection: root's status, submit and
 * cancel must still get through. The last reserved_connections slots are
 * for root and the group; each other uid has max_connections_per_uid.
 * Refuses (and closes) c's fd and returns true when c is over a bound.
 */
static bool over_bounds(struct daemon *d, struct conn *c)
{
	const struct daemon_config *cfg = &d->cfg;
	char msg[256];

	if (!c->may_write && cfg->reserved_connections < cfg->max_connections &&
	    d->n_conns >= cfg->max_connections - cfg->reserved_connections) {
		snprintf(msg, sizeof(msg),
			 "too many connections: the last %u of %u are kept for root and group %s (snapbenchd "
			 "--reserved-connections); try again later",
			 cfg->reserved_connections, cfg->max_connections, cfg->group);
	} else if (c->cred.uid != 0 && conn_count_uid(d, c->cred.uid, false) >= cfg->max_connections_per_uid) {
		snprintf(msg, sizeof(msg),
			 "too many connections from uid %u (%u, snapbenchd --max-connections-per-uid); close some and try "
			 "again",
			 (unsigned)c->cred.uid, cfg->max_connections_per_uid);
	} else {
		return false;
	}
	log_notice("connection %u (uid %u) refused: %s", c->serial, (unsigned)c->cred.uid, msg);
	refuse(c->fd, PROTO_ERR_BUSY, msg);
	return true;
}

int conn_accept_all(struct daemon *d)
{
	/* bounded per loop iteration so a connect storm cannot starve the others */
	for (int i = 0; i < 64; i++) {
		int fd = accept4(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *c;
		socklen_t len;

		if (fd < 0) {
			if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
				return 0;
			if (errno == EMFILE || errno == ENFILE) {
				log_warning("accept: %s; refusing connections until some close", strerror(errno));
				return 0;
			}
			log_error("accept: %s", strerror(errno));
			return -errno;
		}
		if (d->n_conns >= d->cfg.max_connections) {
			char msg[160];
			snprintf(msg, sizeof(msg), "too many connections (%u, snapbenchd --max-connections); try again later",
				 d->cfg.max_connections);
			refuse(fd, PROTO_ERR_BUSY, msg);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->serial = ++d->next_serial;
		len = sizeof(c->cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) < 0) {
			log_warning("connection %u: SO_PEERCRED: %s; closing it", c->serial, strerror(errno));
			conn_free(c);
			continue;
		}
		c->may_write = c->cred.uid == 0 || (d->group_known && peer_in_group(fd, d->gid, &c->cred));
		if (over_bounds(d, c)) {
			c->fd = -1; /* refuse() closed it */
			conn_free(c);
			continue;
		}
		linebuf_init(&c->in, PROTOCOL_MAX_REQUEST);
		c->accepted_ns = c->last_activity_ns = c->last_write_ns = mono_ns();
		struct conn **p = realloc(d->conns, (d->n_conns + 1) * sizeof(*p));
		if (!p) {
			conn_free(c);
			continue;
		}
		d->conns = p;
		d->conns[d->n_conns++] = c;
		log_debug("connection %u: uid %u pid %d%s", c->serial, (unsigned)c->cred.uid, (int)c->cred.pid,
			  c->may_write ? ", may submit" : "");
	}
	return 0;
}

void conn_send(struct daemon *d, struct conn *c, struct json_object *msg)
{
	_cleanup_free_ char *line = NULL;
	size_t len;

	if (!msg || c->dead) {
		json_object_put(msg);
		if (!msg)
			c->dead = true;
		return;
	}
	if (protocol_serialize(msg, &line, &len) < 0) {
		json_object_put(msg);
		c->dead = true;
		return;
	}
	json_object_put(msg);
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
		/* nothing pending: give the line's buffer to the connection as it is */
		if (!c->out) {
			c->out = TAKE_PTR(line);
			c->out_len = len;
			c->out_cap = len + 1;
			conn_on_output(d, c);
			return;
		}
	}
	if (c->out_cap - c->out_len < len) {
		/* compact before growing */
		if (c->out_off) {
			memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
			c->out_len -= c->out_off;
			c->out_off = 0;
		}
		if (c->out_cap - c->out_len < len) {
			size_t cap = c->out_len + len + 4096;
			char *p = realloc(c->out, cap);
			if (!p) {
				c->dead = true;
				return;
			}
			c->out = p;
			c->out_cap = cap;
		}
	}
	memcpy(c->out + c->out_len, line, len);
	c->out_len += len;
	conn_on_output(d, c);
}

void conn_send_error(struct daemon *d, struct conn *c, struct json_object *id, const char *code,
		     const char *field, const char *fmt, ...)
{
	char msg[SB_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	conn_send(d, c, protocol_error_new(id, code, field, msg));
}

void conn_on_output(struct daemon *d, struct conn *c)
{
	while (c->out_off < c->out_len && !c->dead) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			/* the peer went away */
			c->dead = true;
			return;
		}
		c->out_off += (size_t)n;
		c->last_write_ns = mono_ns();
	}
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
		/* do not keep a large reply's buffer around */
		if (c->out_cap > 65536) {
			free(c->out);
			c->out = NULL;
			c->out_cap = 0;
		}
		if (c->closing)
			c->dead = true;
	}
}

static size_t out_pending(const struct conn *c)
{
	return c->out_len - c->out_off;
}

/* Handles the complete lines in the input buffer, as long as the output is not backed up. */
static void process_lines(struct daemon *d, struct conn *c)
{
	bool any = false;

	for (int i = 0; i < 64 && !c->closing && !c->dead; i++) {
		char *line;
		size_t len;
		int r;

		if (out_pending(c) > DAEMON_OUT_HIGH_WATER)
			break;
		r = linebuf_next_line(&c->in, &line, &len);
		if (r == 0)
			break;
		if (r < 0) {
			conn_send_error(d, c, NULL, PROTO_ERR_TOO_LARGE, NULL,
					"request longer than %u bytes; send one JSON object per line, at most %u bytes; closing the connection",
					PROTOCOL_MAX_REQUEST, PROTOCOL_MAX_REQUEST);
			log_notice("connection %u (uid %u): request longer than %u bytes; closed", c->serial,
				   (unsigned)c->cred.uid, PROTOCOL_MAX_REQUEST);
			c->closing = true;
			shutdown(c->fd, SHUT_RD);
			break;
		}
		any = true;
		d->requests++;
		c->last_activity_ns = mono_ns();
		if (len == 0)
			continue; /* blank lines are keep-alives */
		d->on_request(d, c, line, len);
	}
	if (any)
		c->line_start_ns = linebuf_pending(&c->in) ? mono_ns() : 0;
	if (c->peer_eof && !c->watching && !c->closing && linebuf_pending(&c->in) == 0)
		c->closing = true;
	if (c->closing && out_pending(c) == 0)
		c->dead = true;
}

void conn_on_input(struct daemon *d, struct conn *c)
{
	char *where;
	size_t room;
	ssize_t n;
	int r;

	if (c->closing || c->dead || c->peer_eof)
		return;
	if (out_pending(c) > DAEMON_OUT_HIGH_WATER) {
		process_lines(d, c);
		return;
	}
	r = linebuf_reserve(&c->in, DAEMON_READ_CHUNK, &where, &room);
	if (r == -ENOMEM) {
		c->dead = true;
		return;
	}
	if (r < 0) {
		process_lines(d, c); /* reports the overflow */
		return;
	}
	if (room > DAEMON_READ_CHUNK)
		room = DAEMON_READ_CHUNK;
	n = recv(c->fd, where, room, MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		c->dead = true;
		return;
	}
	if (n == 0) {
		c->peer_eof = true;
		/* a last request without its newline ends at EOF (printf ... | socat) */
		if (linebuf_pending(&c->in) && linebuf_reserve(&c->in, 1, &where, &room) == 0) {
			*where = '\n';
			linebuf_commit(&c->in, 1);
		}
		process_lines(d, c); /* closes once every line is answered, unless watching */
		return;
	}
	if (linebuf_pending(&c->in) == 0)
		c->line_start_ns = mono_ns();
	linebuf_commit(&c->in, (size_t)n);
	c->last_activity_ns = mono_ns();
	process_lines(d, c);
}

static int ms_left(uint64_t deadline, uint64_t now)
{
	if (deadline <= now)
		return 0;
	uint64_t ms = (deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
	return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

int conn_check_deadlines(struct daemon *d, struct conn *c, uint64_t now)
{
	const struct daemon_config *cfg = &d->cfg;
	int next = -1;

	if (c->dead)
		return -1;

	/* lines already received but held back by a full output buffer */
	if (!c->closing && out_pending(c) <= DAEMON_OUT_HIGH_WATER && linebuf_pending(&c->in))
		process_lines(d, c);

	if (out_pending(c)) {
		uint64_t dl = c->last_write_ns + (uint64_t)cfg->write_timeout_ms * NSEC_PER_MSEC;
		if (now >= dl) {
			log_notice("connection %u (uid %u): read nothing of %zu bytes of replies for %u ms; dropped",
				   c->serial, (unsigned)c->cred.uid, out_pending(c), cfg->write_timeout_ms);
			c->dead = true;
			return -1;
		}
		next = poll_timeout_min(next, ms_left(dl, now));
	}
	if (c->closing)
		return next;

	if (linebuf_pending(&c->in) && c->line_start_ns) {
		uint64_t dl = c->line_start_ns + (uint64_t)cfg->request_timeout_ms * NSEC_PER_MSEC;
		if (now >= dl) {
			conn_send_error(d, c, NULL, PROTO_ERR_TIMEOUT, NULL,
					"the request was not completed within %u ms (%zu bytes received, no newline); send each request as one line at once; closing the connection",
					cfg->request_timeout_ms, linebuf_pending(&c->in));
			log_notice("connection %u (uid %u): request not completed within %u ms; closed", c->serial,
				   (unsigned)c->cred.uid, cfg->request_timeout_ms);
			c->closing = true;
			shutdown(c->fd, SHUT_RD);
			if (!out_pending(c))
				c->dead = true;
			return next;
		}
		next = poll_timeout_min(next, ms_left(dl, now));
	}
	if (c->watching)
		return next;

	if (!linebuf_pending(&c->in) && !out_pending(c)) {
		uint64_t dl = c->last_activity_ns + (uint64_t)cfg->idle_timeout_ms * NSEC_PER_MSEC;
		if (now >= dl) {
			conn_send_error(d, c, NULL, PROTO_ERR_TIMEOUT, NULL,
					"idle for %u ms; closing the connection", cfg->idle_timeout_ms);
			c->closing = true;
			if (!out_pending(c))
				c->dead = true;
			return next;
		}
		next = poll_timeout_min(next, ms_left(dl, now));
	}
	uint64_t dl = c->accepted_ns + (uint64_t)cfg->lifetime_ms * NSEC_PER_MSEC;
	if (now >= dl) {
		conn_send_error(d, c, NULL, PROTO_ERR_TIMEOUT, NULL,
				"connection open for %u ms; closing it; connect again for more requests", cfg->lifetime_ms);
		c->closing = true;
		shutdown(c->fd, SHUT_RD);
		if (!out_pending(c))
			c->dead = true;
		return next;
	}
	return poll_timeout_min(next, ms_left(dl, now));
}
