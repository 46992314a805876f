#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""snapbenchd under a real systemd as PID 1: the units as installed, the
service activated by its socket, a run under the unit's whole sandbox, and
the journal (docs/service.md, docs/testing.md).

This host's systemd is not PID 1, so the test runs inside a host VM that
boots this host's root with systemd as PID 1 (tests/realkvm/hostvm-exec
--systemd: the root an overlay over this host's /, writable in memory, KVM
the test kernel's kvm_amd). There, as the one service systemd starts
(kernel-command-line.service):

  - `meson install` of this build into the VM's root (its /usr/local, in
    memory), then systemd-sysusers and systemd-tmpfiles for snapbench's
    files, and `systemctl daemon-reload`: systemd loads the installed units;
  - `systemctl start snapbenchd.socket`: the service stays inactive until
    the first request; `snapbench status` activates it (Type=notify: active
    only after READY=1), TriggeredBy the socket;
  - `snapbench run --wait` of a 1-repetition background snapshot through
    the socket: it completes under ProtectSystem=strict, the system call
    filter, the capability bounding set, ReadWritePaths= and the rest, and
    its report is in the unit's StateDirectory;
  - a request longer than the daemon's bound: refused, logged as a notice;
  - `systemctl stop`: the daemon stops cleanly (inactive, not failed);
  - the journal of snapbenchd.service: its lines with their priorities
    (SyslogLevelPrefix: "<6>" info, "<5>" notice), from "listening on a
    socket from systemd" to "stopped", and systemd's own "Started".

Usage: test-systemd-pid1.py BUILD_DIR OUT_DIR (inside the VM; the status goes to
$HOSTVM_EXEC_STATUS). The figures are printed on the console.
"""

import json
import os
import socket
import subprocess
import sys
import time

SOCK = "/run/snapbench/snapbenchd.sock"
SERVICE = "snapbenchd.service"


def log(*args):
    print("systemd-pid1:", *args, flush=True)


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def sh(argv, ok=(0,), **kw):
    p = subprocess.run(argv, capture_output=True, text=True, **kw)
    if p.returncode not in ok:
        raise Fail("%s: exit %d\n%s%s" % (" ".join(argv), p.returncode, p.stdout, p.stderr))
    return p


def unit_props(*props):
    p = sh(["systemctl", "show", SERVICE] + ["-p" + x for x in props])
    return dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)


def journal():
    p = sh(["journalctl", "-b", "-o", "json", "--no-pager", "_SYSTEMD_UNIT=" + SERVICE])
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def main(build, out):
    t0 = time.monotonic()
    # no "is-system-running --wait": this service is the boot's own job, the boot ends with it
    check(os.readlink("/proc/1/exe").endswith("/systemd"), "PID 1 is %s" % os.readlink("/proc/1/exe"))
    sh(["meson", "install", "-C", build, "--no-rebuild", "--quiet"])
    sh(["systemd-sysusers", "snapbench.conf"])
    sh(["systemd-tmpfiles", "--create", "snapbench.conf"])
    sh(["systemctl", "daemon-reload"])
    props = unit_props("LoadState", "Type", "FragmentPath", "ActiveState")
    log("installed unit:", props)
    check(props["LoadState"] == "loaded" and props["Type"] == "notify", "the unit did not load: %s" % props)
    sh(["systemctl", "start", "snapbenchd.socket"])
    check(unit_props("ActiveState")["ActiveState"] == "inactive", "the service started before any request")

    p = sh(["snapbench", "status", "--json"])
    props = unit_props("ActiveState", "SubState", "MainPID", "TriggeredBy", "NRestarts", "ExecMainStartTimestampMonotonic")
    log("after the first request:", props, "status:", p.stdout.strip()[:200])
    check(props["ActiveState"] == "active" and props["SubState"] == "running", "not activated: %s" % props)
    check("snapbenchd.socket" in props["TriggeredBy"] and int(props["MainPID"]) > 0, "activation: %s" % props)
    main_pid = int(props["MainPID"])
    with open("/proc/%d/status" % main_pid) as f:
        status = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
    check(status["NoNewPrivs"].strip() == "1" and status["Seccomp"].strip() == "2",
          "the daemon runs without its sandbox: NoNewPrivs %s, Seccomp %s" % (status["NoNewPrivs"], status["Seccomp"]))
    log("daemon pid %d: CapBnd %s, NoNewPrivs 1, Seccomp 2 (filter)" % (main_pid, status["CapBnd"].strip()))

    spec = {"description": "through snapbenchd under systemd as PID 1", "repetitions": 1,
            "vm": {"memory": "64M", "vcpus": 1},
            "timing": {"warmup_s": 1, "pre_s": 2, "post_s": 2, "interval_ms": 500}}
    spec_path = os.path.join(out, "spec.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    p = sh(["snapbench", "run", "--wait", "--json", "--quiet", "--spec", spec_path], ok=(0, 1))
    outcome = json.loads(p.stdout)
    log("run:", json.dumps(outcome)[:400])
    check(p.returncode == 0 and outcome.get("state") == "completed", "the run did not complete: %s %s" % (
        p.stdout[-2000:], p.stderr[-2000:]))
    run_id = outcome["id"]
    report = "/var/lib/snapbench/runs/%s/report.json" % run_id
    check(os.path.isfile(report), "no report in the unit's StateDirectory: %s" % report)
    with open(report) as f:
        rep = json.load(f)
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(rep, f)
    snap = rep["repetitions"][0]["windows"]["snapshot"]["metrics"]
    probe = rep["probes"].get("bpf.invalidations", {})
    log("report %s: state %s, snapshot invalidations/s %s, pf/s %s; bpf.invalidations: %s" % (
        report, rep["state"], snap.get("invalidations_per_s"), snap.get("pf_per_s"), probe))
    check(rep["state"] == "completed", "report: %s" % rep["state"])
    # the BPF probes load under the unit's capabilities and system call filter
    check(probe.get("available") is True and rep["repetitions"][0]["totals"].get("bpf.invalidations", 0) > 0,
          "the run's BPF probes did not count under the sandbox: %s" % probe)

    # a request past the 1 MiB line bound: refused and logged as a notice
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(SOCK)
    try:
        s.sendall(b'{"op": "status", "x": "' + b"a" * (1 << 20) + b'"}\n')
    except OSError:
        pass
    s.settimeout(10)
    try:
        while s.recv(65536):
            pass
    except OSError:
        pass
    s.close()

    sh(["systemctl", "stop", SERVICE, "snapbenchd.socket"])
    props = unit_props("ActiveState", "Result", "ExecMainStatus")
    log("after systemctl stop:", props)
    check(props["ActiveState"] == "inactive" and props["Result"] == "success", "stop: %s" % props)

    lines = journal()
    by_msg = [(int(e.get("PRIORITY", -1)), e.get("MESSAGE", "")) for e in lines]
    for prio, msg in by_msg:
        log("journal <%d> %s" % (prio, msg if isinstance(msg, str) else msg))
    def find(prio, text):
        return any(p == prio and isinstance(m, str) and text in m for p, m in by_msg)
    check(find(6, "listening on a socket from systemd"), "no info line 'listening on a socket from systemd'")
    check(find(6, "run %s: started" % run_id) and find(6, "run %s: completed" % run_id),
          "no info lines for run %s's start and end" % run_id)
    check(find(5, "request longer than"), "no notice for the overlong request")
    check(find(6, "stopped;"), "no info line 'stopped'")
    check(all(p != -1 for p, _ in by_msg), "a journal line without its priority")
    started = sh(["journalctl", "-b", "-o", "cat", "--no-pager", "-u", SERVICE]).stdout
    check("Started snapbenchd.service" in started or "Started snapbench" in started,
          "systemd never logged the service as started:\n%s" % started[-2000:])
    with open(os.path.join(out, "journal.json"), "w") as f:
        json.dump(lines, f)
    log("OK in %.1f s: %d journal lines of %s" % (time.monotonic() - t0, len(lines), SERVICE))


if __name__ == "__main__":
    status = 1
    try:
        main(sys.argv[1], sys.argv[2])
        status = 0
    except Fail as e:
        log("FAIL:", e)
    except Exception as e:  # noqa: BLE001 - any error is the test's failure, said on the console
        log("FAIL: %s: %s" % (type(e).__name__, e))
    with open(os.environ.get("HOSTVM_EXEC_STATUS", "/dev/null"), "w") as f:
        f.write("%d\n" % status)
    sys.exit(status)
