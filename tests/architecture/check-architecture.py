#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The architecture table is the build graph.

Reads the table "Folders and what each owns" in docs/architecture.md and
checks every arrow of the source tree against its "may use" column:

  - each #include of each C file (.c, .h) of a component: a quote include
    names a header of the tree, which belongs to the component of its
    folder (the longest folder of the table that holds it; generated
    headers are named below); an angle include of a library's headers
    (json-c, libbpf, libvirt, libsystemd, zlib) names that library, anything
    else is libc;
  - each entry of every "dependencies :" in each component's meson.build:
    a dependency declared with declare_dependency() belongs to the
    component whose meson.build declares it, one from dependency() or
    cc.find_library() is that library.

A component may use itself, libc (and threads), and what its row lists.
A unit test (a test-*.c beside its code, and a meson target built from
such files only) may also use the tests' shared library when the table
has a row for it (TEST_LIBRARY), and the library of a folder that holds
its own (a room's test, runner/vm/test-*.c, links runner/'s library, which
is built from every room).
A folder with C files or a meson.build that the table does not list is an
error too, as is a "may use" entry that names neither a folder of the
table nor a library: a new arrow has to be written down before it builds.

Usage: check-architecture.py SOURCE_ROOT
       check-architecture.py --graph SOURCE_ROOT  (what each component uses)
       check-architecture.py --self-test   (the check fails on bad input)
"""
import os
import re
import sys
import tempfile

# Libraries a "may use" cell may name, and the pkg-config/find_library
# names and header folders that are each of them.
LIBRARIES = {
    "json-c": {"deps": {"json-c"}, "headers": ("json-c/",)},
    "libbpf": {"deps": {"libbpf"}, "headers": ("bpf/",)},
    "libvirt": {"deps": {"libvirt", "libvirt-qemu"}, "headers": ("libvirt/",)},
    "libsystemd": {"deps": {"libsystemd"}, "headers": ("systemd/",)},
    "libm": {"deps": {"libm"}, "headers": ()},
    "zlib": {"deps": {"zlib"}, "headers": ("zlib.h",)},
}
ALWAYS = {"libc", "threads"}
# Headers meson generates: which component's they are.
GENERATED = {"config.h": "common", "vmlinux.h": "bpf"}
GENERATED_SUFFIXES = {".skel.h": "bpf"}
SOURCE_EXT = (".c", ".h", ".S")
# The test scaffolding several unit tests share, if the table lists it.
TEST_LIBRARY = "tests/lib"


def is_unit_test(relpath):
    name = os.path.basename(relpath)
    return name.startswith("test-") and name.endswith(".c")
SKIP_DIRS = {".git", "build", "subprojects"}


class Failures:
    def __init__(self):
        self.msgs = []
        self.used = {}  # component: the names it uses (--graph)

    def add(self, msg):
        self.msgs.append(msg)


def parse_table(path, fail):
    """{folder: set of allowed names} from the table's rows."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## Folders and what each owns\s*$", text, re.M)
    if not m:
        fail.add(f"{path}: no section '## Folders and what each owns'")
        return {}
    rows = {}
    header = None
    for line in text[m.end():].splitlines():
        line = line.strip()
        if line.startswith("## "):
            break
        if not line.startswith("|"):
            if rows or header:
                if not line:
                    continue
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            if "folder" not in header or "may use" not in header:
                fail.add(f"{path}: the table needs columns 'folder' and 'may use' (has {cells})")
                return {}
            continue
        if set(cells[0]) <= set("-: "):
            continue
        folder = cells[header.index("folder")].strip("`").strip()
        if not folder.endswith("/") and not folder.endswith(SOURCE_EXT):
            fail.add(f"{path}: folder {folder!r}: write it as `name/` (or a file: `name/file.c`)")
            continue
        cell = cells[header.index("may use")]
        names = set()
        if cell not in ("—", "-", ""):
            for tok in cell.split(","):
                tok = tok.strip().strip("`").strip().rstrip("/")
                if tok:
                    names.add(tok)
        rows[folder.rstrip("/")] = names
    if not rows:
        fail.add(f"{path}: the table has no rows")
    for folder, names in rows.items():
        for n in names:
            if n not in rows and n not in LIBRARIES and n not in ALWAYS:
                fail.add(f"{path}: row {folder}/ may use {n!r}, which is neither a folder of the table "
                         f"nor a library ({', '.join(sorted(LIBRARIES))})")
    cycle = find_cycle(rows)
    if cycle:
        fail.add(f"{path}: the table's arrows go round: {' -> '.join(label(c) for c in cycle)}; "
                 "move what both sides share to a folder below them both")
    return rows


def find_cycle(rows):
    """A list of folders that use each other in a ring (first == last), or None."""
    state = {}  # folder: 1 on the path, 2 done

    def visit(f, path):
        state[f] = 1
        path.append(f)
        for n in sorted(rows.get(f, ())):
            if n == f or n not in rows:
                continue
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state:
                c = visit(n, path)
                if c:
                    return c
        path.pop()
        state[f] = 2
        return None

    for f in sorted(rows):
        if f not in state:
            c = visit(f, [])
            if c:
                return c
    return None


def label(comp):
    return comp if comp.endswith(SOURCE_EXT) else comp + "/"


def component_of(relpath, folders):
    """The longest table folder that holds relpath, or None."""
    best = None
    for f in folders:
        if relpath == f or relpath.startswith(f + "/"):
            if best is None or len(f) > len(best):
                best = f
    return best


def walk(root):
    for d, dirs, files in os.walk(root):
        if "meson-private" in dirs or "build.ninja" in files:
            dirs[:] = []  # a build directory inside the source tree
            continue
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("."))
        for name in sorted(files):
            yield os.path.relpath(os.path.join(d, name), root)


def check(root, fail):
    rows = parse_table(os.path.join(root, "docs", "architecture.md"), fail)
    if not rows:
        return
    files = list(walk(root))
    headers = {}
    for p in files:
        if p.endswith(".h"):
            headers.setdefault(os.path.basename(p), []).append(p)

    def allowed(comp, target, unit_test=False):
        if target != comp and target not in ALWAYS:
            fail.used.setdefault(comp, set()).add(target)
        if unit_test and target == TEST_LIBRARY and TEST_LIBRARY in rows:
            return True
        if unit_test and comp.startswith(target + "/"):
            return True
        return target == comp or target in ALWAYS or target in rows[comp]

    # every folder with code or a meson.build is in the table
    for p in files:
        if not (p.endswith(SOURCE_EXT) or os.path.basename(p) == "meson.build"):
            continue
        if os.path.dirname(p) == "" and p == "meson.build":
            continue
        if component_of(p, rows) is None:
            fail.add(f"{p}: its folder is not in the table of docs/architecture.md")

    # includes
    inc_re = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
    for p in files:
        if not p.endswith(SOURCE_EXT):
            continue
        comp = component_of(p, rows)
        if comp is None:
            continue
        with open(os.path.join(root, p), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in inc_re.finditer(text):
            kind, name = m.group(1), m.group(2)
            line = text.count("\n", 0, m.start()) + 1
            if kind == "<":
                target = "libc"
                for lib, spec in LIBRARIES.items():
                    if name.startswith(spec["headers"]):
                        target = lib
            else:
                local = os.path.normpath(os.path.join(os.path.dirname(p), name))
                base = os.path.basename(name)
                if os.path.isfile(os.path.join(root, local)):
                    hdr = local
                elif base in GENERATED:
                    hdr = None
                    target = GENERATED[base]
                elif any(base.endswith(s) for s in GENERATED_SUFFIXES):
                    hdr = None
                    target = next(c for s, c in GENERATED_SUFFIXES.items() if base.endswith(s))
                elif len(headers.get(base, [])) == 1:
                    hdr = headers[base][0]
                elif base in headers:
                    fail.add(f"{p}:{line}: #include \"{name}\": more than one header of that name "
                             f"({', '.join(headers[base])}); name headers uniquely")
                    continue
                else:
                    fail.add(f"{p}:{line}: #include \"{name}\": no such header in the tree "
                             f"(a generated one? add it to GENERATED in this check)")
                    continue
                if hdr is not None:
                    target = component_of(hdr, rows)
                    if target is None:
                        fail.add(f"{p}:{line}: #include \"{name}\": {hdr} is in no folder of the table")
                        continue
            if not allowed(comp, target, is_unit_test(p)):
                fail.add(f"{p}:{line}: {label(comp)} includes \"{name}\" of "
                         f"{label(target) if target in rows else target}, which its row in docs/architecture.md "
                         f"does not allow (may use: {', '.join(sorted(rows[comp])) or 'nothing'})")

    # meson dependencies
    mesons = [p for p in files if os.path.basename(p) == "meson.build"]
    owner = {}
    texts = {}
    for p in mesons:
        with open(os.path.join(root, p), encoding="utf-8") as f:
            texts[p] = re.sub(r"#[^\n]*", "", f.read())
        comp = component_of(p, rows)
        for m in re.finditer(r"\b(\w+)\s*=\s*declare_dependency\s*\(", texts[p]):
            if comp is None:
                fail.add(f"{p}: declares {m.group(1)} outside every folder of the table")
                continue
            owner[m.group(1)] = comp
        for m in re.finditer(r"\b(\w+)\s*=\s*dependency\s*\(\s*'([^']+)'", texts[p]):
            owner[m.group(1)] = "@" + m.group(2)
        for m in re.finditer(r"\b(\w+)\s*=\s*\w+\.find_library\s*\(\s*'([^']+)'", texts[p]):
            owner[m.group(1)] = "@lib" + m.group(2)

    def resolve(ext):
        for lib, spec in LIBRARIES.items():
            if ext in spec["deps"]:
                return lib
        return "threads" if ext == "threads" else ext

    dep_re = re.compile(r"\bdependencies\s*:\s*(\[[^\]]*\]|\w+)")
    for p in mesons:
        comp_file = component_of(p, rows)
        if comp_file is None:
            continue
        text = texts[p]
        for m in dep_re.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            comp, unit_test = target_component(p, text, m.start(), rows)
            comp = comp or comp_file
            body = m.group(1)
            entries = re.findall(r"dependency\s*\(\s*'([^']+)'|\b(\w+)\b", body)
            for inline, var in entries:
                if inline:
                    target = resolve(inline)
                elif var in owner:
                    o = owner[var]
                    target = resolve(o[1:]) if o.startswith("@") else o
                elif var == "dependency":
                    continue
                else:
                    fail.add(f"{p}:{line}: dependency {var}: declared nowhere this check can see")
                    continue
                if target not in rows and target not in LIBRARIES and target not in ALWAYS:
                    fail.add(f"{p}:{line}: dependency {var or inline} is {target!r}, "
                             f"which is neither a folder of the table nor a known library")
                    continue
                if not allowed(comp, target, unit_test):
                    fail.add(f"{p}:{line}: {label(comp)} depends on {var or inline} ({target}), which its row "
                             f"in docs/architecture.md does not allow "
                             f"(may use: {', '.join(sorted(rows[comp])) or 'nothing'})")


def enclosing_call(text, pos):
    """The text of the call whose parentheses hold pos (strings skipped roughly)."""
    depth = 0
    i = pos
    while i > 0:
        i -= 1
        c = text[i]
        if c == ")":
            depth += 1
        elif c == "(":
            if depth == 0:
                break
            depth -= 1
    else:
        return None
    j, depth = i, 0
    while j < len(text):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                break
        j += 1
    return text[i:j + 1]


def target_component(meson_path, text, pos, rows):
    """
    The component of a build target's sources, when a row of the table is
    more specific than the meson.build's folder (a row naming one file, as
    the self-test's app/tool.c): the dependencies of that target are its
    arrows. And
    whether the target is built from unit tests only.
    """
    call = enclosing_call(text, pos)
    if not call:
        return None, False
    base = os.path.dirname(meson_path)
    comps = set()
    srcs = re.findall(r"'([^']+\.(?:c|S))'", call)
    for src in srcs:
        comps.add(component_of(os.path.normpath(os.path.join(base, src)), rows))
    unit_test = bool(srcs) and all(is_unit_test(src) for src in srcs)
    if len(comps) == 1 and None not in comps:
        return comps.pop(), unit_test
    return None, unit_test


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def self_test():
    """A tiny tree: clean first, then each kind of bad arrow must be reported."""
    table = """# Architecture

## Folders and what each owns

| folder | owns | may use |
|--------|------|---------|
| `base/` | macros | — |
| `lib/` | a library | base, json-c |
| `app/` | the program | lib, base |
| `app/tool.c` | a tool of its own | lib, base, json-c |
| `lib/room/` | a part of lib, built into lib's library | base |
| `tests/lib/` | test scaffolding | base |

## Dependency rules
"""
    good = {
        "docs/architecture.md": table,
        "meson.build": "jsonc_dep = dependency('json-c')\nsubdir('base')\n",
        "base/meson.build": "base_dep = declare_dependency()\n",
        "base/macro.h": "#pragma once\n#include <stddef.h>\n",
        "lib/meson.build": "lib_dep = declare_dependency(dependencies : [base_dep, jsonc_dep, dependency('threads')])\n"
                           "test('lib', executable('test-lib', 'test-lib.c', dependencies : [lib_dep, tl_dep]))\n"
                           "test('room', executable('test-room', 'room/test-room.c', dependencies : lib_dep))\n",
        "lib/room/room.h": '#pragma once\n#include "macro.h"\n',
        "lib/room/test-room.c": '#include "room.h"\n',
        "lib/lib.h": '#pragma once\n#include "macro.h"\n',
        "lib/lib.c": '#include "lib.h"\n#include <json-c/json.h>\n#include <pthread.h>\n',
        "app/meson.build": "executable('app', 'main.c', dependencies : lib_dep)\n"
                           "executable('tool', 'tool.c', dependencies : [lib_dep, jsonc_dep])\n",
        "app/tool.c": '#include <json-c/json.h>\n',
        "tests/lib/meson.build": "tl_dep = declare_dependency(dependencies : base_dep)\n",
        "tests/lib/tl.h": "#pragma once\n",
        "lib/test-lib.c": '#include "lib.h"\n#include "tl.h"\n',
        "app/main.c": '#include "lib.h"\n#include "macro.h"\n',
    }
    bad_cases = [
        # (what, files changed, a piece of the expected message)
        ("include of a component the row does not list",
         {"lib/lib.c": '#include "lib.h"\n#include "app.h"\n', "app/app.h": "#pragma once\n"},
         'lib/ includes "app.h" of app/'),
        ("include of a library the row does not list",
         {"app/main.c": '#include "lib.h"\n#include <json-c/json.h>\n'},
         'app/ includes "json-c/json.h" of json-c'),
        ("meson dependency the row does not list",
         {"base/meson.build": "base_dep = declare_dependency(dependencies : jsonc_dep)\n"},
         "base/ depends on jsonc_dep (json-c)"),
        ("meson dependency on another component",
         {"lib/meson.build": "lib_dep = declare_dependency(dependencies : [base_dep])\n"
                             "t = executable('t', 't.c', dependencies : [lib_dep, app_dep])\n",
          "app/meson.build": "app_dep = declare_dependency()\n"},
         "lib/ depends on app_dep (app)"),
        ("a file row's arrow taken by another target of the folder",
         {"app/meson.build": "executable('app', 'main.c', dependencies : [lib_dep, jsonc_dep])\n"},
         "app/ depends on jsonc_dep (json-c)"),
        ("a room's library taken by code of the room that is not a unit test",
         {"lib/meson.build": "lib_dep = declare_dependency(dependencies : base_dep)\n"
                             "executable('roomtool', 'room/tool.c', dependencies : lib_dep)\n"},
         "lib/room/ depends on lib_dep (lib)"),
        ("the test library taken by code that is not a unit test",
         {"lib/lib.c": '#include "lib.h"\n#include "tl.h"\n'},
         'lib/ includes "tl.h" of tests/lib/'),
        ("folder missing from the table",
         {"extra/x.c": "int x;\n"},
         "extra/x.c: its folder is not in the table"),
        ("unknown header",
         {"app/main.c": '#include "nowhere.h"\n'},
         '#include "nowhere.h": no such header'),
        ("folders that use each other",
         {"docs/architecture.md": table.replace("| `base/` | macros | — |", "| `base/` | macros | app |")},
         "the table's arrows go round: app/ -> base/ -> app/"),
        ("a may-use entry that is nothing known",
         {"docs/architecture.md": table.replace("lib, base |", "lib, base, qemu |")},
         "may use 'qemu'"),
    ]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "clean")
        for rel, text in good.items():
            write(root, rel, text)
        fail = Failures()
        check(root, fail)
        if fail.msgs:
            print("self-test: the clean tree was refused:\n  " + "\n  ".join(fail.msgs))
            ok = False
        for i, (what, changes, expect) in enumerate(bad_cases):
            root = os.path.join(tmp, f"bad{i}")
            for rel, text in {**good, **changes}.items():
                write(root, rel, text)
            fail = Failures()
            check(root, fail)
            if not any(expect in msg for msg in fail.msgs):
                print(f"self-test: {what}: not reported (wanted '{expect}'; got {fail.msgs or 'nothing'})")
                ok = False
            else:
                print(f"self-test: {what}: reported")
    print("self-test: " + ("all bad arrows reported" if ok else "FAILED"))
    return 0 if ok else 1


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) == 3 and argv[1] == "--graph":
        fail = Failures()
        check(argv[2], fail)
        for comp in sorted(fail.used):
            print(f"{label(comp)}: {', '.join(sorted(fail.used[comp]))}")
        return 0
    if len(argv) != 2:
        print("usage: check-architecture.py SOURCE_ROOT | --graph SOURCE_ROOT | --self-test", file=sys.stderr)
        return 2
    fail = Failures()
    check(argv[1], fail)
    for msg in fail.msgs:
        print(msg)
    if fail.msgs:
        print(f"architecture: {len(fail.msgs)} arrow(s) the table in docs/architecture.md does not allow; "
              "change the code, or the table (and the rules under it) if the arrow is right")
        return 1
    print("architecture: every #include and meson dependency is allowed by docs/architecture.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
