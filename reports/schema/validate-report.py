#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Validate snapbench run reports: the JSON Schema, then the rules a schema
cannot express (docs/report-format.md):

  - each repetition's totals are the sums of its timeline counters;
  - every counter of a repetition appears in every one of its timeline rows;
  - rows are in time order and never mix windows out of order;
  - arm statistics (n, median, min, max) agree with their values, and the
    values are the completed repetitions' window metrics;
  - every metric in a window appears in metric_info; every null metric is
    named in "unavailable";
  - a postcopy pass's touch histogram adds up to its pages, its buckets
    ascend without overlapping, and its percentiles lie in order within
    it;
  - a partial report (top-level "partial": rebuilt without its report, e.g.
    from a LAVA job's test cases) has no timeline rows and no totals: they
    did not come back.

Usage: validate-report.py SCHEMA REPORT...   (exit 0: all valid)
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("validate-report: python3-jsonschema is missing; run scripts/install-deps")

WINDOW_ORDER = {"warmup": 0, "pre": 1, "snapshot": 2, "migration": 2, "steady": 2, "fault-in": 2, "post": 3}


def close(a, b):
    return abs(a - b) <= 1e-6 * (abs(a) + abs(b) + 1)


def median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def check_touch_hist(where, p):
    problems = []
    h = p and p.get("touch_hist")
    if not h:
        return problems
    where += ".postcopy.pass.touch_hist"
    lo, wi, cnt = h["bucket_ns"], h["width_ns"], h["counts"]
    if not len(lo) == len(wi) == len(cnt):
        return ["%s: its arrays differ in length" % where]
    if sum(cnt) != p["pages"]:
        problems.append("%s: counts add up to %d, the pass touched %d pages" % (where, sum(cnt), p["pages"]))
    for i in range(1, len(lo)):
        if lo[i] + 1e-9 < lo[i - 1] + wi[i - 1] and not close(lo[i], lo[i - 1] + wi[i - 1]):
            problems.append("%s: bucket %d starts inside bucket %d" % (where, i, i - 1))
    if lo:
        p50, p99, top = p["touch_p50_ns"], p["touch_p99_ns"], p["touch_max_bucket_ns"]
        if not (lo[0] <= p50 + 1e-9 and p50 <= p99 + 1e-9 and p99 <= top + 1e-9):
            problems.append("%s: p50 %g, p99 %g and the top %g are out of order or below its first bucket"
                            % (where, p50, p99, top))
        if not close(top, lo[-1] + wi[-1]):
            problems.append("%s: touch_max_bucket_ns %g is not its last bucket's end %g" % (where, top, lo[-1] + wi[-1]))
    return problems


def check(report):
    problems = []
    info = report["metric_info"]
    for rep in report["repetitions"]:
        where = "repetitions[%d]" % rep["index"]
        if "partial" in report and (rep["timeline"] or rep["totals"]):
            problems.append("%s: a partial report holds no timeline rows or totals" % where)
        names = set(rep["totals"])
        sums = dict.fromkeys(names, 0)
        last_t, last_w = -1.0, -1
        for i, row in enumerate(rep["timeline"]):
            if set(row["counters"]) != names:
                problems.append("%s.timeline[%d]: counters %s differ from totals' %s"
                                % (where, i, sorted(row["counters"]), sorted(names)))
            for k, v in row["counters"].items():
                sums[k] = sums.get(k, 0) + v
            if row["t_s"] + 1e-9 < last_t:
                problems.append("%s.timeline[%d]: t_s goes back in time" % (where, i))
            w = WINDOW_ORDER[row["window"]]
            if w < last_w:
                problems.append("%s.timeline[%d]: window %s after a later window" % (where, i, row["window"]))
            last_t, last_w = row["t_s"], w
            h = row.get("latency_hist")
            if h and not (len(h["bucket_ns"]) == len(h["width_ns"]) == len(h["counts"])):
                problems.append("%s.timeline[%d]: latency_hist arrays differ in length" % (where, i))
        for k in names:
            if sums.get(k, 0) != rep["totals"][k]:
                problems.append("%s.totals[%s] = %d but the timeline sums to %d"
                                % (where, k, rep["totals"][k], sums.get(k, 0)))
        problems += check_touch_hist(where, (rep.get("postcopy") or {}).get("pass"))
        mig = rep.get("migration")
        if mig is not None:
            # dirty-log: the passes cover the migration window's rows exactly, so their counters sum to the window's
            rows = [r for r in rep["timeline"] if r["window"] == "migration"]
            if sum(it["rows"] for it in mig["iterations"]) != len(rows):
                problems.append("%s.migration: its iterations hold %d rows, the migration window %d"
                                % (where, sum(it["rows"] for it in mig["iterations"]), len(rows)))
            for k in names:
                want = sum(r["counters"].get(k, 0) for r in rows)
                got = sum(it["counters"].get(k, 0) for it in mig["iterations"])
                if want != got:
                    problems.append("%s.migration: counter %s sums to %d over the iterations, %d over the window"
                                    % (where, k, got, want))
            dur = sum(r["dt_s"] for r in rows)
            if not close(sum(it["duration_s"] for it in mig["iterations"]), dur):
                problems.append("%s.migration: the iterations last %g s, the window %g s"
                                % (where, sum(it["duration_s"] for it in mig["iterations"]), dur))
        for wname, win in rep["windows"].items():
            for m, v in win["metrics"].items():
                if m not in info:
                    problems.append("%s.windows.%s: metric %s missing from metric_info" % (where, wname, m))
                if v is None and m not in win["unavailable"]:
                    problems.append("%s.windows.%s: metric %s is null but not named in unavailable"
                                    % (where, wname, m))
    for arm in report["arms"]:
        reps = [r for r in report["repetitions"] if r["arm"] == arm["label"]]
        done = [r for r in reps if r["state"] == "completed"]
        if arm["repetitions"]["completed"] != len(done):
            problems.append("arm %s: completed = %d, but %d repetitions completed"
                            % (arm["label"], arm["repetitions"]["completed"], len(done)))
        if arm["repetitions"]["failed"] != sum(r["state"] == "failed" for r in reps):
            problems.append("arm %s: failed count disagrees with the repetitions" % arm["label"])
        for wname, win in arm["windows"].items():
            for m, st in win.items():
                if m not in info:
                    problems.append("arm %s window %s: metric %s missing from metric_info" % (arm["label"], wname, m))
                want = [r["windows"][wname]["metrics"][m] for r in done
                        if wname in r["windows"] and r["windows"][wname]["metrics"].get(m) is not None]
                if st["n"] != len(st["values"]) or len(want) != st["n"] or \
                        any(not close(a, b) for a, b in zip(want, st["values"])):
                    problems.append("arm %s window %s metric %s: values %s, repetitions say %s"
                                    % (arm["label"], wname, m, st["values"], want))
                    continue
                if st["n"]:
                    for key, val in (("median", median(want)), ("min", min(want)), ("max", max(want))):
                        if not close(st[key], val):
                            problems.append("arm %s window %s metric %s: %s is %s, expected %s"
                                            % (arm["label"], wname, m, key, st[key], val))
                elif st["median"] is not None:
                    problems.append("arm %s window %s metric %s: n = 0 but median is set" % (arm["label"], wname, m))
    return problems


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in argv[2:]:
        with open(path) as f:
            report = json.load(f)
        errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
        for e in errors[:20]:
            print("%s: %s: %s" % (path, "/".join(str(p) for p in e.path) or "(top)", e.message), file=sys.stderr)
        problems = [] if errors else check(report)
        for p in problems[:20]:
            print("%s: %s" % (path, p), file=sys.stderr)
        if errors or problems:
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
