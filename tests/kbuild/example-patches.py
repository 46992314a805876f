#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The examples' kernel patches apply to the tree their reproduce scripts
build, Debian's linux-source-6.12 as scripts/fetch-kernel-source unpacked
it (seed 001's revert: linux-source-7.2, --version 7.2; install-deps
fetches both; a missing tree fails the test with that fix), without a
kernel build:

- every examples/seed-*/*.patch applies on its own with the options
  `snapbench kernel build` applies patches with (patch -p1 --forward
  --fuzz=0, kbuild/build.c), as a dry run: the tree is not touched;
- seed 000's two variants differ where their READMEs say: both flag the
  uffd-wp resolve (bit 1); 0001 returns from range_start() before the
  invalidation begins, the series-faithful one begins and ends it with a
  handler that adds the range and unmaps nothing;
- seed 002's patch flags NUMA balancing's invalidations (bit 2, set for
  MM_CP_PROT_NUMA in mm/mprotect.c) and has the TDP MMU keep the SPTEs of
  maybe-DMA-pinned pages for them;
- seed 003's patch adds what its README and docs/kernel-build.md name:
  the writable module parameter tdp_mmu_prefetch_pages (default 8) in
  kvm's tdp_mmu.c, called after a fixed 4 KiB fault, and the vCPU stat
  pf_prefetched in struct kvm_vcpu_stat and in KVM's stats descriptors.

Usage: example-patches.py SOURCE_ROOT
"""
import glob
import os
import re
import subprocess
import sys

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL", msg)
    return cond


def added(patch_text, path):
    """The lines the patch adds to path, joined."""
    out, cur = [], None
    for line in patch_text.splitlines():
        if line.startswith("+++ "):
            cur = line[4:].split("\t")[0]
        elif line.startswith("+") and cur == "b/" + path:
            out.append(line[1:])
    return "\n".join(out)


def check_seed_000(top):
    texts = {}
    for name in ("0001-mm-kvm-no-zap-on-uffd-wp-resolve.patch", "0001-mm-kvm-no-zap-on-uffd-wp-resolve-series.patch"):
        with open(os.path.join(top, "examples", "seed-000", name), encoding="utf-8") as f:
            texts[name] = f.read()
    for name, text in texts.items():
        check("#define MMU_NOTIFIER_RANGE_PERM_UPGRADE (1 << 1)" in added(text, "include/linux/mmu_notifier_upgrade.h"),
              "seed 000 %s: MMU_NOTIFIER_RANGE_PERM_UPGRADE is not bit 1" % name)
    kvm = added(texts["0001-mm-kvm-no-zap-on-uffd-wp-resolve.patch"], "virt/kvm/kvm_main.c")
    check(re.search(r"if \(kvm_mmu_notifier_range_is_upgrade\(range\)\)\n\s+return 0;", kvm),
          "seed 000: 0001 does not return before the invalidation begins")
    kvm = added(texts["0001-mm-kvm-no-zap-on-uffd-wp-resolve-series.patch"], "virt/kvm/kvm_main.c")
    check(re.search(r"kvm_mmu_add_upgrade_range : kvm_mmu_unmap_gfn_range", kvm)
          and "kvm_mmu_invalidate_range_add(kvm, range->start, range->end);" in kvm
          and "return 0;" not in kvm,
          "seed 000: the series variant does not begin the invalidation with a handler that only adds the range")


def check_seed_002(top):
    patch = os.path.join(top, "examples", "seed-002", "0001-mm-kvm-numa-keep-pinned-mapped.patch")
    with open(patch, encoding="utf-8") as f:
        text = f.read()
    check("#define MMU_NOTIFIER_RANGE_NUMA (1 << 2)" in added(text, "include/linux/mmu_notifier_numa.h"),
          "seed 002: MMU_NOTIFIER_RANGE_NUMA is not bit 2 (the README names flag.bit2)")
    check(re.search(r"cp_flags & MM_CP_PROT_NUMA \?\s+MMU_NOTIFIER_RANGE_NUMA", added(text, "mm/mprotect.c")),
          "seed 002: the flag is not set for MM_CP_PROT_NUMA in change_pud_range()")
    check("keep_pinned && tdp_mmu_spte_maybe_dma_pinned(iter.old_spte)" in added(text, "arch/x86/kvm/mmu/tdp_mmu.c"),
          "seed 002: the TDP MMU does not keep maybe-DMA-pinned SPTEs")


def check_seed_003(top):
    patch = os.path.join(top, "examples", "seed-003", "0001-kvm-tdp-mmu-prefetch-present-neighbours.patch")
    with open(patch, encoding="utf-8") as f:
        text = f.read()
    tdp = added(text, "arch/x86/kvm/mmu/tdp_mmu.c")
    check(re.search(r"static unsigned int __read_mostly tdp_mmu_prefetch_pages = 8;", tdp),
          "seed 003: tdp_mmu_prefetch_pages with default 8 is not in the patch")
    check("module_param(tdp_mmu_prefetch_pages, uint, 0644);" in tdp,
          "seed 003: the module parameter is not writable at run time (0644)")
    check(re.search(r"ret == RET_PF_FIXED && fault->goal_level == PG_LEVEL_4K\)\n\s+tdp_mmu_prefetch\(vcpu, fault\);",
                    tdp), "seed 003: the prefetch does not follow a fixed 4 KiB fault")
    check("gfn_to_page_many_atomic(" in tdp and "mmu_invalidate_in_progress" in tdp,
          "seed 003: no GUP-fast lookup or no invalidation check")
    check("u64 pf_prefetched;" in added(text, "arch/x86/include/asm/kvm_host.h"),
          "seed 003: pf_prefetched is not added to struct kvm_vcpu_stat")
    check("STATS_DESC_COUNTER(VCPU, pf_prefetched)," in added(text, "arch/x86/kvm/x86.c"),
          "seed 003: pf_prefetched is not in kvm_vcpu_stats_desc")
    for doc in (os.path.join(top, "examples", "seed-003", "README"), os.path.join(top, "docs", "kernel-build.md")):
        with open(doc, encoding="utf-8") as f:
            said = f.read()
        check("kvm.tdp_mmu_prefetch_pages" in said and "pf_prefetched" in said,
              "%s does not name kvm.tdp_mmu_prefetch_pages and pf_prefetched" % os.path.relpath(doc, top))


def main():
    top = os.path.abspath(sys.argv[1])
    trees = {}
    for version in ("6.12", "7.2"):
        p = subprocess.run([os.path.join(top, "scripts", "fetch-kernel-source"), "--version", version],
                           capture_output=True, text=True)
        trees[version] = p.stdout.strip()
        if p.returncode != 0 or not os.path.isfile(os.path.join(trees[version], "Makefile")):
            print("FAIL no %s kernel tree: %s; run scripts/install-deps (or scripts/fetch-kernel-source --version %s) "
                  "as root" % (version, p.stderr.strip(), version))
            return 1
    patches = sorted(glob.glob(os.path.join(top, "examples", "seed-*", "*.patch")))
    check(len(patches) >= 5, "found %d example patches, expected seed 000's two, 001's, 002's and 003's" % len(patches))
    for patch in patches:
        # seed 001's change is merged in 7.2: its example is a revert against that tree
        tree = trees["7.2" if os.path.basename(os.path.dirname(patch)) == "seed-001" else "6.12"]
        p = subprocess.run(["patch", "-p1", "--forward", "--fuzz=0", "--batch", "--dry-run", "-d", tree, "-i", patch],
                           capture_output=True, text=True, timeout=60)
        if check(p.returncode == 0, "%s does not apply to %s:\n%s%s" % (os.path.relpath(patch, top), tree, p.stdout,
                                                                         p.stderr)):
            print("ok %s applies to %s" % (os.path.relpath(patch, top), tree))
    check_seed_000(top)
    check_seed_002(top)
    check_seed_003(top)
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
