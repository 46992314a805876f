#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""snapbench show on a report that tries to forge lines or overflow figures.

stock.json with an arm label holding a newline, a forged "run ...:" line
and ESC [31m, a kernel release and an unavailable reason holding newlines,
an error message holding a CSI (U+009B), and figures no run measures:
pf/s 1e23 during the snapshot, tlb/s -1e308, a snapshot of 1e300 s. Read
as show REPORT and as show RUN-ID from a run store without snapbenchd:

  - no control byte reaches stdout (ESC, CSI, CR), no line starts with the
    forged text, and the label reads back escaped: st\\nrun FORGED ...\\x1b[31m;
  - the out-of-range figures read "n/a": no "P" suffix, no e+ exponent.

Usage: show-hostile.py SNAPBENCH TESTDATA
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import check, result  # noqa: E402

LABEL = "st\nrun FORGED: completed\x1b[31m"
SHOWN = "st\\nrun FORGED: completed\\x1b[31m"


def hostile(testdata):
    with open(os.path.join(testdata, "stock.json")) as f:
        r = json.load(f)
    r["arms"][0]["label"] = r["spec"]["arms"][0]["label"] = LABEL
    r["host"]["kernel_release"] = "6.1\nrun FAKE: completed"
    r["state"] = "failed"
    r["error"] = {"phase": "measure", "message": "boom\u009b2J\nrun FAKE2: completed"}
    for rep in r["repetitions"]:
        rep["arm"] = LABEL
        m = rep["windows"]["snapshot"]["metrics"]
        m["pf_per_s"], m["tlb_per_s"] = 1e23, -1e308
        rep["snapshot"]["duration_s"] = 1e300
    w = r["arms"][0]["windows"]["snapshot"]
    for k in w["pf_per_s"]:
        if k != "n":
            w["pf_per_s"][k] = [1e23] * 5 if k == "values" else 1e23
            w["tlb_per_s"][k] = [-1e308] * 5 if k == "values" else -1e308
    return r


def check_text(text, what):
    check(not re.search("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f]", text),
          "%s: a control character reached stdout: %r" % (what, [c for c in text if ord(c) < 32 and c != "\n"]))
    check(not any(line.startswith(("run FORGED", "run FAKE")) for line in text.splitlines()),
          "%s: a field forged a line:\n%s" % (what, text))
    check(SHOWN in text and "6.1\\nrun FAKE: completed" in text and "boom\\u009b2J\\nrun FAKE2" in text,
          "%s: the label, kernel or error do not read back escaped:\n%s" % (what, text[:1500]))
    rows = [line for line in text.splitlines() if line.lstrip().startswith(("pf/s", "tlb/s"))]
    check(len(rows) == 2 and all(re.search(r"\) +n/a +\d", line) for line in rows),
          "%s: pf/s and tlb/s during the snapshot are not n/a: %s" % (what, rows))
    check(not re.search(r"\dP\b|e\+\d", text), "%s: a figure printed with a P suffix or an exponent" % what)
    check(" snapshot n/a s" in text, "%s: the 1e300 s snapshot is not n/a" % what)


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    snapbench, testdata = os.path.abspath(argv[1]), argv[2]
    tmp = tempfile.mkdtemp(prefix="cli-show-hostile-")
    try:
        r = hostile(testdata)
        path = os.path.join(tmp, "hostile.json")
        with open(path, "w") as f:
            json.dump(r, f)
        # one line a row (the layouts at 80 columns: tests/cli/frictions.py)
        wide = dict(os.environ, COLUMNS="200")
        p = subprocess.run([snapbench, "show", path], capture_output=True, text=True, timeout=60, env=wide)
        check(p.returncode == 0, "show REPORT: exit %d: %s" % (p.returncode, p.stderr))
        check_text(p.stdout, "show REPORT")
        os.makedirs(os.path.join(tmp, "runs", r["id"]))
        shutil.copy(path, os.path.join(tmp, "runs", r["id"], "report.json"))
        env = dict(wide, SNAPBENCH_SOCKET=os.path.join(tmp, "none.sock"))
        p = subprocess.run([snapbench, "show", r["id"], "--store", os.path.join(tmp, "runs")], env=env,
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "show RUN-ID --store: exit %d: %s" % (p.returncode, p.stderr))
        check_text(p.stdout, "show RUN-ID from the store")
        print("ok show escapes every field's controls and prints figures no run measures as n/a")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
