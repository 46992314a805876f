#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""snapbenchd with real runs (QEMU/KVM, the micro guest, BPF), driven by the CLI.

Two runs submitted: the second queues, status shows the first's progress,
both complete, list and show return them, logs has the worker's. Cancel a
queued run and a running one (VM stopped, no QEMU left). `snapbench run
--wait` exits with the run's outcome: 0 completed, 1 failed, 6 when
interrupted (it cancels the run). SIGTERM stops the daemon cleanly.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemonlib import ACCEL, Env, check, cmdline, qemu_or_skip, log, pid_alive, spec, wait_for  # noqa: E402


def write_spec(env, name, obj):
    path = os.path.join(env.tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def status_json(env, d):
    rc, out, err = env.cli(d, "status", "--json", check_rc=0)
    return json.loads(out)


def submit_cli(env, d, spec_path, *flags):
    rc, out, err = env.cli(d, "run", "--spec", spec_path, *flags, check_rc=0)
    rid = out.strip()
    check(len(rid) == 23, "snapbench run printed %r, not a run id (stderr: %s)" % (out, err))
    env.run_ids.add(rid)
    return rid


def watch_until_end(env, d, rid, timeout=300):
    """Follows rid with a raw watch; returns (events, end event)."""
    c = d.conn()
    r = c.call("watch", run=rid)
    check(r["ok"], "watch %s: %s" % (rid, r))
    events = []
    deadline = time.monotonic() + timeout
    while True:
        ev = c.read(timeout=max(1, deadline - time.monotonic()))
        events.append(ev)
        if ev.get("event") == "end":
            c.close()
            return events, ev
        check(time.monotonic() < deadline, "run %s did not end within %ds" % (rid, timeout))


def two_runs(env, d):
    a = submit_cli(env, d, write_spec(env, "a", spec(repetitions=2)))
    b = submit_cli(env, d, write_spec(env, "b", spec()), "--label", "second")
    log("submitted", a, b)

    st = status_json(env, d)
    check(st["current"] and st["current"]["id"] == a, "status: current is %s, expected %s" % (st["current"], a))
    check([q["id"] for q in st["queue"]] == [b], "status: queue is %s, expected [%s]" % (st["queue"], b))
    check(st["queue"][0]["state"] == "queued", "queued run's state: %s" % st["queue"][0]["state"])

    def progressed():
        cur = status_json(env, d)["current"]
        p = cur and cur["id"] == a and cur.get("progress")
        return p if p and p.get("step") in ("warmup", "pre", "snapshot", "post") else None

    p = wait_for(progressed, 120, "run %s to report progress in a window" % a)
    check(p["reps"] == 2 and 0 <= p["fraction"] <= 1, "progress: %s" % p)
    rc, out, err = env.cli(d, "status", check_rc=0)
    check("progress:" in out and "rep " in out and "queued (1)" in out, "status text:\n%s" % out)
    log("status shows progress:", p["step"], "%.0f%%" % (100 * p["fraction"]))

    events, end = watch_until_end(env, d, b)
    check(end["state"] == "completed", "run %s ended %s: %s" % (b, end["state"], end.get("error")))
    kinds = [e.get("event") for e in events]
    check("progress" in kinds and "state" in kinds, "watch of %s saw %s" % (b, kinds))
    for rid in (a, b):
        rep = env.report(d, rid)
        check(rep["state"] == "completed", "run %s: %s %s" % (rid, rep["state"], rep.get("error")))
        env.validate(d, rid)
        env.check_no_qemu(d, rid)
    check(env.report(d, a)["created"] <= env.report(d, a)["started"], "created after started")

    rc, out, err = env.cli(d, "list", "--json", check_rc=0)
    runs = {r["id"]: r for r in json.loads(out)}
    check(runs.keys() >= {a, b}, "list: %s" % list(runs))
    check(runs[a]["state"] == "completed" and runs[a]["repetitions"]["completed"] == 2, "list: %s" % runs[a])
    rc, out, err = env.cli(d, "list", "--label", "second", "--json", check_rc=0)
    check([r["id"] for r in json.loads(out)] == [b], "list --label second: %s" % out)
    rc, out, err = env.cli(d, "list", check_rc=0)
    check(a in out and b in out and "completed" in out, "list text:\n%s" % out)

    rc, out, err = env.cli(d, "show", a, check_rc=0)
    check("run %s: completed" % a in out and "during the snapshot" in out and "invalidations/s" in out,
          "show text:\n%s" % out)
    rc, out, err = env.cli(d, "show", a, "--json", check_rc=0)
    rep = json.loads(out)
    check(rep["id"] == a and all("timeline" not in r for r in rep["repetitions"]), "show --json")
    rc, out, err = env.cli(d, "show", a, "--json", "--timeline", check_rc=0)
    check(all(len(r["timeline"]) > 0 for r in json.loads(out)["repetitions"]), "show --json --timeline")
    rc, out, err = env.cli(d, "logs", a, check_rc=0)
    check("==> worker.log <==" in out and "completed" in out and "qemu-rep" in out, "logs:\n%s" % out)
    return a, b


def cancels(env, d):
    c = env.submit(d, spec(repetitions=3, timing__pre_s=20))
    q = env.submit(d, spec())
    log("submitted", c, "and", q, "to cancel")

    rc, out, err = env.cli(d, "cancel", q, check_rc=0)
    check("cancelled" in out, "cancel of a queued run: %s" % out)
    rep = env.report(d, q)
    check(rep["state"] == "cancelled" and "before it started" in rep["error"]["message"],
          "queued run after cancel: %s %s" % (rep["state"], rep["error"]))
    env.validate(d, q)

    def in_pre():
        cur = status_json(env, d)["current"]
        return cur and cur["id"] == c and (cur.get("progress") or {}).get("step") == "pre"

    wait_for(in_pre, 120, "run %s to reach its pre window" % c)
    qemus = env.qemu_pids_of(c)
    check(qemus, "no QEMU found for running run %s" % c)
    rc, out, err = env.cli(d, "cancel", "--wait", c, check_rc=0)
    check("cancelled" in out, "cancel --wait of the running run: %s" % out)
    rep = env.report(d, c)
    check(rep["state"] == "cancelled", "running run after cancel: %s" % rep["state"])
    check(rep["repetitions"] and rep["repetitions"][0]["state"] == "cancelled", "its repetition")
    env.validate(d, c)
    env.check_no_qemu(d, c)
    for pid in qemus:
        check(not pid_alive(pid) or c not in " ".join(cmdline(pid)), "QEMU %d of run %s still alive" % (pid, c))
    log("cancelled a queued and a running run; no QEMU left")

    rc, out, err = env.cli(d, "cancel", c)
    check(rc == 1 and "already ended" in err, "cancel of an ended run: rc %d %s" % (rc, err))
    rc, out, err = env.cli(d, "cancel", "20200101T000000Z-000000")
    check(rc == 2 and "no such run" in err, "cancel of an unknown run: rc %d %s" % (rc, err))
    # a path is read here, not asked of the daemon (daemon-protocol checks that it refuses such an id)
    rc, out, err = env.cli(d, "show", "../../etc")
    check(rc == 2 and "../../etc" in err and "cannot open" in err, "show of a bad path: rc %d %s" % (rc, err))


def wait_exit_codes(env, d):
    rc, out, err = env.cli(d, "run", "--wait", "--spec", write_spec(env, "e", spec()), "--label", "waited")
    check(rc == 0 and "completed" in out, "run --wait: rc %d\n%s\n%s" % (rc, out, err))
    # its plain progress lines (stderr is a pipe): a window's step begins waiting for its first sample,
    # never with the previous window's figures, and gets a line of its own rates once that sample is in
    lines = [ln for ln in err.splitlines() if "] rep 1/1 " in ln]
    for w in ("warmup", "pre", "snapshot", "post"):
        waiting = [i for i, ln in enumerate(lines) if re.search(r": %s +waiting for the first %s sample$" % (w, w), ln)]
        live = [i for i, ln in enumerate(lines) if re.search(r": %s +pf/s \S+  tlb/s " % w, ln)]
        check(waiting and live and waiting[0] < live[0], "run --wait's %s lines:\n%s" % (w, "\n".join(lines)))
        check(not any(re.search(r": %s +\w+: pf/s" % w, ln) for ln in lines),
              "a %s line with another window's figures:\n%s" % (w, "\n".join(lines)))
    log("run --wait: each window's step waits for its first sample, then shows its rates:",
        [ln for ln in lines if re.search(r": snapshot +pf/s", ln)][0])

    rc, out, err = env.cli(d, "run", "--wait", "--spec", write_spec(env, "f", spec()),
                           "--qemu-arg", "-no-such-qemu-option")
    check(rc == 1 and "failed" in out, "run --wait of a failing run: rc %d\n%s\n%s" % (rc, out, err))

    # interrupting a waiting `snapbench run` cancels the run and exits 6
    e = dict(os.environ, SNAPBENCH_SOCKET=d.sock)
    p = subprocess.Popen([env.snapbench, "run", "--wait", "--spec",
                          write_spec(env, "g", spec(timing__pre_s=30)), "--label", "interrupted"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    env.cleanups.append(lambda: p.poll() is None and p.kill())

    def running_interrupted():
        cur = status_json(env, d)["current"]
        return cur if cur and "interrupted" in cur["labels"] and (cur.get("progress") or {}).get("step") == "pre" else None

    cur = wait_for(running_interrupted, 120, "the interrupted run to reach its pre window")
    env.run_ids.add(cur["id"])
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    check(p.returncode == 6, "interrupted run --wait exited %d:\n%s\n%s" % (p.returncode, out, err))
    check(env.report(d, cur["id"])["state"] == "cancelled", "the interrupted run's report")
    env.check_no_qemu(d, cur["id"])
    log("run --wait exit codes: 0 completed, 1 failed, 6 interrupted")


def migrating_runs(env, d):
    """dirty-log and postcopy-restore through snapbenchd, as background-snapshot runs go."""
    dirty = {
        "scenario": "dirty-log", "repetitions": 1, "vm": {"memory": "256M", "vcpus": 2, "accel": ACCEL},
        "guest": {"kind": "micro", "pattern": "rand-set", "region": "64M", "probe": {"vcpu": 0}},
        "dirty_log": {"tracking": "bitmap", "iterate_s": 4, "max_bandwidth": "64M", "downtime_limit_ms": 1,
                      "completion": "cancel"},
        "timing": {"warmup_s": 1, "pre_s": 1, "post_s": 1, "interval_ms": 250},
    }
    postcopy = {
        "scenario": "postcopy-restore", "repetitions": 1, "vm": {"memory": "128M", "vcpus": 1, "accel": ACCEL},
        "guest": {"kind": "micro", "pattern": "fault-linear", "region": "32M", "probe": {"vcpu": None}},
        "postcopy": {"access": "read", "timeout_s": 60},
        "timing": {"warmup_s": 0, "pre_s": 1, "post_s": 1, "interval_ms": 250},
    }
    for name, sp in (("dirty-log", dirty), ("postcopy-restore", postcopy)):
        rc, out, err = env.cli(d, "run", "--wait", "--json", "--spec", write_spec(env, name, sp), "--label", name)
        check(rc == 0, "%s through snapbenchd: rc %d\n%s\n%s" % (name, rc, out, err))
        run_id = json.loads(out[out.index("{"):])["id"]
        env.run_ids.add(run_id)
        rep = env.report(d, run_id)
        check(rep["state"] == "completed" and rep["spec"]["scenario"] == name, "%s: %s" % (name, rep["state"]))
        x = rep["repetitions"][0]
        check(x["windows"]["migration"]["duration_s"] > 0, "%s: no migration window" % name)
        if name == "dirty-log":
            check(len(x["migration"]["iterations"]) >= 2, "dirty-log: %d passes" % len(x["migration"]["iterations"]))
        else:
            check(x["postcopy"]["pass"]["pages"] == 32 << 20 >> 12 and x["postcopy"]["pass"]["mismatches"] == 0,
                  "postcopy: pass %s" % x["postcopy"]["pass"])
        rc, out, err = env.cli(d, "show", run_id)
        check(rc == 0 and "during the snapshot" not in out and "migration" in out, "show of %s:\n%s" % (name, out))
        env.check_no_qemu(d, run_id)
    log("dirty-log and postcopy-restore through snapbenchd: completed, reports and show")


def body(env):
    qemu_or_skip()
    d = env.daemon().start()
    two_runs(env, d)
    cancels(env, d)
    wait_exit_codes(env, d)
    migrating_runs(env, d)
    st = d.status()
    check(st["current"] is None and st["queue"] == [], "daemon not idle at the end: %s" % st)
    rc = d.stop()
    check(rc == 0, "snapbenchd exited %s after SIGTERM" % rc)
    check(not os.path.exists(d.sock), "socket %s left behind" % d.sock)


if __name__ == "__main__":
    Env("runs", sys.argv).run(body)
