// SPDX-License-Identifier: GPL-2.0-or-later
#include "status.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "clock.h"
#include "daemon.h"

void daemon_update_status(struct daemon *d, bool force)
{
	char buf[256];
	uint64_t now = mono_ns();

	if (!force && now - d->last_status_ns < NSEC_PER_SEC)
		return;
	if (d->stopping)
		snprintf(buf, sizeof(buf), "stopping%s%s", d->cur.active ? ": cancelling run " : "",
			 d->cur.active ? d->cur.id : "");
	else if (d->cur.active) {
		struct json_object *p = d->cur.progress, *rep, *reps, *step, *frac;
		if (p && json_object_object_get_ex(p, "rep", &rep) && json_object_object_get_ex(p, "reps", &reps) &&
		    json_object_object_get_ex(p, "step", &step) && json_object_object_get_ex(p, "fraction", &frac))
			snprintf(buf, sizeof(buf), "running %s: repetition %d/%d, %s, %.0f%%; %zu queued", d->cur.id,
				 json_object_get_int(rep) + 1, json_object_get_int(reps),
				 step ? json_object_get_string(step) : "-", frac ? 100 * json_object_get_double(frac) : 0.0,
				 d->queue.n);
		else
			snprintf(buf, sizeof(buf), "running %s; %zu queued", d->cur.id, d->queue.n);
	} else
		snprintf(buf, sizeof(buf), "idle; %zu queued", d->queue.n);
	if (!strcmp(buf, d->last_status))
		return;
	snprintf(d->last_status, sizeof(d->last_status), "%s", buf);
	d->last_status_ns = now;
	sd_notifyf(0, "STATUS=%s", buf);
}
