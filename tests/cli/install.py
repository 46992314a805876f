#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`meson install` into a temporary DESTDIR, then what a user gets:

  - the commands, the manual pages, the bash and the zsh completion;
  - every docs/*.md of the source tree in DATADIR/doc/snapbench, the same
    bytes;
  - every reports/schema/*.json in DATADIR/snapbench/schema with
    validate-report.py, executable, which validates the schema's example
    report with the installed schema;
  - snapbench.1 lists every verb of `snapbench --help`, each in a section of
    its own, and in that section every option its `snapbench VERB --help`
    names (so the manual page cannot drift from the parsers);
  - the bash completion completes a verb, an option and a --format value;
  - with zsh: the completion loads (compinit, then source) without a word on
    stderr and registers both commands, and, typed in an interactive zsh,
    completes a verb, an option and a --format value.

Usage: install.py MESON BUILDDIR SOURCEDIR PREFIX DATADIR MANDIR BASHCOMPDIR ZSHCOMPDIR
(the directories as meson's options have them: relative ones under PREFIX)
"""
import filecmp
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

from clitest import check, result


def under(destdir, prefix, d):
    return destdir + os.path.join(prefix, d)


def check_installed(dest, src, sub, pattern, where):
    """Every file of src/sub matching pattern is in where, the same bytes."""
    files = sorted(glob.glob(os.path.join(src, sub, pattern)))
    check(files, "no %s/%s in the source tree" % (sub, pattern))
    for f in files:
        got = os.path.join(where, os.path.basename(f))
        if check(os.path.isfile(got), "%s is not installed (want %s)" % (os.path.relpath(f, src), got[len(dest):])):
            check(filecmp.cmp(f, got, shallow=False), "%s differs from its source" % got[len(dest):])
    print("ok %d %s/%s in %s" % (len(files), sub, pattern, where[len(dest):]))


def man_text(path):
    """The manual page as text a reader sees in the source: roff escapes and fonts undone."""
    with open(path) as f:
        text = f.read()
    text = re.sub(r"\\f[BIRP]", "", text)
    return text.replace("\\-", "-").replace("\\e", "\\")


def man_sections(text):
    """{verb: text of its .SS section} for the VERBS section."""
    verbs = text.split("\n.SH VERBS", 1)[1].split("\n.SH ", 1)[0]
    sections = {}
    for part in verbs.split("\n.SS ")[1:]:
        title = part.split("\n", 1)[0].strip('"').split()
        sections[title[0]] = part
    return sections


def help_options(snapbench, verb):
    out = subprocess.run([snapbench, verb, "--help"], capture_output=True, text=True, check=True).stdout
    return sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", out)))


def check_man(snapbench, man1):
    text = man_text(man1)
    sections = man_sections(text)
    listed = subprocess.run([snapbench, "--help"], capture_output=True, text=True, check=True).stdout
    verbs = [l.split()[0] for l in listed.splitlines() if re.match(r"  [a-z]", l)]  # not a summary's next line
    check(len(verbs) >= 10, "snapbench --help lists %d verbs" % len(verbs))
    # --help and --json: said once for every verb, in DESCRIPTION and at the top of VERBS
    check(re.search(r"Every verb takes\s+\.B --help\s+and\s+\.BR --json", text),
          "snapbench.1 does not say that every verb takes --help and --json")
    for verb in verbs:
        if not check(verb in sections, "snapbench.1 has no section for verb %s (sections: %s)" % (verb, sorted(sections))):
            continue
        missing = [o for o in help_options(snapbench, verb)
                   if o not in ("--help", "--json") and not re.search(re.escape(o) + r"(?![a-z0-9-])", sections[verb])]
        check(not missing, "snapbench.1's %s section lacks %s (from 'snapbench %s --help')" % (verb, missing, verb))
    extra = sorted(set(sections) - set(verbs))
    check(not extra, "snapbench.1 has sections of no verb: %s" % extra)
    print("checked snapbench.1: %d verbs, each for the options of its --help" % len(verbs))


# Waits for the shell to say it has loaded the completion system (READY-42: the arithmetic done, not the
# typed line echoed), then types; reads what the terminal shows until it has been quiet for a second (at
# most 30 s): a loaded machine's compinit and completion take longer than a fixed sleep.
ZPTY = r'''
zmodload zsh/zpty
zmodload zsh/datetime
zpty -b z "zsh -f -i"
zpty -w z "PS1='>'; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D; setopt nobeep; print READY-\$((6*7))"
out=
start=$EPOCHREALTIME
while [[ $out != *READY-42* ]] && (( EPOCHREALTIME - start < 30 )); do
    zpty -r -t z chunk && out+=$chunk || sleep 0.05
done
zpty -n -w z "$2"$'\t'
out=
start=$EPOCHREALTIME
last=$EPOCHREALTIME
while (( EPOCHREALTIME - start < 30 )) && { [[ -z $out ]] || (( EPOCHREALTIME - last < 1 )); }; do
    if zpty -r -t z chunk; then out+=$chunk; last=$EPOCHREALTIME; else sleep 0.05; fi
done
zpty -d z
print -r -- "$out"
'''


def check_zsh(zcompdir, bindir):
    zsh = shutil.which("zsh")
    if not zsh:
        print("note: no zsh (scripts/install-deps installs it); the zsh completion was not loaded")
        return
    comp = os.path.join(zcompdir, "_snapbench")
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), HOME=tempfile.gettempdir())
    p = subprocess.run([zsh, "-f", "-c", "autoload -U compinit; compinit -u -D; source %s; "
                        "print -r -- $_comps[snapbench] $_comps[snapbenchd]" % comp],
                       capture_output=True, text=True, env=env, timeout=60)
    check(p.returncode == 0 and p.stderr == "" and p.stdout == "_snapbench _snapbench\n",
          "zsh: sourcing %s: exit %d, stdout %r, stderr %r" % (comp, p.returncode, p.stdout, p.stderr))
    # typed in an interactive zsh: TAB completes (what the terminal shows, escapes and all)
    for typed, want in (("snapbench sho", "snapbench show"), ("snapbench list --sta", "--state="),
                        ("snapbench show --format ", "openmetrics"), ("snapbench compare --thr", "--threshold="),
                        ("snapbench probe --no-at", "--no-attribution"), ("snapbenchd --metrics-f", "--metrics-file=")):
        p = subprocess.run([zsh, "-f", "-c", ZPTY, "zpty", zcompdir, typed], capture_output=True, text=True,
                           env=env, timeout=60)
        shown = p.stdout.rsplit(">", 1)[-1] if ">" in p.stdout else p.stdout
        shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|.\x08", "", shown)  # the terminal's escapes, backspaces
        check(want in shown, "zsh: %r<TAB> does not show %r: %r" % (typed, want, shown[-300:]))
    print("checked the zsh completion: it loads, registers both commands, completes verbs, options, formats")


BASH = r'''
source "$1"
read -ra COMP_WORDS <<< "$2"
[[ $2 == *" " ]] && COMP_WORDS+=("")   # a new word after the space
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_snapbench
printf '%s\n' "${COMPREPLY[@]}"
'''


def check_bash(bashcomp, bindir):
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    for typed, want in (("snapbench bi", ["bisect-step"]), ("snapbench qmp --j", ["--json"]),
                        ("snapbench show --format ", ["text", "json", "csv", "openmetrics", "prometheus"]),
                        ("snapbench probe --no-", ["--no-attribution"])):
        p = subprocess.run(["bash", "-c", BASH, "bash", os.path.join(bashcomp, "snapbench"), typed],
                           capture_output=True, text=True, env=env, timeout=60)
        got = p.stdout.split()
        check(p.returncode == 0 and all(w in got for w in want),
              "bash: %r<TAB>: %s, want %s (%s)" % (typed, got, want, p.stderr))
    print("checked the bash completion: verbs, options, formats")


def main(argv):
    if len(argv) != 9:
        sys.exit(__doc__)
    meson, build, src, prefix, datadir, mandir, bashdir, zshdir = argv[1:]
    with tempfile.TemporaryDirectory(prefix="snapbench-install-") as dest:
        p = subprocess.run([meson, "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", dest],
                           capture_output=True, text=True, timeout=300)
        if not check(p.returncode == 0, "meson install: exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr)):
            return 1
        bindir = under(dest, prefix, "bin")
        for path in (os.path.join(bindir, "snapbench"), os.path.join(under(dest, prefix, "sbin"), "snapbenchd"),
                     os.path.join(under(dest, prefix, mandir), "man1", "snapbench.1"),
                     os.path.join(under(dest, prefix, mandir), "man8", "snapbenchd.8"),
                     os.path.join(under(dest, prefix, bashdir), "snapbench"),
                     os.path.join(under(dest, prefix, zshdir), "_snapbench")):
            check(os.path.isfile(path), "not installed: " + path[len(dest):])
        share = under(dest, prefix, datadir)
        check_installed(dest, src, "docs", "*.md", os.path.join(share, "doc", "snapbench"))
        schemadir = os.path.join(share, "snapbench", "schema")
        check_installed(dest, src, "reports/schema", "*.json", schemadir)
        validator = os.path.join(schemadir, "validate-report.py")
        if check(os.access(validator, os.X_OK), "validate-report.py is not installed executable"):
            example = os.path.join(src, "reports", "schema", "examples", "run-completed.json")
            p = subprocess.run([validator, os.path.join(schemadir, "run-1.schema.json"), example],
                               capture_output=True, text=True, timeout=60)
            check(p.returncode == 0, "the installed validator on %s: exit %d %s" % (example, p.returncode, p.stderr))
            print("ok the installed validator validates %s" % os.path.basename(example))
        # the installed snapbench runs from DESTDIR: nothing it needs to answer --help is elsewhere
        snapbench = os.path.join(bindir, "snapbench")
        check_man(snapbench, os.path.join(under(dest, prefix, mandir), "man1", "snapbench.1"))
        check_bash(under(dest, prefix, bashdir), bindir)
        check_zsh(under(dest, prefix, zshdir), bindir + os.pathsep + under(dest, prefix, "sbin"))
    return result()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
