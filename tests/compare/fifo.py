#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""compare never waits on a FIFO, a socket or a device where a report is
expected: each is refused at once, named, with exit 2 (a run of a store
whose report.json is one is skipped with a note naming it, as a run that
cannot be read is; a FIFO where the store's label index is is no index).
Each command runs with a 20 s timeout: a hang fails.

Usage: fifo.py SNAPBENCH TESTDATA
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL", msg)
    return cond


def compare(snapbench, args):
    try:
        p = subprocess.run([snapbench, "compare"] + args, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        check(False, "compare %s: still running after 20 s" % " ".join(args))
        return None
    print("$ snapbench compare %s -> %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()[:300]))
    return p


def main():
    snapbench, testdata = sys.argv[1:3]
    stock = os.path.join(testdata, "stock.json")
    work = tempfile.mkdtemp(prefix="snapbench-compare-fifo-")
    try:
        fifo = os.path.join(work, "fifo.json")
        os.mkfifo(fifo)
        sock_path = os.path.join(work, "sock.json")
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(sock_path)
        rundir = os.path.join(work, "20261201T000000Z-f1f0f0")
        os.mkdir(rundir)
        os.mkfifo(os.path.join(rundir, "report.json"))

        for path, what in ((fifo, "is a FIFO"), (sock_path, "is a socket"), ("/dev/zero", "is a character device"),
                           (rundir + "/report.json", "is a FIFO")):
            p = compare(snapbench, [stock, path])
            if p:
                check(p.returncode == 2 and path in p.stderr and what in p.stderr,
                      "compare %s: exit %d, %r" % (path, p.returncode, p.stderr))
        p = compare(snapbench, [stock, rundir])
        if p:
            check(p.returncode == 2 and "report.json" in p.stderr and "is a FIFO" in p.stderr,
                  "compare of a run directory whose report.json is a FIFO: exit %d, %r" % (p.returncode, p.stderr))

        # a store: the FIFO run is skipped and named, the others compared as without it
        store = os.path.join(work, "store")
        shutil.copytree(os.path.join(testdata, "store"), store)
        shutil.move(rundir, os.path.join(store, os.path.basename(rundir)))
        index = os.path.join(store, ".labels.json")  # the label index (reports/store-index.h)
        if os.path.exists(index):
            os.unlink(index)
        os.mkfifo(index)
        args = ["--store", store, "--baseline", "label=stock", "--patched", "label=perm-upgrade"]
        p = compare(snapbench, args)
        if p:
            check(p.returncode == 0 and "is a FIFO" in p.stdout + p.stderr and os.path.basename(rundir) in
                  p.stdout + p.stderr, "compare --store with a FIFO run: exit %d, %r" % (p.returncode, p.stderr))
        sock.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
