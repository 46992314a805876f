#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every snapbench command of README.md and docs/*.md that can run on fixture reports, run.

The code blocks (indented four spaces, or fenced) are read for command lines
(`snapbench VERB ...`, continuation lines joined, a trailing `# comment`
dropped; an output line, `snapbench VERB: message`, is not a command). Each
command's placeholders are put for the fixtures (reports/testdata):
BASELINE/report.json and stock/report.json are stock.json, PATCHED/report.json,
perm-upgrade/report.json and B.json perm-upgrade.json, RUN-ID a run of the
fixtures' store, label= selections read that store, out/ a temporary
directory. Then:

  - compare, show, list, logs, bisect-step and help run as written (show, list
    and logs on the fixtures' run store, no daemon running): they must exit as
    the docs say (a "# exit N" comment, or the exit_code of the JSON error line
    under the command), else 0, or for compare and bisect-step the codes of a
    verdict (compare 0 or 3, bisect-step 0, 1 or 125), never a usage error;
  - run, with --print-spec added: the options parsed and the spec validated, no VM;
    it must exit 0;
  - what needs a daemon, QEMU, root or a kernel tree (status, cancel, probe,
    top, qmp, kernel, import-lava; a path that is not in the tree; a shell
    variable; a label no fixture has) is not run, and said so with the reason.

It fails when a command exits otherwise, and when fewer than 10 commands ran
(the extraction itself broken).

Usage: doc-commands.py SNAPBENCH SOURCE_ROOT
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

NOT_HERE = {"status": "a daemon", "cancel": "a daemon",
            "probe": "root and a QEMU", "top": "root and a QEMU", "qmp": "a QEMU", "kernel": "a kernel tree",
            "import-lava": "a LAVA job log"}
STORE_RUN = "20261112T080000Z-0b0003"
FIXTURE_LABELS = ("stock", "perm-upgrade")  # the arms of the fixtures' store


def command_lines(path):
    """(line number, command) of each snapbench command in path's code blocks."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    out, fenced, prev_blank, in_block = [], False, True, False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            fenced = not fenced
            i += 1
            continue
        code = fenced or (line.startswith("    ") and (prev_blank or in_block))
        in_block = code and not fenced
        prev_blank = not line.strip()
        text = line.strip()
        if text.startswith("$ "):
            text = text[2:]
        if code and text.startswith("snapbench ") and not re.match(r"snapbench [a-z-]*:", text):
            start = i + 1
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1] + " " + lines[i].strip()
            # the exit code the docs give: a "# exit N" comment, or the JSON error line printed under it
            said = re.search(r"#.*\bexits? (\d+)", text)
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            said = said or re.search(r'"exit_code":\s*(\d+)', nxt)
            out.append((start, text, int(said.group(1)) if said else None))
        i += 1
    return out


def strip_comment(cmd):
    try:
        words = shlex.split(cmd, comments=True)
    except ValueError:
        return None
    return words


def substitute(words, testdata, out_dir):
    """The words with the docs' placeholders put for fixtures; None with why when it cannot run here."""
    subst = {"BASELINE/report.json": "stock.json", "stock/report.json": "stock.json",
             "PATCHED/report.json": "perm-upgrade.json", "perm-upgrade/report.json": "perm-upgrade.json",
             "A.json": "stock.json", "B.json": "perm-upgrade.json", "RUN-ID": STORE_RUN,
             "DIR/RUN-ID": os.path.join(testdata, "store", STORE_RUN), "out/": out_dir,
             "STORE": os.path.join(testdata, "store"),
             "/var/lib/snapbench/runs/RUN_ID": "kernel-retried.json"}  # a run of two arms
    res = []
    for w in words:
        w = subst.get(w, w)
        if "$" in w or "..." in w or w.startswith("~") or ">" == w:
            return None, "a shell variable or an elided value (%s)" % w
        label = re.match(r"label=([^,]*)", w)
        if label and label.group(1) not in FIXTURE_LABELS:
            return None, "no fixture run has an arm labelled %s" % label.group(1)
        res.append(w)
    return res, None


def expected(verb):
    return {"compare": (0, 3), "bisect-step": (0, 1, 125)}.get(verb, (0,))


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    snapbench, root = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    tmp = tempfile.mkdtemp(prefix="doc-commands-")
    # a copy of the fixtures: compare writes its label index into a store it reads (STORE/.labels.json)
    testdata = os.path.join(tmp, "testdata")
    shutil.copytree(os.path.join(root, "reports", "testdata"), testdata, ignore=shutil.ignore_patterns("golden"))
    ran, skipped, failed = 0, 0, 0
    try:
        for doc in docs:
            rel = os.path.relpath(doc, root)
            for lineno, cmd, said in command_lines(doc):
                where = "%s:%d: %s" % (rel, lineno, cmd)
                words = strip_comment(cmd)
                if not words or len(words) < 2:
                    continue
                verb = words[1]
                if verb in NOT_HERE:
                    skipped += 1
                    print("skip %s (needs %s)" % (where, NOT_HERE[verb]))
                    continue
                out_dir = tempfile.mkdtemp(prefix="out-", dir=tmp)
                words, why = substitute(words, testdata, out_dir)
                if words is None:
                    skipped += 1
                    print("skip %s (%s)" % (where, why))
                    continue
                if verb == "run":
                    words.append("--print-spec")
                missing = [w for w in words[2:] if re.search(r"\.(json|qcow2|patch)$|/bzImage$", w)
                           and not os.path.exists(os.path.join(root, w)) and not os.path.exists(os.path.join(testdata, w))]
                if missing:
                    skipped += 1
                    print("skip %s (a file not in the tree: %s)" % (where, ", ".join(missing)))
                    continue
                # --store: the fixtures' store for label= selections, and show and compare find runs there
                env = dict(os.environ, SNAPBENCH_SOCKET=os.path.join(tmp, "no-daemon.sock"))
                if verb in ("compare", "bisect-step") and "--store" not in words and \
                        any(w.startswith(("label=", "--aa")) or w in ("--baseline", "--patched", "--aa") for w in words):
                    words += ["--store", os.path.join(testdata, "store")]
                if verb in ("list", "logs") or (verb == "show" and not os.path.exists(words[-1])):
                    words += ["--store", os.path.join(testdata, "store")]
                cwd = testdata if verb != "run" else root
                p = subprocess.run([snapbench] + words[1:], cwd=cwd, env=env, capture_output=True, text=True,
                                   timeout=120)
                ran += 1
                want = (said,) if said is not None else expected(verb)
                if p.returncode not in want:
                    failed += 1
                    print("FAIL %s: exit %d, the docs' command should exit %s\n  ran: %s\n%s"
                          % (where, p.returncode, " or ".join(map(str, want)), shlex.join(words), p.stderr[-1500:]))
                else:
                    print("ok %s: exit %d" % (where, p.returncode))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d commands of the docs ran, %d failed, %d not runnable here" % (ran, failed, skipped))
    if ran < 10:
        print("FAIL only %d commands found to run: the extraction is broken" % ran)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
