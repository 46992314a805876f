#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Socket activation through systemd-socket-activate, and the notify protocol.

systemd is not PID 1 on the machines this runs on, so systemd-socket-activate
(Debian's systemd package) plays systemd's part: it listens, and on the
first connection executes snapbenchd with the socket (LISTEN_FDS,
LISTEN_FDNAMES). snapbenchd must serve that socket, say so in status, leave
the socket file alone when it stops, and refuse a socket that is not a
listening stream socket. With NOTIFY_SOCKET set it sends READY=1 and STATUS=
lines, as Type=notify wants.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemonlib import Conn, Env, check, cmdline, log, skip, wait_for  # noqa: E402


def activated(env):
    d = env.daemon("act", activate=True).start(wait=False)
    wait_for(lambda: os.path.exists(d.sock), 30, "systemd-socket-activate to create %s" % d.sock)
    # nothing but the activator runs until the first client connects
    time.sleep(0.5)
    check(os.path.basename(os.readlink("/proc/%d/exe" % d.proc.pid)) == "systemd-socket-activate",
          "snapbenchd started before anyone connected")
    c = Conn(d.sock)
    st = c.call("status")
    check(st["ok"] and st["daemon"]["socket_activated"] is True, "status over the activated socket: %s" % st)
    check(st["daemon"]["pid"] == d.proc.pid, "pid %s is not the activator's %d: the socket came another way"
          % (st["daemon"]["pid"], d.proc.pid))
    c.close()
    rc, out, err = env.cli(d, "status", check_rc=0)
    check("socket-activated" in out, "status text:\n%s" % out)
    rc, out, err = env.cli(d, "list", "--json", check_rc=0)
    check(json.loads(out) == [], "list: %s" % out)
    check(d.stop() == 0, "snapbenchd's exit status after SIGTERM")
    check(os.path.exists(d.sock), "snapbenchd removed a socket it did not create")
    log("served a socket from systemd-socket-activate (pid %d), left its file alone" % d.proc.pid)


def wrong_socket(env):
    """A datagram socket is not one snapbenchd can serve: it says so and exits 1."""
    sock = os.path.join(env.tmp, "dgram.sock")
    state = os.path.join(env.tmp, "dgram-state")
    p = subprocess.Popen(["systemd-socket-activate", "--datagram", "-l", sock, env.snapbenchd, "--foreground",
                          "--state-dir", state], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=env.daemon_env())
    env.cleanups.append(lambda: p.poll() is None and p.kill())
    wait_for(lambda: os.path.exists(sock), 30, "the datagram socket")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(b"x", sock)  # the first datagram activates
    s.close()
    out, _ = p.communicate(timeout=30)
    check(p.returncode == 1 and "none of the 1 sockets passed is a listening unix stream socket" in out,
          "a datagram socket: exit %s:\n%s" % (p.returncode, out))
    log("a datagram socket from systemd: refused with exit 1")


def notify(env):
    path = os.path.join(env.tmp, "notify.sock")
    n = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    n.bind(path)
    n.settimeout(30)
    env.cleanups.append(n.close)
    d = env.daemon("notify")
    e = env.daemon_env()
    e["NOTIFY_SOCKET"] = path
    os.makedirs(d.state_dir)
    logf = open(d.log_path, "w")
    p = subprocess.Popen([env.snapbenchd, "--state-dir", d.state_dir, "--socket", d.sock], env=e,
                         stdout=logf, stderr=logf)
    logf.close()
    env.cleanups.append(lambda: p.poll() is None and p.kill())
    msgs = []
    while not any("READY=1" in m for m in msgs):
        msgs.append(n.recv(4096).decode())
    # under systemd (NOTIFY_SOCKET) snapbenchd stays in the foreground: no fork
    check(p.poll() is None, "snapbenchd exited or forked away under NOTIFY_SOCKET")
    check(Conn(d.sock).call("status")["ok"], "status after READY=1")
    while not any("STATUS=idle" in m for m in msgs):
        msgs.append(n.recv(4096).decode())
    p.send_signal(signal.SIGTERM)
    while not any("STOPPING=1" in m for m in msgs):
        msgs.append(n.recv(4096).decode())
    check(p.wait(30) == 0, "exit status after SIGTERM")
    log("notify: %s" % " | ".join(m.replace("\n", " ") for m in msgs))


def background(env):
    """Without --foreground snapbenchd returns once it serves, and a second one on the same state refuses."""
    d = env.daemon("bg")
    os.makedirs(d.state_dir)

    def kill_background():
        # whatever answers on our socket and holds our state directory is the one we started
        try:
            bg = Conn(d.sock, timeout=5).call("status")["daemon"]["pid"]
        except (OSError, KeyError, ValueError):
            return
        if d.state_dir in " ".join(cmdline(bg)):
            os.kill(bg, signal.SIGKILL)

    env.cleanups.append(kill_background)
    p = subprocess.run([env.snapbenchd, "--state-dir", d.state_dir, "--socket", d.sock], capture_output=True,
                       text=True, env=env.daemon_env(), timeout=120)
    check(p.returncode == 0 and "started (pid" in p.stdout and not p.stderr,
          "background start: %s %s" % (p.stdout, p.stderr))
    pid = int(p.stdout.split("pid ")[1].split(")")[0])
    st = Conn(d.sock).call("status")
    check(st["daemon"]["pid"] == pid, "status pid %s, printed %d" % (st["daemon"]["pid"], pid))
    p2 = subprocess.run([env.snapbenchd, "--foreground", "--state-dir", d.state_dir, "--socket", d.sock + "2"],
                        capture_output=True, text=True, env=env.daemon_env(), timeout=60)
    check(p2.returncode == 1 and "another snapbenchd uses this state directory" in p2.stderr,
          "second daemon on the same state: %d %s" % (p2.returncode, p2.stderr))
    p3 = subprocess.run([env.snapbenchd, "--foreground", "--state-dir", d.state_dir + "2", "--socket", d.sock],
                        capture_output=True, text=True, env=env.daemon_env(), timeout=60)
    check(p3.returncode == 1 and "another snapbenchd is listening there" in p3.stderr,
          "second daemon on the same socket: %d %s" % (p3.returncode, p3.stderr))
    os.kill(pid, signal.SIGTERM)
    wait_for(lambda: not os.path.exists("/proc/%d" % pid) or open("/proc/%d/stat" % pid).read().split(") ")[1][0] == "Z",
             60, "the background snapbenchd to exit")
    check(not os.path.exists(d.sock), "socket left behind by the background daemon")
    with open(os.path.join(d.state_dir, "snapbenchd.log")) as f:
        check("listening on %s" % d.sock in f.read(), "the background daemon's log")
    p4 = subprocess.run([env.snapbenchd, "--state-dir", d.state_dir + "3", "--socket", "/tmp/" + "x" * 200],
                        capture_output=True, text=True, env=env.daemon_env(), timeout=60)
    check(p4.returncode == 1 and "longer than" in p4.stderr, "background start that fails: %d %s" %
          (p4.returncode, p4.stderr))
    log("background start returns once serving (log in the state directory) or with the reason it failed; "
        "one daemon per state directory and per socket")


def body(env):
    if not shutil.which("systemd-socket-activate"):
        skip("systemd-socket-activate (Debian package systemd)")
    activated(env)
    wrong_socket(env)
    notify(env)
    background(env)


if __name__ == "__main__":
    Env("activation", sys.argv).run(body)
