#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The systemd units, tmpfiles.d and sysusers.d files as meson installs them.

systemd-analyze verify passes on snapbenchd.service (as generated, with its
ExecStart pointed at this build's snapbenchd, since nothing is installed
here) and snapbenchd.socket; the security exposure stays at or below the
figure docs/service.md records; systemd-tmpfiles and systemd-sysusers accept
their files (applied under a scratch root).
Arguments: the usual five, then the generated service and the socket unit.
"""

import os
import re
import shutil
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemonlib import Env, check, log, skip  # noqa: E402

# docs/service.md records the score; raise it there (with the reason) if a
# change to the unit really needs more exposure.
MAX_EXPOSURE = 2.6


def body(env):
    service, socket_unit = env.extra[0], env.extra[1]
    if not shutil.which("systemd-analyze"):
        skip("systemd-analyze (Debian package systemd)")
    src = os.path.dirname(os.path.abspath(socket_unit))
    units = os.path.join(env.tmp, "units")
    os.makedirs(units)
    with open(service) as f:
        text = f.read()
    m = re.search(r"^ExecStart=(\S+)", text, re.M)
    check(m and m.group(1).endswith("/snapbenchd"), "ExecStart of %s: %s" % (service, m and m.group(0)))
    text = text.replace(m.group(1), os.path.abspath(env.snapbenchd), 1)
    with open(os.path.join(units, "snapbenchd.service"), "w") as f:
        f.write(text)
    shutil.copy(socket_unit, units)

    p = subprocess.run(["systemd-analyze", "verify", "--man=no", os.path.join(units, "snapbenchd.service"),
                        os.path.join(units, "snapbenchd.socket")], capture_output=True, text=True)
    ours = [l for l in (p.stdout + p.stderr).splitlines() if "snapbenchd" in l]
    check(p.returncode == 0 and not ours, "systemd-analyze verify: exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
    log("systemd-analyze verify: snapbenchd.service and snapbenchd.socket pass")

    p = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager",
                        os.path.join(units, "snapbenchd.service")], capture_output=True, text=True)
    m = re.search(r"Overall exposure level for snapbenchd.service: ([0-9.]+)", p.stdout)
    check(m, "no exposure level in:\n%s%s" % (p.stdout, p.stderr))
    exposure = float(m.group(1))
    print("\n".join(l.rstrip() for l in p.stdout.splitlines() if l.startswith("\u2717")))
    log("systemd-analyze security --offline=true: exposure %.1f (at most %.1f)" % (exposure, MAX_EXPOSURE))
    check(exposure <= MAX_EXPOSURE, "exposure %.1f is above %.1f" % (exposure, MAX_EXPOSURE))

    # tmpfiles.d and sysusers.d, applied to a scratch root
    root = os.path.join(env.tmp, "root")
    os.makedirs(os.path.join(root, "etc"))
    p = subprocess.run(["systemd-tmpfiles", "--create", "--root", root, os.path.join(src, "tmpfiles-snapbench.conf")],
                       capture_output=True, text=True)
    check(p.returncode == 0, "systemd-tmpfiles: %s%s" % (p.stdout, p.stderr))
    for d in ("var/lib/snapbench", "var/lib/snapbench/runs", "run/snapbench"):
        st = os.stat(os.path.join(root, d))
        check(stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o755, "%s: mode %o" % (d, st.st_mode))
    p = subprocess.run(["systemd-sysusers", "--root", root, os.path.join(src, "sysusers-snapbench.conf")],
                       capture_output=True, text=True)
    check(p.returncode == 0, "systemd-sysusers: %s%s" % (p.stdout, p.stderr))
    with open(os.path.join(root, "etc", "group")) as f:
        check(any(l.startswith("snapbench:") for l in f), "sysusers did not create group snapbench")
    log("tmpfiles.d creates /var/lib/snapbench{,/runs} and /run/snapbench 0755; sysusers.d creates group snapbench")


if __name__ == "__main__":
    Env("units", sys.argv).run(body)
