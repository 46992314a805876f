// SPDX-License-Identifier: GPL-2.0-or-later
/* Typed guest agent commands: info, exec and its status, files. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base64.h"
#include "clock.h"
#include "json-util.h"
#include "macro.h"
#include "qga.h"

/* ---- helpers ---- */

static int get_int(struct json_object *o, const char *key, int64_t *v)
{
	struct json_object *x;

	if (!json_object_object_get_ex(o, key, &x) || !json_object_is_type(x, json_type_int))
		return -ENOENT;
	*v = json_object_get_int64(x);
	return 0;
}

static int get_bool(struct json_object *o, const char *key, bool *v)
{
	struct json_object *x;

	if (!json_object_object_get_ex(o, key, &x) || !json_object_is_type(x, json_type_boolean))
		return -ENOENT;
	*v = json_object_get_boolean(x);
	return 0;
}

static struct json_object *strv_json(const char *const *v)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; a && v && v[i]; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

/* ---- info ---- */

int qga_info(struct qga_client *c, char *version, size_t len, struct sb_error *err)
{
	_cleanup_json_ struct json_object *ret = NULL;
	struct json_object *v;
	int r = qga_execute(c, "guest-info", NULL, qga_client_command_timeout(c), &ret, err);

	if (r < 0)
		return r;
	if (!json_object_object_get_ex(ret, "version", &v) || !json_object_is_type(v, json_type_string))
		return sb_error_set(err, -EPROTO, "%s: guest-info without a version", qga_client_label(c));
	snprintf(version, len, "%s", json_object_get_string(v));
	return 0;
}

/* ---- exec ---- */

int qga_exec(struct qga_client *c, const char *path, const char *const *argv, const char *const *env, bool capture,
	     int64_t *pid, struct sb_error *err)
{
	_cleanup_json_ struct json_object *args = json_object_new_object();
	_cleanup_json_ struct json_object *ret = NULL;
	int r;

	if (!path || !*path)
		return sb_error_set(err, -EINVAL, "guest-exec: no program path");
	if (!args)
		return sb_error_set(err, -ENOMEM, "out of memory");
	json_object_object_add(args, "path", json_object_new_string(path));
	if (argv)
		json_object_object_add(args, "arg", strv_json(argv));
	if (env)
		json_object_object_add(args, "env", strv_json(env));
	json_object_object_add(args, "capture-output", json_object_new_boolean(capture));
	r = qga_execute(c, "guest-exec", args, qga_client_command_timeout(c), &ret, err);
	if (r < 0)
		return sb_error_prefix(err, "starting %s in the guest", path);
	if (get_int(ret, "pid", pid) < 0)
		return sb_error_set(err, -EPROTO, "%s: guest-exec of %s returned no pid", qga_client_label(c), path);
	return 0;
}

void qga_exec_status_clear(struct qga_exec_status *st)
{
	free(st->out);
	free(st->err);
	memset(st, 0, sizeof(*st));
}

static int decode_stream(struct json_object *o, const char *key, char **data, size_t *len)
{
	struct json_object *x;

	*data = NULL;
	*len = 0;
	if (!json_object_object_get_ex(o, key, &x))
		return 0;
	if (!json_object_is_type(x, json_type_string))
		return -EPROTO;
	size_t n = (size_t)json_object_get_string_len(x);
	if (n / 4 * 3 > QGA_MAX_EXEC_OUTPUT)
		return -EMSGSIZE;
	char *buf = malloc(n / 4 * 3 + 1);
	if (!buf)
		return -ENOMEM;
	ssize_t k = base64_decode(json_object_get_string(x), n, buf);
	if (k < 0) {
		free(buf);
		return -EBADMSG;
	}
	buf[k] = '\0';
	*data = buf;
	*len = (size_t)k;
	return 0;
}

int qga_exec_status(struct qga_client *c, int64_t pid, struct qga_exec_status *st, struct sb_error *err)
{
	_cleanup_json_ struct json_object *args = json_object_new_object();
	_cleanup_json_ struct json_object *ret = NULL;
	int64_t v;
	int r;

	qga_exec_status_clear(st);
	if (!args)
		return sb_error_set(err, -ENOMEM, "out of memory");
	json_object_object_add(args, "pid", json_object_new_int64(pid));
	r = qga_execute(c, "guest-exec-status", args, qga_client_command_timeout(c), &ret, err);
	if (r < 0)
		return r;
	if (get_bool(ret, "exited", &st->exited) < 0) {
		return sb_error_set(err, -EPROTO, "%s: guest-exec-status of pid %lld has no 'exited'", qga_client_label(c),
				    (long long)pid);
	}
	if (get_int(ret, "exitcode", &v) == 0) {
		st->has_code = true;
		st->code = (int)v;
	}
	if (get_int(ret, "signal", &v) == 0)
		st->signal = (int)v;
	get_bool(ret, "out-truncated", &st->out_truncated);
	get_bool(ret, "err-truncated", &st->err_truncated);
	r = decode_stream(ret, "out-data", &st->out, &st->out_len);
	if (r >= 0)
		r = decode_stream(ret, "err-data", &st->err, &st->err_len);
	if (r < 0) {
		qga_exec_status_clear(st);
		return sb_error_set(err, r == -ENOMEM ? r : -EPROTO, "%s: guest-exec-status of pid %lld: %s",
				    qga_client_label(c), (long long)pid,
				    r == -EBADMSG ? "out-data/err-data is not base64" :
				    r == -EMSGSIZE ? "output larger than the agent may send" : "bad output fields");
	}
	return 0;
}

int qga_exec_wait(struct qga_client *c, int64_t pid, int timeout_ms, int poll_ms, struct qga_exec_status *st,
		  struct sb_error *err)
{
	uint64_t deadline = mono_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * NSEC_PER_MSEC;
	struct timespec ts;
	int r;

	if (poll_ms <= 0)
		poll_ms = 100;
	ts = (struct timespec){ poll_ms / 1000, (long)(poll_ms % 1000) * 1000000L };
	for (;;) {
		r = qga_exec_status(c, pid, st, err);
		if (r < 0)
			return r;
		if (st->exited)
			return 0;
		if (mono_ns() >= deadline)
			return sb_error_set(err, -ETIMEDOUT, "%s: guest pid %lld still runs after %d ms", qga_client_label(c),
					    (long long)pid, timeout_ms);
		nanosleep(&ts, NULL);
	}
}

int qga_run(struct qga_client *c, const char *path, const char *const *argv, int timeout_ms,
	    struct qga_exec_status *st, struct sb_error *err)
{
	struct qga_exec_status local = {};
	struct qga_exec_status *s = st ? st : &local;
	int64_t pid;
	int r;

	r = qga_exec(c, path, argv, NULL, true, &pid, err);
	if (r < 0)
		return r;
	r = qga_exec_wait(c, pid, timeout_ms, 50, s, err);
	if (r < 0)
		goto out;
	if (!s->has_code || s->code != 0) {
		char what[64];
		if (s->signal)
			snprintf(what, sizeof(what), "was killed by signal %d", s->signal);
		else
			snprintf(what, sizeof(what), "exited with status %d", s->has_code ? s->code : -1);
		r = sb_error_set(err, -EIO, "%s in the guest %s%s%.300s", path, what, s->err_len ? ": " : "",
				 s->err_len ? s->err : "");
	}
out:
	if (!st)
		qga_exec_status_clear(&local);
	return r;
}

/* ---- files ---- */

int qga_file_open(struct qga_client *c, const char *path, const char *mode, int64_t *handle, struct sb_error *err)
{
	_cleanup_json_ struct json_object *args = json_object_new_object();
	_cleanup_json_ struct json_object *ret = NULL;
	int r;

	if (!args)
		return sb_error_set(err, -ENOMEM, "out of memory");
	json_object_object_add(args, "path", json_object_new_string(path));
	json_object_object_add(args, "mode", json_object_new_string(mode));
	r = qga_execute(c, "guest-file-open", args, qga_client_command_timeout(c), &ret, err);
	if (r < 0)
		return sb_error_prefix(err, "opening %s in the guest", path);
	if (!json_object_is_type(ret, json_type_int))
		return sb_error_set(err, -EPROTO, "%s: guest-file-open of %s returned no handle", qga_client_label(c), path);
	*handle = json_object_get_int64(ret);
	return 0;
}

int qga_file_close(struct qga_client *c, int64_t handle, struct sb_error *err)
{
	_cleanup_json_ struct json_object *args = json_object_new_object();
	int r;

	if (!args)
		return sb_error_set(err, -ENOMEM, "out of memory");
	json_object_object_add(args, "handle", json_object_new_int64(handle));
	r = qga_execute(c, "guest-file-close", args, qga_client_command_timeout(c), NULL, err);
	return r;
}

int qga_file_write(struct qga_client *c, int64_t handle, const void *buf, size_t len, struct sb_error *err)
{
	const char *p = buf;
	_cleanup_free_ char *enc = malloc(base64_encoded_len(QGA_FILE_CHUNK) + 1);

	if (!enc)
		return sb_error_set(err, -ENOMEM, "out of memory");
	while (len) {
		size_t n = len < QGA_FILE_CHUNK ? len : QGA_FILE_CHUNK;
		struct json_object *args = json_object_new_object(), *ret = NULL;
		int64_t count;
		int r;

		if (!args)
			return sb_error_set(err, -ENOMEM, "out of memory");
		base64_encode(p, n, enc);
		json_object_object_add(args, "handle", json_object_new_int64(handle));
		json_object_object_add(args, "buf-b64", json_object_new_string(enc));
		r = qga_execute(c, "guest-file-write", args, qga_client_command_timeout(c), &ret, err);
		json_object_put(args);
		if (r < 0)
			return r;
		r = get_int(ret, "count", &count);
		json_object_put(ret);
		if (r < 0 || count <= 0 || (size_t)count > n)
			return sb_error_set(err, -EPROTO, "%s: guest-file-write wrote %lld of %zu bytes", qga_client_label(c),
					    r < 0 ? -1LL : (long long)count, n);
		p += count;
		len -= (size_t)count;
	}
	return 0;
}

int qga_file_read(struct qga_client *c, int64_t handle, void *buf, size_t len, size_t *got, bool *eof,
		  struct sb_error *err)
{
	_cleanup_json_ struct json_object *args = json_object_new_object();
	_cleanup_json_ struct json_object *ret = NULL;
	struct json_object *b;
	int64_t count;
	int r;

	*got = 0;
	*eof = false;
	if (!args)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (len > QGA_FILE_CHUNK)
		len = QGA_FILE_CHUNK;
	json_object_object_add(args, "handle", json_object_new_int64(handle));
	json_object_object_add(args, "count", json_object_new_int64((int64_t)len));
	r = qga_execute(c, "guest-file-read", args, qga_client_command_timeout(c), &ret, err);
	if (r < 0)
		return r;
	if (get_int(ret, "count", &count) < 0 || get_bool(ret, "eof", eof) < 0 ||
	    !json_object_object_get_ex(ret, "buf-b64", &b) || !json_object_is_type(b, json_type_string) || count < 0 ||
	    (size_t)count > len || (size_t)json_object_get_string_len(b) > base64_encoded_len(len))
		return sb_error_set(err, -EPROTO, "%s: guest-file-read reply of the wrong shape or size", qga_client_label(c));
	/*
	 * The guest is untrusted: the encoded length alone still allows up to 2
	 * bytes more than len ("QUJD" is 3 bytes, and 4 characters encode 1), so
	 * the decoded length must be count before anything is written to buf.
	 */
	size_t slen = (size_t)json_object_get_string_len(b);
	if (base64_decoded_len(json_object_get_string(b), slen) != (size_t)count)
		return sb_error_set(err, -EPROTO, "%s: guest-file-read: buf-b64 does not decode to count (%lld) bytes",
				    qga_client_label(c), (long long)count);
	ssize_t k = base64_decode(json_object_get_string(b), slen, buf);
	if (k < 0 || k != count)
		return sb_error_set(err, -EPROTO, "%s: guest-file-read: buf-b64 does not decode to count (%lld) bytes",
				    qga_client_label(c), (long long)count);
	*got = (size_t)k;
	return 0;
}

int qga_copy_in(struct qga_client *c, const void *buf, size_t len, const char *path, unsigned mode,
		struct sb_error *err)
{
	int64_t h;
	char m[16];
	int r, r2;

	r = qga_file_open(c, path, "w", &h, err);
	if (r < 0)
		return r;
	r = qga_file_write(c, h, buf, len, err);
	r2 = qga_file_close(c, h, r < 0 ? NULL : err);
	if (r < 0)
		return sb_error_prefix(err, "copying %zu bytes to %s in the guest", len, path);
	if (r2 < 0)
		return r2;
	snprintf(m, sizeof(m), "%o", mode & 07777);
	const char *const argv[] = { m, path, NULL };
	r = qga_run(c, "/bin/chmod", argv, qga_client_command_timeout(c), NULL, err);
	return r < 0 ? sb_error_prefix(err, "making %s mode %s in the guest", path, m) : 0;
}
