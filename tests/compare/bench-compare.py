#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Benchmark for `snapbench compare`: prints figures, asserts nothing.

Builds a results store in a temp directory, RUNS runs per label for LABELS
labels (default 2), each with REPS repetitions whose timelines have ROWS rows
(1 s rows of a 5-minute repetition at 100 ms sampling are 3,000 rows), then
times `snapbench compare --store ... --baseline label=l0 --patched label=l1
--output` twice: first on a store without its label index (every report is
parsed, and the index written), then with it (only the two labels' reports
are parsed); for each the wall time, the CPU time and peak RSS of the
process. 1,000 runs of 5 repetitions: bench-compare.py SNAPBENCH 100 5 100 10

Usage: bench-compare.py SNAPBENCH [RUNS REPS ROWS [LABELS]]
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

METRICS = {"pf_per_s": "lower", "tlb_per_s": "lower", "invalidations_per_s": "lower",
           "invalidations_per_s.uffd-wp": "lower", "guest_ops_per_s": "higher",
           "latency_p50_ns": "lower", "latency_p99_ns": "lower", "latency_p999_ns": "lower"}
COUNTERS = ["kvm.pf_taken", "kvm.remote_tlb_flush", "bpf.invalidations", "bpf.invalidations.uffd-wp",
            "guest.ops", "guest.ops.vcpu0", "guest.ops.vcpu1"]


def report(rid, label, reps, rows, rnd, shift):
    windows = ["pre"] * (rows // 4) + ["snapshot"] * (rows // 2)
    windows += ["post"] * (rows - len(windows))
    repetitions = []
    for i in range(reps):
        timeline = [{"t_s": 0.1 * (j + 1), "dt_s": 0.1, "window": w,
                     "counters": {c: rnd.randrange(1000) for c in COUNTERS},
                     "latency_hist": {"bucket_ns": [256, 320], "width_ns": [64, 64], "counts": [90, 10]}}
                    for j, w in enumerate(windows)]
        wins = {w: {"start_s": 0, "duration_s": 1,
                    "metrics": {m: rnd.gauss(1000 * shift, 50) for m in METRICS}, "unavailable": {}}
                for w in ("pre", "snapshot", "post")}
        repetitions.append({"index": i, "arm": label, "state": "completed", "windows": wins,
                            "timeline": timeline})
    return {"schema": "snapbench.run/1", "id": rid, "state": "completed",
            "spec": {"scenario": "background-snapshot", "vm": {"memory": 268435456, "vcpus": 2},
                     "guest": {"kind": "micro", "pattern": "write64"}, "timing": {"pre_s": 5}},
            "host": {"kernel_release": "bench"},
            "metric_info": {m: {"unit": "1/s", "better": b, "description": ""} for m, b in METRICS.items()},
            "arms": [{"label": label}], "repetitions": repetitions}


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    snapbench = os.path.abspath(argv[1])
    runs, reps, rows = (int(a) for a in (argv[2:5] if len(argv) >= 5 else (4, 5, 3000)))
    n_labels = int(argv[5]) if len(argv) >= 6 else 2
    rnd = random.Random(1)
    tmp = tempfile.mkdtemp(prefix="bench-compare-")
    try:
        store = os.path.join(tmp, "store")
        size = 0
        for k in range(n_labels):
            label, shift = "l%d" % k, 1.0 + 0.1 * (k % 2)
            for r in range(runs):
                rid = "20261201T%02d%04dZ-%06x" % (k, r, k * 10000 + r)
                os.makedirs(os.path.join(store, rid))
                path = os.path.join(store, rid, "report.json")
                with open(path, "w") as f:
                    json.dump(report(rid, label, reps, rows, rnd, shift), f)
                size += os.path.getsize(path)
        print("store: %d labels x %d runs x %d repetitions x %d timeline rows, %.1f MiB of reports"
              % (n_labels, runs, reps, rows, size / 2**20))
        for case in ("without the label index", "with the label index"):
            t0 = time.monotonic()
            p = subprocess.Popen([snapbench, "compare", "--store", store, "--baseline", "label=l0",
                                  "--patched", "label=l1", "--output", os.path.join(tmp, "out"), "-q"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            err = p.stderr.read()
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.monotonic() - t0
            code = os.waitstatus_to_exitcode(status)
            if code not in (0, 3):
                sys.exit("snapbench compare failed (%d): %s" % (code, err.decode(errors="replace")))
            print("snapbench compare %s: wall %.2f s, CPU %.2f s, peak RSS %.0f MiB (exit %d)"
                  % (case, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, code))
            print("  per repetition compared: %.1f ms" % (1000 * wall / (2 * runs * reps)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
