#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""snapbench-uffd-restore on a stock kernel's KVM (run inside a host VM by
hostvm-exec: Debian 12's backports kernel, the 6.12 seed 003's patch is
made for, its kvm_amd under TCG).

For 4 KiB, 512 KiB and 2 MiB chunks over a 16 MiB region (read, and one
write pass): exit 0, one handler request per chunk and none woken only
(a linear pass faults each chunk once), every byte placed, no page
mismatched, and KVM's own counts of the vCPU: at least one fixed fault per
page (a stock KVM prefetches nothing for the TDP MMU, whatever the
chunk), and no pf_prefetched stat (the patch's). Then a bad option exits 2
naming it.

Usage: uffd_restore.py SNAPBENCH-UFFD-RESTORE
"""
import json
import subprocess
import sys

REGION = 16 << 20
PAGES = REGION // 4096
FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL", msg)
    return cond


def main():
    exe = sys.argv[1]
    for chunk, write in ((4096, False), (512 << 10, False), (2 << 20, False), (512 << 10, True)):
        args = [exe, "--region", str(REGION), "--chunk", str(chunk)] + (["--write"] if write else [])
        p = subprocess.run(args, capture_output=True, text=True, timeout=300)
        what = "chunk %d%s" % (chunk, " write" if write else "")
        if not check(p.returncode == 0, "%s: exit %d: %s" % (what, p.returncode, p.stderr)):
            continue
        r = json.loads(p.stdout)
        print("%s: %s" % (what, p.stdout.strip()))
        check(r["pages"] == PAGES and r["chunk_bytes"] == chunk, "%s: pages %d, chunk %d" % (what, r["pages"],
                                                                                         r["chunk_bytes"]))
        check(r["uffd_requests"] == REGION // chunk and r["uffd_woken"] == 0 and r["uffd_bytes"] == REGION,
              "%s: %d requests (%d woken), %d bytes placed; want %d, 0, %d"
              % (what, r["uffd_requests"], r["uffd_woken"], r["uffd_bytes"], REGION // chunk, REGION))
        check(r["mismatches"] == 0, "%s: %d pages mismatched" % (what, r["mismatches"]))
        k = r["kvm"]
        check(k["pf_taken"] is not None and k["pf_taken"] >= PAGES and k["pf_fixed"] >= PAGES,
              "%s: pf_taken %s, pf_fixed %s: a stock KVM faults each of the %d pages" % (what, k["pf_taken"],
                                                                                     k["pf_fixed"], PAGES))
        check(k["pf_prefetched"] is None, "%s: pf_prefetched %s on a stock kernel" % (what, k["pf_prefetched"]))
    p = subprocess.run([exe, "--chunk", "3000"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "--chunk 3000" in p.stderr, "bad --chunk: exit %d, %r" % (p.returncode, p.stderr))
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
