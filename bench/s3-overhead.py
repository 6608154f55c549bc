#!/usr/bin/env python3
"""S3 fetch + render against a local file: the overhead of originals in an S3-compatible store on loopback.

    bench/s3-overhead.py [--darkroom .build/release/darkroom] [--photo ../shared/photos/jpeg-12mp/…] [--rounds 20]

Starts moto (an S3 API server) on loopback, uploads the photo, starts `darkroom serve` with `--root` on the
photo's folder and `--allow-bucket`, then requests ROUNDS uncached thumbnails (a new width each time, no disk cache,
so every request fetches and decodes the original) alternately from `s3://` and from the file, and prints the
median of each and the difference.
"""
import argparse
import glob
import os
import re
import socket
import statistics
import subprocess
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    default_photo = sorted(glob.glob(os.path.join(root, "..", "shared", "photos", "jpeg-12mp", "*.jpg")))[0]
    parser = argparse.ArgumentParser()
    parser.add_argument("--darkroom", default=".build/release/darkroom")
    parser.add_argument("--photo", default=default_photo)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    import boto3

    port = free_port()
    moto = subprocess.Popen(["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = None
    try:
        endpoint = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing", aws_secret_access_key="testing",
                          region_name="us-east-1")
        s3.create_bucket(Bucket="photos")
        name = os.path.basename(args.photo)
        s3.upload_file(args.photo, "photos", name)
        env = dict(os.environ, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing")
        server = subprocess.Popen([args.darkroom, "serve", "--port", "0", "--root", os.path.dirname(args.photo),
                                   "--allow-bucket", "photos", "--s3-endpoint", endpoint, "--decoded-cache-mb", "1"],
                                  stdout=subprocess.PIPE, text=True, env=env)
        base = re.search(r"http://\S+/", server.stdout.readline()).group(0).rstrip("/")
        times = {"file": [], "s3": []}
        for i in range(args.rounds):
            for kind, src in (("file", name), ("s3", f"s3://photos/{name}")):
                url = f"{base}/v1/thumb?src={urllib.request.quote(src, safe='')}&w={200 + i}&format=jpeg"
                t0 = time.perf_counter()
                body = urllib.request.urlopen(url).read()
                times[kind].append((time.perf_counter() - t0) * 1000)
                assert body[:2] == b"\xff\xd8", kind
        size = os.path.getsize(args.photo) / 1e6
        f, s = statistics.median(times["file"]), statistics.median(times["s3"])
        print(f"{name} ({size:.1f} MB), {args.rounds} uncached 12 MP → ~200 px renders each:")
        print(f"  file: median {f:.1f} ms   s3 (moto on loopback): median {s:.1f} ms   overhead {s - f:+.1f} ms "
              f"({s / f:.2f}×)")
    finally:
        if server:
            server.terminate()
            server.wait()
        moto.kill()
        moto.wait()


if __name__ == "__main__":
    main()
