#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes reports/testdata/grid-chunks.json, the fixture of compare --grid's
golden tests, from reports/testdata/postcopy.json (a real postcopy-restore
report of 2 repetitions): 8 arms of 4 repetitions each, interleaved, named
by two parameters as docs/compare.md#grids describes, with figures made up
to take the shape of seed 003's table:

  - rows chunk-4K and chunk-2M (label terms), columns nr_pages-0, -8 and
    -512 (label terms, and the knob module:kvm.tdp_mmu_prefetch_pages);
    each row's baseline, chunk-C+base, has neither;
  - fault_pass_ms: the 4 KiB row noise around 2,228 ms; the 2 MiB row 513 ms,
    unchanged at nr_pages 0, -59% at 8, -68% at 512;
  - set_spte_count (the faults KVM fixed): 32,768 in the 4 KiB row, and in
    the 2 MiB row 32,768 falling to 1/8 and 1/400 of it.

Made once and committed; run again only to change the fixture, then
regenerate the goldens (docs/compare.md#tests).
Usage: grid_fixture.py TESTDATA
"""
import copy
import json
import os
import sys

REPS = 4
CHUNKS = [("4K", 4096), ("2M", 2097152)]
COLUMNS = [None, "0", "8", "512"]
# fault_pass_ms per (chunk, column): the seed's baselines and changes, with per-repetition noise
PASS = {"4K": {None: 2228, "0": 2250, "8": 2205, "512": 2240}, "2M": {None: 513, "0": 515, "8": 210, "512": 164}}
SPTES = {"4K": {None: 32768, "0": 32768, "8": 32768, "512": 32768}, "2M": {None: 32768, "0": 32768, "8": 4110, "512": 82}}
NOISE = [-0.021, 0.013, -0.004, 0.027]


def label(chunk, col):
    return "chunk-%s+%s" % (chunk, "base" if col is None else "nr_pages-" + col)


def median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def stat(values):
    v = [x for x in values if x is not None]
    if not v:
        return {"n": 0, "median": None, "min": None, "max": None, "values": []}
    return {"n": len(v), "median": median(v), "min": min(v), "max": max(v), "values": v}


def main():
    testdata = sys.argv[1]
    with open(os.path.join(testdata, "postcopy.json")) as f:
        src = json.load(f)
    out = copy.deepcopy(src)
    out["id"] = "20261206T090000Z-0e0003"
    out["spec"]["description"] = ("Seed 003's grid: fault-in after a postcopy restore by chunk and nr_pages "
                                  "(a fixture: figures made up in the seed's shape)")
    out["spec"]["repetitions"] = REPS
    arms, reps = [], []
    for chunk, chunk_bytes in CHUNKS:
        for col in COLUMNS:
            knobs = {} if col is None else {"module:kvm.tdp_mmu_prefetch_pages": col}
            arms.append((label(chunk, col), knobs, chunk, chunk_bytes, col))
    out["spec"]["arms"] = [{"label": a[0], "knobs": a[1]} for a in arms]
    index = 0
    for r in range(REPS):  # interleaved: every arm's repetition r before any arm's r+1
        for a, (lab, knobs, chunk, chunk_bytes, col) in enumerate(arms):
            rep = copy.deepcopy(src["repetitions"][r % len(src["repetitions"])])
            rep["index"] = index
            rep["arm"] = lab
            noise = NOISE[(r + a) % len(NOISE)]
            ms = round(PASS[chunk][col] * (1 + noise), 1)
            m = rep["windows"]["migration"]["metrics"]
            m["fault_pass_ms"] = ms
            m["postcopy_chunk_bytes"] = chunk_bytes
            m["postcopy_requests"] = 134217728 // chunk_bytes + (r % 2)
            m["set_spte_count"] = SPTES[chunk][col] + (0 if SPTES[chunk][col] == 32768 else r)
            rep["postcopy"]["pass"]["ms"] = ms
            rep["postcopy"]["chunk_bytes"] = chunk_bytes
            rep["postcopy"]["postcopy_requests"] = m["postcopy_requests"]
            reps.append(rep)
            index += 1
    out["repetitions"] = reps
    out["arms"] = []
    for lab, knobs, chunk, chunk_bytes, col in arms:
        mine = [x for x in reps if x["arm"] == lab]
        arm = copy.deepcopy(src["arms"][0])
        arm["label"], arm["knobs"] = lab, knobs
        arm["repetitions"] = {"total": REPS, "completed": REPS, "failed": 0}
        for w, summary in arm["windows"].items():
            for name in summary:
                summary[name] = stat([x["windows"][w]["metrics"].get(name) for x in mine])
        out["arms"].append(arm)
    with open(os.path.join(testdata, "grid-chunks.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
