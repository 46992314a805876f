#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""--json on every verb, and its errors as JSON (docs/cli.md "Errors under --json").

Every verb accepts --json (qmp too, where the output is JSON anyway). Under
--json an error is said twice: "snapbench VERB: MESSAGE" on stderr, as
without it, and one JSON object on stdout,

  {"verb": "VERB", "error": "MESSAGE", "exit_code": N}

with N the exit code, also for an error of an option before --json. A verb
that answers in JSON (compare's result with a regression, exit 3) prints its
answer alone. Without --json nothing of an error goes to stdout.

The daemon's verbs are asked once with no daemon (unreachable, 4) and once
of a snapbenchd this test starts on a private socket and an empty store (it
starts no QEMU: nothing is submitted), which answers not-found (2).

Usage: json-errors.py SNAPBENCH SNAPBENCHD TESTDATA
"""
import json
import re
import os
import subprocess
import sys
import tempfile
import time

from clitest import check, result

# the exit code of bad usage: 2, but for bisect-step (git bisect run's "stop the bisection")
USAGE_EXIT = {"bisect-step": 128}

OTHER_ERRORS = [
    # a missing value (--json goes first: after it, it would be the value), a bad value, a missing
    # argument, no daemon, no QEMU
    (["qmp", "--timeout"], 2, "option '--timeout' needs a value; try 'snapbench qmp --help'"),
    (["probe", "--pid", "0"], 2, "--pid '0' is not a whole number from 1 to 2147483647"),
    (["probe", "--pid", "1", "extra"], 2, "unexpected argument 'extra'; try 'snapbench probe --help'"),
    (["qmp", "query-status"], 2, "--socket PATH is required: the path of QEMU's -qmp unix socket"),
    (["show"], 2, "give one run ID ('snapbench list' shows them) or report file; try 'snapbench show --help'"),
    (["list", "--limit", "0"], 2, "--limit '0': expected a number from 1 to 1000000"),
    (["run", "--memory", "12Q"], 2, None),
    (["status"], 4, None),
    (["qmp", "--socket", "/nonexistent/qmp.sock", "--timeout", "0.2", "query-status"], 4, None),
    (["compare", "/nonexistent/a.json", "/nonexistent/b.json"], 2, None),
]


def run(snapbench, args, env):
    return subprocess.run([snapbench] + args, capture_output=True, text=True, env=env, timeout=60)


def check_error(snapbench, args, rc, env, message=None):
    """snapbench ARGS --json: the message on stderr, the same as a JSON object on stdout."""
    what = "snapbench " + " ".join(args)
    plain = run(snapbench, args, env)
    check(plain.returncode == rc, "%s: exit %d, want %d (%s)" % (what, plain.returncode, rc, plain.stderr))
    check(plain.stdout == "", "%s: an error without --json wrote to stdout: %r" % (what, plain.stdout))
    # --json last: an error of an option before it is JSON too; first before a missing value
    jargs = [args[0], "--json"] + args[1:] if message and "needs a value" in message else args + ["--json"]
    p = run(snapbench, jargs, env)
    what = "snapbench " + " ".join(jargs)
    if not check(p.returncode == rc, "%s: exit %d, want %d (%s)" % (what, p.returncode, rc, p.stderr)):
        return None
    check(p.stderr == plain.stderr, "%s: stderr %r, without --json %r" % (what, p.stderr, plain.stderr))
    try:
        obj = json.loads(p.stdout)
    except ValueError:
        check(False, "%s: stdout is not one JSON document: %r" % (what, p.stdout))
        return None
    check(p.stdout.count("\n") == 1, "%s: the error object is not one line: %r" % (what, p.stdout))
    check(sorted(obj) == ["error", "exit_code", "verb"], "%s: keys %s" % (what, sorted(obj)))
    check(obj.get("verb") == args[0], "%s: verb %r" % (what, obj.get("verb")))
    check(obj.get("exit_code") == rc, "%s: exit_code %r, exited %d" % (what, obj.get("exit_code"), rc))
    # the first error line on stderr is "snapbench VERB: " + the object's message
    first = p.stderr.splitlines()[0] if p.stderr else ""
    check(first == "snapbench %s: %s" % (args[0], obj.get("error")),
          "%s: stderr's first line %r, the object's error %r" % (what, first, obj.get("error")))
    if message is not None:
        check(obj.get("error") == message, "%s: error %r, want %r" % (what, obj.get("error"), message))
    print("ok %s -> %s" % (what, p.stdout.strip()))
    return obj


def verbs_of(snapbench, env):
    """The verbs snapbench --help lists."""
    verbs = [line.split()[0] for line in run(snapbench, ["--help"], env).stdout.splitlines()
             if re.match(r"  [a-z]", line)]  # a summary's further lines are indented deeper
    check(len(verbs) >= 10, "snapbench --help lists %d verbs" % len(verbs))
    return verbs


def check_accepted(snapbench, verbs, env):
    """Every verb takes --json: with --help it prints its usage and exits 0."""
    for verb in verbs:
        p = run(snapbench, [verb, "--json", "--help"], env)
        check(p.returncode == 0 and p.stdout.startswith("usage: snapbench " + verb) and p.stderr == "",
              "snapbench %s --json --help: exit %d, stderr %r" % (verb, p.returncode, p.stderr))
        check("--json" in p.stdout, "snapbench %s --help does not describe --json" % verb)
    print("ok --json accepted by: " + " ".join(verbs))


def check_answer_alone(snapbench, testdata, env):
    """compare --json with a regression: exit 3, its result and nothing else on stdout."""
    p = run(snapbench, ["compare", "--json", os.path.join(testdata, "stock.json"),
                        os.path.join(testdata, "regressed.json")], env)
    check(p.returncode == 3, "compare --json stock regressed: exit %d (%s)" % (p.returncode, p.stderr))
    try:
        obj = json.loads(p.stdout)
        check("error" not in obj and "metrics" in obj, "compare --json: not the comparison: %s" % sorted(obj))
    except ValueError:
        check(False, "compare --json with a regression: stdout is not one JSON document")
    print("ok compare --json, exit 3: the comparison alone")


def check_daemon_reply(snapbench, snapbenchd, env):
    """The daemon's error reply (not-found) as the object, through the client's error path."""
    with tempfile.TemporaryDirectory(prefix="snapbench-json-errors-") as tmp:
        sock, state = os.path.join(tmp, "snapbenchd.sock"), os.path.join(tmp, "state")
        os.makedirs(os.path.join(state, "runs"))
        with open(os.path.join(tmp, "snapbenchd.log"), "w+") as log:
            d = subprocess.Popen([snapbenchd, "--foreground", "--socket", sock, "--state-dir", state,
                                  "--group", "root"], stdout=log, stderr=subprocess.STDOUT)
            try:
                deadline = time.monotonic() + 30
                while not os.path.exists(sock):
                    if d.poll() is not None or time.monotonic() > deadline:
                        log.seek(0)
                        check(False, "snapbenchd did not start listening:\n" + log.read())
                        return
                    time.sleep(0.05)
                denv = dict(env, SNAPBENCH_SOCKET=sock)
                for verb in ("show", "logs", "cancel"):
                    obj = check_error(snapbench, [verb, "20990101T000000Z-000000"], 2, denv)
                    if obj:
                        check("20990101T000000Z-000000" in obj["error"],
                              "%s: the error does not name the run: %r" % (verb, obj["error"]))
                # and a good answer under --json is the answer alone
                p = run(snapbench, ["list", "--json"], denv)
                check(p.returncode == 0 and json.loads(p.stdout) == [],
                      "list --json on an empty store: exit %d, %r" % (p.returncode, p.stdout))
            finally:
                d.terminate()
                d.wait(timeout=30)


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    snapbench, snapbenchd, testdata = (os.path.abspath(a) for a in argv[1:4])
    env = dict(os.environ, SNAPBENCH_SOCKET="/nonexistent/snapbenchd.sock")
    verbs = verbs_of(snapbench, env)
    check_accepted(snapbench, verbs, env)
    # every verb, each run with and without --json (no stdout then)
    for verb in verbs:
        check_error(snapbench, [verb, "--bogus"], USAGE_EXIT.get(verb, 2), env,
                    "unknown option '--bogus'; try 'snapbench %s --help'" % verb)
    for args, rc, message in OTHER_ERRORS:
        check_error(snapbench, args, rc, env, message)
    # an unknown verb: no verb to name
    p = run(snapbench, ["nosuch", "--json"], env)
    check(p.returncode == 2 and json.loads(p.stdout or "{}") == {
        "verb": None, "error": "unknown verb 'nosuch'; run 'snapbench --help' for the list.", "exit_code": 2},
        "snapbench nosuch --json: exit %d, stdout %r" % (p.returncode, p.stdout))
    check_answer_alone(snapbench, testdata, env)
    check_daemon_reply(snapbench, snapbenchd, env)
    return result()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
