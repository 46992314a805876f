#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""snapbench status --watch against a snapbenchd this test starts on a private
socket and an empty store (no run, no QEMU): --count statuses, each under a
line with the time when stdout is not a terminal, no terminal escapes then;
on a pseudo-terminal each status redrawn (home, clear) without the time line;
--json one object a line; the interval with its unit; a daemon that goes
away mid-watch ends the watch with exit 4; --interval without --watch is
refused.

  status-watch.py SNAPBENCH SNAPBENCHD
"""
import json
import os
import pty
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import check, result  # noqa: E402


def on_terminal(argv):
    """argv's stdout on a pseudo-terminal, read to its end; stderr must stay empty."""
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the last writer closed its side
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    err = p.stderr.read()
    p.stderr.close()
    check(p.wait(timeout=60) == 0 and not err, "%s on a terminal: exit %d, %r" % (argv, p.returncode, err))
    return out.decode()


def main(argv):
    snapbench, snapbenchd = (os.path.abspath(a) for a in argv[1:3])
    with tempfile.TemporaryDirectory(prefix="snapbench-status-watch-") as tmp:
        sock, state = os.path.join(tmp, "snapbenchd.sock"), os.path.join(tmp, "state")
        os.makedirs(os.path.join(state, "runs"))
        log = open(os.path.join(tmp, "snapbenchd.log"), "w+")
        d = subprocess.Popen([snapbenchd, "--foreground", "--socket", sock, "--state-dir", state, "--group", "root"],
                             stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 30
            while not os.path.exists(sock):
                if d.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    check(False, "snapbenchd did not start listening:\n" + log.read())
                    return result()
                time.sleep(0.05)
            base = [snapbench, "status", "--socket", sock]

            t0 = time.monotonic()
            p = subprocess.run(base + ["--watch", "--interval", "300ms", "--count", "3"], capture_output=True,
                               text=True, timeout=60)
            took = time.monotonic() - t0
            check(p.returncode == 0, "--watch --count 3: exit %d, %s" % (p.returncode, p.stderr))
            stamps = [l for l in p.stdout.splitlines() if l.startswith("--- ") and l.endswith(" ---")]
            check(len(stamps) == 3, "3 time lines, got %d:\n%s" % (len(stamps), p.stdout))
            check(p.stdout.count("snapbenchd ") == 3 and p.stdout.count("no run executing") == 3,
                  "3 statuses:\n" + p.stdout)
            check("\033" not in p.stdout, "terminal escapes in a pipe: %r" % p.stdout[:200])
            # two waits of 300 ms between three asks: the unit was read (not 300 s, not 300 ms as 0.3 ms)
            check(0.5 < took < 30, "3 statuses 300ms apart took %.2f s" % took)
            print("--watch --count 3 --interval 300ms: %.2f s" % took)

            # on a terminal the screen is redrawn for each status: home and clear first, no time lines
            out = on_terminal(base + ["--watch", "--interval", "200ms", "--count", "3"])
            check(out.startswith("\033[H\033[2J") and out.count("\033[H\033[2J") == 3 and "--- " not in out
                  and out.count("no run executing") == 3, "3 redrawn statuses on a terminal: %r" % out[:400])
            print("--watch on a terminal: 3 screens, each home and clear then the status")

            p = subprocess.run(base + ["--watch", "--interval", "200", "--count", "2", "--json"], capture_output=True,
                               text=True, timeout=60)
            lines = p.stdout.splitlines()
            check(p.returncode == 0 and len(lines) == 2, "--json: exit %d, %d lines" % (p.returncode, len(lines)))
            for l in lines:
                obj = json.loads(l)
                check(obj.get("daemon", {}).get("pid") == d.pid, "the daemon's pid in %r" % l[:200])

            p = subprocess.run(base + ["--interval", "2s"], capture_output=True, text=True, timeout=60)
            check(p.returncode == 2 and "--interval and --count go with --watch" in p.stderr,
                  "--interval without --watch: exit %d, %s" % (p.returncode, p.stderr))
            p = subprocess.run(base + ["--watch", "--interval", "2x"], capture_output=True, text=True, timeout=60)
            check(p.returncode == 2 and "--interval '2x'" in p.stderr, "--interval 2x: exit %d, %s"
                  % (p.returncode, p.stderr))

            # the daemon goes away while watched: the watch ends, exit 4 (not reachable)
            w = subprocess.Popen(base + ["--watch", "--interval", "200ms"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            time.sleep(1)
            d.terminate()
            d.wait(timeout=30)
            try:
                out, err = w.communicate(timeout=30)
                check(w.returncode == 4, "daemon gone: the watch exited %d: %s" % (w.returncode, err))
                check(out.count("snapbenchd ") >= 2, "statuses before the daemon went:\n" + out)
            except subprocess.TimeoutExpired:
                w.kill()
                check(False, "the watch went on after snapbenchd stopped")
        finally:
            if d.poll() is None:
                d.terminate()
                d.wait(timeout=30)
            log.close()
    return result()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
