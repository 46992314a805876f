#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A real LAVA job with lava-run (lava-dispatcher): the device and job
templates of lava/ rendered, a DUT of device type qemu booting Debian's
packaged kernel under TCG (svm emulated, so KVM runs inside) with the ramdisk
snapbench-lava-ramdisk writes (this host's / as its root), and what comes
back (docs/lava.md, docs/testing.md).

    lava-run.py CASE SNAPBENCH RAMDISK_TOOL INIT LAVA_DIR

CASE is one of
  job    the test definition lava/snapbench.yaml runs a 1-repetition
         background snapshot in the DUT: the job passes, the log has the
         preflight and run test cases passed and each headline figure of the
         arm's test set with its measurement and unit, import-lava writes
         the run into a store, byte for byte the report.json the DUT wrote
         (on a writable 9p share), with the job id, device and device type in
         its origin.json, and compare reads the imported run against the DUT's
         file;
  panic  the DUT's kernel panics (sysrq) while it prints a report: the job
         does not pass, import-lava exits 2 naming the panic, and nothing is
         written to the store.

Skips (77) without lava-run or the test kernel (scripts/install-deps,
scripts/fetch-test-kernel): on this project's CI both are installed, so the
skip is for other machines only.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

JOB_ID = {"job": 4801, "panic": 4802}
DEVICE = "snapbench-dut-01"
PROMPT = "snapbench-dut# "


def log(*args):
    print("lava-run:", *args, flush=True)


def fail(msg):
    print("lava-run: FAIL:", msg, flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def skip(msg):
    print("lava-run: SKIP:", msg, flush=True)
    sys.exit(77)


def test_kernel():
    cache = os.environ.get("SNAPBENCH_KERNEL_CACHE", "/var/cache/snapbench/kernels")
    images = sorted(glob.glob(os.path.join(cache, "current", "boot", "vmlinuz-*")))
    if not images:
        skip("no test kernel in %s/current (scripts/fetch-test-kernel fetches Debian's)" % cache)
    return os.path.realpath(images[0])


def render(path, fields):
    with open(path) as f:
        text = f.read()
    for k, v in fields.items():
        text = text.replace("{{ %s }}" % k, str(v))
    if "{{" in text:
        fail("%s: a field is left: %s" % (path, text[text.index("{{"):][:40]))
    return text


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def records(path):
    """The log's records: lava-run prints one flow mapping a line, with YAML's ! tags."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("{"):
                try:
                    out.append(yaml.safe_load(line))
                except yaml.YAMLError:
                    pass
    return out


def lava_run(tmp, name, device_text, job_text, timeout_s):
    device = write(os.path.join(tmp, name + "-device.yaml"), device_text)
    job = write(os.path.join(tmp, name + "-job.yaml"), job_text)
    out = os.path.join(tmp, name + "-lava")
    logpath = os.path.join(tmp, name + ".log")
    argv = ["lava-run", "--job-id", str(JOB_ID[name]), "--output-dir", out, "--device", device, job]
    log(" ".join(argv))
    with open(logpath, "w") as f:
        try:
            p = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, timeout=timeout_s, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            fail("lava-run did not finish in %d s; the log: %s" % (timeout_s, logpath))
    recs = records(logpath)
    job_result = [r["msg"] for r in recs if r.get("lvl") == "results" and isinstance(r.get("msg"), dict)
                  and r["msg"].get("case") == "job"]
    log("exit %d, %d records, job result %s" % (p.returncode, len(recs), job_result))
    return logpath, recs, job_result


def console_tail(recs, chars=6000):
    """The DUT's console, its last chars: what a failure message shows."""
    return "\n".join(str(r.get("msg")) for r in recs if r.get("lvl") == "target")[-chars:]


def setup(tmp, snapbench, tool, init, lava_dir, test_def_text, spec_path, output):
    kernel = test_kernel()
    share = os.path.join(tmp, "out")
    os.makedirs(share)
    ramdisk = os.path.join(tmp, "ramdisk.cpio")
    p = subprocess.run([tool, "--kernel", kernel, "--init", init, "--share", "out:/mnt/out", "--prompt", PROMPT,
                        "--output", ramdisk], capture_output=True, text=True)
    check(p.returncode == 0, "snapbench-lava-ramdisk: exit %d: %s" % (p.returncode, p.stderr))
    log(p.stdout.strip())
    device_text = render(os.path.join(lava_dir, "device-qemu.yaml"), {
        "qemu": "qemu-system-x86_64", "accel": "tcg,thread=single", "memory_mib": 2048, "vcpus": 2,
        "out_dir": share})
    job_text = render(os.path.join(lava_dir, "job-qemu.yaml"), {
        "kernel_url": "file://" + kernel, "ramdisk_url": "file://" + ramdisk,
        # the shadow MMU: nested NPT under TCG sometimes resets the guest (docs/kernel-arms.md)
        "kernel_args": "kvm_amd.npt=0",
        "test_definition": json.dumps(yaml.safe_load(test_def_text)),
        "spec": spec_path, "output": output, "snapbench": snapbench,
        "lava_run": os.path.join(lava_dir, "snapbench-lava-run"),
        "device": DEVICE, "device_type": "qemu", "timeout_minutes": 15})
    return share, device_text, job_text


def case_job(tmp, snapbench, tool, init, lava_dir):
    spec = {
        "description": "a LAVA job's run on its DUT",
        "repetitions": 1,
        "arms": [{"label": "dut"}],
        "vm": {"memory": "64M", "vcpus": 1},
        "timing": {"warmup_s": 1, "pre_s": 2, "post_s": 2, "interval_ms": 500},
    }
    spec_path = write(os.path.join(tmp, "spec.json"), json.dumps(spec))
    with open(os.path.join(lava_dir, "snapbench.yaml")) as f:
        test_def = f.read()
    share, device_text, job_text = setup(tmp, snapbench, tool, init, lava_dir, test_def, spec_path, "/mnt/out")
    logpath, recs, job_result = lava_run(tmp, "job", device_text, job_text, 1500)
    check(job_result and job_result[-1].get("result") == "pass",
          "the job did not pass: %s\nconsole:\n%s" % (job_result, console_tail(recs)))

    cases = {}
    for r in recs:
        m = r.get("msg")
        if r.get("lvl") == "results" and isinstance(m, dict) and m.get("definition", "").endswith("_snapbench"):
            cases[(m.get("set"), m["case"])] = m
    log("%d test cases: %s" % (len(cases), sorted("%s/%s" % k for k in cases)))
    for name in ("preflight", "run"):
        c = cases.get((None, name))
        check(c and c["result"] == "pass", "test case %s: %s\nconsole:\n%s" % (name, c, console_tail(recs)))
    for metric, unit in (("pf_per_s", "1/s"), ("invalidations_per_s", "1/s"), ("latency_p99_ns", "ns")):
        for window in ("pre", "snapshot", "post"):
            c = cases.get(("dut", "rep0.%s.%s" % (window, metric)))
            check(c is not None, "no test case rep0.%s.%s in test set dut: %s" % (window, metric, sorted(map(str, cases))))
            check(c["result"] == "skip" or (c["result"] == "pass" and c.get("units") == unit
                                            and float(c["measurement"]) >= 0),
                  "rep0.%s.%s: %s" % (window, metric, c))
    snap = cases[("dut", "rep0.snapshot.invalidations_per_s")]
    check(snap["result"] == "pass" and float(snap["measurement"]) > 0,
          "no MMU-notifier invalidations measured in the DUT's snapshot window: %s" % snap)

    dut_reports = glob.glob(os.path.join(share, "lava.*", "*", "report.json"))
    check(len(dut_reports) == 1, "the DUT wrote %s" % dut_reports)
    with open(dut_reports[0], "rb") as f:
        dut_data = f.read()
    run_id = json.loads(dut_data)["id"]
    store = os.path.join(tmp, "store")
    p = subprocess.run([snapbench, "import-lava", "--store", store, logpath], capture_output=True, text=True)
    check(p.returncode == 0, "import-lava: exit %d: %s" % (p.returncode, p.stderr))
    log(p.stdout.strip())
    with open(os.path.join(store, run_id, "report.json"), "rb") as f:
        check(f.read() == dut_data, "the imported report.json is not byte for byte the DUT's")
    with open(os.path.join(store, run_id, "origin.json")) as f:
        origin = json.load(f)
    check(origin["lava"] == {"job_id": str(JOB_ID["job"]), "device": DEVICE, "device_type": "qemu"},
          "origin.json: %s" % origin)
    rep = json.loads(dut_data)
    check(rep["state"] == "completed", "the DUT's run: %s (%s)" % (rep["state"], rep.get("error")))
    check(rep["host"]["kernel_release"] in test_kernel(), "the DUT's kernel: %s" % rep["host"]["kernel_release"])
    p = subprocess.run([snapbench, "compare", "--json", "--store", store, "--baseline", "label=dut",
                        "--patched", dut_reports[0]], capture_output=True, text=True)
    check(p.returncode == 0, "compare of the imported run: exit %d: %s" % (p.returncode, p.stderr))
    doc = json.loads(p.stdout)
    ids = [r["id"] for side in ("baseline", "patched") for r in doc["inputs"][side]["reports"]]
    check(ids == [run_id, run_id], "compare read %s" % ids)
    log("run %s: %d bytes byte for byte, %d test cases, snapshot invalidations/s %s" % (
        run_id, len(dut_data), len(cases), snap["measurement"]))


def case_panic(tmp, snapbench, tool, init, lava_dir, testdata):
    fixture = os.path.join(testdata, "stock.json")
    test_def = yaml.safe_dump({
        "metadata": {"format": "Lava-Test Test Definition 1.0", "name": "snapbench",
                     "description": "a DUT whose kernel panics while it prints the report"},
        "run": {"steps": [
            # the report's first lines reach the console, then the kernel panics
            "%s %s job=${LAVA_JOB_ID} | head -n 4" % (os.path.join(lava_dir, "snapbench-lava-report"), fixture),
            "echo c > /proc/sysrq-trigger",
        ]}})
    share, device_text, job_text = setup(tmp, snapbench, tool, init, lava_dir, test_def, fixture, "/mnt/out")
    logpath, recs, job_result = lava_run(tmp, "panic", device_text, job_text, 600)
    check(not job_result or job_result[-1].get("result") != "pass", "the job passed: %s" % job_result)
    console = console_tail(recs)
    check("Kernel panic - not syncing" in console, "no panic on the console:\n%s" % console)
    store = os.path.join(tmp, "store")
    p = subprocess.run([snapbench, "import-lava", "--store", store, logpath], capture_output=True, text=True)
    check(p.returncode == 2, "import-lava: exit %d, expected 2: %s %s" % (p.returncode, p.stdout, p.stderr))
    check("panicked" in p.stderr and "Kernel panic - not syncing" in p.stderr and "did not come back" in p.stderr,
          "import-lava's error does not name the panic: %s" % p.stderr)
    entries = os.listdir(store) if os.path.isdir(store) else []
    check(entries == [], "the store: %s" % entries)
    log("import-lava: %s" % p.stderr.strip())


def main():
    if len(sys.argv) != 7:
        fail("usage: lava-run.py job|panic SNAPBENCH RAMDISK_TOOL INIT LAVA_DIR TESTDATA")
    # meson gives build-tree paths relative to the build directory: the DUT's shell runs elsewhere
    case, snapbench, tool, init, lava_dir, testdata = (sys.argv[1],) + tuple(os.path.abspath(a) for a in sys.argv[2:])
    if not shutil.which("lava-run"):
        skip("lava-run is not installed (scripts/install-deps installs lava-dispatcher)")
    if os.geteuid() != 0:
        skip("lava-run boots QEMU with this host's / as the DUT's root: run as root")
    tmp = tempfile.mkdtemp(prefix="snapbench-lava-")
    try:
        if case == "job":
            case_job(tmp, snapbench, tool, init, lava_dir)
        else:
            case_panic(tmp, snapbench, tool, init, lava_dir, testdata)
    finally:
        if os.environ.get("SNAPBENCH_KEEP_TMP"):
            log("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    log("OK")


if __name__ == "__main__":
    main()
