#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No loop in the call graph between the files of a library or a program.

For each static library or program given, which of its object files calls
into which (an undefined symbol of one that another defines, nm -A), and
whether any file reaches itself again through the others:
docs/architecture.md's rule that the run engine's .c files call one way
(runner.c -> preflight.c -> vm-libvirt*.c -> guest-linux.c, and none of
them back), and snapbenchd's units likewise (daemon/daemon.h). A program's
object files are the ones meson keeps beside it, in PROGRAM.p/.

Usage: check-call-loops.py NM LIBRARY.a|PROGRAM...
       check-call-loops.py --self-test   (a loop in made-up nm output is found)
"""
import collections
import glob
import os
import subprocess
import sys


def objects(target):
    """The files nm reads for target: a static library itself, a program's objects."""
    if target.endswith(".a"):
        return [target]
    found = sorted(glob.glob(os.path.join(target + ".p", "*.o")))
    if not found:
        sys.exit(f"{target}: no object files in {target}.p/; build it with meson first")
    return found


def graph(nm, target):
    out = subprocess.run([nm, "-A"] + objects(target), capture_output=True, text=True, check=True).stdout
    return graph_of(out)


def graph_of(out):
    defined, undefined = {}, collections.defaultdict(set)
    for line in out.splitlines():
        # "lib.a:member.o:0000000000000000 T name", "lib.a:member.o:                 U name",
        # or a program's "dir/prog.p/member.o:0000000000000000 T name"
        head, _, rest = line.rpartition(":")
        member = head.split(":")[-1].split("/")[-1].replace(".c.o", ".c")
        parts = rest.split()
        if len(parts) == 3 and parts[1] in "TDRB":
            defined[parts[2]] = member
        elif len(parts) == 2 and parts[0] == "U":
            undefined[member].add(parts[1])
    g = collections.defaultdict(set)
    for member, syms in undefined.items():
        for s in syms:
            if s in defined and defined[s] != member:
                g[member].add(defined[s])
    return g


def loops(g):
    found, color, stack = [], {}, []

    def visit(v):
        color[v] = 1
        stack.append(v)
        for w in sorted(g.get(v, ())):
            if color.get(w) == 1:
                found.append(stack[stack.index(w):] + [w])
            elif not color.get(w):
                visit(w)
        stack.pop()
        color[v] = 2

    for v in sorted(g):
        if not color.get(v):
            visit(v)
    return found


SELF_TEST_NM = """\
lib.a:a.c.o:0000000000000000 T a_run
lib.a:a.c.o:                 U b_step
lib.a:b.c.o:0000000000000000 T b_step
lib.a:b.c.o:                 U c_find
lib.a:c.c.o:0000000000000000 T c_find
lib.a:c.c.o:                 U free
"""


def self_test():
    ok = not loops(graph_of(SELF_TEST_NM))
    looped = SELF_TEST_NM + "lib.a:c.c.o:                 U a_run\n"
    found = loops(graph_of(looped))
    ok = ok and found == [["a.c", "b.c", "c.c", "a.c"]]
    # a program's objects, as nm -A names them from PROGRAM.p/
    program = "\n".join(line.replace("lib.a:", "daemon/prog.p/") for line in looped.splitlines())
    found_program = loops(graph_of(program))
    ok = ok and found_program == [["a.c", "b.c", "c.c", "a.c"]]
    print("self-test: a one-way graph passes, a -> b -> c -> a is found in a library and a program: " +
          ("yes" if ok else f"NO ({found}, {found_program})"))
    return 0 if ok else 1


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    bad = 0
    for archive in argv[2:]:
        for loop in loops(graph(argv[1], archive)):
            print(f"{archive}: the files call in a loop: {' -> '.join(loop)}")
            bad += 1
    if bad:
        print("move what the file at the loop's end calls to where the arrows point one way")
        return 1
    print(f"no call loop between the files of {len(argv) - 2} libraries and programs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
