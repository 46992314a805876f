// SPDX-License-Identifier: GPL-2.0-or-later
/* The in-memory run report: building it up as a run goes. */
#include "report.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "clock.h"
#include "macro.h"
#include "strv.h"

static const char *const state_names[] = {
	[REPORT_QUEUED] = "queued",
	[REPORT_RUNNING] = "running",
	[REPORT_COMPLETED] = "completed",
	[REPORT_FAILED] = "failed",
	[REPORT_CANCELLED] = "cancelled",
};

static const char *const window_names[] = {
	[REPORT_WINDOW_WARMUP] = "warmup",
	[REPORT_WINDOW_PRE] = "pre",
	[REPORT_WINDOW_SNAPSHOT] = "snapshot",
	[REPORT_WINDOW_POST] = "post",
	[REPORT_WINDOW_MIGRATION] = "migration",
	[REPORT_WINDOW_STEADY] = "steady",
	[REPORT_WINDOW_FAULT_IN] = "fault-in",
};

static const char *const rep_state_names[] = {
	[REPORT_REP_RUNNING] = "running",
	[REPORT_REP_COMPLETED] = "completed",
	[REPORT_REP_FAILED] = "failed",
	[REPORT_REP_CANCELLED] = "cancelled",
};

static const char *const snapshot_status_names[] = {
	[REPORT_SNAPSHOT_NOT_STARTED] = "not-started",
	[REPORT_SNAPSHOT_ACTIVE] = "active",
	[REPORT_SNAPSHOT_COMPLETED] = "completed",
	[REPORT_SNAPSHOT_FAILED] = "failed",
	[REPORT_SNAPSHOT_CANCELLED] = "cancelled",
};

const char *report_state_to_string(enum report_state s)
{
	return (unsigned)s < ARRAY_SIZE(state_names) ? state_names[s] : NULL;
}

int report_state_from_string(const char *s)
{
	for (size_t i = 0; s && i < ARRAY_SIZE(state_names); i++)
		if (!strcmp(s, state_names[i]))
			return (int)i;
	return -EINVAL;
}

int report_window_from_string(const char *s)
{
	for (size_t i = 0; s && i < ARRAY_SIZE(window_names); i++)
		if (window_names[i] && !strcmp(s, window_names[i]))
			return (int)i;
	return -EINVAL;
}

const char *report_window_to_string(enum report_window w)
{
	return (unsigned)w < ARRAY_SIZE(window_names) ? window_names[w] : NULL;
}

static const char *const cpu_names[REPORT_CPU_MAX] = {
	[REPORT_CPU_BPF_LOAD] = "bpf_load_s",
	[REPORT_CPU_SAMPLE_KVM] = "sample_kvm_s",
	[REPORT_CPU_SAMPLE_BPF] = "sample_bpf_s",
	[REPORT_CPU_SAMPLE_HOST] = "sample_host_s",
	[REPORT_CPU_TELEMETRY] = "telemetry_s",
	[REPORT_CPU_REPORT] = "report_s",
};

const char *report_cpu_to_string(enum report_cpu c)
{
	return (unsigned)c < ARRAY_SIZE(cpu_names) ? cpu_names[c] : NULL;
}

const char *report_rep_state_to_string(enum report_rep_state s)
{
	return (unsigned)s < ARRAY_SIZE(rep_state_names) ? rep_state_names[s] : NULL;
}

const char *report_snapshot_status_to_string(enum report_snapshot_status s)
{
	return (unsigned)s < ARRAY_SIZE(snapshot_status_names) ? snapshot_status_names[s] : NULL;
}

static bool scenario_migrates(const char *scenario)
{
	return scenario && (!strcmp(scenario, "dirty-log") || !strcmp(scenario, "postcopy-restore"));
}

const char *report_scenario_window(const char *scenario)
{
	if (scenario && !strcmp(scenario, "numa-hinting"))
		return "steady";
	if (scenario && !strcmp(scenario, "uffd-restore"))
		return "fault-in";
	return scenario_migrates(scenario) ? "migration" : "snapshot";
}

const char *report_scenario_window_title(const char *scenario)
{
	if (scenario && !strcmp(scenario, "numa-hinting"))
		return "while NUMA balancing scans the guest RAM";
	if (scenario && !strcmp(scenario, "uffd-restore"))
		return "during the userfaultfd restore's fault-in";
	if (!scenario_migrates(scenario))
		return "during the snapshot";
	/* dirty-log holds its migration in its passes; postcopy-restore's window is the switch-over and the pass */
	return !strcmp(scenario, "postcopy-restore") ? "during the postcopy migration" : "during the migration's passes";
}

const struct report_window_summary *report_window_summary(const char *window)
{
	static const struct report_window_summary table[] = {
		{ "snapshot", "snapshot_duration_s", NULL, NULL },
		{ "migration", "migration_duration_s", NULL, NULL },
		{ "steady", "steady_duration_s", "numa_kvm_flushes", "KVM flushes for NUMA hinting" }, /* seed 002 */
		{ "fault-in", "fault_in_duration_s", "restore_pf_taken", "restore pf_taken" },          /* seed 003 */
	};

	for (size_t i = 0; window && i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(window, table[i].window))
			return &table[i];
	return &table[0];
}

static int strdup_or_null(const char *s, char **ret)
{
	char *c = NULL;

	if (s) {
		c = strdup(s);
		if (!c)
			return -ENOMEM;
	}
	free(*ret);
	*ret = c;
	return 0;
}

int report_error_set(struct report_error *e, const char *phase, const char *message)
{
	int r;

	if (!message) {
		free(e->message);
		free(e->phase);
		e->message = e->phase = NULL;
		return 0;
	}
	r = strdup_or_null(message, &e->message);
	if (r < 0)
		return r;
	return strdup_or_null(phase ? phase : "run", &e->phase);
}

static void report_error_clear(struct report_error *e)
{
	report_error_set(e, NULL, NULL);
}

int report_new(const char *id, uint64_t created_ns, struct report **ret)
{
	struct report *r;

	if (!id || strlen(id) >= REPORT_ID_MAX)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	strcpy(r->id, id);
	r->state = REPORT_RUNNING;
	r->created_ns = created_ns;
	*ret = r;
	return 0;
}

void report_rows_text_free(struct report_rows_text *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->rows[i].text);
	free(t->rows);
	free(t);
}

static void rep_free(struct report_rep *rep)
{
	if (!rep)
		return;
	report_error_clear(&rep->error);
	strv_free(rep->argv);
	free(rep->vm_exit);
	free(rep->backend);
	free(rep->guest_kind);
	free(rep->libvirt_uri);
	free(rep->libvirt_domain);
	strv_free(rep->libvirt_taints);
	free(rep->guest_clock);
	free(rep->pattern);
	free(rep->snapshot.path);
	free(rep->snapshot.error);
	free(rep->migration.dest.exit);
	free(rep->migration.dest.log);
	free(rep->migration.error);
	free(rep->numa.error);
	free(rep->postcopy.dest.exit);
	free(rep->postcopy.dest.log);
	free(rep->postcopy.error);
	free(rep->uffd_restore.error);
	free(rep->uffd_restore.kvm_unavailable);
	free(rep->postcopy.probes_error);
	free(rep->host_vm_console);
	free(rep->host_vm_retried);
	strv_free(rep->host_vm_kernel_warnings);
	for (size_t i = 0; i < rep->n_counters; i++)
		free(rep->counters[i]);
	free(rep->counters);
	for (size_t i = 0; i < rep->n_rows; i++) {
		free(rep->rows[i].values);
		free(rep->rows[i].hist_bucket);
		free(rep->rows[i].hist_count);
	}
	free(rep->rows);
	report_rows_text_free(rep->rows_text);
	free(rep->hist.lower_ns);
	free(rep->hist.width_ns);
	free(rep);
}

void report_free(struct report *r)
{
	if (!r)
		return;
	report_error_clear(&r->error);
	json_object_put(r->spec);
	free(r->host.kernel_release);
	free(r->host.kernel_version);
	free(r->host.cmdline);
	free(r->host.cpu_model);
	free(r->host.hostname);
	free(r->host.qemu_binary);
	free(r->host.qemu_version);
	free(r->host.qemu_package);
	strv_free(r->host.qemu_features);
	free(r->snapbench_version);
	free(r->placement.reason);
	free(r->placement.kernel);
	free(r->placement.kernel_how);
	for (size_t i = 0; i < r->n_probes; i++) {
		free(r->probes[i].counter);
		free(r->probes[i].source);
		free(r->probes[i].backend);
		free(r->probes[i].reason);
		free(r->probes[i].partial);
	}
	free(r->probes);
	for (size_t i = 0; i < r->n_arms; i++) {
		free(r->arms[i].label);
		json_object_put(r->arms[i].knobs);
		report_kernel_free(r->arms[i].kernel);
	}
	free(r->arms);
	for (size_t i = 0; i < r->n_reps; i++)
		rep_free(r->reps[i]);
	free(r->reps);
	free(r);
}

void report_set_spec(struct report *r, struct json_object *spec)
{
	json_object_put(r->spec);
	r->spec = spec;
}

static struct report_probe *probe_lookup(const struct report *r, const char *counter)
{
	for (size_t i = 0; i < r->n_probes; i++)
		if (!strcmp(r->probes[i].counter, counter))
			return &r->probes[i];
	return NULL;
}

const struct report_probe *report_find_probe(const struct report *r, const char *counter)
{
	return probe_lookup(r, counter);
}

int report_set_probe(struct report *r, const char *counter, bool available, const char *source,
		     const char *backend, const char *reason)
{
	struct report_probe *p;
	int k;

	if (!counter || (!available && !reason) || (available && (!source || !backend)))
		return -EINVAL;
	p = probe_lookup(r, counter);
	if (!p) {
		struct report_probe *n = realloc(r->probes, (r->n_probes + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->probes = n;
		p = &r->probes[r->n_probes];
		memset(p, 0, sizeof(*p));
		p->counter = strdup(counter);
		if (!p->counter)
			return -ENOMEM;
		r->n_probes++;
	}
	p->available = available;
	k = strdup_or_null(source, &p->source);
	if (k >= 0)
		k = strdup_or_null(backend, &p->backend);
	if (k >= 0)
		k = strdup_or_null(available ? NULL : reason, &p->reason);
	return k;
}

int report_add_arm(struct report *r, const char *label, struct json_object *knobs, unsigned total)
{
	struct report_arm *n;
	char *l;

	l = label ? strdup(label) : NULL;
	if (!l) {
		json_object_put(knobs);
		return label ? -ENOMEM : -EINVAL;
	}
	n = realloc(r->arms, (r->n_arms + 1) * sizeof(*n));
	if (!n) {
		free(l);
		json_object_put(knobs);
		return -ENOMEM;
	}
	r->arms = n;
	r->arms[r->n_arms] = (struct report_arm){
		.label = l,
		.knobs = knobs ? knobs : json_object_new_object(),
		.total = total,
	};
	if (!r->arms[r->n_arms].knobs) {
		free(l);
		return -ENOMEM;
	}
	return (int)r->n_arms++;
}

void report_kernel_free(struct report_kernel *k)
{
	if (!k)
		return;
	kernel_id_done(&k->id);
	free(k->modules);
	free(k->cmdline);
	free(k->module_params);
	free(k->accel);
	free(k->accel_reason);
	free(k->booted);
	free(k);
}

int report_arm_set_kernel(struct report *r, size_t arm, struct report_kernel *k)
{
	if (arm >= r->n_arms) {
		report_kernel_free(k);
		return -EINVAL;
	}
	report_kernel_free(r->arms[arm].kernel);
	r->arms[arm].kernel = k;
	return 0;
}

int report_add_rep(struct report *r, size_t arm, uint64_t started_ns, struct report_rep **ret)
{
	struct report_rep **n, *rep;

	if (arm >= r->n_arms)
		return -EINVAL;
	rep = calloc(1, sizeof(*rep));
	if (!rep)
		return -ENOMEM;
	n = realloc(r->reps, (r->n_reps + 1) * sizeof(*n));
	if (!n) {
		free(rep);
		return -ENOMEM;
	}
	r->reps = n;
	rep->index = (unsigned)r->n_reps;
	rep->arm = arm;
	rep->state = REPORT_REP_RUNNING;
	rep->started_ns = started_ns;
	rep->host_vm_boot_s = -1;
	rep->host_vm_taint = -1;
	rep->pinned_pages = -1;
	rep->snapshot = (struct report_snapshot){
		.status = REPORT_SNAPSHOT_NOT_STARTED,
		.started_s = -1,
		.duration_s = -1,
		.bytes = -1,
		.pages = -1,
		.file_bytes = -1,
		.throttle_bytes = -1,
	};
	r->reps[r->n_reps++] = rep;
	*ret = rep;
	return 0;
}

int report_rep_counter(struct report_rep *rep, const char *name)
{
	char **n;

	for (size_t i = 0; i < rep->n_counters; i++)
		if (!strcmp(rep->counters[i], name))
			return (int)i;
	if (rep->n_counters >= 100000)
		return -E2BIG;
	n = realloc(rep->counters, (rep->n_counters + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	rep->counters = n;
	rep->counters[rep->n_counters] = strdup(name);
	if (!rep->counters[rep->n_counters])
		return -ENOMEM;
	return (int)rep->n_counters++;
}

int report_rep_counter_hint(struct report_rep *rep, const char *name, size_t hint)
{
	if (hint < rep->n_counters && !strcmp(rep->counters[hint], name))
		return (int)hint;
	return report_rep_counter(rep, name);
}

int report_rep_set_hist_layout(struct report_rep *rep, size_t n, const double *lower_ns, const double *width_ns)
{
	double *lo, *wi;

	for (size_t i = 0; i < rep->n_rows; i++)
		if (rep->rows[i].n_hist)
			return -EBUSY;
	if (n == 0 || n > 1u << 20)
		return -EINVAL;
	lo = malloc(n * sizeof(*lo));
	wi = malloc(n * sizeof(*wi));
	if (!lo || !wi) {
		free(lo);
		free(wi);
		return -ENOMEM;
	}
	memcpy(lo, lower_ns, n * sizeof(*lo));
	memcpy(wi, width_ns, n * sizeof(*wi));
	free(rep->hist.lower_ns);
	free(rep->hist.width_ns);
	rep->hist = (struct report_hist_layout){ .n = n, .lower_ns = lo, .width_ns = wi };
	return 0;
}

int report_rep_append_row(struct report_rep *rep, double t_s, double dt_s, enum report_window w,
			  struct report_row **ret)
{
	if ((unsigned)w >= _REPORT_WINDOW_MAX)
		return -EINVAL;
	if (rep->n_rows == rep->cap_rows) {
		size_t cap = rep->cap_rows ? rep->cap_rows * 2 : 64;
		struct report_row *n = realloc(rep->rows, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		rep->rows = n;
		rep->cap_rows = cap;
	}
	struct report_row *row = &rep->rows[rep->n_rows++];
	*row = (struct report_row){ .t_s = t_s, .dt_s = dt_s < 0 ? 0 : dt_s, .window = w };
	*ret = row;
	return 0;
}

int report_row_set_index(struct report_row *row, size_t index, uint64_t delta)
{
	if (index >= row->n_values) {
		uint64_t *n = realloc(row->values, (index + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + row->n_values, 0, (index + 1 - row->n_values) * sizeof(*n));
		row->values = n;
		row->n_values = index + 1;
	}
	row->values[index] = delta;
	return 0;
}

int report_row_set(struct report_rep *rep, struct report_row *row, const char *counter, uint64_t delta)
{
	int i = report_rep_counter(rep, counter);

	if (i < 0)
		return i;
	return report_row_set_index(row, (size_t)i, delta);
}

int report_row_add_hist(struct report_rep *rep, struct report_row *row, uint32_t bucket, uint64_t count)
{
	uint32_t *b;
	uint64_t *c;

	if (bucket >= rep->hist.n)
		return -ERANGE;
	if (count == 0)
		return 0;
	if (row->n_hist && row->hist_bucket[row->n_hist - 1] == bucket) {
		row->hist_count[row->n_hist - 1] += count;
		return 0;
	}
	if (row->n_hist && row->hist_bucket[row->n_hist - 1] > bucket)
		return -EINVAL;
	b = realloc(row->hist_bucket, (row->n_hist + 1) * sizeof(*b));
	if (!b)
		return -ENOMEM;
	row->hist_bucket = b;
	c = realloc(row->hist_count, (row->n_hist + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	row->hist_count = c;
	row->hist_bucket[row->n_hist] = bucket;
	row->hist_count[row->n_hist] = count;
	row->n_hist++;
	return 0;
}

uint64_t report_rep_counter_total(const struct report_rep *rep, size_t index, int w)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < rep->n_rows; i++) {
		const struct report_row *row = &rep->rows[i];
		if (w >= 0 && (int)row->window != w)
			continue;
		if (index < row->n_values)
			sum += row->values[index];
	}
	return sum;
}

void report_make_id(uint64_t realtime_ns, uint32_t random24, char buf[static REPORT_ID_MAX])
{
	time_t t = (time_t)(realtime_ns / 1000000000ULL);
	struct tm tm;

	size_t n;

	gmtime_r(&t, &tm);
	n = strftime(buf, REPORT_ID_MAX, "%Y%m%dT%H%M%SZ", &tm);
	snprintf(buf + n, REPORT_ID_MAX - n, "-%06x", random24 & 0xffffffu);
}

void report_new_id(uint64_t realtime_ns, char buf[static REPORT_ID_MAX])
{
	uint32_t rnd = 0;

	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = (uint32_t)mono_ns();
	report_make_id(realtime_ns, rnd, buf);
}

bool report_id_valid(const char *s)
{
	static const char shape[] = "ddddddddTddddddZ-xxxxxx";

	if (!s || strlen(s) != sizeof(shape) - 1)
		return false;
	for (size_t i = 0; shape[i]; i++) {
		char c = s[i];
		switch (shape[i]) {
		case 'd':
			if (c < '0' || c > '9')
				return false;
			break;
		case 'x':
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
				return false;
			break;
		default:
			if (c != shape[i])
				return false;
		}
	}
	return true;
}

void report_format_time(uint64_t realtime_ns, char buf[static 32])
{
	time_t t = (time_t)(realtime_ns / 1000000000ULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	if (!strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		buf[0] = '\0';
}

const char *report_taint_trouble(char letter)
{
	switch (letter) {
	case 'W': return "a kernel warning";
	case 'D': return "an oops";
	case 'B': return "a bad page";
	case 'L': return "a soft lockup";
	case 'M': return "a machine check";
	}
	return NULL;
}

const char *report_taint_flags(int64_t taint, char buf[REPORT_TAINT_FLAGS_LEN])
{
	/* include/linux/panic.h's TAINT_* bits, in order (kernel/panic.c's taint_flags) */
	static const char letters[] = "PFSRMBUDAWCIOELKXTN";
	size_t o = 0;

	for (unsigned bit = 0; bit < 64 && taint > 0; bit++)
		if ((uint64_t)taint & (1ULL << bit))
			buf[o++] = bit < sizeof(letters) - 1 ? letters[bit] : '?';
	buf[o] = '\0';
	return buf;
}
