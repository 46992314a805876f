#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""snapbench kernel with bad input, on a tiny tree whose Makefile has the
kernel's targets (no kernel build): each refusal comes before any work
(the cache holds no entry afterwards), exit 2, naming the input; no
command waits on a FIFO (each runs with a 20 s timeout: a hang fails).

- --patch and --config a FIFO, /dev/zero, a directory; an empty patch and
  one that names no file; a tree whose Makefile is a FIFO, one whose
  PATCHLEVEL is empty;
- --label with '/', a newline, an escape, $(...), over 64 characters: refused
  without being echoed;
- --output /proc/out, a non-empty directory, a file (build), /proc/out
  (config): refused before the build;
- a build that works: a relative --output and --cache printed absolute, the
  arm line's label the tree's name; KCFLAGS in the environment: another key,
  printed as an env line (--json: its environment), a cache hit again.

Usage: cli-inputs.py SNAPBENCH
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

FAILS = []

MAKEFILE = """VERSION = 6
PATCHLEVEL = 99
SUBLEVEL = 0
EXTRAVERSION = -fake
RELEASE := 6.99.0-fake
defconfig:
\tprintf 'CONFIG_LOCALVERSION=""\\n' > .config
allnoconfig:
\tcat $(KCONFIG_ALLCONFIG) > .config
olddefconfig:
\tprintf 'CONFIG_TRACEPOINTS=y\\nCONFIG_MEMFD_CREATE=y\\n' >> .config
\tprintf '%s' >> .config
bzImage:
\tmkdir -p arch/x86/boot
\techo 'KCFLAGS=$(KCFLAGS)' > vmlinux
\tcp vmlinux arch/x86/boot/bzImage
\tcp vmlinux System.map
modules:
\ttouch m.ko
kernelrelease:
\t@echo $(RELEASE)
modules_install:
\tmkdir -p $(INSTALL_MOD_PATH)/lib/modules/$(RELEASE)/kernel
\tcp m.ko $(INSTALL_MOD_PATH)/lib/modules/$(RELEASE)/kernel/
.PHONY: defconfig allnoconfig olddefconfig bzImage modules kernelrelease modules_install
"""


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL", msg)
    return cond


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def selected(snapbench):
    """The minimal base's options olddefconfig selects (its checked ones), as printf's argument."""
    text = subprocess.run([snapbench, "kernel", "fragment", "--config-base", "minimal"], capture_output=True,
                          text=True, check=True, timeout=60).stdout
    return "".join("CONFIG_%s=y\\n" % m for m in re.findall(r"^# checked: CONFIG_(\w+)=y", text, re.M))


def tree(top, name, makefile=MAKEFILE):
    t = os.path.join(top, name)
    if makefile is not None:
        write(os.path.join(t, "Makefile"), makefile)
    write(os.path.join(t, "Kconfig"), "mainmenu \"fake\"\n")
    write(os.path.join(t, "arch/x86/Kconfig"), "config X86\n\tdef_bool y\n")
    write(os.path.join(t, "src/a.c"), "int a;\n")
    return t


def kernel(snapbench, args, cwd=None, env=None):
    try:
        p = subprocess.run([snapbench, "kernel"] + args + ["--quiet"], capture_output=True, text=True, timeout=20,
                           cwd=cwd, env=env)
    except subprocess.TimeoutExpired:
        check(False, "kernel %r: still running after 20 s" % args)
        return None
    print("$ snapbench kernel %r -> %d: %s" % (args, p.returncode, p.stderr.strip()[:400]))
    return p


def refused(snapbench, args, cache, *want):
    """args exits 2 with every string of want in its message, and leaves no cache entry."""
    p = kernel(snapbench, args + ["--cache", cache])
    if p is None:
        return
    check(p.returncode == 2 and all(w in p.stderr for w in want),
          "kernel %r: exit %d, %r; want exit 2 and %r" % (args, p.returncode, p.stderr, want))
    left = os.listdir(cache) if os.path.isdir(cache) else []
    check(not left, "kernel %r left %s in the cache" % (args, left))


def main():
    snapbench = os.path.abspath(sys.argv[1])  # the build runs from another directory
    work = tempfile.mkdtemp(prefix="snapbench-kbuild-inputs-")
    try:
        cache = os.path.join(work, "cache")
        t = tree(work, "linux", makefile=MAKEFILE.replace("%s", selected(snapbench)))
        fifo = os.path.join(work, "fifo")
        os.mkfifo(fifo)
        empty = os.path.join(work, "empty.patch")
        write(empty, "")
        prose = os.path.join(work, "prose.patch")
        write(prose, "Subject: a commit message and no diff\n")
        good = os.path.join(work, "good.patch")
        write(good, "--- a/src/a.c\n+++ b/src/a.c\n@@ -1 +1 @@\n-int a;\n+int a = 2;\n")

        # inputs that are not files, or not patches
        for sub in ("build", "config"):
            refused(snapbench, [sub, "--tree", t, "--patch", fifo], cache, fifo, "is a FIFO, not a regular file")
            refused(snapbench, [sub, "--tree", t, "--config", fifo], cache, "--config " + fifo, "is a FIFO")
        refused(snapbench, ["build", "--tree", t, "--patch", "/dev/zero"], cache, "/dev/zero: is a character device")
        refused(snapbench, ["build", "--tree", t, "--patch", work], cache, work + ": is a directory")
        refused(snapbench, ["build", "--tree", t, "--patch", empty], cache, empty + ": empty", "identical to the base")
        refused(snapbench, ["build", "--tree", t, "--patch", prose], cache, prose + ": names no file to change")
        refused(snapbench, ["build", "--tree", t, "--patch", os.path.join(work, "none.patch")], cache,
                "none.patch: cannot open: No such file or directory")
        t_fifo = tree(work, "fifo-makefile", makefile=None)
        os.mkfifo(os.path.join(t_fifo, "Makefile"))
        refused(snapbench, ["build", "--tree", t_fifo], cache, t_fifo, "is a FIFO, not a regular file")
        t_empty = tree(work, "empty-patchlevel", makefile="VERSION = 6\nPATCHLEVEL =\n")
        refused(snapbench, ["build", "--tree", t_empty], cache, t_empty, "numeric VERSION and PATCHLEVEL")

        # labels that are not arm labels: refused, never echoed
        for label in ("a/b", "a\nb", "a\x1b[2Jb", "$(id)", "x" * 65, "-x"):
            p = kernel(snapbench, ["build", "--tree", t, "--label", label, "--cache", cache])
            if p:
                check(p.returncode == 2 and "not an arm label" in p.stderr and "\x1b" not in p.stderr and
                      p.stderr.count("\n") == 1, "--label %r: exit %d, %r" % (label, p.returncode, p.stderr))
        check(not os.path.isdir(cache) or not os.listdir(cache), "a refused label left a cache entry")

        # --output that cannot be used: refused before the build
        full = os.path.join(work, "full")
        write(os.path.join(full, "x"), "x")
        refused(snapbench, ["build", "--tree", t, "--output", "/proc/out"], cache, "--output /proc/out: cannot be made")
        refused(snapbench, ["build", "--tree", t, "--output", full], cache, "exists and is not an empty directory")
        refused(snapbench, ["build", "--tree", t, "--output", good], cache, "exists and is not a directory")
        refused(snapbench, ["config", "--tree", t, "--output", "/proc/out"], cache, "--output /proc/out: cannot write")
        check(not os.path.exists("/proc/out"), "/proc/out exists")

        # a build that works, from a relative --cache into a relative --output: absolute paths printed
        p = kernel(snapbench, ["build", "--tree", "linux", "--patch", "good.patch", "--cache", "cache", "--output",
                               "out"], cwd=work)
        if p and check(p.returncode == 0, "the build: exit %d, %r" % (p.returncode, p.stderr)):
            arm = p.stdout.strip().splitlines()[-1]
            want = "--arm linux-patched:kernel=%s/out/boot/vmlinuz-6.99.0-fake,modules=%s/out/lib/modules/6.99.0-fake,arch=x86_64" % (
                os.path.realpath(work), os.path.realpath(work))
            check(arm == want, "the arm line: %r, want %r" % (arm, want))
            check(re.search(r"^  log      %s/cache/\w+/build.log$" % re.escape(os.path.realpath(work)), p.stdout, re.M),
                  "the log's path is not absolute: %r" % p.stdout)
            key = re.search(r"^  key      (\w+)", p.stdout, re.M)[1]
            env = dict(os.environ, KCFLAGS="-O0")
            q = kernel(snapbench, ["build", "--tree", "linux", "--patch", "good.patch", "--cache", "cache"], cwd=work,
                       env=env)
            if q and check(q.returncode == 0, "the KCFLAGS build: exit %d" % q.returncode):
                key2 = re.search(r"^  key      (\w+)", q.stdout, re.M)[1]
                check(key2 != key and "\n  env      KCFLAGS=-O0\n" in q.stdout,
                      "KCFLAGS: key %s (plain %s), %r" % (key2, key, q.stdout))
                j = kernel(snapbench, ["build", "--tree", "linux", "--patch", "good.patch", "--cache", "cache",
                                       "--json"], cwd=work, env=env)
                o = json.loads(j.stdout) if j and j.returncode == 0 else {}
                check(o.get("cached") and o.get("key") == key2 and o.get("environment") == {"KCFLAGS": "-O0"},
                      "the KCFLAGS build again, --json: %r" % o)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
