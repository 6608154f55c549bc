#!/usr/bin/env python3
"""darkroom serve vs thumbor: the same thumbnail workloads against both HTTP servers, one after the other.

Usage (from the project root):
  python3 bench/serve-vs-thumbor.py [--darkroom .build/release/darkroom] [--photos ../shared/photos]
                                    [--duration 15] [--json out.json] [--only darkroom|thumbor]

Installs what is missing (wrk from Debian; thumbor THUMBOR_VERSION into .build-bench/thumbor-venv), starts
both servers on free loopback ports with temporary caches, runs three scenarios against each server with
identical settings, stops both (SIGTERM to the process group, then SIGKILL), prints a JSON document (stdout
or --json) and a Markdown table with darkroom/thumbor ratios on stderr.

Scenarios (each: darkroom first, then thumbor; 1 s pause between runs):
  cached    one URL over and over: a 12 MP JPEG fitted inside 256x256 as JPEG q82. Warmed once and the
            answer checked (a JPEG 256 px wide). wrk -t2 -c32 --latency. Both servers answer from their
            result cache (darkroom: memory + disk; thumbor: file result storage, read from disk per request).
  uncached  every request a new cache key: request n asks for jpeg-12mp photo n mod 5 fitted inside
            256 x (300 + n div 5), which is the same 256x192 render under a new URL (bench/wrk-uncached.lua;
            each wrk thread has its own numbers). wrk -t2 -c4: about 2 per core, throughput rather
            than overload. Heights stay <= 4096, darkroom's largest accepted w/h (so not 10000 + n:
            darkroom answers 400 above 4096); that leaves 5 x 3797 keys per server for the uncached and
            overload runs together, and the script warns if a run goes past them. darkroom's decoded-bitmap
            cache is keyed by decode size, so it never hits here either (its /metrics deltas, kept per
            run in the JSON, show one pipeline decode per request).
  overload  the uncached workload from 30 concurrent clients = 3x darkroom's capacity (--max-renders 2 +
            --max-queue 8). A Python client (threads, keep-alive http.client connections) records status and
            latency of every request, so 2xx latencies are reported apart from the 429s. After a 429 a
            client pauses --backoff-429 s (default 0.1) before its next request, so 20 rejected clients do
            not become a busy loop that takes the CPU from the server under test; Retry-After itself is only
            checked for, not obeyed. The client's own CPU use is reported (it should stay well below one
            core, i.e. the client is not the bottleneck).

Fairness choices:
  * Both servers get both cores: darkroom by its own threads (--max-renders 2), thumbor by
    --processes=2 (tornado forks 2 workers; checked by counting the children).
  * Same output: JPEG quality 82, fit inside the box, no upscaling; thumbor's PROGRESSIVE_JPEG is turned
    off (its default is on, which costs encode time darkroom does not spend), AUTO_WEBP off.
  * thumbor's original-image STORAGE is no_storage: with a file loader, its default file storage would only
    copy each source file once more; darkroom does not keep originals either. Result storage (the cache
    being compared) is thumbor's file result storage with RESULT_STORAGE_STORES_UNSAFE = True, otherwise
    unsafe URLs are never cached.
  * thumbor's PIL engine uses JPEG draft mode (DCT-domain downscaling) on its own; left as shipped.
  * wrk and the Python client run on the same cores as the server under test (the other server idles),
    so at thousands of req/s the load generator's own CPU use caps what either server can show.
  * req/s counts 2xx answers only. wrk's latency distribution covers every answer; wrk's timeout is 30 s.
  * Server memory: the largest sum of VmRSS over the server's processes (thumbor: supervisor + workers),
    sampled every 0.2 s during the run; VmHWM (summed) at the end of the run is also given, but is a
    lifetime peak, not per scenario.
The machine is shared and its load average is recorded; numbers from a busy machine are noisy.
"""
import argparse
import collections
import http.client
import itertools
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

THUMBOR_VERSION = "7.8.0"  # works with Python 3.11 (pulls Pillow >= 10.4, < 13 and tornado 6)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
THREADS = 2
CACHED_CONNECTIONS = 32
UNCACHED_CONNECTIONS = 4
MAX_RENDERS, MAX_QUEUE = 2, 8
OVERLOAD_CLIENTS = 3 * (MAX_RENDERS + MAX_QUEUE)
BOX = 256
UNCACHED_H0, MAX_DIMENSION = 300, 4096  # uncached box heights: UNCACHED_H0 + n // photos, at most MAX_DIMENSION
QUALITY = 82
SERVERS = ("darkroom", "thumbor")
GOALS = {"cached": 10.0, "uncached": 2.0}


def log(msg):
    print(f"[serve-vs-thumbor] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------------
# Step 1: tools


def ensure_wrk():
    if shutil.which("wrk"):
        return
    log("installing wrk (apt-get)")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "wrk"], check=True)


def ensure_thumbor(venv):
    exe = os.path.join(venv, "bin", "thumbor")
    py = os.path.join(venv, "bin", "python")
    if os.path.exists(exe) and installed_version(py, "thumbor") == THUMBOR_VERSION:
        return exe, py
    log(f"installing thumbor=={THUMBOR_VERSION} into {venv}")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    f"thumbor=={THUMBOR_VERSION}"], check=True)
    return exe, py


def installed_version(py, package):
    p = subprocess.run([py, "-c", f"import importlib.metadata as m; print(m.version({package!r}))"],
                       capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def tool_versions(args, thumbor_py):
    v = {"python": platform.python_version()}
    if shutil.which("wrk"):
        out = subprocess.run(["wrk", "--version"], capture_output=True, text=True)
        v["wrk"] = (out.stdout + out.stderr).splitlines()[0].strip()
    if thumbor_py:
        for pkg in ("thumbor", "Pillow", "tornado"):
            v[pkg.lower()] = installed_version(thumbor_py, pkg)
    v["bench_commit"] = git_describe(ROOT)
    if args.only != "thumbor":
        binary = os.path.abspath(args.darkroom)
        v["darkroom_binary"] = binary
        v["darkroom_binary_mtime"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(binary)))
        # the checkout the binary was built in (DIR/.build/release/darkroom), if it is one
        v["darkroom_checkout_commit"] = git_describe(os.path.dirname(os.path.dirname(os.path.dirname(binary))))
    return v


def git_describe(folder):
    p = subprocess.run(["git", "-C", folder, "describe", "--always", "--dirty"], capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def machine_info():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    return {"cores": os.cpu_count(), "cpu": model, "kernel": platform.release(),
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]}


# ---------------------------------------------------------------------------------------------------------
# Step 2: servers


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_pids(pid):
    """pid and all its descendants (from /proc/*/stat)."""
    parents = collections.defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents[ppid].append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(parents.get(p, []))
    return out


def proc_status_kib(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Server:
    """One server process group: start, wait for health, sample memory, stop."""

    def __init__(self, name, cmd, port, health_path, logdir, workers=1, ready_text=None):
        self.name, self.cmd, self.port, self.health_path, self.workers = name, cmd, port, health_path, workers
        self.ready_text = ready_text
        self.base = f"http://127.0.0.1:{port}"
        self.log_path = os.path.join(logdir, f"{name}.log")
        self.proc = None

    def start(self, timeout=60):
        log(f"starting {self.name}: {' '.join(self.cmd)}")
        logf = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.cmd, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.name} exited with {self.proc.returncode}; log:\n{self.tail_log()}")
            if self.healthy() and len(self.pids()) >= self.workers + (1 if self.workers > 1 else 0):
                log(f"{self.name} ready at {self.base} (pids {self.pids()})")
                if self.ready_text and self.ready_text not in self.tail_log(200):
                    log(f"note: {self.name} answers but its log has no {self.ready_text!r} yet (stdout buffered?)")
                return
            time.sleep(0.2)
        raise SystemExit(f"{self.name} not ready after {timeout} s; log:\n{self.tail_log()}")

    def healthy(self):
        try:
            with urllib.request.urlopen(self.base + self.health_path, timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def pids(self):
        return child_pids(self.proc.pid) if self.proc else []

    def rss_kib(self):
        return sum(proc_status_kib(p, "VmRSS") for p in self.pids())

    def cpu_seconds(self):
        """utime + stime of the server's live processes."""
        ticks = 0
        for p in self.pids():
            try:
                with open(f"/proc/{p}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                ticks += int(fields[11]) + int(fields[12])
            except (OSError, IndexError, ValueError):
                pass
        return ticks / os.sysconf("SC_CLK_TCK")

    def hwm_kib(self):
        return sum(proc_status_kib(p, "VmHWM") for p in self.pids())

    def tail_log(self, n=40):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def stop(self, grace=10):
        if not self.proc or self.proc.poll() is not None:
            return
        log(f"stopping {self.name} (SIGTERM)")
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            log(f"{self.name} still running after {grace} s: SIGKILL")
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        except ProcessLookupError:
            pass
        # tornado's workers may outlive the supervisor for a moment; the group must be gone
        try:
            os.killpg(self.proc.pid, 0)
            time.sleep(1)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class RssSampler:
    """Largest summed VmRSS of a server's processes, sampled every 0.2 s while the block runs; also the
    server's CPU use and that of this script's children (wrk) over the block, in % of one core."""

    def __init__(self, server, period=0.2):
        self.server, self.period, self.peak_kib = server, period, 0
        self.timeline = []  # (seconds since start, MiB) about once a second: does memory plateau?
        self._stop = threading.Event()

    def cpu_fields(self):
        """{"server_cpu_pct": ..., "wrk_cpu_pct": ...} for the block (100 = one core busy throughout)."""
        out = {"server_cpu_pct": round(100 * self.server_cpu / self.wall, 1)}
        if self.children_cpu > 0:
            out["wrk_cpu_pct"] = round(100 * self.children_cpu / self.wall, 1)
        return out

    def __enter__(self):
        self.peak_kib = self.server.rss_kib()
        self._t0, self._cpu0 = time.monotonic(), self.server.cpu_seconds()
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        self._children0 = ru.ru_utime + ru.ru_stime
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        next_mark = 1.0
        while not self._stop.wait(self.period):
            rss = self.server.rss_kib()
            self.peak_kib = max(self.peak_kib, rss)
            elapsed = time.monotonic() - self._t0
            if elapsed >= next_mark:
                self.timeline.append((round(elapsed, 1), round(rss / 1024, 1)))
                next_mark += 1.0

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak_kib = max(self.peak_kib, self.server.rss_kib())
        self.wall = time.monotonic() - self._t0
        self.server_cpu = self.server.cpu_seconds() - self._cpu0
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.children_cpu = ru.ru_utime + ru.ru_stime - self._children0


def start_thumbor(exe, photos, work):
    port = free_port()
    results = os.path.abspath(os.path.join(work, "thumbor-result-storage"))
    os.makedirs(results)
    conf = os.path.join(work, "thumbor.conf")
    with open(conf, "w") as f:
        f.write(f"""# generated by bench/serve-vs-thumbor.py
LOADER = 'thumbor.loaders.file_loader'
FILE_LOADER_ROOT_PATH = {os.path.abspath(photos)!r}
ALLOW_UNSAFE_URL = True
STORAGE = 'thumbor.storages.no_storage'
RESULT_STORAGE = 'thumbor.result_storages.file_storage'
RESULT_STORAGE_FILE_STORAGE_ROOT_PATH = {results!r}
RESULT_STORAGE_STORES_UNSAFE = True
RESULT_STORAGE_EXPIRATION_SECONDS = 0
QUALITY = {QUALITY}
PROGRESSIVE_JPEG = False
AUTO_WEBP = False
""")
    cmd = [exe, "--ip", "127.0.0.1", "--port", str(port), "--conf", conf, f"--processes={THREADS}",
           "--log-level", "warning"]
    s = Server("thumbor", cmd, port, "/healthcheck", work, workers=THREADS)
    s.start()
    s.config_path = conf
    return s


def start_darkroom(exe, photos, work, extra=()):
    port = free_port()
    cache = os.path.abspath(os.path.join(work, "darkroom-cache"))
    os.makedirs(cache)
    cmd = [exe, "serve", "--host", "127.0.0.1", "--port", str(port), "--root", os.path.abspath(photos),
           "--cache-dir", cache, "--max-renders", str(MAX_RENDERS), "--max-queue", str(MAX_QUEUE)] + list(extra)
    s = Server("darkroom", cmd, port, "/health", work, ready_text=f"http://127.0.0.1:{port}/")
    s.start()
    return s


def thumb_template(name):
    """URL path with {src} and {h} for a JPEG q82 fitted inside 256 x h."""
    if name == "darkroom":
        return f"/v1/thumb?src={{src}}&w={BOX}&h={{h}}&fit=contain&format=jpeg&q={QUALITY}"
    return f"/unsafe/fit-in/{BOX}x{{h}}/filters:quality({QUALITY}):format(jpeg)/{{src}}"


def thumb_path(name, src, h):
    return thumb_template(name).replace("{src}", src).replace("{h}", str(h))


def uncached_path(name, photos, n):
    """Request n of the uncached workload (the same rule as bench/wrk-uncached.lua)."""
    return thumb_path(name, photos[n % len(photos)], UNCACHED_H0 + n // len(photos))


def key_space(photos):
    return len(photos) * (MAX_DIMENSION - UNCACHED_H0 + 1)


# ---------------------------------------------------------------------------------------------------------
# Checking answers


def jpeg_size(data):
    """(width, height) from a JPEG's first SOF marker, or None if data is not a JPEG."""
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0x01,) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h = int.from_bytes(data[i + 5:i + 7], "big")
            w = int.from_bytes(data[i + 7:i + 9], "big")
            return w, h
        i += 2 + length
    return None


def fetch_and_check(server, path):
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(server.base + path, timeout=120) as r:
            body, status, ctype = r.read(), r.status, r.headers.get("Content-Type")
    except urllib.error.HTTPError as e:
        body, status, ctype = e.read(), e.code, e.headers.get("Content-Type")
    except (OSError, http.client.HTTPException) as e:
        raise SystemExit(f"{server.name}: {path} failed: {e!r}. Server log:\n{server.tail_log()}")
    dt = time.monotonic() - t0
    size = jpeg_size(body)
    if status != 200 or size is None or size[0] != BOX:
        text = body[:300].decode("utf-8", "replace") if size is None else ""
        raise SystemExit(f"{server.name}: {path} gave status {status}, {ctype}, {len(body)} bytes {text!r}, "
                         f"JPEG size {size}; expected a JPEG {BOX} px wide. Server log:\n{server.tail_log()}")
    return {"status": status, "content_type": ctype, "bytes": len(body), "size": list(size),
            "seconds": round(dt, 3)}


# ---------------------------------------------------------------------------------------------------------
# Step 3: scenarios


def run_wrk(server, connections, duration, script, path, script_args=()):
    cmd = ["wrk", f"-t{THREADS}", f"-c{connections}", f"-d{duration}s", "--latency", "--timeout", "30s",
           "-s", script, server.base + path]
    if script_args:
        cmd += ["--"] + [str(a) for a in script_args]
    with RssSampler(server) as rss:
        p = subprocess.run(cmd, capture_output=True, text=True)
    line = next((l for l in p.stdout.splitlines() if l.startswith("WRK_JSON ")), None)
    if p.returncode != 0 or line is None:
        raise SystemExit(f"wrk failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    w = json.loads(line[len("WRK_JSON "):])
    secs = w["duration_us"] / 1e6
    non2xx = w.get("status_other", w["errors"]["status"])  # errors.status counts statuses > 399
    ok = w.get("status_2xx", w["requests"] - non2xx)
    lat = {k: round(v / 1000, 2) for k, v in w["latency_us"].items()}
    return {
        "tool": "wrk", "threads": THREADS, "connections": connections, "duration_s": round(secs, 2),
        "requests": w["requests"], "ok_2xx": ok, "rps_2xx": round(ok / secs, 1),
        "latency_ms": {k: lat[k] for k in ("p50", "p90", "p99", "p99_9", "max", "mean")},
        "non_2xx": non2xx,
        "socket_errors": {k: w["errors"][k] for k in ("connect", "read", "write", "timeout")},
        "mib_per_s": round(w["bytes"] / secs / 1048576, 2),
        "peak_rss_mib": round(rss.peak_kib / 1024, 1), "hwm_mib_end": round(server.hwm_kib() / 1024, 1),
        "rss_timeline_mib": rss.timeline,
        "max_n": w.get("max_n"), **rss.cpu_fields(),
    }


def scenario_cached(server, args, photo):
    path = thumb_path(server.name, photo, BOX)
    first = fetch_and_check(server, path)   # render + store
    second = fetch_and_check(server, path)  # should be a hit
    r = run_wrk(server, CACHED_CONNECTIONS, args.duration, os.path.join(HERE, "wrk-report.lua"), path)
    r.update(url=path, warm_first_s=first["seconds"], warm_second_s=second["seconds"], check=second)
    return r


def scenario_uncached(server, args, photos, counter):
    # one check per photo (n = 0..4 of this server's numbers), then wrk continues from there
    checks = [fetch_and_check(server, uncached_path(server.name, photos, n))
              for n in range(counter[server.name], counter[server.name] + len(photos))]
    counter[server.name] += len(photos)
    base = counter[server.name]
    r = run_wrk(server, UNCACHED_CONNECTIONS, args.duration, os.path.join(HERE, "wrk-uncached.lua"),
                uncached_path(server.name, photos, base),
                [base, THREADS, UNCACHED_H0, thumb_template(server.name)] + photos)
    counter[server.name] = max(base + r["requests"] + UNCACHED_CONNECTIONS, (r["max_n"] or 0) + 1)
    r.update(url_template=thumb_template(server.name), first_n=base,
             check_render_s=[c["seconds"] for c in checks], check=checks[0])
    return r


def percentiles(values):
    if not values:
        return None
    v = sorted(values)

    def pct(p):
        return round(1000 * v[min(len(v) - 1, max(0, int(round(p / 100 * len(v) + 0.5)) - 1))], 2)
    return {"p50": pct(50), "p90": pct(90), "p99": pct(99), "max": round(1000 * v[-1], 2),
            "mean": round(1000 * sum(v) / len(v), 2)}


def scenario_overload(server, args, photos, counter):
    """30 keep-alive clients, each: request a new uncached URL, record (status, latency), repeat."""
    numbers = itertools.count(counter[server.name])  # next() is atomic under the GIL
    start_barrier = threading.Barrier(OVERLOAD_CLIENTS + 1)
    records = []  # (status, seconds, retry_after present, finished before deadline)
    errors = collections.Counter()
    lock = threading.Lock()
    deadline = [0.0]

    def client():
        conn, mine, errs = None, [], collections.Counter()
        start_barrier.wait()
        while time.monotonic() < deadline[0]:
            n = next(numbers)
            path = uncached_path(server.name, photos, n)
            t0 = time.monotonic()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
                conn.request("GET", path)
                resp = conn.getresponse()
                resp.read()
                t1 = time.monotonic()
                mine.append((resp.status, t1 - t0, resp.getheader("Retry-After") is not None, t1 <= deadline[0]))
                if resp.will_close:
                    conn.close()
                    conn = None
                if resp.status == 429 and args.backoff_429 > 0:
                    time.sleep(args.backoff_429)
            except (OSError, http.client.HTTPException) as e:
                errs[type(e).__name__] += 1
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()
        with lock:
            records.extend(mine)
            errors.update(errs)

    threads = [threading.Thread(target=client, daemon=True) for _ in range(OVERLOAD_CLIENTS)]
    for t in threads:
        t.start()
    with RssSampler(server) as rss:
        cpu0, t0 = time.process_time(), time.monotonic()
        deadline[0] = t0 + args.duration
        start_barrier.wait()
        for t in threads:
            t.join()
        t_end = time.monotonic()
        cpu = time.process_time() - cpu0
    counter[server.name] = next(numbers) + 1

    by_status = collections.Counter(s for s, *_ in records)
    ok = [r for r in records if 200 <= r[0] < 300]
    rejected = [r for r in records if r[0] == 429]
    ok_in_window = sum(1 for r in ok if r[3])
    return {
        "tool": "python http.client", "clients": OVERLOAD_CLIENTS, "duration_s": args.duration,
        "drain_s": round(t_end - deadline[0], 2), "backoff_429_s": args.backoff_429,
        "requests": len(records), "ok_2xx": len(ok), "rps_2xx": round(ok_in_window / args.duration, 1),
        "latency_ms": percentiles([r[1] for r in ok]),
        "status_counts": {str(k): v for k, v in sorted(by_status.items())},
        "non_2xx": len(records) - len(ok),
        "rejected_429": len(rejected),
        "retry_after_on_all_429": all(r[2] for r in rejected) if rejected else None,
        "retry_after_missing": sum(1 for r in rejected if not r[2]),
        "latency_429_ms": percentiles([r[1] for r in rejected]),
        "socket_errors": dict(errors),  # exception name -> count
        "client_cpu_pct_of_one_core": round(100 * cpu / (t_end - t0), 1), **rss.cpu_fields(),
        "peak_rss_mib": round(rss.peak_kib / 1024, 1), "hwm_mib_end": round(server.hwm_kib() / 1024, 1),
        "rss_timeline_mib": rss.timeline,
    }


def metrics_snapshot(server):
    """darkroom's /metrics as {series: value}, for the counters' deltas per scenario (cache hits, renders)."""
    if server.name != "darkroom":
        return None
    try:
        with urllib.request.urlopen(server.base + "/metrics", timeout=5) as r:
            text = r.read().decode("utf-8", "replace")
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z_:][^\s{]*(?:\{[^}]*\})?)\s+([-+0-9.eE]+|NaN|[+-]Inf)$", line)
        if m:
            try:
                out[m.group(1)] = float(m.group(2))
            except ValueError:
                pass
    return out


def metrics_delta(before, after):
    if before is None or after is None:
        return None
    d = {k: round(v - before.get(k, 0.0), 3) for k, v in after.items()
         if v != before.get(k, 0.0) and "_bucket" not in k and "quantile=" not in k}
    return d or None


# ---------------------------------------------------------------------------------------------------------
# Step 4: output


def ratio(results, scenario):
    d = results.get(("darkroom", scenario))
    t = results.get(("thumbor", scenario))
    if not d or not t or not t["rps_2xx"]:
        return None
    return round(d["rps_2xx"] / t["rps_2xx"], 2)


def markdown(results, servers, machine, versions, args):
    def cell(name, scenario, f):
        r = results.get((name, scenario))
        return f(r) if r else "n/a"

    lines = [
        f"darkroom serve vs thumbor {versions.get('thumbor', '?')} — {machine['cores']} cores, "
        f"{machine['date_utc']}, load average at start {machine['loadavg_at_start'][0]}, "
        f"{args.duration} s per run",
        "",
        "| scenario | clients | darkroom req/s | thumbor req/s | ratio | goal | darkroom p50 / p99 ms "
        "| thumbor p50 / p99 ms | darkroom non-2xx | thumbor non-2xx | darkroom peak RSS MiB "
        "| thumbor peak RSS MiB |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    clients = {"cached": CACHED_CONNECTIONS, "uncached": UNCACHED_CONNECTIONS, "overload": OVERLOAD_CLIENTS}
    for sc in ("cached", "uncached", "overload"):
        if not any((n, sc) in results for n in servers):
            continue
        rt = ratio(results, sc)
        goal = GOALS.get(sc)
        verdict = "" if rt is None or goal is None else (" ✓" if rt >= goal else " ✗")
        lat = lambda r: f"{r['latency_ms']['p50']} / {r['latency_ms']['p99']}" if r["latency_ms"] else "–"
        non2xx = lambda r: (f"{r['non_2xx']} ({r.get('rejected_429', 0)}×429)" if "rejected_429" in r
                            else str(r["non_2xx"]))
        lines.append(
            f"| {sc} | {clients[sc]} | {cell('darkroom', sc, lambda r: r['rps_2xx'])} "
            f"| {cell('thumbor', sc, lambda r: r['rps_2xx'])} | {'n/a' if rt is None else f'{rt}×'}{verdict} "
            f"| {'–' if goal is None else f'≥ {goal:g}×'} | {cell('darkroom', sc, lat)} | {cell('thumbor', sc, lat)} "
            f"| {cell('darkroom', sc, non2xx)} | {cell('thumbor', sc, non2xx)} "
            f"| {cell('darkroom', sc, lambda r: r['peak_rss_mib'])} "
            f"| {cell('thumbor', sc, lambda r: r['peak_rss_mib'])} |")
    cpu = [f"{sc} " + " / ".join(f"{results[(n, sc)]['server_cpu_pct']}" if (n, sc) in results else "–"
                                 for n in ("darkroom", "thumbor"))
           for sc in ("cached", "uncached", "overload") if any((n, sc) in results for n in servers)]
    lines.append("\nserver CPU, % of one core (darkroom / thumbor): " + "; ".join(cpu))
    for name in servers:
        r = results.get((name, "overload"))
        if r:
            lines.append(f"\noverload, {name}: {r['status_counts']} statuses, errors {r['socket_errors'] or 'none'}, "
                         f"Retry-After on every 429: {'n/a' if r['retry_after_on_all_429'] is None else r['retry_after_on_all_429']}, "
                         f"429 p50 {r['latency_429_ms']['p50'] if r['latency_429_ms'] else '–'} ms, "
                         f"drain {r['drain_s']} s, client CPU {r['client_cpu_pct_of_one_core']}% of a core")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--darkroom", default=os.path.join(ROOT, ".build", "release", "darkroom"))
    ap.add_argument("--photos", default=os.path.join(ROOT, "..", "shared", "photos"))
    ap.add_argument("--duration", type=int, default=15, help="seconds per run (default 15)")
    ap.add_argument("--json", help="write the JSON document here instead of stdout")
    ap.add_argument("--only", choices=SERVERS, help="run one server only")
    ap.add_argument("--scenarios", default="cached,uncached,overload", help="comma-separated subset")
    ap.add_argument("--backoff-429", type=float, default=0.1, help="overload: client pause after a 429 (s)")
    ap.add_argument("--venv", default=os.path.join(ROOT, ".build-bench", "thumbor-venv"))
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (logs, caches, config)")
    ap.add_argument("--darkroom-arg", action="append", default=[],
                    help="an extra argument for darkroom serve (repeatable), e.g. --darkroom-arg=--in-process")
    args = ap.parse_args()

    servers = [args.only] if args.only else list(SERVERS)
    scenarios = [s for s in args.scenarios.split(",") if s]
    if unknown := set(scenarios) - {"cached", "uncached", "overload"}:
        raise SystemExit(f"unknown scenarios: {sorted(unknown)}")
    photos_dir = os.path.abspath(args.photos)
    photos = sorted(os.path.join("jpeg-12mp", f) for f in os.listdir(os.path.join(photos_dir, "jpeg-12mp"))
                    if f.lower().endswith(".jpg"))
    if len(photos) < 2:
        raise SystemExit(f"expected the jpeg-12mp photos under {photos_dir}")
    if "darkroom" in servers and not os.access(args.darkroom, os.X_OK):
        raise SystemExit(f"no darkroom binary at {args.darkroom} (build it, or --only thumbor)")

    ensure_wrk()
    thumbor_exe = thumbor_py = None
    if "thumbor" in servers:
        thumbor_exe, thumbor_py = ensure_thumbor(args.venv)
    machine = machine_info()
    versions = tool_versions(args, thumbor_py)

    os.makedirs(os.path.join(ROOT, ".build-bench"), exist_ok=True)
    work = tempfile.mkdtemp(prefix="serve-vs-thumbor-", dir=os.path.join(ROOT, ".build-bench"))
    running = {}
    results = {}
    try:
        if "darkroom" in servers:
            running["darkroom"] = start_darkroom(args.darkroom, photos_dir, work, args.darkroom_arg)
        if "thumbor" in servers:
            running["thumbor"] = start_thumbor(thumbor_exe, photos_dir, work)
        workers = {n: len(s.pids()) for n, s in running.items()}
        counter = {n: 0 for n in servers}  # next unused request number n of the uncached workload, per server
        for sc in scenarios:
            for name in servers:
                server = running[name]
                log(f"{sc} on {name} ({args.duration} s)")
                before = metrics_snapshot(server)
                if sc == "cached":
                    r = scenario_cached(server, args, photos[0])
                elif sc == "uncached":
                    r = scenario_uncached(server, args, photos, counter)
                else:
                    r = scenario_overload(server, args, photos, counter)
                r["metrics_delta"] = metrics_delta(before, metrics_snapshot(server))
                if sc != "cached":
                    r["uncached_keys_used"] = counter[name]
                    r["uncached_key_space_exceeded"] = counter[name] > key_space(photos)
                    if r["uncached_key_space_exceeded"]:
                        log(f"warning: {name} used {counter[name]} uncached keys, more than the "
                            f"{key_space(photos)} distinct ones: later requests repeated URLs (shorten --duration)")
                r.update(server=name, scenario=sc, loadavg_after=round(os.getloadavg()[0], 2))
                results[(name, sc)] = r
                log(f"  {r['rps_2xx']} req/s 2xx, p50 {r['latency_ms'] and r['latency_ms']['p50']} ms, "
                    f"non-2xx {r['non_2xx']}, peak RSS {r['peak_rss_mib']} MiB")
                time.sleep(1)
    finally:
        for s in running.values():
            s.stop()
        if args.keep:
            log(f"scratch kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    doc = {
        "benchmark": "serve-vs-thumbor",
        "machine": machine,
        "versions": versions,
        "settings": {"duration_s": args.duration, "wrk_threads": THREADS, "box": BOX, "quality": QUALITY,
                     "cached_connections": CACHED_CONNECTIONS, "uncached_connections": UNCACHED_CONNECTIONS,
                     "overload_clients": OVERLOAD_CLIENTS, "darkroom_max_renders": MAX_RENDERS,
                     "darkroom_max_queue": MAX_QUEUE, "thumbor_processes": THREADS,
                     "server_processes_seen": workers, "photos": photos},
        "results": list(results.values()),
        "ratios_rps_darkroom_over_thumbor": {sc: ratio(results, sc) for sc in scenarios},
        "goals": GOALS,
    }
    text = json.dumps(doc, indent=2)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
        log(f"wrote {args.json}")
    else:
        print(text)
    print(markdown(results, servers, machine, versions, args), file=sys.stderr)


if __name__ == "__main__":
    main()
