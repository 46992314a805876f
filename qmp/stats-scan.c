// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fast path of a sample's query-stats replies: a scanner for the one
 * line QEMU sends, filling the stat sets straight from the text with no
 * json-c tree (which cost a sampler most of its CPU: a hash table per stat
 * object, a printbuf per string). It takes a strict subset of JSON:
 *
 *   {"return": [{"provider": S, "qom-path": S, "stats": [{"name": S,
 *    "value": N}, ...]}, ...], "id": S}
 *
 * members in any order, each at most once; strings of printable ASCII with
 * no escapes; values non-negative integers up to INT64_MAX, true or false.
 * Anything else, valid JSON or not, is declined (0) and the caller parses
 * the line with json-c as before, so what the scanner takes is exactly
 * what the tree would have given (fuzz-stats-scan checks both ways).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qmp-internal.h"

struct scan {
	const char *p, *end;
};

static void skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
		s->p++;
}

static bool take(struct scan *s, char ch)
{
	skip_ws(s);
	if (s->p < s->end && *s->p == ch) {
		s->p++;
		return true;
	}
	return false;
}

static bool string(struct scan *s, const char **v, size_t *n)
{
	const char *b;

	if (!take(s, '"'))
		return false;
	for (b = s->p; s->p < s->end; s->p++) {
		unsigned char ch = (unsigned char)*s->p;

		if (ch == '"') {
			*v = b;
			*n = (size_t)(s->p - b);
			s->p++;
			return true;
		}
		if (ch < 0x20 || ch >= 0x7f || ch == '\\')
			return false;
	}
	return false;
}

static bool is(const char *v, size_t n, const char *word)
{
	return n == strlen(word) && !memcmp(v, word, n);
}

/* A member's key and its colon; *key, *n. */
static bool key(struct scan *s, const char **k, size_t *n)
{
	return string(s, k, n) && take(s, ':');
}

static bool literal(struct scan *s, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n))
		return false;
	s->p += n;
	return true;
}

/* A stat's value as stats_from_json() takes it: an integer, or a boolean as 0/1. */
static bool value(struct scan *s, int64_t *v)
{
	uint64_t x = 0;

	skip_ws(s);
	if (literal(s, "true")) {
		*v = 1;
		return true;
	}
	if (literal(s, "false")) {
		*v = 0;
		return true;
	}
	if (s->p >= s->end || *s->p < '0' || *s->p > '9')
		return false; /* negative numbers, strings, lists (histograms): json-c's */
	if (*s->p == '0') {
		s->p++;
	} else {
		for (; s->p < s->end && *s->p >= '0' && *s->p <= '9'; s->p++) {
			if (x > (uint64_t)(INT64_MAX - (*s->p - '0')) / 10)
				return false;
			x = x * 10 + (uint64_t)(*s->p - '0');
		}
	}
	/* "01", "1.5", "1e3" end here and fail on the token after */
	*v = (int64_t)x;
	return true;
}

/* {"name": S, "value": N} appended to set */
static int stat(struct scan *s, struct qmp_stat_set *set)
{
	const char *k, *name = NULL;
	size_t kn, name_n = 0;
	bool have_value = false;
	int64_t v = 0;

	if (!take(s, '{'))
		return 0;
	do {
		if (!key(s, &k, &kn))
			return 0;
		if (is(k, kn, "name") && !name) {
			if (!string(s, &name, &name_n))
				return 0;
		} else if (is(k, kn, "value") && !have_value) {
			if (!value(s, &v))
				return 0;
			have_value = true;
		} else {
			return 0;
		}
	} while (take(s, ','));
	if (!take(s, '}') || !name || !have_value)
		return 0;
	return qmp_stat_set_add(set, name, name_n, v) < 0 ? -ENOMEM : 1;
}

/* One StatsResult; *kvm: its provider is "kvm". set gets its stats and qom-path. */
static int result(struct scan *s, struct qmp_stat_set *set, bool *kvm)
{
	const char *k, *v;
	size_t kn, vn;
	bool provider = false, stats = false;
	int r;

	*kvm = false;
	if (!take(s, '{'))
		return 0;
	do {
		if (!key(s, &k, &kn))
			return 0;
		if (is(k, kn, "provider") && !provider) {
			if (!string(s, &v, &vn))
				return 0;
			provider = true;
			*kvm = is(v, vn, "kvm");
		} else if (is(k, kn, "qom-path") && !set->qom_path) {
			if (!string(s, &v, &vn))
				return 0;
			set->qom_path = strndup(v, vn);
			if (!set->qom_path)
				return -ENOMEM;
		} else if (is(k, kn, "stats") && !stats) {
			stats = true;
			if (!take(s, '['))
				return 0;
			if (!take(s, ']')) {
				do {
					r = stat(s, set);
					if (r <= 0)
						return r;
				} while (take(s, ','));
				if (!take(s, ']'))
					return 0;
			}
		} else {
			return 0;
		}
	} while (take(s, ','));
	return take(s, '}') && provider && stats;
}

struct results {
	bool vcpu;
	struct qmp_stat_set *vm;
	struct qmp_vcpu_stats *vcpus;
	size_t cap;
};

/* A KVM result taken: the VM's stats appended to one set, a vCPU's kept as one more vCPU. */
static int keep(struct results *out, struct qmp_stat_set *set)
{
	if (!out->vcpu && out->vm->n == 0) { /* the usual one result: its stats moved, not copied */
		free(out->vm->stats);
		out->vm->stats = set->stats;
		out->vm->n = set->n;
		out->vm->cap = set->cap;
		set->stats = NULL;
		set->n = set->cap = 0;
		return 1;
	}
	if (!out->vcpu) {
		for (size_t i = 0; i < set->n; i++)
			if (qmp_stat_set_add(out->vm, set->stats[i].name, strlen(set->stats[i].name),
					     set->stats[i].value) < 0)
				return -ENOMEM;
		return 1;
	}
	struct qmp_vcpu_stats *vs = out->vcpus;

	if (vs->n_vcpus == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 4;
		struct qmp_stat_set *n = realloc(vs->vcpus, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		vs->vcpus = n;
		out->cap = cap;
	}
	if (qmp_stats_sum_add(&vs->sum, set, NULL) < 0)
		return 0; /* an overflow: json-c's path says so */
	vs->vcpus[vs->n_vcpus++] = *set;
	memset(set, 0, sizeof(*set));
	return 1;
}

static int reply_return(struct scan *s, struct results *out)
{
	struct qmp_stat_set set = { 0 };
	bool found = false, kvm;
	int r = 1;

	if (!take(s, '['))
		return 0;
	if (take(s, ']'))
		return 0; /* no KVM stats: json-c's path gives the error */
	do {
		r = result(s, &set, &kvm);
		if (r > 0 && kvm) {
			found = true;
			r = keep(out, &set);
		}
		qmp_stat_set_clear(&set);
		if (r <= 0)
			return r;
	} while (take(s, ','));
	return take(s, ']') && found;
}

static int scan_reply(const char *text, size_t len, const char *want_id, struct results *out)
{
	struct scan s = { text, text + len };
	bool got_return = false, got_id = false;
	const char *k, *v;
	size_t kn, vn;
	int r;

	if (!take(&s, '{'))
		return 0;
	do {
		if (!key(&s, &k, &kn))
			return 0;
		if (is(k, kn, "return") && !got_return) {
			r = reply_return(&s, out);
			if (r <= 0)
				return r;
			got_return = true;
		} else if (is(k, kn, "id") && !got_id) {
			if (!string(&s, &v, &vn) || (want_id && !is(v, vn, want_id)))
				return 0;
			got_id = true;
		} else {
			return 0;
		}
	} while (take(&s, ','));
	if (!take(&s, '}') || !got_return || (want_id && !got_id))
		return 0;
	skip_ws(&s);
	return s.p == s.end;
}

int qmp_stats_scan_vm(const char *text, size_t len, const char *want_id, void *ret)
{
	struct qmp_stat_set *vm = ret;
	struct results out = { .vm = vm };
	int r;

	memset(vm, 0, sizeof(*vm));
	r = scan_reply(text, len, want_id, &out);
	if (r <= 0)
		qmp_stat_set_clear(vm);
	return r;
}

int qmp_stats_scan_vcpu(const char *text, size_t len, const char *want_id, void *ret)
{
	struct qmp_vcpu_stats *vs = ret;
	struct results out = { .vcpu = true, .vcpus = vs };
	int r;

	memset(vs, 0, sizeof(*vs));
	r = scan_reply(text, len, want_id, &out);
	if (r <= 0)
		qmp_vcpu_stats_clear(vs);
	return r;
}
