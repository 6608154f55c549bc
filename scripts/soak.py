#!/usr/bin/env python3
"""Soak under faults: `darkroom serve` under mixed traffic for --minutes (default 10) while it is SIGKILLed and
restarted every 30-90 s and its cache directory goes through a disk-full spell and a read-only spell.

    python3 scripts/soak.py [--darkroom .build/release/darkroom] [--photos ../shared/photos] [--minutes 10]

Traffic (6 client threads, loopback only, bounded by the run's length): cached thumbnails (a fixed set asked again
and again), uncached ones (new sizes), /v1/info, gallery pages, hostile inputs (truncated, corrupt, decompression
bombs, every saved fuzz crasher), clients that hang up after sending or after the first bytes, and slow clients
that send their request a few bytes at a time and read slowly.

The cache directory is a 512 MiB tmpfs of its own (mounted here; needs root), the server on its default cache
limits (which keep 256 MiB free): the disk-full spell fills it to the last byte for 45 s and restarts the server
on it midway; the read-only spell restarts the server on it remounted read-only, for 45 s.

Checks: every 200 body is byte-identical to a reference server's render of the same URL (a second instance that is
never harmed); nothing but our SIGKILLs ends the server; every answer to a hostile input is a typed 4xx/5xx JSON
error or a correct image; after the run the manifest passes SQLite's integrity_check and a restarted server answers
every cached URL with the reference bytes; RSS, open descriptors and threads are sampled every second and must
return to the same level after each restart and not grow within one life. Writes a JSON report (and a CSV of the
samples) next to --out. Exit 0 when every check passes, 1 when one fails, 2 when the soak could not run.
"""
import argparse
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import zlib

import loopback
from loopback import free_port, wait_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def get(port, path, timeout=60):
    return loopback.get(f"http://127.0.0.1:{port}{path}", timeout=timeout)


def png_header_bomb(width, height):
    """A valid PNG signature and IHDR claiming width x height, then one tiny IDAT: a decompression bomb's header."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b"")


def make_root(work, photos):
    """The served folder: copies of the sample photos (JPEG, PNG, WebP, GIF, animated) and a hostile/ folder."""
    root = os.path.join(work, "root")
    for folder in ("jpeg", "png", "webp", "gif", "animated", "orientation"):
        source = os.path.join(photos, folder)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(root, folder))
    hostile = os.path.join(root, "hostile")
    os.makedirs(hostile)
    jpeg = sorted(os.listdir(os.path.join(root, "jpeg")))[0]
    with open(os.path.join(root, "jpeg", jpeg), "rb") as f:
        good = f.read()
    rng = random.Random(7)
    samples = {
        "truncated.jpg": good[: len(good) // 3],
        "flipped.jpg": bytes(b ^ 0x5A if i > 600 and i % 97 == 0 else b for i, b in enumerate(good)),
        "random.png": b"\x89PNG\r\n\x1a\n" + bytes(rng.getrandbits(8) for _ in range(5000)),
        "bomb.png": png_header_bomb(60000, 60000),
        "wide.png": png_header_bomb(1 << 30, 1),
        "text.jpg": b"this is not an image\n" * 20,
        "empty.gif": b"",
    }
    crashers = os.path.join(ROOT, "Fuzz", "crashers")
    for target in sorted(os.listdir(crashers)) if os.path.isdir(crashers) else []:
        folder = os.path.join(crashers, target)
        if os.path.isdir(folder) and target in ("probe", "decode", "animation"):
            for name in sorted(os.listdir(folder)):
                with open(os.path.join(folder, name), "rb") as f:
                    samples[f"crasher-{target}-{name}.img"] = f.read()
    for name, data in samples.items():
        with open(os.path.join(hostile, name), "wb") as f:
            f.write(data)
    images = []
    for folder in ("jpeg", "png", "webp", "gif", "animated", "orientation"):
        path = os.path.join(root, folder)
        if os.path.isdir(path):
            images += [f"{folder}/{n}" for n in sorted(os.listdir(path))
                       if n.lower().endswith((".jpg", ".jpeg", ".png", ".webp", ".gif"))]
    return root, images, [f"hostile/{n}" for n in sorted(samples)]


def process_sample(pid):
    """(RSS MiB, open descriptors, threads) of pid, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            status = f.read()
        rss = int(status.split("VmRSS:")[1].split()[0]) / 1024
        threads = int(status.split("Threads:")[1].split()[0])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        return rss, fds, threads
    except (OSError, IndexError, ValueError):
        return None


class Server:
    """The soaked server: started, SIGKILLed and restarted on the same port and cache directory."""

    def __init__(self, darkroom, root, cache, port, log):
        self.args = [darkroom, "serve", "--port", str(port), "--root", root, "--cache-dir", cache,
                     "--max-queue", "64", "--request-timeout", "20"]
        self.port, self.log = port, log
        self.process = None
        self.lock = threading.Lock()
        self.killed_by_us = 0
        self.unexpected_exits = []
        self.lives = []  # (start time, pid)

    def start(self):
        with self.lock:
            self.process = subprocess.Popen(self.args, stdout=self.log, stderr=self.log)
            self.lives.append((time.time(), self.process.pid))
        return wait_port(self.port)

    def kill(self):
        with self.lock:
            self.process.kill()
            self.process.wait()
            self.killed_by_us += 1

    def check_alive(self):
        with self.lock:
            code = self.process.poll() if self.process else None
            if code is not None:
                self.unexpected_exits.append(code)
                return False
            return True

    def stop(self):
        with self.lock:
            if self.process and self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()


class Soak:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.deadline = time.time() + args.minutes * 60
        self.rng = random.Random(args.seed)
        self.lock = threading.Lock()
        self.reference = {}  # path -> body (or status for errors)
        self.counts = {}
        self.wrong = []
        self.bad_errors = []
        self.seen_ok = set()
        self.samples = []  # (t, life, rss, fds, threads)
        self.events = []
        self.chaos_lock = threading.Lock()
        self.read_only_spells = 0
        self.disk_full_spells = 0

    def count(self, key):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + 1

    def event(self, text):
        with self.lock:
            self.events.append((round(time.time() - self.started, 1), text))
        print(f"  [{time.time() - self.started:6.1f} s] {text}", flush=True)

    def expected(self, path):
        with self.lock:
            if path in self.reference:
                return self.reference[path]
        status, headers, body = get(self.ref_port, path)
        with self.lock:
            self.reference[path] = (status, body)
        return status, body

    def check(self, path, status, headers, body, hostile=False):
        """Compares one answer with the reference's; connection failures are counted, not judged."""
        if status == 0:
            self.count("no answer (server down or killed)")
            return
        if status == 200:
            ref_status, ref_body = self.expected(path)
            if ref_status != 200 or ref_body != body:
                with self.lock:
                    self.wrong.append((path, len(body), ref_status, len(ref_body)))
            else:
                self.count("200 identical to the reference")
                with self.lock:
                    self.seen_ok.add(path)
            return
        if status in (429, 503):
            self.count(f"{status} (overload or shedding)")
            return
        is_json = headers.get("Content-Type", "").startswith("application/json") and b'"code"' in body
        if hostile and 400 <= status < 600 and is_json:
            self.count("hostile input: typed error")
        elif not is_json or status >= 500 and status != 504:
            with self.lock:
                self.bad_errors.append((path, status, body[:200].decode(errors="replace")))
        else:
            self.count(f"{status} typed error")

    # Traffic

    def thumb_path(self, image, width, fmt="webp"):
        return f"/v1/thumb?src={urllib.parse.quote(image, safe='')}&w={width}&h={width}&fit=cover&format={fmt}"

    def client(self, index):
        rng = random.Random(self.args.seed * 100 + index)
        hot = [self.thumb_path(img, 160) for img in self.images[:12]]
        while time.time() < self.deadline:
            roll = rng.random()
            if roll < 0.35:
                path = rng.choice(hot)
                self.check(path, *get(self.port, path))
            elif roll < 0.55:
                image = rng.choice(self.images)
                path = self.thumb_path(image, rng.randrange(48, 400), rng.choice(["webp", "jpeg", "png"]))
                self.check(path, *get(self.port, path))
            elif roll < 0.62:
                path = "/v1/info?src=" + urllib.parse.quote(rng.choice(self.images), safe="")
                status, headers, body = get(self.port, path)
                self.count("info answered" if status == 200 else f"info {status}")
            elif roll < 0.67:
                path = rng.choice(["/", "/?dir=jpeg", "/?dir=hostile", "/view?src=jpeg%2F" +
                                   urllib.parse.quote(self.images[0].split("/")[-1])])
                status, _, _ = get(self.port, path)
                self.count("gallery 200" if status == 200 else f"gallery {status}")
            elif roll < 0.82:
                path = self.thumb_path(rng.choice(self.hostile), rng.choice([64, 200]))
                self.check(path, *get(self.port, path), hostile=True)
            elif roll < 0.91:
                self.hang_up(rng)
            else:
                self.slow_client(rng)

    def hang_up(self, rng):
        """Sends a request for a new render and closes the connection at once or after the first bytes."""
        path = self.thumb_path(rng.choice(self.images), rng.randrange(400, 900))
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
                s.sendall(f"GET {path} HTTP/1.1\r\nHost: soak\r\n\r\n".encode())
                if rng.random() < 0.5:
                    s.recv(16)
            self.count("client hung up early")
        except OSError:
            self.count("no answer (server down or killed)")

    def slow_client(self, rng):
        """Sends its request a few bytes at a time, then reads the answer 1 KiB at a time."""
        path = self.thumb_path(rng.choice(self.images[:12]), 160)
        request = f"GET {path} HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n\r\n".encode()
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
                for i in range(0, len(request), 16):
                    s.sendall(request[i:i + 16])
                    time.sleep(0.02)
                data = b""
                while True:
                    chunk = s.recv(1024)
                    if not chunk:
                        break
                    data += chunk
                    time.sleep(0.005)
            head, _, body = data.partition(b"\r\n\r\n")
            status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/1.1 ") else 0
            headers = dict(line.split(": ", 1) for line in head.decode(errors="replace").split("\r\n")[1:]
                           if ": " in line)
            if headers.get("Transfer-Encoding") == "chunked":
                body = dechunk(body)
            self.count("slow client served")
            self.check(path, status, headers, body)
        except (OSError, ValueError):
            self.count("no answer (server down or killed)")

    # Faults

    def chaos(self):
        """SIGKILL and restart every 30-90 s; the disk-full spell at 25 % of the run, read-only at 60 %."""
        length = self.deadline - self.started
        spells = [(self.started + 0.25 * length, self.disk_full), (self.started + 0.60 * length, self.read_only)]
        next_kill = time.time() + self.rng.uniform(30, 90)
        while time.time() < self.deadline - 5:
            if spells and time.time() >= spells[0][0]:
                threading.Thread(target=spells.pop(0)[1], daemon=True).start()
            with self.chaos_lock:
                if time.time() >= next_kill:
                    self.server.kill()
                    self.event(f"SIGKILL (restart {self.server.killed_by_us})")
                    if not self.server.start():
                        self.event("the server did not come back")
                    next_kill = time.time() + self.rng.uniform(30, 90)
                elif not self.server.check_alive():
                    self.event("the server exited on its own; restarting")
                    self.server.start()
            time.sleep(0.2)

    def disk_full(self):
        filler = os.path.join(self.cache, "filler")
        self.event("disk-full spell starts")
        with open(filler, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * (1 << 20))
                    f.flush()
            except OSError:
                pass
        self.disk_full_spells += 1
        time.sleep(15)
        with self.chaos_lock:  # a restart while the disk is full: the server must come up and serve
            self.server.kill()
            self.event("SIGKILL and restart on the full disk")
            self.server.start()
        time.sleep(30)
        os.remove(filler)
        self.event("disk-full spell ends")

    def read_only(self):
        """Linux refuses to remount a file system read-only while files on it are open for writing, so the spell
        starts with one of our SIGKILLs: the cache goes read-only while the server is down, and the server is
        restarted on it (it must come up and serve); 45 s later the cache is writable again."""
        with self.chaos_lock:
            self.server.kill()
            result = subprocess.run(["mount", "-o", "remount,ro", self.cache], capture_output=True, text=True)
            self.event("read-only spell starts (SIGKILL, cache remounted read-only, restart)"
                       if result.returncode == 0 else "read-only spell could not start: " + result.stderr.strip())
            self.read_only_spells += result.returncode == 0
            self.server.start()
        time.sleep(45)
        subprocess.run(["mount", "-o", "remount,rw", self.cache], capture_output=True)
        self.event("read-only spell ends")

    def monitor(self):
        while time.time() < self.deadline:
            life = len(self.server.lives)
            pid = self.server.lives[-1][1]
            sample = process_sample(pid)
            if sample:
                with self.lock:
                    self.samples.append((round(time.time() - self.started, 1), life) + sample)
            time.sleep(1)


def dechunk(body):
    out, rest = b"", body
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out, rest = out + rest[:size], rest[size + 2:]
    return out


def manifest_integrity(folder, work):
    """SQLite's integrity_check of the manifest in folder (on a copy with its WAL, so nothing is changed), and the
    manifests the cache set aside as corrupt."""
    copy = os.path.join(work, "manifest-copy")
    os.makedirs(copy, exist_ok=True)
    names = os.listdir(folder) if os.path.isdir(folder) else []
    for name in names:
        if name.startswith("manifest.sqlite") and not name.endswith(".corrupt"):
            shutil.copy(os.path.join(folder, name), copy)
    try:
        result = sqlite3.connect(os.path.join(copy, "manifest.sqlite")).execute("PRAGMA integrity_check").fetchone()[0]
    except sqlite3.Error as e:
        result = f"cannot check: {e}"
    return result, [n for n in names if n.endswith(".corrupt")]


def life_levels(samples, lives_count):
    """Per life of at least 30 s: (life, seconds sampled, RSS at 10-20 s, RSS over its last 20 s, FDs at 10-20 s,
    FDs over its last 10 s, threads at 10-20 s, threads over its last 10 s), medians."""
    def median(values):
        values = sorted(values)
        return values[len(values) // 2] if values else None
    rows = []
    for life in range(1, lives_count + 1):
        mine = [s for s in samples if s[1] == life]
        if len(mine) < 30:
            continue
        t0 = mine[0][0]
        early = [s for s in mine if 10 <= s[0] - t0 < 20]
        late = mine[-10:]
        rows.append((life, round(mine[-1][0] - t0), median(s[2] for s in early), median(s[2] for s in mine[-20:]),
                     median(s[3] for s in early), median(s[3] for s in late),
                     median(s[4] for s in early), median(s[4] for s in late)))
    return rows


def svg_chart(samples, events, path):
    """RSS (MiB) and open descriptors over time as a small SVG, kills and spells marked."""
    if not samples:
        return
    width, height, pad = 900, 300, 40
    t_max = max(s[0] for s in samples) or 1
    rss_max = max(s[2] for s in samples) * 1.1
    fd_max = max(s[3] for s in samples) * 1.1
    def x(t):
        return pad + (width - 2 * pad) * t / t_max
    def line(values, top, color):
        points = " ".join(f"{x(t):.1f},{height - pad - (height - 2 * pad) * v / top:.1f}" for t, v in values)
        return f'<polyline fill="none" stroke="{color}" stroke-width="1.2" points="{points}"/>'
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="11"><rect width="100%" height="100%" fill="white"/>']
    for t, text in events:
        color = "#c00" if "SIGKILL" in text else "#888"
        parts.append(f'<line x1="{x(t):.1f}" y1="{pad}" x2="{x(t):.1f}" y2="{height - pad}" stroke="{color}" '
                     f'stroke-dasharray="3,3"/>')
    parts.append(line([(s[0], s[2]) for s in samples], rss_max, "#1f6fb4"))
    parts.append(line([(s[0], s[3]) for s in samples], fd_max, "#e08000"))
    parts.append(f'<text x="{pad}" y="20">RSS (blue, max {rss_max / 1.1:.0f} MiB) and open descriptors (orange, '
                 f'max {fd_max / 1.1:.0f}) over {t_max:.0f} s; red: SIGKILL, gray: disk-full / read-only spells</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--darkroom", default=os.path.join(ROOT, ".build", "release", "darkroom"))
    ap.add_argument("--photos", default=os.path.join(os.path.dirname(ROOT), "shared", "photos"))
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(ROOT, ".build-bench", "soak"))
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.photos, "jpeg")):
        print(f"soak: no sample photos in {args.photos}")
        return 2
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="darkroom-soak-")
    soak = Soak(args, work)
    soak.root, soak.images, soak.hostile = make_root(work, args.photos)
    soak.cache = os.path.join(work, "cache")
    os.makedirs(soak.cache)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512m", "tmpfs", soak.cache],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        print("soak: cannot mount a tmpfs for the cache (needs root): " + mounted.stderr.strip())
        return 2
    log = open(os.path.join(args.out, "server.log"), "wb")
    soak.ref_port, soak.port = free_port(), free_port()
    reference = subprocess.Popen([args.darkroom, "serve", "--port", str(soak.ref_port), "--root", soak.root,
                                  "--request-timeout", "60"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    soak.server = Server(args.darkroom, soak.root, soak.cache, soak.port, log)
    failures = []

    def verdict(ok, what, detail=""):
        print(f"  {'PASS' if ok else 'FAIL'}  {what}" + (f" — {detail}" if detail else ""), flush=True)
        if not ok:
            failures.append(what)

    try:
        if not wait_port(soak.ref_port) or not soak.server.start():
            print("soak: the servers did not start")
            return 2
        soak.started = time.time()
        print(f"soak: {args.minutes:g} min, {len(soak.images)} images, {len(soak.hostile)} hostile inputs, "
              f"cache on tmpfs {soak.cache}", flush=True)
        threads = [threading.Thread(target=soak.client, args=(i,)) for i in range(6)]
        threads += [threading.Thread(target=soak.chaos), threading.Thread(target=soak.monitor)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        soak.server.stop()
        # Afterwards: the manifest is whole, and a restarted server answers every cached URL with the right bytes
        integrity, corrupt = manifest_integrity(os.path.join(soak.cache, "thumbnails"), work)
        verdict(integrity == "ok" and not corrupt, "the disk cache's manifest is whole after the run",
                f"integrity_check: {integrity}; set aside as corrupt: {corrupt or 'none'}")
        soak.server.start()
        replay = sorted(soak.seen_ok)
        from_disk = mismatched = 0
        for path in replay:
            status, headers, body = get(soak.port, path)
            if status != 200 or body != soak.reference[path][1]:
                mismatched += 1
            from_disk += headers.get("X-Darkroom-Cache") == "disk"
        verdict(mismatched == 0, "restarted on the soaked cache: every URL answered 200 served with the reference bytes",
                f"{len(replay)} URLs, {from_disk} from the disk cache, {mismatched} wrong")
        soak.server.stop()
    finally:
        soak.server.stop()
        reference.terminate()
        reference.wait()
        subprocess.run(["umount", "-l", soak.cache], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)

    verdict(not soak.wrong, "no 200 ever had a wrong or torn body",
            f"{soak.counts.get('200 identical to the reference', 0)} bodies identical; wrong: {soak.wrong[:5]}")
    verdict(not soak.server.unexpected_exits, "no crash but our SIGKILLs",
            f"{soak.server.killed_by_us} SIGKILLs; unexpected exits: {soak.server.unexpected_exits}")
    verdict(not soak.bad_errors, "every error was a typed JSON error (no 500s, no HTML, no torn answers)",
            f"{soak.bad_errors[:5]}")
    levels = life_levels(soak.samples, len(soak.server.lives))
    steady = [row[3] for row in levels]
    fd_growth = max((row[5] - row[4] for row in levels), default=0)
    thread_growth = max((row[7] - row[6] for row in levels), default=0)
    # Memory: each life's level depends on what it rendered (the caches fill, renders hold up to their budget), so
    # the checks are a bound and a trend: no life goes past the configured budget over the idle process, and the
    # lives of the run's second half sit no higher than those of its first (nothing carried across restarts).
    budget = 64 + 32 + 256  # --memory-cache-mb, --decoded-cache-mb, --render-memory-mb defaults
    idle = min((s[2] for s in soak.samples), default=0)
    peak = max((s[2] for s in soak.samples), default=0)
    half = len(steady) // 2
    first, second = sorted(steady[:half]), sorted(steady[half:])
    trend = (second[len(second) // 2] / first[len(first) // 2]) if first and second else 0
    # The slack is the warm process's own growth past the just-started one (code paged in, codec and runtime
    # state, allocator arenas): about 130 MiB in the lives here
    verdict(len(levels) >= 4 and peak <= idle + budget + 160,
            "RSS stays within the memory budget over the idle process in every life",
            f"peak {peak:.0f} MiB; idle {idle:.0f} + budget {budget} + 160 slack = {idle + budget + 160:.0f} MiB")
    verdict(len(levels) >= 4 and trend <= 1.25, "RSS returns to the same level after restarts (no upward trend)",
            f"RSS over the last 20 s of each life {[round(p) for p in steady]} MiB; second half / first half "
            f"medians {trend:.2f}")
    verdict(soak.disk_full_spells == 1 and soak.read_only_spells == 1, "both fault spells ran",
            f"disk-full {soak.disk_full_spells}, read-only {soak.read_only_spells}")
    verdict(fd_growth <= 16 and thread_growth <= 4, "no descriptor or thread growth within a life",
            f"largest growth from 10-20 s to the end of a life: {fd_growth} descriptors, {thread_growth} threads")
    report = {"minutes": args.minutes, "counts": soak.counts, "events": soak.events, "failures": failures,
              "lives": [dict(zip(["life", "seconds", "rss_early", "rss_late", "fds_early", "fds_late",
                                  "threads_early", "threads_late"], row)) for row in levels],
              "wrong": soak.wrong, "bad_errors": soak.bad_errors}
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "samples.csv"), "w") as f:
        f.write("seconds,life,rss_mib,fds,threads\n")
        f.writelines(",".join(str(v) for v in s) + "\n" for s in soak.samples)
    svg_chart(soak.samples, soak.events, os.path.join(args.out, "soak.svg"))
    print("soak: counts " + json.dumps(soak.counts, sort_keys=True))
    print(f"soak: report in {args.out}/report.json, samples.csv, soak.svg")
    if failures:
        print(f"soak: FAILED {len(failures)} check(s)")
        return 1
    print("soak: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
