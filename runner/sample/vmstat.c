// SPDX-License-Identifier: GPL-2.0-or-later
/* /proc/vmstat's NUMA-balancing and migration counters: a strict, bounded parser and a counter source. */
#include "vmstat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

#define VMSTAT_PATH "/proc/vmstat"
#define QUOTE_MAX 80 /* of a line quoted in a message */

static const struct {
	const char *name;
	const char *config; /* the option without which the kernel has no such line */
} fields[VMSTAT_N_FIELDS] = {
	[VMSTAT_NUMA_PTE_UPDATES] = { "numa_pte_updates", "CONFIG_NUMA_BALANCING" },
	[VMSTAT_NUMA_HUGE_PTE_UPDATES] = { "numa_huge_pte_updates", "CONFIG_NUMA_BALANCING" },
	[VMSTAT_NUMA_HINT_FAULTS] = { "numa_hint_faults", "CONFIG_NUMA_BALANCING" },
	[VMSTAT_NUMA_HINT_FAULTS_LOCAL] = { "numa_hint_faults_local", "CONFIG_NUMA_BALANCING" },
	[VMSTAT_NUMA_PAGES_MIGRATED] = { "numa_pages_migrated", "CONFIG_NUMA_BALANCING" },
	[VMSTAT_PGMIGRATE_SUCCESS] = { "pgmigrate_success", "CONFIG_MIGRATION" },
};

struct vmstat_source {
	char *path;
	int fd; /* kept open: each sample reads it again from offset 0 (no open and close per sample) */
	struct vmstat_values start;
	char buf[VMSTAT_READ_MAX];
};

const char *vmstat_field_name(enum vmstat_field f)
{
	return f < VMSTAT_N_FIELDS ? fields[f].name : NULL;
}

static int field_lookup(const char *name, size_t len)
{
	for (int f = 0; f < VMSTAT_N_FIELDS; f++)
		if (strlen(fields[f].name) == len && !memcmp(fields[f].name, name, len))
			return f;
	return -1;
}

/* A decimal integer of 1 to 20 digits that fits 64 bits, and nothing else. */
static bool parse_u64(const char *s, size_t len, uint64_t *ret)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*ret = v;
	return true;
}

int vmstat_parse(const char *text, size_t len, const char *path, struct vmstat_values *ret, struct sb_error *err)
{
	struct vmstat_values v = {};
	unsigned lineno = 0;

	if (!path)
		path = VMSTAT_PATH;
	if (len == 0)
		return sb_error_set(err, -EBADMSG, "%s is empty; is /proc mounted?", path);
	if (text[len - 1] != '\n') {
		const char *last = text + len;
		while (last > text && last[-1] != '\n')
			last--;
		return sb_error_set(err, -EBADMSG, "%s is truncated: its last line \"%.*s\" has no newline", path,
				    (int)(text + len - last > QUOTE_MAX ? QUOTE_MAX : text + len - last), last);
	}
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t line_len = (size_t)(nl - p);
		const char *sp = memchr(p, ' ', line_len);
		int f;

		lineno++;
		/* lines we do not read may hold anything */
		f = sp ? field_lookup(p, (size_t)(sp - p)) : field_lookup(p, line_len);
		if (f >= 0) {
			uint64_t val;

			if (!sp || !parse_u64(sp + 1, (size_t)(nl - sp - 1), &val))
				return sb_error_set(err, -EBADMSG,
						    "%s line %u: \"%.*s\": the value of %s is not a decimal integer",
						    path, lineno, (int)(line_len > QUOTE_MAX ? QUOTE_MAX : line_len), p, fields[f].name);
			if (v.present[f])
				return sb_error_set(err, -EBADMSG, "%s line %u: %s appears a second time", path, lineno,
						    fields[f].name);
			v.value[f] = val;
			v.present[f] = true;
		}
		p = nl + 1;
	}
	*ret = v;
	return 0;
}

/* Reads the whole file into s->buf, at most VMSTAT_READ_MAX bytes. */
static int read_file(struct vmstat_source *s, size_t *ret_len, struct sb_error *err)
{
	size_t len = 0;

	if (s->fd < 0) {
		s->fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (s->fd < 0)
			return sb_error_set(err, -errno, "cannot open %s: %s", s->path, strerror(errno));
	}
	for (;;) {
		ssize_t n = pread(s->fd, s->buf + len, sizeof(s->buf) - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sb_error_set(err, -errno, "cannot read %s: %s", s->path, strerror(errno));
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == sizeof(s->buf)) {
			char c;
			if (pread(s->fd, &c, 1, (off_t)len) == 0)
				break;
			return sb_error_set(err, -EFBIG, "%s is larger than %d bytes, more than any kernel writes; not read",
					    s->path, VMSTAT_READ_MAX);
		}
	}
	*ret_len = len;
	return 0;
}

static int read_values(struct vmstat_source *s, struct vmstat_values *ret, struct sb_error *err)
{
	size_t len = 0;
	int r = read_file(s, &len, err);

	if (r < 0)
		return r;
	return vmstat_parse(s->buf, len, s->path, ret, err);
}

static void counter_name(enum vmstat_field f, char *buf, size_t len)
{
	snprintf(buf, len, "vmstat.%s", fields[f].name);
}

static void source_name(enum vmstat_field f, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s (host-wide: every process, not only the VM's)", VMSTAT_PATH, fields[f].name);
}

static int set_unavailable(struct report *r, const char *reason)
{
	char counter[64], source[160];

	for (int f = 0; f < VMSTAT_N_FIELDS; f++) {
		counter_name(f, counter, sizeof(counter));
		source_name(f, source, sizeof(source));
		int k = report_set_probe(r, counter, false, source, "procfs", reason);
		if (k < 0)
			return k;
	}
	return 0;
}

int vmstat_source_open(const char *path, struct report *r, struct vmstat_source **ret, struct sb_error *err)
{
	struct vmstat_source *s = calloc(1, sizeof(*s));
	char counter[64], source[160], reason[SB_ERROR_MAX + 64];
	struct sb_error e = {};
	int k;

	*ret = NULL;
	if (s) {
		s->fd = -1;
		s->path = strdup(path ? path : VMSTAT_PATH);
	}
	if (!s || !s->path) {
		vmstat_source_free(s);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	k = read_values(s, &s->start, &e);
	if (k < 0) {
		vmstat_source_free(s);
		snprintf(reason, sizeof(reason), "host vmstat counters: %s", e.msg);
		return set_unavailable(r, reason) < 0 ? sb_error_set(err, -ENOMEM, "out of memory") : 0;
	}
	for (int f = 0; f < VMSTAT_N_FIELDS; f++) {
		counter_name(f, counter, sizeof(counter));
		source_name(f, source, sizeof(source));
		if (s->start.present[f]) {
			k = report_set_probe(r, counter, true, source, "procfs", NULL);
		} else {
			snprintf(reason, sizeof(reason), "%s has no %s: the kernel is built without %s", s->path,
				 fields[f].name, fields[f].config);
			k = report_set_probe(r, counter, false, source, "procfs", reason);
		}
		if (k < 0) {
			vmstat_source_free(s);
			return sb_error_set(err, -ENOMEM, "out of memory");
		}
	}
	*ret = s;
	return 0;
}

int vmstat_source_read(struct vmstat_source *s, vmstat_emit_fn emit, void *userdata, struct sb_error *err)
{
	struct vmstat_values now;
	char counter[64];
	int k;

	k = read_values(s, &now, err);
	if (k < 0)
		return k;
	for (int f = 0; f < VMSTAT_N_FIELDS; f++) {
		/* only the fields of the open: their probes say available; a line gained or lost is no counter */
		if (!s->start.present[f])
			continue;
		if (!now.present[f])
			return sb_error_set(err, -EBADMSG, "%s no longer has %s", s->path, fields[f].name);
		counter_name(f, counter, sizeof(counter));
		uint64_t d = now.value[f] >= s->start.value[f] ? now.value[f] - s->start.value[f] : 0;
		k = emit(userdata, counter, d);
		if (k < 0)
			return sb_error_set(err, k, "out of memory");
	}
	return 0;
}

void vmstat_source_free(struct vmstat_source *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s);
}
