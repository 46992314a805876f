// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The self-check (selfcheck.h) on repetitions built here: exact pairs leave
 * no mark; a BPF counter below its KVM statistic marks it and its causes
 * partial with the repetition and both numbers, a mark the report writes
 * (test-report validates one against the schema); a pair with a side
 * missing or unavailable is not checked.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "macro.h"
#include "report.h"
#include "selfcheck.h"
#include "test-tmp.h"

/* Two rows: flushes BPF saw and KVM counted, page faults the same, split over the rows. */
static struct report_rep *add_rep(struct report *r, uint64_t flush_bpf, uint64_t flush_kvm, uint64_t pf_bpf,
				  uint64_t pf_kvm)
{
	struct report_rep *rep;
	struct report_row *row;

	CHECK(report_add_rep(r, 0, r->created_ns, &rep) == 0);
	for (int i = 0; i < 2; i++) {
		CHECK(report_rep_append_row(rep, 1.0 + i, 1.0, i ? REPORT_WINDOW_SNAPSHOT : REPORT_WINDOW_PRE, &row) == 0);
		CHECK(report_row_set(rep, row, "bpf.kvm_remote_flush", i ? flush_bpf - flush_bpf / 2 : flush_bpf / 2) == 0);
		CHECK(report_row_set(rep, row, "bpf.kvm_remote_flush.uffd-wp", i ? flush_bpf - flush_bpf / 2 : 0) == 0);
		CHECK(report_row_set(rep, row, "bpf.kvm_remote_flush.other", i ? 0 : flush_bpf / 2) == 0);
		CHECK(report_row_set(rep, row, "kvm.remote_tlb_flush_requests", i ? flush_kvm - flush_kvm / 2 : flush_kvm / 2) == 0);
		CHECK(report_row_set(rep, row, "bpf.page_fault", i ? pf_bpf : 0) == 0);
		CHECK(report_row_set(rep, row, "kvm.pf_taken", i ? pf_kvm : 0) == 0);
	}
	rep->state = REPORT_REP_COMPLETED;
	return rep;
}

static const char *partial_of(const struct report *r, const char *counter)
{
	const struct report_probe *p = report_find_probe(r, counter);

	CHECK(p);
	return p->partial;
}

static void probes(struct report *r, bool kvm_pf_available)
{
	CHECK(report_set_probe(r, "bpf.kvm_remote_flush", true, "fentry:kvm_make_all_cpus_request(KVM_REQ_TLB_FLUSH)",
			       "fentry", NULL) == 0);
	CHECK(report_set_probe(r, "bpf.kvm_remote_flush.uffd-wp", true, "fentry:kvm_make_all_cpus_request", "fentry",
			       NULL) == 0);
	CHECK(report_set_probe(r, "bpf.kvm_remote_flush.other", true, "fentry:kvm_make_all_cpus_request", "fentry",
			       NULL) == 0);
	CHECK(report_set_probe(r, "bpf.kvm_remote_flush_range", true, "fentry:kvm_flush_remote_tlbs_range", "fentry",
			       NULL) == 0);
	CHECK(report_set_probe(r, "kvm.remote_tlb_flush_requests", true, "query-stats vm remote_tlb_flush_requests",
			       "qmp", NULL) == 0);
	CHECK(report_set_probe(r, "bpf.page_fault", true, "kvm:kvm_page_fault", "tp_btf", NULL) == 0);
	CHECK(report_set_probe(r, "kvm.pf_taken", kvm_pf_available, kvm_pf_available ? "query-stats" : NULL,
			       kvm_pf_available ? "qmp" : NULL, kvm_pf_available ? NULL : "KVM is PVM here") == 0);
}

static void test_exact(void)
{
	_cleanup_report_ struct report *r = NULL;

	CHECK(report_new("20261207T010000Z-000001", 1796600000ULL * 1000000000ULL, &r) == 0);
	probes(r, true);
	CHECK(report_add_arm(r, "default", json_object_new_object(), 2) == 0);
	/* equal flushes; page faults: the tracepoint also sees MMIO faults pf_taken leaves out */
	CHECK(report_rep_selfcheck(r, add_rep(r, 265, 265, 70, 68)) == 0);
	CHECK(!partial_of(r, "bpf.kvm_remote_flush") && !partial_of(r, "bpf.kvm_remote_flush.uffd-wp"));
	CHECK(!partial_of(r, "bpf.page_fault"));
}

static void test_partial(void)
{
	_cleanup_report_ struct report *r = NULL;
	const char *p;

	CHECK(report_new("20261207T010000Z-000002", 1796600000ULL * 1000000000ULL, &r) == 0);
	probes(r, true);
	CHECK(report_add_arm(r, "default", json_object_new_object(), 3) == 0);
	CHECK(report_rep_selfcheck(r, add_rep(r, 265, 265, 5, 5)) == 0);
	CHECK(report_rep_selfcheck(r, add_rep(r, 1, 265, 5, 5)) == 0);
	CHECK(report_rep_selfcheck(r, add_rep(r, 52, 86, 4, 5)) == 0);
	p = partial_of(r, "bpf.kvm_remote_flush");
	CHECK_MSG(p && strstr(p, "repetition 1: bpf.kvm_remote_flush counted 1 of the 265 remote TLB flush requests KVM "
				"counted (kvm.remote_tlb_flush_requests)") &&
			  strstr(p, "fentry:kvm_make_all_cpus_request(KVM_REQ_TLB_FLUSH)") &&
			  strstr(p, "; repetition 2: bpf.kvm_remote_flush counted 52 of the 86") && !strstr(p, "repetition 0"),
		  "%s", p ? p : "(none)");
	/* the causes carry it: their sum is the counter's */
	CHECK(partial_of(r, "bpf.kvm_remote_flush.uffd-wp") && !strcmp(partial_of(r, "bpf.kvm_remote_flush.uffd-wp"), p));
	CHECK(partial_of(r, "bpf.kvm_remote_flush.other"));
	/* another counter whose name starts alike is not one of them */
	CHECK(!partial_of(r, "bpf.kvm_remote_flush_range"));
	p = partial_of(r, "bpf.page_fault");
	CHECK(p && strstr(p, "repetition 2: bpf.page_fault counted 4 of the 5 page faults") && !strstr(p, "repetition 1"));

	/* written, and valid against the schema */
	const char *dir = test_tmpdir("selfcheck");
	char path[512];
	struct sb_error err = { 0 };
	struct json_object *j = NULL;

	snprintf(path, sizeof(path), "%s/report.json", dir);
	CHECK_MSG(report_write(r, path, &err) == 0, "%s", err.msg);
	CHECK(report_read(path, &j, &err) == 0);
	struct json_object *e = json_object_object_get(json_object_object_get(j, "probes"), "bpf.kvm_remote_flush");
	CHECK(e && json_object_object_get(e, "partial") &&
	      strstr(json_object_get_string(json_object_object_get(e, "partial")), "52 of the 86"));
	CHECK(!json_object_object_get(json_object_object_get(json_object_object_get(j, "probes"), "kvm.pf_taken"),
				      "partial"));
	json_object_put(j);
}

/* A KVM statistic this host cannot count (PVM), or a pair with a counter missing: not checked. */
static void test_unchecked(void)
{
	_cleanup_report_ struct report *r = NULL;
	struct report_rep *rep;
	struct report_row *row;

	CHECK(report_new("20261207T010000Z-000003", 1796600000ULL * 1000000000ULL, &r) == 0);
	probes(r, false);
	CHECK(report_add_arm(r, "default", json_object_new_object(), 2) == 0);
	CHECK(report_rep_selfcheck(r, add_rep(r, 5, 5, 0, 9)) == 0);
	CHECK(!partial_of(r, "bpf.page_fault"));
	CHECK(report_add_rep(r, 0, r->created_ns, &rep) == 0);
	CHECK(report_rep_append_row(rep, 1.0, 1.0, REPORT_WINDOW_PRE, &row) == 0);
	CHECK(report_row_set(rep, row, "kvm.remote_tlb_flush_requests", 7) == 0);
	CHECK(report_rep_selfcheck(r, rep) == 0);
	CHECK(!partial_of(r, "bpf.kvm_remote_flush"));
}

int main(void)
{
	test_exact();
	test_partial();
	test_unchecked();
	return 0;
}
