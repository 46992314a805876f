#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""End to end: two real short runs with different settings, compared.

Runs `snapbench run` twice into a private results store (real QEMU with KVM,
or TCG on a machine without /dev/kvm, the micro guest, BPF probes, a
background snapshot): arm "write" with guest
pattern write64 and arm "read" with read64, two repetitions each. Then:

  - comparing them plainly is refused (exit 2) naming spec.guest.pattern with
    both values and --force;
  - with --force, by label from the store, over the pre and snapshot windows
    and every metric: exit 0 or 3, compare.json valid against the schema and
    consistent with the run reports (each side's values are the runner's own
    per-arm values, in order), the table on stdout equals compare.txt, the
    Markdown has its table, every SVG parses with the expected structure;
  - the run directories given as files compare the same way (--json);
  - an A/A split of one label works (1 vs 1: insufficient-data).

Every report is validated against the run schema first. The runs' QEMUs are
stopped by snapbench run; the test checks that none is left (killing any it
finds by the pid the run recorded) and removes its temp directory.

Usage: e2e.py SNAPBENCH COMPARE_SCHEMA RUN_SCHEMA RUN_VALIDATOR
"""
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402  (the SVG checks)

try:
    import jsonschema
except ImportError:
    sys.exit("e2e: python3-jsonschema is missing; run scripts/install-deps")

def kvm_usable():
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC))
        return True
    except OSError:
        return False


# without /dev/kvm the guests run under TCG here: the comparison's flow is the same
RUN_ARGS = ["--repetitions", "2", "--memory", "256M", "--warmup", "1", "--pre", "1", "--post", "1",
            "--interval", "250", "-q", "--accel", "kvm" if kvm_usable() else "tcg"]


def skip(what):
    print("SKIP: this machine lacks %s" % what, file=sys.stderr)
    sys.exit(77)


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, **kw)


def snapbench_run(snapbench, store, label, pattern):
    p = run([snapbench, "run", "--local", "--output", store, "--label", label, "--pattern", pattern] + RUN_ARGS)
    if p.returncode == 4:  # preflight: a host feature is missing, and the message names it
        skip("a feature snapbench run needs: %s" % p.stderr.strip().splitlines()[-1])
    check(p.returncode == 0, "snapbench run (%s) exited %d:\n%s" % (label, p.returncode, p.stderr))
    runs = [d for d in os.listdir(store) if os.path.exists(os.path.join(store, d, "report.json"))]
    for d in runs:
        with open(os.path.join(store, d, "report.json")) as f:
            if json.load(f)["arms"][0]["label"] == label:
                return os.path.join(store, d)
    raise AssertionError("no run directory for %s in %s" % (label, store))


def leftover_qemus(store):
    """QEMUs whose pid a run recorded and that still run; killed here."""
    alive = []
    for d in os.listdir(store) if os.path.isdir(store) else []:
        pidfile = os.path.join(store, d, "qemu.pid")
        if not os.path.exists(pidfile):
            continue
        try:
            pid = int(open(pidfile).read().strip())
            with open("/proc/%d/comm" % pid) as f:
                if "qemu" not in f.read():
                    continue
            os.kill(pid, signal.SIGKILL)
            alive.append(pid)
        except (ValueError, OSError) as e:
            if getattr(e, "errno", None) not in (None, errno.ENOENT, errno.ESRCH):
                raise
    return alive


def arm_values(report_path, window, metric):
    with open(report_path) as f:
        run_report = json.load(f)
    stat = run_report["arms"][0]["windows"].get(window, {}).get(metric)
    return stat["values"] if stat else None


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    snapbench, compare_schema, run_schema, run_validator = (os.path.abspath(a) for a in argv[1:5])
    if os.geteuid() != 0:
        skip("root (BPF probes and the snapshot's userfaultfd need it)")
    with open(compare_schema) as f:
        validator = jsonschema.Draft202012Validator(json.load(f))

    tmp = tempfile.mkdtemp(prefix="compare-e2e-")
    store = os.path.join(tmp, "store")
    os.makedirs(store)
    try:
        write_dir = snapbench_run(snapbench, store, "write", "write64")
        read_dir = snapbench_run(snapbench, store, "read", "read64")
        reports = [os.path.join(d, "report.json") for d in (write_dir, read_dir)]
        p = run(["/usr/bin/python3", run_validator, run_schema] + reports)
        check(p.returncode == 0, "the run reports do not validate:\n%s" % p.stderr)
        print("ok two runs: %s, %s" % (os.path.basename(write_dir), os.path.basename(read_dir)))

        # different guest patterns: refused, naming the field, both values and the fix
        p = run([snapbench, "compare", write_dir, read_dir])
        check(p.returncode == 2, "plain compare exited %d, expected 2:\n%s%s" % (p.returncode, p.stdout, p.stderr))
        for word in ("spec.guest.pattern", '"write64"', '"read64"', "--force"):
            check(word in p.stderr, "the refusal does not mention %s:\n%s" % (word, p.stderr))
        print("ok refused without --force")

        out = os.path.join(tmp, "out")
        p = run([snapbench, "compare", "--force", "--store", store, "--baseline", "label=write",
                 "--patched", "label=read", "--window", "pre", "--window", "snapshot", "--metric", "*",
                 "--output", out], env=dict({k: v for k, v in os.environ.items() if k != "COLUMNS"},
                                           LC_ALL="C.UTF-8"))
        check(p.returncode in (0, 3), "compare --force exited %d:\n%s" % (p.returncode, p.stderr))
        with open(os.path.join(out, "compare.txt"), encoding="utf-8") as f:
            # off a terminal, in UTF-8 and without $COLUMNS, stdout is compare.txt's 80 columns
            check(f.read() == p.stdout, "stdout and compare.txt differ")
        with open(os.path.join(out, "compare.json")) as f:
            doc = json.load(f)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        check(not errors, "compare.json: %s" % (errors[0].message if errors else ""))
        check(doc["exit_code"] == p.returncode, "exit_code in the JSON differs from the exit status")
        check(doc["inputs"]["baseline"]["repetitions"] == 2 and doc["inputs"]["patched"]["repetitions"] == 2,
              "each side should have 2 repetitions")
        check([d["field"] for d in doc["comparability"]["differences"]] == ["spec.guest.pattern"],
              "differences: %s" % doc["comparability"]["differences"])
        names = {(m["window"], m["metric"]) for m in doc["metrics"]}
        # a headline counter this host's KVM cannot move (PVM: pf_taken, remote_tlb_flush) is skipped with
        # the reason the reports give, never compared as a row of zeros
        skipped = {(m["window"], m["metric"]): m["reason"] for m in doc["skipped"]}
        with open(reports[0]) as f:
            probes = json.load(f)["probes"]
        for want, counter in ((("snapshot", "pf_per_s"), "kvm.pf_taken"), (("snapshot", "tlb_per_s"), "kvm.remote_tlb_flush"),
                              (("snapshot", "guest_ops_per_s"), "guest.ops"), (("pre", "pf_per_s"), "kvm.pf_taken")):
            if probes[counter]["available"]:
                check(want in names, "metric %s missing from %s" % (want, sorted(names)))
            else:
                check(want in skipped and probes[counter]["reason"] in skipped[want],
                      "metric %s of unavailable %s: not skipped with its reason (%s)" % (want, counter, skipped.get(want)))
        for m in doc["metrics"]:
            if m.get("count_of_rate"):  # a rate not judged, its count (rate x duration): tests/compare/unjudged.py
                rate = m["metric"].replace("_count", "_per_s", 1)
                check(any(r["metric"] == rate and r["window"] == m["window"] and r.get("not_judged") for r in
                          doc["metrics"]), "%s: a count row without its rate not judged" % m["metric"])
                continue
            for side, rpath in (("baseline", reports[0]), ("patched", reports[1])):
                want = arm_values(rpath, m["window"], m["metric"])
                check(want is not None and len(want) == m[side]["n"] and
                      all(abs(a - b) <= 1e-9 * (abs(a) + abs(b) + 1) for a, b in zip(want, m[side]["values"])),
                      "%s %s %s: compare used %s, the run report's arm has %s"
                      % (m["window"], m["metric"], side, m[side]["values"], want))
            check(m["verdict"] == "insufficient-data" or m["test"]["p_floor"] <= 0.05,
                  "2 vs 2 cannot be significant: %s" % m)
        with open(os.path.join(out, "compare.md")) as f:
            md = f.read()
        check("| metric | baseline median (min max) |" in md, "the Markdown has no table")
        svgs = sorted(f for f in os.listdir(out) if f.endswith(".svg"))
        # a metric 0 in every repetition of both sides gets no plot (no --all here)
        plotted = [m for m in doc["metrics"]
                   if any(v != 0 for side in ("baseline", "patched") for v in m[side]["values"])]
        check(len(svgs) == len(plotted) + 1, "%d SVGs for %d metrics not 0 everywhere" % (len(svgs), len(plotted)))
        for m in plotted:
            golden.check_metric_svg("e2e", os.path.join(out, "%s-%s.svg" % (m["window"], m["metric"])), m)
        has_inv = any(m["metric"] == "invalidations_per_s" for m in doc["metrics"])
        has_pf = any(m["metric"] == "pf_per_s" for m in doc["metrics"])
        # compared where this host's KVM counts it: KVM with svm or vmx, not PVM and not TCG
        pf_counted = probes["kvm.pf_taken"]["available"]
        check(has_pf == pf_counted, "pf_per_s compared: %s, kvm.pf_taken counted here: %s" % (has_pf, pf_counted))
        golden.check_timeline_svg("e2e", os.path.join(out, "timeline.svg"), has_inv, has_pf)
        print("ok compare --force: %d metrics, verdict %s, %d SVGs parsed"
              % (len(doc["metrics"]), doc["verdict"], len(svgs)))
        if has_inv:
            snap = {m["metric"]: m for m in doc["metrics"] if m["window"] == "snapshot"}
            print("   snapshot invalidations/s: write %g, read %g (uffd-wp: %s)"
                  % (snap["invalidations_per_s"]["baseline"]["median"],
                     snap["invalidations_per_s"]["patched"]["median"],
                     "yes" if "invalidations_per_s.uffd-wp" in snap else "no"))

        # the run directories as files, JSON on stdout
        p = run([snapbench, "compare", "--force", "--json", write_dir, read_dir])
        check(p.returncode in (0, 3), "compare of run directories exited %d:\n%s" % (p.returncode, p.stderr))
        doc2 = json.loads(p.stdout)
        validator.validate(doc2)
        check(doc2["inputs"]["baseline"]["label"] == "write" and doc2["inputs"]["patched"]["label"] == "read",
              "labels of the run directories")
        print("ok compare of run directories (--json)")

        # A/A of one label: 1 vs 1 can never be significant
        p = run([snapbench, "compare", "--store", store, "--aa", "label=write", "--json"])
        check(p.returncode == 0, "A/A exited %d:\n%s" % (p.returncode, p.stderr))
        aa = json.loads(p.stdout)
        validator.validate(aa)
        check(aa["mode"] == "aa" and aa["verdict"] == "insufficient-data", "A/A verdict %s" % aa["verdict"])
        check(any("no metric can reach significance" in w for w in aa["warnings"]), "A/A warning missing")
        print("ok A/A split")
    except AssertionError as e:
        print("FAIL %s" % e, file=sys.stderr)
        return 1
    finally:
        left = leftover_qemus(store)
        shutil.rmtree(tmp, ignore_errors=True)
        if left:
            print("FAIL QEMU left running by a run: killed pids %s" % left, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
