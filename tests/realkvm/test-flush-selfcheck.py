#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Remote TLB flushes by cause, exact against KVM, and the self-check's
partial mark (docs/probes.md, docs/report-format.md#self-check), on the
kernel under test: it runs inside a host VM (tests/realkvm/hostvm-exec) on
6.1, 6.12 and 7.2.

  - the default benchmark, scaled down (64 MiB guest, windows of 1-2 s, REPS
    repetitions): in every repetition bpf.kvm_remote_flush, the sum of its
    causes and KVM's remote_tlb_flush_requests are equal and not 0, the
    probes entry names where the count attaches (the request function on
    every kernel here) and carries no partial mark;
  - unless FUNCTION is "-", one repetition with the count attached where
    only some flushes pass ($SNAPBENCH_TEST_FLUSH_FUNCTION, a test-only
    choice: FUNCTION, e.g. kvm_flush_remote_tlbs_memslot, which a snapshot
    does not call): the report
    marks bpf.kvm_remote_flush and its causes partial with the repetition
    and both numbers, and `snapbench compare` of the two runs says so in
    the metric's notes and the run's warnings.

Usage: test-flush-selfcheck.py SNAPBENCH ATTACH FUNCTION|- REPS (ATTACH: the
function the exact count must name in its source, as this kernel has it).
Each run's wall time is printed: what the test costs is its runs'.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

SPEC = {
    "description": "the default benchmark, scaled down for the flush self-check",
    "scenario": "background-snapshot",
    "repetitions": 2,
    "vm": {"memory": "64M", "vcpus": 2},
    "guest": {"kind": "micro", "pattern": "write64", "probe": {"vcpu": 0, "gap_us": 100}},
    "snapshot": {"sink": "file", "keep": False},
    "timing": {"warmup_s": 1, "pre_s": 2, "post_s": 2, "interval_ms": 1000},
    "arms": [{"label": "default"}],
}


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def log(*args):
    print("flush-selfcheck:", *args, flush=True)


def run(snapbench, work, name, reps, env=None):
    spec = os.path.join(work, name + ".json")
    with open(spec, "w") as f:
        json.dump(dict(SPEC, repetitions=reps), f)
    out = os.path.join(work, name)
    t0 = time.monotonic()
    p = subprocess.run([snapbench, "run", "--local", "--spec", spec, "--output", out, "--json"],
                       capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    check(p.returncode == 0, "%s: snapbench run exit %d\n%s%s" % (name, p.returncode, p.stdout, p.stderr[-4000:]))
    log("%s: %d repetition(s) in %.0f s" % (name, reps, time.monotonic() - t0))
    report = json.loads(p.stdout)["report"]
    with open(report) as f:
        return report, json.load(f)


def totals(rep):
    t = {}
    for row in rep.get("timeline") or []:
        for k, v in row["counters"].items():
            t[k] = t.get(k, 0) + v
    return t


def flushes(rep):
    t = totals(rep)
    causes = {k[len("bpf.kvm_remote_flush."):]: v for k, v in t.items() if k.startswith("bpf.kvm_remote_flush.")}
    return t.get("bpf.kvm_remote_flush"), sum(causes.values()), t.get("kvm.remote_tlb_flush_requests"), causes


def main(argv):
    if len(argv) != 5 or not argv[4].isdigit() or int(argv[4]) < 1:
        print(__doc__, file=sys.stderr)
        return 2
    snapbench, attach, function, reps = argv[1], argv[2], argv[3], int(argv[4])
    work = tempfile.mkdtemp(prefix="flush-selfcheck-")

    path, r = run(snapbench, work, "exact", reps)
    probe = r["probes"]["bpf.kvm_remote_flush"]
    log("exact:", probe["source"])
    check(probe["available"] and ("fentry:%s" % attach) in probe["source"],
          "bpf.kvm_remote_flush attaches at %r, not %s" % (probe.get("source"), attach))
    check("partial" not in probe, "the exact run is marked partial: %s" % probe.get("partial"))
    for rep in r["repetitions"]:
        check(rep["state"] == "completed", "repetition %d: %s" % (rep["index"], rep["state"]))
        bpf, by_cause, kvm, causes = flushes(rep)
        log("repetition %d: bpf %s, by cause %s %s, remote_tlb_flush_requests %s"
            % (rep["index"], bpf, by_cause, {k: v for k, v in causes.items() if v}, kvm))
        check(kvm and kvm > 0, "repetition %d: KVM counted no remote flush request" % rep["index"])
        check(bpf == by_cause == kvm, "repetition %d: bpf %s, by cause %s, KVM %s" % (rep["index"], bpf, by_cause, kvm))
    if function == "-":
        log("ok")
        return 0

    ppath, pr = run(snapbench, work, "partial", 1, {"SNAPBENCH_TEST_FLUSH_FUNCTION": function})
    probe = pr["probes"]["bpf.kvm_remote_flush"]
    rep = pr["repetitions"][0]
    bpf, by_cause, kvm, _ = flushes(rep)
    log("partial: %s: bpf %s, KVM %s: %s" % (probe["source"], bpf, kvm, probe.get("partial")))
    check(rep["state"] == "completed", "the partial run's repetition: %s" % rep["state"])
    check(("fentry:%s" % function) in probe["source"], "the test's attach point is not used: %s" % probe["source"])
    check(kvm > 0 and bpf < kvm, "the test's attach point saw %s of %s: nothing to mark" % (bpf, kvm))
    want = "repetition 0: bpf.kvm_remote_flush counted %d of the %d remote TLB flush requests KVM counted" % (bpf, kvm)
    check(want in probe.get("partial", ""), "probes entry: want %r, got %r" % (want, probe.get("partial")))
    for k, v in pr["probes"].items():
        if k.startswith("bpf.kvm_remote_flush.") and v["available"]:
            check(want in v.get("partial", ""), "%s is not marked partial" % k)

    p = subprocess.run([snapbench, "compare", "--json", "--metric", "tlb_requests_per_s",
                        "--metric", "remote_flushes*", path, ppath], capture_output=True, text=True)
    check(p.returncode in (0, 3), "snapbench compare exit %d\n%s" % (p.returncode, p.stderr))
    c = json.loads(p.stdout)
    warned = [w for w in c.get("warnings", []) if "bpf.kvm_remote_flush is partial, not exact" in w and want in w]
    check(warned, "compare's warnings do not name the partial count: %s" % c.get("warnings"))
    noted = [n for m in c.get("metrics", []) for n in m.get("notes", []) if want in n]
    check(noted, "no compare metric notes the partial count")
    log("compare:", warned[0])
    log("ok")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Fail as e:
        print("flush-selfcheck: FAIL:", e, flush=True)
        sys.exit(1)
