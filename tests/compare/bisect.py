#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`snapbench bisect-step` under a real `git bisect run`.

1. bisect-step's exit codes on the fixture reports: 0 good, 1 bad, 125 skip
   (insufficient data, a missing report, one that is not JSON, incomparable
   runs, a bad option), 0 for --help.
2. A tiny git repository whose commits each name the fixture report "built"
   at that commit (the file `fixture`): good, skip, good, skip, good, bad (the
   first bad one), skip, bad. `git bisect run` with a step script that calls
   `snapbench bisect-step BASELINE.json FIXTURE` must find the first bad
   commit, having skipped at least one commit, and every step must have
   exited 0, 1 or 125.

Usage: bisect.py SNAPBENCH TESTDATA
"""
import os
import shutil
import subprocess
import sys
import tempfile

METRIC = ["--metric", "latency_p99_ns"]

# fixture (relative to TESTDATA) -> what bisect-step must say against stock.json
CASES = [
    ("perm-upgrade.json", 0, "improved: good"),
    ("regressed.json", 1, "p99 +30%: bad"),
    ("small-b.json", 125, "5 vs 2 repetitions: insufficient-data, skip"),
    ("missing.json", 125, "no such report: skip"),
    ("bad/not-json.json", 125, "not JSON: skip"),
    ("read64.json", 125, "incomparable runs: skip"),
]

# the history: one fixture per commit, oldest first; index 5 is the first bad
# commit, and git's first pick (the middle, index 3) is one to skip
HISTORY = ["perm-upgrade.json", "small-b.json", "perm-upgrade.json", "missing.json",
           "perm-upgrade.json", "regressed.json", "bad/not-json.json", "regressed.json"]
FIRST_BAD = 5

STEP = """#!/bin/sh
# one bisect step: compare the commit's run with the good baseline
"$SNAPBENCH" bisect-step -q --metric latency_p99_ns "$TESTDATA/stock.json" "$TESTDATA/$(cat fixture)"
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
        if "snapbench bisect-step: %s (%d)" % ({0: "good", 1: "bad", 125: "skip"}[want], want) not in p.stderr:
            fail("bisect-step stock.json %s: stderr does not say its verdict:\n%s" % (fixture, p.stderr))
        print("ok %s: %d (%s)" % (fixture, want, why))
    for args, want in ((["--bogus"], 125), (["--metric"], 125), ([], 125), (["--help"], 0),
                       (["--alpha", "2", "stock.json", "regressed.json"], 125)):
        p = subprocess.run([snapbench, "bisect-step"] + args, cwd=testdata, capture_output=True, text=True,
                           timeout=60)
        if p.returncode != want:
            fail("bisect-step %s exited %d, expected %d; stderr:\n%s" % (args, p.returncode, want, p.stderr))
        print("ok bisect-step %s: %d" % (" ".join(args), want))


def git(repo, *args, env=None):
    p = subprocess.run(["git"] + list(args), cwd=repo, capture_output=True, text=True, env=env, timeout=120)
    if p.returncode != 0 and args[0] != "bisect":
        fail("git %s: exit %d\n%s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
    return p


def bisect(snapbench, testdata):
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
                   SNAPBENCH=snapbench, TESTDATA=testdata, STEP_LOG=log)
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


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    if not shutil.which("git"):
        print("SKIP: git is not installed (scripts/install-deps installs it)")
        return 77
    snapbench, testdata = (os.path.abspath(a) for a in argv[1:3])
    exit_codes(snapbench, testdata)
    bisect(snapbench, testdata)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
