#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unknown options and missing values: one message style in every verb (the
daemon verbs parse with cli/verb-args.c; compare, bisect-step, qmp and probe
call its verb_option_error()):

  snapbench VERB: unknown option '--bogus'; try 'snapbench VERB --help'

naming the option as typed (with "did you mean" for a slip of a key or two),
and the verb's usage exit code (2; 128 for bisect-step). None of these reach snapbenchd: the socket points nowhere.
--interval is one grammar in run, probe, top and status --watch (a bare
number is milliseconds), each verb's smallest named in its error and its
--help; top's --help fits 80 columns. Also: run --help names the three scenarios, the spec field that picks one
and windows that hold for each.

Usage: test-options.py SNAPBENCH
"""
import os
import re
import subprocess
import sys

CASES = [
    # verb arguments, exit code, stderr
    (["show", "--bogus"], 2, "snapbench show: unknown option '--bogus'; try 'snapbench show --help'"),
    (["show", "--socket"], 2, "snapbench show: option '--socket' needs a value; try 'snapbench show --help'"),
    (["show", "--json=yes", "ID"], 2, "snapbench show: option '--json' takes no value; try 'snapbench show --help'"),
    (["show", "-x", "ID"], 2, "snapbench show: unknown option '-x'; try 'snapbench show --help'"),
    (["show"], 2, "snapbench show: give one run ID ('snapbench list' shows them) or report file; try 'snapbench "
     "show --help'"),
    (["status", "extra"], 2, "snapbench status: unexpected argument 'extra'; try 'snapbench status --help'"),
    (["list", "-n"], 2, "snapbench list: option '-n' needs a value; try 'snapbench list --help'"),
    (["list", "--limit"], 2, "snapbench list: option '--limit' needs a value; try 'snapbench list --help'"),
    (["cancel", "--bogus", "ID"], 2, "snapbench cancel: unknown option '--bogus'; try 'snapbench cancel --help'"),
    (["logs", "--bytes"], 2, "snapbench logs: option '--bytes' needs a value; try 'snapbench logs --help'"),
    (["run", "--bogus"], 2, "snapbench run: unknown option '--bogus'; try 'snapbench run --help'"),
    (["compare", "--bogus"], 2, "snapbench compare: unknown option '--bogus'; try 'snapbench compare --help'"),
    (["compare", "--metric"], 2, "snapbench compare: option '--metric' needs a value; try 'snapbench compare --help'"),
    (["compare", "--force=1"], 2, "snapbench compare: option '--force' takes no value; try 'snapbench compare --help'"),
    (["compare", "--al", "x"], 2,
     "snapbench compare: ambiguous option '--al' (--alpha, --all); try 'snapbench compare --help'"),
    (["compare", "--force", "-qx"], 2, "snapbench compare: unknown option '-x'; try 'snapbench compare --help'"),
    (["qmp", "--bogus"], 2, "snapbench qmp: unknown option '--bogus'; try 'snapbench qmp --help'"),
    (["qmp", "--socket"], 2, "snapbench qmp: option '--socket' needs a value; try 'snapbench qmp --help'"),
    (["qmp", "--timeout"], 2, "snapbench qmp: option '--timeout' needs a value; try 'snapbench qmp --help'"),
    (["qmp", "--pretty=yes"], 2, "snapbench qmp: option '--pretty' takes no value; try 'snapbench qmp --help'"),
    (["qmp", "-t", "1"], 2, "snapbench qmp: unknown option '-t'; try 'snapbench qmp --help'"),
    (["probe", "--bogus"], 2, "snapbench probe: unknown option '--bogus'; try 'snapbench probe --help'"),
    (["probe", "--pid"], 2, "snapbench probe: option '--pid' needs a value; try 'snapbench probe --help'"),
    (["probe", "--json=1"], 2, "snapbench probe: option '--json' takes no value; try 'snapbench probe --help'"),
    (["probe", "--pid", "1", "extra"], 2,
     "snapbench probe: unexpected argument 'extra'; try 'snapbench probe --help'"),
    # a slip of a key or two: did you mean
    (["shw", "1"], 2, "snapbench: unknown verb 'shw' (did you mean 'show'?); run 'snapbench --help' for the list."),
    (["frobnicate"], 2, "snapbench: unknown verb 'frobnicate'; run 'snapbench --help' for the list."),
    (["show", "--formt", "csv", "x.json"], 2,
     "snapbench show: unknown option '--formt' (did you mean '--format'?); try 'snapbench show --help'"),
    (["compare", "--metrc", "x"], 2,
     "snapbench compare: unknown option '--metrc' (did you mean '--metric'?); try 'snapbench compare --help'"),
    (["run", "--repetitons", "3"], 2,
     "snapbench run: unknown option '--repetitons' (did you mean '--repetitions'?); try 'snapbench run --help'"),
    # durations with their unit in every verb, bare numbers in the option's own unit; units in range errors
    (["run", "--probe-gap", "1h", "--print-spec"], 2,
     "snapbench run: --probe-gap: must be an integer from 0 to 10000000 us (got 1h)"),
    (["run", "--memory", "256", "--print-spec"], 2,
     "snapbench run: --memory: must be from 16 MiB to 1 TiB, 16777216 to 1099511627776 bytes (got 256 bytes; a "
     "size takes K, M, G or T, such as 256M)"),
    (["qmp", "--socket", "/nonexistent", "--timeout", "1h1", "query-status"], 2,
     "snapbench qmp: --timeout '1h1' is not a number of seconds above 0 and up to 86400 s, or a duration with its "
     "unit such as 500ms or 2m"),
    (["bisect-step", "--bogus"], 128,
     "snapbench bisect-step: unknown option '--bogus'; try 'snapbench bisect-step --help'\n"
     "snapbench bisect-step: stop (128): no comparison, and none would be at any other commit (the message above "
     "says why); fix it and run the bisection again"),
]

# --interval: one grammar in every verb (cli/verb-args.c), a bare number is milliseconds, each verb's bounds
# in one message: verb arguments, the value, the smallest and the largest as the message says them
INTERVALS = [
    (["probe", "--pid", "1"], "5", "10ms", "1h"),
    (["probe", "--pid", "1"], "0.5", "10ms", "1h"),
    (["probe", "--pid", "1"], "1ms", "10ms", "1h"),
    (["top"], "0.5", "50ms", "1h"),
    (["top"], "10ms", "50ms", "1h"),
    (["status", "--watch"], "50", "100ms", "1h"),
    (["run", "--local"], "50", "100ms", "1m"),
    (["run", "--local"], "1ms", "100ms", "1m"),
    (["run", "--local"], "150.5ms", "100ms", "1m"),
    (["run", "--local"], "2m", "100ms", "1m"),
]
CASES += [(args + ["--interval", value], 2,
           "snapbench %s: --interval '%s': give whole milliseconds from %s to %s, such as 500ms or 2s; a bare "
           "number is milliseconds" % (args[0], value, lo, hi)) for args, value, lo, hi in INTERVALS]


def check_run_help(snapbench, env):
    """run --help names every scenario, the field that picks one, and windows true for all three."""
    p = subprocess.run([snapbench, "run", "--help"], capture_output=True, text=True, env=env, timeout=30)
    text = " ".join(p.stdout.split())
    problems = [w for w in ("background-snapshot", "dirty-log", "postcopy-restore", "field scenario",
                            "windows pre, snapshot, post", "windows pre, migration, post",
                            "--pre S window before the snapshot or migration",
                            "--post S window after the snapshot or migration ended") if w not in text]
    problems += ["says %r" % w for w in ("of the background-snapshot scenario", "before the snapshot (",
                                         "after the snapshot (") if w in text]
    problems += ["a line of %d columns: %r" % (len(x), x) for x in p.stdout.splitlines() if len(x) > 80]
    if p.returncode != 0 or p.stderr or problems:
        print("FAIL snapbench run --help: exit %d, stderr %r, %s" % (p.returncode, p.stderr, problems or "ok"))
        return 1
    print("ok snapbench run --help: the three scenarios, spec field scenario, each one's windows, 80 columns")
    return 0


def check_vocabulary(snapbench, env):
    """help VERB is VERB --help; --json before the verb is the verb's; durations take units: --probe-gap 1ms."""
    failed = 0

    def run(args):
        return subprocess.run([snapbench] + args, capture_output=True, text=True, env=env, timeout=30)

    # every verb snapbench --help lists, the kernel's sub-verbs and snapbench --help itself: within 80 columns
    listed = re.findall(r"^  ([a-z][a-z-]+) ", run(["--help"]).stdout, re.M)
    if len(listed) < 13:
        failed += 1
        print("FAIL snapbench --help lists %d verbs: %s" % (len(listed), listed))
    helps = [[]] + [[v] for v in listed] + [["kernel", k] for k in ("build", "config", "fragment")]
    for verb in helps:
        p = run(verb + ["--help"])
        wide = [x for x in p.stdout.splitlines() if len(x) > 80]
        if p.returncode != 0 or wide or not p.stdout.startswith("usage: snapbench"):
            failed += 1
            print("FAIL snapbench %s --help: exit %d, lines over 80 columns: %s" % (" ".join(verb), p.returncode, wide))
    print("ok --help of snapbench and %d verbs within 80 columns" % (len(helps) - 1))
    for verb in ("compare", "show", "run", "bisect-step", "qmp", "probe", "kernel", "import-lava"):
        a, b = run(["help", verb]), run([verb, "--help"])
        if a.returncode != 0 or a.stdout != b.stdout or not a.stdout.startswith("usage: snapbench " + verb):
            failed += 1
            print("FAIL snapbench help %s: exit %d, not %s --help:\n%s" % (verb, a.returncode, verb, a.stdout[:300]))
    p = run(["help", "shw"])
    if p.returncode != 2 or "did you mean 'show'" not in p.stderr:
        failed += 1
        print("FAIL snapbench help shw: exit %d: %s" % (p.returncode, p.stderr))
    a, b = run(["--json", "show", "/nonexistent/report.json"]), run(["show", "--json", "/nonexistent/report.json"])
    if a.returncode != 2 or a.stdout != b.stdout or '"verb":"show"' not in a.stdout:
        failed += 1
        print("FAIL snapbench --json show: exit %d, stdout %r, not show --json's %r" % (a.returncode, a.stdout, b.stdout))
    for flag, value, field, want in (("--probe-gap", "1ms", "gap_us", 1000), ("--probe-gap", "250", "gap_us", 250),
                                     ("--interval", "2s", "interval_ms", 2000),
                                     ("--interval", "0.1s", "interval_ms", 100), ("--interval", "250", "interval_ms", 250)):
        p = run(["run", flag, value, "--print-spec"])
        got = re.search(r'"%s": (\d+)' % field, p.stdout)
        if p.returncode != 0 or not got or int(got.group(1)) != want:
            failed += 1
            print("FAIL snapbench run %s %s: %s is %s, want %d (%s)" % (flag, value, field, got and got.group(1), want,
                                                                       p.stderr))
    # each verb's --help names its smallest --interval, the bound its error names
    for verb, args, smallest in (("run", [], "from 100ms"), ("top", [], "from 50,"), ("probe", [], "from 10,"),
                                 ("status", [], "from 100,")):
        p = run([verb, "--help"] + args)
        lines = p.stdout.splitlines()
        at = [i for i, x in enumerate(lines) if x.lstrip().startswith("--interval MS")]
        line = " ".join(x.strip() for x in lines[at[0]:at[0] + 2]) if at else ""
        if p.returncode != 0 or smallest not in line:
            failed += 1
            print("FAIL snapbench %s --help: --interval does not say %r: %r" % (verb, smallest, line))
    print("%s help VERB, --json before the verb, durations with units" % ("FAIL" if failed else "ok"))
    return failed


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    env = dict(os.environ, SNAPBENCH_SOCKET="/nonexistent/snapbenchd.sock")
    failed = check_run_help(argv[1], env)
    failed += check_vocabulary(argv[1], env)
    for args, rc, err in CASES:
        p = subprocess.run([argv[1]] + args, capture_output=True, text=True, env=env, timeout=30)
        if p.returncode != rc or p.stderr != err + "\n" or p.stdout:
            failed += 1
            print("FAIL snapbench %s: exit %d (want %d), stderr %r (want %r), stdout %r"
                  % (" ".join(args), p.returncode, rc, p.stderr, err + "\n", p.stdout))
        else:
            print("ok snapbench %s" % " ".join(args))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
