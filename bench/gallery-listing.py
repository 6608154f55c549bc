#!/usr/bin/env python3
"""`GET /` on a library of many files: the first listing, then page views served from the kept listing.

    bench/gallery-listing.py [--darkroom .build/release/darkroom] [--files 100000] [--folders 100] [--views 200]

Creates FILES empty `.jpg` files in FOLDERS folders under a temporary root (the listing never opens them), starts
`darkroom serve --root` on it, times the first `GET /` (which waits for the scan when it has not finished), then
VIEWS requests each of `/`, `/?dir=FOLDER` and `/?dir=FOLDER&page=3`, and prints the median and 95th percentile.
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time
import urllib.request


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--darkroom", default=".build/release/darkroom")
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--folders", type=int, default=100)
    parser.add_argument("--views", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        per = args.files // args.folders
        for f in range(args.folders):
            folder = os.path.join(root, f"f{f:03d}")
            os.mkdir(folder)
            for i in range(per):
                open(os.path.join(folder, f"img{i:05d}.jpg"), "w").close()
        server = subprocess.Popen([args.darkroom, "serve", "--root", root, "--port", "0"], stdout=subprocess.PIPE,
                                  text=True)
        try:
            line = server.stdout.readline()
            base = re.search(r"http://\S+/", line).group(0).rstrip("/")
            t0 = time.perf_counter()
            first = urllib.request.urlopen(base + "/").read().decode()
            first_ms = (time.perf_counter() - t0) * 1000
            count = re.search(r"— (\d+) images</title>", first).group(1)
            print(f"{args.files} files in {args.folders} folders: first GET / {first_ms:.1f} ms, title count {count}")
            for path in ["/", "/?dir=f050", "/?dir=f050&page=3"]:
                times = []
                size = 0
                for _ in range(args.views):
                    t0 = time.perf_counter()
                    size = len(urllib.request.urlopen(base + path).read())
                    times.append((time.perf_counter() - t0) * 1000)
                times.sort()
                p95 = times[int(len(times) * 0.95) - 1]
                print(f"GET {path:22} median {statistics.median(times):6.2f} ms, p95 {p95:6.2f} ms ({size} bytes)")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
