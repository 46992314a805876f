#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The unit's sandbox, checked against what a real run does.

systemd is not PID 1 here, so the unit cannot be started. Instead snapbenchd
runs with what the unit grants, as far as a plain process can be given it:
the unit's CapabilityBoundingSet= (setpriv --bounding-set) and
NoNewPrivileges= (setpriv --no-new-privs), under strace. One real run
(QEMU/KVM, the micro guest, BPF probes, a sysctl knob) must complete. Then
the trace of the daemon, its worker and QEMU is checked against the rest
of the unit:
 - every system call made is in the unit's SystemCallFilter= (expanded with
   systemd-analyze syscall-filter);
 - every socket is of a family in RestrictAddressFamilies=;
 - every device node opened is one DeviceAllow= or DevicePolicy=closed lets
   through;
 - files opened for writing are under the state directory, /proc, /sys,
   /dev, /tmp or the unit's ReadWritePaths= (ProtectSystem=strict,
   PrivateTmp=), and the host-wide knob lock is among them.
Arguments: the usual five, then the generated service.
"""

import os
import re
import shutil
import signal
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemonlib import (KNOB_LOCK, Env, check, kvm_usable, qemu_or_skip, log, read_knob_locked, restore_knob, skip,  # noqa: E402
                       spec, wait_for)

KNOB = "/proc/sys/kernel/numa_balancing"
WHO = "test tests/daemon/test-sandbox.py"
# DevicePolicy=closed: "/dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom, /dev/tty, /dev/pts/ptmx"
CLOSED_POLICY_DEVICES = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
                         "/dev/ptmx", "/dev/pts/ptmx"}


def unit_settings(path):
    settings = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line and not line.startswith("["):
                k, v = line.split("=", 1)
                settings.setdefault(k, []).append(v)
    return settings


def expand_filter(names):
    allowed, seen = set(), set()

    def expand(name):
        out = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager", name], capture_output=True,
                             text=True, check=True).stdout
        for line in out.splitlines()[1:]:
            l = line.strip()
            if not l or l.startswith("#"):
                continue
            if l.startswith("@"):
                if l not in seen:
                    seen.add(l)
                    expand(l)
            else:
                allowed.add(l)

    for n in names:
        if n.startswith("@"):
            expand(n)
        else:
            allowed.add(n)
    return allowed


CALL = re.compile(r"^(\d+)\s+(?:<\.\.\. )?([a-z_0-9]+)(?:\(| resumed>)")
OPEN = re.compile(r'^\d+\s+open(?:at)?\((?:AT_FDCWD|\d+<[^>]*>|\d+), "([^"]+)", ([A-Z_|]+)(?:, [0-7]+)?\) = (\d+)')
SOCK = re.compile(r"^\d+\s+socket(?:pair)?\(([A-Z_0-9]+)")


def body(env):
    qemu_or_skip()
    for tool in ("strace", "setpriv", "systemd-analyze"):
        if not shutil.which(tool):
            skip(tool)
    if not os.path.exists(KNOB):
        skip("kernel.numa_balancing (CONFIG_NUMA_BALANCING)")
    unit = unit_settings(env.extra[0])
    caps = unit["CapabilityBoundingSet"][0].split()
    bounding = "-all," + ",".join("+" + c.lower().replace("cap_", "") for c in caps)
    filt = expand_filter(" ".join(unit["SystemCallFilter"]).split())
    families = set(" ".join(unit["RestrictAddressFamilies"]).split())
    devices = {v.split()[0] for v in unit.get("DeviceAllow", [])}
    check(unit.get("NoNewPrivileges") == ["yes"] and unit.get("DevicePolicy") == ["closed"],
          "the unit's NoNewPrivileges/DevicePolicy changed: update this test")

    # under the host-wide knob lock: no run on this host has it changed right now
    original = read_knob_locked(KNOB, WHO)
    flipped = "0" if original != "0" else "1"
    env.restores.append(lambda: restore_knob(KNOB, original, WHO))

    d = env.daemon("sandbox")
    trace = os.path.join(env.tmp, "strace.txt")
    d.args = []
    # the daemon started by Daemon.start(), wrapped: strace -f follows the worker and QEMU
    orig_snapbenchd = env.snapbenchd
    wrapper = os.path.join(env.tmp, "snapbenchd-sandboxed")
    with open(wrapper, "w") as f:
        # LeakSanitizer cannot work under ptrace: off for a sanitizer build (ASan itself stays on)
        f.write("#!/bin/sh\nexport ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0\"\n"
                "exec strace -f -qq -o %s setpriv --bounding-set=%s --no-new-privs %s \"$@\"\n"
                % (trace, bounding, orig_snapbenchd))
    os.chmod(wrapper, 0o755)
    env.snapbenchd = wrapper
    try:
        d.start()
    finally:
        env.snapbenchd = orig_snapbenchd
    daemon_pid = d.status()["daemon"]["pid"]
    with open("/proc/%d/status" % daemon_pid) as f:
        st = dict(l.split(":", 1) for l in f if ":" in l)
    check(st["NoNewPrivs"].strip() == "1", "no_new_privs not set on snapbenchd")
    log("snapbenchd (pid %d) runs with CapBnd %s, NoNewPrivs 1" % (daemon_pid, st["CapBnd"].strip()))

    rid = env.submit(d, spec(knobs={"sysctl:kernel.numa_balancing": flipped}))
    rep = wait_for(lambda: env.report(d, rid)["state"] not in ("queued", "running") and env.report(d, rid), 600,
                   "the sandboxed run to end")
    check(rep["state"] == "completed", "the run under the unit's capabilities: %s %s" % (rep["state"], rep.get("error")))
    probes = rep["probes"]
    bpf = [c for c, p in probes.items() if c.startswith("bpf.") and p["available"]]
    if kvm_usable():
        check(bpf, "no BPF counter available under the bounding set: %s" %
              {c: p.get("reason") for c, p in probes.items() if c.startswith("bpf.")})
    else:
        # TCG: no KVM VM to probe, so no bpf() here; realkvm-systemd-pid1 loads them under the whole sandbox
        check(all("TCG" in p.get("reason", "") for c, p in probes.items() if c.startswith("bpf.")),
              "TCG: BPF counters not named unavailable for TCG: %s" % probes)
    check(read_knob_locked(KNOB, WHO) == original, "knob not restored")
    # SIGTERM to snapbenchd itself: strace would only detach on one of its own
    os.kill(daemon_pid, signal.SIGTERM)
    check(d.proc.wait(120) == 0, "exit status after SIGTERM")
    log("run %s completed with the unit's bounding set and no_new_privs (%d BPF counters)" % (rid, len(bpf)))

    used, socks, devs, writes = {}, set(), set(), set()
    with open(trace, errors="replace") as f:
        for line in f:
            m = CALL.match(line)
            if m:
                used[m.group(2)] = used.get(m.group(2), 0) + 1
            m = SOCK.match(line)
            if m:
                socks.add(m.group(1))
            m = OPEN.match(line)
            if m:
                path, flags = m.group(1), m.group(2)
                if path.startswith("/dev/"):
                    try:
                        mode = os.stat(path).st_mode
                        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                            devs.add(path)
                    except OSError:
                        pass
                if any(x in flags for x in ("O_WRONLY", "O_RDWR", "O_CREAT")) and path.startswith("/"):
                    writes.add(path)
    outside = sorted(s for s in used if s not in filt and s not in ("exit", "restart_syscall"))
    log("%d distinct system calls; outside SystemCallFilter=: %s" % (len(used), outside or "none"))
    check(not outside, "system calls the unit's filter refuses: %s" % outside)
    check(socks <= families, "socket families %s, the unit allows %s" % (sorted(socks), sorted(families)))
    bad_devs = sorted(p for p in devs if p not in devices and p not in CLOSED_POLICY_DEVICES
                      and not p.startswith("/dev/pts/"))
    check(not bad_devs, "devices the unit's DeviceAllow= refuses: %s" % bad_devs)
    read_write = [p.lstrip("-").rstrip("/") + "/" for v in unit.get("ReadWritePaths", []) for p in v.split()]
    allowed_prefixes = tuple([d.state_dir + "/", "/proc/", "/sys/", "/dev/", "/tmp/"] + read_write)
    bad_writes = sorted(p for p in writes if not p.startswith(allowed_prefixes))
    check(not bad_writes, "writes outside the unit's writable paths: %s" % bad_writes)
    check(KNOB_LOCK in writes, "the run did not open the host-wide knob lock %s" % KNOB_LOCK)
    check(KNOB_LOCK.startswith(tuple(read_write)), "the unit's ReadWritePaths= %s do not cover the host-wide knob lock %s"
          % (read_write, KNOB_LOCK))
    log("sockets %s, devices %s, writes only under the state directory, /proc, /sys, /dev, /tmp and %s"
        % (sorted(socks), sorted(devs), " ".join(read_write)))


if __name__ == "__main__":
    Env("sandbox", sys.argv).run(body)
