#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Seed 001's table from reproduce's host VM logs (README beside this file).

    summarize.py DIR

DIR holds ARM-REP.log files, each the output of one `hostvm-exec --riscv64`
run of snapbench-hostvm-selftest-riscv64 (its port lines, "hostvm-exec:
port: {...}"). Prints, per arm, the clear-dirty-log time per iteration as
median (min max) over every iteration of every repetition and the stage-2
flushes per clear-dirty-log phase (the calls of every probed function
summed: kvm_riscv_hfence_gvma_vmid_gpa, once per 4 KiB page in the
baseline, and kvm_arch_flush_remote_tlbs_range, once per 64-page mask in
the patched arm; docs/probes.md), then the ratios beside the seed's, then
every phase's counts. Exit 1 when a log has no complete run.
"""
import collections
import glob
import json
import os
import statistics
import sys

PREFIX = "hostvm-exec: port: "
PHASES = ("dirty_memory", "get_dirty_log", "clear_dirty_log")


def read_log(path):
    """The iteration events and the selftest's exit event of one run."""
    its, done = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.startswith(PREFIX):
                continue
            ev = json.loads(line[len(PREFIX):])
            if ev.get("event") == "iteration":
                its.append(ev)
            elif ev.get("event") == "selftest":
                done = ev
    return its, done


def mmm(values, fmt="%.4f"):
    return ("%s (%s %s)" % (fmt, fmt, fmt)) % (statistics.median(values), min(values), max(values))


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    arms = collections.OrderedDict()
    bad = []
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*-*.log"))):
        arm = os.path.basename(path).rsplit("-", 1)[0]
        its, done = read_log(path)
        if not done or done.get("status") != 0 or not its:
            bad.append(path)
            continue
        a = arms.setdefault(arm, {"s": collections.defaultdict(list), "n": collections.defaultdict(list), "runs": 0})
        a["runs"] += 1
        for ev in its:
            a["s"][ev["phase"]].append(ev["s"])
            a["n"][ev["phase"]].append(sum(ev["kprobes"].values()))
    for path in bad:
        print("summarize: %s: no completed selftest (see its console)" % path, file=sys.stderr)
    if len(arms) < 2:
        print("summarize: want two arms with completed runs, have %s" % list(arms), file=sys.stderr)
        return 1
    print("%-10s %5s %-32s %-28s" % ("arm", "runs", "clear dirty log s/iteration", "stage-2 flushes/clear"))
    for arm, a in arms.items():
        print("%-10s %5d %-32s %-28s" % (arm, a["runs"], mmm(a["s"]["clear_dirty_log"]), mmm(a["n"]["clear_dirty_log"], "%g")))
    (b, bv), (p, pv) = list(arms.items())[:2]
    t = statistics.median(bv["s"]["clear_dirty_log"]) / max(statistics.median(pv["s"]["clear_dirty_log"]), 1e-12)
    n = statistics.median(bv["n"]["clear_dirty_log"]) / max(statistics.median(pv["n"]["clear_dirty_log"]), 1)
    print("\n%s / %s: clear dirty log time %.1fx (seed: 3.02 s -> 0.20 s, 15x; these are TCG's emulated times),"
          " stage-2 flushes per clear %.1fx" % (b, p, t, n))
    print("\ncounts per phase (median (min max) of the probed functions' calls):")
    for arm, a in arms.items():
        for ph in PHASES:
            print("  %-10s %-16s %s" % (arm, ph, mmm(a["n"][ph], "%g")))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
