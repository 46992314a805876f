#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""docs/kernel-build.md's table of the fragment is the fragment: every option
'snapbench kernel fragment' writes or checks is a row with its value and
reason, and the table has no other row.

Usage: fragment-docs.py SNAPBENCH KERNEL-BUILD-MD
"""
import re
import subprocess
import sys


def fragment(snapbench):
    """{option: (value, checked, why)} from 'snapbench kernel fragment'."""
    text = subprocess.run([snapbench, "kernel", "fragment"], capture_output=True, text=True, check=True,
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


def table(path):
    rows = {}
    for line in open(path, encoding="utf-8"):
        m = re.fullmatch(r"\| `CONFIG_(\w+)` \| (\w)(, checked)? \| (.*) \|\n", line)
        if m:
            rows[m[1]] = (m[2], bool(m[3]), m[4])
    return rows


def main():
    snapbench, md = sys.argv[1:3]
    opts, rows = fragment(snapbench), table(md)
    problems = []
    if len(opts) < 20:
        problems.append("snapbench kernel fragment names only %d options" % len(opts))
    for name, want in opts.items():
        if name not in rows:
            problems.append("CONFIG_%s is in the fragment, not in %s's table" % (name, md))
        elif rows[name] != want:
            problems.append("CONFIG_%s: the fragment says %s, the table %s" % (name, want, rows[name]))
    for name in rows:
        if name not in opts:
            problems.append("CONFIG_%s is in the table, not in the fragment" % name)
    for p in problems:
        print("FAIL", p)
    print("checked %d options against %d rows" % (len(opts), len(rows)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
