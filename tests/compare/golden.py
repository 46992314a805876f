#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Golden tests for `snapbench compare`.

Each case runs the built snapbench on the fixture reports in reports/testdata
(from that directory, so paths in the output are stable) and checks:

  - the exit code;
  - stdout, stderr, compare.json, compare.txt and compare.md against
    reports/testdata/golden/CASE.{out,err,json,txt,md}.expected, byte for byte
    (a missing .expected file means that stream must be empty / not written);
  - compare.json against reports/schema/compare-1.schema.json;
  - every SVG written parses as XML and has the structure compare draws
    (title, axes, one dot per repetition, two series per timeline panel,
    coordinates inside the view box).

Usage: golden.py SNAPBENCH TESTDATA SCHEMA [--regenerate] [CASE...]
--regenerate rewrites the .expected files from the current output: review
the diff (git diff reports/testdata/golden) before committing it.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

try:
    import jsonschema
except ImportError:
    sys.exit("golden: python3-jsonschema is missing; run scripts/install-deps")

SVG_NS = "{http://www.w3.org/2000/svg}"

# name, arguments, expected exit code, write --output files
CASES = [
    ("stock-vs-perm", ["stock.json", "perm-upgrade.json"], 0, True),
    ("regressed", ["--baseline", "stock.json", "--patched", "regressed.json"], 3, True),
    ("two-arms-windows", ["two-arms.json", "--window", "pre", "--window", "snapshot"], 3, True),
    ("small-n", ["small-a.json", "small-b.json"], 0, True),
    ("store-labels", ["--store", "store", "--baseline", "label=stock", "--patched", "label=perm-upgrade"], 0, True),
    ("store-ids-markdown", ["--store", "store", "--baseline", "id=20261110T080000Z-0b0001,id=20261111T080000Z-0b0002",
                            "--patched", "id=20261112T080000Z-0b0003", "--format", "markdown",
                            "--metric", "pf_per_s", "--metric", "latency_p99_ns"], 0, False),
    ("aa-alternate", ["--store", "store", "--aa", "label=stock"], 0, True),
    ("aa-halves-json", ["--aa", "stock.json", "--aa-split", "halves", "--json", "--metric", "pf_per_s"], 0, False),
    ("forced", ["--force", "stock.json", "read64.json", "--metric", "pf_per_s", "--metric", "tlb_per_s"], 0, True),
    # tlb/s is 0 in every repetition of both sides in the pre window: out of the Markdown and the plots ...
    ("zero-left-out", ["--force", "perm-upgrade.json", "read64.json", "--window", "pre", "--window", "snapshot",
                       "--metric", "pf_per_s", "--metric", "tlb_per_s"], 0, True),
    # ... unless --all
    ("zero-all", ["--force", "perm-upgrade.json", "read64.json", "--window", "pre", "--all",
                  "--metric", "pf_per_s", "--metric", "tlb_per_s"], 0, True),
    ("thresholds", ["--threshold", "80", "--threshold", "latency_p50_ns=20", "--metric", "pf_per_s",
                    "--metric", "latency_*", "--alpha", "0.01", "--bootstrap", "500",
                    "stock.json", "perm-upgrade.json"], 0, True),
    ("labels-in-given-reports", ["--baseline", "label=stock", "--patched", "label=slow-patch",
                                 "stock.json", "regressed.json", "--metric", "latency_p99_ns", "-q"], 3, False),
    # a run in a host VM under TCG (emulated timing) against one under KVM: refused, and forced
    ("tcg-vs-native-forced", ["--force", "tcg-host-vm.json", "native.json", "--metric", "pf_per_s",
                              "--metric", "latency_p99_ns", "--metric", "latency_samples"], 0, True),
    # an older report's kernel arms under TCG on both sides: comparable, the time-based figures marked
    ("kernel-arms-tcg", ["kernel-retried.json", "--metric", "pf_per_s", "--metric", "latency_samples"], 0, True),
    # invalid input: exit 2 and a message naming the input and the fix
    ("err-tcg-vs-native", ["tcg-host-vm.json", "native.json"], 2, False),
    ("err-incomparable", ["stock.json", "read64.json"], 2, False),
    ("err-not-json", ["bad/not-json.json", "stock.json"], 2, False),
    ("err-other-schema", ["bad/other-schema.json", "stock.json"], 2, False),
    ("err-string-metric", ["bad/string-metric.json", "stock.json"], 2, False),
    ("err-unknown-metric", ["--metric", "nope", "stock.json", "perm-upgrade.json"], 2, False),
    ("err-no-such-label", ["--baseline", "label=nope", "--patched", "label=stock", "stock.json"], 2, False),
    ("err-needs-label", ["two-arms.json", "stock.json"], 2, False),
    ("err-alpha", ["--alpha", "1.5", "stock.json", "perm-upgrade.json"], 2, False),
    ("err-same-reps", ["--baseline", "stock.json", "--patched", "stock.json"], 2, False),
    ("err-missing-file", ["missing.json", "stock.json"], 2, False),
    ("err-no-store", ["--store", "no-such-store", "--baseline", "label=a", "--patched", "label=b"], 2, False),
]

OUTPUTS = [("out", None), ("err", None), ("json", "compare.json"), ("txt", "compare.txt"), ("md", "compare.md")]


def fail(case, msg):
    raise AssertionError("%s: %s" % (case, msg))


def number_attrs(el):
    for k in ("x", "y", "width", "height", "cx", "cy", "r", "x1", "y1", "x2", "y2"):
        if k in el.attrib:
            yield k, float(el.attrib[k])
    if "points" in el.attrib:
        for pair in el.attrib["points"].split():
            x, y = pair.split(",")
            yield "points.x", float(x)
            yield "points.y", float(y)


def check_svg_common(case, path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail(case, "%s is not well-formed XML: %s" % (path, e))
    if root.tag != SVG_NS + "svg":
        fail(case, "%s: root element is %s, not svg" % (path, root.tag))
    w, h = float(root.attrib["width"]), float(root.attrib["height"])
    if root.attrib.get("viewBox") != "0 0 %d %d" % (w, h):
        fail(case, "%s: viewBox %r does not match %gx%g" % (path, root.attrib.get("viewBox"), w, h))
    if root[0].tag != SVG_NS + "title" or not (root[0].text or "").strip():
        fail(case, "%s: the first child is not a <title> with text" % path)
    for el in root.iter():
        for k, v in number_attrs(el):
            limit = w if k.endswith("x") or k in ("x1", "x2", "cx", "width") else h
            if not (-1 <= v <= limit + 1):
                fail(case, "%s: <%s %s=%g> lies outside the %gx%g view box"
                     % (path, el.tag.replace(SVG_NS, ""), k, v, w, h))
    texts = [t.text for t in root.iter(SVG_NS + "text")]
    if not texts or not texts[0]:
        fail(case, "%s: no heading text" % path)
    return root


def group(root, gid):
    for g in root.iter(SVG_NS + "g"):
        if g.attrib.get("id") == gid:
            return g
    return None


def check_metric_svg(case, path, metric):
    root = check_svg_common(case, path)
    for side in ("baseline", "patched"):
        g = group(root, "side-" + side)
        if g is None:
            fail(case, "%s: no group side-%s" % (path, side))
        dots = list(g.iter(SVG_NS + "circle"))
        if len(dots) != metric[side]["n"]:
            fail(case, "%s: %d dots for %s, but n = %d" % (path, len(dots), side, metric[side]["n"]))
        if len(list(g.iter(SVG_NS + "rect"))) != 1:
            fail(case, "%s: %s has no box" % (path, side))
    axis = group(root, "y-axis")
    if axis is None or len(list(axis.iter(SVG_NS + "text"))) < 2:
        fail(case, "%s: the y axis has fewer than two tick labels" % path)
    # a change beyond 10x: decades, so that the smaller side's box is not squeezed onto 0
    ratio = metric.get("ratio")
    orders = (ratio is not None and ratio > 0 and (ratio > 10 or ratio < 0.1)) or metric.get("from_zero")
    texts = " ".join(t.text or "" for t in root.iter(SVG_NS + "text"))
    if orders and min(min(metric[s]["values"]) for s in ("baseline", "patched")) >= 0:
        ticks = [float(t.text.replace(",", "")) for t in axis.iter(SVG_NS + "text")]
        decades = all(t > 0 and abs(math.log10(t) - round(math.log10(t))) < 1e-9 for t in ticks)
        if "log scale" not in texts or not decades:
            fail(case, "%s: a change of %s drawn without a log axis (ticks %s)" % (path, ratio, ticks))
    elif "log scale" in texts:
        fail(case, "%s: a log axis for a change of %s" % (path, ratio))


def check_timeline_svg(case, path, want_invalidations, want_kvm=True, reps=None):
    """want_kvm: the reports have KVM's pf and tlb counters (under TCG they are unavailable: no series);
    reps: each side's repetitions (baseline, patched): a series of each in every panel"""
    root = check_svg_common(case, path)
    panels = (["panel-pf", "panel-tlb"] if want_kvm else []) + (["panel-invalidations"] if want_invalidations else [])
    for panel in [] if want_kvm else ["panel-pf", "panel-tlb"]:
        g = group(root, panel)
        if g is not None and list(g.iter(SVG_NS + "polyline")):
            fail(case, "%s: %s has series, but the reports have no such counter" % (path, panel))
    if not want_invalidations and group(root, "panel-invalidations") is not None:
        fail(case, "%s: an invalidations panel, but the reports have no bpf.invalidations" % path)
    for panel in panels:
        g = group(root, panel)
        if g is None:
            fail(case, "%s: no %s" % (path, panel))
        lines = list(g.iter(SVG_NS + "polyline"))
        for side, n in zip(("baseline", "patched"), reps or (None, None)):
            sg = group(g, "series-" + side)
            got = len(list(sg.iter(SVG_NS + "polyline"))) if sg is not None else 0
            if got < 1 or (n is not None and got != n):
                fail(case, "%s: %s has %d series of the %s side, expected one per repetition (%s)"
                     % (path, panel, got, side, n))
        for pl in lines:
            if len(pl.attrib["points"].split()) < 2:
                fail(case, "%s: a %s series has fewer than two points" % (path, panel))


def read(path):
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return f.read()


def run_case(snapbench, testdata, validator, golden, name, args, want_rc, with_output, regenerate):
    outdir = tempfile.mkdtemp(prefix="compare-golden-")
    try:
        argv = [snapbench, "compare"] + args + (["--output", os.path.join(outdir, "o")] if with_output else [])
        # the same bytes whatever the caller's terminal: UTF-8, no $COLUMNS (80 columns off a terminal)
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LANG", "LANGUAGE") and
               not k.startswith("LC_")}
        env["LC_ALL"] = "C.UTF-8"
        p = subprocess.run(argv, cwd=testdata, capture_output=True, text=True, timeout=120, env=env)
        got = {"out": p.stdout or None, "err": p.stderr or None}
        for key, fname in OUTPUTS[2:]:
            got[key] = read(os.path.join(outdir, "o", fname)) if with_output else None

        if p.returncode != want_rc:
            fail(name, "exit code %d, expected %d; stderr:\n%s" % (p.returncode, want_rc, p.stderr))
        for key, _ in OUTPUTS:
            exp_path = os.path.join(golden, "%s.%s.expected" % (name, key))
            if regenerate:
                if got[key] is None:
                    if os.path.exists(exp_path):
                        os.unlink(exp_path)
                else:
                    with open(exp_path, "w", encoding="utf-8") as f:
                        f.write(got[key])
                continue
            want = read(exp_path)
            if got[key] != want:
                diff = subprocess.run(["diff", "-u", exp_path if want is not None else "/dev/null", "-"],
                                      input=got[key] or "", capture_output=True, text=True).stdout
                fail(name, "%s differs from %s:\n%s" % (key, exp_path, diff[:6000]))

        if not with_output:
            if "--json" in args and got["out"]:
                validator.validate(json.loads(got["out"]))
            return
        doc = json.loads(got["json"])
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        if errors:
            fail(name, "compare.json does not match the schema: %s at %s"
                 % (errors[0].message, "/".join(map(str, errors[0].path))))
        if doc["exit_code"] != want_rc:
            fail(name, "compare.json says exit_code %d, the process exited %d" % (doc["exit_code"], want_rc))
        if "--format" not in args and "--json" not in args and got["out"] != got["txt"]:
            fail(name, "stdout and compare.txt differ")
        svgs = sorted(f for f in os.listdir(os.path.join(outdir, "o")) if f.endswith(".svg"))
        # a metric 0 in every repetition of both sides has no plot, unless --all
        plotted = [m for m in doc["metrics"]
                   if "--all" in args or any(v != 0 for side in ("baseline", "patched") for v in m[side]["values"])]
        want_svgs = sorted(["%s-%s.svg" % (m["window"], m["metric"]) for m in plotted] + ["timeline.svg"])
        if svgs != want_svgs:
            fail(name, "plots written %s, expected %s" % (svgs, want_svgs))
        md = got["md"]
        for f in want_svgs:
            if "](%s)" % f not in md:
                fail(name, "compare.md does not link %s" % f)
        for m in doc["metrics"]:
            if m not in plotted and ("](%s-%s.svg)" % (m["window"], m["metric"])) in md:
                fail(name, "compare.md links the plot of %s, which is 0 everywhere" % m["metric"])
        # the order of compare.md: the kernels (and the timing) up front, tables, warnings, plots, then the
        # notes and skipped metrics folded, when there are any
        folded = any(m["notes"] for m in doc["metrics"]) or doc["skipped"]
        at = [md.find(h) for h in ("Kernel: ", "#### Window", "**Warnings**" if doc["warnings"] else "#### Window",
                                   "**Plots**") + (("<details>", "</details>") if folded else ())]
        if -1 in at or at != sorted(at):
            fail(name, "compare.md is not kernels, tables, warnings, plots, <details>: positions %s" % at)
        if not folded and "<details>" in md:
            fail(name, "compare.md folds nothing in <details>")
        if any(m["emulated"] for m in doc["metrics"]) and md.find("Timing emulated") > md.find("#### Window"):
            fail(name, "compare.md does not say the timing is emulated before its tables")
        for m in plotted:
            check_metric_svg(name, os.path.join(outdir, "o", "%s-%s.svg" % (m["window"], m["metric"])), m)
        # a third panel exactly when an input's timeline counts bpf.invalidations
        has_bpf = False
        for side in ("baseline", "patched"):
            for rep in doc["inputs"][side]["reports"]:
                with open(os.path.join(testdata, rep["path"])) as f:
                    run = json.load(f)
                has_bpf |= any("bpf.invalidations" in row["counters"]
                               for r in run["repetitions"] for row in r["timeline"])
        check_timeline_svg(name, os.path.join(outdir, "o", "timeline.svg"), has_bpf,
                           reps=(doc["inputs"]["baseline"]["repetitions"], doc["inputs"]["patched"]["repetitions"]))
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


def main(argv):
    regenerate = "--regenerate" in argv
    argv = [a for a in argv if a != "--regenerate"]
    if len(argv) < 4:
        sys.exit(__doc__)
    snapbench, source_testdata, schema_path = (os.path.abspath(a) for a in argv[1:4])
    only = set(argv[4:])
    # compare --store rewrites the store's label index (.labels.json, an inode and mtime cache): run on a
    # copy, so the tests leave the source tree as they found it
    work = tempfile.mkdtemp(prefix="compare-golden-data-")
    testdata = os.path.join(work, "testdata")
    shutil.copytree(source_testdata, testdata, ignore=shutil.ignore_patterns("golden"))
    with open(schema_path) as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    golden = os.path.join(source_testdata, "golden")
    os.makedirs(golden, exist_ok=True)
    failed = 0
    ran = 0
    try:
        for name, args, rc, with_output in CASES:
            if only and name not in only:
                continue
            ran += 1
            try:
                run_case(snapbench, testdata, validator, golden, name, args, rc, with_output, regenerate)
                print("ok %s" % name)
            except (AssertionError, json.JSONDecodeError, jsonschema.ValidationError, KeyError, ValueError) as e:
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
