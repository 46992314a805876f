#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""snapbench show and the run summary of each scenario, from fixture reports.

The fixtures (reports/testdata: dirty-log.json, postcopy.json,
kernel-retried.json, numa-hinting.json) are first checked against the schema, then put in the
store of a snapbenchd this test starts on a private socket (it starts no
QEMU: nothing is submitted), and `snapbench show ID` and `snapbench list
--json` are read:

  - the window of the scenario's action is headed by what it is ("during the
    migration's passes", "during the postcopy migration", "during the
    snapshot"), in the arm tables and in the summary's medians, whose last
    figure is the migration's duration for the migrating scenarios;
  - each repetition of a migrating scenario shows its migration's figures as
    the report records them (the migration window's duration, QEMU's status,
    dirty-log: the passes and the steady pass time; postcopy-restore: the
    destination's pass, its page requests, the chunk, the pages lost);
  - a repetition retried on a fresh host VM (host_vm.retried_after) is said
    so, with the reason;
  - numa-hinting: the steady window headed "while NUMA balancing scans the
    guest RAM", the seed 002 count among the arm table's rows, each
    repetition's steady window with its KVM flushes for NUMA hinting, its
    invalidations, its pinned pages and nodes, and the summary's steady
    duration and flushes;
  - show --file REPORT reads the same report file without snapbenchd: the
    same CSV, JSON, OpenMetrics and KCIDB, the text without the summary, and
    a missing file is exit 2 naming it.

Usage: show.py SNAPBENCH SNAPBENCHD VALIDATOR SCHEMA TESTDATA
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from clitest import check, result

FIXTURES = ("dirty-log.json", "postcopy.json", "kernel-retried.json", "numa-hinting.json")


def run(argv, env):
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)


def start_daemon(snapbenchd, tmp, log):
    sock, state = os.path.join(tmp, "snapbenchd.sock"), os.path.join(tmp, "state")
    d = subprocess.Popen([snapbenchd, "--foreground", "--socket", sock, "--state-dir", state, "--group", "root",
                          "--metrics-file", ""], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while not os.path.exists(sock):
        if d.poll() is not None or time.monotonic() > deadline:
            d.kill()
            d.wait(timeout=30)
            log.seek(0)
            sys.exit("snapbenchd did not start listening:\n" + log.read())
        time.sleep(0.05)
    return d, sock


def show(snapbench, rid, env):
    p = run([snapbench, "show", rid], env)
    check(p.returncode == 0 and p.stderr == "", "show %s: exit %d, stderr %r" % (rid, p.returncode, p.stderr))
    return p.stdout


def has(text, line, what):
    return check(line in text, "%s: no %r in\n%s" % (what, line, text))


def rep_line(text, index):
    """The line of repetition index in show's list, with the lines it wrapped onto (indented eight) joined back."""
    lines = text.split("\nrepetitions:\n", 1)[-1].splitlines()
    for i, line in enumerate(lines):
        if line.split()[:1] == [str(index)]:
            for more in lines[i + 1:]:
                if not more.startswith("        "):
                    break
                line += "  " + more.strip()
            return line
    return ""


def middle_title(text):
    """The first arm table's middle column's title, its lines (wrapped within the column) joined back."""
    lines = text.split("\narm ", 1)[1].splitlines()[1:]
    heads = [ln for ln in lines[:next(i for i, ln in enumerate(lines) if ln[2:3].strip())]]
    starts = [m.start() for m in re.finditer(r"(?<=  )\S", heads[0])]
    return " ".join(ln[starts[1]:starts[2]].strip() for ln in heads if ln[starts[1]:starts[2]].strip())


def fmt(v):
    """A figure as the CLI's fmt_rate() prints it (%.4g below 10,000)."""
    return "%.4g" % v


def check_dirty_log(text, report, summary):
    what = "show dirty-log"
    has(text, "  arm stock, during the migration's passes (medians): ", what)
    check("during the snapshot" not in text, "%s: says 'during the snapshot':\n%s" % (what, text))
    # the arm table's middle column is the migration window, headed as such
    check(middle_title(text) == "during the migration's passes",
          "%s: the arm table's middle column is headed %r, not the migration's passes:\n%s" % (what, middle_title(text),
                                                                                             text))
    durations = [r["windows"]["migration"]["duration_s"] for r in report["repetitions"]]
    has(text, "  migration %s s\n" % fmt(statistics.median(durations)), what)
    for r in report["repetitions"]:
        mig, win = r["migration"], r["windows"]["migration"]
        want = "migration %s s (%s)  passes %d  pass %s s" % (fmt(win["duration_s"]), mig["status"],
                                                              len(mig["iterations"]),
                                                              fmt(win["metrics"]["iteration_s"]))
        check(rep_line(text, r["index"]).endswith(want),
              "%s: rep %d's line %r, want it to end in %r" % (what, r["index"], rep_line(text, r["index"]), want))
    arm = summary["arms"][0]
    check("snapshot" not in arm and arm.get("migration", {}).get("migration_duration_s") == statistics.median(durations),
          "%s: the summary's arm %r" % (what, arm))
    check(arm.get("migration", {}).get("guest_ops_per_s") ==
          report["arms"][0]["windows"]["migration"]["guest_ops_per_s"]["median"],
          "%s: the summary's medians are not the migration window's: %r" % (what, arm))


def check_postcopy(text, report, summary):
    what = "show postcopy-restore"
    has(text, "  arm stock, during the postcopy migration (medians): ", what)
    check("during the snapshot" not in text, "%s: says 'during the snapshot':\n%s" % (what, text))
    durations = [r["windows"]["migration"]["duration_s"] for r in report["repetitions"]]
    has(text, "  migration %s s\n" % fmt(statistics.median(durations)), what)
    for r in report["repetitions"]:
        pc = r["postcopy"]
        req = pc["postcopy_requests"]
        want = "migration %s s (%s)  fault pass %s ms  postcopy requests %s  chunk %s B  pages lost %s" % (
            fmt(r["windows"]["migration"]["duration_s"]), pc["status"], fmt(pc["pass"]["ms"]),
            "-" if req is None else "{:,}".format(req), "{:,}".format(pc["chunk_bytes"]),
            "{:,}".format(pc["pass"]["mismatches"]))
        check(rep_line(text, r["index"]).endswith(want),
              "%s: rep %d's line %r, want it to end in %r" % (what, r["index"], rep_line(text, r["index"]), want))
    check(any(r["postcopy"]["postcopy_requests"] is None for r in report["repetitions"]),
          "%s: the fixture should have a repetition without QEMU's request count" % what)
    check("migration" in summary["arms"][0], "%s: the summary's arm %r" % (what, summary["arms"][0]))


def check_retried(text, report, summary):
    what = "show kernel-retried"
    has(text, "  arm npt, during the snapshot (medians): ", what)
    retried = [r for r in report["repetitions"] if r["host_vm"]["retried_after"]]
    check(len(retried) == 1, "%s: the fixture should have one retried repetition" % what)
    for r in retried:
        has(text, "  rep %d (arm %s): retried on a fresh host VM after: %s\n"
            % (r["index"], r["arm"], r["host_vm"]["retried_after"]), what)
        check(rep_line(text, r["index"]).endswith("  (retried on a fresh host VM)"),
              "%s: rep %d's line %r" % (what, r["index"], rep_line(text, r["index"])))
    for r in report["repetitions"]:
        if not r["host_vm"]["retried_after"]:
            check("retried" not in rep_line(text, r["index"]), "%s: rep %d said retried" % (what, r["index"]))
            check("snapshot %s s" % fmt(r["snapshot"]["duration_s"]) in rep_line(text, r["index"]),
                  "%s: rep %d's line %r" % (what, r["index"], rep_line(text, r["index"])))
    check(summary["retried"] == [{"index": r["index"], "arm": r["arm"], "after": r["host_vm"]["retried_after"]}
                                 for r in retried], "%s: the summary's retried %r" % (what, summary["retried"]))
    check("snapshot_duration_s" in summary["arms"][0].get("snapshot", {}),
          "%s: the summary's arm %r" % (what, summary["arms"][0]))
    check_emulated(text, what, ["pf/s", "tlb/s", "guest ops/s", "latency p99", "snapshot"], [])


def check_emulated(text, what, time_rows, count_rows):
    """A run under TCG (here: kernel arms whose host VMs ran under TCG, a report written before accel): said
    once, and each row of a time, a rate or a latency ends in "emulated", a count's does not."""
    check("\n  timing emulated: " in text, "%s: no 'timing emulated' line:\n%s" % (what, text))
    lines = text.splitlines() + [""]

    def marked(i):
        # at the row's end, or (the table in two lines a row, within 80 columns) heading its second line
        return lines[i].endswith("  emulated") or lines[i + 1].startswith("    emulated")

    for label in time_rows:
        rows = [i for i, ln in enumerate(lines) if ln.startswith("  " + label + " ")]
        check(rows and all(marked(i) for i in rows), "%s: %r rows %r" % (what, label, [lines[i] for i in rows]))
    for label in count_rows:
        rows = [i for i, ln in enumerate(lines) if ln.startswith("  " + label)]
        check(rows and not any(marked(i) for i in rows), "%s: %r rows %r" % (what, label, [lines[i] for i in rows]))


def check_numa(text, report, summary):
    what = "show numa-hinting"
    title = "while NUMA balancing scans the guest RAM"
    for arm in ("unpinned", "pinned"):
        has(text, "  arm %s, %s (medians): " % (arm, title), what)
    check("during the snapshot" not in text, "%s: says 'during the snapshot':\n%s" % (what, text))
    check(middle_title(text) == title,
          "%s: the arm table's middle column is headed %r, not %r:\n%s" % (what, middle_title(text), title, text))
    has(text, "  KVM flushes, NUMA hinting", what)
    check_emulated(text, what, ["guest ops/s"], ["KVM flushes, NUMA hinting", "SPTEs zapped, NUMA hinting"])
    check("uffd-wp" not in text, "%s: a uffd-wp row in a run without a snapshot:\n%s" % (what, text))
    for r in report["repetitions"]:
        win = r["windows"]["steady"]
        pinned = r["vm"].get("pinned_pages")
        # counts grouped by thousands, as the tables write them
        want = "steady %s s  KVM flushes for NUMA hinting %s  NUMA-hinting invalidations %s  pinned pages %s  nodes %s" % (
            fmt(win["duration_s"]), "{:,}".format(win["metrics"]["numa_kvm_flushes"]),
            "{:,}".format(win["metrics"]["numa_invalidations"]), "-" if pinned is None else "{:,}".format(pinned),
            "{:,}".format(r["numa"]["nodes"]))
        check(rep_line(text, r["index"]).endswith(want),
              "%s: rep %d's line %r, want it to end in %r" % (what, r["index"], rep_line(text, r["index"]), want))
    for a, arm in zip(report["arms"], summary["arms"]):
        steady = arm.get("steady", {})
        durations = [r["windows"]["steady"]["duration_s"] for r in report["repetitions"] if r["arm"] == a["label"]]
        check(steady.get("steady_duration_s") == statistics.median(durations) and
              steady.get("numa_kvm_flushes") == a["windows"]["steady"]["numa_kvm_flushes"]["median"],
              "%s: the summary's arm %r" % (what, arm))


def unwrap(lines):
    """The head's lines with the lines a long one wrapped onto (indented six, COLUMNS) joined back."""
    out = []
    for line in lines:
        if out and line.startswith("      ") and out[-1].startswith("  ") and not out[-1].startswith("   "):
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return out


def check_head(text, report, what):
    """show's text starts with the run id and state, then the scenario, the kernel(s), QEMU and the accelerator."""
    lines = unwrap(text.splitlines())
    check(lines[0] == "run %s: %s" % (report["id"], report["state"]), "%s: first line %r" % (what, lines[0]))
    check(lines[1].startswith("  scenario %s: " % report["spec"]["scenario"]), "%s: second line %r" % (what, lines[1]))
    kernels = {(a.get("kernel") or {}).get("release") or report["host"]["kernel_release"] for a in report["arms"]}
    check(lines[2].startswith("  kernel") and all(k in lines[2] for k in kernels),
          "%s: the kernel line %r, the report's %s" % (what, lines[2], kernels))
    check(lines[3].startswith("  QEMU " + report["host"]["qemu"]["version"]), "%s: the QEMU line %r" % (what, lines[3]))
    check(lines[4].startswith("  accelerator: "), "%s: the accelerator line %r" % (what, lines[4]))
    tcg = "accel" in report and report["accel"]["timing"] == "emulated" or any(
        ((a.get("kernel") or {}).get("host_vm") or {}).get("accel") == "tcg" for a in report["arms"])
    timing = lines[5]
    check(timing.startswith("  timing emulated" if tcg else "  timing native"), "%s: the timing line %r"
          % (what, lines[5]))


def check_file(snapbench, rid, path, daemon_text, env):
    """show --file PATH gives what snapbenchd's show gives for the same report (text: without the summary)."""
    for fmt in ("csv", "json", "openmetrics", "kcidb"):
        d = run([snapbench, "show", rid, "--format", fmt], env)
        f = run([snapbench, "show", "--file", path, "--format", fmt], env)
        check(d.returncode == 0 and f.returncode == 0 and d.stdout == f.stdout,
              "%s: show --file --format %s differs from snapbenchd's (exit %d, %d): %s" % (
                  rid, fmt, d.returncode, f.returncode, f.stderr))
    # a report written before accel whose kernel arms ran under TCG: --json derives accel from them
    j = json.loads(run([snapbench, "show", "--file", path, "--json"], env).stdout)
    report = json.load(open(path))
    tcg = any(((a.get("kernel") or {}).get("host_vm") or {}).get("accel") == "tcg" for a in report["arms"])
    check("accel" in report or (j.get("accel", {}).get("timing") == "emulated") == tcg,
          "%s: show --json's accel %r, the arms' host VMs %s TCG" % (rid, j.get("accel"), "under" if tcg else "not under"))
    f = run([snapbench, "show", "--file", path], env)
    body = f.stdout.rsplit("\nreport: ", 1)
    check(f.returncode == 0 and len(body) == 2 and body[1] == path + "\n", "%s: show --file: %s" % (rid, f.stdout))
    # the same head (run id and state, scenario, kernel, QEMU, accelerator) and the same arm tables as the daemon's
    head = lambda text: text.split("\n  created ", 1)[0]
    check(head(f.stdout) == head(daemon_text), "%s: show --file's head %r, the daemon's %r"
          % (rid, head(f.stdout), head(daemon_text)))
    arms = body[0][body[0].index("\narm "):]
    check(arms in daemon_text, "%s: show --file's arm tables are not the daemon's:\n%s" % (rid, f.stdout))
    check_head(f.stdout, report, rid)
    # a terminal whose locale is not UTF-8 gets "us" for "µs"
    if "\u00b5s" in f.stdout:
        c = run([snapbench, "show", path], dict(env, LC_ALL="C"))
        check(c.returncode == 0 and "\u00b5" not in c.stdout and re.search(r"\dus\b", c.stdout),
              "%s: show under LC_ALL=C still writes µ:\n%s" % (rid, c.stdout[:600]))
    # show PATH is show --file PATH; a run directory shows its report.json
    p = run([snapbench, "show", path], env)
    check(p.returncode == 0 and p.stdout == f.stdout, "%s: show PATH differs from show --file PATH: %s"
          % (rid, p.stderr))
    d = run([snapbench, "show", os.path.dirname(path) or "."], env)
    check(d.returncode != 0 or d.stdout.startswith("run "), "%s: show DIR: %s" % (rid, d.stdout[:200]))


def main(argv):
    if len(argv) != 6:
        sys.exit(__doc__)
    snapbench, snapbenchd, validator, schema, testdata = (os.path.abspath(a) for a in argv[1:6])
    paths = [os.path.join(testdata, f) for f in FIXTURES]
    p = run([sys.executable, validator, schema] + paths, os.environ)
    check(p.returncode == 0, "the fixtures do not validate: %s%s" % (p.stdout, p.stderr))
    reports = {f: json.load(open(path)) for f, path in zip(FIXTURES, paths)}
    with tempfile.TemporaryDirectory(prefix="snapbench-show-") as tmp:
        for f, r in reports.items():
            os.makedirs(os.path.join(tmp, "state", "runs", r["id"]))
            shutil.copy(os.path.join(testdata, f), os.path.join(tmp, "state", "runs", r["id"], "report.json"))
        with open(os.path.join(tmp, "snapbenchd.log"), "w+") as log:
            d, sock = start_daemon(snapbenchd, tmp, log)
            try:
                env = dict(os.environ, SNAPBENCH_SOCKET=sock, COLUMNS="80")
                p = run([snapbench, "list", "--json"], env)
                check(p.returncode == 0, "list --json: exit %d (%s)" % (p.returncode, p.stderr))
                summaries = {s["id"]: s for s in json.loads(p.stdout or "[]")}
                for f, checker in zip(FIXTURES, (check_dirty_log, check_postcopy, check_retried, check_numa)):
                    rid = reports[f]["id"]
                    text = show(snapbench, rid, env)
                    print(text)
                    checker(text, reports[f], summaries.get(rid, {"arms": [{}], "retried": None}))
                    # snapbenchd's summary lines too fit COLUMNS (the file's lines: tests/cli/frictions.py)
                    # (but a path, and a retried repetition's reason, whose lines are the console's, kept whole)
                    long = [ln for ln in text.splitlines() if len(ln) > 80 and not ln.startswith("report: ") and
                            not re.match(r"  rep \d+ \(arm .*\): retried on a fresh host VM after: ", ln)]
                    check(not long, "show %s: %d lines over 80 columns: %r" % (rid, len(long), long[:3]))
                    check_head(text, reports[f], "show " + rid)
                    check_file(snapbench, rid, os.path.join(testdata, f), text, env)
                p = run([snapbench, "show", "--file", os.path.join(tmp, "no-such.json")], env)
                check(p.returncode == 2 and "no-such.json" in p.stderr,
                      "show --file of a missing file: exit %d: %s" % (p.returncode, p.stderr))
                p = run([snapbench, "show", os.path.join(tmp, "no-such.json")], env)
                check(p.returncode == 2 and "no-such.json" in p.stderr and "snapbenchd" not in p.stderr,
                      "show of a missing path: exit %d: %s" % (p.returncode, p.stderr))
                # a report written after accel: the fallback into a TCG host VM, said in the head
                for f in ("tcg-host-vm.json", "native.json"):
                    r = json.load(open(os.path.join(testdata, f)))
                    p = run([snapbench, "show", os.path.join(testdata, f)], env)
                    # the accelerator line with the lines its reason wrapped onto (COLUMNS)
                    accel = unwrap(p.stdout.splitlines())[4]
                    check(p.returncode == 0 and r["accel"]["reason"] in accel,
                          "show %s: exit %d, accelerator line %r" % (f, p.returncode, accel))
                    check_head(p.stdout, r, f)
                # without snapbenchd, an id says how to read a file instead
                p = run([snapbench, "show", reports[FIXTURES[0]]["id"], "--store", os.path.join(tmp, "no-store")],
                        dict(env, SNAPBENCH_SOCKET=os.path.join(tmp, "none.sock")))
                check(p.returncode == 4 and "'snapbench show PATH'" in p.stderr, "show ID without snapbenchd: exit %d: %s"
                      % (p.returncode, p.stderr))
            finally:
                d.terminate()
                d.wait(timeout=30)
    return result()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
