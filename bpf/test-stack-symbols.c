// SPDX-License-Identifier: GPL-2.0-or-later
/* Stack symbolization on a crafted kallsyms: symbols, modules, unknown addresses, plumbing on top. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "stack-symbols.h"

static char path[] = "/tmp/test-stack-symbols.XXXXXX";

static void cleanup(void)
{
	unlink(path);
}

int main(void)
{
	struct ksyms ks = { 0 };
	struct sb_error err = { 0 };
	struct sb_stack st = { 0 };
	char buf[128];
	FILE *f;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	atexit(cleanup);
	f = fopen(path, "w");
	CHECK(f);
	CHECK(fputs("ffffffff81000100 t bpf_prog_1234_handler\n"
		    "ffffffff81000200 T __traceiter_kvm_page_fault\n"
		    "ffffffff81000300 T handle_mm_fault\n"
		    "ffffffff81000400 t bpf_trace_run2\n"
		    "ffffffff81000500 T do_user_addr_fault\n"
		    "ffffffffc0000000 t kvm_mmu_page_fault\t[kvm]\n"
		    "ffffffffc0000100 T kvm_end\t[kvm]\n", f) >= 0);
	CHECK(fclose(f) == 0);
	CHECK(ksyms_load(&ks, path, &err) == 0);

	stack_symbol(&ks, 0xffffffff81000310, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "handle_mm_fault+0x10"), "%s", buf);
	stack_symbol(&ks, 0xffffffffc000001f, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "kvm_mmu_page_fault+0x1f [kvm]"), "%s", buf);
	stack_symbol(&ks, 0xffffffff80000000, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "0xffffffff80000000"), "%s", buf);

	CHECK(stack_is_plumbing("bpf_prog_1234_handler+0x8"));
	CHECK(stack_is_plumbing("__traceiter_kvm_page_fault+0x2"));
	CHECK(!stack_is_plumbing("handle_mm_fault+0x10"));
	CHECK(!stack_is_plumbing("0xffffffff80000000"));

	/* the plumbing on top goes; a plumbing frame below a real one stays */
	const uint64_t ips[] = { 0xffffffff81000108, 0xffffffff81000204, 0xffffffffc0000010, 0xffffffff81000404,
				 0xffffffff81000520 };
	st.nr = sizeof(ips) / sizeof(ips[0]);
	for (size_t i = 0; i < st.nr; i++)
		st.frames[i].ip = ips[i];
	stack_symbolize(&ks, &st);
	CHECK_MSG(st.nr == 3, "nr=%zu", st.nr);
	CHECK(st.frames[0].ip == 0xffffffffc0000010 && !strcmp(st.frames[0].symbol, "kvm_mmu_page_fault+0x10 [kvm]"));
	CHECK(!strcmp(st.frames[1].symbol, "bpf_trace_run2+0x4"));
	CHECK(!strcmp(st.frames[2].symbol, "do_user_addr_fault+0x20"));

	/* all plumbing: nothing left */
	st.nr = 2;
	st.frames[0].ip = 0xffffffff81000100;
	st.frames[1].ip = 0xffffffff81000400;
	stack_symbolize(&ks, &st);
	CHECK(st.nr == 0);

	ksyms_free(&ks);
	printf("stack-symbols: ok\n");
	return 0;
}
