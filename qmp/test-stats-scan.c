// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The query-stats scanner (stats-scan.c): what it takes and declines, and
 * its property (stats-scan-check.c) on each case, on every prefix of QEMU's
 * own lines and on every single-byte change of them.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "qmp-internal.h"
#include "stats-scan-check.h"

/* QEMU 7.2's lines, as it sends them (qom-path after stats), the id the check's */
#define VCPU_LINE                                                                                       \
	"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"exits\", \"value\": 12}, "          \
	"{\"name\": \"pf_taken\", \"value\": 3}], \"qom-path\": \"/machine/unattached/device[2]\"}, "      \
	"{\"provider\": \"kvm\", \"stats\": [{\"name\": \"exits\", \"value\": 30}, {\"name\": \"pf_taken\", " \
	"\"value\": 4}], \"qom-path\": \"/machine/unattached/device[0]\"}], \"id\": \"sb-7\"}"
#define VM_LINE                                                                                  \
	"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"remote_tlb_flush\", \"value\": " \
	"9223372036854775807}, {\"name\": \"max_mmu_page_hash_collisions\", \"value\": 0}]}], \"id\": \"sb-7\"}"

static int check(const char *text)
{
	char why[256];
	int r = qmp_stats_scan_check(text, strlen(text), why, sizeof(why));

	CHECK_MSG(r >= 0, "%s: %s", text, why);
	return r;
}

static void test_taken(void)
{
	struct qmp_vcpu_stats vs;
	struct qmp_stat_set vm;
	int64_t v;

	CHECK(qmp_stats_scan_vcpu(VCPU_LINE, strlen(VCPU_LINE), "sb-7", &vs) == 1);
	CHECK(vs.n_vcpus == 2 && !strcmp(vs.vcpus[0].qom_path, "/machine/unattached/device[2]"));
	CHECK(qmp_stat_set_get(&vs.vcpus[1], "pf_taken", &v) == 0 && v == 4);
	CHECK(qmp_stat_set_get(&vs.sum, "exits", &v) == 0 && v == 42);
	CHECK(qmp_stat_set_get(&vs.sum, "pf_taken", &v) == 0 && v == 7);
	qmp_vcpu_stats_clear(&vs);
	CHECK(qmp_stats_scan_vm(VM_LINE, strlen(VM_LINE), "sb-7", &vm) == 1);
	CHECK(vm.n == 2 && !vm.qom_path && vm.stats[0].value == INT64_MAX);
	qmp_stat_set_clear(&vm);
	/* another id: the reply of an abandoned command, json-c's path to drop */
	CHECK(qmp_stats_scan_vm(VM_LINE, strlen(VM_LINE), "sb-8", &vm) == 0 && !vm.stats);
	/* a whole-message transport asks for no id */
	CHECK(qmp_stats_scan_vm(VM_LINE, strlen(VM_LINE), NULL, &vm) == 1);
	qmp_stat_set_clear(&vm);

	/* the sum over vCPUs overflows: declined as vcpu (json-c's path says which stat), taken as vm */
	static const char over[] = "{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\", \"value\": "
				   "9223372036854775807}]}, {\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\", "
				   "\"value\": 1}]}], \"id\": \"sb-7\"}";

	CHECK(qmp_stats_scan_vcpu(over, strlen(over), "sb-7", &vs) == 0 && !vs.vcpus && !vs.sum.stats);
	CHECK(check(over) == 1);

	CHECK(check(VCPU_LINE) == 1);
	CHECK(check(VM_LINE) == 1);
	/* members in any order, JSON's whitespace anywhere between tokens */
	CHECK(check("{\"id\":\"sb-7\",\"return\":[{\"qom-path\":\"/c\",\"stats\":[{\"value\":1,\"name\":\"a\"}],"
		    "\"provider\":\"kvm\"}]}") == 1);
	CHECK(check(" \t{ \"return\" : [ { \"provider\" : \"kvm\" , \"stats\" : [ ] } ] , \"id\" : \"sb-7\" } \r") == 1);
	/* booleans as 0/1; another provider's result skipped */
	CHECK(check("{\"return\": [{\"provider\": \"other\", \"stats\": []}, {\"provider\": \"kvm\", \"stats\": "
		    "[{\"name\": \"b\", \"value\": true}, {\"name\": \"c\", \"value\": false}]}], \"id\": \"sb-7\"}") == 1);
}

static void test_declined(void)
{
	static const char *const texts[] = {
		/* valid JSON json-c is left to take, or to refuse as the client does */
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"pf\\u005ftaken\", \"value\": 1}]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\", \"value\": 1.5}]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\", \"value\": 1e3}]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\", \"value\": -1}]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\", \"value\": 9223372036854775808}]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"h\", \"value\": [1, 2]}]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\", \"value\": null}]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\", \"name\": \"b\", \"value\": 1}]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\", \"value\": 1, \"unit\": 1}]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [], \"qom-path\": \"/m\\u00e9\"}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [], \"qom-path\": \"/m\xc3\xa9\"}], \"id\": \"sb-7\"}",
		"{\"return\": [], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"other\", \"stats\": []}], \"id\": \"sb-7\"}",
		"{\"return\": {}, \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": []}], \"id\": \"sb-7\", \"event\": \"STOP\"}",
		"{\"error\": {\"class\": \"GenericError\", \"desc\": \"no\"}, \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": []}], \"id\": 7}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": []}]}",
		/* not JSON */
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\", \"value\": 01}]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\", \"value\": tru}]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\", \"value\": truex}]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [,]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\", \"value\": 1},]}], \"id\": \"sb-7\"}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": []}], \"id\": \"sb-7\"} {}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": []}], \"id\": \"sb-7\"}}",
		"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\tb\", \"value\": 1}]}], \"id\": \"sb-7\"}",
		"",
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		CHECK_MSG(check(texts[i]) == 0, "taken: %s", texts[i]);
	/* an embedded NUL ends nothing: the text's length does */
	static const char nul[] = "{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"a\0b\", \"value\": 1}]}], "
				  "\"id\": \"sb-7\"}";
	char why[256];

	CHECK(qmp_stats_scan_check(nul, sizeof(nul) - 1, why, sizeof(why)) == 0);
}

/* Every prefix of QEMU's lines is declined but the whole (and the whole with trailing whitespace). */
static void test_prefixes(void)
{
	static const char *const lines[] = { VCPU_LINE, VM_LINE };
	char why[256];

	for (size_t l = 0; l < 2; l++)
		for (size_t n = 0; n < strlen(lines[l]); n++)
			CHECK_MSG(qmp_stats_scan_check(lines[l], n, why, sizeof(why)) == 0, "prefix of %zu bytes: %s", n,
				  why);
}

/* Every byte of QEMU's lines changed to each of a set of bytes: the property holds on all. */
static void test_mutations(void)
{
	static const char subst[] = "{}[]\",: \t\r\n0159-.etrufalsnx\\\x01\x7f\xc3";
	static const char *const lines[] = { VCPU_LINE, VM_LINE };
	char buf[1024], why[256];
	size_t taken = 0, total = 0;

	for (size_t l = 0; l < 2; l++) {
		size_t len = strlen(lines[l]);

		for (size_t i = 0; i < len; i++)
			for (size_t k = 0; k < sizeof(subst) - 1; k++) {
				int r;

				memcpy(buf, lines[l], len);
				buf[i] = subst[k];
				r = qmp_stats_scan_check(buf, len, why, sizeof(why));
				CHECK_MSG(r >= 0, "byte %zu of line %zu as 0x%02x: %s", i, l, (unsigned char)subst[k], why);
				taken += r == 1;
				total++;
			}
	}
	/* most changes break the line; some keep it valid (a digit for a digit, a letter in a name) */
	CHECK(taken > 0 && taken < total);
}

int main(void)
{
	test_taken();
	test_declined();
	test_prefixes();
	test_mutations();
	return 0;
}
