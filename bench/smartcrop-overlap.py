#!/usr/bin/env python3
"""Smart crop against libvips's attention crop, photo by photo.

    bench/smartcrop-overlap.py [--darkroom PATH] [--width 256 --height 256] [--rounds 5]

Runs `darkroom bench smartcrop --json` (the crop Darkroom picks for a W×H thumbnail, in source pixels, and the
12 MP rate with and without it), then `vips smartcrop SOURCE OUT CW CH --interesting attention` on each original
with the same crop size, reads the crop's position from the output's offsets, and prints per photo the share of
Darkroom's crop that vips's covers (intersection / crop area). Exits non-zero when vips is missing.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile


def vips_crop(path, width, height, scratch):
    out = os.path.join(scratch, "crop.v")
    subprocess.run(["vips", "smartcrop", path, out, str(width), str(height), "--interesting", "attention"],
                   check=True, capture_output=True)
    header = subprocess.run(["vipsheader", "-a", out], check=True, capture_output=True, text=True).stdout
    fields = dict(line.split(": ", 1) for line in header.splitlines() if ": " in line)
    return -int(fields["xoffset"]), -int(fields["yoffset"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--darkroom", default=".build/release/darkroom")
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--height", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if shutil.which("vips") is None:
        sys.exit("vips is missing: apt-get install libvips-tools")
    line = subprocess.run([args.darkroom, "bench", "smartcrop", "--json", "--width", str(args.width), "--height",
                           str(args.height), "--rounds", str(args.rounds)], check=True, capture_output=True,
                          text=True).stdout
    report = json.loads(line)["smartcrop"]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for p in report["placements"]:
            if p["width"] >= p["sourceWidth"] and p["height"] >= p["sourceHeight"]:
                continue  # the box has the photo's own shape: nothing to place
            if p["file"].endswith(("-animated.webp", ".heic", ".avif")):
                continue  # vips 8.14 on Debian reads neither animations' frame compositing nor HEIF alike
            p["width"] = min(p["width"], p["sourceWidth"])  # (scaling back may round one pixel over)
            p["height"] = min(p["height"], p["sourceHeight"])
            vx, vy = vips_crop(p["file"], p["width"], p["height"], scratch)
            ix = max(0, min(p["x"] + p["width"], vx + p["width"]) - max(p["x"], vx))
            iy = max(0, min(p["y"] + p["height"], vy + p["height"]) - max(p["y"], vy))
            overlap = ix * iy / (p["width"] * p["height"])
            rows.append((os.path.basename(p["file"]), p["x"], p["y"], vx, vy, overlap))
    print(f"{'photo':40} {'darkroom':>12} {'vips':>12} {'overlap':>8}")
    for name, x, y, vx, vy, overlap in rows:
        print(f"{name:40} {x:>5},{y:<6} {vx:>5},{vy:<6} {overlap:>7.0%}")
    good = sum(1 for r in rows if r[5] >= 0.5)
    overlaps = sorted(r[5] for r in rows)
    median = overlaps[len(overlaps) // 2] if overlaps else 0
    print(f"{good}/{len(rows)} photos overlap ≥ 50 %; median {median:.0%}")
    print(f"12 MP → {args.width}×{args.height}: centre {report['centreRate']:.1f}/s, smart {report['smartRate']:.1f}/s"
          f" = {report['smartToCentre']:.0%} of the centre crop's rate")


if __name__ == "__main__":
    main()
