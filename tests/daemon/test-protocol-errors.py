#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Malformed and hostile clients get errors, and snapbenchd keeps serving.

Invalid JSON, wrong types, unknown ops and fields, bad ids, invalid specs:
each gets an error reply naming the field, and the connection goes on. A
10 MiB line, a client sending one byte a second, an idle client, a client
that never reads its replies, and one connection too many are cut off with
an error while another client is served all along. No run executes here
(every submit is invalid), so this needs neither KVM nor QEMU.
"""

import fcntl
import json
import os
import shutil
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemonlib import Conn, Env, check, log, wait_for  # noqa: E402

MAX_CONNECTIONS = 8
REQUEST_TIMEOUT = 3
IDLE_TIMEOUT = 6
WRITE_TIMEOUT = 4

CASES = [
    # (line, code, field, text in the message, id echoed)
    (b"not json", "bad-json", None, "invalid JSON", None),
    (b'{"v": 1, "op": "status"', "bad-json", None, "ends inside", None),
    (b"[1, 2]", "bad-json", None, "must be a JSON object", None),
    (b'{"v": 1, "op": "status", "x": "\xff\xfe"}', "bad-json", None, "invalid JSON", None),
    (b'{"a":' + b"[" * 40 + b"]" * 40 + b"}", "bad-json", None, "invalid JSON", None),
    # what json-c lets through and docs/protocol.md refuses: an overlong "/" (C0 AF), an encoded
    # surrogate (ED A0 80), a code point past U+10FFFF, and a \u0000 that would cut "status\u0000evil"
    # to "status" for C code (it used to run status)
    (b'{"v": 1, "op": "status", "x": "\xc0\xaf"}', "bad-json", None, "invalid UTF-8 at byte 31", None),
    (b'{"v": 1, "op": "status", "x": "\xed\xa0\x80"}', "bad-json", None, "invalid UTF-8 at byte 31", None),
    (b'{"v": 1, "op": "status", "x": "\xf4\x90\x80\x80"}', "bad-json", None, "invalid UTF-8", None),
    (b'{"v": 1, "op": "status\\u0000evil"}', "bad-json", None, "holds \\u0000", None),
    (b'{"v": 1, "op\\u0000x": "status"}', "bad-json", None, "holds \\u0000", None),
    (b'{"op": "status", "id": 1}', "bad-request", "v", "missing", 1),
    (b'{"v": "1", "op": "status", "id": 2}', "bad-request", "v", "must be an integer", 2),
    (b'{"v": 2, "op": "status", "id": 3}', "unsupported-version", "v", "speaks version 1", 3),
    (b'{"v": 1, "op": "reboot", "id": "r"}', "unknown-op", "op", "unknown operation 'reboot'", "r"),
    (b'{"v": 1, "op": 7}', "bad-request", "op", "must be a string", None),
    (b'{"v": 1, "op": "status", "id": {"x": 1}}', "bad-request", "id", "integer or a string", None),
    (b'{"v": 1, "op": "show", "id": 4}', "bad-request", "run", "missing", 4),
    (b'{"v": 1, "op": "show", "run": 42}', "bad-request", "run", "must be a string", None),
    (b'{"v": 1, "op": "show", "run": "../../etc/passwd"}', "bad-request", "run", "not a run id", None),
    (b'{"v": 1, "op": "show", "run": "20200101T000000Z-000000"}', "not-found", "run", "no such run", None),
    (b'{"v": 1, "op": "logs", "run": "20200101T000000Z-000000", "max_bytes": "lots"}', "bad-request",
     "max_bytes", "must be an integer", None),
    (b'{"v": 1, "op": "list", "limit": -1}', "bad-request", "limit", "from 0 to", None),
    (b'{"v": 1, "op": "list", "state": "sleeping"}', "bad-request", "state", "not a run state", None),
    (b'{"v": 1, "op": "list", "lable": "x"}', "bad-request", "lable", "unknown field", None),
    (b'{"v": 1, "op": "show", "run": "20200101T000000Z-000000", "timeline": "yes"}', "bad-request",
     "timeline", "true or false", None),
    (b'{"v": 1, "op": "submit"}', "bad-request", "spec", "missing", None),
    (b'{"v": 1, "op": "submit", "spec": [1]}', "bad-request", "spec", "must be a JSON object", None),
    (b'{"v": 1, "op": "submit", "spec": {"vm": {"vcpus": "many"}}}', "invalid-spec", "spec", "vm.vcpus", None),
    (b'{"v": 1, "op": "submit", "spec": {"repetitions": 2, "colour": "red"}}', "invalid-spec", "spec",
     "colour", None),
    (b'{"v": 1, "op": "submit", "spec": {"repetitions": 0}}', "invalid-spec", "spec", "repetitions", None),
    (b'{"v": 1, "op": "cancel", "run": "20200101T000000Z-000000"}', "not-found", "run", "no such run", None),
    (b'{"v": 1, "op": "watch", "run": "20200101T000000Z-000000"}', "not-found", "run", "no such run", None),
]


def malformed(d):
    c = d.conn()
    for line, code, field, text, rid in CASES:
        c.send_raw(line + b"\n")
        r = c.read()
        err = r.get("error") or {}
        check(r.get("ok") is False and err.get("code") == code,
              "%r: expected %s, got %s" % (line[:80], code, r))
        check(err.get("field") == field, "%r: field %s, expected %s" % (line[:80], err.get("field"), field))
        check(text in err.get("message", ""), "%r: %r not in %r" % (line[:80], text, err.get("message")))
        check(r.get("id") == rid, "%r: id %r, expected %r" % (line[:80], r.get("id"), rid))
        check(r.get("v") == 1, "reply without v: %s" % r)
    # the same connection still serves
    check(c.call("status")["ok"], "status after the malformed requests")

    # pipelined requests, CRLF endings and blank lines
    c.send_raw(b'{"v":1,"id":10,"op":"status"}\r\n\n{"v":1,"id":11,"op":"list"}\n')
    a, b = c.read(), c.read()
    check(a.get("id") == 10 and a["ok"] and b.get("id") == 11 and b["ok"], "pipelined: %s %s" % (a, b))
    c.close()
    log("%d malformed requests answered with the right error; the connection kept serving" % len(CASES))

    # a request without its newline, then EOF (printf ... | socat): answered
    s = socket.socket(socket.AF_UNIX)
    s.connect(d.sock)
    s.sendall(b'{"v":1,"id":"eof","op":"status"}')
    s.shutdown(socket.SHUT_WR)
    data = b""
    s.settimeout(10)
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    r = json.loads(data.split(b"\n")[0])
    check(r.get("id") == "eof" and r["ok"], "request ended by EOF: %s" % data[:200])


class Prober:
    """Another client that asks for status while a hostile one misbehaves."""

    def __init__(self, d):
        self.c = d.conn()
        self.latencies = []

    def probe(self, n=3):
        for _ in range(n):
            t = time.monotonic()
            r = self.c.call("status")
            self.latencies.append(time.monotonic() - t)
            check(r["ok"], "status while another client misbehaves: %s" % r)

    def close(self):
        self.c.close()
        return max(self.latencies) if self.latencies else 0


def huge_line(d):
    p = Prober(d)
    for terminated in (False, True):
        c = d.conn()
        result = {}

        def send():
            try:
                chunk = b"x" * (1 << 20)
                for _ in range(10):
                    c.s.sendall(chunk)
                if terminated:
                    c.s.sendall(b"\n")
                result["sent"] = True
            except OSError as e:  # the daemon closed the connection: expected
                result["error"] = e

        t = threading.Thread(target=send)
        t.start()
        r = c.read(timeout=30)
        err = r.get("error") or {}
        check(err.get("code") == "too-large" and "1048576" in err.get("message", ""), "10 MiB line: %s" % r)
        p.probe()
        check(c.closed_by_peer(), "connection not closed after a 10 MiB line")
        t.join(30)
        c.close()
    log("10 MiB lines: too-large, connection closed; status meanwhile answered in <= %.3f s" % p.close())


def slow_client(d):
    p = Prober(d)
    c = d.conn()
    stop = threading.Event()

    def drip():
        try:
            for b in b'{"v": 1, "op": "status"}':
                if stop.is_set():
                    return
                c.s.sendall(bytes([b]))
                time.sleep(1)
        except OSError:
            pass

    t = threading.Thread(target=drip)
    t.start()
    start = time.monotonic()
    while time.monotonic() - start < REQUEST_TIMEOUT - 1:
        p.probe(1)
        time.sleep(0.3)
    r = c.read(timeout=REQUEST_TIMEOUT + 10)
    elapsed = time.monotonic() - start
    stop.set()
    err = r.get("error") or {}
    check(err.get("code") == "timeout" and "not completed" in err.get("message", ""), "slow client: %s" % r)
    check(c.closed_by_peer(), "slow client's connection not closed")
    t.join(10)
    c.close()
    log("one byte a second: cut off after %.1f s (--request-timeout %d); status meanwhile in <= %.3f s"
        % (elapsed, REQUEST_TIMEOUT, p.close()))


def idle_client(d):
    c = d.conn()
    start = time.monotonic()
    r = c.read(timeout=IDLE_TIMEOUT + 10)
    check((r.get("error") or {}).get("code") == "timeout" and "idle" in r["error"]["message"], "idle: %s" % r)
    check(c.closed_by_peer(), "idle connection not closed")
    c.close()
    log("idle client closed after %.1f s (--idle-timeout %d)" % (time.monotonic() - start, IDLE_TIMEOUT))


def non_reader(d):
    """Floods requests and never reads a reply: dropped, while others are served."""
    p = Prober(d)
    c = d.conn()
    result = {}

    def flood():
        line = b'{"v":1,"op":"status"}\n'
        try:
            for _ in range(200):
                c.s.sendall(line * 1000)
            result["done"] = True
        except OSError as e:
            result["error"] = e

    t = threading.Thread(target=flood)
    t.start()
    start = time.monotonic()
    while t.is_alive() and time.monotonic() - start < WRITE_TIMEOUT + 20:
        p.probe(1)
        time.sleep(0.5)
    t.join(5)
    check("error" in result, "a client reading nothing was not dropped (sent everything: %s)" % result)
    c.close()
    log("client reading none of its replies dropped after %.1f s (--write-timeout %d); status meanwhile in <= %.3f s"
        % (time.monotonic() - start, WRITE_TIMEOUT, p.close()))


def connection_count(d):
    """The daemon's connection count, or None while it still refuses (closes not yet seen)."""
    try:
        c = d.conn()
        r = c.call("status")
        c.close()
    except OSError:
        return None
    return r["daemon"]["connections"] if r.get("ok") else None


def too_many(d):
    conns = []
    wait_for(lambda: connection_count(d) == 1, 10, "earlier connections to be closed")
    try:
        for _ in range(MAX_CONNECTIONS):
            # a connection counts once the daemon accepted it; the one just closed may not be seen yet
            def one():
                c = d.conn()
                r = c.call("status")
                if r.get("ok"):
                    return c
                c.close()
                return None
            conns.append(wait_for(one, 10, "connection %d" % (len(conns) + 1)))
        extra = Conn(d.sock)
        r = extra.read(timeout=10)
        check((r.get("error") or {}).get("code") == "busy" and "max-connections" in r["error"]["message"],
              "connection %d: %s" % (MAX_CONNECTIONS + 1, r))
        check(extra.closed_by_peer(), "the extra connection was not closed")
        extra.close()
    finally:
        for c in conns:
            c.close()
    wait_for(lambda: connection_count(d) == 1, 10, "closed connections to be noticed")
    log("connection %d refused with busy; served again once others closed" % (MAX_CONNECTIONS + 1))


def planted_files(d):
    """A FIFO or a symlink at a run's report.json (a run directory someone else made): show and list answer
    at once with an error naming the file; before, open(2) on the FIFO blocked the daemon's loop until a
    writer came, and nobody got answers."""
    runs = os.path.join(d.state_dir, "runs")
    fifo_id, link_id = "20200101T000000Z-0000f1", "20200101T000000Z-0000f2"
    made = []
    try:
        for rid in (fifo_id, link_id):
            os.makedirs(os.path.join(runs, rid))
            made.append(os.path.join(runs, rid))
        os.mkfifo(os.path.join(runs, fifo_id, "report.json"))
        os.symlink("/etc/passwd", os.path.join(runs, link_id, "report.json"))
        c = d.conn()
        for rid, why in ((fifo_id, "not a regular file"), (link_id, "symbolic link")):
            c.send_raw((json.dumps({"v": 1, "id": rid, "op": "show", "run": rid}) + "\n").encode())
            r = c.read(timeout=5)
            check(not r["ok"] and why in r["error"]["message"], "show of a run whose report.json is planted: %s" % r)
        c.send_raw(b'{"v": 1, "id": "l", "op": "list"}\n')
        r = c.read(timeout=5)
        check(r["ok"], "list with planted report files: %s" % r)
        check(c.call("status")["ok"], "status after the planted files")
        c.close()
    finally:
        for p in made:
            for f in os.listdir(p):
                os.unlink(os.path.join(p, f))
            os.rmdir(p)
    log("a FIFO and a symlink at runs' report.json: show refused both at once, list and status answered")


def terminal_escapes(env, d):
    """A report whose description and label carry terminal controls (ESC sequences, BEL, BS, CR, a C1 CSI):
    none reaches the user's terminal raw: show prints them escaped (\\x1b, \\u009b), list and status as '?'."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reports", "testdata", "stock.json")
    with open(src) as f:
        rep = json.load(f)
    rid = "20200101T000000Z-0000e5"
    evil = "\x1b]0;owned\x07\x1b[2J\x08\r\u009b31m"
    rep["id"], rep["description"] = rid, "desc " + evil
    rep["spec"]["description"] = rep["description"]
    rep["arms"][0]["label"] = "arm" + evil
    run_dir = os.path.join(d.state_dir, "runs", rid)
    os.makedirs(run_dir)
    try:
        with open(os.path.join(run_dir, "report.json"), "w") as f:
            json.dump(rep, f)
        for argv in (("show", rid), ("list",), ("status",)):
            rc, out, err = env.cli(d, *argv)
            bad = [c for c in out + err if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
            check(not bad, "snapbench %s printed controls %r:\n%s" % (" ".join(argv), bad[:8], out))
        rc, out, err = env.cli(d, "show", rid)
        check("desc \\x1b]0;owned\\x07\\x1b[2J\\x08\\r\\u009b31m" in out, "show's description:\n%s" % out)
    finally:
        shutil.rmtree(run_dir)
    log("terminal controls in a report's description and label escaped by show, '?' in list and status")


def orphan_runs(env):
    """Reports that say "running" with nothing executing them (the worker gone, a rewrite that failed on a
    full disk): a starting snapbenchd marks them failed (interrupted) unless a process holds the run
    directory's owner lock (a run still going, e.g. 'snapbench run --local' into the store)."""
    d = env.daemon("orphans")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reports", "testdata", "stock.json")
    with open(src) as f:
        rep = json.load(f)
    rep["state"], rep["finished"], rep["error"] = "running", None, None
    ids = {"orphan": "20200101T000000Z-0000a1", "owned": "20200101T000000Z-0000a2"}
    for rid in ids.values():
        os.makedirs(os.path.join(d.state_dir, "runs", rid))
        with open(os.path.join(d.state_dir, "runs", rid, "report.json"), "w") as f:
            json.dump(dict(rep, id=rid), f)
    lock = open(os.path.join(d.state_dir, "runs", ids["owned"], "owner.lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        d.start()
        orphan = env.report(d, ids["orphan"])
        check(orphan["state"] == "failed" and orphan["error"]["phase"] == "interrupted",
              "the orphaned run: %s %s" % (orphan["state"], orphan["error"]))
        check(env.report(d, ids["owned"])["state"] == "running", "a run whose owner lock is held was ended")
        check(d.stop() == 0, "snapbenchd's exit status")
    finally:
        lock.close()
    log("a running report nobody executes is marked interrupted at start; one whose owner lock is held stays")


def body(env):
    orphan_runs(env)
    d = env.daemon(args=["--max-connections", str(MAX_CONNECTIONS), "--request-timeout", str(REQUEST_TIMEOUT),
                         "--idle-timeout", str(IDLE_TIMEOUT), "--write-timeout", str(WRITE_TIMEOUT)]).start()
    malformed(d)
    huge_line(d)
    slow_client(d)
    idle_client(d)
    non_reader(d)
    too_many(d)
    planted_files(d)
    terminal_escapes(env, d)
    st = d.status()
    check(st["queue"] == [] and st["current"] is None, "a malformed submit queued something: %s" % st)
    check(os.listdir(os.path.join(d.state_dir, "runs")) == [], "runs were created by invalid submits")
    rc = d.stop()
    check(rc == 0, "snapbenchd exited %s after SIGTERM (a sanitizer report?)" % rc)


if __name__ == "__main__":
    Env("protocol", sys.argv).run(body)
