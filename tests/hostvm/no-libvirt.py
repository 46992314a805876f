#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""snapbench-hostvm-run has no libvirt backend (runner/meson.build): a spec
for it fails in preflight with a message naming the field and the fix, and
the report says failed with that reason. No QEMU, no host VM.

Usage: no-libvirt.py SNAPBENCH-HOSTVM-RUN
"""
import json
import os
import subprocess
import sys
import tempfile


def main(argv):
    binary = argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "spec.json")
        with open(spec, "w") as f:
            json.dump({"vm": {"backend": "libvirt"}, "repetitions": 1}, f)
        out = os.path.join(tmp, "out")
        p = subprocess.run([binary, "--spec", spec, "--output", out], capture_output=True, text=True,
                           timeout=60, stdin=subprocess.DEVNULL)
        print(p.stderr, end="")
        want = 'spec.vm.backend: "libvirt": snapbench-hostvm-run is built without the libvirt backend'
        assert p.returncode == 1, p.returncode
        assert want in p.stderr and 'use backend "qemu"' in p.stderr, p.stderr
        report = json.load(open(os.path.join(out, "report.json")))
        assert report["state"] == "failed", report["state"]
        assert report["error"]["phase"] == "preflight" and want in report["error"]["message"], report["error"]
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
