#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A non-root `snapbench probe` is refused with exit code 5, "not authorized"
(cli/exit-codes.h, docs/cli.md), before any BPF program is loaded.

Run as root, the test drops to nobody (setpriv --reuid 65534 --regid 65534
--clear-groups: no capabilities left); run as another user, it is that user
already. The target is a process of that same user, so the refusal is about
the capabilities, not about reading another user's process. Under strace the
refused probe makes no bpf() call at all. Exit 77 (skip) when the user has
CAP_BPF and CAP_PERFMON or CAP_SYS_ADMIN anyway, or when nobody cannot
execute the build.

Usage: probe-denied.py SNAPBENCH
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

CAP_SYS_ADMIN, CAP_PERFMON, CAP_BPF = 21, 38, 39
MESSAGE = "snapbench probe: BPF probes need CAP_BPF and CAP_PERFMON (or root): run as root " \
          "(the probes load BPF programs into the kernel)\n"


def as_user(argv):
    """argv run as an unprivileged user: nobody when we are root."""
    if os.geteuid() != 0:
        return argv
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"] + argv


def effective_caps(prefix):
    out = subprocess.run(prefix + ["grep", "^CapEff:", "/proc/self/status"], capture_output=True, text=True,
                         check=True).stdout
    return int(out.split()[1], 16)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    snapbench = os.path.abspath(argv[1])
    caps = effective_caps(as_user([]))
    if caps & (1 << CAP_SYS_ADMIN) or (caps & (1 << CAP_BPF) and caps & (1 << CAP_PERFMON)):
        print("SKIP: the unprivileged user here holds the BPF capabilities (CapEff %x)" % caps)
        return 77
    if subprocess.run(as_user([snapbench, "--version"]), capture_output=True).returncode != 0:
        print("SKIP: %s is not executable by an unprivileged user (a private build directory)" % snapbench)
        return 77
    failed = 0
    # a QEMU stand-in of the same user: its /proc entries are readable to it
    target = subprocess.Popen(as_user(["sleep", "60"]))
    try:
        for extra, out_check in (([], lambda out: out == ""),
                                 (["--json"], lambda out: json.loads(out) == {
                                     "verb": "probe", "error": MESSAGE[len("snapbench probe: "):-1],
                                     "exit_code": 5})):
            args = [snapbench, "probe", "--pid", str(target.pid), "--count", "1"] + extra
            p = subprocess.run(as_user(args), capture_output=True, text=True, timeout=60)
            ok = p.returncode == 5 and p.stderr == MESSAGE and out_check(p.stdout)
            print("%s %s: exit %d, stderr %r, stdout %r" % ("ok" if ok else "FAIL", " ".join(args[1:]),
                                                           p.returncode, p.stderr, p.stdout))
            failed += not ok
        strace = shutil.which("strace")
        if strace:
            with tempfile.NamedTemporaryFile(prefix="probe-denied-strace-") as trace:
                # strace as we are (it writes the trace), following the drop to nobody
                p = subprocess.run([strace, "-f", "-qq", "-e", "trace=bpf", "-o", trace.name] +
                                   as_user([snapbench, "probe", "--pid", str(target.pid)]),
                                   capture_output=True, text=True, timeout=60)
                calls = [line for line in open(trace.name) if "bpf(" in line]
                ok = p.returncode == 5 and not calls
                print("%s under strace: exit %d, bpf() calls: %s" % ("ok" if ok else "FAIL", p.returncode,
                                                                    calls or "none"))
                failed += not ok
        else:
            print("note: no strace; the no-bpf()-call check was left out")
    finally:
        target.kill()
        target.wait()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
