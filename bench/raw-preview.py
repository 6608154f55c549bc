#!/usr/bin/env python3
"""A RAW thumbnail from the embedded preview vs a full develop of the same files, in one run.

    bench/raw-preview.py [--darkroom PATH] [--dngs DIR] [--count 40] [--rounds 3] [--size 256]

DIR holds DNGs with full-size JPEG previews (bench/make-format-samples.sh writes five 12 MP ones). Times, per
round: `darkroom thumb --max-pixel-size SIZE --jobs 1` over COUNT of them (cycled, as links) in one process, so its
start-up (about 30 ms) is spread as a long-running process spreads it (the preview, DCT-scaled), against
libraw's own full develop through rawpy (`postprocess()`, AHD demosaic, 8-bit) and its half-size develop
(`half_size=True`, what Darkroom falls back to when the preview is too small).
Prints one JSON object with the medians and the ratios.
"""
import argparse, glob, json, os, statistics, subprocess, tempfile, time


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--darkroom", default=os.path.join(here, "..", ".build", "release", "darkroom"))
    ap.add_argument("--dngs", default=os.path.join(here, "..", ".build-bench", "formats", "dng"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--size", type=int, default=256)
    a = ap.parse_args()
    import rawpy
    files = sorted(glob.glob(os.path.join(a.dngs, "*.dng")))
    if not files:
        raise SystemExit(f"no DNGs in {a.dngs}: run bench/make-format-samples.sh")
    preview, full, half = [], [], []
    links = tempfile.mkdtemp()
    for i in range(a.count):
        os.symlink(os.path.abspath(files[i % len(files)]), os.path.join(links, f"{i}.dng"))
    for _ in range(a.rounds):
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            subprocess.run([a.darkroom, "thumb", links, "--max-pixel-size", str(a.size), "--out", out, "--jobs", "1"],
                           check=True, stdout=subprocess.DEVNULL)
            preview.append((time.perf_counter() - start) / a.count)
        start = time.perf_counter()
        for f in files:
            with rawpy.imread(f) as raw:
                raw.postprocess(use_camera_wb=True, output_bps=8)
        full.append((time.perf_counter() - start) / len(files))
        start = time.perf_counter()
        for f in files:
            with rawpy.imread(f) as raw:
                raw.postprocess(use_camera_wb=True, output_bps=8, half_size=True)
        half.append((time.perf_counter() - start) / len(files))
    p, f, h = (statistics.median(x) * 1000 for x in (preview, full, half))
    for name in os.listdir(links):
        os.unlink(os.path.join(links, name))
    os.rmdir(links)
    print(json.dumps({"benchmark": "raw-preview", "files": len(files), "count": a.count, "size": a.size,
                      "rounds": a.rounds,
                      "darkroom_preview_ms_per_file": round(p, 1), "rawpy_full_develop_ms_per_file": round(f, 1),
                      "rawpy_half_develop_ms_per_file": round(h, 1), "speedup_vs_full_develop": round(f / p, 1),
                      "speedup_vs_half_develop": round(h / p, 1)}))


if __name__ == "__main__":
    main()
