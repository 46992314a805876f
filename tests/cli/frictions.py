#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a new user trips on, each fixed with a check (fixture reports, no daemon, no QEMU).

  - --threshold 5%, --threshold METRIC=10%, --alpha 5% are the same as 5, 10, 0.05;
  - --metric takes the names the tables print (pf/s, latency_p99, latency p99.9,
    invalidations/s (uffd-wp)); a slip gets "did you mean";
  - qmp --socket PATH that names nothing fails at once (exit 4), a file that is no
    socket is exit 2, both before --timeout (60 s here) could run out;
  - an empty file, one of white space and a binary file are said to be so by show
    and compare, not "truncated JSON";
  - a report with a string where a metric's number belongs is refused by show as
    by compare;
  - "not comparable" names sizes as 256 MiB, not 268435456;
  - show --format kcidb writes a long unavailable reason once (the other tests
    name that test in misc.unavailable_as) and says the document's size; the
    CSV writes it in one row, the others say "as row N";
  - COLUMNS=80 show fits every line of every fixture report into 80 columns
    (and COLUMNS=60 into 60): prose wrapped, arm tables with their titles
    wrapped or each row's label on a line of its own, repetitions' figures
    wrapped between figures.

Usage: frictions.py SNAPBENCH TESTDATA
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import check, result  # noqa: E402


def sb(snapbench, cwd, *args, timeout=30):
    env = dict(os.environ, SNAPBENCH_SOCKET="/nonexistent/snapbenchd.sock")
    return subprocess.run([snapbench] + list(args), cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=timeout)


def metrics(snapbench, cwd, *args):
    p = sb(snapbench, cwd, "compare", "--json", *args)
    return p.returncode, (json.loads(p.stdout) if p.stdout else None), p.stderr


def check_percent(snapbench, td):
    base = ["--metric", "latency_p99_ns", "stock.json", "regressed.json"]
    for plain, pct in ((["--threshold", "5"], ["--threshold", "5%"]),
                       (["--threshold", "latency_p99_ns=40"], ["--threshold", "latency_p99_ns=40%"]),
                       (["--alpha", "0.05"], ["--alpha", "5%"]), (["--alpha", "0.001"], ["--alpha", "0.1%"])):
        a, b = metrics(snapbench, td, *(plain + base)), metrics(snapbench, td, *(pct + base))
        check(a[0] == b[0] and a[1] and b[1] and a[1]["settings"] == b[1]["settings"],
              "%s and %s differ: exit %d vs %d, %s" % (plain, pct, a[0], b[0], b[2]))
    for bad in (["--alpha", "100%"], ["--alpha", "0%"], ["--threshold", "5%%"], ["--threshold", "-1%"]):
        p = sb(snapbench, td, "compare", *(bad + base))
        check(p.returncode == 2 and bad[1] in p.stderr, "%s: exit %d, %s" % (bad, p.returncode, p.stderr))
    print("ok --threshold and --alpha take a % sign")


def check_metric_names(snapbench, td):
    for typed, name in (("pf/s", "pf_per_s"), ("latency_p99", "latency_p99_ns"), ("latency p99", "latency_p99_ns"),
                        ("latency p99.9", "latency_p999_ns"), ("invalidations/s (uffd-wp)",
                                                               "invalidations_per_s.uffd-wp"),
                        ("snapshot duration", "snapshot_duration_s")):
        rc, doc, err = metrics(snapbench, td, "--metric", typed, "stock.json", "regressed.json")
        got = doc and [m["metric"] for m in doc["metrics"]]
        check(rc in (0, 3) and got == [name], "--metric %r: exit %d, metrics %s, %s" % (typed, rc, got, err))
    for typed, near in (("latency_p98_ns", "latency_p99_ns"), ("pf_per_z", "pf_per_s")):
        p = sb(snapbench, td, "compare", "--metric", typed, "stock.json", "regressed.json")
        check(p.returncode == 2 and "(did you mean %s?)" % near in p.stderr,
              "--metric %s: exit %d, %s" % (typed, p.returncode, p.stderr))
    print("ok --metric takes the printed names; a slip gets did you mean")


def check_qmp(snapbench, tmp):
    p = sb(snapbench, tmp, "qmp", "--socket", os.path.join(tmp, "typo.sock"), "--timeout", "60", "query-status",
           timeout=20)
    check(p.returncode == 4 and "No such file or directory" in p.stderr and "-qmp unix:" in p.stderr,
          "qmp --socket typo.sock: exit %d, %s" % (p.returncode, p.stderr))
    plain = os.path.join(tmp, "plain.txt")
    open(plain, "w").close()
    p = sb(snapbench, tmp, "qmp", "--socket", plain, "--timeout", "60", "query-status", timeout=20)
    check(p.returncode == 2 and "not a socket" in p.stderr, "qmp --socket FILE: exit %d, %s" % (p.returncode, p.stderr))
    print("ok qmp --socket: a missing socket and a plain file fail at once")


def check_files(snapbench, td, tmp):
    files = {"empty.json": b"", "blank.json": b" \n\n", "binary.json": b"\x1f\x8b\x08\x00\x00\x00\x00\x00"}
    for name, data in files.items():
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
        want = "a binary file" if b"\x00" in data else "an empty file"
        for args in (["show", os.path.join(tmp, name)], ["compare", os.path.join(tmp, name), "stock.json"]):
            p = sb(snapbench, td, *args)
            check(p.returncode == 2 and want in p.stderr and "truncated" not in p.stderr,
                  "%s: exit %d, %s" % (" ".join(args), p.returncode, p.stderr))
    with open(os.path.join(td, "stock.json")) as f:
        r = json.load(f)
    r["repetitions"][1]["windows"]["snapshot"]["metrics"]["pf_per_s"] = "950k"
    bad = os.path.join(tmp, "string-metric.json")
    with open(bad, "w") as f:
        json.dump(r, f)
    for args in (["show", bad], ["compare", bad, "perm-upgrade.json"]):
        p = sb(snapbench, td, *args)
        check(p.returncode == 2 and "pf_per_s" in p.stderr and "string" in p.stderr,
              "%s: exit %d, %s" % (" ".join(args), p.returncode, p.stderr))
    with open(os.path.join(td, "perm-upgrade.json")) as f:
        r = json.load(f)
    r["spec"]["vm"]["memory"] *= 2
    mem = os.path.join(tmp, "memory.json")
    with open(mem, "w") as f:
        json.dump(r, f)
    p = sb(snapbench, td, "compare", "stock.json", mem)
    check(p.returncode == 2 and "256 MiB in run" in p.stderr and "512 MiB in run" in p.stderr and "268435456" not in
          p.stderr, "not comparable: exit %d, %s" % (p.returncode, p.stderr))
    print("ok empty, blank and binary files, a string metric, sizes in MiB")


def check_kcidb_reasons(snapbench, td, tmp):
    """A long reason is written in one KCIDB test, the others name it; show says the document's size."""
    with open(os.path.join(td, "stock.json")) as f:
        r = json.load(f)
    why = ("kvm.pf_taken is not counted: this host's /dev/kvm is PVM (kvm_pvm), whose page-fault path never "
           "runs KVM's own; a host VM under TCG with kvm_amd inside counts it")
    for rep in r["repetitions"]:
        for w in rep["windows"].values():
            w["metrics"]["pf_per_s"] = None
            w.setdefault("unavailable", {})["pf_per_s"] = why
    path = os.path.join(tmp, "pvm.json")
    with open(path, "w") as f:
        json.dump(r, f)
    p = sb(snapbench, td, "show", "--format", "kcidb", path)
    tests = {t["id"]: t for t in json.loads(p.stdout)["tests"]} if p.returncode == 0 else {}
    skips = [t for t in tests.values() if t["status"] == "SKIP" and t["misc"].get("metric") == "pf_per_s"]
    owners = [t for t in skips if t["misc"].get("unavailable") == why]
    refs = [t for t in skips if tests.get(t["misc"].get("unavailable_as"), {}).get("misc", {}).get("unavailable") == why]
    check(p.stdout.count(why) == 2 and len(owners) == 1 and len(refs) == len(skips) - 1 and len(skips) == 15,
          "KCIDB: the reason %d times in the text, %d tests own it, %d refer to it, of %d"
          % (p.stdout.count(why), len(owners), len(refs), len(skips)))
    check(p.stderr.strip() == "snapbench show: KCIDB JSON of %s bytes written" % format(len(p.stdout.encode()), ","),
          "show --format kcidb: stderr %r for %d bytes" % (p.stderr, len(p.stdout.encode())))
    print("ok KCIDB: a long reason written once for %d tests, the size said on stderr" % len(skips))
    p = sb(snapbench, td, "show", "--format", "csv", path)
    rows = list(csv.reader(io.StringIO(p.stdout)))
    pf = [(i + 1, r) for i, r in enumerate(rows) if len(r) > 8 and r[5] == "pf_per_s"]
    first = [n for n, r in pf if r[8] == why]
    check(p.returncode == 0 and p.stdout.count(why) == 1 and len(first) == 1 and len(pf) == 15 and
          all(r[8] == "as row %d" % first[0] for n, r in pf if n != first[0]),
          "CSV: the reason %d times, rows %s" % (p.stdout.count(why), [(n, r[8][:20]) for n, r in pf]))
    print("ok CSV: a long reason in one row, the other %d name it" % (len(pf) - 1))


def check_columns(snapbench, td):
    """COLUMNS=80 (and 60) show: every line of every fixture report within the width, none ending in a blank: the
    prose wrapped, the arm tables in the first layout that fits, each repetition's figures wrapped between them."""
    names = sorted(f for f in os.listdir(td) if f.endswith(".json")) + [
        os.path.join("store", r, "report.json") for r in sorted(os.listdir(os.path.join(td, "store")))
        if os.path.isfile(os.path.join(td, "store", r, "report.json"))]
    shown = 0
    for width in (80, 60):
        env = dict(os.environ, COLUMNS=str(width), SNAPBENCH_SOCKET="/nonexistent/snapbenchd.sock")
        for name in names:
            p = subprocess.run([snapbench, "show", name], cwd=td, env=env, capture_output=True, text=True, timeout=30)
            if p.returncode != 0 and "not valid JSON" in p.stderr:
                continue  # the store's truncated report, refused (tests/cli/store-read.py)
            long = [ln for ln in p.stdout.splitlines() if len(ln) > width or ln.endswith(" ")]
            check(p.returncode == 0 and not long, "COLUMNS=%d show %s: exit %d, %d lines over %d columns or ending "
                  "in a blank: %s" % (width, name, p.returncode, len(long), width, [ln[:100] for ln in long[:3]]))
            shown += 1
    check(shown >= 30, "only %d reports shown" % shown)
    print("ok COLUMNS=80 and 60 show: every line of %d fixture reports within the width" % (shown // 2))


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    snapbench, td = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    tmp = tempfile.mkdtemp(prefix="cli-frictions-")
    try:
        check_percent(snapbench, td)
        check_metric_names(snapbench, td)
        check_qmp(snapbench, tmp)
        check_files(snapbench, td, tmp)
        check_kcidb_reasons(snapbench, td, tmp)
        check_columns(snapbench, td)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
