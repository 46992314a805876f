#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Golden tests for `snapbench compare --grid` (docs/compare.md#grids).

Each case runs the built snapbench on reports/testdata/grid-chunks.json (8
arms named by chunk and nr_pages, tests/compare/grid_fixture.py) or on
reports made from it here, from a copy of reports/testdata, and checks:

  - the exit code, stdout and stderr against
    reports/testdata/golden/grid-CASE.{out,err}.expected, byte for byte
    (a missing .expected file means that stream must be empty);
  - with --output: compare-grid.{txt,json,md,csv} each the same bytes as
    the matching --format on stdout; the JSON against
    reports/schema/compare-grid-1.schema.json; the CSV's rows one per table
    and cell; the text within 80 columns;
  - every cell against compare itself: `snapbench compare --json` of the
    cell's arm against its row's baseline gives the same medians, ratio, p
    and verdict for every metric of the grid (the grid reuses compare's
    statistics, never its own).

Usage: grid.py SNAPBENCH TESTDATA SCHEMA [--regenerate] [CASE...]
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    sys.exit("grid: python3-jsonschema is missing; run scripts/install-deps")

FIXTURE = "grid-chunks.json"
# name, arguments, expected exit code, checked in depth (--output files, schema, cells against compare)
CASES = [
    ("labels", ["--grid", "chunk,nr_pages", FIXTURE], 0, True),
    ("knobs-markdown", ["--grid", "chunk,tdp_mmu_prefetch_pages", FIXTURE, "--format", "markdown",
                        "--metric", "fault_pass_ms", "--metric", "set_spte_count"], 0, True),
    ("csv", ["--grid", "chunk,nr_pages", FIXTURE, "--format", "csv", "--metric", "fault_pass_ms"], 0, False),
    ("json", ["--grid", "chunk,nr_pages", FIXTURE, "--json", "--metric", "fault_pass_ms",
              "--metric", "set_spte_count"], 0, False),
    # rows from the reports' spec: two runs of the 2 MiB arms, one reading and one writing
    ("spec-rows", ["--grid", "spec.postcopy.access,nr_pages", "grid-2m-read.json", "grid-2m-write.json",
                   "--metric", "fault_pass_ms"], 0, True),
    # the baseline named by its column value: a report whose base arms carry nr_pages-base
    ("baseline-value", ["--grid", "chunk,nr_pages", "--grid-baseline", "base", "grid-named-base.json",
                        "--metric", "fault_pass_ms"], 0, True),
    # an arm whose repetitions all failed: its cell empty with a warning, the others compared
    ("failed-arm", ["--grid", "chunk,nr_pages", "grid-failed-arm.json", "--metric", "fault_pass_ms"], 0, False),
    ("err-one-name", ["--grid", "chunk", FIXTURE], 2, False),
    ("err-no-param", ["--grid", "size,nr_pages", FIXTURE], 2, False),
    ("err-two-on-a-cell", ["--grid", "spec.postcopy.access,nr_pages", FIXTURE], 2, False),
    ("err-baseline-value", ["--grid", "chunk,nr_pages", "--grid-baseline", "0", FIXTURE], 2, False),
    ("err-no-row-baseline", ["--grid", "chunk,nr_pages", "grid-named-base.json"], 2, False),
    ("err-format", ["--grid", "chunk,nr_pages", "--format", "html", FIXTURE], 2, False),
    ("err-with-baseline", ["--grid", "chunk,nr_pages", "--baseline", "label=x", FIXTURE], 2, False),
    ("err-no-reports", ["--grid", "chunk,nr_pages"], 2, False),
    ("err-baseline-alone", ["--grid-baseline", "0", FIXTURE], 2, False),
]

FORMATS = [("text", "compare-grid.txt"), ("json", "compare-grid.json"), ("markdown", "compare-grid.md"),
           ("csv", "compare-grid.csv")]


def fail(case, msg):
    raise AssertionError("%s: %s" % (case, msg))


def env():
    # the same bytes whatever the caller's terminal: UTF-8, no $COLUMNS
    e = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LANG", "LANGUAGE") and not k.startswith("LC_")}
    e["LC_ALL"] = "C.UTF-8"
    return e


def run(snapbench, testdata, args):
    return subprocess.run([snapbench, "compare"] + args, cwd=testdata, capture_output=True, text=True,
                          timeout=120, env=env())


def derived_reports(testdata):
    """The reports the spec-rows and baseline-value cases read, made from the fixture."""
    with open(os.path.join(testdata, FIXTURE)) as f:
        src = json.load(f)

    def only(keep, rename, rid, access):
        d = json.loads(json.dumps(src))
        d["id"] = rid
        d["spec"]["postcopy"]["access"] = access
        d["arms"] = [a for a in d["arms"] if keep(a["label"])]
        d["spec"]["arms"] = [a for a in d["spec"]["arms"] if keep(a["label"])]
        d["repetitions"] = [r for r in d["repetitions"] if keep(r["arm"])]
        for x in d["arms"] + d["spec"]["arms"]:
            x["label"] = rename(x["label"])
        for r in d["repetitions"]:
            r["arm"] = rename(r["arm"])
        return d

    two_m = lambda label: label.startswith("chunk-2M+")
    out = {
        "grid-2m-read.json": only(two_m, lambda l: l, "20261206T100000Z-0e0004", "read"),
        "grid-2m-write.json": only(two_m, lambda l: l, "20261206T110000Z-0e0005", "write"),
        "grid-named-base.json": only(lambda l: True, lambda l: l.replace("+base", "+nr_pages-base"),
                                     "20261206T120000Z-0e0006", "read"),
    }
    failed = only(lambda l: True, lambda l: l, "20261206T130000Z-0e0007", "read")
    for r in failed["repetitions"]:
        if r["arm"] == "chunk-2M+nr_pages-8":
            r["state"] = "failed"
            r["error"] = {"message": "made to fail for the test", "phase": "rep %d migration" % r["index"]}
    for a in failed["arms"]:
        if a["label"] == "chunk-2M+nr_pages-8":
            a["repetitions"] = {"total": 4, "completed": 0, "failed": 4}
    failed["state"] = "failed"
    out["grid-failed-arm.json"] = failed
    for name, d in out.items():
        with open(os.path.join(testdata, name), "w") as f:
            json.dump(d, f)


def check_cells_against_compare(case, snapbench, testdata, doc, reports):
    """Each cell's figures are what compare says of its arm against its row's baseline."""
    baselines = {a["row"]: a["label"] for a in doc["arms"] if a["column"] is None}
    runs = {(a["row"], a["column"]): a["runs"] for a in doc["arms"]}
    metrics = [t["metric"] for t in doc["tables"]]
    compared = 0
    for arm in doc["arms"]:
        if arm["column"] is None:
            continue
        files = [r for r in reports if json.load(open(os.path.join(testdata, r)))["id"] in arm["runs"]]
        args = ["--baseline", "label=" + baselines[arm["row"]], "--patched", "label=" + arm["label"], "--json"]
        for m in metrics:
            args += ["--metric", m]
        p = run(snapbench, testdata, args + files)
        if p.returncode not in (0, 3):
            fail(case, "compare of cell %s/%s: exit %d %s" % (arm["row"], arm["column"], p.returncode, p.stderr))
        want = {(m["window"], m["metric"]): m for m in json.loads(p.stdout)["metrics"]}
        for t in doc["tables"]:
            cell = [c for c in t["cells"] if c["row"] == arm["row"] and c["column"] == arm["column"]][0]
            m = want.get((t["window"], t["metric"]))
            if m is None:
                if cell["verdict"] is not None:
                    fail(case, "cell %s/%s has %s, compare has not" % (arm["row"], arm["column"], t["metric"]))
                continue
            got = (cell["baseline"]["median"], cell["patched"]["median"], cell["ratio"], cell["p"], cell["verdict"])
            exp = (m["baseline"]["median"], m["patched"]["median"], m["ratio"], m["test"]["p"], m["verdict"])
            close = all(a == b or (isinstance(a, float) and abs(a - b) <= 1e-9 * (abs(b) + 1)) for a, b in zip(got, exp))
            if not close:
                fail(case, "cell %s/%s %s: grid %s, compare %s" % (arm["row"], arm["column"], t["metric"], got, exp))
            compared += 1
        if runs[(arm["row"], arm["column"])] != arm["runs"]:
            fail(case, "arm %s listed twice" % arm["label"])
    if not compared:
        fail(case, "no cell was checked against compare")
    return compared


def check_outputs(case, snapbench, testdata, args, validator):
    outdir = tempfile.mkdtemp(prefix="compare-grid-")
    try:
        base = [a for i, a in enumerate(args) if a not in ("--format", "--json") and
                (i == 0 or args[i - 1] != "--format")]
        p = run(snapbench, testdata, base + ["--output", os.path.join(outdir, "o"), "-q"])
        if p.returncode != 0 or p.stdout:
            fail(case, "--output -q: exit %d, stdout %r, stderr %s" % (p.returncode, p.stdout, p.stderr))
        for fmt, fname in FORMATS:
            with open(os.path.join(outdir, "o", fname), encoding="utf-8") as f:
                written = f.read()
            shown = run(snapbench, testdata, base + ["--format", fmt]).stdout
            if written != shown:
                fail(case, "%s differs from --format %s on stdout" % (fname, fmt))
            if fmt == "text":
                wide = [l for l in written.splitlines() if len(l) > 80]
                if wide:
                    fail(case, "compare-grid.txt has lines beyond 80 columns: %s" % wide[:2])
            if fmt == "json":
                doc = json.loads(written)
                errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
                if errors:
                    fail(case, "compare-grid.json does not match the schema: %s at %s"
                         % (errors[0].message, "/".join(map(str, errors[0].path))))
            if fmt == "csv":
                rows = list(csv.reader(io.StringIO(written)))
                n_cells = sum(len(t["cells"]) for t in doc["tables"])
                if len(rows) != 1 + n_cells:
                    fail(case, "compare-grid.csv has %d rows, want a header and %d cells" % (len(rows), n_cells))
        reports = [a for a in base if a.endswith(".json")]
        return check_cells_against_compare(case, snapbench, testdata, doc, reports)
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


def run_case(snapbench, testdata, validator, golden, name, args, want_rc, deep, regenerate):
    p = run(snapbench, testdata, args)
    got = {"out": p.stdout or None, "err": p.stderr or None}
    if p.returncode != want_rc:
        fail(name, "exit code %d, expected %d; stderr:\n%s" % (p.returncode, want_rc, p.stderr))
    for key in ("out", "err"):
        path = os.path.join(golden, "grid-%s.%s.expected" % (name, key))
        if regenerate:
            if got[key] is None:
                if os.path.exists(path):
                    os.unlink(path)
            else:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(got[key])
            continue
        want = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if got[key] != want:
            diff = subprocess.run(["diff", "-u", path if want is not None else "/dev/null", "-"],
                                  input=got[key] or "", capture_output=True, text=True).stdout
            fail(name, "%s differs from %s:\n%s" % (key, path, diff[:6000]))
    if "--json" in args:
        validator.validate(json.loads(p.stdout))
    if deep and not regenerate:
        return check_outputs(name, snapbench, testdata, args, validator)
    return 0


def main(argv):
    regenerate = "--regenerate" in argv
    argv = [a for a in argv if a != "--regenerate"]
    if len(argv) < 4:
        sys.exit(__doc__)
    snapbench, source_testdata, schema_path = (os.path.abspath(a) for a in argv[1:4])
    only = set(argv[4:])
    work = tempfile.mkdtemp(prefix="compare-grid-data-")
    testdata = os.path.join(work, "testdata")
    shutil.copytree(source_testdata, testdata, ignore=shutil.ignore_patterns("golden", "store"))
    derived_reports(testdata)
    with open(schema_path) as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    golden = os.path.join(source_testdata, "golden")
    failed = ran = 0
    try:
        for name, args, rc, deep in CASES:
            if only and name not in only:
                continue
            ran += 1
            try:
                cells = run_case(snapbench, testdata, validator, golden, name, args, rc, deep, regenerate)
                print("ok %s%s" % (name, " (%d cell figures agree with compare)" % cells if cells else ""))
            except (AssertionError, json.JSONDecodeError, jsonschema.ValidationError, KeyError, ValueError,
                    OSError) as e:
                failed += 1
                print("FAIL %s" % e)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if regenerate:
        print("regenerated %d cases in %s: review them with git diff before committing" % (ran, golden))
    print("%d of %d cases passed" % (ran - failed, ran))
    return 1 if failed or not ran else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
