#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""docs/kernel-build.md's table of the fragment is the fragment: every option
'snapbench kernel fragment' writes or checks is a row with its value and
reason, and the table has no other row; the same for the table of the
minimal config base and 'snapbench kernel fragment --config-base minimal'.

Usage: fragment-docs.py SNAPBENCH KERNEL-BUILD-MD
"""
import re
import subprocess
import sys


def fragment(snapbench, args):
    """{option: (value, checked, why)} from 'snapbench kernel fragment ARGS'."""
    text = subprocess.run([snapbench, "kernel", "fragment"] + args, capture_output=True, text=True, check=True,
                          timeout=60).stdout
    opts, why = {}, None
    for line in text.splitlines():
        m = re.fullmatch(r"# checked: CONFIG_(\w+)=(\w) \((.*)\)", line)
        if m:
            opts[m[1]] = (m[2], True, m[3])
            continue
        m = re.fullmatch(r"CONFIG_(\w+)=(\w)", line)
        if m:
            opts[m[1]] = (m[2], False, why)
            continue
        why = line[2:] if line.startswith("# ") else None
    return opts


def table(path, heading):
    """The option rows of the section under '## HEADING'."""
    rows, inside = {}, False
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            inside = line.strip() == "## " + heading
        if not inside:
            continue
        m = re.fullmatch(r"\| `CONFIG_(\w+)` \| (\w)(, checked)? \| (.*) \|\n", line)
        if m:
            rows[m[1]] = (m[2], bool(m[3]), m[4])
    return rows


def compare(what, opts, rows, md, problems):
    if len(opts) < 20:
        problems.append("snapbench kernel fragment names only %d options of the %s" % (len(opts), what))
    for name, want in opts.items():
        if name not in rows:
            problems.append("CONFIG_%s is in the %s, not in %s's table" % (name, what, md))
        elif rows[name] != want:
            problems.append("CONFIG_%s: the %s says %s, the table %s" % (name, what, want, rows[name]))
    for name in rows:
        if name not in opts:
            problems.append("CONFIG_%s is in the table, not in the %s" % (name, what))
    print("checked %d options of the %s against %d rows" % (len(opts), what, len(rows)))


def main():
    snapbench, md = sys.argv[1:3]
    problems = []
    compare("fragment", fragment(snapbench, []), table(md, "The fragment"), md, problems)
    compare("minimal base", fragment(snapbench, ["--config-base", "minimal"]), table(md, "The minimal config base"),
            md, problems)
    # riscv64's own options (those x86_64 does not have) are the table under Architectures
    x86 = set(fragment(snapbench, [])) | set(fragment(snapbench, ["--config-base", "minimal"]))
    rv = fragment(snapbench, ["--arch", "riscv64"])
    rv.update(fragment(snapbench, ["--arch", "riscv64", "--config-base", "minimal"]))
    own = {k: v for k, v in rv.items() if k not in x86}
    rows = table(md, "Architectures")
    if len(own) < 5:
        problems.append("riscv64 has only %d options of its own" % len(own))
    for name, want in own.items():
        if rows.get(name) != want:
            problems.append("CONFIG_%s: riscv64's says %s, the Architectures table %s" % (name, want, rows.get(name)))
    for name in rows:
        if name not in own:
            problems.append("CONFIG_%s is in the Architectures table, not riscv64's own" % name)
    print("checked %d options of riscv64's own against %d rows" % (len(own), len(rows)))
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
