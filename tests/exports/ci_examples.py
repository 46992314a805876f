#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The CI examples of examples/ci/ (docs/ci.md) against the CLI they drive.

    ci_examples.py SNAPBENCH TESTDATA EXAMPLES_CI

Each pipeline file is parsed as YAML (python3-yaml) and its shell (GitLab's
script items, GitHub's run steps) is read with bash -n for syntax. Every
snapbench command line in it is then run by the real CLI, in the
pipeline's order, in a private directory, with the pipeline's own
variables (a variable the pipeline does not define fails the test):

  - snapbench run: with --print-spec appended, the CLI's option parser and
    spec validation without running anything; the spec must have the
    baseline and patched kernel arms at the paths the pipeline's
    build-kernel.sh calls write (OUT/arch/x86/boot/bzImage, OUT/mod);
  - snapbench compare: for real, on a two-arm fixture report placed where
    the run would have written it, with its arms named as the pipeline's;
    exit 0 or 3, stdout into the pipeline's redirect;
  - anything else (snapbench --version): as it is, exit 0.

Then every artifact path the pipeline uploads exists (compare.json,
compare-junit.xml, compare.html, compare.md among them), GitLab's JUnit
report is JUnit XML, and the upload runs whatever happened. Last, the shell
from the comparison on runs under bash -eo pipefail with this snapbench and
stand-ins for curl and gh: a regression (compare's exit code 3) posts the
comment and then fails the job with 3, no regression posts and succeeds, a
missing report fails with 2 and posts nothing. build-kernel.sh passes sh -n.
"""

import copy
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exports as ex  # noqa: E402  (log, fail, check, skip)

try:
    import yaml
except ImportError:
    ex.skip("python3-yaml (Debian package python3-yaml)")

check, fail, log = ex.check, ex.fail, ex.log

OPERATORS = {";", "&&", "||", "|", "(", ")", "&"}
BUILD_SCRIPT = "ci/snapbench-build-kernel.sh"  # where docs/ci.md says to copy build-kernel.sh


def commands(block):
    """The simple commands of a shell block: lists of words, operators and redirections split off."""
    text = re.sub(r"\\\n", " ", block)
    out = []
    for line in text.splitlines():
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        lex.commenters = "#"
        cmd = []
        for tok in lex:
            if tok in OPERATORS:
                if cmd:
                    out.append(cmd)
                cmd = []
            else:
                cmd.append(tok)
        if cmd:
            out.append(cmd)
    return out


def expand(word, env, where):
    """$VAR and ${VAR} from env; a variable the pipeline does not define is an error."""
    def var(m):
        name = m.group(1) or m.group(2)
        check(name in env, "%s: $%s is not defined by the pipeline (in %r)" % (where, name, word))
        return env[name]
    return re.sub(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))", var, word)


def snapbench_commands(blocks, where):
    """(kind, words unexpanded, stdout target, step, env) of each snapbench command, set -- and kernel build."""
    found = []
    for name, block, env in blocks:
        p = subprocess.run(["bash", "-n", "-c", block], capture_output=True, text=True)
        check(p.returncode == 0, "%s %s: bash -n: %s" % (where, name, p.stderr))
        check("${{" not in block, "%s %s: a ${{ }} expression in the shell (pass it through env:)" % (where, name))
        for cmd in commands(block):
            words = list(cmd)
            while words and re.match(r"^\w+=", words[0]):
                words.pop(0)
            check("snapbench" not in words[1:], "%s %s: snapbench not at the start of %s" % (where, name, cmd))
            if words[:2] == ["set", "--"]:
                found.append(("set", words[2:], None, name, env))
            elif words and words[0] == "sh" and len(words) > 1 and words[1] == BUILD_SCRIPT:
                found.append(("build", words[2:], None, name, env))
            elif words and words[0] == "snapbench":
                argv, target = [], None
                it = iter(words)
                for w in it:
                    if w in (">", ">>"):
                        target = next(it)
                    else:
                        argv.append(w)
                found.append(("snapbench", argv, target, name, env))
    return found


def relabelled_two_arms(testdata, labels):
    """two-arms.json with its arms named as the pipeline's arms."""
    with open(os.path.join(testdata, "two-arms.json")) as f:
        r = json.load(f)
    old = [a["label"] for a in r["arms"]]
    r = copy.deepcopy(r)
    for arm, new in zip(r["arms"], labels):
        arm["label"] = new
    for arm, new in zip(r["spec"].get("arms", []), labels):
        arm["label"] = new
    for rep in r["repetitions"]:
        rep["arm"] = labels[old.index(rep["arm"])]
    return r


def run_pipeline(snapbench, testdata, found, where, cwd):
    """Runs the snapbench commands in order, each with its step's variables; returns the compare exit codes."""
    positional, builds, compare_rcs, runs = [], [], [], 0
    for kind, words, target, step, env in found:
        argv = [expand(w, env, where) for w in words]
        if kind == "set":
            positional = [m for w in argv for m in (sorted(glob.glob(w)) or [w])]
            continue
        if kind == "build":
            check(len(argv) == 2, "%s %s: %s SRC OUT, got %s" % (where, step, BUILD_SCRIPT, argv))
            builds.append(argv[1])
            continue
        argv = [re.sub(r"\$[1-9]", lambda m: positional[int(m.group(0)[1:]) - 1], a) for a in argv]
        argv = [m for a in argv for m in (sorted(glob.glob(a)) if "*" in a else [a])]
        verb = argv[1] if len(argv) > 1 else ""
        if verb == "run":
            p = subprocess.run([snapbench] + argv[1:] + ["--print-spec"], capture_output=True, text=True, cwd=cwd)
            check(p.returncode == 0, "%s %s: snapbench %s --print-spec: exit %d\n%s"
                  % (where, step, " ".join(argv[1:]), p.returncode, p.stderr))
            spec = json.loads(p.stdout)
            check("--local" in argv, "%s %s: the run is not --local" % (where, step))
            arms = spec["arms"]
            check([a["label"] for a in arms] == ["baseline", "patched"], "%s: arms %s" % (where, arms))
            for a in arms:
                check(any(a["kernel"] == out + "/arch/x86/boot/bzImage" and a["modules"] == out + "/mod"
                          for out in builds),
                      "%s: arm %s boots %s with %s, not what build-kernel.sh wrote into %s"
                      % (where, a["label"], a["kernel"], a["modules"], builds))
            # what the run would have left: one run directory holding its report
            out = argv[argv.index("--output") + 1]
            report = relabelled_two_arms(testdata, [a["label"] for a in arms])
            os.makedirs(os.path.join(out, report["id"]))
            with open(os.path.join(out, report["id"], "report.json"), "w") as f:
                json.dump(report, f)
            runs += 1
            log("%s: snapbench %s: parsed and validated (--print-spec), arms %s"
                % (where, " ".join(words[1:3]), [a["label"] for a in arms]))
            continue
        p = subprocess.run([snapbench] + argv[1:], capture_output=True, cwd=cwd)
        if verb == "compare":
            check(p.returncode in (0, 3), "%s %s: snapbench %s: exit %d\n%s"
                  % (where, step, " ".join(argv[1:]), p.returncode, p.stderr.decode()))
            compare_rcs.append(p.returncode)
        else:
            check(p.returncode == 0, "%s %s: snapbench %s: exit %d\n%s"
                  % (where, step, " ".join(argv[1:]), p.returncode, p.stderr.decode()))
        if target:
            with open(expand(target, env, where), "ab" if ">>" in words else "wb") as f:
                f.write(p.stdout)
        log("%s: snapbench %s: exit %d" % (where, " ".join(words[1:]), p.returncode))
    check(runs == 1, "%s: %d snapbench run commands, expected one" % (where, runs))
    check(len(builds) == 2, "%s: %d kernel builds, expected two" % (where, len(builds)))
    check(compare_rcs, "%s: no snapbench compare" % where)
    return compare_rcs


STUB = """#!/bin/sh
# a stand-in for %s: records its arguments, one a line
printf '%%s\\n' "$@" > "$STUB_LOG/%s.args"
"""


def stubs(tmp, snapbench):
    """A PATH directory with this build's snapbench and stand-ins for the forges' clients (curl, gh)."""
    d = os.path.join(tmp, "bin")
    if not os.path.isdir(d):
        os.makedirs(os.path.join(tmp, "stub-log"))
        os.makedirs(d)
        os.symlink(snapbench, os.path.join(d, "snapbench"))
        for tool in ("curl", "gh"):
            with open(os.path.join(d, tool), "w") as f:
                f.write(STUB % (tool, tool))
            os.chmod(os.path.join(d, tool), 0o755)
    return d


def run_shell(block, env, tmp, snapbench, cwd):
    """A block as the forges run it (bash -eo pipefail), with our snapbench and the stand-ins on PATH;
    (exit code, {tool: its arguments} for the stand-ins it called)."""
    log_dir = os.path.join(tmp, "stub-log")
    bindir = stubs(tmp, snapbench)
    for f in os.listdir(log_dir):
        os.unlink(os.path.join(log_dir, f))
    e = dict(env, PATH=bindir + ":/usr/bin:/bin", HOME=tmp, STUB_LOG=log_dir, LC_ALL="C.UTF-8")
    p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", block], env=e, cwd=cwd,
                       capture_output=True, text=True, timeout=60)
    called = {}
    for f in os.listdir(log_dir):
        with open(os.path.join(log_dir, f)) as fh:
            called[f.split(".")[0]] = fh.read().splitlines()
    return p.returncode, called, p.stderr


def hide_runs(results):
    """Moves the run directory away (a run that wrote no report); returns how to put it back."""
    runs = os.path.join(results, "runs")
    os.rename(runs, runs + ".hidden")
    return lambda: os.rename(runs + ".hidden", runs)


def check_artifacts(paths, base, where):
    """Every uploaded path exists; the comparison's outputs are among them."""
    files = []
    for p in paths:
        matches = glob.glob(os.path.join(base, p))
        check(matches, "%s: the artifact path %s matches nothing the commands wrote" % (where, p))
        for m in matches:
            files += [os.path.join(d, f) for d, _, fs in os.walk(m) for f in fs] if os.path.isdir(m) else [m]
    names = {os.path.basename(f) for f in files}
    for want in ("compare.json", "compare-junit.xml", "compare.html", "compare.md", "comment.md", "report.json"):
        check(want in names, "%s: %s is not among the artifacts %s" % (where, want, sorted(names)))
    return len(files)


def case_gitlab(snapbench, testdata, path, tmp):
    with open(path) as f:
        doc = yaml.safe_load(f)
    project = os.path.join(tmp, "gitlab")
    os.makedirs(project)
    env = {"CI_PROJECT_DIR": project, "CI_BUILDS_DIR": os.path.join(tmp, "gitlab-builds")}
    for k, v in doc.get("variables", {}).items():
        env[k] = expand(str(v), env, "gitlab variables")
    jobs = {k: v for k, v in doc.items() if isinstance(v, dict) and "script" in v}
    check(list(jobs) == ["snapbench"], "gitlab: jobs %s" % list(jobs))
    job = jobs["snapbench"]
    blocks = [("script %d" % i, s, env) for i, s in enumerate(job.get("before_script", []) + job["script"])]
    found = snapbench_commands(blocks, "gitlab")
    rcs = run_pipeline(snapbench, testdata, found, "gitlab", project)

    art = job["artifacts"]
    check(art.get("when") == "always", "gitlab: artifacts are not kept when the job fails (when: always)")
    n = check_artifacts(art["paths"], project, "gitlab")
    junit = os.path.join(project, art["reports"]["junit"])
    check(ET.parse(junit).getroot().tag == "testsuites", "gitlab: %s is not JUnit XML" % junit)
    script = "\n".join(job["script"])
    block = next(s for s in job["script"] if "--output" in s and "compare" in s)
    check(re.search(r"snapbench compare [^\n]*\|\| rc=\$\?", block) and block.rstrip().endswith('exit "$rc"')
          and block.index("/notes") < block.rindex('exit "$rc"'),
          "gitlab: compare's exit code is not kept and returned after the comment:\n%s" % block)
    check("merge_requests/$CI_MERGE_REQUEST_IID/notes" in script and "comment.md" in script,
          "gitlab: the Markdown is not posted to the merge request")

    # the compare block as GitLab runs it: a regression, none, and an error
    genv = dict(env, CI_JOB_URL="https://gitlab.invalid/job/7", CI_API_V4_URL="https://gitlab.invalid/api/v4",
                CI_PROJECT_ID="11", CI_MERGE_REQUEST_IID="42", SNAPBENCH_NOTE_TOKEN="token")
    comment = os.path.join(env["RESULTS"], "compare", "comment.md")
    for threshold, verdict, want_rc in ((env["SNAPBENCH_THRESHOLD"], "regressed", 3), ("1000", "no-change", 0)):
        rc, called, err = run_shell(block, dict(genv, SNAPBENCH_THRESHOLD=threshold), tmp, snapbench, project)
        check(rc == want_rc, "gitlab: the compare block exits %d, compare's verdict %s gives %d\n%s"
              % (rc, verdict, want_rc, err))
        args = called.get("curl", [])
        check("body@" + comment in args and args[-1] == genv["CI_API_V4_URL"] + "/projects/11/merge_requests/42/notes"
              and "PRIVATE-TOKEN: token" in args, "gitlab: the comment is not posted: curl %s" % args)
        with open(comment) as f:
            text = f.read()
        check(text.startswith("### snapbench compare: %s" % verdict) and
              "(https://gitlab.invalid/job/7/artifacts/browse/snapbench-results/compare/)" in text,
              "gitlab: the comment reads:\n%s" % text)
    restore = hide_runs(env["RESULTS"])
    rc, called, err = run_shell(block, genv, tmp, snapbench, project)
    restore()
    check(rc == 2 and "curl" not in called, "gitlab: without a report the block exits %d (want 2), calls %s"
          % (rc, sorted(called)))
    log("gitlab: the compare block run by bash: exit 3 after posting on a regression, 0 after posting "
        "without one, 2 and no comment without a report")
    log("gitlab: %d snapbench commands, compare exit %s, %d artifact files, the JUnit report, exit 3 kept"
        % (sum(k == "snapbench" for k, *_ in found), rcs, n))


def github_expr(value, workspace):
    """The expressions the workflow uses, as the test's directories and placeholders."""
    known = {"github.workspace": workspace, "runner.temp": os.path.join(os.path.dirname(workspace), "runner-temp"),
             "github.event.pull_request.number": "42", "github.base_ref": "main", "github.token": "token",
             "github.server_url": "https://github.invalid", "github.repository": "owner/linux",
             "github.run_id": "7"}
    return re.sub(r"\$\{\{\s*([^}]*?)\s*\}\}", lambda m: known.get(m.group(1), "EXPR"), value)


def case_github(snapbench, testdata, path, tmp):
    with open(path) as f:
        doc = yaml.safe_load(f)
    workspace = os.path.join(tmp, "github")
    os.makedirs(workspace)
    triggers = doc.get(True, doc.get("on"))  # YAML 1.1 reads the key on as true
    check("pull_request" in triggers, "github: not run for pull requests: %s" % triggers)
    check(doc["permissions"].get("pull-requests") == "write", "github: no permission to comment")
    (job,) = doc["jobs"].values()
    env = {"GITHUB_WORKSPACE": workspace, "GITHUB_OUTPUT": os.path.join(tmp, "github-output"),
           "GITHUB_STEP_SUMMARY": os.path.join(tmp, "github-summary")}
    env.update({k: github_expr(str(v), workspace) for k, v in job.get("env", {}).items()})
    steps = job["steps"]
    blocks = []
    for s in steps:  # a step sees the job's env and its own
        if "run" in s:
            step_env = dict(env, **{k: github_expr(str(v), workspace) for k, v in s.get("env", {}).items()})
            blocks.append((s.get("name", s.get("id", "?")), s["run"], step_env))
    found = snapbench_commands(blocks, "github")
    rcs = run_pipeline(snapbench, testdata, found, "github", workspace)

    upload = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    check(len(upload) == 1 and upload[0].get("if") == "always()", "github: no upload-artifact step with if: always()")
    n = check_artifacts(upload[0]["with"]["path"].split(), workspace, "github")
    compare = next(s for s in steps if s.get("id") == "compare")
    check(re.search(r"\|\| rc=\$\?", compare["run"]) and 'echo "exit_code=$rc" >> "$GITHUB_OUTPUT"' in compare["run"],
          "github: the compare step does not keep compare's exit code")
    names = [s.get("name") for s in steps]
    last = steps[-1]
    check(last.get("if") == "steps.compare.outputs.exit_code == '3'" and "exit 3" in last["run"],
          "github: the job does not fail on a regression after the comment: %s" % last)
    check(names.index("Comment on the pull request") < names.index(last.get("name")) and
          any("gh pr comment" in s.get("run", "") for s in steps), "github: the comment is not posted first")
    log("github: %d snapbench commands, compare exit %s, %d artifact files, exit 3 fails the job last"
        % (sum(k == "snapbench" for k, *_ in found), rcs, n))

    # the steps from Compare on as the runner takes them: a regression, none, and an error
    env["GITHUB_WORKSPACE"] = workspace
    first = steps.index(compare)
    body = os.path.join(env["RESULTS"], "compare", "comment.md")
    for threshold, verdict, want in ((env["SNAPBENCH_THRESHOLD"], "regressed", ("Fail on a regression", 3)),
                                     ("1000", "no-change", None)):
        ran, failed, called = github_steps(steps[first:], dict(env, SNAPBENCH_THRESHOLD=threshold), workspace, tmp,
                                           snapbench)
        check(failed == want and "Comment on the pull request" in ran and "Keep the results" in ran,
              "github, %s: steps run %s, failed %s; expected the comment, the upload and a failure %s"
              % (verdict, ran, failed, want))
        check(called.get("gh", [])[:3] == ["pr", "comment", "42"] and called["gh"][3:] == ["--body-file", body],
              "github: the comment is not posted: gh %s" % called.get("gh"))
        with open(body) as f:
            text = f.read()
        check(text.startswith("### snapbench compare: %s" % verdict) and
              "(https://github.invalid/owner/linux/actions/runs/7)" in text, "github: the comment reads:\n%s" % text)
    restore = hide_runs(env["RESULTS"])
    ran, failed, called = github_steps(steps[first:], env, workspace, tmp, snapbench)
    restore()
    check(failed == ("Compare", 2) and ran == ["Compare", "Keep the results"] and "gh" not in called,
          "github, no report: steps run %s, failed %s, called %s" % (ran, failed, sorted(called)))
    log("github: the steps run by bash: on a regression the comment, the upload, then exit 3; without one "
        "the same and success; without a report compare fails, the upload runs, no comment")


def github_steps(steps, job_env, workspace, tmp, snapbench):
    """Runs steps as GitHub's runner does: if: (success() unless always() is asked), each run: in bash
    with a fresh GITHUB_OUTPUT, uses: steps taken as done. (steps run, (first failed step, its exit
    code) or None, stand-ins called)."""
    outputs, ran, failed, called = {}, [], None, {}
    for i, s in enumerate(steps):
        cond = s.get("if")
        if cond == "always()":
            go = True
        elif cond is None:
            go = failed is None
        else:
            m = re.fullmatch(r"steps\.(\w+)\.outputs\.(\w+) == '([^']*)'", cond)
            check(m, "github: a condition the test does not know: %r" % cond)
            go = failed is None and outputs.get(m.group(1), {}).get(m.group(2)) == m.group(3)
        if not go:
            continue
        name = s.get("name", s.get("uses"))
        ran.append(name)
        if "run" not in s:
            continue
        out = os.path.join(tmp, "github-output-%d" % i)
        open(out, "w").close()
        env = dict(job_env, GITHUB_OUTPUT=out, GITHUB_STEP_SUMMARY=os.path.join(tmp, "github-summary"),
                   **{k: github_expr(str(v), workspace) for k, v in s.get("env", {}).items()})
        rc, c, _ = run_shell(s["run"], env, tmp, snapbench, workspace)
        called.update(c)
        with open(out) as f:
            outputs[s.get("id", "")] = dict(l.split("=", 1) for l in f.read().splitlines() if "=" in l)
        if rc and failed is None:
            failed = (name, rc)
    return ran, failed, called


def main():
    snapbench, testdata, examples = (os.path.abspath(a) for a in sys.argv[1:4])
    p = subprocess.run(["sh", "-n", os.path.join(examples, "build-kernel.sh")], capture_output=True, text=True)
    check(p.returncode == 0, "build-kernel.sh: sh -n: %s" % p.stderr)
    with tempfile.TemporaryDirectory(prefix="snapbench-ci-") as tmp:
        case_gitlab(snapbench, testdata, os.path.join(examples, ".gitlab-ci.yml"), tmp)
        case_github(snapbench, testdata, os.path.join(examples, "github-actions.yml"), tmp)


if __name__ == "__main__":
    main()
