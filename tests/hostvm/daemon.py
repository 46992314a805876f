#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Kernel arms through snapbenchd (docs/kernel-arms.md): its worker runs the host VMs.

  1. `snapbench run --kernel IMAGE --wait` through a private snapbenchd: the
     run completes, its progress went through the daemon (the CLI's --wait
     output names the inner run's windows), the report names the kernel and
     has the repetition's boot time, and validates.
  2. A second run is cancelled once its host VM has reached the runner inside
     (status shows an inner step): the run ends cancelled and the host VM's
     QEMU is gone.
  3. A third run is interrupted: snapbenchd and its worker are killed while
     the host VM runs; the host VM's QEMU ends (it dies with the worker), and
     the restarted daemon marks the run failed (interrupted). No QEMU of any
     of these runs is left.

Usage: daemon.py SNAPBENCHD SNAPBENCH WORKER VALIDATOR SCHEMA
"""
import glob
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "daemon"))
from daemonlib import Env, check, log, pid_alive, skip, wait_for  # noqa: E402

CACHE = os.environ.get("SNAPBENCH_KERNEL_CACHE", "/var/cache/snapbench/kernels")
INNER_STEPS = ("preflight", "knobs", "vm-start", "probes", "guest", "warmup", "pre", "snapshot", "post")


def kernel():
    images = sorted(glob.glob(os.path.join(CACHE, "*", "boot", "vmlinuz-*")))
    if not images:
        sys.exit("hostvm-daemon: no Debian kernel in %s; run scripts/install-deps (or scripts/fetch-test-kernel) as root"
                 % CACHE)
    return images[-1], os.path.basename(images[-1])[len("vmlinuz-"):]


def host_vm_spec(image, pre_s=1):
    return {
        "repetitions": 1,
        "vm": {"memory": 64 << 20, "vcpus": 1},
        "timing": {"warmup_s": 1, "pre_s": pre_s, "post_s": 1, "interval_ms": 250},
        "host_vm": {"kernel": image},
        "arms": [{"label": "npt", "knobs": {"module:kvm_amd.npt": "1"}}],
    }


def host_vm_pid(env, d, rid):
    try:
        reps = env.report(d, rid)["repetitions"]
    except (OSError, ValueError, KeyError):
        return None
    return reps and (reps[-1].get("host_vm") or {}).get("pid")


def in_inner_step(d, rid):
    cur = d.status()["current"]
    p = (cur or {}).get("progress") or {}
    return cur if cur and cur["id"] == rid and p.get("step") in INNER_STEPS and p.get("rep_elapsed_s", 0) > 0 else None


def body(env):
    if not os.path.exists("/usr/bin/qemu-system-x86_64") and not os.path.exists("/usr/local/bin/qemu-system-x86_64"):
        skip("qemu-system-x86_64")
    image, release = kernel()
    d = env.daemon("hv").start()

    # 1. a completed run through the daemon, followed with --wait
    rc, out, err = env.cli(d, "run", "--kernel", image, "--arm", "npt:module:kvm_amd.npt=1", "--repetitions", "1",
                           "--memory", "64M", "--vcpus", "1", "--warmup", "1", "--pre", "1", "--post", "1",
                           "--wait", "--json", timeout=600)
    check(rc == 0, "snapbench run --kernel --wait exited %d:\n%s\n%s" % (rc, out, err[-3000:]))
    import json
    rid = json.loads(out)["id"]
    env.run_ids.add(rid)
    rep = env.report(d, rid)
    env.validate(d, rid)
    check(rep["state"] == "completed", "run %s: %s %s" % (rid, rep["state"], rep.get("error")))
    check(rep["arms"][0]["kernel"]["release"] == release, "kernel %s" % rep["arms"][0].get("kernel"))
    x = rep["repetitions"][0]
    check(x["state"] == "completed" and x["host_vm"]["boot_s"], "repetition: %s %s" % (x["state"], x["host_vm"]))
    check("snapshot" in err, "--wait showed no inner progress:\n%s" % err[-2000:])
    env.check_no_qemu(d, rid)
    log("completed through snapbenchd: boot %.1f s, pf_taken %d" % (x["host_vm"]["boot_s"], x["totals"]["kvm.pf_taken"]))

    # 2. cancel while the host VM runs
    b = env.submit(d, host_vm_spec(image, pre_s=60))
    wait_for(lambda: in_inner_step(d, b), 240, "run %s's host VM to reach the runner inside" % b)
    qemu = host_vm_pid(env, d, b)
    check(qemu and pid_alive(qemu), "host VM QEMU of %s: %s" % (b, qemu))
    env.cli(d, "cancel", b, check_rc=0)
    end = wait_for(lambda: env.report(d, b)["state"] != "running" and env.report(d, b), 60, "run %s to end" % b)
    check(end["state"] == "cancelled", "cancelled run %s: %s %s" % (b, end["state"], end.get("error")))
    check(not pid_alive(qemu), "host VM QEMU %d alive after cancel" % qemu)
    env.check_no_qemu(d, b)
    env.validate(d, b)
    log("cancel: run cancelled, host VM QEMU %d gone" % qemu)

    # 3. snapbenchd and its worker killed mid-run
    c = env.submit(d, host_vm_spec(image, pre_s=60))
    cur = wait_for(lambda: in_inner_step(d, c), 240, "run %s's host VM to reach the runner inside" % c)
    worker, qemu = cur["worker_pid"], host_vm_pid(env, d, c)
    check(worker and qemu and pid_alive(qemu), "worker %s, host VM QEMU %s" % (worker, qemu))
    os.kill(worker, signal.SIGSTOP)
    d.kill9()
    os.kill(worker, signal.SIGKILL)
    wait_for(lambda: not pid_alive(worker), 60, "the worker to end")
    wait_for(lambda: not pid_alive(qemu), 60, "host VM QEMU %d to end" % qemu)
    d2 = env.daemon("hv").start()
    rep = wait_for(lambda: env.report(d2, c)["state"] != "running" and env.report(d2, c), 60, "recovery of %s" % c)
    check(rep["state"] == "failed" and rep["error"]["phase"] == "interrupted", "run %s: %s %s" %
          (c, rep["state"], rep["error"]))
    env.check_no_qemu(d2, c)
    check(d2.stop() == 0, "snapbenchd exit status after SIGTERM")
    log("interrupted: host VM QEMU %d ended with its worker, the restart marked the run interrupted" % qemu)


if __name__ == "__main__":
    Env("hostvm", sys.argv).run(body)
