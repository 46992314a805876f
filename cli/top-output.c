// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench top's refresh on stdout: a table (on a terminal, the screen
 * redrawn; elsewhere one after another) or one JSON object a line, with
 * the counters the host cannot count and, without a target, the VMs that
 * started or exited since the last one.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "exit-codes.h"
#include "json-util.h"
#include "macro.h"
#include "top.h"
#include "verb-args.h"

static void print_text(const struct top *t, double elapsed_s, bool tty, unsigned refresh)
{
	const struct top_args *a = t->a;
	const struct top_vm *first = NULL;
	int width = 40;
	size_t live = 0, shown = 0;
	char name[160];

	for (size_t i = 0; i < t->n_vms; i++) {
		const struct top_vm *v = &t->vms[i];

		if (v->gone)
			continue;
		if (!first)
			first = v;
		live++;
		for (size_t k = 0; k < v->nrows; k++) {
			int w = (int)(strlen(v->prefix) + strlen(v->rows[k].name));
			if (w > width)
				width = w;
		}
	}
	if (!first && !t->all)
		return;
	if (tty)
		fputs("\033[H\033[2J", stdout); /* home, clear */
	else if (refresh)
		printf("\n");
	if (!t->all)
		printf("snapbench top: pid %d (%s), %.1f s", (int)first->pid, sb_probes_target_comm(first->p), elapsed_s);
	else if (t->found > t->n_vms)
		printf("snapbench top: %zu VMs (of the %zu on this host: at most %d shown), %.1f s", live, t->found,
		       TOP_MAX_VMS, elapsed_s);
	else
		printf("snapbench top: %zu VM%s, %.1f s", live, live == 1 ? "" : "s", elapsed_s);
	if (a->filter)
		printf(", filter '%s'", a->filter);
	if (!t->all && first->kvm)
		printf(", KVM stats from %s", top_kvm_source(first->kvm));
	printf("\n");
	/* the host as scanned for this refresh: what left it and what joined since the last table */
	for (size_t i = 0; i < t->n_exited; i++)
		printf(" pid %d%s%s%s exited: its rows are gone\n", (int)t->exited[i].pid, t->exited[i].name[0] ? " (" : "",
		       t->exited[i].name, t->exited[i].name[0] ? ")" : "");
	for (size_t i = 0; i < t->n_added; i++)
		printf(" pid %d%s%s%s started: its rows count from now\n", (int)t->added[i].pid,
		       t->added[i].name[0] ? " (" : "", t->added[i].name, t->added[i].name[0] ? ")" : "");
	if (!first) {
		printf(" (no process on this host holds a KVM VM now: top takes the next that starts)\n");
		return;
	}
	printf(" %-*s %14s %7s %12s\n", width, "Event", "Total", "%Total", "CurAvg/s");
	for (size_t i = 0; i < t->n_vms; i++) {
		const struct top_vm *v = &t->vms[i];

		if (v->gone)
			continue;
		for (size_t k = 0; k < v->nrows; k++) {
			const struct row *r = &v->rows[k];
			char share[16] = "      -";

			snprintf(name, sizeof(name), "%s%s", v->prefix, r->name);
			if (r->share >= 0)
				snprintf(share, sizeof(share), "%6.1f%%", r->share * 100);
			printf(" %-*s %14llu %7s %12.0f\n", width, name, (unsigned long long)r->total, share, r->current);
			shown++;
		}
	}
	if (!shown)
		printf(" (no events%s)\n", a->filter ? " that match" : "");
	/* the probes are the host's: what one VM's cannot count, none's can */
	for (int c = 0; c < SB_C_MAX; c++) {
		const struct sb_counter_info *ci = sb_probes_counter(first->p, c);
		if (!ci->available && top_filter_takes(a, ci->name))
			printf(" %-*s unavailable: %s\n", width, ci->name, ci->probe ? ci->probe->reason : "no probe");
	}
	if (!t->all && !first->kvm && first->kvm_reason[0] && top_filter_takes(a, "kvm."))
		printf(" %-*s unavailable: %s\n", width, "kvm.*", first->kvm_reason);
}

/* v's rows, its unavailable counters and its KVM stats' source into o */
static int vm_json(const struct top_vm *v, const char *no_kvm_reason, struct json_object *o)
{
	struct json_object *arr = json_object_new_array(), *unavail = json_object_new_object();
	struct json_object *kvm = json_object_new_object();

	if (!arr || !unavail || !kvm) {
		json_object_put(arr);
		json_object_put(unavail);
		json_object_put(kvm);
		return -ENOMEM;
	}
	json_object_object_add(o, "rows", arr);
	json_object_object_add(o, "unavailable", unavail);
	json_object_object_add(o, "kvm", kvm);
	for (size_t i = 0; i < v->nrows; i++) {
		const struct row *row = &v->rows[i];
		struct json_object *r = json_object_new_object();

		json_object_object_add(r, "name", json_object_new_string(row->name));
		json_object_object_add(r, "group", json_object_new_string(row->group));
		json_object_object_add(r, "total", json_object_new_int64((int64_t)row->total));
		json_object_object_add(r, "share", row->share >= 0 ? json_object_new_double(row->share) : NULL);
		json_object_object_add(r, "current_per_s", json_object_new_double(row->current));
		if (row->value >= 0)
			json_object_object_add(r, "value", json_object_new_int64(row->value));
		json_object_array_add(arr, r);
	}
	for (int c = 0; c < SB_C_MAX; c++) {
		const struct sb_counter_info *ci = sb_probes_counter(v->p, c);
		if (!ci->available)
			json_object_object_add(unavail, ci->name,
					       json_object_new_string(ci->probe ? ci->probe->reason : "no probe"));
	}
	json_object_object_add(kvm, "source", v->kvm ? json_object_new_string(top_kvm_source(v->kvm)) : NULL);
	if (v->kvm)
		json_object_object_add(kvm, "reason", NULL);
	else
		json_object_object_add(kvm, "reason",
				       json_object_new_string(v->kvm_reason[0] ? v->kvm_reason : no_kvm_reason));
	return 0;
}

/* The VMs that left or joined since the last object, as name: [{"pid", "name"}] in o */
static int events_json(const struct top_event *ev, size_t n, const char *name, struct json_object *o)
{
	struct json_object *arr = json_object_new_array();

	if (!arr)
		return -ENOMEM;
	json_object_object_add(o, name, arr);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_new_object();

		if (!e || json_object_array_add(arr, e) < 0) {
			json_object_put(e);
			return -ENOMEM;
		}
		json_object_object_add(e, "pid", json_object_new_int((int)ev[i].pid));
		json_object_object_add(e, "name", ev[i].name[0] ? json_object_new_string(ev[i].name) : NULL);
	}
	return 0;
}

static int print_json(const struct top *t, double elapsed_s)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();
	struct json_object *vms = NULL;
	static const char *const none = "top without a target shows the probes' rows only: give --pid, --qmp or --vm";
	static const char *const off = "--no-qmp";

	if (!o)
		return -ENOMEM;
	if (!t->all) {
		const struct top_vm *v = &t->vms[0];

		json_object_object_add(o, "pid", json_object_new_int((int)v->pid));
		json_object_object_add(o, "t_s", json_object_new_double(elapsed_s));
		if (vm_json(v, off, o) < 0)
			return -ENOMEM;
	} else {
		vms = json_object_new_array();
		if (!vms)
			return -ENOMEM;
		json_object_object_add(o, "t_s", json_object_new_double(elapsed_s));
		json_object_object_add(o, "vms_found", json_object_new_int64((int64_t)t->found));
		json_object_object_add(o, "vms", vms);
		if (events_json(t->exited, t->n_exited, "exited", o) < 0 ||
		    events_json(t->added, t->n_added, "started", o) < 0)
			return -ENOMEM;
		for (size_t i = 0; i < t->n_vms; i++) {
			const struct top_vm *v = &t->vms[i];
			struct json_object *vo;

			if (v->gone)
				continue;
			vo = json_object_new_object();
			if (!vo || json_object_array_add(vms, vo) < 0) {
				json_object_put(vo);
				return -ENOMEM;
			}
			json_object_object_add(vo, "pid", json_object_new_int((int)v->pid));
			json_object_object_add(vo, "name", v->name[0] ? json_object_new_string(v->name) : NULL);
			json_object_object_add(vo, "comm", json_object_new_string(sb_probes_target_comm(v->p)));
			json_object_object_add(vo, "since_s", json_object_new_double(v->since_s));
			if (vm_json(v, none, vo) < 0)
				return -ENOMEM;
		}
	}
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	return 0;
}

int top_print_refresh(const struct top *t, double elapsed, bool tty, unsigned n)
{
	if (t->a->json) {
		if (print_json(t, elapsed) < 0) {
			verb_error("out of memory");
			return EXIT_FAIL;
		}
	} else {
		print_text(t, elapsed, tty, n);
	}
	fflush(stdout);
	return EXIT_OK;
}
