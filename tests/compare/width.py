#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""compare's text table on a terminal and in mail: it fits 80 columns.

For the seed-000 pair (stock.json vs perm-upgrade.json) and reports with two
kernel arms (kernel-retried.json, numa-hinting.json: every metric, long cause
names), `snapbench compare` must print no line wider than 80 columns (counted
in characters: "µs" is one):

  - off a terminal, with no $COLUMNS (what a pipe into a mail gets);
  - with COLUMNS=80;
  - on a real 80-column terminal: tmux runs it in an 80x200 window and the
    pane is read back with its wrapped lines joined (capture-pane -J), so a
    line the terminal had to wrap shows as one longer than 80;
  - compare.txt in --output, whatever the terminal.

And: COLUMNS=200 gives one line per metric (the wide layout) when it fits,
--wide gives it at 80 too, and LC_ALL=C writes "us" for "µs". At 80, 60 and
50 columns every figure is written as --wide writes it (950,015 in every
layout, never 950k in one and 950,015 in another).

Usage: width.py SNAPBENCH TESTDATA
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

CASES = [
    ("seed-000 pair", ["stock.json", "perm-upgrade.json"]),
    ("kernel arms", ["kernel-retried.json"]),
    ("kernel arms, every metric and window", ["kernel-retried.json", "--metric", "*", "--window", "pre",
                                              "--window", "snapshot", "--window", "post"]),
    ("numa kernel arms, every metric", ["numa-hinting.json", "--metric", "*"]),
    ("two arms, every metric", ["two-arms.json", "--metric", "*"]),
    ("TCG against KVM, forced", ["--force", "tcg-host-vm.json", "native.json"]),
]

failures = []


def check(ok, msg):
    if not ok:
        failures.append(msg)
        print("FAIL " + msg)


def env_with(**kw):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LANG", "LANGUAGE") and
           not k.startswith("LC_")}
    env["LC_ALL"] = "C.UTF-8"
    env.update(kw)
    return env


def widest(text):
    return max((len(line) for line in text.splitlines()), default=0)


def compare(snapbench, testdata, args, env):
    p = subprocess.run([snapbench, "compare"] + args, cwd=testdata, capture_output=True, text=True, env=env,
                       timeout=60)
    check(p.returncode in (0, 3), "compare %s: exit %d: %s" % (args, p.returncode, p.stderr))
    return p.stdout


def on_tmux(snapbench, testdata, args, tmp):
    """The table as an 80-column terminal shows it: the pane read back with wrapped lines joined."""
    sock = os.path.join(tmp, "tmux.sock")
    done = os.path.join(tmp, "done")
    cmd = "cd %s && env -u COLUMNS LC_ALL=C.UTF-8 %s compare %s; touch %s; sleep 60" % (
        sh(testdata), sh(snapbench), " ".join(sh(a) for a in args), sh(done))
    subprocess.run(["tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "200", cmd],
                   check=True, timeout=30)
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(done) and time.monotonic() < deadline:
            time.sleep(0.1)
        check(os.path.exists(done), "tmux: compare %s did not finish" % args)
        p = subprocess.run(["tmux", "-S", sock, "capture-pane", "-p", "-J", "-S", "-", "-E", "-"],
                           capture_output=True, text=True, timeout=30)
        width = subprocess.run(["tmux", "-S", sock, "display-message", "-p", "#{pane_width}"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
        check(width == "80", "tmux: the pane is %s columns wide, not 80" % width)
        return p.stdout
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True, timeout=30)
        os.unlink(done) if os.path.exists(done) else None


def sh(s):
    return "'" + s.replace("'", "'\\''") + "'"


def figures(text):
    """The words of text that hold a digit, sorted: the same figures in whatever layout and line breaks."""
    return sorted(w for w in text.split() if any(c.isdigit() for c in w))


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    snapbench, testdata = (os.path.abspath(a) for a in argv[1:3])
    tmux = shutil.which("tmux")
    with tempfile.TemporaryDirectory(prefix="compare-width-") as tmp:
        for what, args in CASES:
            piped = compare(snapbench, testdata, args, env_with())
            check(widest(piped) <= 80, "%s, piped: a line of %d columns:\n%s" % (what, widest(piped), piped))
            at80 = compare(snapbench, testdata, args, env_with(COLUMNS="80"))
            check(at80 == piped, "%s: COLUMNS=80 differs from a pipe's 80" % what)
            out = os.path.join(tmp, "out")
            compare(snapbench, testdata, args + ["--output", out], env_with(COLUMNS="300"))
            with open(os.path.join(out, "compare.txt"), encoding="utf-8") as f:
                txt = f.read()
            check(widest(txt) <= 80, "%s: compare.txt has a line of %d columns" % (what, widest(txt)))
            shutil.rmtree(out)
            wide = compare(snapbench, testdata, args + ["--wide"], env_with(COLUMNS="80"))
            check(widest(wide) > 80 or wide == piped, "%s: --wide is no wider" % what)
            if tmux:
                screen = on_tmux(snapbench, testdata, args, tmp)
                check("Verdict:" in screen, "%s, tmux: no verdict on the screen:\n%s" % (what, screen))
                check(widest(screen) <= 80, "%s, on an 80-column terminal: a line of %d columns:\n%s"
                      % (what, widest(screen), screen))
            # one notation: every figure (950,015; 19.8µs; 1/380x; -23.5%) as the wide table writes it, at any width
            for cols in ("80", "60", "50"):
                got = compare(snapbench, testdata, args, env_with(COLUMNS=cols))
                check(figures(got) == figures(wide), "%s: COLUMNS=%s writes other figures than --wide: %s" % (
                    what, cols, sorted(set(figures(got)) ^ set(figures(wide)))[:8]))
            print("ok %s: %d columns piped, %d with --wide" % (what, widest(piped), widest(wide)))

        # a wide terminal gets one line per metric, each with its verdict
        args = ["stock.json", "perm-upgrade.json"]
        big = compare(snapbench, testdata, args, env_with(COLUMNS="200"))
        rows = [ln for ln in big.splitlines() if ln.startswith("  pf/s ")]
        check(len(rows) == 1 and rows[0].endswith("improved") and "950,015 (901,000 990,000)" in rows[0],
              "COLUMNS=200: pf/s is not one line with its verdict: %r" % rows)
        narrow = compare(snapbench, testdata, args, env_with())
        check("950,015 (901,000 990,000)" in narrow and "\n  pf/s" in narrow and "950k" not in narrow,
              "at 80 columns: pf/s is not in the wide table's full figures:\n%s" % narrow)
        ascii_ = compare(snapbench, testdata, args, env_with(LC_ALL="C"))
        check("\u00b5" not in ascii_ and "19.8us" in ascii_, "LC_ALL=C: still a µ:\n%s" % ascii_)
        check("19.8\u00b5s" in narrow, "UTF-8: no µs:\n%s" % narrow)
        if not tmux:
            print("SKIP the terminal part: tmux is not installed (scripts/install-deps installs it)")
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
