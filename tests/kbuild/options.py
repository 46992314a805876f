#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""snapbench kernel's options that fail before any work, each named with its
fix and exit 2, and what 'kernel fragment --config-base minimal' prints.

Usage: options.py SNAPBENCH
"""
import os
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL", msg)
    return cond


def kernel(snapbench, args):
    p = subprocess.run([snapbench, "kernel"] + args, capture_output=True, text=True, timeout=60)
    print("$ snapbench kernel %s -> %d %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p


def main():
    snapbench = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="snapbench-kopts-") as work:
        cache = os.path.join(work, "cache")
        p = kernel(snapbench, ["build", "--tree", work, "--config-base", "tiny", "--cache", cache])
        check(p.returncode == 2 and "--config-base 'tiny'" in p.stderr and "minimal" in p.stderr
              and "defconfig" in p.stderr, "an unknown base: exit %d" % p.returncode)
        cfg = os.path.join(work, "my.config")
        p = kernel(snapbench, ["config", "--tree", work, "--config-base", "defconfig", "--config", cfg,
                               "--cache", cache])
        check(p.returncode == 2 and "give one" in p.stderr, "a base and a config: exit %d" % p.returncode)
        p = kernel(snapbench, ["build", "--tree", work, "--arch", "arm64", "--cache", cache])
        check(p.returncode == 2 and "--arch 'arm64'" in p.stderr and "riscv64" in p.stderr,
              "an unknown arch: exit %d" % p.returncode)
        p = kernel(snapbench, ["build", "--tree", work, "--selftests", "dirty_log_perf_test,../x", "--cache", cache])
        check(p.returncode == 2 and "'../x' is not a KVM selftest's name" in p.stderr,
              "a bad selftest name: exit %d" % p.returncode)
        p = kernel(snapbench, ["config", "--tree", work, "--selftests", "dirty_log_perf_test", "--cache", cache])
        check(p.returncode == 2 and "--selftests is for kernel build" in p.stderr,
              "config --selftests: exit %d" % p.returncode)
        check(not os.path.exists(cache), "a usage error made the cache")

        # riscv64 without its cross compiler on PATH: the package named, exit 4 (a program missing)
        tree = os.path.join(work, "linux")
        for rel, text in (("Makefile", "VERSION = 6\nPATCHLEVEL = 12\n"), ("Kconfig", ""), ("arch/x86/Kconfig", ""),
                          ("arch/riscv/Kconfig", "")):
            os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
            with open(os.path.join(tree, rel), "w", encoding="utf-8") as f:
                f.write(text)
        p = subprocess.run([snapbench, "kernel", "build", "--arch", "riscv64", "--tree", tree, "--cache", cache],
                           capture_output=True, text=True, timeout=60, env=dict(os.environ, PATH=work))
        print("$ PATH=%s snapbench kernel build --arch riscv64 -> %d %s" % (work, p.returncode, p.stderr.strip()))
        check(p.returncode == 4 and "riscv64-linux-gnu-gcc" in p.stderr and "gcc-riscv64-linux-gnu" in p.stderr,
              "riscv64 without a cross compiler: exit %d" % p.returncode)

    p = kernel(snapbench, ["fragment", "--config-base", "minimal"])
    check(p.returncode == 0 and "CONFIG_SMP=y" in p.stdout and "allnoconfig" in p.stdout
          and "CONFIG_KVM=m" not in p.stdout, "fragment --config-base minimal: %r" % p.stdout[:200])
    p = kernel(snapbench, ["fragment", "--arch", "riscv64"])
    check(p.returncode == 0 and "CONFIG_VIRTIO_MMIO=y" in p.stdout and "CONFIG_KVM_AMD" not in p.stdout,
          "fragment --arch riscv64: %r" % p.stdout[:200])
    p = kernel(snapbench, ["fragment", "--config-base", "defconfig"])
    check(p.returncode == 0 and "CONFIG_KVM=m" in p.stdout, "fragment --config-base defconfig: the fragment")
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
