#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Authorization by peer credentials, with real users and a real run.

A user outside snapbenchd's group (created here with useradd, removed at
the end, also on failure) may read (status, list, show, logs) but not submit
or cancel: exit code 5 with a message naming the group. A member of the
group (a second test user) may submit and cancel; so may root.
"""

import grp
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemonlib import Env, as_user, check, qemu_or_skip, log, make_account, spec, wait_for  # noqa: E402


def body(env):
    qemu_or_skip()
    tag = "%d" % os.getpid()
    group, outsider, member = "sbtg" + tag, "sbtout" + tag, "sbtin" + tag
    make_account(env, "group", group)
    make_account(env, "user", outsider, "--no-create-home", "--shell", "/usr/sbin/nologin")
    make_account(env, "user", member, "--no-create-home", "--shell", "/usr/sbin/nologin", "--groups", group)
    out_u, in_u = as_user(outsider), as_user(member)
    check(grp.getgrnam(group).gr_gid in in_u[2], "test user %s is not in %s" % (member, group))

    d = env.daemon(args=["--group", group]).start()

    # root's run executes; the member's queues behind it
    r = env.submit(d, spec(timing__pre_s=30))
    wait_for(lambda: (d.status()["current"] or {}).get("id") == r, 60, "root's run to start")
    spec_path = os.path.join(env.tmp, "m.json")
    with open(spec_path, "w") as f:
        json.dump(spec(), f)
    os.chmod(spec_path, 0o644)
    rc, out, err = env.cli(d, "run", "--spec", spec_path, user=in_u)
    check(rc == 0, "group member's submit: rc %d %s" % (rc, err))
    m = out.strip()
    env.run_ids.add(m)
    st = d.status()
    check([q["id"] for q in st["queue"]] == [m], "member's run not queued: %s" % st["queue"])

    # the outsider reads everything
    rc, out, err = env.cli(d, "status", "--json", user=out_u, check_rc=0)
    st = json.loads(out)
    check(st["you"] == {"uid": out_u[0], "may_submit": False}, "status 'you' for the outsider: %s" % st["you"])
    check(st["current"]["id"] == r, "outsider's status: %s" % st["current"])
    rc, out, err = env.cli(d, "list", user=out_u, check_rc=0)
    check(r in out and m in out, "outsider's list:\n%s" % out)
    env.cli(d, "show", r, user=out_u, check_rc=0)
    env.cli(d, "logs", r, user=out_u, check_rc=0)

    # ... but may neither submit nor cancel
    rc, out, err = env.cli(d, "run", "--spec", spec_path, user=out_u)
    check(rc == 5 and "uid %d" % out_u[0] in err and "group '%s'" % group in err,
          "outsider's submit: rc %d %s" % (rc, err))
    for victim in (r, m):
        rc, out, err = env.cli(d, "cancel", victim, user=out_u)
        check(rc == 5 and "may not cancel" in err, "outsider's cancel of %s: rc %d %s" % (victim, rc, err))
    st = d.status()
    check(st["current"]["id"] == r and not st["current"]["cancelling"] and [q["id"] for q in st["queue"]] == [m],
          "the outsider's requests changed something: %s" % st)
    runs = [n for n in os.listdir(os.path.join(d.state_dir, "runs")) if len(n) == 23]
    check(sorted(runs) == sorted([r, m]), "a denied submit created a run: %s" % runs)
    log("outsider (uid %d) reads, but submit and cancel exit 5" % out_u[0])

    # the member cancels its own queued run and root's running one
    env.cli(d, "cancel", m, user=in_u, check_rc=0)
    rc, out, err = env.cli(d, "cancel", "--wait", r, user=in_u, check_rc=0)
    check(env.report(d, m)["state"] == "cancelled" and "uid %d" % in_u[0] in env.report(d, m)["error"]["message"],
          "member's cancel of the queued run: %s" % env.report(d, m)["error"])
    check(env.report(d, r)["state"] == "cancelled", "member's cancel of the running run")
    env.check_no_qemu(d, r)
    log("group member (uid %d) submits and cancels" % in_u[0])
    check(d.stop() == 0, "snapbenchd's exit status")


if __name__ == "__main__":
    Env("auth", sys.argv).run(body)
