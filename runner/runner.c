// SPDX-License-Identifier: GPL-2.0-or-later
/* The run engine: preflight, knobs, arms x repetitions, windows, report. */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf-source.h"
#include "clock.h"
#include "host.h"
#include "hostvm-rep.h"
#include "knobs.h"
#include "macro.h"
#include "mkdir-p.h"
#include "placement.h"
#include "preflight.h"
#include "qemu-binary.h"
#include "qmp.h"
#include "report.h"
#include "run-dir.h"
#include "run.h"
#include "scenario.h"
#include "vm.h"

static bool cancelled(const struct run *run)
{
	return run->opts->cancel && *run->opts->cancel;
}

/* every knob any arm sets */
static int all_knobs(const struct run_spec *spec, struct spec_knobs *all)
{
	for (size_t a = 0; a < spec->n_arms; a++) {
		struct spec_knobs k = {};
		if (spec_arm_knobs(spec, a, &k) < 0)
			return -ENOMEM;
		for (size_t i = 0; i < k.n; i++) {
			bool dup = false;
			for (size_t j = 0; j < all->n; j++)
				dup |= !strcmp(all->items[j].name, k.items[i].name);
			if (dup)
				continue;
			struct spec_knob *n = realloc(all->items, (all->n + 1) * sizeof(*n));
			if (!n) {
				spec_knobs_done(&k);
				return -ENOMEM;
			}
			all->items = n;
			n[all->n].name = strdup(k.items[i].name);
			n[all->n].value = strdup(k.items[i].value);
			all->n++;
		}
		spec_knobs_done(&k);
	}
	return 0;
}

/* Another run holds the host-wide knob lock: say so while we wait for it. */
static void knobs_waiting(const struct knobs_holder *holder, void *userdata)
{
	(void)holder;
	run_progress(userdata, "knobs", 0, NAN, NULL);
}

/* The run's id: opts->run_id, else the run directory's name when it has the shape of one, else a new one. */
static void pick_run_id(const struct runner_options *opts, char id[static REPORT_ID_MAX])
{
	const char *base = strrchr(opts->run_dir, '/');

	base = base && base[1] ? base + 1 : opts->run_dir;
	if (opts->run_id && report_id_valid(opts->run_id))
		snprintf(id, REPORT_ID_MAX, "%s", opts->run_id);
	else if (report_id_valid(base))
		snprintf(id, REPORT_ID_MAX, "%s", base);
	else
		report_new_id(realtime_ns(), id);
}

/* Where the knob journal and lock go: opts->state_dir, else the run directory's parent. */
static void pick_state_dir(const struct runner_options *opts, char *buf, size_t len)
{
	char *slash;

	if (opts->state_dir) {
		snprintf(buf, len, "%s", opts->state_dir);
		return;
	}
	snprintf(buf, len, "%s", opts->run_dir);
	slash = strrchr(buf, '/');
	if (slash && slash != buf)
		*slash = '\0';
	else if (slash)
		slash[1] = '\0';
	else
		snprintf(buf, len, ".");
}

/*
 * Where the guest runs (placement.h): recorded in the report, and when it
 * changes what runs (a kernel for "auto", host VMs because this host has no
 * KVM), the spec as run becomes a copy with that kernel.
 */
static int run_place(struct run *run, struct sb_error *err)
{
	struct report_placement *rp = &run->report->placement;
	struct placement *pl = &run->placement;
	int k;

	k = placement_decide(run->asked, run->opts->sysroot, pl, err);
	if (k < 0) {
		run_finish(run, REPORT_FAILED, "preflight", err ? err->msg : "no KVM");
		return k;
	}
	if (pl->kernel) {
		k = spec_copy(run->asked, &run->placed, err);
		if (k >= 0) {
			run->own_placed = true;
			k = spec_resolve_kernel(&run->placed, pl->kernel, pl->fell_back);
			if (k < 0)
				sb_error_set(err, k, "out of memory");
		}
		if (k < 0) {
			run_finish(run, REPORT_FAILED, "preflight", err ? err->msg : "out of memory");
			return k;
		}
	}
	run->spec = pl->kernel ? &run->placed : run->asked;
	rp->set = true;
	snprintf(rp->guest_accel, sizeof(rp->guest_accel), "%s", pl->accel);
	rp->host_vm = pl->host_vm;
	rp->fell_back = pl->fell_back;
	rp->reason = strdup(pl->reason);
	rp->kernel = pl->kernel ? strdup(pl->kernel) : NULL;
	rp->kernel_how = pl->kernel ? strdup(pl->kernel_how) : NULL;
	/* worth a line on the terminal when the guest does not run where one would expect it */
	if (pl->fell_back || !strcmp(pl->accel, "tcg"))
		run->progress.placement = rp->reason;
	return 0;
}

/* The report's host.qemu: what the probe found (q->path NULL: it found nothing), else the name asked for. */
static void record_qemu(struct report_host *h, const struct qemu_info *q, const char *asked)
{
	char v[64];

	if (!q->path) {
		h->qemu_binary = strdup(asked ? asked : QEMU_DEFAULT_BINARY);
		return;
	}
	snprintf(v, sizeof(v), "%d.%d.%d", q->major, q->minor, q->micro);
	h->qemu_binary = strdup(q->path);
	h->qemu_version = strdup(v);
	h->qemu_package = *q->package ? strdup(q->package) : NULL;
	h->qemu_features = qemu_feature_names(q);
}

/* The guest image the run boots: the options', or the one installed; an absolute path. */
static int run_guest_image(struct run *run, struct sb_error *err)
{
	const struct runner_options *opts = run->opts;
	int k = opts->guest_image ? ((run->guest_image = strdup(opts->guest_image)) ? 0 : -ENOMEM)
				  : runner_find_guest_image(&run->guest_image, err);

	if (k < 0) {
		run_finish(run, REPORT_FAILED, "preflight", err ? err->msg : "no guest image");
		return k;
	}
	if (run->guest_image[0] != '/') {
		/* a host VM's run engine sees this host's / but not our working directory */
		char *abs = realpath(run->guest_image, NULL);
		if (abs) {
			free(run->guest_image);
			run->guest_image = abs;
		}
	}
	return 0;
}

/* Kernel arms: their host VMs prepared (the run engine inside each runs its own preflight). */
static int run_prepare_host_vms(struct run *run, struct sb_error *err)
{
	int k = hostvm_run_prepare(run->spec, run->report, run->opts->run_dir, &run->hostvm, err);

	if (k < 0) {
		if (run->placement.fell_back)
			sb_error_prefix(err, "%s; but", run->placement.reason);
		run_finish(run, REPORT_FAILED, "preflight", err ? err->msg : "host VM preflight failed");
		return k;
	}
	/* every arm's host VM has the same accelerator (hostvm_run_prepare() chose it once) */
	if (run->report->n_arms && run->report->arms[0].kernel && run->report->arms[0].kernel->accel)
		snprintf(run->report->placement.host_vm_accel, sizeof(run->report->placement.host_vm_accel), "%s",
			 run->report->arms[0].kernel->accel);
	return 0;
}

/*
 * Where the guest runs, decided once (run_place()), and what follows from
 * it: the guest image; the preflight checks (for host VMs, this host's side
 * only; skipped: none); the kernel arms' host VMs prepared; the QEMU of the
 * report's host section, from preflight's probe or (skipped) one of its
 * own; and which kind of repetition the run runs. When they fail, so does
 * the run.
 */
static int run_preflight(struct run *run, struct sb_error *err)
{
	const struct runner_options *opts = run->opts;
	struct report_host *h = &run->report->host;
	struct qemu_info q = {};
	int k;

	run_progress(run, "preflight", 0, NAN, NULL);
	k = run_place(run, err);
	if (k < 0)
		return k;
	k = run_guest_image(run, err);
	if (k < 0)
		return k;
	struct preflight_input in = {
		.spec = run->spec,
		.run_dir = opts->run_dir,
		.scratch_dir = opts->scratch_dir,
		.qemu_binary = opts->qemu_binary,
		.guest_image = run->guest_image,
		.tcg = !strcmp(run->placement.accel, "tcg"),
		.host_vm = run->placement.host_vm,
		.refused = run->placement.refused,
		.refused_msg = run->placement.message,
	};
	struct sb_error e = {};
	k = opts->skip_preflight ? qemu_probe(opts->qemu_binary, &q, &e) : preflight_run(&in, &q, err);
	if (k < 0 && !opts->skip_preflight) {
		if (run->placement.host_vm)
			h->qemu_binary = strdup(opts->qemu_binary ? opts->qemu_binary : QEMU_DEFAULT_BINARY);
		else
			record_qemu(h, &q, opts->qemu_binary); /* a refused QEMU is named with its version too */
		qemu_info_done(&q);
		run_finish(run, REPORT_FAILED, "preflight", err ? err->msg : "preflight failed");
		return k;
	}
	if (k < 0) {
		q.path = NULL; /* skipped: the repetitions will say what is wrong */
		k = 0;
	}
	if (run->placement.host_vm)
		k = run_prepare_host_vms(run, err);
	if (k >= 0) {
		record_qemu(h, &q, opts->qemu_binary);
		/* the newer form where QEMU has it; a destination QEMU of its own (tests) keeps the uri */
		run->migrate_channels = q.path && q.has[QEMU_FEATURE_MIGRATE_CHANNELS] && !opts->dest_qemu_binary;
		run->run_with_user = q.path && q.has[QEMU_FEATURE_RUN_WITH_USER];
		run_choose_reps(run);
	}
	qemu_info_done(&q);
	return k < 0 ? k : 0;
}

/* The knobs every arm sets, journaled in state_dir under the host-wide lock (knobs.h). */
static int run_knobs_begin(struct run *run, const char *state_dir, const char *id, struct spec_knobs *all,
			   struct knobs_session **knobs, struct sb_error *err)
{
	const struct runner_options *opts = run->opts;
	int k;

	/* kernel arms apply their knobs inside their host VMs, not here */
	if (!run->hostvm && all_knobs(run->spec, all) < 0) {
		k = sb_error_set(err, -ENOMEM, "out of memory");
		run_finish(run, REPORT_FAILED, "knobs", err ? err->msg : "out of memory");
		return k;
	}
	struct knobs_options ko = {
		.root = opts->sysroot,
		.run_id = id,
		.wait_ms = opts->knobs_wait_ms < 0 ? 0 : opts->knobs_wait_ms ? opts->knobs_wait_ms : KNOBS_WAIT_DEFAULT_MS,
		.cancel = opts->cancel,
		.waiting = knobs_waiting,
		.userdata = run,
	};
	k = knobs_begin(state_dir, &ko, all, knobs, err);
	if (k == -ECANCELED) {
		run_finish(run, REPORT_CANCELLED, "cancel", "the run was cancelled while it waited for the host-wide knob lock");
		return k;
	}
	if (k < 0) {
		run_finish(run, REPORT_FAILED, "knobs", err ? err->msg : "knobs");
		return k;
	}
	return 0;
}

/* What went wrong in the repetitions: how many failed, and the first failure. */
struct run_failures {
	unsigned failed;
	char phase[64];
	char error[SB_ERROR_MAX];
};

/*
 * Arms x repetitions, interleaved, each with its arm's knobs set. Stops at
 * a cancel, at a failure the next repetitions would repeat, or at two
 * failures in a row. Returns -ECANCELED, the first failure's errno, or 0.
 */
static int run_repetitions(struct run *run, struct knobs_session *knobs, struct run_failures *f)
{
	const struct run_spec *spec = run->spec;
	unsigned consecutive = 0;
	int k, ret = 0;

	for (unsigned r = 0, index = 0; r < spec->repetitions; r++) {
		for (size_t a = 0; a < spec->n_arms; a++, index++) {
			struct spec_knobs ak = {};
			struct sb_error e = {};
			bool fatal = false;

			if (cancelled(run))
				return -ECANCELED;
			if ((!run->hostvm && spec_arm_knobs(spec, a, &ak) < 0) || knobs_set_arm(knobs, &ak, &e) < 0) {
				spec_knobs_done(&ak);
				snprintf(f->phase, sizeof(f->phase), "rep %u knobs", index);
				snprintf(f->error, sizeof(f->error), "%s", *e.msg ? e.msg : "out of memory");
				f->failed++;
				return e.code ? e.code : -ENOMEM;
			}
			spec_knobs_done(&ak);
			k = run->run_rep(run, index, a, &fatal, &e);
			run->reps_done++;
			run_write_report(run);
			if (k == -ECANCELED)
				return k;
			if (run->write_error)
				return run->write_error; /* run_end() says why */
			if (k < 0) {
				f->failed++;
				consecutive++;
				if (!*f->error) {
					snprintf(f->phase, sizeof(f->phase), "%s", run->report->reps[run->report->n_reps - 1]->error.phase);
					snprintf(f->error, sizeof(f->error), "%s", e.msg);
					ret = k;
				}
				if (fatal || consecutive >= 2) {
					char note[SB_ERROR_MAX];
					/* truncating a long message is fine; using the result keeps -Wformat-truncation quiet */
					if (snprintf(note, sizeof(note), "%s (the run stopped: %s)", f->error,
						     fatal ? "the next repetitions would fail the same way"
							   : "two repetitions in a row failed") < 0)
						note[0] = '\0';
					snprintf(f->error, sizeof(f->error), "%s", note);
					return ret;
				}
			} else {
				consecutive = 0;
			}
		}
	}
	return ret;
}

/* The run's state from how its repetitions went (ret: run_repetitions() or knobs_end()); the run's return value. */
static int run_end(struct run *run, int ret, const struct run_failures *f, unsigned total, struct sb_error *err)
{
	if (run->write_error) {
		run_finish(run, REPORT_FAILED, "report", run->write_msg);
		sb_error_set(err, run->write_error, "%s", run->write_msg);
		return run->write_error;
	}
	if (ret == -ECANCELED) {
		run_finish(run, REPORT_CANCELLED, "cancel", "the run was cancelled");
		sb_error_set(err, ret, "the run was cancelled in repetition %u of %u", run->reps_done ? run->reps_done : 1, total);
	} else if (ret < 0 || f->failed) {
		char msg[SB_ERROR_MAX];
		/* truncating a long message is fine; using the result keeps -Wformat-truncation quiet */
		if (snprintf(msg, sizeof(msg), "%u of %u repetitions failed; first: %s: %s", f->failed, total, f->phase,
			     f->error) < 0)
			msg[0] = '\0';
		run_finish(run, REPORT_FAILED, f->phase, msg);
		sb_error_set(err, ret < 0 ? ret : -EIO, "%s", msg);
		if (ret == 0)
			ret = -EIO;
	} else {
		run_finish(run, REPORT_COMPLETED, NULL, NULL);
	}
	return ret;
}

/* Creates the run directory and takes it (one run at a time in it); where the report goes. */
static int run_claim_dir(struct run *run, char *report_path, struct sb_error *err)
{
	const struct runner_options *opts = run->opts;
	int k = mkdir_p(opts->run_dir, 0755);

	if (k < 0)
		return sb_error_set(err, k, "run directory %s: cannot create it: %s; choose another (--output DIR)",
				    opts->run_dir, strerror(-k));
	run->run_dir = opts->run_dir;
	run->owner_fd = run_dir_own(opts->run_dir);
	if (run->owner_fd < 0)
		return sb_error_set(err, run->owner_fd, "run directory %s: %s", opts->run_dir,
				    run->owner_fd == -EBUSY ? "another process is executing a run there; choose another (--output DIR)"
							    : strerror(-run->owner_fd));
	run->start_ns = mono_ns();
	run->report_every_ms = opts->report_every_ms ? opts->report_every_ms : 5000;
	run->report_every_default = !opts->report_every_ms;
	run->write_gap_ns = (uint64_t)run->report_every_ms * NSEC_PER_MSEC;
	snprintf(run->report_path, sizeof(run->report_path), "%s/" RUN_DIR_REPORT, opts->run_dir);
	if (report_path)
		snprintf(report_path, PATH_MAX, "%s", run->report_path);
	return 0;
}

/* The run's plan in its progress: repetitions, and how long one takes (for the ETA). */
static unsigned run_plan(struct run *run)
{
	const struct run_spec *spec = run->asked; /* placement changes the kernel, not the plan */
	unsigned total = spec_total_repetitions(spec);

	run->progress.reps = total;
	run->progress.rates = RUN_RATES_NONE;
	run->progress.waiting_s = NAN;
	run->rep_planned_s = spec->timing.warmup_s + spec->timing.pre_s + spec->timing.post_s +
			     fmax(2.0, (double)spec->vm.memory / (256.0 * 1024 * 1024)) + 3 +
			     scenario_planned_s(scenario_find(spec->scenario), spec);
	return total;
}

/* A run that died with knobs set: they go back before anything else (-EBUSY: another run holds them). */
static int run_recover_knobs(struct run *run, const char *state_dir, struct sb_error *err)
{
	struct sb_error e = {};
	int k = knobs_recover(state_dir, run->opts->sysroot, &e);

	if (k < 0 && k != -EBUSY) {
		run_finish(run, REPORT_FAILED, "knobs", e.msg);
		return sb_error_set(err, k, "%s", e.msg);
	}
	return 0;
}

/* The repetitions with the knobs set, the knobs put back, and the run's end. */
static int run_measure(struct run *run, struct knobs_session *knobs, unsigned total, struct sb_error *err)
{
	struct run_failures f = {};
	struct sb_error e = {};
	int ret = run_repetitions(run, knobs, &f);
	int k = knobs_end(knobs, &e);

	if (k < 0 && ret == 0) {
		ret = k;
		snprintf(f.phase, sizeof(f.phase), "knobs");
		snprintf(f.error, sizeof(f.error), "%s", e.msg);
	}
	run_progress(run, "done", 0, NAN, NULL);
	return run_end(run, ret, &f, total, err);
}

/* The last report write (a run still running here failed), then everything the run held. */
static int run_release(struct run *run, int ret, struct sb_error *err)
{
	if (run->report) {
		struct sb_error e = {};
		if (run->report->state == REPORT_RUNNING)
			run_finish(run, REPORT_FAILED, "run", err && *err->msg ? err->msg : "internal error");
		if (run_write_report_accounted(run, &e) < 0 && ret == 0) {
			ret = e.code;
			if (err)
				*err = e;
		}
	}
	bpf_source_close(run->local.bpf);
	report_free(run->report);
	free(run->guest_image);
	close(run->owner_fd); /* after the last report write: the run is over */
	hostvm_run_free(run->hostvm);
	placement_done(&run->placement);
	if (run->own_placed)
		spec_done(&run->placed);
	return ret;
}

int runner_execute(const struct run_spec *spec, const struct runner_options *opts, char *report_path,
		   struct sb_error *err)
{
	struct runner_options with_qemu;
	struct run run = { .asked = spec, .opts = opts, .owner_fd = -1 };
	struct knobs_session *knobs = NULL;
	struct spec_knobs all = {};
	char id[REPORT_ID_MAX], state_dir[PATH_MAX];
	unsigned total;
	int k, ret = 0;

	if (!opts || !opts->run_dir || !*opts->run_dir)
		return sb_error_set(err, -EINVAL, "runner: no run directory given");
	k = spec_validate(spec, err);
	if (k < 0)
		return k;
	if (!opts->qemu_binary && spec->vm.qemu) {
		/* the spec's QEMU where the caller named none (--qemu wins) */
		with_qemu = *opts;
		with_qemu.qemu_binary = spec->vm.qemu;
		opts = run.opts = &with_qemu;
	}
	k = run_claim_dir(&run, report_path, err);
	if (k < 0)
		return k;

	pick_run_id(opts, id);
	ret = run_build_report(&run, id, err);
	if (ret < 0)
		goto out;
	total = run_plan(&run);
	run_write_report(&run);
	if (run.write_error) {
		ret = sb_error_set(err, run.write_error, "%s", run.write_msg);
		goto out;
	}

	pick_state_dir(opts, state_dir, sizeof(state_dir));
	ret = run_recover_knobs(&run, state_dir, err);
	if (ret >= 0)
		ret = run_preflight(&run, err);
	if (ret >= 0)
		ret = run_knobs_begin(&run, state_dir, id, &all, &knobs, err);
	if (ret < 0)
		goto out;
	ret = run_measure(&run, TAKE_PTR(knobs), total, err);

out:
	knobs_end(knobs, NULL);
	spec_knobs_done(&all);
	return run_release(&run, ret, err);
}
