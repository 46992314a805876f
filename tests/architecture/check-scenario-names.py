#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No scenario's knowledge in the run engine outside runner/scenario/ (the
scenarios and their table) and runner/spec/ (the spec, which names them):
the engine asks a scenario through scenario_ops' hooks instead
(runner/scenario/scenario.h). In the code of every other .c and .h under
runner/ (comments and the prose of messages are free to name a scenario),
this fails on

  - SPEC_SCENARIO_* (a branch on which scenario runs),
  - a scenario's ops by name (scenario_background_snapshot, ...),
  - a comparison or switch on spec->scenario,
  - a string literal that is a scenario's name ("dirty-log", ...),

but for the QEMU migration capability that shares a scenario's name,
where preflight's probe names it (ALLOWED).

Usage: check-scenario-names.py SOURCE-ROOT | --self-test   (exit 0: none)
"""
import os
import re
import sys

NAMES = ["background-snapshot", "dirty-log", "postcopy-restore", "numa-hinting", "uffd-restore"]
INSIDE = ("runner/scenario/", "runner/spec/")
# (file, literal): why it may stand there
ALLOWED = {
    ("runner/preflight/host.c", "background-snapshot"): "QEMU's migration capability of that name",
}

IDENT = re.compile(r"\bSPEC_SCENARIO_[A-Z_]+\b|\bscenario_(?:%s)\b" %
                   "|".join(n.replace("-", "_") for n in NAMES))
BRANCH = re.compile(r"(?:->|\.)scenario\s*(?:[!=]=)|switch\s*\([^)]*(?:->|\.)scenario\s*\)")


def strip_comments(text):
    """The code with comments blanked (newlines kept), string literals kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def problems_in(rel, text):
    found = []
    code = strip_comments(text)
    for lineno, line in enumerate(code.split("\n"), 1):
        for m in IDENT.finditer(line):
            found.append("%s:%d: %s: ask the scenario (scenario_ops' hooks) instead" % (rel, lineno, m.group(0)))
        if BRANCH.search(line):
            found.append("%s:%d: a branch on the spec's scenario: ask the scenario (scenario_ops' hooks) instead"
                         % (rel, lineno))
        for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', line):
            if lit in NAMES and (rel, lit) not in ALLOWED:
                found.append('%s:%d: "%s" names a scenario: ask the scenario (scenario_ops\' hooks) instead'
                             % (rel, lineno, lit))
    return found


def check(root):
    found = []
    for dirpath, _, files in os.walk(os.path.join(root, "runner")):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            if rel.startswith(INSIDE):
                continue
            with open(path, encoding="utf-8") as fh:
                found += problems_in(rel, fh.read())
    return found


def self_test():
    bad = {
        "ident": "if (spec->kind == SPEC_SCENARIO_DIRTY_LOG)\n\treturn 1;\n",
        "ops": "const struct scenario_ops *o = &scenario_postcopy_restore;\n",
        "branch": "\treturn spec->scenario != 3;\n",
        "switch": "switch (in->spec->scenario) {\n}\n",
        "literal": 'if (!strcmp(name, "numa-hinting"))\n',
    }
    good = {
        "comment": "/* the dirty-log scenario, SPEC_SCENARIO_DIRTY_LOG, spec->scenario == x */\nint a;\n",
        "line-comment": "int b; // postcopy-restore\n",
        "prose": 'fail(f, "counted only in numa-hinting runs");\n',
        "hook": "scenario_vm_config(scenario_find(spec->scenario), spec, &cfg);\n",
    }
    ok = True
    for name, text in bad.items():
        if not problems_in("runner/x.c", text):
            print("self-test: %s was not refused" % name)
            ok = False
    for name, text in good.items():
        p = problems_in("runner/x.c", text)
        if p:
            print("self-test: %s was refused: %s" % (name, p))
            ok = False
    if not problems_in("runner/vm/x.c", '{ "background-snapshot", 1 },\n'):
        print("self-test: the capability's name outside host.c was not refused")
        ok = False
    if problems_in("runner/preflight/host.c", '{ "background-snapshot", 1 },\n'):
        print("self-test: host.c's capability was refused")
        ok = False
    print("self-test: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        sys.exit(__doc__)
    found = check(argv[1])
    for p in found:
        print(p)
    print("%d scenario names outside runner/scenario/ and runner/spec/" % len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
