// SPDX-License-Identifier: GPL-2.0-or-later
/* The run reports of a LAVA job log: markers, base64, gzip, length and SHA-256; its test cases (lava-log.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "base64.h"
#include "json-util.h"
#include "lava-log.h"
#include "macro.h"
#include "sha256.h"
#include "strbuf.h"
#include "yaml-flow.h"

void lava_log_done(struct lava_log *log)
{
	for (size_t i = 0; log && i < log->n_reports; i++) {
		struct lava_report *r = &log->reports[i];
		free(r->id);
		free(r->data);
		free(r->encoding);
		free(r->job);
		free(r->device);
		free(r->device_type);
	}
	if (log) {
		free(log->reports);
		*log = (struct lava_log){};
	}
}

/* The value of key=VALUE among a marker's space-separated fields (a copy), or NULL. */
static char *field(const char *fields, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = fields; p && *p;) {
		while (*p == ' ')
			p++;
		const char *end = strchr(p, ' ');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > klen && !strncmp(p, key, klen) && p[klen] == '=')
			return strndup(p + klen + 1, n - klen - 1);
		p = end;
	}
	return NULL;
}

#define DIGITS "0123456789"
#define LETTERS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/* Whether s is 1 to max bytes, each of chars. */
static bool made_of(const char *s, const char *chars, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	return n && n <= max && strspn(s, chars) == n;
}

static bool is_hex64(const char *s)
{
	return s && strlen(s) == 64 && made_of(s, DIGITS "abcdef", 64);
}

/* A run id as a marker may carry it: [A-Za-z0-9-], 1 to 64 of them (the caller checks the report's own). */
static bool id_plausible(const char *s)
{
	return made_of(s, LETTERS DIGITS "-", 64);
}

static bool is_base64_line(const char *s)
{
	return made_of(s, LETTERS DIGITS "+/=", SIZE_MAX);
}

/* What a marker may say of the LAVA job: [A-Za-z0-9._:+-], 1 to 128 of them (printed, recorded). */
static bool name_plausible(const char *s)
{
	return made_of(s, LETTERS DIGITS "._:+-", 128);
}

/* The report being read between its markers. */
struct pending {
	bool open;
	struct lava_report r;
	size_t bytes;           /* what BEGIN says report.json holds */
	char *sha256;
	struct strbuf b64;
	size_t lines;
};

static void pending_reset(struct pending *p)
{
	free(p->r.id);
	free(p->r.encoding);
	free(p->r.job);
	free(p->r.device);
	free(p->r.device_type);
	free(p->sha256);
	strbuf_free(&p->b64);
	*p = (struct pending){};
}

static int begin(struct pending *p, const char *name, size_t line, const char *fields, struct sb_error *err)
{
	_cleanup_free_ char *v = field(fields, "v"), *bytes = field(fields, "bytes");
	char *end = NULL;
	unsigned long long n;

	pending_reset(p);
	p->r.line = line;
	p->r.id = field(fields, "id");
	p->r.encoding = field(fields, "encoding");
	p->sha256 = field(fields, "sha256");
	p->r.job = field(fields, "job");
	p->r.device = field(fields, "device");
	p->r.device_type = field(fields, "device_type");
	if (!v || strcmp(v, "1"))
		return sb_error_set(err, -EBADMSG, "%s:%zu: %s v=%s: only version 1 of the marker is known", name, line,
				    LAVA_REPORT_BEGIN, v ? v : "(missing)");
	if (!id_plausible(p->r.id))
		return sb_error_set(err, -EBADMSG, "%s:%zu: %s: id=%s is not a run id", name, line, LAVA_REPORT_BEGIN,
				    p->r.id ? p->r.id : "(missing)");
	errno = 0;
	n = bytes && *bytes >= '0' && *bytes <= '9' ? strtoull(bytes, &end, 10) : 0;
	if (!bytes || !end || *end || errno || n == 0 || n > LAVA_REPORT_MAX_BYTES)
		return sb_error_set(err, -EBADMSG, "%s:%zu: %s: bytes=%s: give report.json's size, 1 to %u bytes", name,
				    line, LAVA_REPORT_BEGIN, bytes ? bytes : "(missing)", LAVA_REPORT_MAX_BYTES);
	p->bytes = (size_t)n;
	if (!is_hex64(p->sha256))
		return sb_error_set(err, -EBADMSG, "%s:%zu: %s: sha256=%s: give report.json's SHA-256, 64 lowercase hex "
				    "digits", name, line, LAVA_REPORT_BEGIN, p->sha256 ? p->sha256 : "(missing)");
	if (!p->r.encoding || (strcmp(p->r.encoding, "gzip+base64") && strcmp(p->r.encoding, "base64")))
		return sb_error_set(err, -EBADMSG, "%s:%zu: %s: encoding=%s: use gzip+base64 or base64", name, line,
				    LAVA_REPORT_BEGIN, p->r.encoding ? p->r.encoding : "(missing)");
	const char *const keys[] = { "job", "device", "device_type" };
	const char *const vals[] = { p->r.job, p->r.device, p->r.device_type };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (vals[i] && !name_plausible(vals[i]))
			return sb_error_set(err, -EBADMSG, "%s:%zu: %s: %s= takes letters, digits and ._:+- (1 to 128)",
					    name, line, LAVA_REPORT_BEGIN, keys[i]);
	p->open = true;
	return 0;
}

/* gzip data (n bytes) into out (exactly want bytes, else an error). */
static int gunzip(const unsigned char *in, size_t n, char *out, size_t want, const char *what, struct sb_error *err)
{
	z_stream zs = { 0 };
	unsigned char spare;
	int z;

	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return sb_error_set(err, -ENOMEM, "%s: cannot start gzip decompression", what);
	zs.next_in = (unsigned char *)in;
	zs.avail_in = (uInt)n;
	zs.next_out = (unsigned char *)out;
	zs.avail_out = (uInt)want;
	z = inflate(&zs, Z_FINISH);
	if (z == Z_BUF_ERROR && zs.avail_out == 0) { /* more than want: see whether anything is left */
		zs.next_out = &spare;
		zs.avail_out = 1;
		z = inflate(&zs, Z_FINISH);
		inflateEnd(&zs);
		return sb_error_set(err, -EBADMSG, "%s: decompresses to more than the %zu bytes its marker gives%s", what,
				    want, z == Z_DATA_ERROR ? " (and is corrupt)" : "");
	}
	size_t got = want - zs.avail_out;
	inflateEnd(&zs);
	if (z != Z_STREAM_END)
		return sb_error_set(err, -EBADMSG, "%s: not valid gzip data (%s)", what,
				    z == Z_BUF_ERROR ? "it ends too early" : zs.msg ? zs.msg : "corrupt");
	if (got != want)
		return sb_error_set(err, -EBADMSG, "%s: decompresses to %zu bytes, its marker gives %zu", what, got, want);
	return 0;
}

static int end_report(struct pending *p, const char *name, size_t line, const char *fields, struct lava_log *log,
		      struct sb_error *err)
{
	_cleanup_free_ char *v = field(fields, "v"), *id = field(fields, "id"), *lines = field(fields, "lines");
	_cleanup_free_ unsigned char *raw = NULL;
	_cleanup_free_ char *data = NULL;
	char what[160];
	size_t decoded;
	ssize_t k;

	snprintf(what, sizeof(what), "%s:%zu: the report of run %s", name, p->r.line, p->r.id);
	if (!v || strcmp(v, "1") || !id || strcmp(id, p->r.id))
		return sb_error_set(err, -EBADMSG, "%s:%zu: %s v=%s id=%s does not end the report of run %s that began "
				    "at line %zu", name, line, LAVA_REPORT_END, v ? v : "(missing)", id ? id : "(missing)",
				    p->r.id, p->r.line);
	if (!lines || strspn(lines, "0123456789") != strlen(lines) || !*lines || strtoull(lines, NULL, 10) != p->lines)
		return sb_error_set(err, -EBADMSG, "%s: its end marker (line %zu) counts lines=%s, the log holds %zu base64 "
				    "lines between the markers: lines were lost or mixed in on the console", what, line,
				    lines ? lines : "(missing)", p->lines);
	if (p->b64.oom)
		return sb_error_set(err, -ENOMEM, "%s: out of memory", what);
	decoded = base64_decoded_len(p->b64.s ? p->b64.s : "", p->b64.len);
	if (decoded > LAVA_REPORT_MAX_BYTES + (LAVA_REPORT_MAX_BYTES >> 1))
		return sb_error_set(err, -EBADMSG, "%s: more than %u bytes of base64", what, LAVA_REPORT_MAX_BYTES);
	raw = malloc(decoded + 1);
	data = malloc(p->bytes + 1);
	if (!raw || !data)
		return sb_error_set(err, -ENOMEM, "%s: out of memory", what);
	k = base64_decode(p->b64.s ? p->b64.s : "", p->b64.len, raw);
	if (k < 0)
		return sb_error_set(err, -EBADMSG, "%s: its lines are not base64 (a line cut or mangled on the console?)",
				    what);
	if (!strcmp(p->r.encoding, "base64")) {
		if ((size_t)k != p->bytes)
			return sb_error_set(err, -EBADMSG, "%s: decodes to %zd bytes, its marker gives %zu", what, k,
					    p->bytes);
		memcpy(data, raw, (size_t)k);
	} else {
		int r = gunzip(raw, (size_t)k, data, p->bytes, what, err);
		if (r < 0)
			return r;
	}
	data[p->bytes] = '\0';
	struct sha256 s;
	char hex[65];
	sha256_init(&s);
	sha256_update(&s, data, p->bytes);
	sha256_hex(&s, hex);
	if (strcmp(hex, p->sha256))
		return sb_error_set(err, -EBADMSG, "%s: its SHA-256 is %s, its marker gives %s: the report was damaged on "
				    "the way", what, hex, p->sha256);
	if (log->n_reports >= LAVA_MAX_REPORTS)
		return sb_error_set(err, -E2BIG, "%s: more than %d reports in one log", name, LAVA_MAX_REPORTS);
	struct lava_report *nv = realloc(log->reports, (log->n_reports + 1) * sizeof(*nv));
	if (!nv)
		return sb_error_set(err, -ENOMEM, "%s: out of memory", what);
	log->reports = nv;
	struct lava_report *r = &log->reports[log->n_reports++];
	*r = p->r;
	memcpy(r->sha256, hex, sizeof(hex));
	r->data = TAKE_PTR(data);
	r->len = p->bytes;
	p->r = (struct lava_report){}; /* the log has its strings now */
	pending_reset(p);
	return 0;
}

/* "MARKER" or "MARKER fields...": the fields, else NULL. */
static const char *marker_fields(const char *msg, const char *marker)
{
	size_t n = strlen(marker);

	if (strncmp(msg, marker, n) || (msg[n] && msg[n] != ' '))
		return NULL;
	return msg + n;
}

static int console_line(struct pending *p, const char *name, size_t line, const char *msg, struct lava_log *log,
			struct sb_error *err)
{
	const char *f;

	log->n_target++;
	if ((f = marker_fields(msg, LAVA_REPORT_BEGIN))) {
		if (p->open)
			return sb_error_set(err, -EBADMSG, "%s:%zu: a second %s before the end of the report of run %s that "
					    "began at line %zu (cut off?)", name, line,
					    LAVA_REPORT_BEGIN, p->r.id, p->r.line);
		return begin(p, name, line, f, err);
	}
	if ((f = marker_fields(msg, LAVA_REPORT_END))) {
		if (!p->open)
			return sb_error_set(err, -EBADMSG, "%s:%zu: %s without its %s", name, line, LAVA_REPORT_END,
					    LAVA_REPORT_BEGIN);
		p->open = false;
		return end_report(p, name, line, f, log, err);
	}
	if (p->open && is_base64_line(msg)) { /* other console output in between (printk) is not the report's */
		strbuf_append(&p->b64, msg);
		p->lines++;
	}
	return 0;
}

/* The record's console text, trailing CR and spaces dropped (a copy), or NULL when it is no console line. */
static char *record_console_text(struct json_object *rec)
{
	const char *lvl = json_lookup_string(rec, "lvl");
	struct json_object *msg = json_lookup(rec, "msg");

	if (!lvl || strcmp(lvl, "target") || !json_object_is_type(msg, json_type_string))
		return NULL;
	char *s = strndup(json_object_get_string(msg), (size_t)json_object_get_string_len(msg));
	if (!s)
		return NULL;
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

#define KERNEL_PANIC "Kernel panic - not syncing"

/* The panic's line for a message: printable ASCII, anything else '?', at most size - 1 bytes. */
static void printable(const char *in, char *out, size_t size)
{
	size_t o = 0;

	for (; *in && o + 1 < size; in++)
		out[o++] = (*in >= 0x20 && *in < 0x7f) ? *in : '?';
	out[o] = '\0';
}

/* A record of the log: "- {...}" as a LAVA server's job log (lavacli jobs logs) has it, or "{...}" as lava-run prints it. */
static const char *record_start(const char *s, size_t n, size_t *len)
{
	if (n >= 2 && s[0] == '-' && s[1] == ' ') {
		*len = n - 2;
		return s + 2;
	}
	if (n >= 1 && s[0] == '{') {
		*len = n;
		return s;
	}
	return NULL;
}

typedef int (*record_fn)(struct json_object *rec, size_t line, void *userdata, struct sb_error *err);

/*
 * Calls fn for each record of the log, in order, until it fails. A record
 * that does not parse is refused, but the last one when the text does not
 * end in a newline (the log was cut off there) -- or, with unreadable, each
 * is counted there and skipped.
 */
static int each_record(const char *name, const char *text, size_t len, size_t *unreadable, record_fn fn,
		       void *userdata, struct sb_error *err)
{
	size_t line = 0;

	for (const char *s = text, *end = text + len; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;
		size_t n = (size_t)(e - s);

		line++;
		if (n && e[-1] == '\r')
			n--;
		size_t rn;
		const char *rs = record_start(s, n, &rn);
		if (rs) {
			_cleanup_json_ struct json_object *rec = NULL;
			struct sb_error perr = { 0 };
			int pr = yaml_flow_parse(rs, rn, &rec, &perr);

			if (pr == -ENOMEM)
				return sb_error_set(err, pr, "%s:%zu: %s", name, line, perr.msg);
			if (pr < 0 && unreadable)
				(*unreadable)++;
			else if (pr < 0 && !nl)
				break; /* the log was cut off in its last record */
			else if (pr < 0)
				return sb_error_set(err, -EBADMSG, "%s:%zu: not a LAVA log record: %s", name, line, perr.msg);
			else if ((pr = fn(rec, line, userdata, err)) < 0)
				return pr;
		}
		s = nl ? nl + 1 : end;
	}
	return 0;
}

static bool is_lvl(struct json_object *rec, const char *lvl)
{
	const char *l = json_lookup_string(rec, "lvl");

	return l && !strcmp(l, lvl);
}

/* What lava_log_parse() gathers as it reads. */
struct parse_state {
	const char *name;
	struct lava_log log;
	struct pending p;
	size_t panic_line;
	char panic[160];
};

static int parse_record(struct json_object *rec, size_t line, void *userdata, struct sb_error *err)
{
	struct parse_state *st = userdata;
	int r = 0;

	st->log.n_records++;
	if (is_lvl(rec, "target")) {
		_cleanup_free_ char *msg = record_console_text(rec);
		if (!msg && json_object_is_type(json_lookup(rec, "msg"), json_type_string))
			r = sb_error_set(err, -ENOMEM, "%s:%zu: out of memory", st->name, line);
		else if (msg)
			r = console_line(&st->p, st->name, line, msg, &st->log, err);
		if (msg && !st->panic_line && strstr(msg, KERNEL_PANIC)) {
			st->panic_line = line;
			printable(strstr(msg, KERNEL_PANIC), st->panic, sizeof(st->panic));
		}
	}
	return r;
}

int lava_log_parse(const char *name, const char *text, size_t len, struct lava_log *out, struct sb_error *err)
{
	struct parse_state st = { .name = name };
	struct pending *p = &st.p;
	int r;

	r = each_record(name, text, len, NULL, parse_record, &st, err);
	if (r == 0 && p->open && st.panic_line > p->r.line)
		r = sb_error_set(err, -EBADMSG, "%s: the DUT's kernel panicked inside the report of run %s that began at "
				 "line %zu (line %zu: %s; %zu base64 lines read, no %s): the report did not come back", name,
				 p->r.id, p->r.line, st.panic_line, st.panic, p->lines, LAVA_REPORT_END);
	else if (r == 0 && p->open)
		r = sb_error_set(err, -EBADMSG, "%s: the log ends inside the report of run %s that began at line %zu (%zu "
				 "base64 lines read, no %s): the log was cut off", name, p->r.id,
				 p->r.line, p->lines, LAVA_REPORT_END);
	if (r == 0 && st.log.n_reports == 0 && st.panic_line)
		r = sb_error_set(err, -ENOENT, "%s: no %s: the DUT's kernel panicked before it printed one (line %zu: %s)",
				 name, LAVA_REPORT_BEGIN, st.panic_line, st.panic);
	else if (r == 0 && st.log.n_reports == 0)
		r = sb_error_set(err, -ENOENT, "%s: no %s among its %zu console lines (%zu records): did the job print "
				 "the report (docs/lava.md)?", name, LAVA_REPORT_BEGIN, st.log.n_target, st.log.n_records);
	pending_reset(p);
	if (r < 0) {
		lava_log_done(&st.log);
		return r;
	}
	*out = st.log;
	return 0;
}

void lava_cases_done(struct lava_cases *c)
{
	for (size_t i = 0; c && i < c->n_cases; i++) {
		struct lava_case *k = &c->cases[i];
		free(k->definition);
		free(k->set);
		free(k->name);
		free(k->result);
		free(k->measurement);
		free(k->units);
	}
	if (c) {
		free(c->cases);
		free(c->job_result);
		free(c->job_error_msg);
		free(c->job_error_type);
		free(c->begin_id);
		free(c->begin_job);
		free(c->begin_device);
		free(c->begin_device_type);
		*c = (struct lava_cases){};
	}
}

/* A copy of the string member key of o, NULL when there is none; false when out of memory. */
static bool copy_member(struct json_object *o, const char *key, char **out)
{
	const char *s = json_lookup_string(o, key);

	*out = s ? strdup(s) : NULL;
	return !s || *out;
}

struct cases_state {
	const char *name;
	struct lava_cases c;
	char **ids;            /* the distinct BEGIN markers' run ids */
};

static int case_record(struct lava_cases *c, struct json_object *msg, size_t line, const char *name,
		       struct sb_error *err)
{
	const char *def = json_lookup_string(msg, "definition"), *cname = json_lookup_string(msg, "case");

	if (!def || !cname || !json_lookup_string(msg, "result"))
		return 0; /* not a test case */
	if (!strcmp(def, "lava")) {
		if (strcmp(cname, "job"))
			return 0; /* one of LAVA's own actions */
		free(c->job_result);
		free(c->job_error_msg);
		free(c->job_error_type);
		bool ok = copy_member(msg, "result", &c->job_result);
		ok = copy_member(msg, "error_msg", &c->job_error_msg) && ok;
		ok = copy_member(msg, "error_type", &c->job_error_type) && ok;
		if (!ok)
			return sb_error_set(err, -ENOMEM, "%s:%zu: out of memory", name, line);
		return 0;
	}
	if (c->n_cases >= LAVA_MAX_CASES)
		return sb_error_set(err, -E2BIG, "%s:%zu: more than %d test cases in one log", name, line, LAVA_MAX_CASES);
	struct lava_case *nv = realloc(c->cases, (c->n_cases + 1) * sizeof(*nv));
	if (!nv)
		return sb_error_set(err, -ENOMEM, "%s:%zu: out of memory", name, line);
	c->cases = nv;
	struct lava_case *k = &c->cases[c->n_cases++];
	*k = (struct lava_case){ .line = line };
	const char *const keys[] = { "definition", "set", "case", "result", "measurement", "units" };
	char **const vals[] = { &k->definition, &k->set, &k->name, &k->result, &k->measurement, &k->units };
	bool ok = true;
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		ok = copy_member(msg, keys[i], vals[i]) && ok;
	if (!ok)
		return sb_error_set(err, -ENOMEM, "%s:%zu: out of memory", name, line);
	return 0;
}

static int marker_record(struct cases_state *st, const char *msg, size_t line, struct sb_error *err)
{
	struct lava_cases *c = &st->c;
	const char *f;

	if ((f = marker_fields(msg, LAVA_REPORT_END))) {
		_cleanup_free_ char *id = field(f, "id");
		if (c->begin_id && id && !strcmp(id, c->begin_id) && line > c->begin_line)
			c->begin_ended = true;
		return 0;
	}
	if (!(f = marker_fields(msg, LAVA_REPORT_BEGIN)))
		return 0;
	_cleanup_free_ char *id = field(f, "id");
	if (!id_plausible(id))
		return 0; /* no run id to name */
	for (size_t i = 0; i < c->n_begin_ids; i++)
		if (!strcmp(st->ids[i], id))
			return 0;
	char **nv = realloc(st->ids, (c->n_begin_ids + 1) * sizeof(*nv));
	if (!nv)
		return sb_error_set(err, -ENOMEM, "%s:%zu: out of memory", st->name, line);
	st->ids = nv;
	st->ids[c->n_begin_ids++] = TAKE_PTR(id);
	if (c->begin_line)
		return 0;
	c->begin_line = line;
	if (!(c->begin_id = strdup(st->ids[0])))
		return sb_error_set(err, -ENOMEM, "%s:%zu: out of memory", st->name, line);
	const char *const keys[] = { "job", "device", "device_type" };
	char **const vals[] = { &c->begin_job, &c->begin_device, &c->begin_device_type };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		char *v = field(f, keys[i]);
		if (v && !name_plausible(v))
			free(TAKE_PTR(v)); /* as lava_log_parse() would refuse it: not carried over */
		*vals[i] = v;
	}
	return 0;
}

static int cases_record(struct json_object *rec, size_t line, void *userdata, struct sb_error *err)
{
	struct cases_state *st = userdata;

	st->c.n_records++;
	if (is_lvl(rec, "results") && json_object_is_type(json_lookup(rec, "msg"), json_type_object))
		return case_record(&st->c, json_lookup(rec, "msg"), line, st->name, err);
	if (is_lvl(rec, "target")) {
		_cleanup_free_ char *msg = record_console_text(rec);
		if (!msg && json_object_is_type(json_lookup(rec, "msg"), json_type_string))
			return sb_error_set(err, -ENOMEM, "%s:%zu: out of memory", st->name, line);
		return msg ? marker_record(st, msg, line, err) : 0;
	}
	return 0;
}

int lava_log_cases(const char *name, const char *text, size_t len, struct lava_cases *out, struct sb_error *err)
{
	struct cases_state st = { .name = name };
	int r = each_record(name, text, len, &st.c.n_unreadable, cases_record, &st, err);

	for (size_t i = 0; i < st.c.n_begin_ids; i++)
		free(st.ids[i]);
	free(st.ids);
	if (r < 0) {
		lava_cases_done(&st.c);
		return r;
	}
	*out = st.c;
	return 0;
}
