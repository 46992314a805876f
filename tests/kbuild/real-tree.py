#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""snapbench kernel on a real kernel tree, without a kernel build: Debian's
linux-source-6.12 as scripts/fetch-kernel-source unpacked it (install-deps
does; a missing tree fails the test with that fix), through a sparse copy
of it: every Kconfig, Makefile and Kbuild file, scripts/, the configs
directories and the files the patches below touch (about 1% of the tree's
1.6 GB), all the config steps read.

- config with the default base, minimal: every option of the base and of
  the fragment as asked, and far fewer options on than with defconfig;
- config --arch riscv64 (with Debian's cross compiler, which install-deps
  installs): riscv's base and fragment as asked, an RV64 kernel;
- Debian's linux-source-7.2 (fetch-kernel-source --version 7.2), sparse
  too: config for x86_64 and riscv64, every option of the base and the
  fragment as asked (7.2 moved NUMA_BALANCING behind NUMA_MIGRATION and
  riscv's DYNAMIC_FTRACE behind compressed instructions off with gcc 12);
- build --selftests with a name 6.12 does not have and one it has for
  x86_64 but not riscv64 (dirty_log_perf_test), asked of the tree's own
  selftests Makefile: exit 2 naming both, before any copy;
- config --config-base defconfig with a patch that adds CONFIG_BTRFS_FS=y to
  the tree's defconfig, after examples/seed-000's patch (which must apply to
  this tree as it is: the example builds it): the .config has the patch's
  option and every option of the fragment as asked, and the tree is
  untouched (the patched files' content, no .config);
- a patch whose context is not in the tree: exit 2, the patch named, patch's
  "FAILED" line, the tree untouched;
- a patch that removes CONFIG_PVH from arch/x86/Kconfig: exit 2, the option
  named as one the tree does not have;
- build with a patch that makes arch/x86/Makefile refuse bzImage: the config
  steps pass, make fails at once, exit 1 naming the step and the build log,
  which holds make's message;
- a directory that is not a kernel tree: exit 2.

Each copies the sparse tree into a private cache under /var/tmp, which is
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


IF_KNOWN = set()  # options checked only where the tree has them


def fragment(snapbench, *args):
    text = subprocess.run([snapbench, "kernel", "fragment"] + list(args), capture_output=True, text=True,
                          check=True).stdout
    IF_KNOWN.update(re.findall(r"\(checked only where the tree has it\)\nCONFIG_(\w+)=", text))
    return dict(m.groups() for m in re.finditer(r"^(?:# checked: )?CONFIG_(\w+)=(\w)", text, re.M))


def as_asked(have, want, name):
    return have == want or (want == "m" and have == "y") or (have is None and name in IF_KNOWN)


SPARSE_PREFIXES = ("Kconfig", "Makefile", "Kbuild")
SPARSE_DIRS = ("scripts/", "arch/x86/configs/", "kernel/configs/")
# what make reads to list the KVM selftests, and one selftest's source
SELFTESTS = {"tools/testing/selftests/lib.mk", "tools/build/Build.include", "tools/scripts/Makefile.include",
             "tools/scripts/Makefile.arch", "tools/testing/selftests/kvm/dirty_log_perf_test.c"}


def sparse_copy(tree, dst, extra):
    """What the config steps read of tree, into dst: the Kconfig, Makefile and
    Kbuild files, scripts/, the configs, the top level's files, and extra."""
    n = 0
    for root, dirs, files in os.walk(tree):
        rel = os.path.relpath(root, tree)
        rel = "" if rel == "." else rel + "/"
        dirs[:] = [d for d in dirs if rel + d != ".git"]
        for f in files:
            path = rel + f
            if not (f.startswith(SPARSE_PREFIXES) or path.startswith(SPARSE_DIRS) or not rel or path in extra):
                continue
            os.makedirs(os.path.join(dst, rel), exist_ok=True)
            shutil.copy2(os.path.join(tree, path), os.path.join(dst, path), follow_symlinks=False)
            n += 1
    return n


def patch_files(patch):
    with open(patch, encoding="utf-8") as f:
        return {m[1] for m in re.finditer(r"^\+\+\+ b/(\S+)", f.read(), re.M)}


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
    full = p.stdout.strip()
    if p.returncode != 0 or not os.path.isfile(os.path.join(full, "Makefile")):
        print("FAIL no kernel tree: %s; run scripts/install-deps (or scripts/fetch-kernel-source) as root"
              % p.stderr.strip())
        return 1
    work = tempfile.mkdtemp(prefix="snapbench-kbuild-", dir="/var/tmp")
    cache = os.path.join(work, "cache")
    tree = os.path.join(work, "linux")
    seed = os.path.join(top, "examples", "seed-000", "0001-mm-kvm-no-zap-on-uffd-wp-resolve.patch")
    minimal_on = 0
    try:
        print("sparse copy of %s: %d files" % (full, sparse_copy(full, tree, patch_files(seed) | {"mm/mprotect.c"} | SELFTESTS)))

        # KVM selftests the tree does not offer for the arch: named before any work
        p = run(snapbench, ["build", "--tree", tree, "--arch", "riscv64", "--selftests",
                            "nope_test,dirty_log_perf_test"], cache)
        check(p.returncode == 2 and "offers no KVM selftest nope_test (no such program), dirty_log_perf_test (the "
              "tree has its source, but not for this architecture) for riscv64" in p.stderr,
              "selftests riscv64 does not have: exit %d" % p.returncode)
        check(not [d for d in os.listdir(cache) if os.path.isdir(os.path.join(cache, d, "tree"))],
              "a refused selftest left a scratch tree")

        # the minimal base: allnoconfig with the base's and the fragment's options
        out = os.path.join(work, "minimal.config")
        p = run(snapbench, ["config", "--tree", tree, "--output", out], cache)
        if check(p.returncode == 0, "config with the minimal base: exit %d" % p.returncode):
            with open(out, encoding="utf-8") as f:
                vals = config_values(f.read())
            want = fragment(snapbench)
            want.update(fragment(snapbench, "--config-base", "minimal"))
            for name, w in want.items():
                have = vals.get(name)
                check(as_asked(have, w, name),
                      "minimal: CONFIG_%s is %s in the config, the base or fragment asks for %s" % (name, have, w))
            minimal_on = sum(1 for v in vals.values() if v in ("y", "m"))

        # riscv64: the cross compiler's configure step
        out = os.path.join(work, "riscv64.config")
        p = run(snapbench, ["config", "--arch", "riscv64", "--tree", tree, "--output", out], cache)
        if check(p.returncode == 0, "config --arch riscv64: exit %d" % p.returncode):
            with open(out, encoding="utf-8") as f:
                vals = config_values(f.read())
            want = fragment(snapbench, "--arch", "riscv64")
            want.update(fragment(snapbench, "--arch", "riscv64", "--config-base", "minimal"))
            check("VIRTIO_MMIO" in want and "KVM_AMD" not in want, "riscv64's fragment: %s" % sorted(want))
            for name, w in want.items():
                have = vals.get(name)
                check(as_asked(have, w, name),
                      "riscv64: CONFIG_%s is %s in the config, the base or fragment asks for %s" % (name, have, w))
            check(vals.get("ARCH_RV64I") == "y" and vals.get("64BIT") == "y" and "X86" not in vals,
                  "riscv64: not an RV64 kernel's config")

        defconfig = "arch/x86/configs/x86_64_defconfig"
        guarded = [defconfig, "mm/mprotect.c", "arch/x86/Kconfig", "arch/x86/Makefile"]
        before = {f: sha(os.path.join(tree, f)) for f in guarded}

        # a patch applied to the copy and seen in the config
        with open(os.path.join(tree, defconfig), encoding="utf-8") as f:
            write_patch(os.path.join(work, "btrfs.patch"), tree, defconfig, f.read() + "CONFIG_BTRFS_FS=y\n")
        out = os.path.join(work, "out.config")
        p = run(snapbench, ["config", "--tree", tree, "--config-base", "defconfig", "--patch", seed, "--patch",
                            os.path.join(work, "btrfs.patch"), "--output", out], cache)
        if check(p.returncode == 0, "config with a patch: exit %d" % p.returncode):
            with open(out, encoding="utf-8") as f:
                vals = config_values(f.read())
            check(vals.get("BTRFS_FS") == "y", "the patched defconfig's CONFIG_BTRFS_FS=y is not in the config")
            defconfig_on = sum(1 for v in vals.values() if v in ("y", "m"))
            print("options on: minimal %d, defconfig %d" % (minimal_on, defconfig_on))
            check(minimal_on * 2 < defconfig_on, "the minimal base is not minimal: %d options on, defconfig %d"
                  % (minimal_on, defconfig_on))
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

        # 7.2: the minimal base on both architectures
        p = subprocess.run([os.path.join(top, "scripts", "fetch-kernel-source"), "--version", "7.2"],
                           capture_output=True, text=True)
        full72 = p.stdout.strip()
        if check(p.returncode == 0 and os.path.isfile(os.path.join(full72, "Makefile")),
                 "no 7.2 tree: %s; run scripts/install-deps as root" % p.stderr.strip()):
            tree72 = os.path.join(work, "linux-7.2")
            print("sparse copy of %s: %d files" % (full72, sparse_copy(full72, tree72, set())))
            for arch in ("x86_64", "riscv64"):
                out = os.path.join(work, "7.2-%s.config" % arch)
                p = run(snapbench, ["config", "--arch", arch, "--tree", tree72, "--output", out], cache)
                if check(p.returncode == 0, "7.2 config --arch %s: exit %d" % (arch, p.returncode)):
                    with open(out, encoding="utf-8") as f:
                        vals = config_values(f.read())
                    want = fragment(snapbench, "--arch", arch)
                    want.update(fragment(snapbench, "--arch", arch, "--config-base", "minimal"))
                    for name, w in want.items():
                        have = vals.get(name)
                        check(as_asked(have, w, name),
                              "7.2 %s: CONFIG_%s is %s, the base or fragment asks for %s" % (arch, name, have, w))

        after = {f: sha(os.path.join(tree, f)) for f in guarded}
        check(before == after, "the tree changed: %s" % [f for f in guarded if before[f] != after[f]])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
