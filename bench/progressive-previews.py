#!/usr/bin/env python3
"""Progressive previews of a slow download: when the first preview shows and what the previews cost.

A 12 MP photo (shared/photos/jpeg-12mp/path-4032x3024.jpg) re-encoded by Pillow as a progressive JPEG
(quality 80, libjpeg's default scan script: 2.0 MB, 10 scans) is served from 127.0.0.1 at --rate bytes a second
(16 KiB every 16 ms by default: 1 MB/s) and loaded with `darkroom fetch URL --progress --json --max-pixel-size
--size`. Reports, over --rounds runs (median):
  - first_scan_arrives_ms: when the bytes of the first whole scan have been sent (its end offset / rate);
  - display_decode_ms: one decode of the whole file at the display size (the same command on the file itself);
  - first_preview_ms: when the first preview was delivered, and the goal first_scan_arrives_ms + display_decode_ms;
  - previews, preview_decode_ms (summed) and final_decode_ms; the previews' extra CPU is everything the download's
    decodes took beyond one decode of the whole file: (preview_decode_ms + final_decode_ms - display_decode_ms) /
    display_decode_ms (the previews read the scans the final image needs, so their time is not all extra).
Prints one JSON object. Needs Pillow.
Usage: bench/progressive-previews.py [--darkroom PATH] [--rate 1000000] [--size 1280] [--rounds 3]
"""
import argparse, http.server, io, json, os, socketserver, statistics, subprocess, tempfile, threading, time

from PIL import Image


def scan_ends(data):
    """Offsets where each scan's entropy-coded data ends (the next marker), walking the segments."""
    i, ends, in_scan = 2, [], False
    while i < len(data) - 1:
        if in_scan:
            if data[i] == 0xFF and data[i + 1] not in (0x00, 0xFF) and not 0xD0 <= data[i + 1] <= 0xD7:
                ends.append(i)
                in_scan = False
                continue
            i += 1
            continue
        marker = data[i + 1]
        if marker == 0xD9:
            break
        length = data[i + 2] << 8 | data[i + 3]
        in_scan = marker == 0xDA
        i += 2 + length
    return ends


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--darkroom", default=os.path.join(here, "..", ".build", "release", "darkroom"))
    ap.add_argument("--photo", default=os.path.join(here, "..", "..", "shared", "photos", "jpeg-12mp",
                                                    "path-4032x3024.jpg"))
    ap.add_argument("--rate", type=int, default=1_000_000, help="bytes a second")
    ap.add_argument("--size", type=int, default=1280)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    with Image.open(a.photo) as im:
        out = io.BytesIO()
        im.save(out, "JPEG", quality=80, progressive=True, optimize=True)
    data = out.getvalue()
    ends = scan_ends(data)
    chunk, pause = 16384, 16384 / a.rate

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "image/jpeg")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            for i in range(0, len(data), chunk):
                self.wfile.write(data[i:i + chunk])
                self.wfile.flush()
                time.sleep(pause)

        def log_message(self, *args):
            pass

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/progressive.jpg"
    work = tempfile.mkdtemp(prefix="darkroom-previews-")
    path = os.path.join(work, "progressive.jpg")
    with open(path, "wb") as f:
        f.write(data)

    def fetch(source, progress):
        cmd = [a.darkroom, "fetch", source, "--json", "--max-pixel-size", str(a.size)] + (["--progress"] if progress else [])
        lines = [json.loads(l) for l in subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()]
        return [l for l in lines if "preview" in l], [l for l in lines if "decode_ms" in l and "preview" not in l][0]

    rounds = []
    for _ in range(a.rounds):
        display = fetch(path, False)[1]["decode_ms"]
        previews, final = fetch(url, True)
        if not previews:
            raise SystemExit("no preview was delivered")
        rounds.append({"display_decode_ms": display, "first_preview_ms": previews[0]["elapsed_ms"],
                       "previews": len(previews), "preview_decode_ms": sum(p["decode_ms"] for p in previews),
                       "final_decode_ms": final["decode_ms"]})
    server.shutdown()
    med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    first_scan_ms = 1000 * (ends[0] + 2) / a.rate
    print(json.dumps({
        "benchmark": "progressive-previews", "bytes": len(data), "scans": len(ends), "rate": a.rate, "size": a.size,
        "rounds": a.rounds, "first_scan_arrives_ms": round(first_scan_ms, 1),
        "display_decode_ms": round(med["display_decode_ms"], 1),
        "first_preview_ms": round(med["first_preview_ms"], 1),
        "first_preview_goal_ms": round(first_scan_ms + med["display_decode_ms"], 1),
        "previews": med["previews"], "preview_decode_ms": round(med["preview_decode_ms"], 1),
        "final_decode_ms": round(med["final_decode_ms"], 1),
        "extra_cpu_ratio": round(statistics.median(
            (r["preview_decode_ms"] + r["final_decode_ms"] - r["display_decode_ms"]) / r["display_decode_ms"]
            for r in rounds), 3),
        "runs": rounds}))


if __name__ == "__main__":
    main()
