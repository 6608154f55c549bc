#!/usr/bin/env python3
"""Remote videos read by ranges: the bytes a poster-frame thumbnail of a video on an HTTP origin costs, Darkroom
(`darkroom fetch URL --max-pixel-size 256`: the pipeline with the video decoder) against `ffmpegthumbnailer -i URL
-s 256` (FFmpeg's own HTTP reader, which seeks with ranges too), alternating for --rounds rounds in one run.

    bench/video-ranges.py [--darkroom PATH] [--rounds 3]

The clips are made once into .build-bench/video-ranges/ with the ffmpeg command: a 20 s pan across a 12 MP photo
(--photos, the first JPEG; every frame differs, as a camera's do), 30 fps, a keyframe every 2 s, the index at the end
(as the ffmpeg command and many cameras write it; a phone's MP4 often has it first), as 1080p H.264 (MP4) and 4K HEVC
(MOV).
The origin is Python's HTTP server on loopback, answering `Range` with 206 and counting the body bytes and requests
of each run. Reported per clip: its size, the bytes and requests each tool's thumbnail took (medians of the rounds),
their wall seconds (a process each: Darkroom's start-up, some 0.3 s of it, is most of its own), Darkroom's fetch and
decode inside its process (`fetch_seconds`, the pipeline's own clock), and the share of the file each read. Prints
one JSON object.
"""
import argparse, http.server, json, os, re, statistics, subprocess, tempfile, threading, time

from benchlib import ROOT, timed

CLIPS = {
    "h264-1080p": ("1920x1080", ["-c:v", "libx264", "-preset", "veryfast", "-crf", "20"], "mp4"),
    "hevc-4k": ("3840x2160", ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error",
                              "-crf", "22", "-tag:v", "hvc1"], "mov"),
}
SECONDS, RATE, GOP = 20, 30, 60


class Counter:
    def __init__(self):
        self.lock = threading.Lock()
        self.bytes = 0
        self.requests = 0

    def take(self):
        with self.lock:
            counted = (self.bytes, self.requests)
            self.bytes, self.requests = 0, 0
            return counted


def origin(directory, counter):
    """An HTTP/1.1 server of `directory` that answers `Range: bytes=A-B` (and `A-`) with 206, counting what it sends."""
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            path = os.path.join(directory, os.path.basename(self.path.split("?")[0]))
            if not os.path.isfile(path):
                self.send_error(404)
                return
            size = os.path.getsize(path)
            start, end, status = 0, size - 1, 200
            match = re.match(r"bytes=(\d*)-(\d*)$", self.headers.get("Range", ""))
            if match and (match.group(1) or match.group(2)):
                if match.group(1):
                    start = int(match.group(1))
                    end = min(size - 1, int(match.group(2))) if match.group(2) else size - 1
                else:
                    start = max(0, size - int(match.group(2)))
                status = 206
            if start > end:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(status)
            self.send_header("Content-Type", "video/mp4")
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(end - start + 1))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            self.end_headers()
            sent = 0
            with open(path, "rb") as f:
                f.seek(start)
                left = end - start + 1
                try:
                    while left > 0:
                        chunk = f.read(min(left, 1 << 16))
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                        sent += len(chunk)
                        left -= len(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    pass
            with counter.lock:
                counter.bytes += sent
                counter.requests += 1

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def make_clips(directory, photo):
    os.makedirs(directory, exist_ok=True)
    made = {}
    for kind, (size, codec, ext) in CLIPS.items():
        path = os.path.join(directory, f"{kind}.{ext}")
        if not os.path.exists(path):
            w, h = (int(v) for v in size.split("x"))
            pan = (f"scale={w * 5 // 4}:-2,crop={w}:{h}:x='t*{w // 4}/{SECONDS}':y=(ih-{h})/2,fps={RATE},"
                   "format=yuv420p")
            subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-loop", "1", "-framerate", str(RATE), "-t",
                            str(SECONDS), "-i", photo, "-vf", pan, "-g", str(GOP)] + codec + [path + ".part." + ext],
                           check=True)
            os.replace(path + ".part." + ext, path)
        made[kind] = path
    return made


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--darkroom", default=os.path.join(ROOT, ".build", "release", "darkroom"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--photos", default=os.path.join(ROOT, "..", "shared", "photos", "jpeg-12mp"))
    args = parser.parse_args()
    subprocess.run([os.path.join(ROOT, "scripts", "install-deps.sh"), "ffmpeg", "ffmpegthumbnailer"], check=True)
    directory = os.path.join(ROOT, ".build-bench", "video-ranges")
    photo = os.path.join(args.photos, sorted(f for f in os.listdir(args.photos) if f.lower().endswith(".jpg"))[0])
    clips = make_clips(directory, photo)
    counter = Counter()
    server = origin(directory, counter)
    port = server.server_address[1]
    work = tempfile.mkdtemp(prefix="video-ranges-")
    report = {"seconds": SECONDS, "clips": {}}
    for kind, path in clips.items():
        url = f"http://127.0.0.1:{port}/{os.path.basename(path)}"
        runs = {"darkroom": [], "ffmpegthumbnailer": []}
        for _ in range(args.rounds):
            for tool in runs:
                counter.take()
                inside = None
                if tool == "darkroom":
                    cmd = [args.darkroom, "fetch", url, "--max-pixel-size", "256", "--json"]
                    start = time.monotonic()
                    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True).stdout
                    wall = time.monotonic() - start
                    summary = json.loads(out.strip().splitlines()[-1])
                    assert summary["failures"] == 0, summary
                    inside = summary["elapsed_s"]
                else:
                    cmd = ["ffmpegthumbnailer", "-i", url, "-o", os.path.join(work, "t.png"), "-s", "256"]
                    wall, _ = timed(cmd)
                sent, requests = counter.take()
                runs[tool].append((sent, requests, wall, inside))
        size = os.path.getsize(path)
        row = {"size_bytes": size}
        for tool, results in runs.items():
            sent = statistics.median(r[0] for r in results)
            row[tool] = {"bytes": sent, "requests": statistics.median(r[1] for r in results),
                         "wall_seconds": round(statistics.median(r[2] for r in results), 3),
                         "fetch_seconds": (round(statistics.median(r[3] for r in results), 3)
                                           if results[0][3] is not None else None),
                         "share_of_file": round(sent / size, 4)}
        row["bytes_ratio_ffmpegthumbnailer_over_darkroom"] = round(
            row["ffmpegthumbnailer"]["bytes"] / max(1, row["darkroom"]["bytes"]), 2)
        report["clips"][kind] = row
    server.shutdown()
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
