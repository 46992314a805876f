#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Kernel arms end to end: Debian 12's kernel booted as a host VM (docs/kernel-arms.md).

  hostvm.py e2e SNAPBENCH RUN_SCHEMA RUN_VALIDATOR WORKDIR
      Two arms on the cached Debian kernel, `npt` (kvm_amd.npt=1) and
      `shadow` (kvm_amd.npt=0), one repetition each, a 128 MiB guest. Checks:
      the run completes; the report is valid; both arms name the Debian
      release, the load-time parameter, the accelerator, and the build id
      of the vmlinux unpacked from the bzImage and booted through its PVH
      entry; each repetition
      has a boot time and at least 100 latency samples in the pre window,
      and in the snapshot window when it lasted 3 s or more (telemetry once
      a second); pf_taken is non-zero in the snapshot window and equals
      BPF's kvm:kvm_page_fault count over the repetition exactly; the npt arm
      changes SPTEs through the TDP MMU (kvmmmu:kvm_tdp_mmu_spte_changed) and
      the shadow arm does not, while it still installs SPTEs
      (kvmmmu:kvm_mmu_set_spte): its faults went through the shadow MMU;
      `snapbench compare` over the two arms runs and its header names the
      kernel of both sides; each repetition's host_vm.kernel_taint is the
      kernel's taint (a number), without W, D, B, L or M, and no kernel
      warnings. No QEMU is left behind.

  hostvm.py noboot SNAPBENCH RUN_SCHEMA RUN_VALIDATOR WORKDIR
      A host VM that cannot boot (rdinit= a missing file): the run fails
      fast, the repetition is failed with the reason and the console's last
      lines (the kernel's panic), and no QEMU is left behind.

  hostvm.py dirtylog SNAPBENCH RUN_SCHEMA RUN_VALIDATOR WORKDIR
      Seed 001's dirty-log scenario in a host VM (shadow arm, 2 vCPUs, a
      128 MiB guest storing at random over 32 MiB, migration held in its
      passes for 8 s, then cancelled): the run completes and its report is
      valid; KVM_CLEAR_DIRTY_LOG's time is measured through fentry/fexit on
      kvm.ko (calls > 0, their ns > 0, the latency histogram sums to the
      calls exactly), per pass and in the migration window's clear-log
      ns/pass; bpf.kvm_remote_flush (fentry) equals KVM's
      remote_tlb_flush_requests over the repetition exactly; pf_taken is
      non-zero during the passes (write-protect faults) and BPF's
      kvm:kvm_page_fault is at least pf_taken. The host VM's command line
      taints its kernel W (sysctl.kernel.tainted=512): the report's
      host_vm.kernel_taint has bit 512 and kernel_taint_flags a "W".

  hostvm.py numa SNAPBENCH RUN_SCHEMA RUN_VALIDATOR WORKDIR
      Seed 002's numa-hinting scenario in a 2-node host VM (examples/seed-002-numa.json
      at one repetition per arm, 12 s steady window): arm "unpinned" and arm
      "pinned" (its memfd guest RAM long-term pinned). Both: the run completes
      and its report is valid; the guest RAM is spread over both nodes and
      vCPU i sits on node i; in the steady window NUMA balancing's
      invalidations reached KVM (numa_invalidations > 0, none classified
      "other"), zapped SPTEs and made KVM flush remote TLBs (numa_kvm_flushes
      > 0, seed 002's figure, == the window's bpf.kvm_remote_flush.numa-hinting),
      vmstat numa_pte_updates > 0, and the pre window saw no KVM flush of that
      cause (the guest RAM is not scanned before the window). Pinned:
      vm.pinned_pages == the guest RAM's pages, and the hinting flushes still
      come (the stock kernel does not skip pinned pages: what the patch
      changes). Then the host VM's QEMU is killed in the steady window: the
      repetition fails saying so, and this host's kernel.numa_balancing and
      its knob journal are as before (the knobs were set inside the host VM).

  hostvm.py uffdrestore SNAPBENCH RUN_SCHEMA RUN_VALIDATOR WORKDIR
      Seed 003's uffd-restore scenario as a kernel arm on the stock kernel
      (Debian 12's backports 6.12 when cached, the kernel seed 003's patch
      is for; else the cached Debian kernel): one arm with a 512 KiB chunk
      (arms[].chunk) over 16 MiB, one repetition. The run completes and its
      report is valid; the fault-in window has the restore's figures from
      snapbench-uffd-restore's JSON, taken over from the host VM's report:
      32 handler requests and none only woken, 16 MiB placed, no page
      mismatched, KVM's pf_taken of the program's vCPU == its pf_fixed and
      at least one per page (a stock KVM prefetches nothing), pf_prefetched
      unavailable naming seed 003's patch, and the pass time > 0 (emulated:
      the report's timing says TCG). Bad input fails before a host VM boots,
      naming the input: a chunk that is not a power of 2, a region that is
      not a multiple of the chunk, a chunk on another scenario, and the
      knob module:kvm.tdp_mmu_prefetch_pages on this kernel without the
      parameter (its kvm module's modinfo lists none).

SNAPBENCH_TEST_KEEP=1 keeps WORKDIR (the runs, their consoles) when a test fails.
  hostvm.py killed SNAPBENCH RUN_SCHEMA RUN_VALIDATOR WORKDIR
      The host VM's QEMU is killed once the run engine inside has started:
      the repetition fails saying QEMU was killed, with the console's tail,
      and nothing is left running.

  hostvm.py silent SNAPBENCH RUN_SCHEMA RUN_VALIDATOR WORKDIR
      The host VM's QEMU is stopped (SIGSTOP) once the run engine inside has
      started, as a host VM whose kernel hangs looks from outside: after 60 s
      without a word from inside (it sends one every 5 s) it is killed, and
      the repetition completes on one fresh host VM; the report's
      host_vm.retried_after says the first went silent and in which step,
      the first one's directory is kept as hostvm-rep0.silent, and nothing is
      left running.

  hostvm.py badinput SNAPBENCH RUN_SCHEMA RUN_VALIDATOR WORKDIR
      Bad input fails before a host VM boots, with the input and the fix in
      the message: a file that is not a bzImage, a modules tree of another
      release, arms with and without a kernel, a riscv64 kernel (Debian's, from
      scripts/fetch-test-kernel --riscv64: its host VM cannot run the x86
      micro guest), and (on a CPU without svm or vmx) --host-vm-accel kvm.

The kernel comes from scripts/fetch-test-kernel (run by scripts/install-deps);
a missing one fails the test with that fix. WORKDIR must not be under /tmp,
/run, /var/tmp or /root, which the host VM covers with tmpfs (the build
directory is fine). Skips (77) only when the machine is not root or has no
qemu-system-x86_64.
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CACHE = os.environ.get("SNAPBENCH_KERNEL_CACHE", "/var/cache/snapbench/kernels")
RISCV64_CACHE = os.environ.get("SNAPBENCH_KERNEL_CACHE_RISCV64", "/var/cache/snapbench/kernels-riscv64")
# telemetry once a second: at the default 100 ms the guest's telemetry exits starve its
# BSP (and the probe on it) under TCG (docs/kernel-arms.md). The snapshot is not held back
# (--max-bandwidth): in the npt arm the inner guest sometimes resets in the middle of a
# background snapshot (nested NPT under TCG, docs/kernel-arms.md), more often the longer
# the snapshot lasts; an unthrottled 128 MiB snapshot into the null sink lasts about a second.
RUN_ARGS = ["--repetitions", "1", "--memory", "128M", "--sink", "null", "--vcpus", "2", "--warmup", "1", "--pre", "3",
            "--post", "3", "--telemetry-interval", "1000", "--host-vm-memory", "2G", "--host-vm-vcpus", "2", "-q"]
# The guest's latency probe must keep sampling through a window: at least this many
# samples a second of it (and MIN_WINDOW_SAMPLES). Not a rate target: under TCG the probe's
# rate follows the machine's load; seen 239 samples in a 10.5 s snapshot window on a quiet
# run, 93 in 15.8 s and 78 in 11.2 s on busy clean-clone CI runs.
MIN_SAMPLES_PER_S = 4
MIN_WINDOW_SAMPLES = 20
MIN_SAMPLED_WINDOW_S = 3.0


def skip(what):
    print("SKIP: this machine lacks %s" % what, file=sys.stderr)
    sys.exit(77)


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def find_kernel():
    images = sorted(glob.glob(os.path.join(CACHE, "*", "boot", "vmlinuz-*")))
    if not images:
        sys.exit("hostvm: no Debian kernel in %s; run scripts/install-deps (or scripts/fetch-test-kernel) as root"
                 % CACHE)
    image = images[-1]
    return image, os.path.basename(image)[len("vmlinuz-"):]


def qemu_pids(marker):
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if marker.encode() in f.read():
                    pids.append(int(d))
        except OSError:
            pass
    return pids


def no_leftovers(workdir):
    left = [p for p in qemu_pids(workdir) if p != os.getpid()]
    for p in left:
        os.kill(p, signal.SIGKILL)
    check(not left, "QEMU processes left behind: %s" % left)


def load_report(out):
    reports = glob.glob(os.path.join(out, "*", "report.json"))
    check(len(reports) == 1, "one report under %s, found %s" % (out, reports))
    with open(reports[0]) as f:
        return reports[0], json.load(f)


def validate(validator, schema, path):
    r = subprocess.run([sys.executable, validator, schema, path], capture_output=True, text=True)
    check(r.returncode == 0, "%s is not a valid run report: %s%s" % (path, r.stdout, r.stderr))


def window_sum(rep, window, counter):
    return sum(row["counters"].get(counter, 0) for row in rep["timeline"] if row["window"] == window)


def e2e(snapbench, schema, validator, workdir, image, release):
    out = os.path.join(workdir, "e2e")
    argv = [snapbench, "run", "--local", "--output", out, "--kernel", image,
            "--arm", "npt:module:kvm_amd.npt=1", "--arm", "shadow:module:kvm_amd.npt=0"] + RUN_ARGS + [
            # 256 MiB: a snapshot long enough for remote flushes that kick a vCPU (128 MiB saw 1 in 1.5 s)
            "--memory", "256M"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    path, rep = load_report(out)
    check(r.returncode == 0, "the run failed (exit %d): %s %s; report error: %s"
          % (r.returncode, r.stdout[-2000:], r.stderr[-2000:], rep.get("error")))
    validate(validator, schema, path)
    check(rep["state"] == "completed", "run state %s" % rep["state"])
    arms = {a["label"]: a for a in rep["arms"]}
    for label, npt in (("npt", "1"), ("shadow", "0")):
        k = arms[label].get("kernel")
        check(k and k["release"] == release, "arm %s names kernel %s, want %s" % (label, k and k["release"], release))
        check("Debian" in k["version"], "arm %s: version string %r" % (label, k["version"]))
        check(k["module_params"] == "kvm_amd.npt=" + npt, "arm %s: module_params %r" % (label, k["module_params"]))
        check(k["host_vm"]["accel"] in ("tcg", "kvm") and k["host_vm"]["accel_reason"], "arm %s: accel" % label)
        check(k["config_sha256"] and len(k["config_sha256"]) == 64, "arm %s: no config hash" % label)
        # Debian's bzImage carries a PVH-capable vmlinux: unpacked and booted directly, with its build id
        check(k["host_vm"]["booted"] == "pvh", "arm %s: booted %s" % (label, k["host_vm"]["booted"]))
        check(k["build_id"] and len(k["build_id"]) == 40, "arm %s: build id %r" % (label, k["build_id"]))
    reps = {x["arm"]: x for x in rep["repetitions"]}
    check([x["arm"] for x in rep["repetitions"]] == ["npt", "shadow"], "arms interleaved npt, shadow")
    for label, x in reps.items():
        check(x["state"] == "completed", "rep of %s: %s %s" % (label, x["state"], x["error"]))
        boot = x["host_vm"]["boot_s"]
        check(boot is not None and 0 < boot < 120, "rep of %s: boot_s %r" % (label, boot))
        # the init sends the kernel's taint once the run ended: a kernel that warned would say "W"
        hv = x["host_vm"]
        check(isinstance(hv["kernel_taint"], int) and hv["kernel_taint"] >= 0,
              "rep of %s: kernel_taint %r" % (label, hv["kernel_taint"]))
        check(not set(hv["kernel_taint_flags"]) & set("WDBLM") and hv["kernel_warnings"] == [],
              "rep of %s: the host VM's kernel went wrong: taint %d %r, %s"
              % (label, hv["kernel_taint"], hv["kernel_taint_flags"], hv["kernel_warnings"]))
        pf_snap = window_sum(x, "snapshot", "kvm.pf_taken")
        check(pf_snap > 0, "rep of %s: pf_taken is 0 in the snapshot window" % label)
        # not post: right after the snapshot the shadow arm's probe was seen starved (1-2 samples in 3 s)
        # the snapshot window only when it spans telemetry records: one record a second, and a
        # snapshot shorter than that may hold none (seen once: 0 samples)
        for w in ("pre", "snapshot"):
            n = x["windows"][w]["metrics"].get("latency_samples") or 0
            d = x["windows"][w]["duration_s"]
            if w == "pre" or d >= MIN_SAMPLED_WINDOW_S:
                want = max(MIN_WINDOW_SAMPLES, int(MIN_SAMPLES_PER_S * d))
                check(n >= want, "rep of %s: %d latency samples in the %s window of %.1f s (at least %d)"
                      % (label, n, w, d, want))
        pf, bpf = x["totals"]["kvm.pf_taken"], x["totals"]["bpf.page_fault"]
        check(pf == bpf, "rep of %s: pf_taken %d != BPF kvm:kvm_page_fault %d" % (label, pf, bpf))
        # kvm_exit by reason: read in the same snapshot as kvm_exit, so the reasons sum to it exactly
        reasons = {k[len("bpf.kvm_exit_reason."):]: v for k, v in x["totals"].items()
                   if k.startswith("bpf.kvm_exit_reason.")}
        check(sum(reasons.values()) == x["totals"]["bpf.kvm_exit"] > 0,
              "rep of %s: exit reasons %s do not sum to kvm_exit %d" % (label, reasons, x["totals"]["bpf.kvm_exit"]))
        check("unknown" not in reasons, "rep of %s: exits of an unread reason: %s" % (label, reasons))
        for k in reasons:
            pr = rep["probes"].get("bpf.kvm_exit_reason." + k)
            check(pr and pr["available"] and "exit reason " + k in pr["source"],
                  "rep of %s: bpf.kvm_exit_reason.%s has no probes entry naming it: %s" % (label, k, pr))
        # the guest's faults exit as NPT faults (npt) or as #PF intercepts (shadow paging)
        fault_reason = "npf" if label == "npt" else "pf_excp"
        # each fault KVM counts in pf_taken came in as one such exit (MMIO faults exit without being counted)
        check(reasons.get(fault_reason, 0) >= pf > 0, "rep of %s: %s exits %d < pf_taken %d"
              % (label, fault_reason, reasons.get(fault_reason, 0), pf))
        print("%s: kvm_exit %d by reason: %s" % (label, x["totals"]["bpf.kvm_exit"],
              ", ".join("%s %d" % kv for kv in sorted(reasons.items(), key=lambda kv: -kv[1]))))
        print("%s: boot %.1f s, pf_taken %d (snapshot window %d) == bpf %d, tdp_spte_changed %d, set_spte %d, "
              "snapshot window %.1f s, latency samples pre/snapshot/post %s"
              % (label, boot, pf, pf_snap, bpf, x["totals"]["bpf.tdp_spte_changed"], x["totals"]["bpf.set_spte"],
                 x["windows"]["snapshot"]["duration_s"],
                 "/".join(str(x["windows"][w]["metrics"].get("latency_samples")) for w in ("pre", "snapshot", "post"))))
    # tlb/s: remote_tlb_flush counts the flushes that had to kick a vCPU out of guest mode (2 vCPUs here)
    flushes = {label: window_sum(x, "snapshot", "kvm.remote_tlb_flush") for label, x in reps.items()}
    print("remote_tlb_flush in the snapshot window: %s; tlb/s %s" % (
        flushes, {label: x["windows"]["snapshot"]["metrics"].get("tlb_per_s") for label, x in reps.items()}))
    check(sum(flushes.values()) > 0, "no remote TLB flush in either arm's snapshot window: %s" % flushes)
    check(reps["npt"]["totals"]["bpf.tdp_spte_changed"] > 0, "npt arm: no TDP MMU SPTE changes")
    check(reps["shadow"]["totals"]["bpf.tdp_spte_changed"] == 0, "shadow arm: TDP MMU SPTE changes with npt=0")
    check(reps["shadow"]["totals"]["bpf.set_spte"] > 0, "shadow arm: no SPTEs set through the shadow MMU")

    r = subprocess.run([snapbench, "compare", path], capture_output=True, text=True, timeout=120)
    check(r.returncode in (0, 3), "compare exit %d: %s" % (r.returncode, r.stderr))
    header = [l for l in r.stdout.splitlines() if l.startswith("Kernel: ")]
    check(header == ["Kernel: %s (host VM) vs %s (host VM)" % (release, release)], "compare header: %s" % header)
    print(r.stdout.splitlines()[0])
    print(header[0])
    r = subprocess.run([snapbench, "compare", "--json", path], capture_output=True, text=True, timeout=120)
    doc = json.loads(r.stdout)
    for side in ("baseline", "patched"):
        rel = [x for x in doc["inputs"][side]["reports"]]
        check(all(x["kernel_release"] == release and x.get("host_vm") is True for x in rel),
              "compare --json %s reports: %s" % (side, rel))
    check(not glob.glob(os.path.join(out, "*", "hostvm-vmlinux-*")), "the unpacked kernels were left behind")
    no_leftovers(workdir)


def run_spec_completed(snapbench, schema, validator, workdir, out, name, spec):
    """Runs spec (one repetition) into out; the report must be valid and completed: (report, repetition)."""
    spec_path = os.path.join(workdir, name + ".json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    r = subprocess.run([snapbench, "run", "--local", "--output", out, "--spec", spec_path, "-q"],
                       capture_output=True, text=True, timeout=900)
    path, rep = load_report(out)
    x = rep["repetitions"][0]
    check(r.returncode == 0, "the run failed (exit %d): %s %s; repetition error: %s"
          % (r.returncode, r.stdout[-2000:], r.stderr[-2000:], x.get("error")))
    validate(validator, schema, path)
    check(rep["state"] == "completed" and x["state"] == "completed", "run %s, repetition %s" % (rep["state"], x["state"]))
    return rep, x


def dirtylog(snapbench, schema, validator, workdir, image, release):
    out = os.path.join(workdir, "dirtylog")
    spec = {
        "description": "seed 001's dirty-log scenario in a host VM",
        "scenario": "dirty-log",
        "repetitions": 1,
        "vm": {"memory": "128M", "vcpus": 2},
        "guest": {"kind": "micro", "pattern": "rand-set", "region": "16M", "telemetry_interval_ms": 1000},
        # 8M/s (2,048 pages/s) is well under what the guest dirties in the shadow arm (about 3,800
        # pages/s seen in the passes); at 16M the two were close and a loaded host let one run converge
        # after 7.8 s. Converging now needs a pass in which the guest dirties at most two pages; the
        # 16M region keeps a pass of the whole dirty set near 2 s, so several end within iterate_s.
        "dirty_log": {"tracking": "bitmap", "iterate_s": 8, "max_bandwidth": "8M", "downtime_limit_ms": 1,
                      "completion": "cancel"},
        "timing": {"warmup_s": 1, "pre_s": 2, "post_s": 2, "interval_ms": 500},
        # taint W (512) from the command line: the kernel's taint reaches the report as a warning would
        "host_vm": {"kernel": image, "memory": "2G", "vcpus": 2, "cmdline": "sysctl.kernel.tainted=512"},
        # the shadow MMU: the npt arm no longer resets (8 of 8 on QEMU 7.2 and 10.0 with the
        # host VM's TCG single-threaded), but there some of KVM's remote flushes (17 of 24 in one
        # run) come from a path the cause classifier does not know yet ("other"; docs/kernel-arms.md)
        "arms": [{"label": "shadow", "knobs": {"module:kvm_amd.npt": "0"}}],
    }
    rep, x = run_spec_completed(snapbench, schema, validator, workdir, out, "dirty-log", spec)
    hv = x["host_vm"]
    check(isinstance(hv["kernel_taint"], int) and hv["kernel_taint"] & 512 and "W" in hv["kernel_taint_flags"],
          "host VM tainted W on its command line: the report says taint %r %r" % (hv["kernel_taint"],
                                                                                hv["kernel_taint_flags"]))
    t = x["totals"]
    calls, ns = t["bpf.clear_dirty_log"], t["bpf.clear_dirty_log_ns"]
    hist = sum(v for k, v in t.items() if k.startswith("bpf.clear_dirty_log_hist."))
    check(calls > 0 and ns > 0, "KVM_CLEAR_DIRTY_LOG not timed: %d calls, %d ns" % (calls, ns))
    check(hist == calls, "clear-log histogram holds %d calls, the counter %d" % (hist, calls))
    req, fentry = t["kvm.remote_tlb_flush_requests"], t["bpf.kvm_remote_flush"]
    check(req == fentry, "remote_tlb_flush_requests %d != bpf.kvm_remote_flush %d" % (req, fentry))
    # the flushes KVM_CLEAR_DIRTY_LOG makes are classified dirty-log (the ioctl in progress), none left "other"
    causes = {k[len("bpf.kvm_remote_flush."):]: v for k, v in t.items()
              if k.startswith("bpf.kvm_remote_flush.") and v}
    dl_mig = window_sum(x, "migration", "bpf.kvm_remote_flush.dirty-log")
    check(dl_mig > 0, "no remote flush of cause dirty-log during the passes: %s" % causes)
    check(sum(causes.values()) == fentry and "other" not in causes,
          "remote flushes by cause %s (of %d): some unclassified" % (causes, fentry))
    pf, bpf = t["kvm.pf_taken"], t["bpf.page_fault"]
    pf_mig = window_sum(x, "migration", "kvm.pf_taken")
    check(pf_mig > 0, "pf_taken is 0 during the migration's passes")
    check(bpf >= pf, "BPF kvm:kvm_page_fault %d < pf_taken %d" % (bpf, pf))
    passes = x["migration"]["iterations"]
    m = x["windows"]["migration"]["metrics"]
    check(m.get("clear_log_ns_per_iteration"), "no clear-log ns/pass: %s"
          % x["windows"]["migration"].get("unavailable"))
    per_pass = [p["counters"].get("bpf.clear_dirty_log_ns", 0) for p in passes]
    print("shadow: %d passes, clear-log %d calls %.1f ms in all (%.2f ms/pass in the window), per pass ms %s; remote "
          "flush requests %d == fentry %d (flushes %d); pf_taken %d (passes %d), kvm_page_fault %d"
          % (len(passes), calls, ns / 1e6, m["clear_log_ns_per_iteration"] / 1e6,
             ", ".join("%.1f" % (v / 1e6) for v in per_pass), req, fentry, t["kvm.remote_tlb_flush"], pf, pf_mig, bpf))
    print("shadow: remote flushes by cause %s (dirty-log %d in the migration window)" % (causes, dl_mig))
    no_leftovers(workdir)


def postcopy(snapbench, schema, validator, workdir, image, release):
    """Seed 003's postcopy-restore in a host VM: the destination's demand faults on real KVM code."""
    out = os.path.join(workdir, "postcopy")
    spec = {
        "description": "seed 003's postcopy restore in a host VM",
        "scenario": "postcopy-restore",
        "repetitions": 1,
        "vm": {"memory": "128M", "vcpus": 1},
        "guest": {"kind": "micro", "pattern": "fault-linear", "region": "32M", "probe": {"vcpu": None},
                  "telemetry_interval_ms": 1000},
        # the background push throttled, so the pass outruns it and faults pages in on demand
        "postcopy": {"access": "read", "preempt": False, "timeout_s": 240, "background_bandwidth": "8M"},
        "timing": {"warmup_s": 1, "pre_s": 2, "post_s": 2, "interval_ms": 500},
        "host_vm": {"kernel": image, "memory": "2G", "vcpus": 2},
        "arms": [{"label": "npt", "knobs": {"module:kvm_amd.npt": "1"}}],
    }
    rep, x = run_spec_completed(snapbench, schema, validator, workdir, out, "postcopy", spec)
    pc = x["postcopy"]
    region_pages = 32 << 20 >> 12
    check(pc["pass"]["pages"] == region_pages, "the pass touched %s pages, want %d" % (pc["pass"]["pages"], region_pages))
    check(pc["pass"]["mismatches"] == 0, "%d pages lost in the migration" % pc["pass"]["mismatches"])
    check(pc["pass"]["ms"] > 0 and pc["postcopy_requests"] > 0,
          "pass %s ms, %s postcopy requests" % (pc["pass"]["ms"], pc["postcopy_requests"]))
    # the BPF probes followed the destination from the switch-over: its demand faults are real KVM page
    # faults here, each installing SPTEs (query-stats' kvm.pf_taken in the window is the source's)
    check(pc["probes_on_destination"], "the probes were not pointed at the destination: %s" % pc.get("probes_error"))
    bpf = window_sum(x, "migration", "bpf.page_fault")
    spte = window_sum(x, "migration", "bpf.set_spte")
    check(bpf > 0 and spte > 0, "the destination's faults were not counted: kvm_page_fault %d, set_spte %d"
          % (bpf, spte))
    # the destination's own KVM stats over the pass: a demand fault per page not yet pushed, at least
    dpf = pc.get("dest_pf_taken")
    check(dpf is not None and 0 < dpf <= bpf, "the destination's pf_taken over the pass %s (kvm_page_fault %d in "
          "the window)" % (dpf, bpf))
    print("npt: pass %.1f ms over %d pages, %d postcopy requests, chunk %d B, destination pf_taken %d over the pass; "
          "migration window (destination) kvm_page_fault %d, set_spte %d, tdp_spte_changed %d"
          % (pc["pass"]["ms"], pc["pass"]["pages"], pc["postcopy_requests"], pc["chunk_bytes"], dpf, bpf, spte,
             window_sum(x, "migration", "bpf.tdp_spte_changed")))
    no_leftovers(workdir)


def numa_spec(image, steady_s):
    """examples/seed-002-numa.json, one repetition per arm, on the cached kernel."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                           "seed-002-numa.json")) as f:
        spec = json.load(f)
    spec["repetitions"] = 1
    spec["numa_hinting"]["steady_s"] = steady_s
    spec["timing"]["pre_s"] = 4
    spec["timing"]["post_s"] = 3
    spec["host_vm"]["kernel"] = image
    return spec


def read_sysctl(name):
    with open("/proc/sys/" + name.replace(".", "/")) as f:
        return f.read().strip()


def numa(snapbench, schema, validator, workdir, image, release):
    """Seed 002 in a 2-node host VM: NUMA balancing's invalidations of pinned and unpinned guest RAM."""
    out = os.path.join(workdir, "numa")
    before = read_sysctl("kernel.numa_balancing")
    spec = numa_spec(image, 12)
    path = os.path.join(workdir, "numa.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    r = subprocess.run([snapbench, "run", "--local", "--output", out, "--spec", path, "-q"],
                       capture_output=True, text=True, timeout=900)
    rpath, rep = load_report(out)
    check(r.returncode == 0, "the run failed (exit %d): %s; errors: %s"
          % (r.returncode, r.stderr[-2000:], [x.get("error") for x in rep["repetitions"]]))
    validate(validator, schema, rpath)
    pages = 128 * 1024 * 1024 // 4096
    for x in rep["repetitions"]:
        label = x["arm"]
        check(x["state"] == "completed", "%s: repetition %s" % (label, x["state"]))
        n = x["numa"]
        check(n["nodes"] == 2 and n["vcpu_nodes"] == [0, 1], "%s: placement %s" % (label, n))
        start = n["guest_pages_by_node"]["start"]
        check(len(start) == 2 and min(start) > 0, "%s: guest RAM by node at the window's start %s" % (label, start))
        steady = x["windows"]["steady"]["metrics"]
        pre = x["windows"]["pre"]["metrics"]
        inval = window_sum(x, "steady", "bpf.invalidations.numa-hinting")
        other = window_sum(x, "steady", "bpf.invalidations.other")
        flushes = window_sum(x, "steady", "bpf.kvm_remote_flush.numa-hinting")
        check(inval > 0 and steady["numa_invalidations"] == inval,
              "%s: numa-hinting invalidations in the steady window: %d (metric %s)" % (label, inval, steady.get("numa_invalidations")))
        check(other == 0, "%s: %d invalidations of cause other in the steady window" % (label, other))
        check(flushes > 0 and steady["numa_kvm_flushes"] == flushes,
              "%s: KVM remote flushes for NUMA hinting: %d (metric %s)" % (label, flushes, steady.get("numa_kvm_flushes")))
        check(steady["numa_sptes_zapped"] and steady["numa_sptes_zapped"] > 0,
              "%s: SPTEs zapped by NUMA hinting: %s (%s)" % (label, steady.get("numa_sptes_zapped"),
                                                          x["windows"]["steady"]["unavailable"]))
        check(steady["numa_pte_updates"] > 0, "%s: vmstat numa_pte_updates %s" % (label, steady["numa_pte_updates"]))
        check(pre["numa_kvm_flushes"] == 0, "%s: %s KVM flushes for NUMA hinting before the guest RAM was scanned"
              % (label, pre["numa_kvm_flushes"]))
        if label == "pinned":
            check(x["vm"].get("pinned_pages") == pages, "pinned: %s pages pinned, the guest RAM has %d"
                  % (x["vm"].get("pinned_pages"), pages))
        else:
            check("pinned_pages" not in x["vm"], "unpinned: pinned_pages %s" % x["vm"].get("pinned_pages"))
        print("%s: steady %.1f s: numa-hinting invalidations %d (%d pages), SPTEs zapped %d, KVM remote flushes %d, "
              "host shootdowns %d, refaults %d; vmstat pte_updates %d hint_faults %d (local %d) migrated %d; "
              "pre: flushes %d; guest pages by node %s -> %s"
              % (label, x["windows"]["steady"]["duration_s"], inval, steady["numa_invalidated_pages"],
                 steady["numa_sptes_zapped"], flushes, steady["numa_tlb_shootdowns"], steady["refaults"],
                 steady["numa_pte_updates"], steady["numa_hint_faults"], steady["numa_hint_faults_local"],
                 steady["numa_pages_migrated"], pre["numa_kvm_flushes"], start, n["guest_pages_by_node"]["end"]))
    c = subprocess.run([snapbench, "compare", "--store", out, "--baseline", "label=unpinned", "--patched", "label=pinned"],
                       capture_output=True, text=True, timeout=120)
    check(c.returncode in (0, 3), "compare failed (exit %d): %s" % (c.returncode, c.stderr))
    lines = c.stdout.splitlines()
    first = next((lines[i + 1] for i, l in enumerate(lines[:-1]) if l.strip().startswith("---")), "")
    check("Window steady" in c.stdout and first.strip().startswith("numa kvm flushes"),
          "compare's table is not the steady window's, led by numa_kvm_flushes:\n%s" % c.stdout)
    print(c.stdout)
    check(read_sysctl("kernel.numa_balancing") == before, "this host's kernel.numa_balancing changed")

    # the host VM killed in the steady window: the repetition fails, nothing to restore on this host
    out = os.path.join(workdir, "numa-killed")
    spec = numa_spec(image, 300)
    spec["arms"] = spec["arms"][:1]
    with open(path, "w") as f:
        json.dump(spec, f)
    argv = [snapbench, "run", "--local", "--output", out, "--spec", path, "-q"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pid = first_host_vm(out)
        deadline = time.time() + 240
        while time.time() < deadline:
            inner = glob.glob(os.path.join(out, "*", "hostvm-rep0", "run", "report.json"))
            if inner:
                try:
                    with open(inner[0]) as f:
                        if any(row["window"] == "steady" for x in json.load(f)["repetitions"] for row in x["timeline"]):
                            break
                except (OSError, ValueError, KeyError):
                    pass
            time.sleep(0.5)
        else:
            check(False, "the steady window did not begin within 240 s")
        os.kill(pid, signal.SIGKILL)
        p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    rpath, rep = load_report(out)
    validate(validator, schema, rpath)
    x = rep["repetitions"][0]
    check(p.returncode != 0 and x["state"] == "failed" and "QEMU was killed" in (x["error"]["message"] or ""),
          "killed in the steady window: exit %d, repetition %s: %s" % (p.returncode, x["state"], x["error"]))
    check(read_sysctl("kernel.numa_balancing") == before, "this host's kernel.numa_balancing changed")
    # --local keeps this host's knob journal in the results directory (the host VM's own is inside it)
    journal = os.path.join(out, "knobs.journal")
    check(not os.path.exists(journal), "a knob journal left to restore on this host: %s" % journal)
    print("killed in the steady window: %s; kernel.numa_balancing here still %s" % (x["error"]["message"][:200], before))
    no_leftovers(workdir)


def noboot(snapbench, schema, validator, workdir, image, release):
    out = os.path.join(workdir, "noboot")
    argv = [snapbench, "run", "--local", "--output", out, "--kernel", image,
            "--kernel-cmdline", "rdinit=/snapbench-missing-init", "--host-vm-boot-timeout", "120"] + RUN_ARGS
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    path, rep = load_report(out)
    validate(validator, schema, path)
    check(r.returncode != 0, "a host VM that cannot boot made the run succeed")
    check(rep["state"] == "failed", "run state %s" % rep["state"])
    x = rep["repetitions"][0]
    msg = x["error"]["message"] or ""
    check(x["state"] == "failed", "repetition state %s" % x["state"])
    check("console: " in msg and "(empty)" not in msg, "no console tail in %r" % msg)
    check("panic" in msg.lower() or "init" in msg, "the console tail does not show why: %r" % msg)
    check(x["host_vm"]["boot_s"] is None, "boot_s %r for a VM that never reached the runner" % x["host_vm"]["boot_s"])
    print("failed as expected: %s" % msg[:600])
    no_leftovers(workdir)


def first_host_vm(out, deadline_s=240):
    """The pid of the host VM once the run engine inside has written its first report."""
    deadline = time.time() + deadline_s
    while time.time() < deadline:
        inner = glob.glob(os.path.join(out, "*", "hostvm-rep0", "run", "*", "report.json")) + \
            glob.glob(os.path.join(out, "*", "hostvm-rep0", "run", "report.json"))
        pids = glob.glob(os.path.join(out, "*", "qemu.pid"))
        if inner and pids:
            with open(pids[0]) as f:
                return int(f.read())
        time.sleep(0.5)
    check(False, "the host VM did not reach the runner within %d s" % deadline_s)


def run_signalling_host_vm(argv, out, sig, timeout):
    """Runs argv, sends sig to its first host VM once that reached the runner; (exit, stderr, pid, when)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pid = first_host_vm(out)
        os.kill(pid, sig)
        when = time.time()
        _, stderr = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, stderr, pid, when


def killed(snapbench, schema, validator, workdir, image, release):
    """The host VM's QEMU killed mid-run: the repetition fails with the reason and the console's tail."""
    out = os.path.join(workdir, "killed")
    argv = [snapbench, "run", "--local", "--output", out, "--kernel", image] + RUN_ARGS + ["--pre", "60"]
    code, _, _, _ = run_signalling_host_vm(argv, out, signal.SIGKILL, 120)
    path, rep = load_report(out)
    validate(validator, schema, path)
    check(code != 0 and rep["state"] == "failed", "run %s (exit %d)" % (rep["state"], code))
    x = rep["repetitions"][0]
    msg = x["error"]["message"] or ""
    check(x["state"] == "failed", "repetition state %s" % x["state"])
    check("QEMU was killed" in msg and "console: " in msg, "message: %r" % msg)
    check(x["host_vm"]["boot_s"] is not None, "boot_s of a VM that reached the runner: %r" % x["host_vm"]["boot_s"])
    print("failed as expected: %s" % msg[:400])
    no_leftovers(workdir)


def silent(snapbench, schema, validator, workdir, image, release):
    """A host VM that goes silent is given up after 60 s and the repetition gets one fresh host VM."""
    out = os.path.join(workdir, "silent")
    argv = [snapbench, "run", "--local", "--output", out, "--kernel", image] + RUN_ARGS
    code, stderr, first, stopped = run_signalling_host_vm(argv, out, signal.SIGSTOP, 400)
    path, rep = load_report(out)
    validate(validator, schema, path)
    x = rep["repetitions"][0]
    check(code == 0 and rep["state"] == "completed" and x["state"] == "completed",
          "run %s, repetition %s (exit %d): %s %s" % (rep["state"], x["state"], code, x["error"], stderr[-1500:]))
    # the fresh host VM is the same repetition: its record is made once, not again at the retry
    check(len(rep["repetitions"]) == 1, "%d repetitions in the report of a one-repetition run"
          % len(rep["repetitions"]))
    why = x["host_vm"]["retried_after"] or ""
    check("went silent in the " in why and "no word from the runner inside for 60 s" in why and "console: " in why,
          "retried_after: %r" % why)
    check(x["host_vm"]["pid"] != first, "the repetition names the stopped host VM (%d)" % first)
    check(not os.path.exists("/proc/%d" % first), "the silent host VM (pid %d) was not killed" % first)
    kept = glob.glob(os.path.join(out, "*", "hostvm-rep0.silent", "console.log"))
    check(kept, "the first host VM's directory was not kept as hostvm-rep0.silent")
    print("completed %.1f s after the stop, on a fresh host VM (pid %d, boot %.1f s); retried after: %s"
          % (time.time() - stopped, x["host_vm"]["pid"], x["host_vm"]["boot_s"], why[:300]))
    no_leftovers(workdir)


def badinput(snapbench, schema, validator, workdir, image, release):
    """Bad input fails before any host VM boots, naming the input and the fix."""
    other = os.path.join(workdir, "lib", "modules", "6.2.0-other")
    os.makedirs(other)
    cases = [
        (["--kernel", snapbench], [snapbench, "HdrS", "ELF file", "bzImage"]),
        (["--kernel", image, "--modules", other], ["6.2.0-other", release, "lib/modules/" + release]),
        (["--arm", "a:kernel=" + image, "--arm", "b"], ["arm 'a' has a kernel and arm 'b' none", "--kernel"]),
    ]
    # a riscv64 kernel (Debian's, scripts/fetch-test-kernel --riscv64) is refused: its host VM cannot run
    # the x86 micro guest (docs/kernel-arms.md, "The riscv64 host VM")
    riscv = os.path.realpath(os.path.join(RISCV64_CACHE, "current", "boot", "vmlinuz"))
    check(os.path.exists(riscv), "no %s: run scripts/fetch-test-kernel --riscv64 as root" % riscv)
    cases.append((["--kernel", riscv], ["arm 'default'", "riscv64 Image", "micro guest, an x86", "hostvm-exec --riscv64"]))
    accel = subprocess.run(["grep", "-qwE", "svm|vmx", "/proc/cpuinfo"]).returncode
    if accel != 0:
        cases.append((["--kernel", image, "--host-vm-accel", "kvm"], ["nested virtualization", "tcg"]))
    for i, (args, words) in enumerate(cases):
        out = os.path.join(workdir, "bad%d" % i)
        r = subprocess.run([snapbench, "run", "--local", "--output", out] + RUN_ARGS + args,
                           capture_output=True, text=True, timeout=60)
        check(r.returncode != 0, "%s: exit 0" % args)
        for w in words:
            check(w in r.stderr + r.stdout, "%s: %r not in the message: %s %s" % (args, w, r.stdout, r.stderr))
        check(not qemu_pids(out), "%s: a QEMU started" % args)
        print("%s -> %s" % (" ".join(args[:2]), (r.stderr.strip().splitlines() or [""])[0][:200]))


def kvm_usable():
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC))
        return True
    except OSError:
        return False


def fallback(snapbench, schema, validator, workdir, image, release):
    """Where a run runs (docs/running.md#where-a-run-runs): a run with vm.accel kvm (the default) on a
    machine without /dev/kvm goes into a host VM booting the kernel cache's kernel (host_vm.kernel auto),
    says so on the terminal and in the report, and its guest runs under that kernel's KVM; --no-host-vm
    refuses with /dev/kvm's message and the way out; an auto kernel that cannot be found fails preflight
    naming the fix. With /dev/kvm here, --kernel auto takes the same host VM path."""
    kvm = kvm_usable()
    current = os.path.realpath(os.path.join(CACHE, "current", "boot", "vmlinuz"))
    check(os.path.exists(current), "no %s: run scripts/fetch-test-kernel as root" % current)
    args = ["--repetitions", "1", "--memory", "64M", "--vcpus", "1", "--warmup", "1", "--pre", "2", "--post", "2",
            "--interval", "500", "--telemetry-interval", "1000"]
    out = os.path.join(workdir, "fallback")
    r = subprocess.run([snapbench, "run", "--local", "--output", out] + args + (["--kernel", "auto"] if kvm else []),
                       capture_output=True, text=True, timeout=600)
    path, rep = load_report(out)
    check(r.returncode == 0, "the run failed (exit %d): %s %s" % (r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
    validate(validator, schema, path)
    line = "snapbench: this host has no usable /dev/kvm"
    check((line in r.stderr) == (not kvm), "the placement line (%s) on the terminal: %s" % (line, r.stderr[:2000]))
    check(rep["accel"]["guest"] == "kvm" and rep["accel"]["host_vm"] in ("kvm", "tcg"), "accel %s" % rep["accel"])
    check((rep["accel"]["timing"] == "emulated") == (rep["accel"]["host_vm"] == "tcg"), "accel %s" % rep["accel"])
    hv = rep["host_vm"]
    check(hv and hv["fallback"] == (not kvm) and hv["kernel"] == current and release in hv["kernel_source"],
          "host_vm %s, want the cache's %s" % (hv, current))
    check(hv["reason"] == rep["accel"]["reason"] and ("no usable /dev/kvm" in hv["reason"]) == (not kvm), "%s" % hv)
    check(rep["arms"][0]["kernel"]["release"] == os.path.basename(current)[len("vmlinuz-"):], "arms[0].kernel")
    x = rep["repetitions"][0]
    check(rep["state"] == "completed" and x["state"] == "completed", "run %s, repetition %s" % (rep["state"], x["state"]))
    # the guest ran under the host VM's KVM: its statistics are there
    check(rep["probes"]["kvm.pf_taken"]["available"], "kvm.pf_taken: %s" % rep["probes"]["kvm.pf_taken"])
    print("the run went into a host VM: %s; snapshot %.1f s, pf_taken %d"
          % (hv["reason"], x["snapshot"]["duration_s"], x["totals"]["kvm.pf_taken"]))

    if not kvm:
        out = os.path.join(workdir, "refused")
        r = subprocess.run([snapbench, "run", "--local", "--output", out, "--no-host-vm", "-q"] + args,
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 4, "--no-host-vm: exit %d, want 4 (preflight): %s" % (r.returncode, r.stderr))
        for w in ("/dev/kvm", "modprobe kvm_amd", "--no-host-vm", "--accel tcg"):
            check(w in r.stderr, "--no-host-vm: %r not in %s" % (w, r.stderr))
        path, rep = load_report(out)
        check(rep["state"] == "failed" and rep["error"]["phase"] == "preflight", "--no-host-vm: %s" % rep["error"])
        check(not qemu_pids(out), "--no-host-vm: a QEMU started")
        print("--no-host-vm -> %s" % r.stderr.strip().splitlines()[0][:200])

    if os.access("/boot/vmlinuz-" + os.uname().release, os.R_OK):
        print("this host's own kernel image is readable: auto would take it, the missing-kernel case is not run")
        return
    out = os.path.join(workdir, "nokernel")
    env = dict(os.environ, SNAPBENCH_KERNEL_CACHE=os.path.join(workdir, "empty-cache"))
    r = subprocess.run([snapbench, "run", "--local", "--output", out, "--kernel", "auto", "-q"] + args,
                       capture_output=True, text=True, timeout=120, env=env)
    check(r.returncode == 4, "no auto kernel: exit %d, want 4: %s" % (r.returncode, r.stderr))
    for w in ("host_vm.kernel auto", "empty-cache/current/boot/vmlinuz", "snapbench-fetch-kernel", "--kernel PATH"):
        check(w in r.stderr, "no auto kernel: %r not in %s" % (w, r.stderr))
    check(not qemu_pids(out), "no auto kernel: a QEMU started")
    print("no auto kernel -> %s" % r.stderr.strip().splitlines()[0][:200])


BACKPORTS = os.environ.get("SNAPBENCH_KERNEL_CACHE_BACKPORTS", "/var/cache/snapbench/kernels-backports")


def uffdrestore(snapbench, schema, validator, workdir, image, release):
    """Seed 003's uffd-restore scenario in a kernel arm's host VM, and its bad input."""
    stock = sorted(glob.glob(os.path.join(BACKPORTS, "*", "boot", "vmlinuz-*")))
    if stock:
        image = stock[-1]
    region = 16 << 20
    spec = {
        "description": "seed 003's chunked userfaultfd restore in a host VM",
        "scenario": "uffd-restore",
        "repetitions": 1,
        "vm": {"memory": "64M", "vcpus": 1},
        "guest": {"kind": "micro", "pattern": "idle", "probe": {"vcpu": None}, "telemetry_interval_ms": 1000},
        "uffd_restore": {"region": "16M", "chunk": "4K", "access": "read", "timeout_s": 240},
        "timing": {"warmup_s": 0, "pre_s": 1, "post_s": 1, "interval_ms": 1000},
        "bpf": {"enabled": False},
        "host_vm": {"kernel": image, "memory": "1G", "vcpus": 2},
        "arms": [{"label": "chunk-512K", "chunk": "512K"}],
    }
    # bad input first: each fails before a host VM boots, naming what to change
    bad = [({"arms": [{"label": "a", "chunk": 3000}]}, ["spec.arms[0].chunk", "power of 2"]),
           ({"uffd_restore": dict(spec["uffd_restore"], region=(16 << 20) + (256 << 10))},
            ["spec.uffd_restore.region", "not a multiple", "chunk-512K"]),
           ({"scenario": "background-snapshot"}, ["spec.arms[0].chunk", "not \"uffd-restore\""]),
           # the patch's parameter on a kernel without it: its module's modinfo says so, before a boot
           ({"arms": [{"label": "p8", "chunk": "512K", "knobs": {"module:kvm.tdp_mmu_prefetch_pages": "8"}}]},
            ["arm 'p8'", "module:kvm.tdp_mmu_prefetch_pages", "no parameter tdp_mmu_prefetch_pages"])]
    for i, (change, words) in enumerate(bad):
        path = os.path.join(workdir, "bad%d.json" % i)
        with open(path, "w") as f:
            json.dump(dict(spec, **change), f)
        t0 = time.monotonic()
        r = subprocess.run([snapbench, "run", "--local", "--output", os.path.join(workdir, "bad"), "--spec", path, "-q"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode != 0 and all(w in r.stderr for w in words) and time.monotonic() - t0 < 10,
              "bad input %s: exit %d in %.1f s, want %s in: %s" % (change, r.returncode, time.monotonic() - t0, words,
                                                                    r.stderr))
    rep, x = run_spec_completed(snapbench, schema, validator, workdir, os.path.join(workdir, "uffd"), "uffd", spec)
    u, w = x["uffd_restore"], x["windows"]["fault-in"]
    m, un = w["metrics"], w["unavailable"]
    check(u["chunk_bytes"] == 512 << 10 and u["region_bytes"] == region and u["exit_status"] == 0 and not u["error"],
          "uffd_restore %s" % u)
    check(u["uffd_requests"] == region // (512 << 10) and u["uffd_woken"] == 0 and u["uffd_bytes"] == region,
          "%s requests (%s woken), %s bytes placed; want %d, 0, %d" % (u["uffd_requests"], u["uffd_woken"],
                                                                       u["uffd_bytes"], region // (512 << 10), region))
    check(u["mismatches"] == 0 and m["restore_mismatches"] == 0, "%d pages mismatched" % u["mismatches"])
    k = u["kvm"]
    check(k["pf_taken"] == k["pf_fixed"] and k["pf_taken"] >= region >> 12,
          "the restore's KVM pf_taken %s, pf_fixed %s: a stock KVM fixes a fault per page of %d"
          % (k["pf_taken"], k["pf_fixed"], region >> 12))
    check(m["restore_pf_taken"] == k["pf_taken"] and m["uffd_requests"] == u["uffd_requests"]
          and m["restore_chunk_bytes"] == 512 << 10, "the fault-in window's metrics %s against %s" % (m, u))
    check(k["pf_prefetched"] is None and m.get("restore_pf_prefetched") is None
          and "seed 003" in un.get("restore_pf_prefetched", ""),
          "pf_prefetched on a stock kernel: %s, %r" % (k["pf_prefetched"], un.get("restore_pf_prefetched")))
    check(m["restore_pass_ms"] > 0 and rep["accel"]["timing"] == "emulated",
          "pass %s ms, timing %s" % (m["restore_pass_ms"], rep["accel"]["timing"]))
    print("chunk 512K on %s: pass %.1f ms (emulated), %d requests, pf_taken %d, pf_fixed %d, pf_prefetched "
          "unavailable (%s); host VM boot %.1f s"
          % (os.path.basename(image), m["restore_pass_ms"], u["uffd_requests"], k["pf_taken"], k["pf_fixed"],
             un["restore_pf_prefetched"], x["host_vm"]["boot_s"]))
    no_leftovers(workdir)


def main():
    mode, snapbench, schema, validator, base = sys.argv[1:6]
    if os.geteuid() != 0:
        skip("root (a host VM loads KVM and BPF and shares / as its root)")
    if not shutil.which("qemu-system-x86_64"):
        skip("qemu-system-x86_64")
    image, release = find_kernel()
    os.makedirs(base, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="hostvm-%s-" % mode, dir=base)
    ok = False
    try:
        {"e2e": e2e, "noboot": noboot, "badinput": badinput, "killed": killed, "dirtylog": dirtylog,
         "postcopy": postcopy, "silent": silent, "numa": numa, "fallback": fallback,
         "uffdrestore": uffdrestore}[mode](os.path.abspath(snapbench), schema, validator, workdir, image, release)
        ok = True
    finally:
        no_leftovers(workdir)
        if ok or not os.environ.get("SNAPBENCH_TEST_KEEP"):
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print("kept %s" % workdir, file=sys.stderr)


if __name__ == "__main__":
    main()
