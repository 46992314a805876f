#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""show --format kcidb and compare --format kcidb (docs/exports.md#kcidb) on
the report fixtures of reports/testdata/, validated against the KCIDB I/O
schema kept in reports/schema/kcidb/ (JSON Schema draft 7 with its format
checker, as kcidb-io validates) and read back against the reports.

    kcidb.py SNAPBENCH SNAPBENCHD TESTDATA CASE SCHEMA

CASE is one of
  show      a snapbenchd of our own on a store of fixtures (stock.json,
            two-arms.json with unavailable figures, a run with a failed
            repetition and a kernel arm, one whose arm label holds a comma,
            quotes, ESC and markup): every document valid; a test per
            repetition and per repetition x window x metric, with the
            report's figure and unit (DONE) or its unavailable reason (SKIP);
            start times and durations from the repetitions' windows; the
            builds and checkouts the tests reference, with the kernel;
            the repetitions' environment.misc and the builds the report's host, no
            figure test repeating it; --kcidb-origin in every id;
  compare   compare --format kcidb on the fixtures compare's own tests use
            and a hostile label: valid; a test per compared metric with
            the status compare's JSON verdict maps to (PASS, FAIL, SKIP) and
            the change in %, a SKIP per metric not compared, the overall
            verdict, the exit code compare's;
  refuse    an origin KCIDB cannot take, and --kcidb-origin without
            --format kcidb, are refused (exit 2); and the validator used
            here rejects a document that breaks the schema, so the checks
            above can fail.

Expected figures come from the fixtures' JSON and compare's --json output,
never from a KCIDB output. Exits 77 naming the package when jsonschema
(Debian's python3-jsonschema) is missing.
"""

import copy
import datetime
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exports import (COMPARE_CASES, HOSTILE_LABEL, HOSTILE_SHOWN, Store, check, compare_doc,  # noqa: E402
                     fail, load, log, metric_unit, migration_figures, relabel, report_windows, run, same, skip,
                     write_json, timing_emulated, time_based)

RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
PATH = re.compile(r"^[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*$")



def reason_of(tests, t):
    """Why a SKIP test's figure is unavailable: its own misc.unavailable (its comment the same), or that of
    the earlier test its misc.unavailable_as names (a reason is written once per export)."""
    misc = t["misc"]
    if "unavailable" in misc:
        return misc["unavailable"] if t["comment"] == misc["unavailable"] else None
    first = tests.get(misc.get("unavailable_as"))
    if not first or "unavailable" not in first["misc"] or misc["unavailable_as"] not in t["comment"]:
        return None
    return first["misc"]["unavailable"]

def validator(schema_path):
    try:
        import jsonschema
    except ImportError:
        skip("jsonschema (Debian package python3-jsonschema)")
    with open(schema_path) as f:
        schema = json.load(f)
    jsonschema.Draft7Validator.check_schema(schema)
    checker = getattr(jsonschema.Draft7Validator, "FORMAT_CHECKER", None) or jsonschema.draft7_format_checker
    return jsonschema.Draft7Validator(schema, format_checker=checker)


def validate(v, doc, what):
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
    check(not errors, "%s: not valid KCIDB: %s" % (what, "; ".join(
        "%s: %s" % ("/".join(map(str, e.absolute_path)), e.message) for e in errors[:5])))
    check(doc["version"] == {"major": 5, "minor": 3}, "%s: version %s" % (what, doc["version"]))
    # what the format checker of Debian's jsonschema does not check without rfc3339-validator
    for t in doc["tests"]:
        if "start_time" in t:
            check(RFC3339.match(t["start_time"]), "%s: start_time %r is not RFC 3339 UTC" % (what, t["start_time"]))


def parse_time(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def check_links(doc, origin, what):
    """Unique ids, each starting with the origin; tests -> builds -> checkouts."""
    for kind in ("checkouts", "builds", "tests"):
        ids = [o["id"] for o in doc[kind]]
        check(len(ids) == len(set(ids)), "%s: duplicate %s ids" % (what, kind))
        for o in doc[kind]:
            check(o["origin"] == origin and o["id"].startswith(origin + ":"), "%s: %s %s of origin %s"
                  % (what, kind, o["id"], o["origin"]))
    checkouts = {c["id"] for c in doc["checkouts"]}
    builds = {b["id"]: b for b in doc["builds"]}
    for b in builds.values():
        check(b["checkout_id"] in checkouts, "%s: build %s's checkout is missing" % (what, b["id"]))
    for t in doc["tests"]:
        check(t["build_id"] in builds, "%s: test %s's build %s is missing" % (what, t["id"], t["build_id"]))
        check(PATH.match(t["path"]) and t["path"].startswith("snapbench."), "%s: path %r" % (what, t["path"]))
    return builds


def without_nulls(v):
    if isinstance(v, dict):
        return {k: without_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [without_nulls(x) for x in v if x is not None]
    return v


def shown(v):
    """v as the export writes report text: ESC as '?'."""
    if isinstance(v, str):
        return v.replace("\x1b", "?")
    if isinstance(v, dict):
        return {shown(k): shown(x) for k, x in v.items()}
    if isinstance(v, list):
        return [shown(x) for x in v]
    return v


def expected_kernel(report, label):
    arm = next(a for a in report["arms"] if a["label"] == label)
    if arm.get("kernel"):
        return dict(without_nulls(arm["kernel"]), runs_on="host VM")
    h = report["host"]
    return without_nulls({"release": h.get("kernel_release"), "version": h.get("kernel_version"),
                          "cmdline": h.get("cmdline"), "runs_on": "host"})


def same_json(a, b):
    """Equal, numbers compared as doubles (the export writes 2.0 as 2)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return same(float(a), float(b))
    return a == b


# ---- show --format kcidb ----

def kernel_arm_run(testdata):
    """stock.json as a kernel-arm run whose repetition 1 failed."""
    r = load(testdata, "stock.json")
    r["id"] = "20261102T110000Z-0cafe1"
    r["arms"][0]["kernel"] = {"image": "/src/linux/arch/x86/boot/bzImage", "release": "6.19.0-rc1-patched",
                              "version": "#3 SMP PREEMPT_DYNAMIC", "build_id": "0123abcd" * 5, "config": None,
                              "config_sha256": None, "modules": None, "module_params": {"kvm_amd": "npt=0"},
                              "host_vm": {"accel": "tcg", "booted": "pvh", "vcpus": 2}}
    rep = r["repetitions"][1]
    rep["state"] = "failed"
    rep["error"] = {"message": "the host VM ended (QEMU exited) before its run wrote a report", "phase": "rep 1 vm-start"}
    return r


def hostile_run(testdata):
    r = relabel(load(testdata, "stock.json"), "stock", HOSTILE_LABEL)
    r["id"] = "20261102T100000Z-0bad01"
    return r


def check_show(doc, report, origin, what):
    builds = check_links(doc, origin, what)
    rid = report["id"]
    labels = [a["label"] for a in report["arms"]]
    check(sorted(builds) == sorted("%s:%s/%s" % (origin, rid, shown(label)) for label in labels),
          "%s: builds %s for arms %s" % (what, sorted(builds), labels))
    for label in labels:
        b = builds["%s:%s/%s" % (origin, rid, shown(label))]
        check(b["misc"]["arm"] == shown(label) and b["misc"]["run"] == rid
              and b["misc"]["timing"] == ("emulated" if timing_emulated(report, label) else "native"),
              "%s: build misc %s" % (what, b["misc"]))
        check(same_json(b["misc"]["kernel"], shown(expected_kernel(report, label))),
              "%s: build %s's kernel %s, the report gives %s" % (what, b["id"], b["misc"]["kernel"],
                                                               expected_kernel(report, label)))
    tests = {t["id"]: t for t in doc["tests"]}
    want = 0
    status_of = {"completed": "DONE", "failed": "ERROR"}
    for rep in report["repetitions"]:
        idx = rep["index"]
        build = "%s:%s/%s" % (origin, rid, shown(rep["arm"]))
        t = tests.get("%s:%s/%d" % (origin, rid, idx))
        check(t is not None, "%s: no test of repetition %d" % (what, idx))
        want += 1
        check(t["status"] == status_of.get(rep["state"], "MISS") and t["build_id"] == build and
              t["path"] == "snapbench." + report["spec"]["scenario"], "%s: repetition %d's test %s" % (what, idx, t))
        check(t["start_time"] == rep["started"] and same(t["duration"], parse_time(rep["finished"])
                                                          - parse_time(rep["started"])),
              "%s: repetition %d's start_time/duration %s %s" % (what, idx, t["start_time"], t.get("duration")))
        if rep.get("error"):
            check(t["log_excerpt"] == rep["error"]["message"] and t["misc"]["error"] == rep["error"],
                  "%s: repetition %d's error %s" % (what, idx, t))
        env = t["environment"]["misc"]
        check(same_json(env["host"], shown(without_nulls(report["host"]))), "%s: environment host %s" % (what, env))
        check(same_json(env["kernel"], shown(expected_kernel(report, rep["arm"]))),
              "%s: environment kernel %s" % (what, env["kernel"]))
        for w in report_windows(report):
            win = rep.get("windows", {}).get(w)
            if not win:
                continue
            for f in migration_figures(report, rep) if w == report_windows(report)[1] else []:
                want += 1
                t = tests.get("%s:%s/%d/%s/%s" % (origin, rid, idx, w, f["name"]))
                check(t is not None, "%s: no test of rep %d's figure %s" % (what, idx, f["name"]))
                check(t["path"] == "snapbench.%s.%s.%s" % (report["spec"]["scenario"], w, f["name"])
                      and t["build_id"] == build, "%s: %s's path %s" % (what, t["id"], t["path"]))
                if f["value"] is None:
                    t_why = reason_of(tests, t)
                    check(t["status"] == "SKIP" and "number" not in t and t["comment"] and t_why,
                          "%s: unavailable %s: %s" % (what, t["id"], t))
                else:
                    num = t.get("number", {})
                    check(t["status"] == "DONE" and same(num.get("value"), f["value"])
                          and num.get("unit") == (None if f["unit"] == "1" else f["unit"]),
                          "%s: %s is %s, the report has %r %s" % (what, t["id"], num, f["value"], f["unit"]))
                # a pass's figure spans the pass, a postcopy figure the window
                check(same(parse_time(t["start_time"]), parse_time(rep["started"]) + f["start_s"])
                      and same(t["duration"], f["duration_s"]), "%s: %s's start_time %s duration %s, %s+%s"
                      % (what, t["id"], t["start_time"], t["duration"], f["start_s"], f["duration_s"]))
                check(t["misc"]["window"] == w and t["misc"]["metric"] == f["name"]
                      and t["misc"].get("pass") == f["pass"], "%s: misc %s" % (what, t["misc"]))
            for metric, value in win["metrics"].items():
                want += 1
                t = tests.get("%s:%s/%d/%s/%s" % (origin, rid, idx, w, metric))
                check(t is not None, "%s: no test of rep %d %s %s" % (what, idx, w, metric))
                check(t["path"] == "snapbench.%s.%s.%s" % (report["spec"]["scenario"], w, metric)
                      and t["build_id"] == build, "%s: %s's path %s" % (what, t["id"], t["path"]))
                unit = metric_unit(report, metric)
                if value is None:
                    why = win.get("unavailable", {}).get(metric, "not measured")
                    check(t["status"] == "SKIP" and "number" not in t and reason_of(tests, t) == why,
                          "%s: unavailable %s: %s" % (what, t["id"], t))
                else:
                    num = t.get("number", {})
                    check(t["status"] == "DONE" and same(num.get("value"), float(value)),
                          "%s: %s is %s, the report has %r" % (what, t["id"], t.get("number"), value))
                    check(num.get("unit") == (None if unit in ("", "1") else unit), "%s: %s's unit %s, metric_info %r"
                          % (what, t["id"], num.get("unit"), unit))
                check(same(parse_time(t["start_time"]), parse_time(rep["started"]) + win["start_s"])
                      and same(t["duration"], win["duration_s"]), "%s: %s's start_time %s duration %s, window %s+%s"
                      % (what, t["id"], t["start_time"], t["duration"], win["start_s"], win["duration_s"]))
                check(t["misc"]["arm"] == shown(rep["arm"]) and t["misc"]["repetition"] == idx
                      and t["misc"]["metric"] == metric and t["misc"]["window"] == w, "%s: misc %s" % (what, t["misc"]))
                emulated = timing_emulated(report, rep["arm"]) and time_based(metric, unit)
                check(t["misc"].get("emulated", False) == emulated, "%s: %s's misc.emulated %s, expected %s"
                      % (what, t["id"], t["misc"].get("emulated"), emulated))
    check(len(tests) == want, "%s: %d tests, the report has %d repetitions and figures" % (what, len(tests), want))
    # the host once per build and per repetition, not in each of the hundreds of figures' tests
    rep_ids = {"%s:%s/%d" % (origin, rid, r["index"]) for r in report["repetitions"]}
    extra_env = [t["id"] for t in doc["tests"] if t["id"] not in rep_ids and "environment" in t]
    check(not extra_env, "%s: figure tests repeat the environment: %s" % (what, extra_env[:3]))
    for label in labels:
        b = builds["%s:%s/%s" % (origin, rid, shown(label))]
        check(same_json(b["misc"]["host"], shown(without_nulls(report["host"]))),
              "%s: build %s's host %s" % (what, b["id"], b["misc"].get("host")))
    return want


def case_show(snapbench, snapbenchd, testdata, tmp, v):
    reports = [load(testdata, "stock.json"), load(testdata, "tcg-host-vm.json"), load(testdata, "two-arms.json"),
               kernel_arm_run(testdata),
               hostile_run(testdata), load(testdata, "dirty-log.json"), load(testdata, "postcopy.json"),
               load(testdata, "uffd-restore.json")]
    store = Store(snapbenchd, tmp, reports)
    try:
        for report in reports:
            for origin in ("snapbench", "lab_1"):
                args = [] if origin == "snapbench" else ["--kcidb-origin", origin]
                p = run([snapbench, "show", "--socket", store.sock, "--format", "kcidb"] + args + [report["id"]], rc=0)
                # stderr says the document's size, and nothing else
                check(p.stderr == "snapbench show: KCIDB JSON of %s bytes written\n" % format(len(p.stdout.encode()), ","),
                      "show --format kcidb wrote to stderr: %s" % p.stderr)
                check("\x1b" not in p.stdout, "a control from the report reached the KCIDB JSON")
                what = "run %s (arms %s, origin %s)" % (report["id"], [a["label"] for a in report["arms"]], origin)
                doc = json.loads(p.stdout)
                validate(v, doc, what)
                n = check_show(doc, report, origin, what)
            log("%s: valid KCIDB 5.3, %d tests matching the report, builds and checkouts linked, %d bytes"
                % (what, n, len(p.stdout)))
    finally:
        store.close()


# ---- compare --format kcidb ----

STATUS = {"regressed": "FAIL", "insufficient-data": "SKIP", "improved": "PASS", "no-change": "PASS",
          "changed": "PASS"}


def side_key(doc, side):
    inp = doc["inputs"][side]
    return "+".join(r["id"] for r in inp["reports"]) + "/" + inp["label"]


def case_compare(snapbench, testdata, tmp, v):
    os.chdir(testdata)
    hostile = write_json(os.path.join(tmp, "a.json"), relabel(load(testdata, "stock.json"), "stock", HOSTILE_LABEL))
    for what, args in COMPARE_CASES + [("hostile label", [hostile, "perm-upgrade.json"])]:
        cdoc, rc = compare_doc(snapbench, testdata, args)
        p = run([snapbench, "compare", "--format", "kcidb"] + args, rc=rc)
        check("\x1b" not in p.stdout, "%s: a control from a report reached the KCIDB JSON" % what)
        doc = json.loads(p.stdout)
        validate(v, doc, what)
        builds = check_links(doc, "snapbench", what)
        keys = {s: shown(side_key(cdoc, s)) for s in ("baseline", "patched")}
        check(sorted(builds) == sorted({"snapbench:" + k for k in keys.values()}),
              "%s: builds %s, sides %s" % (what, sorted(builds), keys))
        aa = cdoc["mode"] == "aa"
        prefix = ("snapbench:aa-%s/%s" % (cdoc["inputs"]["aa_split"], keys["patched"]) if aa
                  else "snapbench:compare/%s..%s" % (keys["baseline"], keys["patched"]))
        tests = {t["id"]: t for t in doc["tests"]}
        scenario = load(testdata, cdoc["inputs"]["patched"]["reports"][0]["path"])["spec"]["scenario"]
        reps = [(r["path"], i) for r in cdoc["inputs"]["patched"]["reports"] for i in r["repetitions"]]
        starts, ends = [], []
        for path, i in reps:
            rep = next(x for x in load(testdata, path)["repetitions"] if x["index"] == i)
            starts.append(parse_time(rep["started"]))
            ends.append(parse_time(rep["finished"]))
        overall = tests.get(prefix)
        check(overall is not None and overall["status"] == ("FAIL" if rc == 3 else "PASS")
              and overall["misc"]["verdict"] == cdoc["verdict"] and overall["misc"]["exit_code"] == rc
              and overall["path"] == "snapbench.%s.compare" % scenario, "%s: overall test %s" % (what, overall))
        for t in tests.values():
            check(t["build_id"] == "snapbench:" + keys["patched"], "%s: %s's build %s" % (what, t["id"], t["build_id"]))
            check(same(parse_time(t["start_time"]), min(starts)) and same(t["duration"], max(ends) - min(starts)),
                  "%s: %s's start_time %s duration %s" % (what, t["id"], t["start_time"], t["duration"]))
        for m in cdoc["metrics"]:
            t = tests.get("%s/%s/%s" % (prefix, m["window"], m["metric"]))
            check(t is not None, "%s: no test of %s %s" % (what, m["window"], m["metric"]))
            check(t["misc"]["emulated"] == m["emulated"], "%s: %s's misc.emulated %s, JSON %s"
                  % (what, t["id"], t["misc"]["emulated"], m["emulated"]))
            check(t["status"] == STATUS[m["verdict"]] and t["misc"]["verdict"] == m["verdict"],
                  "%s: %s %s status %s, verdict %s" % (what, m["window"], m["metric"], t["status"], m["verdict"]))
            check(t["path"] == "snapbench.%s.compare.%s.%s" % (scenario, m["window"], m["metric"]),
                  "%s: path %s" % (what, t["path"]))
            pct = m["pct_change"]
            if pct is None or m["from_zero"]:
                check("number" not in t, "%s: %s has a number without a change" % (what, t["id"]))
            else:
                check(t["number"]["unit"] == "%" and same(t["number"]["value"], pct),
                      "%s: %s's number %s, compare's change %r" % (what, t["id"], t["number"], pct))
            for side in ("baseline", "patched"):
                role = cdoc["inputs"][side]["role"]
                got, exp = t["misc"][role], m[side]
                check(got["n"] == exp["n"] and (exp["median"] is None or same(got["median"], exp["median"])),
                      "%s: %s %s figures %s, compare's %s" % (what, m["metric"], side, got, exp))
        for s in cdoc["skipped"]:
            t = tests.get("%s/%s/%s" % (prefix, s["window"], s["metric"]))
            check(t is not None and t["status"] == "SKIP" and t["comment"] == s["reason"],
                  "%s: skipped %s: %s" % (what, s["metric"], t))
        check(len(tests) == 1 + len(cdoc["metrics"]) + len(cdoc["skipped"]),
              "%s: %d tests for %d metrics and %d skipped" % (what, len(tests), len(cdoc["metrics"]),
                                                            len(cdoc["skipped"])))
        if what == "hostile label":
            b = builds["snapbench:" + keys["baseline"]]
            check(b["misc"]["label"] == HOSTILE_SHOWN, "%s: the label read back as %r" % (what, b["misc"]["label"]))
        log("%s: valid KCIDB 5.3; %d tests, statuses as compare's verdicts, exit %d" % (what, len(tests), rc))


# ---- what is refused ----

def case_refuse(snapbench, testdata, tmp, v):
    os.chdir(testdata)
    for origin in ("Snap", "a:b", "", "snap bench"):
        p = run([snapbench, "compare", "--format", "kcidb", "--kcidb-origin", origin, "stock.json", "perm-upgrade.json"],
                rc=2)
        check("--kcidb-origin %s" % origin in p.stderr and "lowercase letters" in p.stderr and p.stdout == "",
              "compare --kcidb-origin %r: %s" % (origin, p.stderr))
        p = run([snapbench, "show", "--socket", os.path.join(tmp, "none.sock"), "--format", "kcidb",
                 "--kcidb-origin", origin, "20261102T100000Z-5a0c01"], rc=2)
        check("--kcidb-origin %s" % origin in p.stderr, "show --kcidb-origin %r: %s" % (origin, p.stderr))
    p = run([snapbench, "compare", "--kcidb-origin", "lab", "stock.json", "perm-upgrade.json"], rc=2)
    check("--kcidb-origin goes with --format kcidb" in p.stderr, "compare --kcidb-origin alone: %s" % p.stderr)
    p = run([snapbench, "show", "--json", "--kcidb-origin", "lab", "20261102T100000Z-5a0c01"], rc=2)
    check("--kcidb-origin goes with --format kcidb" in p.stderr, "show --kcidb-origin alone: %s" % p.stderr)
    # the checks above can fail: the validator rejects what breaks the schema
    good = json.loads(run([snapbench, "compare", "--format", "kcidb", "stock.json", "perm-upgrade.json"], rc=0).stdout)
    validate(v, good, "stock vs perm-upgrade")
    numbered = next(i for i, t in enumerate(good["tests"]) if "number" in t)
    for mutate, why in ((lambda d: d["tests"][0].update(status="BOGUS"), "an unknown status"),
                        (lambda d: d["tests"][0].update(path="snapbench..x"), "an empty path component"),
                        (lambda d: d["tests"][numbered]["number"].update(value="1"), "a number as a string"),
                        (lambda d: d["tests"][0].update(id="no-origin"), "an id without its origin"),
                        (lambda d: d["builds"][0].pop("checkout_id"), "a build without its checkout"),
                        (lambda d: d["version"].update(major=4), "version 4")):
        bad = copy.deepcopy(good)
        mutate(bad)
        check(any(True for _ in v.iter_errors(bad)), "the validator took a document with %s" % why)
    log("invalid origins and a stray --kcidb-origin are refused; the validator rejects broken documents")


def main():
    snapbench, snapbenchd, testdata = (os.path.abspath(a) for a in sys.argv[1:4])
    case, schema = sys.argv[4], os.path.abspath(sys.argv[5])
    v = validator(schema)
    with tempfile.TemporaryDirectory(prefix="snapbench-kcidb-") as tmp:
        if case == "show":
            case_show(snapbench, snapbenchd, testdata, tmp, v)
        elif case == "compare":
            case_compare(snapbench, testdata, tmp, v)
        elif case == "refuse":
            case_refuse(snapbench, testdata, tmp, v)
        else:
            fail("unknown case %s" % case)


if __name__ == "__main__":
    main()
