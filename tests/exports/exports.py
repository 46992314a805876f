#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The export formats of show and compare (docs/exports.md) on the report
fixtures of reports/testdata/, read back with the tools that consume them.

    exports.py SNAPBENCH SNAPBENCHD TESTDATA CASE [JUNIT_XSD]

CASE is one of
  show-csv        show --format csv, parsed with Python's csv module: one
                  row per repetition x window x metric, the figures those of
                  the report's window summaries;
  show-metrics    show --format prometheus checked by promtool check metrics,
                  show --format openmetrics by prometheus_client's strict
                  OpenMetrics parser, both holding the report's figures under
                  the documented names;
  compare-csv     compare --format csv: per metric and side the statistics
                  computed here from the reports' repetitions;
  compare-junit   compare --format junit valid against JUNIT_XSD (xmllint),
                  a testcase per window and metric, failures and skips as
                  the verdicts say, the figures in the properties;
  service-metrics snapbenchd's metrics file (--metrics-file) on a store of
                  the fixtures: promtool check metrics passes it, and it holds
                  the runs by state, the queue's length and each label's
                  newest completed run with its medians; a run that ends
                  (one failing its preflight: no QEMU) has it rewritten;
  service-scrape  the same file read by a real node_exporter's textfile
                  collector (Debian's prometheus-node-exporter, on a
                  loopback port of its own): scraped without error, every
                  sample of the file in the scrape with its value;
  formats         unknown --format values are refused naming the value and
                  the formats there are.

show asks snapbenchd: the test starts one (it starts no QEMU unless a run is
submitted) on a private socket whose results store holds the fixtures.
Expected figures are computed from the fixture JSON, never copied
from an output. Exits 77 naming what is missing when promtool,
prometheus_client or xmllint is not installed.
"""

import copy
import csv
import io
import json
import math
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import xml.etree.ElementTree as ET

MIGRATING = ("dirty-log", "postcopy-restore")
# the documented figures of a migration beside its window summary (docs/exports.md)
PASS_FIELDS = [("start_s", "s"), ("duration_s", "s"), ("complete", "1"), ("rows", "1"), ("pages_sent", "1"),
               ("dirty_pages", "1"), ("dirty_pages_per_s", "1/s")]
POSTCOPY_FIELDS = [("started_s", "s"), ("switchover_s", "s"), ("pass_started_s", "s"), ("chunk_bytes", "B"),
                   ("pass.ms", "ms"), ("pass.vcpus", "1"), ("pass.pages", "1"), ("pass.bytes", "B"),
                   ("pass.mismatches", "1"), ("postcopy_requests", "1")]


UFFD_RESTORE_FIELDS = [("region_bytes", "B"), ("chunk_bytes", "B"), ("pages", "1"), ("pass_ms", "ms"),
                       ("uffd_requests", "1"), ("uffd_woken", "1"), ("uffd_bytes", "B"), ("mismatches", "1"),
                       ("kvm.pf_taken", "1"), ("kvm.pf_fixed", "1"), ("kvm.pf_spurious", "1"),
                       ("kvm.pf_prefetched", "1")]


def report_windows(report):
    """pre, the scenario's window (migration for the migrating scenarios, steady for numa-hinting, fault-in
    for uffd-restore, else snapshot), post."""
    scenario = report.get("spec", {}).get("scenario")
    action = "migration" if scenario in MIGRATING else "steady" if scenario == "numa-hinting" else \
        "fault-in" if scenario == "uffd-restore" else "snapshot"
    return ["pre", action, "post"]


def counter_reason(report, counter):
    """Why a counter is not measured (its probe entry, else its family's), or None."""
    probes = report.get("probes", {})
    p = probes.get(counter) or probes.get(counter.rsplit(".", 1)[0])
    if p is None or p.get("available"):
        return None
    return p.get("reason") or "no probe"


def migration_figures(report, rep):
    """[{name, field, unit, value, pass, counter, start_s, duration_s}] of a repetition's migration or
    userfaultfd restore (the figures of the scenario's window); value None: unavailable (the exports give a
    reason)."""
    out = []
    for it in (rep.get("migration") or {}).get("iterations") or []:
        span = {"pass": it["pass"], "start_s": it["start_s"], "duration_s": it["duration_s"]}
        for field, unit in PASS_FIELDS:
            v = it.get(field)
            out.append(dict(span, name="pass.%d.%s" % (it["pass"], field), field=field, unit=unit,
                            value=None if v is None else float(v), counter=None))
        for counter, v in it.get("counters", {}).items():
            out.append(dict(span, name="pass.%d.counters.%s" % (it["pass"], counter), field="counters." + counter,
                            unit="ns" if counter.endswith("_ns") else "1", counter=counter,
                            value=None if counter_reason(report, counter) else float(v)))
    pc = rep.get("postcopy")
    if pc:
        win = rep["windows"].get("migration", {})
        for field, unit in POSTCOPY_FIELDS:
            v = (pc.get("pass") or {}).get(field[5:]) if field.startswith("pass.") else pc.get(field)
            out.append({"name": "postcopy." + field, "field": field, "unit": unit, "pass": None, "counter": None,
                        "value": None if v is None else float(v), "start_s": win.get("start_s"),
                        "duration_s": win.get("duration_s")})
    ur = rep.get("uffd_restore")
    if ur:
        win = rep["windows"].get("fault-in", {})
        for field, unit in UFFD_RESTORE_FIELDS:
            v = (ur.get("kvm") or {}).get(field[4:]) if field.startswith("kvm.") else ur.get(field)
            out.append({"name": "uffd_restore." + field, "field": field, "unit": unit, "pass": None,
                        "counter": None, "group": "uffd_restore", "value": None if v is None else float(v),
                        "start_s": win.get("start_s"), "duration_s": win.get("duration_s")})
    return out
HOSTILE_LABEL = 'evil, "quoted" \x1b[2J<&>\u00e9'
HOSTILE_SHOWN = 'evil, "quoted" ?[2J<&>\u00e9'  # controls as '?', UTF-8 kept


def log(*args):
    print("exports:", *args, flush=True)


def fail(msg):
    print("exports: FAIL:", msg, flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def skip(what):
    print("exports: SKIP: %s is not installed (scripts/install-deps installs it)" % what, flush=True)
    sys.exit(77)


def same(a, b):
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)


def load(testdata, name):
    with open(os.path.join(testdata, name)) as f:
        return json.load(f)


def relabel(report, old, new):
    """The report with arm old renamed new everywhere compare and show read it."""
    r = copy.deepcopy(report)
    for arm in r["arms"]:
        if arm["label"] == old:
            arm["label"] = new
    for arm in r["spec"].get("arms", []):
        if arm.get("label") == old:
            arm["label"] = new
    for rep in r["repetitions"]:
        if rep["arm"] == old:
            rep["arm"] = new
    return r


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def run(argv, rc=None):
    # bytes, decoded here: text mode would turn the CSV's CRLF into LF
    p = subprocess.run(argv, capture_output=True)
    p.stdout = p.stdout.decode("utf-8", errors="surrogateescape")
    p.stderr = p.stderr.decode("utf-8", errors="surrogateescape")
    if rc is not None and p.returncode != rc:
        fail("%s: exit %d, expected %d\nstdout:\n%s\nstderr:\n%s" % (argv, p.returncode, rc, p.stdout, p.stderr))
    return p


class Store:
    """A snapbenchd of our own, serving a results store that holds the given reports."""

    def __init__(self, snapbenchd, tmp, reports, args=()):
        self.state = os.path.join(tmp, "state")
        self.sock = os.path.join(tmp, "snapbenchd.sock")
        for report in reports:
            d = os.path.join(self.state, "runs", report["id"])
            os.makedirs(d)
            write_json(os.path.join(d, "report.json"), report)
        self.log = open(os.path.join(tmp, "snapbenchd.log"), "w+")
        self.proc = subprocess.Popen([snapbenchd, "--foreground", "--socket", self.sock, "--state-dir", self.state,
                                      "--group", "root"] + list(args), stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.log.seek(0)
                fail("snapbenchd did not start listening:\n" + self.log.read())
            time.sleep(0.05)

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()

    def show(self, snapbench, run_id, fmt):
        p = run([snapbench, "show", "--socket", self.sock, "--format", fmt, run_id], rc=0)
        said = "snapbench show: KCIDB JSON of %s bytes written\n" % format(len(p.stdout.encode()), ",") \
            if fmt == "kcidb" else ""  # KCIDB's size is said, nothing else
        check(p.stderr == said, "show --format %s wrote to stderr: %s" % (fmt, p.stderr))
        return p.stdout


def metric_unit(report, name):
    info = report.get("metric_info", {})
    if name in info:
        return info[name]["unit"]
    base = name.split(".", 1)[0]
    return info.get(base, {}).get("unit", "")


def timing_emulated(report, arm=None):
    """reports/timing.h, independently: accel.timing, else a kernel arm's host VM under TCG, else native."""
    accel = report.get("accel")
    if accel:
        return accel["timing"] == "emulated"
    for a in report.get("arms", []):
        if arm is None or a["label"] == arm:
            if ((a.get("kernel") or {}).get("host_vm") or {}).get("accel") == "tcg":
                return True
    return False


def time_based(name, unit):
    """A time, a rate or a latency (docs/compare.md#emulated-timing)."""
    if unit:
        return unit in ("ns", "us", "\u00b5s", "ms", "s") or unit.endswith("/s")
    base = name.split(".", 1)[0]
    return base.endswith(("_per_s", "_ns", "_ms", "_s"))


def csv_rows(text, what):
    check(text.endswith("\r\n"), "%s: the last record has no CRLF" % what)
    check("\n" not in text.replace("\r\n", ""), "%s: a line ends in LF, not CRLF (RFC 4180)" % what)
    return list(csv.reader(io.StringIO(text, newline="")))


# ---- show --format csv ----

def expected_show_rows(report, shown_label=None):
    rows = []
    for rep in report["repetitions"]:
        for w in report_windows(report):
            win = rep.get("windows", {}).get(w)
            if not win:
                continue
            for name, value in win["metrics"].items():
                why = win.get("unavailable", {}).get(name, "not measured") if value is None else ""
                emulated = timing_emulated(report, rep["arm"]) and time_based(name, metric_unit(report, name))
                rows.append([report["id"], shown_label or rep["arm"], str(rep["index"]), rep["state"], w, name,
                             metric_unit(report, name), value, why, "true" if emulated else "false"])
            if w == report_windows(report)[1]:
                for f in migration_figures(report, rep):
                    emulated = timing_emulated(report, rep["arm"]) and time_based(f["name"], f["unit"])
                    rows.append([report["id"], shown_label or rep["arm"], str(rep["index"]), rep["state"], w,
                                 f["name"], f["unit"], f["value"], None, "true" if emulated else "false"])
    return rows


def check_show_csv(text, report, what, shown_label=None):
    rows = csv_rows(text, what)
    check(rows[0] == ["run", "arm", "repetition", "state", "window", "metric", "unit", "value", "unavailable",
                      "emulated"], "%s: header %s" % (what, rows[0]))
    want = expected_show_rows(report, shown_label)
    check(len(rows) - 1 == len(want), "%s: %d rows, the report has %d repetition x window x metric figures"
          % (what, len(rows) - 1, len(want)))
    nulls = 0
    for got, exp in zip(rows[1:], want):
        check(len(got) == 10, "%s: row %s has %d fields" % (what, got, len(got)))
        # a long reason is written in one row, the later ones say "as row N" (N counts the header as 1)
        ref = re.fullmatch(r"as row (\d+)", got[8])
        if ref and 1 < int(ref.group(1)) <= len(rows) and len(exp[8] or "") >= 120:
            got = got[:8] + [rows[int(ref.group(1)) - 1][8]] + got[9:]
        check(got[:7] == exp[:7] and (exp[8] is None or got[8] == exp[8]) and got[9] == exp[9],
              "%s: row %s, expected %s" % (what, got, exp))
        if exp[7] is None:
            nulls += 1
            check(got[7] == "" and got[8], "%s: an unavailable figure needs an empty value and a reason: %s"
                  % (what, got))
        else:
            check(float(got[7]) == float(exp[7]), "%s: %s %s rep %s: %s, the report has %r"
                  % (what, exp[4], exp[5], exp[2], got[7], exp[7]))
    figures = sum(1 for r in want if r[5].startswith(("pass.", "postcopy.", "uffd_restore.")))
    check(report_windows(report)[1] not in ("migration", "fault-in") or figures,
          "%s: no row of the migration's or restore's figures" % what)
    log("%s: %d rows match the report's window summaries and %d its migration's or restore's figures (%d unavailable with "
        "their reason)" % (what, len(want) - figures, figures, nulls))


def hostile_stock(testdata):
    """stock.json as another run whose arm label needs quoting and holds ESC."""
    r = relabel(load(testdata, "stock.json"), "stock", HOSTILE_LABEL)
    r["id"] = "20261102T100000Z-0bad01"
    return r


SHOW_FIXTURES = ("stock.json", "two-arms.json", "dirty-log.json", "postcopy.json", "kernel-retried.json",
                 "numa-hinting.json", "tcg-host-vm.json", "native.json", "uffd-restore.json")


def case_show_csv(snapbench, snapbenchd, testdata, tmp):
    reports = [load(testdata, n) for n in SHOW_FIXTURES] + [hostile_stock(testdata)]
    store = Store(snapbenchd, tmp, reports)
    try:
        for report, what in zip(reports, SHOW_FIXTURES):
            check_show_csv(store.show(snapbench, report["id"], "csv"), report, what)
        text = store.show(snapbench, reports[-1]["id"], "csv")
    finally:
        store.close()
    check("\x1b" not in text, "a control from the report reached the CSV")
    check('"evil, ""quoted"" ?[2J<&>\u00e9"' in text, "the label is not quoted per RFC 4180:\n%s" % text[:400])
    check_show_csv(text, reports[-1], "a label with a comma, quotes and ESC", shown_label=HOSTILE_SHOWN)


# ---- show --format openmetrics / prometheus ----

def family_of_metric(metric, prefix="snapbench_"):
    """The documented mapping (docs/exports.md): name, extra label, divisor."""
    base, _, sub = metric.partition(".")
    extra = None
    if sub:
        extra = ("reason" if "host_tlb_flush" in base else "cause", sub)
    divisor = 1
    if base.endswith("_per_s"):
        stem, suffix = base[:-6], "_per_second"
    elif base.endswith("_ns"):
        stem, suffix, divisor = base[:-3], "_seconds", 1e9
    elif base.endswith("_ms"):
        stem, suffix, divisor = base[:-3], "_seconds", 1e3
    elif base.endswith("_s"):
        stem, suffix = base[:-2], "_seconds"
    elif base.endswith("_count"):
        stem, suffix = base[:-6], ""
    else:
        stem, suffix = base, ""
    name = prefix + stem + ("_by_" + extra[0] if extra else "") + suffix
    return name, extra, divisor


def family_of_figure(f):
    """A figure's family: snapbench_migration_pass_FIELD, snapbench_migration_postcopy_FIELD,
    snapbench_uffd_restore_FIELD."""
    group = "pass" if f["pass"] is not None else f.get("group", "postcopy")
    prefix = "snapbench_uffd_restore_" if group == "uffd_restore" else "snapbench_migration_%s_" % group
    if f["counter"]:
        name, extra, divisor = family_of_counter(f["counter"], prefix)
        return name, extra, divisor
    field = f["field"]
    if field.startswith(group + "_"):
        field = field[len(group) + 1:]
    return family_of_metric(field.replace(".", "_"), prefix)


def family_of_counter(counter, prefix="snapbench_"):
    """A counter's family, its extra label and divisor: time in ns as seconds (bpf.clear_dirty_log_ns)."""
    parts = counter.split(".", 2)
    ns = parts[min(1, len(parts) - 1)].endswith("_ns")
    if ns:
        parts[1] = parts[1][:-3]
    name = prefix + "_".join(parts[:2])
    unit, divisor = ("_seconds", 1e9) if ns else ("", 1)
    if len(parts) == 3:
        if parts[0] == "guest" and parts[1] == "ops" and parts[2].startswith("vcpu"):
            return name + "_by_vcpu" + unit, ("vcpu", parts[2][4:]), divisor
        key = "reason" if "host_tlb_flush" in counter else "cause"
        return name + "_by_" + key + unit, (key, parts[2]), divisor
    return name + unit, None, divisor


def expected_samples(report):
    want = {}
    for rep in report["repetitions"]:
        labels = {"run": report["id"], "arm": rep["arm"], "rep": str(rep["index"])}
        for w in report_windows(report):
            for metric, value in rep.get("windows", {}).get(w, {}).get("metrics", {}).items():
                if value is None:
                    continue
                name, extra, divisor = family_of_metric(metric)
                ls = dict(labels, window=w)
                if extra:
                    ls[extra[0]] = extra[1]
                want[(name, tuple(sorted(ls.items())))] = value / divisor
            for f in migration_figures(report, rep) if w == report_windows(report)[1] else []:
                if f["value"] is None:
                    continue
                name, extra, divisor = family_of_figure(f)
                ls = dict(labels, window=w)
                if f["pass"] is not None:
                    ls["pass"] = str(f["pass"])
                if extra:
                    ls[extra[0]] = extra[1]
                key = (name, tuple(sorted(ls.items())))
                check(key not in want, "two figures map onto the sample %s" % (key,))
                want[key] = f["value"] / divisor
        for counter, value in rep.get("totals", {}).items():
            name, extra, divisor = family_of_counter(counter)
            ls = dict(labels)
            if extra:
                ls[extra[0]] = extra[1]
            want[(name + "_total", tuple(sorted(ls.items())))] = value / divisor
    return want


def check_samples(families, report, what):
    got = {}
    info = []
    for fam in families:
        for s in fam.samples:
            if s.name.endswith("_info"):
                info.append(s)
                continue
            key = (s.name, tuple(sorted(s.labels.items())))
            check(key not in got, "%s: sample %s twice" % (what, key))
            got[key] = s.value
    want = expected_samples(report)
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    check(not missing and not extra, "%s: samples missing %s, unexpected %s" % (what, missing[:5], extra[:5]))
    for key, v in want.items():
        check(same(got[key], v), "%s: %s is %r, the report gives %r" % (what, key, got[key], v))
    run_info = [s for s in info if s.name == "snapbench_run_info"]
    timing = lambda emulated: "emulated" if emulated else "native"
    check(len(run_info) == 1 and run_info[0].labels["run"] == report["id"]
          and run_info[0].labels["state"] == report["state"]
          and run_info[0].labels["timing"] == timing(timing_emulated(report)),
          "%s: snapbench_run_info %s" % (what, run_info))
    reps = sorted((s.labels["arm"], int(s.labels["rep"]), s.labels["state"], s.labels["timing"]) for s in info
                  if s.name == "snapbench_repetition_info")
    check(reps == sorted((r["arm"], r["index"], r["state"], timing(timing_emulated(report, r["arm"])))
                         for r in report["repetitions"]),
          "%s: snapbench_repetition_info %s" % (what, reps))
    return len(want)


def need_promtool():
    promtool = shutil.which("promtool")
    if not promtool:
        skip("promtool (Debian package prometheus)")
    return promtool


def need_parsers():
    """prometheus_client's parsers: the Prometheus text format's, and the strict OpenMetrics one."""
    try:
        from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
        from prometheus_client.parser import text_string_to_metric_families as parse_prometheus
    except ImportError:
        skip("prometheus_client (Debian package python3-prometheus-client)")
    return parse_prometheus, parse_openmetrics


def promtool_check(promtool, text, what):
    p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    check(p.returncode == 0 and not p.stdout.strip() and not p.stderr.strip(),
          "%s: promtool check metrics: exit %d\n%s%s" % (what, p.returncode, p.stdout, p.stderr))


def case_show_metrics(snapbench, snapbenchd, testdata, tmp):
    promtool = need_promtool()
    parse_prometheus, parse_openmetrics = need_parsers()

    hostile = hostile_stock(testdata)
    cases = [(n, load(testdata, n), load(testdata, n)) for n in SHOW_FIXTURES]
    cases.append(("hostile label", hostile, relabel(hostile, HOSTILE_LABEL, HOSTILE_SHOWN)))
    store = Store(snapbenchd, tmp, [c[1] for c in cases])
    try:
        for what, served, report in cases:
            check_metrics(snapbench, store, promtool, parse_prometheus, parse_openmetrics, what, served["id"], report)
    finally:
        store.close()


def check_metrics(snapbench, store, promtool, parse_prometheus, parse_openmetrics, what, run_id, report):
    prom = store.show(snapbench, run_id, "prometheus")
    promtool_check(promtool, prom, what)
    check("# EOF" not in prom and "# UNIT" not in prom, "%s: OpenMetrics lines in the Prometheus format" % what)
    n = check_samples(list(parse_prometheus(prom)), report, what + " (prometheus)")
    # a value converted to seconds is the report's figure with the point moved, not the division's float noise
    # (1.1771447039999998e-05): no more significant digits than a report figure has
    for line in prom.splitlines():
        m = re.match(r"^(snapbench_\w*_seconds(?:_total)?)\{.*\} (\S+)$", line)
        if m:
            digits = re.sub(r"e.*$", "", m.group(2)).replace("-", "").replace(".", "").strip("0")
            check(len(digits) <= 15, "%s: float noise in %r" % (what, line))

    om = store.show(snapbench, run_id, "openmetrics")
    check(om.endswith("# EOF\n"), "%s: the OpenMetrics text does not end with # EOF" % what)
    families = list(parse_openmetrics(om))  # strict: raises on anything OpenMetrics 1.0 forbids
    for fam in families:
        check(fam.type in ("gauge", "counter", "info"), "%s: family %s of type %s" % (what, fam.name, fam.type))
        check(fam.type != "counter" or not fam.name.endswith("_total"),
              "%s: counter family %s named with _total" % (what, fam.name))
        if fam.name.endswith("_seconds"):
            check(fam.unit == "seconds", "%s: %s has no # UNIT seconds" % (what, fam.name))
    check(n == check_samples(families, report, what + " (openmetrics)"), "the dialects differ")
    log("%s: promtool check metrics passed; %d samples, the same in both dialects, match the report"
        % (what, n))


# ---- compare --format csv / junit ----

COMPARE_CASES = [
    ("stock vs perm-upgrade", ["stock.json", "perm-upgrade.json"]),
    ("stock vs regressed", ["--baseline", "stock.json", "--patched", "regressed.json"]),
    ("two arms, two windows", ["two-arms.json", "--window", "pre", "--window", "snapshot"]),
    ("2 vs 2", ["small-a.json", "small-b.json"]),
    ("A/A", ["--aa", "label=stock", "stock.json"]),
    ("TCG host VM vs KVM, forced", ["--force", "tcg-host-vm.json", "native.json"]),
    ("kernel arms under TCG", ["kernel-retried.json"]),
]


def side_values(doc, testdata, side, window, metric):
    """The side's values of metric, from its reports' completed repetitions, as compare takes them; for the
    count row compare adds to a rate it did not judge (count_of_rate), the rate times the window's duration."""
    row = next((m for m in doc["metrics"] if m["window"] == window and m["metric"] == metric), {})
    rate = metric.replace("_count", "_per_s", 1) if row.get("count_of_rate") else None
    vals = []
    for rep_ref in doc["inputs"][side]["reports"]:
        report = load(testdata, rep_ref["path"])  # as given: relative to testdata, or absolute
        by_index = {r["index"]: r for r in report["repetitions"]}
        for i in rep_ref["repetitions"]:
            rep = by_index[i]
            w = rep.get("windows", {}).get(window, {})
            v = w.get("metrics", {}).get(rate or metric)
            if rate and v is not None:
                v = round(v * w["duration_s"])
            if rep["state"] == "completed" and v is not None:
                vals.append(float(v))
    return vals


def stats_of(vals):
    out = {"n": len(vals)}
    if vals:
        out.update(median=statistics.median(vals), min=min(vals), max=max(vals), mean=statistics.mean(vals))
    if len(vals) > 1:
        out["stddev"] = statistics.stdev(vals)
    return out


def compare_doc(snapbench, testdata, args):
    p = run([snapbench, "compare", "--json"] + args)
    return json.loads(p.stdout), p.returncode


def case_compare_csv(snapbench, testdata, tmp):
    os.chdir(testdata)
    for what, args in COMPARE_CASES:
        doc, rc = compare_doc(snapbench, testdata, args)
        p = run([snapbench, "compare", "--format", "csv"] + args, rc=rc)
        rows = csv_rows(p.stdout, what)
        header = rows[0]
        check(header == ["window", "metric", "unit", "better", "side", "label", "n", "missing", "median", "min",
                         "max", "mean", "stddev", "cv", "ratio", "pct_change", "from_zero", "p", "alpha",
                         "threshold_pct", "verdict", "ci_low", "ci_high", "emulated", "change", "change_ci"],
              "%s: header %s" % (what, header))
        recs = [dict(zip(header, r)) for r in rows[1:]]
        # one notation: the change and its interval as the text table writes them, on the metric's line
        wide = run([snapbench, "compare", "--wide"] + args, rc=rc).stdout.splitlines()
        for rec in recs:
            check(rec["change"] and any(rec["change"] in x and rec["change_ci"] in x for x in wide),
                  "%s %s: CSV change %r %r is not the text table's" % (what, rec["metric"], rec["change"],
                                                                      rec["change_ci"]))
        check(len(recs) == 2 * len(doc["metrics"]), "%s: %d rows for %d metrics" % (what, len(recs),
                                                                                     len(doc["metrics"])))
        for i, m in enumerate(doc["metrics"]):
            exp = {s: stats_of(side_values(doc, testdata, s, m["window"], m["metric"])) for s in ("baseline", "patched")}
            for k, side in enumerate(("baseline", "patched")):
                rec = recs[2 * i + k]
                check((rec["window"], rec["metric"], rec["side"], rec["label"]) ==
                      (m["window"], m["metric"], doc["inputs"][side]["role"], doc["inputs"][side]["label"]),
                      "%s: row %d is %s" % (what, 2 * i + k, rec))
                e = exp[side]
                check(int(rec["n"]) == e["n"], "%s %s %s: n %s, the reports have %d" % (what, m["metric"], side,
                                                                                        rec["n"], e["n"]))
                for f in ("median", "min", "max", "mean", "stddev"):
                    if f in e:
                        check(rec[f] != "" and same(float(rec[f]), e[f]), "%s %s %s: %s %s, the reports give %r"
                              % (what, m["metric"], side, f, rec[f], e[f]))
                    else:
                        check(rec[f] == "", "%s %s %s: %s is %r without values" % (what, m["metric"], side, f, rec[f]))
                bm, pm = exp["baseline"].get("median"), exp["patched"].get("median")
                if bm:
                    check(same(float(rec["ratio"]), pm / bm), "%s %s: ratio %s, medians %r / %r"
                          % (what, m["metric"], rec["ratio"], pm, bm))
                # the verdict and the test are compare's: the CSV must say what its JSON says
                check(rec["verdict"] == m["verdict"] and rec["better"] == m["better"] and rec["unit"] == m["unit"]
                      and rec["emulated"] == ("true" if m["emulated"] else "false"),
                      "%s %s: verdict/better/unit/emulated %s, JSON %s" % (what, m["metric"], rec, m))
                check(m["test"]["p"] is None and rec["p"] == "" or same(float(rec["p"]), m["test"]["p"]),
                      "%s %s: p %s, JSON %s" % (what, m["metric"], rec["p"], m["test"]["p"]))
                ci = m["ci"] or {}
                check(all((ci.get(k) is None and rec["ci_" + k] == "") or
                          (rec["ci_" + k] != "" and same(float(rec["ci_" + k]), ci[k])) for k in ("low", "high")),
                      "%s %s: interval [%s %s], JSON %s" % (what, m["metric"], rec["ci_low"], rec["ci_high"], ci))
        log("%s: %d rows, figures as computed from the reports, verdicts as compare's JSON, exit %d"
            % (what, len(recs), rc))
    # RFC 4180 quoting of a label that needs it, and no control reaching the output
    a = write_json(os.path.join(tmp, "a.json"), relabel(load(testdata, "stock.json"), "stock", HOSTILE_LABEL))
    p = run([snapbench, "compare", "--format", "csv", a, os.path.join(testdata, "perm-upgrade.json")], rc=0)
    check("\x1b" not in p.stdout, "a control from a report reached the CSV")
    labels = {r[5] for r in csv_rows(p.stdout, "hostile")[1:] if r[4] == "baseline"}
    check(labels == {HOSTILE_SHOWN}, "the hostile label read back as %s" % labels)
    log("a label with a comma, quotes and ESC reads back quoted, ESC as '?'")


def case_compare_junit(snapbench, testdata, tmp, xsd):
    xmllint = shutil.which("xmllint")
    if not xmllint:
        skip("xmllint (Debian package libxml2-utils)")
    os.chdir(testdata)
    hostile = write_json(os.path.join(tmp, "a.json"), relabel(load(testdata, "stock.json"), "stock", HOSTILE_LABEL))
    cases = COMPARE_CASES + [("hostile label", [hostile, "perm-upgrade.json"])]
    for what, args in cases:
        doc, rc = compare_doc(snapbench, testdata, args)
        p = run([snapbench, "compare", "--format", "junit"] + args, rc=rc)
        path = os.path.join(tmp, "junit.xml")
        with open(path, "w") as f:
            f.write(p.stdout)
        v = subprocess.run([xmllint, "--noout", "--schema", xsd, path], capture_output=True, text=True)
        check(v.returncode == 0, "%s: not valid against %s:\n%s" % (what, xsd, v.stderr))
        root = ET.parse(path).getroot()
        cases_by_key = {}
        for suite in root.findall("testsuite"):
            props = {pr.get("name"): pr.get("value") for pr in suite.find("properties").findall("property")}
            tcs = suite.findall("testcase")
            check(int(suite.get("tests")) == len(tcs), "%s: suite %s counts %s tests, holds %d"
                  % (what, suite.get("name"), suite.get("tests"), len(tcs)))
            check(int(suite.get("failures")) == sum(tc.find("failure") is not None for tc in tcs)
                  and int(suite.get("skipped")) == sum(tc.find("skipped") is not None for tc in tcs),
                  "%s: suite %s's failure/skipped counts" % (what, suite.get("name")))
            check(props["verdict"] == doc["verdict"] and int(props["exit_code"]) == rc,
                  "%s: verdict properties %s" % (what, props))
            for side in ("baseline", "patched"):
                role = doc["inputs"][side]["role"]
                check(props[role + ".label"] == (HOSTILE_SHOWN if side == "baseline" and what == "hostile label"
                                                 else doc["inputs"][side]["label"]),
                      "%s: %s.label is %r" % (what, role, props[role + ".label"]))
            for tc in tcs:
                window = tc.get("classname").rsplit(".", 1)[1]
                cases_by_key[(window, tc.get("name"))] = (tc, props)
        want = [(m["window"], m["metric"]) for m in doc["metrics"]] + [(s["window"], s["metric"])
                                                                       for s in doc["skipped"]]
        check(sorted(cases_by_key) == sorted(want), "%s: testcases %s, expected %s"
              % (what, sorted(cases_by_key), sorted(want)))
        check(int(root.get("tests")) == len(want) and
              int(root.get("failures")) == sum(m["verdict"] == "regressed" for m in doc["metrics"]),
              "%s: testsuites counts %s" % (what, root.attrib))
        for m in doc["metrics"]:
            tc, props = cases_by_key[(m["window"], m["metric"])]
            failure, skipped = tc.find("failure"), tc.find("skipped")
            check((failure is not None) == (m["verdict"] == "regressed"), "%s %s: failure element, verdict %s"
                  % (what, m["metric"], m["verdict"]))
            check((skipped is not None) == (m["verdict"] == "insufficient-data"), "%s %s: skipped element, verdict %s"
                  % (what, m["metric"], m["verdict"]))
            outcome = failure if failure is not None else skipped
            if outcome is not None:
                msg = outcome.get("message")
                check(m["metric"] in msg and m["verdict"] in msg and "n %d" % m["baseline"]["n"] in msg,
                      "%s %s: message %r" % (what, m["metric"], msg))
            for side in ("baseline", "patched"):
                e = stats_of(side_values(doc, testdata, side, m["window"], m["metric"]))
                pre = "%s.%s." % (m["metric"], doc["inputs"][side]["role"])
                check(int(props[pre + "n"]) == e["n"], "%s %s: %sn" % (what, m["metric"], pre))
                for f in ("median", "min", "max"):
                    check(same(float(props[pre + f]), e[f]), "%s: %s%s is %s, the reports give %r"
                          % (what, pre, f, props[pre + f], e[f]))
            check(props[m["metric"] + ".verdict"] == m["verdict"], "%s %s: verdict property" % (what, m["metric"]))
        for s in doc["skipped"]:
            tc, _ = cases_by_key[(s["window"], s["metric"])]
            check(tc.find("skipped") is not None and tc.find("skipped").get("message") == s["reason"],
                  "%s: skipped metric %s without its reason" % (what, s["metric"]))
        log("%s: valid against the schema; %d testcases, %d failures, %d skipped, figures as in the reports"
            % (what, len(want), int(root.get("failures")), sum(int(s.get("skipped")) for s in root)))


SERVICE_FIXTURES = ["stock.json", "perm-upgrade.json", "regressed.json", "two-arms.json", "small-a.json",
                    "store/20261110T080000Z-0b0001/report.json", "store/20261111T080000Z-0b0002/report.json"]


def service_reports(testdata):
    reports = [load(testdata, n) for n in SERVICE_FIXTURES]
    failed = copy.deepcopy(reports[-1])  # a failed run: counted, never a label's last completed run
    failed["id"], failed["state"] = "20261230T080000Z-0f0001", "failed"
    reports.append(failed)
    # migrating runs, under labels of their own: their medians are the migration window's
    reports.append(relabel(load(testdata, "dirty-log.json"), "stock", "dirty-log"))
    reports.append(relabel(load(testdata, "postcopy.json"), "stock", "postcopy"))
    return reports


def service_metrics_file(snapbenchd, testdata, tmp):
    """The metrics file a snapbenchd on a store of the fixtures writes at start-up, and the reports."""
    reports = service_reports(testdata)
    path = os.path.join(tmp, "textfile", "snapbench.prom")
    os.makedirs(os.path.dirname(path))
    store = Store(snapbenchd, tmp, reports, ["--metrics-file", path])
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(path):
            check(time.monotonic() < deadline, "snapbenchd wrote no %s" % path)
            time.sleep(0.05)
    finally:
        store.close()
    check(oct(os.stat(path).st_mode & 0o777) == "0o644", "the metrics file's mode: %o" % os.stat(path).st_mode)
    check(os.listdir(os.path.dirname(path)) == ["snapbench.prom"], "left beside it: %s" % os.listdir(os.path.dirname(path)))
    with open(path) as f:
        return path, f.read(), reports


def samples_of(parse, text):
    got = {}
    for fam in parse(text):
        for smp in fam.samples:
            got[(smp.name, tuple(sorted(smp.labels.items())))] = smp.value
    return got


def case_service_metrics(snapbench, snapbenchd, testdata, tmp):
    promtool = need_promtool()
    parse_prometheus, _ = need_parsers()
    path, text, reports = service_metrics_file(snapbenchd, testdata, tmp)
    promtool_check(promtool, text, "the metrics file")
    got = samples_of(parse_prometheus, text)

    def value(name, **labels):
        key = (name, tuple(sorted(labels.items())))
        check(key in got, "no sample %s{%s}" % (name, labels))
        return got[key]

    check(value("snapbench_queue_length") == 0, "queue length")
    for state in ("queued", "running", "completed", "failed", "cancelled"):
        want = sum(r["state"] == state for r in reports)
        check(value("snapbench_runs", state=state) == want, "runs %s: %s, the store has %d"
              % (state, value("snapbench_runs", state=state), want))
    newest = {}
    for r in sorted(reports, key=lambda r: r["id"]):  # ids sort by creation time
        if r["state"] == "completed":
            for arm in r["arms"]:
                newest[arm["label"]] = (r, arm)
    for label, (r, arm) in newest.items():
        check(value("snapbench_last_run_info", label=label, run=r["id"], scenario=r["spec"]["scenario"]) == 1,
              "last run of %s" % label)
        check(value("snapbench_last_run_repetitions", label=label, result="completed")
              == arm["repetitions"]["completed"], "%s's completed repetitions" % label)
        w = report_windows(r)[1]
        medians = {m: st["median"] for m, st in arm["windows"][w].items()
                   if m in ("pf_per_s", "tlb_per_s", "invalidations_per_s", "guest_ops_per_s", "latency_p99_ns",
                            "snapshot_duration_s")}
        if w == "migration":  # the window's own duration, over the arm's completed repetitions
            medians["migration_duration_s"] = statistics.median(
                rep["windows"]["migration"]["duration_s"] for rep in r["repetitions"]
                if rep["arm"] == label and rep["state"] == "completed")
        checked = 0
        for metric, median in medians.items():
            if median is None:
                continue
            name, _, divisor = family_of_metric(metric)
            name = name.replace("snapbench_", "snapbench_last_run_", 1)
            check(same(value(name, label=label, window=w), median / divisor),
                  "%s of %s: %s, the report's median %r" % (name, label, value(name, label=label, window=w), median))
            checked += 1
        check(checked, "%s: no median of its %s window checked" % (label, w))
    labels = {dict(k[1])["label"] for k in got if k[0] == "snapbench_last_run_info"}
    check(labels == set(newest), "labels %s, expected %s" % (labels, set(newest)))
    log("the metrics file passes promtool; %d samples: runs by state, the queue, the newest completed run of %d "
        "labels with their medians" % (len(got), len(newest)))
    metrics_after_a_run(snapbench, snapbenchd, testdata, os.path.join(tmp, "after-a-run"), parse_prometheus)


def metrics_after_a_run(snapbench, snapbenchd, testdata, tmp, parse_prometheus):
    """A run that ends rewrites the file, by rename (a new inode): one that fails its preflight here (a 1 TiB
    guest: no QEMU starts) is one more failed run, the queue empty again, no label's last completed run."""
    os.makedirs(tmp)
    path = os.path.join(tmp, "textfile", "snapbench.prom")
    os.makedirs(os.path.dirname(path))
    spec = os.path.join(tmp, "spec.json")
    write_json(spec, {"repetitions": 1, "vm": {"memory": 1 << 40, "vcpus": 1}})
    store = Store(snapbenchd, tmp, service_reports(testdata), ["--metrics-file", path])
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(path):
            check(time.monotonic() < deadline, "snapbenchd wrote no %s" % path)
            time.sleep(0.05)
        # the old file stays open: its inode cannot be given to one of the rewrites' files while it is
        old = open(path)
        old_text = old.read()
        before, inode = samples_of(parse_prometheus, old_text), os.fstat(old.fileno()).st_ino
        p = run([snapbench, "run", "--socket", store.sock, "--wait", "--quiet", "--spec", spec, "--label", "too-big"],
                rc=1)
        check("failed" in p.stdout and "spec.vm.memory" in p.stdout, "the 1 TiB run: %s" % p.stdout)
        # the daemon tells the run's end to its watchers, then rewrites the file (also at submit and at start)
        failed = ("snapbench_runs", (("state", "failed"),))
        deadline = time.monotonic() + 30
        while True:
            with open(path) as f:
                after = samples_of(parse_prometheus, f.read())
            if after[failed] != before[failed] or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        check(os.stat(path).st_ino != inode, "the metrics file was not replaced (same inode)")
        old.seek(0)
        check(old.read() == old_text, "the old metrics file was written in place")
        old.close()
    finally:
        store.close()
    check(after[failed] == before[failed] + 1, "failed runs: %s before the run, %s after" % (before[failed], after[failed]))
    running = ("snapbench_runs", (("state", "running"),))
    check(after[("snapbench_queue_length", ())] == 0 and after[running] == 0,
          "after the run: queue %s, running %s" % (after[("snapbench_queue_length", ())], after[running]))
    check(not any(dict(k[1]).get("label") == "too-big" for k in after), "a failed run as a label's last run")
    log("a run that failed its preflight: the file rewritten (a new inode), failed runs %d -> %d, queue 0"
        % (before[failed], after[failed]))


def free_loopback_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def case_service_scrape(snapbench, snapbenchd, testdata, tmp):
    exporter = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if not exporter:
        skip("node_exporter (Debian package prometheus-node-exporter)")
    parse_prometheus, _ = need_parsers()
    path, text, _ = service_metrics_file(snapbenchd, testdata, tmp)
    port = free_loopback_port()
    with open(os.path.join(tmp, "node-exporter.log"), "w+") as log_file:
        proc = subprocess.Popen([exporter, "--collector.disable-defaults", "--collector.textfile",
                                 "--collector.textfile.directory=" + os.path.dirname(path),
                                 "--web.listen-address=127.0.0.1:%d" % port],
                                stdout=log_file, stderr=subprocess.STDOUT)
        try:
            deadline, body = time.monotonic() + 30, None
            while body is None:
                try:
                    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
                        body = r.read().decode()
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        log_file.seek(0)
                        fail("node_exporter did not serve on port %d:\n%s" % (port, log_file.read()))
                    time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    scraped = samples_of(parse_prometheus, body)
    errors = [v for (name, _), v in scraped.items() if name == "node_textfile_scrape_error"]
    check(errors == [0], "node_textfile_scrape_error %s:\n%s" % (errors, body[:2000]))
    ours = samples_of(parse_prometheus, text)
    missing = [k for k in ours if k not in scraped]
    check(not missing, "samples of the file not in the scrape: %s" % missing[:5])
    for k, v in ours.items():
        check(same(scraped[k], v), "%s: scraped %r, the file has %r"
              % (k, scraped[k], v))
    log("node_exporter's textfile collector read the metrics file without error: %d samples, each as written"
        % len(ours))


def case_formats(snapbench, testdata, tmp):
    os.chdir(testdata)
    p = run([snapbench, "compare", "--format", "yaml", "stock.json", "perm-upgrade.json"], rc=2)
    check("--format yaml" in p.stderr and all(f in p.stderr for f in ("text", "json", "markdown", "csv", "junit")),
          "compare's message for --format yaml: %s" % p.stderr)
    # one word for the text output in every verb; compare's old word stays an alias
    a = run([snapbench, "compare", "--format", "table", "stock.json", "perm-upgrade.json"], rc=0)
    b = run([snapbench, "compare", "--format", "text", "stock.json", "perm-upgrade.json"], rc=0)
    check(a.stdout == b.stdout and "Window snapshot:" in a.stdout, "compare --format table is not --format text")
    p = run([snapbench, "show", "--socket", os.path.join(tmp, "none.sock"), "--format", "yaml",
             "20261102T100000Z-5a0c01"], rc=2)
    check("--format yaml" in p.stderr and all(f in p.stderr for f in ("text", "json", "csv", "openmetrics",
                                                                      "prometheus")),
          "show's message for --format yaml: %s" % p.stderr)
    p = run([snapbench, "show", "--format", "csv", "--timeline", "20261102T100000Z-5a0c01"], rc=2)
    check("--timeline" in p.stderr, "show --timeline without JSON: %s" % p.stderr)
    p = run([snapbench, "show", "--json", "--format", "csv", "20261102T100000Z-5a0c01"], rc=2)
    check("--json and --format csv" in p.stderr, "show --json --format csv: %s" % p.stderr)
    log("unknown formats are refused naming the value and the accepted ones")


def main():
    snapbench, snapbenchd, testdata = (os.path.abspath(a) for a in sys.argv[1:4])
    case = sys.argv[4]
    with tempfile.TemporaryDirectory(prefix="snapbench-exports-") as tmp:
        if case == "show-csv":
            case_show_csv(snapbench, snapbenchd, testdata, tmp)
        elif case == "show-metrics":
            case_show_metrics(snapbench, snapbenchd, testdata, tmp)
        elif case == "compare-csv":
            case_compare_csv(snapbench, testdata, tmp)
        elif case == "compare-junit":
            case_compare_junit(snapbench, testdata, tmp, os.path.abspath(sys.argv[5]))
        elif case == "service-metrics":
            case_service_metrics(snapbench, snapbenchd, testdata, tmp)
        elif case == "service-scrape":
            case_service_scrape(snapbench, snapbenchd, testdata, tmp)
        elif case == "formats":
            case_formats(snapbench, testdata, tmp)
        else:
            fail("unknown case %s" % case)


if __name__ == "__main__":
    main()
