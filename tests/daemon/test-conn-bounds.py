#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No local denial of service through connections or watches.

A daemon with 8 connections, 3 of them kept for root and the group, 4 per
uid and 1 watch per uid. Two unprivileged test users (useradd, removed at
the end): the first may hold 4 connections and no fifth (the per-uid bound
names the flag); the second then reaches the reserve and is refused, while
root still gets status answered on the reserved slots (before the fix any
user holding the connections made root's requests fail with "too many
connections"). A user watching a live run may not open a second watch; root
may.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemonlib import (Env, as_user, check, connect_as, qemu_or_skip, log, make_account, spec,  # noqa: E402
                       wait_for)


def refused(c, needle):
    r = c.read(timeout=10)
    err = r.get("error") or {}
    ok = err.get("code") == "busy" and needle in err.get("message", "") and c.closed_by_peer()
    c.close()
    return ok, r


def body(env):
    qemu_or_skip()
    tag = "%d" % os.getpid()
    a_name, b_name = "sbtca" + tag, "sbtcb" + tag
    make_account(env, "user", a_name, "--no-create-home", "--shell", "/usr/sbin/nologin")
    make_account(env, "user", b_name, "--no-create-home", "--shell", "/usr/sbin/nologin")
    a, b = as_user(a_name), as_user(b_name)
    d = env.daemon(args=["--max-connections", "8", "--reserved-connections", "3", "--max-connections-per-uid", "4",
                         "--max-watches-per-uid", "1"]).start()
    held = []
    try:
        # user A: 4 connections, each answered; the fifth is refused by the per-uid bound
        for i in range(4):
            c = connect_as(d.sock, a)
            check(c.call("status")["ok"], "user A's connection %d" % (i + 1))
            held.append(c)
        ok, r = refused(connect_as(d.sock, a), "--max-connections-per-uid")
        check(ok, "user A's fifth connection: %s" % r)
        log("uid %d: 4 connections served, the fifth refused (per uid)" % a[0])

        # user B: one more makes 5 of 8; the sixth would take a slot kept for root and the group
        c = connect_as(d.sock, b)
        check(c.call("status")["ok"], "user B's first connection")
        held.append(c)
        ok, r = refused(connect_as(d.sock, b), "--reserved-connections")
        check(ok, "user B's second connection (the reserve): %s" % r)
        log("uid %d: refused once 5 of 8 are taken (3 kept for root and the group)" % b[0])

        # root still gets through on the reserved slots
        for i in range(3):
            c = d.conn()
            check(c.call("status")["ok"], "root's connection %d on the reserve" % (i + 1))
            held.append(c)
        log("root served on the 3 reserved slots")
    finally:
        for c in held:
            c.close()
        held = []

    # watches: one per uid but root's while the run goes on
    r = env.submit(d, spec(timing__pre_s=30))
    wait_for(lambda: (d.status()["current"] or {}).get("id") == r, 60, "the run to start")
    w1 = connect_as(d.sock, a)
    check(w1.call("watch", run=r)["ok"], "user A's first watch")
    w2 = connect_as(d.sock, a)
    r2 = w2.call("watch", run=r)
    check(not r2["ok"] and r2["error"]["code"] == "busy" and "--max-watches-per-uid" in r2["error"]["message"],
          "user A's second watch: %s" % r2)
    check(w2.call("status")["ok"], "the refused watcher's connection still serves")
    w3, w4 = d.conn(), d.conn()
    check(w3.call("watch", run=r)["ok"] and w4.call("watch", run=r)["ok"], "root's watches")
    for c in (w1, w2, w3, w4):
        c.close()
    log("uid %d: a second watch refused while the run goes on; root watches twice" % a[0])
    env.cli(d, "cancel", "--wait", r, check_rc=0)
    env.check_no_qemu(d, r)
    check(d.stop() == 0, "snapbenchd's exit status")


if __name__ == "__main__":
    Env("conn-bounds", sys.argv).run(body)
