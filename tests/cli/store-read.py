#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""show, list and logs without snapbenchd: they read its run store.

With no daemon on the socket (no socket file; a socket file nobody listens
on), `show RUN-ID`, `list` and `logs RUN-ID` read the run store given with
--store (a copy of reports/testdata/store, a worker.log added to one run)
and say so in one line on stderr; a run the store does not have exits 2,
a bad --state 2; with no store either, the daemon's error and exit 4.

Usage: store-read.py SNAPBENCH TESTDATA
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import check, result  # noqa: E402

RUN = "20261110T080000Z-0b0001"
LINE = "snapbench %s: snapbenchd is not running; reading the run store %s\n"


def sb(snapbench, env, *args):
    return subprocess.run([snapbench] + list(args), env=env, capture_output=True, text=True, timeout=60)


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    snapbench, testdata = os.path.abspath(argv[1]), argv[2]
    tmp = tempfile.mkdtemp(prefix="cli-store-read-")
    try:
        store = os.path.join(tmp, "runs")
        shutil.copytree(os.path.join(testdata, "store"), store)
        with open(os.path.join(store, RUN, "worker.log"), "w") as f:
            f.write("worker: repetition 0 of arm stock completed\n")
        dead = os.path.join(tmp, "dead.sock")  # a socket file nobody listens on: ECONNREFUSED
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(dead)
        s.close()
        for sock in (os.path.join(tmp, "none.sock"), dead):
            env = dict(os.environ, SNAPBENCH_SOCKET=sock)
            what = "socket %s" % os.path.basename(sock)
            p = sb(snapbench, env, "show", RUN, "--store", store)
            check(p.returncode == 0 and p.stderr == LINE % ("show", store) and
                  p.stdout.startswith("run %s: completed\n" % RUN) and "report: %s/%s/report.json" % (store, RUN)
                  in p.stdout, "%s: show RUN-ID --store: exit %d, stderr %r, stdout %r"
                  % (what, p.returncode, p.stderr, p.stdout[:300]))
            p = sb(snapbench, env, "show", RUN, "--store", store, "--json")
            check(p.returncode == 0 and json.loads(p.stdout)["id"] == RUN,
                  "%s: show --json: exit %d, %r" % (what, p.returncode, p.stdout[:200]))
            p = sb(snapbench, env, "list", "--store", store)
            rows = p.stdout.splitlines()
            check(p.returncode == 0 and p.stderr == LINE % ("list", store) and len(rows) == 6 and
                  rows[0].startswith("ID ") and rows[1].startswith(RUN + "  completed"),
                  "%s: list --store: exit %d, stderr %r, rows %s" % (what, p.returncode, p.stderr, rows))
            for columns, created in (("80", False), ("200", True)):
                p = sb(snapbench, dict(env, COLUMNS=columns), "list", "--store", store)
                rows = p.stdout.splitlines()
                check(p.returncode == 0 and max(len(r) for r in rows) <= int(columns) and
                      rows[0].split()[-1] == ("CREATED" if created else "REPS") and
                      all("  " in r and not r.endswith(" ") for r in rows),
                      "%s: list at %s columns: CREATED %s expected, lines within the width; rows %s"
                      % (what, columns, "shown" if created else "left out", rows))
            p = sb(snapbench, env, "list", "--store", store, "--label", "perm-upgrade", "--state", "completed",
                   "--json")
            ids = [r["id"] for r in json.loads(p.stdout)] if p.returncode == 0 else None
            check(ids == ["20261112T080000Z-0b0003"], "%s: list --label --state --json: exit %d, ids %s"
                  % (what, p.returncode, ids))
            p = sb(snapbench, env, "logs", RUN, "--store", store)
            check(p.returncode == 0 and p.stderr == LINE % ("logs", store) and
                  p.stdout == "==> worker.log <==\nworker: repetition 0 of arm stock completed\n",
                  "%s: logs --store: exit %d, stderr %r, stdout %r" % (what, p.returncode, p.stderr, p.stdout))
            for args in (["show", "20261110T080000Z-0b0009"], ["logs", "20261110T080000Z-0b0009"],
                         ["list", "--state", "bogus"]):
                p = sb(snapbench, env, *(args + ["--store", store]))
                check(p.returncode == 2 and ("no such run in the run store" in p.stderr or "--state bogus" in p.stderr),
                      "%s: %s: exit %d, expected 2; stderr %r" % (what, " ".join(args), p.returncode, p.stderr))
            p = sb(snapbench, env, "show", RUN, "--store", os.path.join(tmp, "nothing"))
            check(p.returncode == 4 and "snapbenchd is not running" in p.stderr and "no run store to read instead"
                  in p.stderr, "%s: show with no store: exit %d, expected 4; stderr %r" % (what, p.returncode, p.stderr))
        print("ok show, list and logs read the run store without snapbenchd, saying so in one line")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
