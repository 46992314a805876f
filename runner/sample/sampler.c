// SPDX-License-Identifier: GPL-2.0-or-later
/* The sampler: cumulative sources in, one timeline row of increases out. */
#include "sampler.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf-source.h"
#include "clock.h"
#include "drain.h"
#include "kvm-flavour.h"
#include "macro.h"
#include "qmp-commands.h"
#include "qmp.h"
#include "json-util.h"
#include "spec.h"
#include "strv.h"
#include "telemetry.h"
#include "vm.h"
#include "vmstat.h"

/* KVM stats every report should have; a kernel without one gets a named gap. */
static const char *const kvm_expected_vcpu[] = { "pf_taken", "pf_fixed", "pf_fast", "pf_spurious", "tlb_flush", "exits" };
static const char *const kvm_expected_vm[] = { "remote_tlb_flush", "remote_tlb_flush_requests" };

struct name_list {
	size_t n;
	char **names; /* NULL-terminated, for query-stats' name filter */
};

struct sampler {
	struct report *r;
	struct report_rep *rep;
	struct vm *vm;
	struct bpf_source *bpf;
	struct vmstat_source *vmstat; /* NULL: /proc/vmstat unreadable (its counters say why) */
	const struct run_spec *spec;
	uint64_t t0_ns;
	uint64_t last_ns;
	bool have_baseline;

	struct name_list kvm_vm, kvm_vcpu;
	bool kvm_ok;

	/* the previous take's cumulative value of each rep counter (by index) */
	uint64_t *prev;
	size_t n_prev;

	struct guest_decoder *dec;
	bool hello_seen, eof;
	bool vcpu_probes_set; /* guest.ops.vcpuN have their probes entries */
	struct guest_hello hello;
	struct guest_sample *latest;
	bool have_sample;
	uint64_t *hist_prev;
	uint64_t hist_latest_total;
	char guest_end[512];
	char telemetry_error[256];

	/* collected during a take */
	struct report_row *row;
	double dt;
	struct run_rates fig;
	bool collecting_baseline;
	size_t emit_next;  /* the counter after the last one emitted: most often the next (report_rep_counter_hint) */

	uint64_t busy_ns;
	uint64_t *cpu_ns; /* the run's CPU split (sampler_set_cpu_account), or NULL */
};

static void names_free(struct name_list *l)
{
	l->names = strv_free(l->names);
	l->n = 0;
}

static int names_add(struct name_list *l, const char *name)
{
	int r = strv_push(&l->names, name);

	if (r < 0)
		return r;
	l->n++;
	return 0;
}

static bool names_has(const struct name_list *l, const char *name)
{
	return strv_contains(l->names, name);
}

/* The cumulative KVM stats of each target, from query-stats-schemas. */
static int learn_kvm_schemas(struct sampler *s, struct sb_error *err)
{
	_cleanup_json_ struct json_object *ret = NULL;
	struct json_object *args = json_object_new_object();
	char source[160], counter[160];
	int r;

	if (!args)
		return sb_error_set(err, -ENOMEM, "out of memory");
	json_object_object_add(args, "provider", json_object_new_string("kvm"));
	r = qmp_execute(s->vm->qmp, "query-stats-schemas", args, -1, qmp_client_command_timeout(s->vm->qmp), &ret,
			err);
	json_object_put(args);
	if (r < 0)
		return r;
	for (size_t i = 0; i < json_object_array_length(ret); i++) {
		struct json_object *t = json_object_array_get_idx(ret, i), *target, *stats;
		if (!json_object_object_get_ex(t, "target", &target) || !json_object_object_get_ex(t, "stats", &stats))
			continue;
		bool vcpu = !strcmp(json_object_get_string(target), "vcpu");
		if (!vcpu && strcmp(json_object_get_string(target), "vm"))
			continue;
		for (size_t k = 0; k < json_object_array_length(stats); k++) {
			struct json_object *st = json_object_array_get_idx(stats, k), *name, *type;
			if (!json_object_object_get_ex(st, "name", &name) || !json_object_object_get_ex(st, "type", &type) ||
			    strcmp(json_object_get_string(type), "cumulative"))
				continue;
			const char *n = json_object_get_string(name);
			if (strlen(n) > 100 || strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(n))
				continue; /* not a name we can put in a report */
			r = names_add(vcpu ? &s->kvm_vcpu : &s->kvm_vm, n);
			if (r < 0)
				goto out;
			snprintf(counter, sizeof(counter), "kvm.%s", n);
			if (vcpu)
				snprintf(source, sizeof(source), "query-stats vcpu %s (summed over vCPUs)", n);
			else
				snprintf(source, sizeof(source), "query-stats vm %s", n);
			const char *cannot = kvm_flavour_cannot_count(kvm_flavour_host(), counter);
			r = report_set_probe(s->r, counter, !cannot, source, "qmp", cannot);
			if (r < 0)
				goto out;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(kvm_expected_vcpu); i++)
		if (!names_has(&s->kvm_vcpu, kvm_expected_vcpu[i])) {
			snprintf(counter, sizeof(counter), "kvm.%s", kvm_expected_vcpu[i]);
			r = report_set_probe(s->r, counter, false, NULL, NULL,
					     "this kernel's KVM does not export it (query-stats-schemas vcpu)");
			if (r < 0)
				goto out;
		}
	for (size_t i = 0; i < ARRAY_SIZE(kvm_expected_vm); i++)
		if (!names_has(&s->kvm_vm, kvm_expected_vm[i])) {
			snprintf(counter, sizeof(counter), "kvm.%s", kvm_expected_vm[i]);
			r = report_set_probe(s->r, counter, false, NULL, NULL,
					     "this kernel's KVM does not export it (query-stats-schemas vm)");
			if (r < 0)
				goto out;
		}
	s->kvm_ok = true;
	r = 0;
out:
	return r < 0 ? sb_error_set(err, r, "out of memory") : 0;
}

static int kvm_unavailable(struct report *r, const char *reason)
{
	char counter[64];
	int k = 0;

	for (size_t i = 0; i < ARRAY_SIZE(kvm_expected_vcpu) && k >= 0; i++) {
		snprintf(counter, sizeof(counter), "kvm.%s", kvm_expected_vcpu[i]);
		k = report_set_probe(r, counter, false, NULL, NULL, reason);
	}
	for (size_t i = 0; i < ARRAY_SIZE(kvm_expected_vm) && k >= 0; i++) {
		snprintf(counter, sizeof(counter), "kvm.%s", kvm_expected_vm[i]);
		k = report_set_probe(r, counter, false, NULL, NULL, reason);
	}
	return k;
}

int sampler_new(struct report *r, struct report_rep *rep, struct vm *vm, struct bpf_source *bpf,
		const struct run_spec *spec, uint64_t rep_start_ns, struct sampler **ret, struct sb_error *err)
{
	struct sampler *s = calloc(1, sizeof(*s));
	struct sb_error e = {};
	int k;

	if (!s)
		return sb_error_set(err, -ENOMEM, "out of memory");
	s->r = r;
	s->rep = rep;
	s->vm = vm;
	s->bpf = bpf;
	s->spec = spec;
	s->t0_ns = rep_start_ns;
	s->latest = calloc(1, sizeof(*s->latest));
	s->hist_prev = calloc(GUEST_HIST_BUCKETS, sizeof(*s->hist_prev));
	if (!s->latest || !s->hist_prev || guest_decoder_new(&s->dec) < 0) {
		sampler_free(s);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	if (vm->tcg)
		k = sb_error_set(&e, -ENODEV, "the guest runs under QEMU's TCG (vm.accel), not KVM");
	else
		k = learn_kvm_schemas(s, &e);
	if (k == -ENOMEM) {
		sampler_free(s);
		return sb_error_set(err, k, "out of memory");
	}
	if (k < 0) {
		char reason[SB_ERROR_MAX + 64];
		snprintf(reason, sizeof(reason), "QEMU gave no KVM statistics: %s", e.msg);
		if (kvm_unavailable(r, reason) < 0) {
			sampler_free(s);
			return sb_error_set(err, -ENOMEM, "out of memory");
		}
	}
	if (vmstat_source_open(NULL, r, &s->vmstat, err) < 0) {
		sampler_free(s);
		return -ENOMEM;
	}
	if (spec->guest.kind == SPEC_GUEST_LINUX)
		k = report_set_probe(r, "guest.ops", false, NULL, NULL,
				     "stress-ng in a Linux guest reports no operation counts while it runs");
	else
		k = report_set_probe(r, "guest.ops", true, "micro guest telemetry: worker operations", "guest", NULL);
	if (k >= 0)
		k = spec->guest.probe_vcpu >= 0
			    ? report_set_probe(r, "guest.probe_reads", true,
					       spec->guest.kind == SPEC_GUEST_LINUX ? "Linux guest probe telemetry (guest-file-read)"
										    : "micro guest telemetry: latency probe",
					       "guest", NULL)
			    : report_set_probe(r, "guest.probe_reads", false, NULL, NULL,
					       "the guest latency probe is off (spec.guest.probe.vcpu is null)");
	if (k < 0) {
		sampler_free(s);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	*ret = s;
	return 0;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	names_free(&s->kvm_vm);
	names_free(&s->kvm_vcpu);
	vmstat_source_free(s->vmstat);
	free(s->prev);
	guest_decoder_free(s->dec);
	free(s->latest);
	free(s->hist_prev);
	free(s);
}

/* Adds the calling thread's CPU since *mark to part c of the split, and moves *mark on. */
static void account(struct sampler *s, enum report_cpu c, uint64_t *mark)
{
	uint64_t now;

	if (!s->cpu_ns)
		return;
	now = thread_cpu_ns();
	s->cpu_ns[c] += now - *mark;
	*mark = now;
}

void sampler_set_cpu_account(struct sampler *s, uint64_t cpu_ns[static REPORT_CPU_MAX])
{
	s->cpu_ns = cpu_ns;
}

static void take_guest_record(struct sampler *s, const struct guest_record *rec)
{
	switch (rec->type) {
	case GUEST_RECORD_HELLO:
		s->hello = rec->hello;
		s->hello_seen = true;
		break;
	case GUEST_RECORD_SAMPLE:
		*s->latest = rec->sample;
		s->have_sample = true;
		break;
	case GUEST_RECORD_END:
		snprintf(s->guest_end, sizeof(s->guest_end), "the guest ended: %s",
			 guest_end_reason_to_string(rec->end.reason));
		break;
	case GUEST_RECORD_LOG:
		if (rec->log.level == GUEST_LOG_ERROR)
			snprintf(s->guest_end, sizeof(s->guest_end), "the guest reported: %.480s", rec->log.text);
		break;
	}
}

static void on_guest_record(void *userdata, const struct guest_record *rec)
{
	take_guest_record(userdata, rec);
}

static void on_telemetry_error(void *userdata, const struct sb_error *e)
{
	struct sampler *s = userdata;

	snprintf(s->telemetry_error, sizeof(s->telemetry_error), "%.250s", e->msg);
}

int sampler_pump(struct sampler *s, struct sb_error *err)
{
	char buf[16384];
	uint64_t mark = 0;

	while (!s->eof) {
		bool eof = false;
		size_t n = drain_take(s->vm->telemetry, buf, sizeof(buf), &eof);
		if (eof)
			s->eof = true;
		if (n == 0)
			break;
		/* the clock is a system call: read only when there is something to decode */
		if (!mark && s->cpu_ns)
			mark = thread_cpu_ns();
		guest_decoder_take(s->dec, buf, n, on_guest_record, on_telemetry_error, s);
	}
	if (mark)
		account(s, REPORT_CPU_TELEMETRY, &mark);
	(void)err;
	return s->eof ? -EPIPE : 0;
}

const struct guest_hello *sampler_hello(const struct sampler *s)
{
	return s->hello_seen ? &s->hello : NULL;
}

const char *sampler_guest_end(const struct sampler *s)
{
	return s->guest_end;
}

uint64_t sampler_telemetry_skipped(const struct sampler *s)
{
	return guest_decoder_skipped(s->dec);
}

uint64_t sampler_busy_ns(const struct sampler *s)
{
	return s->busy_ns;
}

static int set_hist_layout(struct sampler *s)
{
	_cleanup_free_ double *lo = malloc(GUEST_HIST_BUCKETS * sizeof(double));
	_cleanup_free_ double *wi = malloc(GUEST_HIST_BUCKETS * sizeof(double));

	if (!lo || !wi)
		return -ENOMEM;
	for (unsigned i = 0; i < GUEST_HIST_BUCKETS; i++) {
		lo[i] = guest_cycles_to_ns(&s->hello, (double)guest_hist_low(i));
		wi[i] = guest_cycles_to_ns(&s->hello, (double)(guest_hist_high(i) - guest_hist_low(i)));
	}
	return report_rep_set_hist_layout(s->rep, GUEST_HIST_BUCKETS, lo, wi);
}

int sampler_wait_hello(struct sampler *s, int timeout_ms, volatile const sig_atomic_t *cancel, struct sb_error *err)
{
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;
	char desc[768];
	int k;

	while (!s->hello_seen) {
		struct pollfd p = { .fd = drain_poll_fd(s->vm->telemetry), .events = POLLIN };
		int ms = ms_until(deadline);
		if (cancel && *cancel)
			return sb_error_set(err, -ECANCELED, "cancelled while the guest booted");
		if (ms == 0)
			return sb_error_set(err, -ETIMEDOUT,
					    "the micro guest sent no telemetry within %d s of QEMU's start (see %s)",
					    timeout_ms / 1000, s->vm->log_path);
		poll(&p, 1, ms < 100 ? ms : 100);
		k = sampler_pump(s, err);
		if (k == -EPIPE && !s->hello_seen) {
			usleep(100000);
			if (vm_exited(s->vm, desc, sizeof(desc)))
				return sb_error_set(err, -ECHILD, "QEMU exited before the guest came up: %s%s%s", desc,
						    *s->guest_end ? "; " : "", s->guest_end);
			return sb_error_set(err, -EPIPE, "the guest's telemetry stream closed before it said hello%s%s",
					    *s->guest_end ? ": " : "", s->guest_end);
		}
		if (k < 0 && k != -EPIPE)
			return k;
	}
	snprintf(desc, sizeof(desc), "%s", guest_clock_source_to_string(s->hello.clock_source));
	free(s->rep->guest_clock);
	s->rep->guest_clock = strdup(desc);
	s->rep->tsc_khz = (uint32_t)(s->hello.tsc_hz / 1000);
	if (!s->rep->guest_clock || set_hist_layout(s) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* ---- a take ---- */

/* One cumulative value: into the row as the increase since the previous take. */
static int emit(void *userdata, const char *name, uint64_t cumulative)
{
	struct sampler *s = userdata;
	int idx = report_rep_counter_hint(s->rep, name, s->emit_next);

	if (idx < 0)
		return idx;
	s->emit_next = (size_t)idx + 1;
	if ((size_t)idx >= s->n_prev) {
		size_t n = (size_t)idx + 16;
		uint64_t *p = realloc(s->prev, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		/* a counter first seen now counts from zero: every source is cumulative from its start */
		memset(p + s->n_prev, 0, (n - s->n_prev) * sizeof(*p));
		s->prev = p;
		s->n_prev = n;
	}
	uint64_t delta = cumulative >= s->prev[idx] ? cumulative - s->prev[idx] : 0;
	s->prev[idx] = cumulative;
	if (s->collecting_baseline)
		return 0;
	if (s->dt > 0) {
		double rate = (double)delta / s->dt;
		/* a counter this host cannot move shows as "-" in progress, not as a measured 0 */
		if (!strcmp(name, "kvm.pf_taken"))
			s->fig.pf_per_s = kvm_flavour_cannot_count(kvm_flavour_host(), name) ? NAN : rate;
		else if (!strcmp(name, "kvm.remote_tlb_flush"))
			s->fig.tlb_per_s = kvm_flavour_cannot_count(kvm_flavour_host(), name) ? NAN : rate;
		else if (!strcmp(name, "bpf.invalidations"))
			s->fig.invalidations_per_s = rate;
		else if (!strcmp(name, "guest.ops"))
			s->fig.guest_ops_per_s = rate;
	}
	return report_row_set_index(s->row, (size_t)idx, delta);
}

static int collect_kvm(struct sampler *s, struct sb_error *err)
{
	struct qmp_stat_set vmset = {};
	struct qmp_vcpu_stats vc = {};
	char name[160];
	int k = 0;

	if (!s->kvm_ok)
		return 0;
	if (s->kvm_vm.n && s->kvm_vcpu.n) {
		/* one round trip for both */
		k = qmp_query_stats_kvm(s->vm->qmp, (const char *const *)s->kvm_vm.names,
					(const char *const *)s->kvm_vcpu.names, &vmset, &vc, err);
		if (k < 0)
			return k;
	} else if (s->kvm_vm.n) {
		k = qmp_query_stats_vm(s->vm->qmp, (const char *const *)s->kvm_vm.names, &vmset, err);
		if (k < 0)
			return k;
	} else if (s->kvm_vcpu.n) {
		k = qmp_query_stats_vcpu(s->vm->qmp, (const char *const *)s->kvm_vcpu.names, &vc, err);
		if (k < 0)
			goto out;
	}
	for (size_t i = 0; i < vmset.n && k >= 0; i++) {
		snprintf(name, sizeof(name), "kvm.%s", vmset.stats[i].name);
		k = emit(s, name, vmset.stats[i].value < 0 ? 0 : (uint64_t)vmset.stats[i].value);
	}
	for (size_t i = 0; i < vc.sum.n && k >= 0; i++) {
		snprintf(name, sizeof(name), "kvm.%s", vc.sum.stats[i].name);
		k = emit(s, name, vc.sum.stats[i].value < 0 ? 0 : (uint64_t)vc.sum.stats[i].value);
	}
	if (k < 0)
		sb_error_set(err, k, "out of memory");
out:
	qmp_stat_set_clear(&vmset);
	qmp_vcpu_stats_clear(&vc);
	return k;
}

static int collect_guest(struct sampler *s)
{
	const struct guest_sample *g = s->latest;
	uint64_t ops = 0;
	char name[32];
	int k;

	if (!s->hello_seen)
		return 0;
	/* worker vCPUs only: the probe's vCPU counts reads, idle ones nothing */
	for (unsigned v = 0; v < s->hello.vcpus; v++) {
		int pat = s->hello.vcpu[v].pattern;
		if (pat == GUEST_PATTERN_PROBE || pat == GUEST_PATTERN_IDLE)
			continue;
		uint64_t o = s->have_sample && v < g->vcpus ? g->ops[v] : 0;
		ops += o;
		snprintf(name, sizeof(name), "guest.ops.vcpu%u", v);
		if (!s->vcpu_probes_set) {
			char source[96];

			snprintf(source, sizeof(source), "micro guest telemetry: operations of the worker on vCPU %u", v);
			k = report_set_probe(s->r, name, true, source, "guest", NULL);
			if (k < 0)
				return k;
		}
		k = emit(s, name, o);
		if (k < 0)
			return k;
	}
	s->vcpu_probes_set = true;
	if (s->spec->guest.kind != SPEC_GUEST_LINUX) {
		k = emit(s, "guest.ops", ops);
		if (k < 0)
			return k;
	}
	if (s->hello.probe_vcpu < 0)
		return 0;
	k = emit(s, "guest.probe_reads", s->have_sample ? g->probe_reads : 0);
	if (k < 0)
		return k;
	if (!s->have_sample)
		return 0;
	for (unsigned b = 0; b < GUEST_HIST_BUCKETS; b++) {
		uint64_t d = g->hist[b] >= s->hist_prev[b] ? g->hist[b] - s->hist_prev[b] : 0;
		s->hist_prev[b] = g->hist[b];
		if (d && !s->collecting_baseline) {
			k = report_row_add_hist(s->rep, s->row, b, d);
			if (k < 0)
				return k;
		}
	}
	return 0;
}

static int collect_all(struct sampler *s, struct sb_error *err)
{
	uint64_t mark = 0;
	int k;

	k = sampler_pump(s, err); /* accounts for itself */
	if (k < 0 && k != -EPIPE)
		return k;
	if (s->cpu_ns)
		mark = thread_cpu_ns();
	k = collect_kvm(s, err);
	account(s, REPORT_CPU_SAMPLE_KVM, &mark);
	if (k < 0)
		return k;
	if (s->bpf) {
		k = bpf_source_read(s->bpf, emit, s, err);
		account(s, REPORT_CPU_SAMPLE_BPF, &mark);
		if (k < 0)
			return k;
	}
	if (s->vmstat) {
		k = vmstat_source_read(s->vmstat, emit, s, err);
		account(s, REPORT_CPU_SAMPLE_HOST, &mark);
		if (k < 0)
			return k;
	}
	k = collect_guest(s);
	account(s, REPORT_CPU_TELEMETRY, &mark);
	if (k < 0)
		return sb_error_set(err, k, "out of memory");
	return 0;
}

int sampler_pause_vm(struct sampler *s, bool pause, struct sb_error *err)
{
	return qmp_execute(s->vm->qmp, pause ? "stop" : "cont", NULL, -1, qmp_client_command_timeout(s->vm->qmp), NULL,
			   err);
}

int sampler_baseline(struct sampler *s, struct sb_error *err)
{
	uint64_t t = mono_ns();
	bool paused;
	int k;

	/* paused, so that the sources that count one event (query-stats, BPF) start from the same one */
	paused = sampler_pause_vm(s, true, NULL) >= 0;
	s->collecting_baseline = true;
	s->dt = 0;
	k = collect_all(s, err);
	if (paused && sampler_pause_vm(s, false, k < 0 ? NULL : err) < 0 && k >= 0)
		k = sb_error_prefix(err, "resuming the guest after the baseline read");
	s->collecting_baseline = false;
	s->last_ns = mono_ns();
	s->have_baseline = k >= 0;
	s->busy_ns += s->last_ns - t;
	return k;
}

int sampler_take(struct sampler *s, enum report_window w, const struct report_migration *migration,
		 struct run_rates *fig, struct sb_error *err)
{
	uint64_t t = mono_ns();
	int k;

	if (!s->have_baseline)
		return sb_error_set(err, -EINVAL, "sampler: take before baseline");
	s->dt = (double)(t - s->last_ns) / 1e9;
	s->fig = RUN_RATES_NONE;
	k = report_rep_append_row(s->rep, (double)(t - s->t0_ns) / 1e9, s->dt, w, &s->row);
	if (k < 0)
		return sb_error_set(err, k, "out of memory");
	k = collect_all(s, err);
	if (k < 0) {
		/* the row stays: its counters are what could be read */
		s->last_ns = t;
		return k;
	}
	if (migration) {
		s->row->has_migration = true;
		s->row->migration = *migration;
	}
	s->last_ns = t;
	if (fig)
		*fig = s->fig;
	s->busy_ns += mono_ns() - t;
	return 0;
}
