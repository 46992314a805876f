#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a built program links, as docs/architecture.md says it may.

snapbenchd takes the run spec and knobs, the protocol, reports and the
daemon's store, never the run engine: no libbpf or libvirt among its
shared libraries (readelf -d), and none of the functions of qmp/, qga/,
bpf/, guest/ or runner/ (outside runner/spec/) among its global symbols (nm).

Usage: check-links.py READELF NM BINARY
"""
import re
import subprocess
import sys

FORBIDDEN_LIBS = ("libbpf", "libvirt")
# function prefixes of the libraries snapbenchd must not contain
FORBIDDEN_SYMBOLS = re.compile(
    r"^(qmp_|qga_|sb_probe|ksyms_|bpf_source_|guest_|vm_|lv_|libvirt_|runner_|sampler_|preflight_|"
    r"linux_workload_|linux_probe_|drain_|host_collect|qemu_probe|scenario_)")


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    readelf, nm, binary = argv[1:]
    bad = []
    dyn = subprocess.run([readelf, "-d", binary], capture_output=True, text=True, check=True).stdout
    for lib in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn):
        if lib.startswith(FORBIDDEN_LIBS):
            bad.append(f"{binary} needs {lib}")
    syms = subprocess.run([nm, "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    for line in syms.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDRB" and FORBIDDEN_SYMBOLS.match(parts[2]):
            bad.append(f"{binary} contains {parts[2]}")
    for b in bad:
        print(b)
    if bad:
        print(f"{binary}: links what docs/architecture.md keeps out of it (the run engine, QMP, BPF, libvirt)")
        return 1
    print(f"{binary}: none of the run engine, QMP, BPF or libvirt")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
