#!/usr/bin/env python3
"""What keeping a gain map costs: `darkroom thumb --hdr keep` of 12 MP Ultra HDR JPEGs to 256 px (an Ultra HDR
thumbnail: the base and the gain map each decoded, resized and encoded) against the SDR thumbnail of the same files
(the default: the base image alone), and `vipsthumbnail` (SDR) beside them, alternating for --rounds rounds in one
run.

    bench/ultrahdr-keep.py [--darkroom PATH] [--rounds 5] [--count 8]

The inputs are made once into .build-bench/ultrahdr/ by scripts/make-gainmap-samples.py from two 12 MP photos in
../shared/photos/jpeg-12mp at full size: by libultrahdr (imagecodecs; ISO 21496-1, a 3-channel gain map at 1/4) and
by pyultrahdr (hdrgm XMP, a gray gain map at 1/4), --count files cycled as hard links. Reports the median wall time
of each tool over all files (--jobs 2 for darkroom, 2 vipsthumbnail processes via xargs -P 2), the cost of keeping as
a ratio (of the medians, and of the fastest runs), Darkroom against vips, the output sizes, and this machine's
yardstick: a 12 MP JPEG → 256 px (`darkroom bench decode`, jpeg_thumb_ms). Prints one JSON object.
"""
import argparse, glob, json, os, shutil, statistics, subprocess, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def timed(cmd, shell=False):
    p = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M"] + (["sh", "-c", cmd] if shell else cmd),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, VIPS_WARNING="0"))
    if p.returncode != 0:
        raise SystemExit(f"failed: {cmd}\n{p.stderr[-2000:]}")
    line = [l for l in p.stderr.splitlines() if l.startswith("TIME ")][-1].split()
    return float(line[1]), int(line[2]) / 1024


def folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--darkroom", default=os.path.join(ROOT, ".build", "release", "darkroom"))
    ap.add_argument("--photos", default=os.path.join(ROOT, "..", "shared", "photos", "jpeg-12mp"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--count", type=int, default=8)
    args = ap.parse_args()
    samples = os.path.join(ROOT, ".build-bench", "ultrahdr")
    for photo in sorted(glob.glob(os.path.join(args.photos, "*.jpg")))[:2]:
        name = os.path.splitext(os.path.basename(photo))[0]
        if not os.path.exists(os.path.join(samples, f"{name}-xmp.jpg")):
            subprocess.run(["python3", os.path.join(ROOT, "scripts", "make-gainmap-samples.py"), photo, samples,
                            "--max-side", "100000", "--no-references"], check=True)
    yardstick = json.loads(subprocess.run([args.darkroom, "bench", "decode", "--json", "--iterations", "5"],
                                          check=True, capture_output=True, text=True).stdout)
    inputs = sorted(glob.glob(os.path.join(samples, "*.jpg")))
    work = tempfile.mkdtemp(prefix="ultrahdr-bench-")
    files = []
    for i in range(args.count):
        link = os.path.join(work, f"in{i:03d}.jpg")
        os.link(inputs[i % len(inputs)], link)
        files.append(link)
    runs = {"keep": [], "sdr": [], "vips": []}
    rss = {k: 0 for k in runs}
    size = {}
    for _ in range(args.rounds):
        for kind in runs:
            out = tempfile.mkdtemp(dir=work)
            if kind == "vips":
                t, m = timed(f"printf '%s\\n' {' '.join(files)} | xargs -P 2 -n {len(files) // 2} "
                             f"vipsthumbnail -s 256 -o {out}/%s.jpg[Q=85]", shell=True)
            else:
                t, m = timed([args.darkroom, "thumb", *files, "--max-pixel-size", "256", "--out", out,
                              "--jobs", "2", "--hdr", kind])
            runs[kind].append(t)
            rss[kind] = max(rss[kind], m)
            size[kind] = folder_bytes(out) // len(files)
            shutil.rmtree(out)
    shutil.rmtree(work)
    med = {k: statistics.median(v) for k, v in runs.items()}
    best = {k: min(v) for k, v in runs.items()}
    print(json.dumps({
        "rounds": args.rounds, "count": args.count, "inputs": [os.path.basename(f) for f in inputs],
        "yardstick_jpeg_thumb_ms": yardstick.get("jpeg_thumb_ms"),
        "median_s": med, "min_s": best, "runs_s": runs, "peak_rss_mib": rss, "output_bytes_each": size,
        "keep_cost": round(med["keep"] / med["sdr"], 3), "keep_cost_min": round(best["keep"] / best["sdr"], 3),
        "keep_vs_vips": round(med["vips"] / med["keep"], 3), "sdr_vs_vips": round(med["vips"] / med["sdr"], 3),
    }, indent=1))


if __name__ == "__main__":
    main()
