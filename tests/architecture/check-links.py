#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a built program links, as docs/architecture.md says it may.

snapbenchd takes the run spec and knobs, the protocol, reports and the
daemon's store, never the run engine: no libbpf or libvirt among its
shared libraries (readelf -d), and none of the functions of qmp/, qga/,
bpf/, guest/ or runner/ (outside runner/spec/) among its global symbols (nm).

With --no-libvirt it checks the one rule snapbench-hostvm-run keeps (the
run engine inside a host VM, which reads its shared libraries over 9p at
every boot): no libvirt among its shared libraries, none of the libvirt
backend's functions among its symbols.

Usage: check-links.py [--no-libvirt] READELF NM BINARY
"""
import re
import subprocess
import sys

FORBIDDEN_LIBS = ("libbpf", "libvirt")
# function prefixes of the libraries snapbenchd must not contain
FORBIDDEN_SYMBOLS = re.compile(
    r"^(qmp_|qga_|sb_probe|ksyms_|bpf_source_|guest_|vm_|lv_|libvirt_|runner_|sampler_|preflight_|"
    r"linux_workload_|linux_probe_|drain_|host_collect|qemu_probe|scenario_)")


LIBVIRT_LIBS = ("libvirt",)
LIBVIRT_SYMBOLS = re.compile(r"^(lv_|libvirt_|vm_backend_libvirt$)")


def main(argv):
    no_libvirt = len(argv) > 1 and argv[1] == "--no-libvirt"
    if no_libvirt:
        argv = argv[:1] + argv[2:]
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    readelf, nm, binary = argv[1:]
    forbidden_libs = LIBVIRT_LIBS if no_libvirt else FORBIDDEN_LIBS
    forbidden_symbols = LIBVIRT_SYMBOLS if no_libvirt else FORBIDDEN_SYMBOLS
    what = "libvirt" if no_libvirt else "the run engine, QMP, BPF or libvirt"
    bad = []
    dyn = subprocess.run([readelf, "-d", binary], capture_output=True, text=True, check=True).stdout
    for lib in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn):
        if lib.startswith(forbidden_libs):
            bad.append(f"{binary} needs {lib}")
    syms = subprocess.run([nm, "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    for line in syms.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDRB" and forbidden_symbols.match(parts[2]):
            bad.append(f"{binary} contains {parts[2]}")
    for b in bad:
        print(b)
    if bad:
        print(f"{binary}: links what docs/architecture.md keeps out of it ({what})")
        return 1
    print(f"{binary}: none of {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
