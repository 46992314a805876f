#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""snapbench kernel on a real kernel tree, without a kernel build: Debian's
linux-source-6.12 as scripts/fetch-kernel-source unpacked it (install-deps
does; a missing tree fails the test with that fix).

- config with a patch that adds CONFIG_BTRFS_FS=y to the tree's
  defconfig, after examples/seed-000's patch (which must apply to this
  tree as it is: the example builds it): the .config has the patch's option
  and every option of the fragment as asked, and the tree is untouched (the
  patched files' content, no .config);
- a patch whose context is not in the tree: exit 2, the patch named, patch's
  "FAILED" line, the tree untouched;
- a patch that removes CONFIG_PVH from arch/x86/Kconfig: exit 2, the option
  named as one the tree does not have;
- build with a patch that makes arch/x86/Makefile refuse bzImage: the config
  steps pass, make fails at once, exit 1 naming the step and the build log,
  which holds make's message;
- a directory that is not a kernel tree: exit 2.

Each copies the tree (1.6 GB) into a private cache under /var/tmp, which is
removed at the end.

Usage: real-tree.py SNAPBENCH SOURCE_ROOT
"""
import difflib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL", msg)
    return cond


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_patch(path, tree, rel, new_text):
    with open(os.path.join(tree, rel), encoding="utf-8") as f:
        old = f.read()
    diff = "".join(difflib.unified_diff(old.splitlines(keepends=True), new_text.splitlines(keepends=True),
                                        "a/" + rel, "b/" + rel))
    with open(path, "w", encoding="utf-8") as f:
        f.write(diff)


def run(snapbench, args, cache):
    p = subprocess.run([snapbench, "kernel"] + args + ["--cache", cache, "--quiet"], capture_output=True, text=True,
                       timeout=1100)
    print("$ snapbench kernel %s -> %d" % (" ".join(args), p.returncode))
    if p.stderr:
        print("  " + p.stderr.strip().replace("\n", "\n  "))
    return p


def fragment(snapbench):
    text = subprocess.run([snapbench, "kernel", "fragment"], capture_output=True, text=True, check=True).stdout
    return dict(m.groups() for m in re.finditer(r"^(?:# checked: )?CONFIG_(\w+)=(\w)", text, re.M))


def config_values(text):
    vals = {}
    for line in text.splitlines():
        m = re.fullmatch(r"CONFIG_(\w+)=(.*)", line) or re.fullmatch(r"# CONFIG_(\w+) is not set", line)
        if m:
            vals[m[1]] = m[2] if m.lastindex == 2 else "n"
    return vals


def main():
    snapbench, top = sys.argv[1:3]
    p = subprocess.run([os.path.join(top, "scripts", "fetch-kernel-source")], capture_output=True, text=True)
    tree = p.stdout.strip()
    if p.returncode != 0 or not os.path.isfile(os.path.join(tree, "Makefile")):
        print("FAIL no kernel tree: %s; run scripts/install-deps (or scripts/fetch-kernel-source) as root"
              % p.stderr.strip())
        return 1
    work = tempfile.mkdtemp(prefix="snapbench-kbuild-", dir="/var/tmp")
    cache = os.path.join(work, "cache")
    try:
        defconfig = "arch/x86/configs/x86_64_defconfig"
        guarded = [defconfig, "mm/mprotect.c", "arch/x86/Kconfig", "arch/x86/Makefile"]
        before = {f: sha(os.path.join(tree, f)) for f in guarded}

        # a patch applied to the copy and seen in the config
        with open(os.path.join(tree, defconfig), encoding="utf-8") as f:
            write_patch(os.path.join(work, "btrfs.patch"), tree, defconfig, f.read() + "CONFIG_BTRFS_FS=y\n")
        out = os.path.join(work, "out.config")
        seed = os.path.join(top, "examples", "seed-000", "0001-mm-kvm-no-zap-on-uffd-wp-resolve.patch")
        p = run(snapbench, ["config", "--tree", tree, "--patch", seed, "--patch", os.path.join(work, "btrfs.patch"),
                            "--output", out], cache)
        if check(p.returncode == 0, "config with a patch: exit %d" % p.returncode):
            with open(out, encoding="utf-8") as f:
                vals = config_values(f.read())
            check(vals.get("BTRFS_FS") == "y", "the patched defconfig's CONFIG_BTRFS_FS=y is not in the config")
            for name, want in fragment(snapbench).items():
                have = vals.get(name)
                check(have == want or (want == "m" and have == "y"),
                      "CONFIG_%s is %s in the config, the fragment asks for %s" % (name, have, want))
        check(not os.path.exists(os.path.join(tree, ".config")), "the tree got a .config")
        check(not [d for d in os.listdir(cache) if d.startswith("config-")],
              "config's scratch directory is left in the cache: %s" % os.listdir(cache))

        # a patch that does not apply: the line it changes is not the tree's (fuzz cannot help)
        with open(os.path.join(tree, "mm/mprotect.c"), encoding="utf-8") as f:
            text = f.read()
        other = text.replace("BUG_ON((cp_flags", "BUG_ON((flags", 1)
        check(other != text, "mm/mprotect.c has no BUG_ON((cp_flags line to alter")
        diff = "".join(difflib.unified_diff(other.splitlines(keepends=True),
                                            other.replace("BUG_ON((flags", "WARN_ON((flags", 1)
                                            .splitlines(keepends=True), "a/mm/mprotect.c", "b/mm/mprotect.c"))
        with open(os.path.join(work, "bad.patch"), "w", encoding="utf-8") as f:
            f.write(diff)
        p = run(snapbench, ["config", "--tree", tree, "--patch", os.path.join(work, "bad.patch")], cache)
        check(p.returncode == 2 and "bad.patch does not apply to kernel tree" in p.stderr and "FAILED" in p.stderr,
              "a patch that does not apply: exit %d, %r" % (p.returncode, p.stderr))

        # an option the tree dropped
        with open(os.path.join(tree, "arch/x86/Kconfig"), encoding="utf-8") as f:
            kconfig = f.read()
        dropped = re.sub(r"\nconfig PVH\n(\t.*\n|\n(?=\t))*", "\n", kconfig, count=1)
        check(dropped != kconfig, "arch/x86/Kconfig has no 'config PVH' to drop")
        write_patch(os.path.join(work, "drop-pvh.patch"), tree, "arch/x86/Kconfig", dropped)
        p = run(snapbench, ["config", "--tree", tree, "--patch", os.path.join(work, "drop-pvh.patch")], cache)
        check(p.returncode == 2 and "CONFIG_PVH: the tree has no such option (dropped or renamed)" in p.stderr,
              "a dropped option: exit %d, %r" % (p.returncode, p.stderr))

        # make failing at once: its step, its message and the log named
        with open(os.path.join(tree, "arch/x86/Makefile"), encoding="utf-8") as f:
            makefile = f.read()
        write_patch(os.path.join(work, "refuse.patch"), tree, "arch/x86/Makefile",
                    makefile + "\nifneq ($(filter bzImage,$(MAKECMDGOALS)),)\n"
                    "$(error this tree refuses to build bzImage)\nendif\n")
        p = run(snapbench, ["build", "--tree", tree, "--patch", os.path.join(work, "refuse.patch"), "--jobs", "2"],
                cache)
        m = re.search(r"the build log is (\S+);", p.stderr)
        check(p.returncode == 1 and "step 'make -j2 bzImage modules' failed: make exited with status 2" in p.stderr
              and "refuses to build bzImage" in p.stderr and m,
              "make failing: exit %d, %r" % (p.returncode, p.stderr))
        if m:
            with open(m[1], encoding="utf-8", errors="replace") as f:
                log = f.read()
            check("==> make olddefconfig" in log and "refuses to build bzImage" in log,
                  "the build log lacks the config steps or make's message")

        # not a kernel tree
        p = run(snapbench, ["build", "--tree", work], cache)
        check(p.returncode == 2 and "not a Linux source tree" in p.stderr, "not a tree: exit %d" % p.returncode)

        after = {f: sha(os.path.join(tree, f)) for f in guarded}
        check(before == after, "the tree changed: %s" % [f for f in guarded if before[f] != after[f]])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
