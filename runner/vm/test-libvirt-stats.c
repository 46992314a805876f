// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The KVM stats among a libvirt domain's bulk stats (vm-libvirt-domain.c):
 * the cumulative ones ("vm.NAME.sum", "vcpu.N.NAME.sum") kept, the vCPUs'
 * summed by name, levels (.cur, .max), libvirt's own vCPU figures and
 * other groups left out, values above INT64_MAX clamped as query-stats'
 * are, an overflowing sum refused.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "qmp-commands.h"
#include "vm-libvirt-private.h"

static virTypedParameter ull(const char *field, unsigned long long v)
{
	virTypedParameter p = { .type = VIR_TYPED_PARAM_ULLONG, .value.ul = v };

	snprintf(p.field, sizeof(p.field), "%s", field);
	return p;
}

static int64_t get(const struct qmp_stat_set *s, const char *name)
{
	int64_t v = -1;

	CHECK_MSG(qmp_stat_set_get(s, name, &v) == 0, "no %s", name);
	return v;
}

int main(void)
{
	virTypedParameter p[] = {
		ull("state.state", 1),
		ull("vm.remote_tlb_flush.sum", 7),
		ull("vm.pages_4k.cur", 100),
		ull("vm.max_mmu_rmap_size.max", 3),
		ull("vm.huge.sum", UINT64_MAX),
		ull("vcpu.current", 2),
		ull("vcpu.0.time", 1000),
		ull("vcpu.0.exits.sum", 10),
		ull("vcpu.1.exits.sum", 32),
		ull("vcpu.1.pf_taken.sum", 5),
		ull("vcpu.x.exits.sum", 1000),
		ull("vcpu..exits.sum", 1000),
		ull("vm..sum", 1),
		ull("block.0.rd.reqs", 4),
	};
	virTypedParameter b = { .type = VIR_TYPED_PARAM_BOOLEAN, .value.b = 1 };
	virTypedParameter over[] = { ull("vcpu.0.exits.sum", INT64_MAX), ull("vcpu.1.exits.sum", 1) };
	struct qmp_stat_set vm = { 0 }, vcpu = { 0 };

	snprintf(b.field, sizeof(b.field), "vcpu.0.flag.sum");
	CHECK(lv_kvm_stats_from_params(p, (int)(sizeof(p) / sizeof(p[0])), &vm, &vcpu) == 0);
	CHECK(lv_kvm_stats_from_params(&b, 1, &vm, &vcpu) == 0);
	CHECK(vm.n == 2 && get(&vm, "remote_tlb_flush") == 7 && get(&vm, "huge") == INT64_MAX);
	CHECK(vcpu.n == 2 && get(&vcpu, "exits") == 42 && get(&vcpu, "pf_taken") == 5);
	qmp_stat_set_clear(&vm);
	qmp_stat_set_clear(&vcpu);
	CHECK(lv_kvm_stats_from_params(over, 2, &vm, &vcpu) == -ERANGE);
	qmp_stat_set_clear(&vm);
	qmp_stat_set_clear(&vcpu);
	printf("ok\n");
	return 0;
}
