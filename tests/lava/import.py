#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""snapbench import-lava on LAVA job logs built here from the report
fixtures of reports/testdata/ (docs/lava.md): no LAVA, no QEMU.

    import.py SNAPBENCH TESTDATA CASE REPORT_SCRIPT VALIDATOR SCHEMA

A log is what lava-run writes: one YAML flow record a line, the DUT's console
as "target" records (with the kernel's printk lines in between, carriage
returns, LAVA's own info and results records with their `! "1234.5"` tags),
the report gzip'ed and base64'ed between SNAPBENCH-REPORT-BEGIN and -END.

CASE is one of
  good       two runs (stock, perm-upgrade) from one log, and a third run
             from stdin without compression: each report.json in the store
             byte for byte the fixture, origin.json naming the job, device
             and device type (the marker's, or the options'), and compare
             --baseline label=stock --patched label=perm-upgrade on the store
             giving what it gives on the fixture files;
  truncated  the log cut in the middle of a report, and cut inside a record:
             exit 2 with "cut off", nothing in the store;
  corrupt    a base64 line changed (bad checksum / bad gzip), a line lost, a
             report whose marker names another run: exit 2 with the reason,
             nothing in the store, also not the good report beside the bad one
             in the same log;
  conflict   the same log twice: the second exits 1 naming the run already
             in the store, which is left as it was;
  script     lava/snapbench-lava-report, what the DUT runs, prints a report
             (pretty, and on one line as the run engine writes it) with the
             job's fields; its lines as the console's records import byte
             for byte; a field it cannot carry is refused;
  partial    a log cut inside a report after the test cases that
             snapbench-lava-run reported (two arms, a failed repetition, a
             skipped figure) and the job's failure: without --partial exit 2
             and an empty store; with it the run in the store rebuilt from
             the test cases (valid against the schema, its windows' metrics
             the measurements, origin.json saying partial) that show and
             compare read; a log with neither a report nor test cases, and
             test cases whose units disagree with snapbench's, exit 2.
"""

import base64
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile

FIXTURES = ["stock.json", "perm-upgrade.json"]


def log(*args):
    print("lava-import:", *args, flush=True)


def fail(msg):
    print("lava-import: FAIL:", msg, flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def record(lvl, msg, dt="2026-12-01T10:00:00.000000"):
    # json.dumps of a string is a YAML double-quoted scalar; a dict is a flow mapping
    return "- {\"dt\": \"%s\", \"lvl\": \"%s\", \"msg\": %s}\n" % (dt, lvl, json.dumps(msg))


def report_block(data, run_id, encoding="gzip+base64", extra=" job=4711 device=qemu-01 device_type=qemu",
                 width=76):
    payload = gzip.compress(data, mtime=0) if encoding == "gzip+base64" else data
    b64 = base64.b64encode(payload).decode()
    lines = [b64[i:i + width] for i in range(0, len(b64), width)]
    begin = "SNAPBENCH-REPORT-BEGIN v=1 id=%s bytes=%d sha256=%s encoding=%s%s" % (
        run_id, len(data), hashlib.sha256(data).hexdigest(), encoding, extra)
    return begin, lines, "SNAPBENCH-REPORT-END v=1 id=%s lines=%d" % (run_id, len(lines))


def job_log(blocks):
    """A lava-run log: LAVA's records, the console, one or more report blocks."""
    out = [record("info", "start: 0 validate"), record("info", "lava-dispatcher, installed at version: 2023.01"),
           record("target", "Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org)\r"),
           record("debug", {"case": "validate", "definition": "lava", "result": "pass"})]
    for begin, lines, end in blocks:
        out.append(record("target", "+ snapbench-lava-report /results/report.json"))
        out.append(record("target", begin + "\r"))
        for i, line in enumerate(lines):
            out.append(record("target", line))
            if i == 1:
                out.append(record("target", "[   12.345678] kvm_amd: Nested Virtualization enabled"))
        out.append(record("target", end))
    # a lava-test-case --measurement record, the way LAVA writes it
    out.append('- {"dt": "2026-12-01T10:00:09.5", "lvl": "results", "msg": {"case": "pf_per_s", "definition": '
               '"1_snapbench", "measurement": ! "950015", "result": "pass", "units": "1/s"}}\n')
    out.append(record("info", "Job finished correctly"))
    return "".join(out)


def run(argv, rc, stdin=None):
    p = subprocess.run(argv, capture_output=True, text=True, input=stdin)
    if p.returncode != rc:
        fail("%s: exit %d, expected %d\nstdout:\n%s\nstderr:\n%s" % (argv, p.returncode, rc, p.stdout, p.stderr))
    return p


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def fixture(testdata, name):
    with open(os.path.join(testdata, name), "rb") as f:
        data = f.read()
    return data, json.loads(data)["id"]


def store_entries(store):
    return sorted(os.listdir(store)) if os.path.isdir(store) else []


def compare_json(snapbench, args):
    p = subprocess.run([snapbench, "compare", "--json"] + args, capture_output=True, text=True)
    check(p.returncode in (0, 3), "compare %s: exit %d: %s" % (args, p.returncode, p.stderr))
    doc = json.loads(p.stdout)
    for side in ("baseline", "patched"):  # paths differ: the store's against the fixtures'
        for r in doc["inputs"][side]["reports"]:
            r.pop("path")
        doc["inputs"][side].pop("selector")
    return doc, p.returncode


def case_good(snapbench, testdata, tmp):
    store = os.path.join(tmp, "store")
    blocks, ids = [], []
    for name in FIXTURES:
        data, run_id = fixture(testdata, name)
        blocks.append(report_block(data, run_id))
        ids.append(run_id)
    path = write(os.path.join(tmp, "job.log"), job_log(blocks))
    p = run([snapbench, "import-lava", "--store", store, path], 0)
    check(p.stderr == "", "import-lava wrote to stderr: %s" % p.stderr)
    for run_id in ids:
        check("imported run %s" % run_id in p.stdout and "LAVA job 4711, device qemu-01 (qemu)" in p.stdout,
              "import-lava said: %s" % p.stdout)
    check(store_entries(store) == sorted(ids), "the store holds %s" % store_entries(store))
    for name, run_id in zip(FIXTURES, ids):
        data, _ = fixture(testdata, name)
        with open(os.path.join(store, run_id, "report.json"), "rb") as f:
            check(f.read() == data, "%s/report.json is not %s byte for byte" % (run_id, name))
        with open(os.path.join(store, run_id, "origin.json")) as f:
            origin = json.load(f)
        check(origin["source"] == "lava" and origin["lava"] == {"job_id": "4711", "device": "qemu-01",
                                                                "device_type": "qemu"}
              and origin["report_sha256"] == hashlib.sha256(data).hexdigest() and origin["log"] == path
              and origin["encoding"] == "gzip+base64", "%s/origin.json: %s" % (run_id, origin))
    # compare reads the imported runs as it reads the fixtures
    got, rc = compare_json(snapbench, ["--store", store, "--baseline", "label=stock", "--patched",
                                       "label=perm-upgrade"])
    want, want_rc = compare_json(snapbench, [os.path.join(testdata, n) for n in FIXTURES])
    check(got == want and rc == want_rc, "compare on the imported runs differs from compare on the fixtures")
    log("two reports from one log: byte-exact in the store with their origin; compare reads them (exit %d)" % rc)

    # stdin, no compression, origin from the options where the marker has none
    data, run_id = fixture(testdata, "regressed.json")
    text = job_log([report_block(data, run_id, encoding="base64", extra="", width=64)])
    p = run([snapbench, "import-lava", "--store", store, "--job-id", "99", "--device", "lab-3", "--device-type",
             "x86-epyc", "-"], 0, stdin=text)
    with open(os.path.join(store, run_id, "report.json"), "rb") as f:
        check(f.read() == data, "regressed.json from stdin is not byte for byte")
    with open(os.path.join(store, run_id, "origin.json")) as f:
        origin = json.load(f)
    check(origin["lava"] == {"job_id": "99", "device": "lab-3", "device_type": "x86-epyc"}
          and origin["encoding"] == "base64" and origin["log"] == "-", "origin from the options: %s" % origin)
    log("a base64 report from stdin, its origin from --job-id/--device/--device-type")


def refused(snapbench, tmp, text, what, want):
    store = os.path.join(tmp, "store-" + what.replace(" ", "-"))
    path = write(os.path.join(tmp, what.replace(" ", "-") + ".log"), text)
    p = run([snapbench, "import-lava", "--store", store, path], 2)
    check(want in p.stderr and p.stdout == "", "%s: the message %r lacks %r" % (what, p.stderr, want))
    check(store_entries(store) == [], "%s: the store holds %s" % (what, store_entries(store)))
    log("%s: refused (%s), nothing written" % (what, p.stderr.strip()))


def case_truncated(snapbench, testdata, tmp):
    data, run_id = fixture(testdata, "stock.json")
    full = job_log([report_block(data, run_id)])
    lines = full.splitlines(keepends=True)
    begin = next(i for i, line in enumerate(lines) if "SNAPBENCH-REPORT-BEGIN" in line)
    end = next(i for i, line in enumerate(lines) if "SNAPBENCH-REPORT-END" in line)
    middle = (begin + end) // 2
    refused(snapbench, tmp, "".join(lines[:middle]), "cut between lines", "cut off")
    refused(snapbench, tmp, "".join(lines[:middle]) + lines[middle][:30], "cut inside a record", "cut off")


def case_corrupt(snapbench, testdata, tmp):
    data, run_id = fixture(testdata, "stock.json")
    other, other_id = fixture(testdata, "perm-upgrade.json")
    begin, lines, end = report_block(data, run_id)
    bad = list(lines)
    k = len(bad) // 2
    bad[k] = bad[k][:10] + ("A" if bad[k][10] != "A" else "B") + bad[k][11:]
    refused(snapbench, tmp, job_log([report_block(other, other_id), (begin, bad, end)]),
            "one base64 character changed", "nothing imported")
    refused(snapbench, tmp, job_log([(begin, lines[:k] + lines[k + 1:], end)]), "a line lost", "lines were lost")
    begin2, lines2, end2 = report_block(data, run_id, encoding="base64")
    flipped = base64.b64encode(data.replace(b"stock", b"stocK", 1)).decode()
    lines2 = [flipped[i:i + 76] for i in range(0, len(flipped), 76)]
    refused(snapbench, tmp, job_log([(begin2, lines2, end2)]), "a report that fails its checksum", "SHA-256")
    b3, l3, e3 = report_block(data, "20261102T100000Z-0ther0")
    refused(snapbench, tmp, job_log([(b3, l3, e3)]), "a marker naming another run", "its marker names run")


def case_conflict(snapbench, testdata, tmp):
    store = os.path.join(tmp, "store")
    data, run_id = fixture(testdata, "stock.json")
    path = write(os.path.join(tmp, "job.log"), job_log([report_block(data, run_id)]))
    run([snapbench, "import-lava", "--store", store, path], 0)
    origin = os.path.join(store, run_id, "origin.json")
    before = open(origin).read()
    p = run([snapbench, "import-lava", "--store", store, path], 1)
    check("already in the store" in p.stderr and run_id in p.stderr, "second import: %s" % p.stderr)
    check(open(origin).read() == before and store_entries(store) == [run_id], "the store changed")
    log("a second import of the same run is refused (exit 1), the store left as it was")


def case_script(snapbench, testdata, tmp, script):
    store = os.path.join(tmp, "store")
    stock, _ = fixture(testdata, "stock.json")
    one_line = json.dumps(json.loads(stock), separators=(",", ":")).encode()  # as the run engine writes it
    other, other_id = fixture(testdata, "perm-upgrade.json")
    one = write(os.path.join(tmp, "one-line.json"), one_line.decode().replace(json.loads(stock)["id"], other_id, 1)
                .replace('"stock"', '"one-line"'))
    with open(one, "rb") as f:
        one_line = f.read()
    for path, data, run_id in ((os.path.join(testdata, "stock.json"), stock, json.loads(stock)["id"]),
                               (one, one_line, other_id)):
        p = run(["/bin/sh", script, path, "job=4711", "device=qemu-01", "device_type=qemu"], 0)
        console = [record("target", line + "\r") for line in p.stdout.splitlines()]
        text = record("info", "start: 2 lava-test-shell") + "".join(console) + record("info", "Job finished")
        logfile = write(os.path.join(tmp, run_id + ".log"), text)
        run([snapbench, "import-lava", "--store", store, logfile], 0)
        with open(os.path.join(store, run_id, "report.json"), "rb") as f:
            check(f.read() == data, "%s: not byte for byte after the script and the import" % path)
        with open(os.path.join(store, run_id, "origin.json")) as f:
            check(json.load(f)["lava"] == {"job_id": "4711", "device": "qemu-01", "device_type": "qemu"},
                  "%s: origin" % path)
    p = run(["/bin/sh", script, os.path.join(testdata, "stock.json"), "device=a b"], 2)
    check("letters, digits" in p.stderr, "the script took a device name with a space: %s" % p.stderr)
    log("the DUT's script prints reports (pretty and one-line) that import byte for byte with their origin")


def test_cases(report, fail_rep=None, definition="0_snapbench"):
    """The results records snapbench-lava-run writes for report: preflight, run, then per arm a test set of
    repN.WINDOW.METRIC (every figure: SNAPBENCH_LAVA_METRICS=all), as lava-run prints them (no "- ")."""
    out, tc = [], 600
    for case, result in (("preflight", "pass"), ("run", "fail" if fail_rep is not None else "pass")):
        out.append('{"dt": "2026-12-01T10:00:05", "lvl": "results", "msg": {"case": "%s", "definition": "%s", '
                   '"endtc": ! "%d", "result": "%s", "starttc": ! "%d"}}\n' % (case, definition, tc, result, tc))
    units = {m: i["unit"] for m, i in report["metric_info"].items()}
    for arm in report["arms"]:
        out.append(record("target", "<LAVA_SIGNAL_TESTSET START %s>" % arm["label"]))
        for rep in report["repetitions"]:
            if rep["arm"] != arm["label"]:
                continue
            for wname, win in rep["windows"].items():
                for m, v in win["metrics"].items():
                    tc += 1
                    name = "rep%d.%s.%s" % (rep["index"], wname, m)
                    if v is None:
                        out.append('{"dt": "x", "lvl": "results", "msg": {"case": "%s", "definition": "%s", '
                                   '"result": "skip", "set": "%s"}}\n' % (name, definition, arm["label"]))
                        continue
                    out.append('{"dt": "x", "lvl": "results", "msg": {"case": "%s", "definition": "%s", "endtc": '
                               '! "%d", "measurement": ! "%s", "result": "%s", "set": "%s", "starttc": ! "%d", '
                               '"units": "%s"}}\n' % (name, definition, tc, json.dumps(v),
                                                       "fail" if rep["index"] == fail_rep else "pass",
                                                       arm["label"], tc, units[m]))
        out.append(record("target", "<LAVA_SIGNAL_TESTSET STOP>"))
    return "".join(out)


def case_partial(snapbench, testdata, tmp, validator, schema):
    data, run_id = fixture(testdata, "two-arms.json")
    report = json.loads(data)
    fail_rep = report["repetitions"][-1]["index"]
    full = job_log([report_block(data, run_id)])
    lines = full.splitlines(keepends=True)
    begin = next(i for i, line in enumerate(lines) if "SNAPBENCH-REPORT-BEGIN" in line)
    cut = lines[:begin] + [test_cases(report, fail_rep)] + lines[begin:(begin + len(lines)) // 2]
    job = ('{"dt": "x", "lvl": "results", "msg": {"case": "job", "definition": "lava", "error_msg": '
           '"lava-test-shell timed out after 600 seconds", "error_type": "Job", "result": "fail"}}\n')
    path = write(os.path.join(tmp, "cut.log"), "".join(cut) + job)
    store = os.path.join(tmp, "store")

    p = run([snapbench, "import-lava", "--store", store, path], 2)
    check("cut off" in p.stderr and store_entries(store) == [], "without --partial: %s, %s" % (p.stderr,
                                                                                           store_entries(store)))
    p = run([snapbench, "import-lava", "--store", store, "--partial", "--json", path], 0)
    out = json.loads(p.stdout)
    check(out["id"] == run_id and out["partial"] is True and out["job_id"] == "4711" and out["device"] == "qemu-01",
          "import-lava --partial --json said %s" % out)
    check(store_entries(store) == [run_id], "the store holds %s" % store_entries(store))
    got_path = os.path.join(store, run_id, "report.json")
    v = subprocess.run(["/usr/bin/python3", validator, schema, got_path], capture_output=True, text=True)
    check(v.returncode == 0, "the partial report does not validate: %s" % v.stderr)
    with open(got_path) as f:
        got = json.load(f)
    # without its marker the nulls are no longer allowed: the schema refuses it
    whole = dict(got)
    whole.pop("partial")
    v = subprocess.run(["/usr/bin/python3", validator, schema, write(os.path.join(tmp, "unmarked.json"),
                                                                   json.dumps(whole))], capture_output=True, text=True)
    check(v.returncode != 0 and "created: None is not of type" in v.stderr, "a partial report without its marker validates: %s" % v.stderr)
    check(got["state"] == "failed" and got["partial"]["source"] == "lava" and got["spec"] is None
          and "did not come back" in got["error"]["message"] and "cut off" in got["error"]["message"]
          and "timed out after 600 seconds" in got["error"]["message"]
          and got["partial"]["job_error"] == "lava-test-shell timed out after 600 seconds"
          and got["partial"]["preflight"] == "pass" and got["partial"]["run"] == "fail",
          "the partial report's top: %s" % {k: got[k] for k in ("state", "error", "partial")})
    check([a["label"] for a in got["arms"]] == [a["label"] for a in report["arms"]], "arms %s" % got["arms"])
    check([(r["index"], r["arm"]) for r in got["repetitions"]] == [(r["index"], r["arm"]) for r in
                                                                   report["repetitions"]], "repetitions differ")
    for want, have in zip(report["repetitions"], got["repetitions"]):
        check(have["state"] == ("failed" if want["index"] == fail_rep else "completed"),
              "repetition %d: state %s" % (want["index"], have["state"]))
        check(set(have["windows"]) == set(want["windows"]), "repetition %d: windows" % want["index"])
        for wname, win in want["windows"].items():
            check(have["windows"][wname]["metrics"] == win["metrics"],
                  "repetition %d window %s: metrics %s, the measurements %s" % (want["index"], wname,
                                                                               have["windows"][wname]["metrics"],
                                                                               win["metrics"]))
            check(set(have["windows"][wname]["unavailable"]) == set(win["unavailable"]),
                  "repetition %d window %s: unavailable" % (want["index"], wname))
            check(have["windows"][wname]["start_s"] is None and have["vm"] is None and have["timeline"] == [],
                  "repetition %d: a figure the test cases do not give" % want["index"])
    for m, info in report["metric_info"].items():  # the fixture's descriptions may be older than this snapbench's
        check(m not in got["metric_info"] or {k: got["metric_info"][m][k] for k in ("unit", "better")} ==
              {k: info[k] for k in ("unit", "better")}, "metric_info[%s]: %s" % (m, got["metric_info"].get(m)))
    with open(os.path.join(store, run_id, "origin.json")) as f:
        origin = json.load(f)
    check(origin["partial"] is True and origin["source"] == "lava" and origin["report_sha256"] is None
          and origin["lava"] == {"job_id": "4711", "device": "qemu-01", "device_type": "qemu"}, "origin %s" % origin)
    log("a log cut in its report: exit 2, nothing written; with --partial the run from its %d test cases, valid "
        "against the schema" % got["partial"]["test_cases"])

    # show and compare read it
    for fmt in ("text", "json", "csv"):
        p = run([snapbench, "show", "--file", got_path, "--format", fmt], 0)
        check(fmt != "text" or "partial report (from lava): rebuilt from the LAVA job's test cases" in p.stdout,
              "show --file says %s" % p.stdout)
    arms = [a["label"] for a in report["arms"]]
    p = subprocess.run([snapbench, "compare", "--json", "--store", store, "--baseline", "label=" + arms[0],
                        "--patched", "label=" + arms[1]], capture_output=True, text=True)
    check(p.returncode in (0, 3), "compare on the partial run: exit %d: %s" % (p.returncode, p.stderr))
    json.loads(p.stdout)
    # against a whole run: its spec is not known, so not comparable unless forced
    sides = ["--baseline", "label=stock", "--patched", "label=" + arms[0], os.path.join(testdata, "stock.json"),
             got_path]
    p = run([snapbench, "compare", "--json"] + sides, 2)
    check("not comparable" in p.stderr and "(absent)" in p.stderr, "compare with a whole run: %s" % p.stderr)
    p = subprocess.run([snapbench, "compare", "--json", "--force"] + sides, capture_output=True, text=True)
    check(p.returncode in (0, 3) and json.loads(p.stdout)["comparability"]["differences"],
          "compare --force with a whole run: exit %d: %s" % (p.returncode, p.stderr))
    log("show --file (text, json, csv) and compare read it; against a whole run only with --force")

    # a second --partial import of the same run: refused, the store as it was
    p = run([snapbench, "import-lava", "--store", store, "--partial", path], 1)
    check("already in the store" in p.stderr, "a second partial import: %s" % p.stderr)

    # neither a report nor test cases
    empty = os.path.join(tmp, "store-empty")
    bare = write(os.path.join(tmp, "bare.log"), record("info", "start: 0 validate") + job)
    p = run([snapbench, "import-lava", "--store", empty, "--partial", bare], 2)
    check("no test case" in p.stderr and store_entries(empty) == [], "no test cases: %s" % p.stderr)
    # units that are not snapbench's
    bad = "".join(cut).replace('"units": "1/s"', '"units": "ns"', 1)
    p = run([snapbench, "import-lava", "--store", empty, "--partial", write(os.path.join(tmp, "units.log"), bad)],
            2)
    check("units ns" in p.stderr and store_entries(empty) == [], "units: %s" % p.stderr)
    # without a report marker: a new run id
    no_marker = lines[:begin] + [test_cases(report)]
    p = run([snapbench, "import-lava", "--store", empty, "--partial", "--json",
             write(os.path.join(tmp, "no-marker.log"), "".join(no_marker))], 0)
    new_id = json.loads(p.stdout)["id"]
    check(new_id != run_id and store_entries(empty) == [new_id], "no marker: %s" % p.stdout)
    log("neither report nor test cases, and units not snapbench's: exit 2; no marker: a new run id")


def main():
    snapbench, testdata, script = (os.path.abspath(a) for a in (sys.argv[1], sys.argv[2], sys.argv[4]))
    case = sys.argv[3]
    with tempfile.TemporaryDirectory(prefix="snapbench-lava-") as tmp:
        if case == "script":
            case_script(snapbench, testdata, tmp, script)
            return
        if case == "partial":
            case_partial(snapbench, testdata, tmp, os.path.abspath(sys.argv[5]), os.path.abspath(sys.argv[6]))
            return
        {"good": case_good, "truncated": case_truncated, "corrupt": case_corrupt,
         "conflict": case_conflict}[case](snapbench, testdata, tmp)


if __name__ == "__main__":
    main()
