#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`snapbench bisect-step` under a real `git bisect run`.

1. bisect-step's exit codes on the fixture reports: 0 good, 1 bad, 125 skip
   (a measurement that cannot decide: insufficient data, a run without a
   completed repetition), 128 stop (a missing report, one that is not JSON,
   incomparable runs, a bad option, no argument: an error that every commit
   would give), 0 for --help.
2. A tiny git repository whose commits each name the fixture report "built"
   at that commit (the file `fixture`): good, skip, good, skip, good, bad (the
   first bad one), skip, bad. `git bisect run` with a step script that calls
   `snapbench bisect-step BASELINE.json FIXTURE` must find the first bad
   commit, having skipped at least one commit, and every step must have
   exited 0, 1 or 125. The same bisection with a typo in the step's options
   (`--bogus x`) must stop at its first step: git bisect run fails after
   one step, instead of skipping every commit.
3. The step script docs/cli.md shows for a kernel tree with kernel arms, as
   written there, run in a toy tree with a stand-in for make (it writes
   arch/x86/boot/bzImage and mod/, or fails) and for snapbench run (the real
   CLI with --print-spec: options parsed and the spec validated, no VM; the
   arms must boot the good kernel and the tree's; then a report of the two
   arms is placed where the run would have written it, built from the
   fixtures: stock.json's repetitions as arm good, and regressed.json's or
   perm-upgrade.json's as arm test); the real bisect-step then judges it:
   1 bad, 0 good, and 125 for a commit that does not build; a run that
   exits 1 (failed at this commit) is a skip, one that exits 2 (usage) or 4
   (preflight) stops the bisection (128).
4. What recurs at every commit stops the bisection: a metric the host can
   never count (the reports' windows.W.unavailable, a PVM host's pf_per_s),
   a window the scenario never has; a metric only the commit's run lost is a
   skip; a tainted kernel under test is named; the verdict line and the
   JSON's exit_code are the exit status.

Usage: bisect.py SNAPBENCH TESTDATA CLI_MD
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

METRIC = ["--metric", "latency_p99_ns"]
# perm-upgrade.json as a run whose every repetition failed: written into the test's copy of the fixtures
FAILED_RUN = "failed-run.json"
# stock.json and regressed.json from a host that cannot count pf_per_s (a PVM /dev/kvm): the metric null, the
# report saying why; regressed.json from a host VM kernel that warned (taint W)
PVM_GOOD, PVM_BAD, TAINTED = "pvm-stock.json", "pvm-regressed.json", "tainted-regressed.json"
PVM_WHY = "kvm.pf_taken is not counted: the host's /dev/kvm is PVM, whose page-fault path never runs"

# fixture (relative to TESTDATA) -> what bisect-step must say against stock.json
CASES = [
    ("perm-upgrade.json", 0, "improved: good"),
    ("regressed.json", 1, "p99 +30%: bad"),
    ("small-b.json", 125, "5 vs 2 repetitions: insufficient-data, skip"),
    (FAILED_RUN, 125, "a run without a completed repetition: skip"),
    ("missing.json", 128, "no such report: stop"),
    ("bad/not-json.json", 128, "not JSON: stop"),
    ("read64.json", 128, "incomparable runs: stop"),
]
VERDICT = {0: "good", 1: "bad", 125: "skip", 128: "stop"}

# (arguments, exit code, why, what stderr must also say): what recurs at every commit stops, what is this
# commit's own skips
MORE_CASES = [
    (["--metric", "pf_per_s", PVM_GOOD, PVM_BAD], 128, "a metric the host can never count: stop", PVM_WHY),
    (["--metric", "pf_per_s", "--metric", "latency_p99_ns", PVM_GOOD, PVM_BAD], 128,
     "one named metric the host can never count, though another regressed: stop", "pf/s in snapshot"),
    (["--metric", "pf_per_s", "stock.json", PVM_BAD], 125,
     "the commit's run lost a metric the baseline has: skip", "no metric had values on both sides"),
    ([PVM_GOOD, PVM_BAD], 1, "the default metrics: pf_per_s left out, the rest judged: bad", "regressed"),
    (["--window", "migration", "stock.json", "regressed.json"], 128,
     "a window the scenario never has: stop", "no repetition of the selected runs"),
    (["--metric", "latency_p99_ns", "stock.json", TAINTED], 1, "a tainted kernel under test: named",
     "the kernel under test was in trouble: run "),
]

# the history: one fixture per commit, oldest first; index 5 is the first bad
# commit, and git's first pick (the middle, index 3) is one to skip
HISTORY = ["perm-upgrade.json", "small-b.json", "perm-upgrade.json", FAILED_RUN,
           "perm-upgrade.json", "regressed.json", "small-b.json", "regressed.json"]
FIRST_BAD = 5

STEP = """#!/bin/sh
# one bisect step: compare the commit's run with the good baseline
"$SNAPBENCH" bisect-step -q --metric latency_p99_ns $EXTRA "$TESTDATA/$BASELINE" "$TESTDATA/$(cat fixture)"
rc=$?
echo "$(git rev-parse HEAD) $rc" >>"$STEP_LOG"
exit $rc
"""


def fail(msg):
    print("FAIL %s" % msg)
    sys.exit(1)


def exit_codes(snapbench, testdata):
    for fixture, want, why in CASES:
        p = subprocess.run([snapbench, "bisect-step", "-q"] + METRIC + ["stock.json", fixture],
                           cwd=testdata, capture_output=True, text=True, timeout=60)
        if p.returncode != want:
            fail("bisect-step stock.json %s exited %d, expected %d (%s); stderr:\n%s"
                 % (fixture, p.returncode, want, why, p.stderr))
        if "snapbench bisect-step: %s (%d)" % (VERDICT[want], want) not in p.stderr:
            fail("bisect-step stock.json %s: stderr does not say its verdict:\n%s" % (fixture, p.stderr))
        print("ok %s: %d (%s)" % (fixture, want, why))
    for args, want, why, said in MORE_CASES:
        p = subprocess.run([snapbench, "bisect-step", "-q"] + args, cwd=testdata, capture_output=True, text=True,
                           timeout=60)
        if p.returncode != want or "snapbench bisect-step: %s (%d)" % (VERDICT[want], want) not in p.stderr \
                or said not in p.stderr:
            fail("bisect-step %s exited %d, expected %d (%s) saying %r; stderr:\n%s"
                 % (" ".join(args), p.returncode, want, why, said, p.stderr))
        print("ok bisect-step %s: %d (%s)" % (" ".join(args), want, why))
    # the verdict line of the table and the JSON's exit_code are the exit status
    for fixture, want, why in CASES[:3] + [(PVM_BAD, 128, "")]:
        metric = ["--metric", "pf_per_s"] if fixture == PVM_BAD else METRIC
        base = PVM_GOOD if fixture == PVM_BAD else "stock.json"
        p = subprocess.run([snapbench, "bisect-step"] + metric + [base, fixture], cwd=testdata,
                           capture_output=True, text=True, timeout=60)
        line = [x for x in p.stdout.splitlines() if x.startswith("Verdict:")]
        if p.returncode != want or len(line) != 1 or not line[0].endswith("(exit code %d)." % want):
            fail("bisect-step %s: exit %d, verdict line %s; expected exit code %d in both" % (fixture, p.returncode,
                                                                                            line, want))
        j = subprocess.run([snapbench, "bisect-step", "--json"] + metric + [base, fixture], cwd=testdata,
                           capture_output=True, text=True, timeout=60)
        if j.returncode != want or json.loads(j.stdout)["exit_code"] != want:
            fail("bisect-step --json %s: exit %d, exit_code %s; expected %d in both"
                 % (fixture, j.returncode, j.stdout[-200:], want))
        print("ok bisect-step %s: exit %d = the verdict line's = the JSON's exit_code" % (fixture, want))
    # a usage error stops the bisection: it would be the same at every commit
    for args, want in ((["--bogus", "x", "stock.json", "regressed.json"], 128), (["--metric"], 128), ([], 128),
                       (["--help"], 0), (["--alpha", "2", "stock.json", "regressed.json"], 128)):
        p = subprocess.run([snapbench, "bisect-step"] + args, cwd=testdata, capture_output=True, text=True,
                           timeout=60)
        if p.returncode != want or (want and "snapbench bisect-step: stop (128)" not in p.stderr):
            fail("bisect-step %s exited %d, expected %d; stderr:\n%s" % (args, p.returncode, want, p.stderr))
        print("ok bisect-step %s: %d" % (" ".join(args), want))


def git(repo, *args, env=None):
    p = subprocess.run(["git"] + list(args), cwd=repo, capture_output=True, text=True, env=env, timeout=120)
    if p.returncode != 0 and args[0] != "bisect":
        fail("git %s: exit %d\n%s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
    return p


# bisections that must stop at their first step (extra step options, the baseline): a typo, a metric the host
# can never count, a window the scenario never has
STOPPING = [
    ("--bogus x", "stock.json", "a typo in the step"),
    ("--metric pf_per_s", PVM_GOOD, "a metric the host cannot count"),
    ("--window migration", "stock.json", "a window background-snapshot runs never have"),
]


def bisect(snapbench, testdata, stop=None):
    tmp = tempfile.mkdtemp(prefix="compare-bisect-")
    try:
        repo = os.path.join(tmp, "repo")
        os.mkdir(repo)
        step = os.path.join(tmp, "step.sh")
        log = os.path.join(tmp, "steps.log")
        with open(step, "w") as f:
            f.write(STEP)
        os.chmod(step, 0o755)
        env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1",
                   GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
                   GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid",
                   SNAPBENCH=snapbench, TESTDATA=testdata, STEP_LOG=log, EXTRA=stop[0] if stop else "",
                   BASELINE=stop[1] if stop else "stock.json")
        git(repo, "init", "-q", "-b", "main", env=env)
        commits = []
        for i, fixture in enumerate(HISTORY):
            with open(os.path.join(repo, "fixture"), "w") as f:
                f.write(fixture + "\n")
            git(repo, "add", "fixture", env=env)
            git(repo, "commit", "-q", "--allow-empty", "-m", "commit %d: %s" % (i, fixture), env=env)
            commits.append(git(repo, "rev-parse", "HEAD", env=env).stdout.strip())

        git(repo, "bisect", "start", commits[-1], commits[0], env=env)
        p = git(repo, "bisect", "run", step, env=env)
        out = p.stdout + p.stderr
        if stop:
            with open(log) as f:
                steps = [line.split() for line in f]
            # a commit whose run failed has no comparison to find it in: skipped; the first that has one stops
            names = {c: i for i, c in enumerate(commits)}
            if p.returncode == 0 or not steps or steps[-1][1] != "128" or \
                    any(rc != "125" or HISTORY[names[sha]] != FAILED_RUN for sha, rc in steps[:-1]):
                fail("a step with %s did not stop git bisect run at its first comparison: exit %d, steps %s:\n%s"
                     % (stop[2], p.returncode, steps, out))
            git(repo, "bisect", "reset", env=env)
            print("ok git bisect run with %s: stopped at its first comparison (exit 128), steps %s"
                  % (stop[2], ", ".join("%d %s" % (names[s], rc) for s, rc in steps)))
            return
        if p.returncode != 0:
            fail("git bisect run exited %d:\n%s" % (p.returncode, out))
        if "%s is the first bad commit" % commits[FIRST_BAD] not in out:
            fail("git bisect run did not find commit %d (%s) as the first bad one:\n%s"
                 % (FIRST_BAD, commits[FIRST_BAD], out))
        with open(log) as f:
            steps = [line.split() for line in f]
        names = {c: i for i, c in enumerate(commits)}
        for sha, rc in steps:
            if rc not in ("0", "1", "125"):
                fail("a step exited %s at commit %d" % (rc, names[sha]))
            want = {"perm-upgrade.json": "0", "regressed.json": "1"}.get(HISTORY[names[sha]], "125")
            if rc != want:
                fail("commit %d (%s): the step exited %s, expected %s" % (names[sha], HISTORY[names[sha]], rc, want))
        if not any(rc == "125" for _, rc in steps):
            fail("git bisect never met a skipped commit: %s" % steps)
        git(repo, "bisect", "reset", env=env)
        print("ok git bisect run: commit %d is the first bad one; steps (commit, exit code): %s"
              % (FIRST_BAD, ", ".join("%d %s" % (names[s], rc) for s, rc in steps)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# snapbench on the doc script's PATH: the real one, but run only parses and validates (--print-spec), records the
# spec, and leaves a report of two arms where the run would have written it
SNAPBENCH_STAND_IN = """#!/usr/bin/python3
import json, os, subprocess, sys
real = os.environ["REAL_SNAPBENCH"]
if sys.argv[1:2] != ["run"]:
    os.execv(real, [real] + sys.argv[1:])
p = subprocess.run([real] + sys.argv[1:] + ["--print-spec"], capture_output=True, text=True)
sys.stderr.write(p.stderr)
if p.returncode != 0:
    sys.exit(p.returncode)
if os.environ.get("RUN_EXIT"):  # the run as it ends otherwise: failed (1), a preflight check unmet (4) ...
    sys.stderr.write("snapbench run: (stand-in) exiting %s\\n" % os.environ["RUN_EXIT"])
    sys.exit(int(os.environ["RUN_EXIT"]))
with open(os.environ["SPEC_LOG"], "w") as f:
    f.write(p.stdout)
report = json.load(open(os.environ["ARMS_REPORT"]))
out = os.path.join(sys.argv[sys.argv.index("--output") + 1], report["id"])
os.makedirs(out)
with open(os.path.join(out, "report.json"), "w") as f:
    json.dump(report, f)
"""

# make in the toy tree: the kernel and the modules a build leaves, or a build that fails
MAKE_STAND_IN = """#!/bin/sh
[ -z "${MAKE_FAILS:-}" ] || { echo "make: *** [Makefile] Error 2" >&2; exit 2; }
for a in "$@"; do
    case $a in
    bzImage) mkdir -p arch/x86/boot && echo "kernel of $(git rev-parse --short HEAD)" >arch/x86/boot/bzImage ;;
    INSTALL_MOD_PATH=*) mkdir -p "${a#INSTALL_MOD_PATH=}/lib/modules" ;;
    esac
done
"""


def doc_step_script(cli_md):
    """The step.sh block of docs/cli.md's bisection of a kernel tree, dedented."""
    with open(cli_md) as f:
        text = f.read()
    at = text.find("with `~/bisect/step.sh`:")
    if at < 0:
        fail("%s shows no ~/bisect/step.sh" % cli_md)
    lines = text[at:].splitlines()[1:]
    while lines and not lines[0].strip():
        lines.pop(0)
    block = []
    for line in lines:
        if line and not line.startswith("    "):
            break
        block.append(line[4:])
    script = "\n".join(block).strip() + "\n"
    if not script.startswith("#!/bin/sh\n") or "snapbench bisect-step" not in script:
        fail("%s: the step script is not where it was: %r" % (cli_md, script[:200]))
    return script


def two_arms(testdata, test_fixture):
    """stock.json's repetitions as arm good and test_fixture's as arm test, in one report."""
    with open(os.path.join(testdata, "stock.json")) as f:
        good = json.load(f)
    with open(os.path.join(testdata, test_fixture)) as f:
        test = json.load(f)
    r = copy.deepcopy(good)
    r["arms"] = [dict(good["arms"][0], label="good"), dict(test["arms"][0], label="test")]
    r["spec"]["arms"] = [dict(good["spec"]["arms"][0], label="good"), dict(test["spec"]["arms"][0], label="test")]
    r["repetitions"] = ([dict(x, arm="good") for x in good["repetitions"]] +
                        [dict(x, arm="test") for x in test["repetitions"]])
    for i, x in enumerate(r["repetitions"]):
        x["index"] = i
    return r


def doc_script(snapbench, testdata, cli_md):
    script = doc_step_script(cli_md)
    p = subprocess.run(["sh", "-n", "-c", script], capture_output=True, text=True)
    if p.returncode != 0:
        fail("docs/cli.md's step script: sh -n: %s" % p.stderr)
    tmp = tempfile.mkdtemp(prefix="compare-bisect-doc-")
    try:
        home, tree, bindir = (os.path.join(tmp, d) for d in ("home", "linux", "bin"))
        good = os.path.join(home, "bisect", "good")
        os.makedirs(os.path.join(good, "mod"))
        os.makedirs(tree)
        os.makedirs(bindir)
        with open(os.path.join(good, "bzImage"), "w") as f:
            f.write("the good kernel\n")
        for name, text in (("snapbench", SNAPBENCH_STAND_IN), ("make", MAKE_STAND_IN)):
            with open(os.path.join(bindir, name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(bindir, name), 0o755)
        step = os.path.join(home, "bisect", "step.sh")
        with open(step, "w") as f:
            f.write(script)
        os.chmod(step, 0o755)
        env = dict(os.environ, HOME=home, PATH=bindir + ":" + os.environ["PATH"], REAL_SNAPBENCH=snapbench,
                   SPEC_LOG=os.path.join(tmp, "spec.json"), ARMS_REPORT=os.path.join(tmp, "arms.json"),
                   GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t",
                   GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
        git(tree, "init", "-q", "-b", "main", env=env)
        git(tree, "commit", "-q", "--allow-empty", "-m", "the commit under test", env=env)
        commit = git(tree, "rev-parse", "--short", "HEAD", env=env).stdout.strip()
        for fixture, fails, want, run_exit in (("regressed.json", False, 1, None),
                                               ("perm-upgrade.json", False, 0, None),
                                               ("regressed.json", True, 125, None),
                                               ("regressed.json", False, 125, 1), ("regressed.json", False, 128, 2),
                                               ("regressed.json", False, 128, 4)):
            with open(env["ARMS_REPORT"], "w") as f:
                json.dump(two_arms(testdata, fixture), f)
            if os.path.exists(env["SPEC_LOG"]):
                os.unlink(env["SPEC_LOG"])
            run_env = dict(env, MAKE_FAILS="1") if fails else env
            if run_exit:
                run_env = dict(run_env, RUN_EXIT=str(run_exit))
            p = subprocess.run([step], cwd=tree, env=run_env, capture_output=True, text=True, timeout=120)
            what = "docs/cli.md's step script, arm test from %s%s%s" % (
                fixture, ", the build failing" if fails else "", ", the run exiting %d" % run_exit if run_exit else "")
            logs = os.path.join(home, "bisect", "steps", commit)
            if p.returncode != want:
                tail = "".join(open(os.path.join(logs, n)).read() for n in ("build.log", "run.log")
                               if os.path.exists(os.path.join(logs, n)))
                fail("%s: exit %d, expected %d\n%s%s%s" % (what, p.returncode, want, p.stdout, p.stderr, tail))
            if fails:
                if os.path.exists(env["SPEC_LOG"]):
                    fail("%s: snapbench run ran after the build failed" % what)
                print("ok %s: 125 (skip), no run" % what)
                continue
            if run_exit:
                print("ok %s: %d (%s)" % (what, want, VERDICT[want]))
                continue
            with open(env["SPEC_LOG"]) as f:
                spec = json.load(f)
            arms = [(a["label"], a.get("kernel"), a.get("modules")) for a in spec["arms"]]
            want_arms = [("good", os.path.join(good, "bzImage"), os.path.join(good, "mod")),
                         ("test", os.path.join(tree, "arch/x86/boot/bzImage"), os.path.join(logs, "mod"))]
            if arms != want_arms or spec.get("repetitions") != 5:
                fail("%s: the run's spec has arms %s and %s repetitions, expected %s and 5"
                     % (what, arms, spec.get("repetitions"), want_arms))
            if not os.path.exists(os.path.join(logs, "compare", "compare.json")):
                fail("%s: bisect-step wrote no compare.json into %s/compare" % (what, logs))
            print("ok %s: %d (%s); the run parsed and validated with arms good and test"
                  % (what, want, {0: "good", 1: "bad"}[want]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    if not shutil.which("git"):
        print("SKIP: git is not installed (scripts/install-deps installs it)")
        return 77
    snapbench, source, cli_md = (os.path.abspath(a) for a in argv[1:4])
    work = tempfile.mkdtemp(prefix="compare-bisect-data-")
    try:
        testdata = os.path.join(work, "testdata")
        shutil.copytree(source, testdata, ignore=shutil.ignore_patterns("golden", "store"))
        with open(os.path.join(testdata, "perm-upgrade.json")) as f:
            failed = json.load(f)
        failed["state"] = "failed"
        for rep in failed["repetitions"]:
            rep["state"] = "failed"
        with open(os.path.join(testdata, FAILED_RUN), "w") as f:
            json.dump(failed, f)
        for src, dst in (("stock.json", PVM_GOOD), ("regressed.json", PVM_BAD)):
            with open(os.path.join(testdata, src)) as f:
                r = json.load(f)
            for rep in r["repetitions"]:
                for w in rep["windows"].values():
                    w["metrics"]["pf_per_s"] = None
                    w.setdefault("unavailable", {})["pf_per_s"] = PVM_WHY
            with open(os.path.join(testdata, dst), "w") as f:
                json.dump(r, f)
        with open(os.path.join(testdata, "regressed.json")) as f:
            r = json.load(f)
        for rep in r["repetitions"]:
            rep["host_vm"] = dict(rep.get("host_vm") or {}, kernel_taint=512, kernel_taint_flags="W",
                                  kernel_warnings=["WARNING: CPU: 1 PID: 7 at arch/x86/kvm/mmu/mmu.c:6000"])
        with open(os.path.join(testdata, TAINTED), "w") as f:
            json.dump(r, f)
        exit_codes(snapbench, testdata)
        bisect(snapbench, testdata)
        for stop in STOPPING:
            bisect(snapbench, testdata, stop)
        doc_script(snapbench, testdata, cli_md)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
