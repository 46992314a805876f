// SPDX-License-Identifier: GPL-2.0-or-later
/* One repetition's phases, in their order, for both kinds of repetition (rep.h). */
#include "rep.h"

int rep_phases_run(const struct rep_phases *phases, void *rep, struct sb_error *err)
{
	for (;;) {
		enum rep_phase at = REP_PHASE_BOOT;
		int k = phases->prepare(rep, err);

		if (k < 0)
			return k;
		k = phases->boot(rep, err);
		if (k >= 0) {
			at = REP_PHASE_WINDOWS;
			k = phases->windows(rep, err);
		}
		if (k >= 0) {
			at = REP_PHASE_SUMMARIZE;
			k = phases->summarize(rep, err);
		}
		phases->teardown(rep, k, k < 0 ? at : REP_PHASE_NONE, err);
		if (k >= 0 || !phases->again || !phases->again(rep, k, err))
			return k;
	}
}
