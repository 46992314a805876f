// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /proc/vmstat's parser and counter source on fixture text
 * (runner/sample/fixtures/vmstat/, argv[1]): a 6.18 kernel's file, the same
 * without CONFIG_NUMA_BALANCING's lines, a read cut mid-line; malformed
 * values, a field twice, lines it does not read, a file too large; the
 * probes entries and the increases the source emits; and this host's own
 * /proc/vmstat, read-only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "report.h"
#include "vmstat.h"

static const char *fixtures;
static char tmp[] = "/tmp/test-vmstat-XXXXXX";

static char *fixture(const char *name, size_t *len)
{
	char path[1024];
	FILE *f;
	char *buf = malloc(VMSTAT_READ_MAX);

	CHECK(buf);
	snprintf(path, sizeof(path), "%s/%s", fixtures, name);
	f = fopen(path, "r");
	CHECK_MSG(f, "%s: %s", path, strerror(errno));
	*len = fread(buf, 1, VMSTAT_READ_MAX, f);
	fclose(f);
	return buf;
}

static void fixture_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", fixtures, name);
}

static void write_file(const char *text)
{
	FILE *f = fopen(tmp, "w");

	CHECK(f);
	fputs(text, f);
	fclose(f);
}

static int parse(const char *text, struct vmstat_values *v, struct sb_error *err)
{
	return vmstat_parse(text, strlen(text), "fixture", v, err);
}

static void test_parse_fixtures(void)
{
	struct vmstat_values v;
	struct sb_error err = {};
	size_t len;
	char *text;

	text = fixture("numa-balancing", &len);
	CHECK_MSG(vmstat_parse(text, len, NULL, &v, &err) == 0, "%s", err.msg);
	for (int f = 0; f < VMSTAT_N_FIELDS; f++)
		CHECK_MSG(v.present[f], "%s", vmstat_field_name(f));
	CHECK(v.value[VMSTAT_NUMA_PTE_UPDATES] == 234089);
	CHECK(v.value[VMSTAT_NUMA_HUGE_PTE_UPDATES] == 179184);
	CHECK(v.value[VMSTAT_NUMA_HINT_FAULTS] == 113110);
	CHECK(v.value[VMSTAT_NUMA_HINT_FAULTS_LOCAL] == 113003);
	CHECK(v.value[VMSTAT_NUMA_PAGES_MIGRATED] == 107);
	CHECK(v.value[VMSTAT_PGMIGRATE_SUCCESS] == 4242);
	free(text);

	/* CONFIG_NUMA without CONFIG_NUMA_BALANCING: numa_hit and the like, none of balancing's */
	text = fixture("no-numa-balancing", &len);
	CHECK_MSG(vmstat_parse(text, len, NULL, &v, &err) == 0, "%s", err.msg);
	for (int f = VMSTAT_NUMA_PTE_UPDATES; f <= VMSTAT_NUMA_PAGES_MIGRATED; f++)
		CHECK(!v.present[f]);
	CHECK(v.present[VMSTAT_PGMIGRATE_SUCCESS] && v.value[VMSTAT_PGMIGRATE_SUCCESS] == 4242);
	free(text);

	/* cut in the middle of "numa_hint_faults 113110": its value cannot be trusted */
	text = fixture("truncated", &len);
	CHECK(vmstat_parse(text, len, "/proc/vmstat", &v, &err) == -EBADMSG);
	CHECK_MSG(strstr(err.msg, "/proc/vmstat is truncated") && strstr(err.msg, "\"numa_hint_faults 11\""), "%s", err.msg);
	free(text);
}

static void test_parse_strict(void)
{
	static const struct {
		const char *text, *expect;
	} bad[] = {
		{ "nr_free_pages 1\nnuma_hint_faults 12x\n", "fixture line 2: \"numa_hint_faults 12x\": the value of numa_hint_faults is not a decimal integer" },
		{ "numa_hint_faults\n", "line 1: \"numa_hint_faults\"" },
		{ "numa_hint_faults \n", "not a decimal integer" },
		{ "numa_hint_faults -1\n", "not a decimal integer" },
		{ "numa_hint_faults  5\n", "not a decimal integer" },
		{ "numa_hint_faults 5 6\n", "not a decimal integer" },
		{ "numa_pte_updates 18446744073709551616\n", "the value of numa_pte_updates" },
		{ "pgmigrate_success 1\npgmigrate_success 2\n", "line 2: pgmigrate_success appears a second time" },
		{ "numa_hint_faults 5", "truncated: its last line \"numa_hint_faults 5\" has no newline" },
		{ "", "fixture is empty" },
	};
	struct vmstat_values v;
	struct sb_error err = {};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_MSG(parse(bad[i].text, &v, &err) == -EBADMSG, "%s", bad[i].text);
		CHECK_MSG(strstr(err.msg, bad[i].expect), "%s: %s", bad[i].text, err.msg);
	}

	/* lines it does not read may be anything; names that only start like ours are other names */
	CHECK_MSG(parse("weird line\nnuma_foo bar\nnuma_hint_faults_localx y\n\nnuma_hint_faults_local 7\n"
			"numa_pte_updates 18446744073709551615\n",
			&v, &err) == 0,
		  "%s", err.msg);
	CHECK(v.present[VMSTAT_NUMA_HINT_FAULTS_LOCAL] && v.value[VMSTAT_NUMA_HINT_FAULTS_LOCAL] == 7);
	CHECK(!v.present[VMSTAT_NUMA_HINT_FAULTS]);
	CHECK(v.value[VMSTAT_NUMA_PTE_UPDATES] == UINT64_MAX);
}

struct emitted {
	size_t n;
	char names[VMSTAT_N_FIELDS][64];
	uint64_t values[VMSTAT_N_FIELDS];
};

static int collect(void *userdata, const char *name, uint64_t cumulative)
{
	struct emitted *e = userdata;

	CHECK(e->n < VMSTAT_N_FIELDS);
	snprintf(e->names[e->n], sizeof(e->names[0]), "%s", name);
	e->values[e->n++] = cumulative;
	return 0;
}

static uint64_t emitted(const struct emitted *e, const char *name)
{
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->names[i], name))
			return e->values[i];
	CHECK_MSG(false, "%s was not emitted", name);
	return 0;
}

static struct report *new_report(void)
{
	struct report *r;

	CHECK(report_new("20261201T120000Z-0c0c0c", 1796010312ULL * 1000000000ULL, &r) == 0);
	return r;
}

static void test_source(void)
{
	struct vmstat_source *s;
	struct sb_error err = {};
	struct emitted e = {};
	const struct report_probe *p;
	struct report *r = new_report();

	write_file("numa_pte_updates 100\nnuma_huge_pte_updates 0\nnuma_hint_faults 50\nnuma_hint_faults_local 40\n"
		   "numa_pages_migrated 3\npgmigrate_success 9\nnr_free_pages 1\n");
	CHECK_MSG(vmstat_source_open(tmp, r, &s, &err) == 0 && s, "%s", err.msg);
	p = report_find_probe(r, "vmstat.numa_hint_faults");
	CHECK(p && p->available && !strcmp(p->backend, "procfs"));
	CHECK_MSG(strstr(p->source, "/proc/vmstat numa_hint_faults") && strstr(p->source, "host-wide"), "%s", p->source);
	CHECK(report_find_probe(r, "vmstat.pgmigrate_success")->available);

	/* the increase since the open, not the count since boot */
	CHECK(vmstat_source_read(s, collect, &e, &err) == 0);
	CHECK(e.n == VMSTAT_N_FIELDS && emitted(&e, "vmstat.numa_pte_updates") == 0);
	write_file("numa_pte_updates 1100\nnuma_huge_pte_updates 2\nnuma_hint_faults 80\nnuma_hint_faults_local 60\n"
		   "numa_pages_migrated 3\npgmigrate_success 19\nnr_free_pages 1\n");
	e.n = 0;
	CHECK(vmstat_source_read(s, collect, &e, &err) == 0);
	CHECK(emitted(&e, "vmstat.numa_pte_updates") == 1000);
	CHECK(emitted(&e, "vmstat.numa_huge_pte_updates") == 2);
	CHECK(emitted(&e, "vmstat.numa_hint_faults") == 30);
	CHECK(emitted(&e, "vmstat.numa_hint_faults_local") == 20);
	CHECK(emitted(&e, "vmstat.numa_pages_migrated") == 0);
	CHECK(emitted(&e, "vmstat.pgmigrate_success") == 10);

	/* malformed mid-run: an error naming the line, not a silent zero */
	write_file("numa_pte_updates 1100\nnuma_hint_faults eighty\n");
	CHECK(vmstat_source_read(s, collect, &e, &err) == -EBADMSG);
	CHECK_MSG(strstr(err.msg, tmp) && strstr(err.msg, "line 2: \"numa_hint_faults eighty\""), "%s", err.msg);
	vmstat_source_free(s);
	report_free(r);
}

static void test_source_unavailable(void)
{
	struct vmstat_source *s;
	struct sb_error err = {};
	struct emitted e = {};
	const struct report_probe *p;
	struct report *r = new_report();
	char path[1024];

	/* no CONFIG_NUMA_BALANCING: its five counters are unavailable with that reason */
	fixture_path("no-numa-balancing", path, sizeof(path));
	CHECK_MSG(vmstat_source_open(path, r, &s, &err) == 0 && s, "%s", err.msg);
	for (int f = VMSTAT_NUMA_PTE_UPDATES; f <= VMSTAT_NUMA_PAGES_MIGRATED; f++) {
		char counter[64];
		snprintf(counter, sizeof(counter), "vmstat.%s", vmstat_field_name(f));
		p = report_find_probe(r, counter);
		CHECK_MSG(p && !p->available && strstr(p->reason, "CONFIG_NUMA_BALANCING") &&
				  strstr(p->reason, vmstat_field_name(f)),
			  "%s: %s", counter, p ? p->reason : "no probe");
	}
	p = report_find_probe(r, "vmstat.pgmigrate_success");
	CHECK(p && p->available);
	CHECK(vmstat_source_read(s, collect, &e, &err) == 0);
	CHECK(e.n == 1 && !strcmp(e.names[0], "vmstat.pgmigrate_success") && e.values[0] == 0);
	vmstat_source_free(s);

	/* a file that cannot be parsed: every counter unavailable, the reason naming it */
	fixture_path("truncated", path, sizeof(path));
	CHECK(vmstat_source_open(path, r, &s, &err) == 0 && !s);
	p = report_find_probe(r, "vmstat.numa_pte_updates");
	CHECK_MSG(p && !p->available && strstr(p->reason, "truncated") && strstr(p->reason, path), "%s", p->reason);

	CHECK(vmstat_source_open("/nonexistent/vmstat", r, &s, &err) == 0 && !s);
	p = report_find_probe(r, "vmstat.pgmigrate_success");
	CHECK_MSG(p && !p->available && strstr(p->reason, "cannot open /nonexistent/vmstat"), "%s", p->reason);

	/* larger than the read buffer: refused, not read in part */
	FILE *f = fopen(tmp, "w");
	CHECK(f);
	for (int i = 0; i < 4000; i++)
		fprintf(f, "nr_padding_%d %d\n", i, i);
	fclose(f);
	CHECK(vmstat_source_open(tmp, r, &s, &err) == 0 && !s);
	p = report_find_probe(r, "vmstat.numa_hint_faults");
	CHECK_MSG(p && !p->available && strstr(p->reason, "larger than 32768 bytes"), "%s", p->reason);
	report_free(r);
}

/* This host's file, read only: whatever its kernel has, it parses. */
static void test_this_host(void)
{
	struct vmstat_source *s;
	struct sb_error err = {};
	struct emitted e = {};
	struct report *r = new_report();

	CHECK(vmstat_source_open(NULL, r, &s, &err) == 0);
	CHECK_MSG(s, "%s", report_find_probe(r, "vmstat.numa_hint_faults")->reason);
	CHECK_MSG(vmstat_source_read(s, collect, &e, &err) == 0, "%s", err.msg);
	printf("this host: %zu of %d vmstat counters; numa_hint_faults %s\n", e.n, VMSTAT_N_FIELDS,
	       report_find_probe(r, "vmstat.numa_hint_faults")->available ? "available" : "unavailable");
	vmstat_source_free(s);
	report_free(r);
}

int main(int argc, char **argv)
{
	int fd;

	CHECK_MSG(argc == 2, "usage: test-vmstat FIXTURES_DIR");
	fixtures = argv[1];
	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	close(fd);
	test_parse_fixtures();
	test_parse_strict();
	test_source();
	test_source_unavailable();
	test_this_host();
	unlink(tmp);
	return 0;
}
