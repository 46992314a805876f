#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The shape of a run report, its keys and their types, against a checked-in
one: a restructuring of the run engine must leave a report the same field
for field.

A shape maps each key to the shape of its value; an array's shape is the
merge of its elements' (every timeline row, every repetition); a scalar's
is its type. Maps keyed by a counter's or a metric's name (probes,
counters, totals, metrics, ...) are one entry "*": which counters a host
has, and which are null there, is the host's, not the engine's. A null
matches any type, for the same reason (a counter unavailable here, an
error only a failed run has).

Usage: report-shape.py SHAPE REPORT          (exit 0: the same shape)
       report-shape.py --write SHAPE REPORT  (writes REPORT's shape to SHAPE)
"""
import json
import sys

# maps whose keys are names of counters, metrics, knobs or vCPUs (run-1.schema.json's
# objects with free property names but for the windows, whose names are the scenario's)
NAMED = {"probes", "metric_info", "metrics", "unavailable", "counters", "totals", "knobs", "vcpu_patterns"}


def shape(v, named=False, arm_window=False):
    if isinstance(v, dict):
        if arm_window:
            return {k: shape(x, True) for k, x in v.items()}
        if named:
            m = None
            for x in v.values():
                m = merge(m, shape(x))
            return {"*": m}
        # an arm's windows map each window to a map of metric names
        return {k: shape(x, k in NAMED, k == "windows" and "repetitions" in v) for k, x in v.items()}
    if isinstance(v, list):
        m = None
        for x in v:
            m = merge(m, shape(x))
        return [m] if m is not None else []
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    return "string"


def merge(a, b):
    if a is None or a == "null":
        return b
    if b is None or b == "null":
        return a
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: merge(a.get(k), b.get(k)) for k in sorted(set(a) | set(b))}
    if isinstance(a, list) and isinstance(b, list):
        return [merge(a[0] if a else None, b[0] if b else None)] if a or b else []
    if a == b:
        return a
    ta, tb = (set(x.split("|")) if isinstance(x, str) else {json.dumps(x, sort_keys=True)} for x in (a, b))
    return "|".join(sorted(ta | tb))


def compare(where, want, got, problems, in_named=False):
    if want is None or got is None or want == "null" or got == "null":
        return
    if isinstance(want, dict) and isinstance(got, dict):
        for k in sorted(set(want) | set(got)):
            if k not in got:
                if not in_named:  # a field of a counter only some hosts have (a probe's reason)
                    problems.append("%s/%s: in the shape, not in the report" % (where, k))
            elif k not in want:
                problems.append("%s/%s: in the report, not in the shape" % (where, k))
            else:
                compare("%s/%s" % (where, k), want[k], got[k], problems, in_named or k == "*")
    elif isinstance(want, list) and isinstance(got, list):
        if want and got:
            compare(where + "[]", want[0], got[0], problems, in_named)
    elif want != got:
        problems.append("%s: %s in the shape, %s in the report" % (where, json.dumps(want), json.dumps(got)))


def main(argv):
    write = len(argv) > 1 and argv[1] == "--write"
    if write:
        argv = argv[1:]
    if len(argv) != 3:
        sys.exit(__doc__)
    with open(argv[2]) as f:
        got = shape(json.load(f))
    if write:
        with open(argv[1], "w") as f:
            json.dump(got, f, indent=1, sort_keys=True)
            f.write("\n")
        return 0
    with open(argv[1]) as f:
        want = json.load(f)
    problems = []
    compare("", want, got, problems)
    for p in problems:
        print("report-shape: %s: %s" % (argv[2], p), file=sys.stderr)
    if problems:
        print("report-shape: %s differs from %s in %d places; if the change is meant, rewrite the shape with "
              "--write and say why in the commit" % (argv[2], argv[1], len(problems)), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
