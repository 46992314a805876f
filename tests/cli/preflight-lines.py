#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`snapbench run --local` that fails preflight with several failures prints
one line per failure: on stderr each as "snapbench run: FAILURE", in the
summary on stdout each under the first ("  error: ..."), and in the report
(error.message) and the --json outcome one failure per line. Exit 4.

Two checks fail for sure and start nothing: a QEMU that does not exist and a
guest larger than any host's memory (1 TiB). Preflight stops the run before
it changes anything, so no QEMU starts and no knob is set.

Usage: preflight-lines.py SNAPBENCH
"""
import json
import os
import subprocess
import sys
import tempfile

from clitest import check, result


def run_local(snapbench, out, extra):
    args = [snapbench, "run", "--local", "--quiet", "--output", out, "--qemu", "/nonexistent/qemu-system-x86_64",
            "--memory", "1T", "--sink", "null"] + extra
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def failures_of(report_path):
    with open(report_path) as f:
        report = json.load(f)
    check(report["state"] == "failed" and report["error"]["phase"] == "preflight",
          "report: state %s, error %s" % (report["state"], report["error"]))
    return report["error"]["message"].split("\n")


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    snapbench = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory(prefix="snapbench-preflight-") as tmp:
        p = run_local(snapbench, os.path.join(tmp, "text"), [])
        check(p.returncode == 4, "exit %d, want 4 (preflight); stderr %r" % (p.returncode, p.stderr))
        report = [l[len("report: "):] for l in p.stdout.splitlines() if l.startswith("report: ")]
        if not check(len(report) == 1, "no 'report: PATH' line in %r" % p.stdout):
            return 1
        failures = failures_of(report[0])
        check(len(failures) >= 2, "the report names %d failure(s): %r" % (len(failures), failures))
        check(any("/nonexistent/qemu-system-x86_64" in f for f in failures), "no failure names the QEMU")
        check(any("spec.vm.memory" in f for f in failures), "no failure names spec.vm.memory")
        check(all(f and "\n" not in f for f in failures), "an empty failure in %r" % failures)
        # stderr: each failure on a line of its own, each with the verb's prefix
        check(p.stderr.splitlines() == ["snapbench run: " + f for f in failures],
              "stderr %r, want one line per failure %r" % (p.stderr, failures))
        # stdout: the summary's error, the failures one under the other
        head = "  error: "
        lines = p.stdout.splitlines()
        at = [i for i, l in enumerate(lines) if l.startswith(head)]
        if check(len(at) == 1, "no '  error: ' line in %r" % p.stdout):
            got = lines[at[0]:at[0] + len(failures)]
            want = [head + failures[0]] + [" " * len(head) + f for f in failures[1:]]
            check(got == want, "summary %r, want %r" % (got, want))

        # --json: the outcome alone on stdout, its error one failure per line; stderr as before
        p = run_local(snapbench, os.path.join(tmp, "json"), ["--json"])
        check(p.returncode == 4, "--json: exit %d, want 4" % p.returncode)
        try:
            outcome = json.loads(p.stdout)
            check(outcome["state"] == "failed" and outcome["error"]["message"].split("\n") == failures_of(outcome["report"]),
                  "--json: the outcome's error %r" % outcome.get("error"))
            check(len(outcome["error"]["message"].split("\n")) == len(failures), "--json: another set of failures")
        except (ValueError, KeyError) as e:
            check(False, "--json: stdout is not the outcome alone (%s): %r" % (e, p.stdout))
        check(len(p.stderr.splitlines()) == len(failures) and
              all(l.startswith("snapbench run: ") for l in p.stderr.splitlines()),
              "--json: stderr %r" % p.stderr)
    print("checked: %d preflight failures, one line each: %s" % (len(failures), failures))
    return result()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
