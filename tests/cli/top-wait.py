#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""snapbench top without a target on a host where no process holds a KVM VM.

Its help says a VM that starts comes in: so it waits for one instead of
exiting at once, says so on stderr once (and, without /dev/kvm, that none
can start until KVM is loaded), gives up with exit 4 after --count
intervals (not before: the elapsed time is at least count x interval), and
ends with 0 on Ctrl-C (SIGINT) while waiting. Starts no QEMU; skips (77) as
non-root (top needs the BPF privileges) or when a VM is running on the host.

Usage: top-wait.py SNAPBENCH
"""
import os
import signal
import subprocess
import sys
import time

from clitest import check, result


def kvm_vm_running():
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir("/proc/%s/fd" % pid):
                if os.readlink("/proc/%s/fd/%s" % (pid, fd)) == "anon_inode:kvm-vm":
                    return True
        except OSError:
            continue
    return False


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    snapbench = argv[1]
    if os.geteuid() != 0:
        print("SKIP: top needs root (BPF)")
        return 77
    if kvm_vm_running():
        print("SKIP: a KVM VM runs on this host: top would watch it")
        return 77
    no_kvm = not os.path.exists("/dev/kvm")

    t0 = time.monotonic()
    p = subprocess.run([snapbench, "top", "--count", "3", "--interval", "200ms"], capture_output=True, text=True,
                       timeout=60)
    elapsed = time.monotonic() - t0
    lines = p.stderr.splitlines()
    check(p.returncode == 4 and elapsed >= 0.6, "top --count 3 --interval 200ms: exit %d after %.2f s (want 4 after "
          "3 intervals)" % (p.returncode, elapsed))
    check(len(lines) == 2 and "waiting for one" in lines[0] and "in 3 refreshes" in lines[1],
          "top's stderr: %r" % p.stderr)
    check(not no_kvm or all("/dev/kvm: " in line for line in lines), "without /dev/kvm, top does not say so: %r"
          % p.stderr)
    check(p.stdout == "", "top printed a table of no VM: %r" % p.stdout)

    # Ctrl-C while it waits: a user's stop, exit 0
    q = subprocess.Popen([snapbench, "top", "--interval", "100ms"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    time.sleep(0.5)
    check(q.poll() is None, "top without --count did not wait for a VM (exit %s)" % q.poll())
    q.send_signal(signal.SIGINT)
    out, err = q.communicate(timeout=30)
    check(q.returncode == 0 and "waiting for one" in err, "top after SIGINT: exit %d, stderr %r"
          % (q.returncode, err))
    print("ok: top waits for a VM (%s), gives up after --count with 4, stops on SIGINT with 0"
          % ("no /dev/kvm, said so" if no_kvm else "/dev/kvm here"))
    return result()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
