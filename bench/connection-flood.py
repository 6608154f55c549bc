#!/usr/bin/env python3
"""Idle-connection floods against `darkroom serve` under a descriptor limit: does /health still answer?

    bench/connection-flood.py [--darkroom .build/release/darkroom] [--nofile 2048] [--root ../shared/photos]

Starts `darkroom serve` under `prlimit --nofile=NOFILE` (so its connection limit is NOFILE - 512), then:
  1. one client (127.0.0.1) opens 3 × NOFILE idle connections;
  2. 40 clients (127.0.0.2-41) open 100 idle connections each (under the per-client limit), together more than
     the total limit when NOFILE < 4500;
and during each flood asks /health and a cached thumbnail from a fresh address on a new connection, timing each.
Prints JSON: per phase the connections opened, how many the server closed, what /health reports, and the
latencies of /health and the cached hit.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from loopback import free_port, wait_port  # noqa: E402


def connect(port, source):
    s = socket.socket()
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    return s


def closed_by_server(s):
    try:
        return s.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def timed_get(port, source, path, timeout=10):
    """Seconds for a GET on a new connection from `source`, and its status (0: no answer)."""
    started = time.perf_counter()
    try:
        s = socket.socket()
        s.settimeout(timeout)
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
        body = data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""
    except OSError:
        status, body = 0, b""
    return time.perf_counter() - started, status, body


def probe(port, source, rounds=10):
    health, hits, report = [], [], {}
    for i in range(rounds):
        seconds, status, body = timed_get(port, source, "/health")
        health.append((seconds, status))
        if status == 200:
            report = json.loads(body)
        seconds, status, _ = timed_get(port, source, "/v1/thumb?src=" + probe.src + "&w=64")
        hits.append((seconds, status))
    summary = lambda xs: {  # noqa: E731
        "answered": sum(1 for _, s in xs if s == 200), "of": len(xs),
        "median_ms": round(statistics.median(t for t, _ in xs) * 1000, 2),
        "max_ms": round(max(t for t, _ in xs) * 1000, 2)}
    return {"health": summary(health), "cached_hit": summary(hits), "health_report": report}


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser()
    parser.add_argument("--darkroom", default=os.path.join(here, ".build", "release", "darkroom"))
    parser.add_argument("--nofile", type=int, default=2048)
    parser.add_argument("--root", default=os.path.join(here, "..", "shared", "photos"))
    args = parser.parse_args()
    probe.src = next(os.path.relpath(os.path.join(d, f), args.root)
                     for d, _, fs in sorted(os.walk(args.root)) for f in sorted(fs) if f.endswith(".jpg"))
    port = free_port()
    server = subprocess.Popen(["prlimit", f"--nofile={args.nofile}:{args.nofile}", args.darkroom, "serve",
                               "--port", str(port), "--root", args.root, "--log-level", "warning"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = {"nofile": args.nofile}
    try:
        if not wait_port(port):
            raise SystemExit("darkroom serve did not start")
        results["before"] = probe(port, "127.0.0.200", rounds=3)  # also caches the thumbnail
        # 1. One client opens 3 x nofile idle connections
        flood = []
        for _ in range(3 * args.nofile):
            try:
                flood.append(connect(port, "127.0.0.1"))
            except OSError as e:
                results.setdefault("connect_errors", str(e))
                break
        time.sleep(1)
        closed = sum(1 for s in flood if closed_by_server(s))
        results["one_client"] = {"opened": len(flood), "closed_by_server": closed, **probe(port, "127.0.0.250")}
        for s in flood:
            s.close()
        time.sleep(1)
        # 2. 40 addresses, 100 each: under the per-client limit, more than the total limit together
        flood = []
        for a in range(2, 42):
            for _ in range(100):
                flood.append(connect(port, f"127.0.0.{a}"))
        time.sleep(1)
        closed = sum(1 for s in flood if closed_by_server(s))
        results["forty_clients"] = {"opened": len(flood), "closed_by_server": closed, **probe(port, "127.0.1.1")}
        for s in flood:
            s.close()
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
        results["server_log_lines"] = [line for line in err.splitlines() if "connection" in line][:6]
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
