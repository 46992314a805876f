#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No better/worse verdict from a window's length or an emulator's clock.

1. A rate whose count the workload fixes: stock.json's snapshot window made
   to hold 65,540 invalidations in every repetition, the patched side's
   window 21% shorter (invalidations/s +26.8%, as seed 000's emulated
   snapshot gave). compare must not call invalidations/s regressed: the
   rate is "changed", marked "fixed count" in the text, JSON not_judged,
   and the count (invalidations count, 65,540 against 65,540) is compared
   with verdict no-change; exit 0, and bisect-step says good (0).
   --verdict-on-fixed-count gives the rate its verdict back: regressed,
   exit 3.
2. Times and rates under emulation: tcg-host-vm.json (timing emulated)
   against a copy whose guest ops/s are 20% lower and p99 latency 30%
   higher: no verdict but "changed", marked emulated; exit 0.
   --verdict-on-emulated: regressed, exit 3.
3. A count that varies keeps its rate's verdict (regressed.json against
   stock.json: p99 +30% regressed, no count row).

Usage: unjudged.py SNAPBENCH TESTDATA
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

COUNT = 65540


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


def fixed_count(src, dst, duration):
    with open(src) as f:
        r = json.load(f)
    for rep in r["repetitions"]:
        w = rep["windows"]["snapshot"]
        w["duration_s"] = duration
        w["metrics"]["invalidations_per_s"] = COUNT / duration
    with open(dst, "w") as f:
        json.dump(r, f)


def slower(src, dst):
    with open(src) as f:
        r = json.load(f)
    for rep in r["repetitions"]:
        m = rep["windows"]["snapshot"]["metrics"]
        m["guest_ops_per_s"] *= 0.8
        m["latency_p99_ns"] *= 1.3
    with open(dst, "w") as f:
        json.dump(r, f)


def compare(snapbench, cwd, *args, verb="compare"):
    p = subprocess.run([snapbench, verb] + list(args), cwd=cwd, capture_output=True, text=True, timeout=60)
    return p


def metrics_of(snapbench, cwd, *args):
    p = compare(snapbench, cwd, "--json", *args)
    if p.returncode not in (0, 3):
        fail("compare --json %s: exit %d\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p.returncode, {m["metric"]: m for m in json.loads(p.stdout)["metrics"]}


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    snapbench, testdata = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    tmp = tempfile.mkdtemp(prefix="compare-unjudged-")
    try:
        fixed_count(os.path.join(testdata, "stock.json"), os.path.join(tmp, "base.json"), 3.0)
        fixed_count(os.path.join(testdata, "perm-upgrade.json"), os.path.join(tmp, "patched.json"), 3.0 / 1.268)
        sel = ["--metric", "invalidations_per_s", "base.json", "patched.json"]
        rc, ms = metrics_of(snapbench, tmp, *sel)
        rate, count = ms.get("invalidations_per_s"), ms.get("invalidations_count")
        if rc != 0 or not rate or rate["verdict"] != "changed" or rate.get("not_judged") != "fixed count" \
                or abs(rate["pct_change"] - 26.8) > 0.1:
            fail("fixed count: exit %d, the rate %s; expected exit 0, +26.8%% changed, not_judged 'fixed count'"
                 % (rc, rate and {k: rate.get(k) for k in ("verdict", "not_judged", "pct_change")}))
        if not count or count["verdict"] != "no-change" or not count.get("count_of_rate") or \
                count["baseline"]["median"] != COUNT or count["patched"]["median"] != COUNT:
            fail("fixed count: the count row is %s" % count)
        text = compare(snapbench, tmp, *sel).stdout
        row = [line for line in text.splitlines() if "fixed count" in line]
        if "regressed" in text or not row or "invalidations count" not in text:
            fail("fixed count: the table says regressed, or marks nothing, or has no count row:\n" + text)
        p = compare(snapbench, tmp, "-q", *sel, verb="bisect-step")
        if p.returncode != 0:
            fail("fixed count: bisect-step exited %d, expected 0 (good)\n%s" % (p.returncode, p.stderr))
        rc, ms = metrics_of(snapbench, tmp, "--verdict-on-fixed-count", *sel)
        if rc != 3 or ms["invalidations_per_s"]["verdict"] != "regressed" or "invalidations_count" in ms:
            fail("--verdict-on-fixed-count: exit %d, %s" % (rc, ms["invalidations_per_s"]))
        print("ok a rate whose count the workload fixes: +26.8%% changed (fixed count), count %d vs %d no-change, "
              "exit 0; --verdict-on-fixed-count: regressed, exit 3" % (COUNT, COUNT))

        slower(os.path.join(testdata, "tcg-host-vm.json"), os.path.join(tmp, "tcg-slower.json"))
        shutil.copy(os.path.join(testdata, "tcg-host-vm.json"), os.path.join(tmp, "tcg.json"))
        sel = ["--metric", "guest_ops_per_s", "--metric", "latency_p99_ns", "tcg.json", "tcg-slower.json"]
        rc, ms = metrics_of(snapbench, tmp, *sel)
        got = {k: (m["verdict"], m.get("not_judged")) for k, m in ms.items()}
        if rc != 0 or got != {"guest_ops_per_s": ("changed", "emulated"), "latency_p99_ns": ("changed", "emulated")}:
            fail("emulated: exit %d, %s; expected exit 0, both changed and not judged (emulated)" % (rc, got))
        rc, ms = metrics_of(snapbench, tmp, "--verdict-on-emulated", *sel)
        got = {k: m["verdict"] for k, m in ms.items()}
        if rc != 3 or got != {"guest_ops_per_s": "regressed", "latency_p99_ns": "regressed"}:
            fail("--verdict-on-emulated: exit %d, %s" % (rc, got))
        print("ok emulated timing: ops/s -20% and p99 +30% changed, exit 0; --verdict-on-emulated: regressed, exit 3")

        rc, ms = metrics_of(snapbench, testdata, "--metric", "latency_p99_ns", "--metric", "invalidations_per_s",
                            "stock.json", "regressed.json")
        if rc != 3 or ms["latency_p99_ns"]["verdict"] != "regressed" or "invalidations_count" in ms or \
                any("not_judged" in m for m in ms.values()):
            fail("native, varying counts: exit %d, %s" % (rc, {k: m["verdict"] for k, m in ms.items()}))
        print("ok native runs whose counts vary keep their verdicts (p99 regressed, exit 3, no count row)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
