// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The scenarios by spec.scenario, and their answers to the rest of the
 * engine: the one place outside the scenarios themselves (and the spec,
 * which names them) that knows which there are.
 */
#include "scenario.h"

static const struct scenario_ops *const scenarios[] = {
	[SPEC_SCENARIO_BACKGROUND_SNAPSHOT] = &scenario_background_snapshot,
	[SPEC_SCENARIO_DIRTY_LOG] = &scenario_dirty_log,
	[SPEC_SCENARIO_POSTCOPY_RESTORE] = &scenario_postcopy_restore,
	[SPEC_SCENARIO_NUMA_HINTING] = &scenario_numa_hinting,
	[SPEC_SCENARIO_UFFD_RESTORE] = &scenario_uffd_restore,
};

const struct scenario_ops *scenario_find(enum spec_scenario s)
{
	if ((unsigned)s >= sizeof(scenarios) / sizeof(scenarios[0]))
		return NULL;
	return scenarios[s];
}

double scenario_planned_s(const struct scenario_ops *ops, const struct run_spec *spec)
{
	return ops && ops->planned_s ? ops->planned_s(spec) : 0;
}

void scenario_vm_config(const struct scenario_ops *ops, const struct run_spec *spec, struct vm_config *cfg)
{
	if (ops && ops->vm_config)
		ops->vm_config(spec, cfg);
}

void scenario_guest_params(const struct scenario_ops *ops, const struct run_spec *spec, struct guest_params *p)
{
	if (ops && ops->guest_params)
		ops->guest_params(spec, p);
}

void scenario_host_needs(const struct scenario_ops *ops, const struct run_spec *spec, struct scenario_needs *n)
{
	*n = (struct scenario_needs){};
	if (ops && ops->host_needs)
		ops->host_needs(spec, n);
}
