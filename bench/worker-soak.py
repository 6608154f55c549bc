#!/usr/bin/env python3
"""Faults under overload: `darkroom serve` decoding in confined workers, 3x overloaded, with 1 % of requests
carrying a file that crashes its decoder, for a long soak.

    bench/worker-soak.py [--darkroom .build-test/release/darkroom] [--worker .build-test/release/darkroom-test-worker]
                         [--duration 600] [--crash-every 100] [--json out.json]

The server decodes in workers started from the test-only worker (`Tests/TestWorker`, built with the tests: the
library's decoders plus one that segfaults on a 1 x 60001 PNG header) with --max-renders 2 --max-queue 8, and 30
keep-alive clients (3x what it admits) ask for a new uncached thumbnail each time: the 12 MP sample JPEGs fitted
inside a box that changes per request (so no result or decoded-image cache answers), and every --crash-every-th
request the crashing file (also a new URL each time). A client that gets a 429 (load shed, with Retry-After) pauses
0.1 s and asks again for the same URL until it is answered, so every request is eventually rendered or refused by its
decoder. Recorded: every status; for the 99 %, anything but 200 (after retries) is an error; for the 1 %, the
expected `422 decoder_crashed`. The server's RSS (its own and its workers', summed, and its own alone) is sampled
every second and given per minute; /health's worker counters at the end say how many workers crashed and were
replaced. Prints one JSON object.
"""
import argparse, collections, http.client, importlib.util, json, os, shutil, statistics, sys, tempfile, threading
import time, zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
spec = importlib.util.spec_from_file_location("servebench", os.path.join(HERE, "serve-vs-thumbor.py"))
servebench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(servebench)

CLIENTS = 3 * (servebench.MAX_RENDERS + servebench.MAX_QUEUE)
CRASH_HEIGHT = 60001  # WorkerMisdeed.crash (Tests/DarkroomTestSupport/WorkerMisdeed.swift)


def crashing_png():
    """The test worker's crash input: a PNG header 1 pixel wide and 60001 high (its probe is all it reads)."""
    def chunk(kind, data):
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")
    header = (1).to_bytes(4, "big") + CRASH_HEIGHT.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", bytes([0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])) + chunk(b"IEND", b""))


def path_of(n, photos, crash_every):
    """Request n: a new box each time (width 128...255, height 300...4096), the crash file every crash_every-th."""
    w, h = 128 + n % 128, 300 + (n // 128) % 3797
    src = "crash.png" if n % crash_every == crash_every - 1 else photos[n % len(photos)]
    return src, f"/v1/thumb?src={src}&w={w}&h={h}&fit=contain&format=jpeg&q=82"


def health(server):
    with servebench.urllib.request.urlopen(server.base + "/health", timeout=10) as r:
        return json.loads(r.read())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--darkroom", default=os.path.join(ROOT, ".build-test", "release", "darkroom"))
    ap.add_argument("--worker", default=os.path.join(ROOT, ".build-test", "release", "darkroom-test-worker"))
    ap.add_argument("--photos", default=os.path.join(ROOT, "..", "shared", "photos"))
    ap.add_argument("--duration", type=int, default=600)
    ap.add_argument("--crash-every", type=int, default=100)
    ap.add_argument("--json")
    a = ap.parse_args()
    for exe in (a.darkroom, a.worker):
        if not os.access(exe, os.X_OK):
            raise SystemExit(f"missing {exe}: build the tests (make test builds both)")
    photo_dir = os.path.join(os.path.abspath(a.photos), "jpeg-12mp")
    photos = sorted(f for f in os.listdir(photo_dir) if f.endswith(".jpg"))
    if not photos:
        raise SystemExit(f"no photos in {photo_dir}")

    work = tempfile.mkdtemp(prefix="worker-soak-")
    root = os.path.join(work, "root")
    os.makedirs(root)
    for p in photos:  # copied: the server refuses links that leave its root
        shutil.copyfile(os.path.join(photo_dir, p), os.path.join(root, p))
    with open(os.path.join(root, "crash.png"), "wb") as f:
        f.write(crashing_png())
    port = servebench.free_port()
    cache = os.path.join(work, "cache")
    os.makedirs(cache)
    cmd = [a.darkroom, "serve", "--host", "127.0.0.1", "--port", str(port), "--root", root, "--cache-dir", cache,
           "--disk-cache-mb", "64", "--max-renders", str(servebench.MAX_RENDERS), "--max-queue",
           str(servebench.MAX_QUEUE), "--decode-worker", a.worker]
    server = servebench.Server("darkroom", cmd, port, "/health", work, ready_text=f"http://127.0.0.1:{port}/")
    server.start()
    numbers = iter(range(10**9))
    lock = threading.Lock()
    counts = {"photo": collections.Counter(), "crash": collections.Counter()}
    retries = collections.Counter()
    socket_errors = collections.Counter()
    deadline = [0.0]
    barrier = threading.Barrier(CLIENTS + 1)

    def client():
        conn = None
        mine = {"photo": collections.Counter(), "crash": collections.Counter()}
        shed, errors = 0, collections.Counter()
        barrier.wait()
        while time.monotonic() < deadline[0]:
            with lock:
                n = next(numbers)
            src, path = path_of(n, photos, a.crash_every)
            kind = "crash" if src == "crash.png" else "photo"
            while True:
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                    conn.request("GET", path)
                    response = conn.getresponse()
                    body = response.read()
                    if response.will_close:
                        conn.close()
                        conn = None
                except (OSError, http.client.HTTPException) as e:
                    errors[type(e).__name__] += 1
                    if conn is not None:
                        conn.close()
                    conn = None
                    break
                if response.status == 429:
                    shed += 1
                    time.sleep(0.1)
                    continue
                status = response.status
                if kind == "photo" and status == 200 and body[:2] != b"\xff\xd8":
                    status = "200 but not a JPEG"
                mine[kind][status] += 1
                break
        if conn is not None:
            conn.close()
        with lock:
            for k in mine:
                counts[k].update(mine[k])
            retries["429"] += shed
            socket_errors.update(errors)

    samples = []  # (seconds, summed RSS KiB, server's own RSS KiB, processes)
    stop = threading.Event()

    def sampler():
        t0 = time.monotonic()
        while not stop.wait(1.0):
            pids = server.pids()
            samples.append((time.monotonic() - t0, sum(servebench.proc_status_kib(p, "VmRSS") for p in pids),
                            servebench.proc_status_kib(server.proc.pid, "VmRSS"), len(pids)))

    threads = [threading.Thread(target=client, daemon=True) for _ in range(CLIENTS)]
    for t in threads:
        t.start()
    before = health(server)
    watcher = threading.Thread(target=sampler, daemon=True)
    start = time.monotonic()
    deadline[0] = start + a.duration
    watcher.start()
    barrier.wait()
    for t in threads:
        t.join()
    stop.set()
    watcher.join()
    wall = time.monotonic() - start
    after = health(server)
    server.stop()
    shutil.rmtree(work, ignore_errors=True)

    minutes = collections.defaultdict(list)
    for seconds, total, own, _ in samples:
        minutes[int(seconds // 60)].append((total, own))
    per_minute = [{"minute": m + 1, "rss_mib_mean": round(statistics.mean(t for t, _ in v) / 1024, 1),
                   "rss_mib_max": round(max(t for t, _ in v) / 1024, 1),
                   "server_own_rss_mib_mean": round(statistics.mean(o for _, o in v) / 1024, 1)}
                  for m, v in sorted(minutes.items()) if len(v) >= 30]
    photo_ok = counts["photo"][200]
    photo_errors = sum(v for k, v in counts["photo"].items() if k != 200) + sum(socket_errors.values())
    result = {
        "duration_s": round(wall, 1), "clients": CLIENTS, "max_renders": servebench.MAX_RENDERS,
        "max_queue": servebench.MAX_QUEUE, "crash_every": a.crash_every,
        "photo_requests": sum(counts["photo"].values()), "photo_ok": photo_ok, "photo_errors": photo_errors,
        "photo_statuses": {str(k): v for k, v in counts["photo"].items()},
        "crash_requests": sum(counts["crash"].values()),
        "crash_statuses": {str(k): v for k, v in counts["crash"].items()},
        "shed_429_then_retried": retries["429"], "socket_errors": dict(socket_errors),
        "rendered_per_second": round((photo_ok + sum(counts["crash"].values())) / wall, 1),
        "workers_before": before.get("decodeWorkers"), "workers_after": after.get("decodeWorkers"),
        "rss_per_minute": per_minute,
        "rss_first_to_last_minute_mib": (round(per_minute[-1]["rss_mib_mean"] - per_minute[0]["rss_mib_mean"], 1)
                                         if per_minute else None),
    }
    text = json.dumps(result, indent=1)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    print(text)
    if photo_errors or counts["crash"][422] != sum(counts["crash"].values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
