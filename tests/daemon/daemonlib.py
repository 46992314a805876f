# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared helpers of the snapbenchd integration tests (tests/daemon/).

Each test starts its own snapbenchd on a private socket and state directory
(under a fresh temporary directory), talks to it with the real snapbench CLI
and with raw sockets, and cleans up on every path: the daemons it started,
any QEMU whose command line names one of its runs, the temporary directory.
Processes are only ever signalled by the pids this harness started or read
from its own runs' reports, never by name.

Usage from a test: env = Env("name", sys.argv); ...; env.finish().
The build paths come from argv: SNAPBENCHD SNAPBENCH WORKER VALIDATOR SCHEMA.
"""

import atexit
import fcntl
import grp
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77

# Short runs: the micro guest with 64 MiB, one-second windows.
def kvm_usable():
    """/dev/kvm opens for us: the guests run under KVM; else under TCG (tests/lib/test-accel.h)."""
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC))
        return True
    except OSError:
        return False


ACCEL = "kvm" if kvm_usable() else "tcg"

SHORT_SPEC = {
    "repetitions": 1,
    # without /dev/kvm the daemon's flows run the guest under TCG here (a host VM for each run would
    # cost a boot a run; hostvm-daemon runs them in host VMs)
    "vm": {"memory": 64 << 20, "vcpus": 1, "accel": ACCEL},
    "timing": {"warmup_s": 1, "pre_s": 1, "post_s": 1, "interval_ms": 250},
}


def log(*args):
    print("[%7.2f]" % (time.monotonic() - _T0), *args, flush=True)


_T0 = time.monotonic()


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def skip(feature):
    print("SKIP: this machine lacks %s" % feature, flush=True)
    sys.exit(SKIP)


def spec(**over):
    """SHORT_SPEC with top-level or "section.field" overrides."""
    s = json.loads(json.dumps(SHORT_SPEC))
    for k, v in over.items():
        k = k.replace("__", ".")
        if "." in k:
            sec, field = k.split(".", 1)
            s.setdefault(sec, {})[field] = v
        else:
            s[k] = v
    return s


def wait_for(cond, timeout, what, interval=0.2):
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise Fail("timed out after %gs waiting for %s" % (timeout, what))
        time.sleep(interval)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is dead for our purposes
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def processes_naming(needle):
    """Pids of the processes whose command line contains needle."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            if any(needle in a for a in cmdline(int(d))):
                out.append(int(d))
    return out


KNOB_LOCK = "/run/snapbench/knobs.lock"


class KnobLock:
    """The host-wide knob lock (runner/knobs.h), which every run that sets knobs
    holds meanwhile, whatever its state directory. A test reads an original
    value, checks a restored one or writes one itself only while holding it,
    so that no run on this host (the test's daemon's, or another one) changes
    the knob meanwhile. Waits up to timeout seconds for it."""

    def __init__(self, who, timeout=600):
        self.who, self.timeout, self.fd, self.wrote = who, timeout, None, False

    def __enter__(self):
        os.makedirs(os.path.dirname(KNOB_LOCK), mode=0o755, exist_ok=True)
        self.fd = os.open(KNOB_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    holder = os.pread(self.fd, 8192, 0).decode(errors="replace")
                    os.close(self.fd)
                    raise Fail("the host-wide knob lock %s stayed held for %d s (record: %s)" %
                               (KNOB_LOCK, self.timeout, holder or "none"))
                time.sleep(0.1)
        # a record left by a run that died stays: the next run restores that run's knobs from it
        if os.fstat(self.fd).st_size == 0:
            os.pwrite(self.fd, json.dumps({"pid": os.getpid(), "run": self.who, "state_dir": ""}).encode(), 0)
            self.wrote = True
        return self

    def __exit__(self, *exc):
        if self.wrote:
            os.ftruncate(self.fd, 0)
        os.close(self.fd)
        return False


def read_knob_locked(path, who):
    """A sysctl's value while no run on this host has it changed."""
    with KnobLock(who):
        with open(path) as f:
            return f.read().strip()


def restore_knob(path, value, who):
    """Writes value unless the sysctl has it already, under the host-wide knob lock."""
    with KnobLock(who):
        with open(path) as f:
            if f.read().strip() == value:
                return
        with open(path, "w") as f:
            f.write(value)


def make_account(env, kind, name, *args):
    """A test user or group (useradd/groupadd), removed at the end, also on failure."""
    tool = {"user": ("useradd", "userdel"), "group": ("groupadd", "groupdel")}[kind]
    p = subprocess.run([tool[0]] + list(args) + [name], capture_output=True, text=True)
    if p.returncode != 0:
        skip("%s (%s %s failed: %s)" % (tool[0], tool[0], name, p.stderr.strip()))
    env.cleanups.append(lambda: subprocess.run([tool[1], name], capture_output=True))


def as_user(name):
    """(uid, gid, supplementary gids) of a user, for Env.cli(user=...) and connect_as()."""
    pw = pwd.getpwnam(name)
    groups = [g.gr_gid for g in grp.getgrall() if name in g.gr_mem]
    return (pw.pw_uid, pw.pw_gid, groups)


def connect_as(path, user):
    """A Conn whose peer credentials are user's: a child takes the user's ids, connects, and hands
    the socket back (SO_PEERCRED is the connecting process's)."""
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            parent.close()
            uid, gid, groups = user
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            socket.send_fds(child, [b"x"], [s.fileno()])
            code = 0
        finally:
            os._exit(code)
    child.close()
    try:
        _, fds, _, _ = socket.recv_fds(parent, 1, 1)
    finally:
        parent.close()
        os.waitpid(pid, 0)
    check(fds, "could not connect to %s as uid %d" % (path, user[0]))
    return Conn(path, sock=socket.socket(fileno=fds[0]))


class Conn:
    """A raw protocol connection (newline-delimited JSON)."""

    def __init__(self, path, timeout=30, sock=None):
        if sock is None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            sock.connect(path)
        self.s = sock
        self.s.settimeout(timeout)
        self.buf = b""
        self.next_id = 1

    def send_raw(self, data):
        self.s.sendall(data)

    def read(self, timeout=30):
        self.s.settimeout(timeout)
        while b"\n" not in self.buf:
            chunk = self.s.recv(1 << 16)
            if not chunk:
                raise EOFError("snapbenchd closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, op, **fields):
        rid = self.next_id
        self.next_id += 1
        req = {"v": 1, "id": rid, "op": op}
        req.update(fields)
        self.send_raw((json.dumps(req) + "\n").encode())
        while True:
            m = self.read()
            if "ok" in m and m.get("id") in (rid, None):
                return m

    def closed_by_peer(self, timeout=10):
        """True once the daemon closed the connection (after any pending lines)."""
        self.s.settimeout(timeout)
        try:
            while True:
                chunk = self.s.recv(1 << 16)
                if not chunk:
                    return True
                self.buf += chunk
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False

    def close(self):
        self.s.close()


class Daemon:
    def __init__(self, env, state_dir, sock, args=(), activate=False, name="snapbenchd"):
        self.env, self.state_dir, self.sock = env, state_dir, sock
        self.args, self.activate, self.name = list(args), activate, name
        self.proc = None
        self.log_path = os.path.join(env.tmp, "%s.log" % name)

    def start(self, wait=True):
        os.makedirs(self.state_dir, exist_ok=True)
        argv = [self.env.snapbenchd, "--foreground", "--state-dir", self.state_dir] + self.args
        if self.activate:
            argv = ["systemd-socket-activate", "-l", self.sock, "--fdname=snapbenchd"] + argv
        else:
            argv += ["--socket", self.sock]
        logf = open(self.log_path, "a")
        self.proc = subprocess.Popen(argv, stdout=logf, stderr=logf, env=self.env.daemon_env(),
                                     start_new_session=True)
        logf.close()
        self.env.daemons.append(self)
        if wait:
            wait_for(self.connectable, 90, "snapbenchd to listen on %s" % self.sock)
        return self

    def connectable(self):
        if self.proc.poll() is not None and not self.activate:
            raise Fail("snapbenchd exited with %s:\n%s" % (self.proc.returncode, self.log()))
        try:
            c = Conn(self.sock, timeout=5)
            c.close()
            return True
        except OSError:
            return False

    def log(self):
        try:
            with open(self.log_path) as f:
                return f.read()
        except OSError:
            return ""

    def conn(self):
        return Conn(self.sock)

    def status(self):
        c = self.conn()
        try:
            r = c.call("status")
        finally:
            c.close()
        check(r["ok"], "status failed: %s" % r)
        return r

    def stop(self, timeout=120):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise Fail("snapbenchd did not stop within %ds of SIGTERM" % timeout)
        return self.proc.returncode if self.proc else None

    def kill9(self):
        self.proc.kill()
        self.proc.wait()


class Env:
    def __init__(self, name, argv):
        if len(argv) < 6:
            print("usage: %s SNAPBENCHD SNAPBENCH WORKER VALIDATOR SCHEMA" % argv[0])
            sys.exit(2)
        self.snapbenchd, self.snapbench, self.worker, self.validator, self.schema = argv[1:6]
        self.extra = argv[6:]
        if os.geteuid() != 0:
            skip("root (snapbenchd runs QEMU with KVM, BPF probes and knobs as root)")
        self.tmp = tempfile.mkdtemp(prefix="snapbench-test-daemon-%s-" % name)
        os.chmod(self.tmp, 0o755)  # other users' clients must reach the socket
        self.daemons = []
        self.run_ids = set()
        self.cleanups = []
        self.restores = []  # after the daemons and their runs are gone: put back what a killed run left set
        self.failed = False
        atexit.register(self.cleanup)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, sig, frame):
        self.cleanup()
        sys.exit(128 + sig)

    def daemon_env(self):
        e = dict(os.environ)
        e["SNAPBENCH_WORKER"] = self.worker
        e.pop("NOTIFY_SOCKET", None)
        e.pop("LISTEN_FDS", None)
        return e

    def daemon(self, sub="d", args=(), activate=False):
        state = os.path.join(self.tmp, sub, "state")
        sock = os.path.join(self.tmp, sub, "sock")
        return Daemon(self, state, sock, args, activate, name=sub)

    def cli(self, d, *args, user=None, check_rc=None, timeout=600, stdin=None, extra_env=None):
        """Runs snapbench with the daemon's socket; returns (rc, stdout, stderr)."""
        e = dict(os.environ)
        e["SNAPBENCH_SOCKET"] = d.sock
        e.update(extra_env or {})
        argv = [self.snapbench] + list(args)
        kw = {}
        if user is not None:
            kw["user"], kw["group"], kw["extra_groups"] = user
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=e, stdin=stdin, **kw)
        if check_rc is not None and p.returncode != check_rc:
            raise Fail("snapbench %s exited %d, expected %d:\nstdout: %s\nstderr: %s" %
                       (" ".join(args), p.returncode, check_rc, p.stdout, p.stderr))
        return p.returncode, p.stdout, p.stderr

    def submit(self, d, spec_obj, conn=None):
        c = conn or d.conn()
        try:
            r = c.call("submit", spec=spec_obj)
        finally:
            if conn is None:
                c.close()
        check(r["ok"], "submit failed: %s" % r)
        rid = r["run"]["id"]
        self.run_ids.add(rid)
        return rid

    def report(self, d, rid):
        with open(os.path.join(d.state_dir, "runs", rid, "report.json")) as f:
            return json.load(f)

    def validate(self, d, rid):
        path = os.path.join(d.state_dir, "runs", rid, "report.json")
        p = subprocess.run(["/usr/bin/python3", self.validator, self.schema, path],
                           capture_output=True, text=True)
        check(p.returncode == 0, "report %s does not validate:\n%s%s" % (path, p.stdout, p.stderr))

    def qemu_pids_of(self, rid):
        """QEMU processes of run rid: by the -name the runner gives them (snapbench-ID-repN)."""
        return [p for p in processes_naming(rid) if os.path.basename(cmdline(p)[0]).startswith("qemu-system")]

    def check_no_qemu(self, d, rid):
        left = self.qemu_pids_of(rid)
        check(not left, "QEMU of run %s still running: pids %s" % (rid, left))
        try:
            rep = self.report(d, rid)
        except (OSError, ValueError):
            return
        for r in rep.get("repetitions", []):
            pid = (r.get("vm") or {}).get("pid")
            check(not (pid and pid_alive(pid) and rid in " ".join(cmdline(pid))),
                  "QEMU pid %s of run %s is alive" % (pid, rid))

    def cleanup(self):
        for fn in reversed(self.cleanups):
            try:
                fn()
            except Exception as e:  # cleanup goes on whatever happened
                print("cleanup: %s" % e, file=sys.stderr)
        self.cleanups = []
        for d in self.daemons:
            if d.proc and d.proc.poll() is None:
                d.proc.kill()
                d.proc.wait()
        # workers and QEMUs of our runs that survived (they should not)
        for rid in self.run_ids:
            for pid in processes_naming(rid):
                try:
                    os.kill(pid, signal.SIGKILL)
                    print("cleanup: killed pid %d of run %s" % (pid, rid), file=sys.stderr)
                except OSError:
                    pass
        self.run_ids = set()
        self.daemons = []
        for fn in reversed(self.restores):
            try:
                fn()
            except Exception as e:
                print("cleanup: %s" % e, file=sys.stderr)
        self.restores = []
        if self.tmp and os.path.isdir(self.tmp):
            if self.failed and os.environ.get("SNAPBENCH_TEST_KEEP"):
                print("kept %s" % self.tmp, file=sys.stderr)
            else:
                shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp = None

    def run(self, fn):
        """Runs the test body; prints daemon logs on failure; exits 0/1/77."""
        try:
            fn(self)
        except Fail as e:
            self.failed = True
            print("FAIL: %s" % e, flush=True)
            for d in self.daemons:
                print("--- %s log:\n%s" % (d.name, d.log()), flush=True)
            self.cleanup()
            sys.exit(1)
        except Exception:
            self.failed = True
            for d in self.daemons:
                print("--- %s log:\n%s" % (d.name, d.log()), flush=True)
            self.cleanup()
            raise
        self.cleanup()
        sys.exit(0)


def qemu_or_skip():
    if not shutil.which("qemu-system-x86_64"):
        skip("qemu-system-x86_64")
    if not kvm_usable():
        log("no /dev/kvm: the runs' guests run under TCG (spec vm.accel tcg)")
