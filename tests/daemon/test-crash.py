#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""kill -9 of snapbenchd in the middle of a run, then a restart.

Twice, with a knob set by the run (kernel.numa_balancing flipped):
 1. only the daemon is killed: its worker gets its parent-death signal and
    stops the run in order (VM stopped, knob restored) and marks it
    interrupted;
 2. the daemon and the worker are killed at once: the worker's QEMU dies
    with it (PDEATHSIG), the knob stays set and the report says "running",
    until the restarted daemon's recovery restores the knob and marks the run
    interrupted.
Each time: the interrupted run is failed (phase "interrupted") with its
partial data (a completed first repetition, the second's timeline so far),
the queued run proceeds and completes, and no QEMU is left (checked by the
pids in the reports and by command line).
Then SIGTERM mid-run: the run is cancelled in order (knob restored, no QEMU
left), the daemon exits 0, and the queued run executes after the restart.
Original and restored values are read under the host-wide knob lock, so
that no other run on this host changes the knob meanwhile.
"""

import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemonlib import (Env, KnobLock, check, qemu_or_skip, log, pid_alive, read_knob_locked,  # noqa: E402
                       restore_knob, skip, spec, wait_for)

KNOB = "/proc/sys/kernel/numa_balancing"
WHO = "test tests/daemon/test-crash.py"


def read_knob():
    with open(KNOB) as f:
        return f.read().strip()


def read_knob_quiet():
    """The knob while no run changes it (the host-wide knob lock)."""
    return read_knob_locked(KNOB, WHO)


def crash(env, sub, kill_worker):
    original = read_knob_quiet()
    flipped = "0" if original != "0" else "1"
    d = env.daemon(sub).start()
    a = env.submit(d, spec(repetitions=2, timing__pre_s=12, knobs={"sysctl:kernel.numa_balancing": flipped}))
    b = env.submit(d, spec())
    log("%s: submitted %s (knob numa_balancing=%s) and %s" % (sub, a, flipped, b))

    # mid-run: the first repetition done, the second inside its pre window
    def second_rep_in_pre():
        cur = d.status()["current"]
        p = (cur or {}).get("progress") or {}
        return cur if cur and cur["id"] == a and p.get("rep") == 1 and p.get("step") == "pre" else None

    cur = wait_for(second_rep_in_pre, 180, "run %s's second repetition" % a)
    check(read_knob() == flipped, "the run did not set the knob")
    worker = cur["worker_pid"]
    qemus = env.qemu_pids_of(a)
    check(worker and qemus, "worker %s, QEMU %s" % (worker, qemus))
    # the report has been rewritten (every 5 s) with some of the second repetition's timeline
    wait_for(lambda: len(env.report(d, a)["repetitions"]) == 2 and env.report(d, a)["repetitions"][1]["timeline"],
             30, "the report to hold part of the second repetition's timeline")

    if kill_worker:
        # stopped first, so it cannot act on its parent-death signal: both die "at once"
        os.kill(worker, signal.SIGSTOP)
    d.kill9()
    if kill_worker:
        os.kill(worker, signal.SIGKILL)
    log("%s: killed snapbenchd%s (worker %d, QEMU %s)" % (sub, " and its worker" if kill_worker else "", worker, qemus))
    wait_for(lambda: not pid_alive(worker), 120, "the worker to end")
    for q in qemus:
        wait_for(lambda: not pid_alive(q), 60, "QEMU %d to end" % q)
    if kill_worker:
        check(env.report(d, a)["state"] == "running", "the report should still say running")
        with KnobLock(WHO):
            if os.path.exists(os.path.join(d.state_dir, "runs", "knobs.journal")):
                check(read_knob() == flipped, "nobody should have restored the knob yet")
            else:
                # the first run on this host to take the knob lock after a holder died restores its journal
                check(read_knob() == original, "the journal is gone, but the knob is %s" % read_knob())
                log("%s: another run on this host restored the knob first" % sub)
    else:
        check(read_knob_quiet() == original, "the worker did not restore the knob on its way out")

    d2 = env.daemon(sub)  # same state and socket
    d2.start()
    now = read_knob_quiet()
    check(now == original, "knob %s after the restart, expected %s" % (now, original))
    rep = env.report(d2, a)
    check(rep["state"] == "failed" and rep["error"]["phase"] == "interrupted", "run %s: %s %s" %
          (a, rep["state"], rep["error"]))
    reps = rep["repetitions"]
    check(len(reps) == 2 and reps[0]["state"] == "completed" and reps[1]["state"] == "failed",
          "repetitions: %s" % [r["state"] for r in reps])
    check(len(reps[0]["timeline"]) > 0 and len(reps[1]["timeline"]) > 0, "partial timelines were not kept")
    check(rep["arms"][0]["repetitions"]["completed"] == 1, "arm counts: %s" % rep["arms"][0]["repetitions"])
    env.validate(d2, a)
    check(any("interrupted" in l for l in d2.log().splitlines()), "the restart did not log the interruption")

    end = wait_for(lambda: env.report(d2, b)["state"] in ("completed", "failed", "cancelled") and env.report(d2, b),
                   300, "the queued run %s to finish" % b)
    check(end["state"] == "completed", "queued run %s: %s %s" % (b, end["state"], end.get("error")))
    for rid in (a, b):
        env.check_no_qemu(d2, rid)
    for r in reps:
        check(not pid_alive(r["vm"]["pid"]) or a not in open("/proc/%d/cmdline" % r["vm"]["pid"]).read(),
              "QEMU %d left" % r["vm"]["pid"])
    check(d2.stop() == 0, "exit status after SIGTERM")
    log("%s: interrupted run failed with its partial data, queued run completed, no QEMU left" % sub)


def sigterm(env):
    """SIGTERM mid-run: the run is cancelled in order, the queued run waits for the next start."""
    original = read_knob_quiet()
    flipped = "0" if original != "0" else "1"
    d = env.daemon("sigterm").start()
    a = env.submit(d, spec(timing__pre_s=30, knobs={"sysctl:kernel.numa_balancing": flipped}))
    b = env.submit(d, spec())
    wait_for(lambda: ((d.status()["current"] or {}).get("progress") or {}).get("step") == "pre", 120,
             "run %s's pre window" % a)
    check(read_knob() == flipped, "the run did not set the knob")
    qemus = env.qemu_pids_of(a)
    rc = d.stop(timeout=90)
    check(rc == 0, "snapbenchd exited %s after SIGTERM" % rc)
    rep = env.report(d, a)
    check(rep["state"] == "cancelled", "run %s after SIGTERM: %s %s" % (a, rep["state"], rep.get("error")))
    check(read_knob_quiet() == original, "knob not restored after SIGTERM")
    env.check_no_qemu(d, a)
    for q in qemus:
        check(not pid_alive(q), "QEMU %d alive after SIGTERM" % q)
    check(env.report(d, b)["state"] == "queued", "the queued run after SIGTERM: %s" % env.report(d, b)["state"])
    with open(os.path.join(d.state_dir, "queue.json")) as f:
        check(b in f.read(), "queue.json lost the queued run")
    d2 = env.daemon("sigterm").start()
    end = wait_for(lambda: env.report(d2, b)["state"] not in ("queued", "running") and env.report(d2, b), 300,
                   "the queued run to execute after the restart")
    check(end["state"] == "completed", "queued run %s: %s" % (b, end["state"]))
    check(d2.stop() == 0, "exit status after SIGTERM")
    log("sigterm: the run was cancelled in order (knob restored, no QEMU left), the queued run ran after the restart")


def body(env):
    qemu_or_skip()
    if not os.path.exists(KNOB):
        skip("kernel.numa_balancing (CONFIG_NUMA_BALANCING)")
    original = read_knob_quiet()
    # if a check fails with a run killed and its journal gone with the state directory
    env.restores.append(lambda: restore_knob(KNOB, original, WHO))
    crash(env, "daemon-only", kill_worker=False)
    crash(env, "daemon-and-worker", kill_worker=True)
    sigterm(env)


if __name__ == "__main__":
    Env("crash", sys.argv).run(body)
