#!/usr/bin/env python3
"""What keeping or applying a gain map costs, on 12 MP Ultra HDR JPEGs to 256 px, alternating for --rounds rounds in
one run:

- keep: `darkroom thumb --hdr keep` (an Ultra HDR thumbnail: the base and the gain map each decoded, resized and
  encoded) against `sdr`, the SDR JPEG thumbnail of the same files (the default: the base image alone);
- apply: `darkroom thumb --hdr apply` (the gain map applied, a 10-bit 4:4:4 PQ AVIF) against `sdr_avif`, the SDR
  AVIF thumbnail (8-bit 4:2:0);
- vips: `vipsthumbnail` (SDR JPEG) beside them.

    bench/gain-map.py [--darkroom PATH] [--rounds 5] [--count 8]

The inputs are made once into .build-bench/ultrahdr/ by scripts/make-gainmap-samples.py from two 12 MP photos in
../shared/photos/jpeg-12mp at full size: by libultrahdr (imagecodecs; ISO 21496-1, a 3-channel gain map at 1/4) and
by pyultrahdr (hdrgm XMP, a gray gain map at 1/4), --count files cycled as hard links. Reports the median wall time
of each (--jobs 2 for darkroom, 2 vipsthumbnail processes via xargs -P 2), the cost of keeping and of applying as
ratios (of the medians, and of the fastest runs), Darkroom against vips, the output sizes, and this machine's
yardstick: a 12 MP JPEG → 256 px (`darkroom bench decode`, jpeg_thumb_ms). Prints one JSON object.
"""
import glob, json, os, shutil, statistics, subprocess, tempfile

from benchlib import ROOT, alternate, linked, thumbnail_arguments, timed, vips_thumbnails, yardstick


def main():
    args = thumbnail_arguments()
    samples = os.path.join(ROOT, ".build-bench", "ultrahdr")
    for photo in sorted(glob.glob(os.path.join(args.photos, "*.jpg")))[:2]:
        name = os.path.splitext(os.path.basename(photo))[0]
        if not os.path.exists(os.path.join(samples, f"{name}-xmp.jpg")):
            subprocess.run(["python3", os.path.join(ROOT, "scripts", "make-gainmap-samples.py"), photo, samples,
                            "--max-side", "100000", "--no-references"], check=True)
    machine = yardstick(args.darkroom)
    inputs = sorted(glob.glob(os.path.join(samples, "*.jpg")))
    work = tempfile.mkdtemp(prefix="ultrahdr-bench-")
    files = linked(inputs, args.count, work, "jpg")
    def run(kind, out):
        if kind == "vips":
            return vips_thumbnails(files, out)
        mode = ["--hdr", "sdr", "--format", "avif"] if kind == "sdr_avif" else ["--hdr", kind]
        return timed([args.darkroom, "thumb", *files, "--max-pixel-size", "256", "--out", out, "--jobs", "2", *mode])

    runs, rss, total = alternate(args.rounds, ["keep", "sdr", "apply", "sdr_avif", "vips"], run, work)
    size = {k: v // len(files) for k, v in total.items()}
    shutil.rmtree(work)
    med = {k: statistics.median(v) for k, v in runs.items()}
    best = {k: min(v) for k, v in runs.items()}
    print(json.dumps({
        "rounds": args.rounds, "count": args.count, "inputs": [os.path.basename(f) for f in inputs],
        "yardstick_jpeg_thumb_ms": machine,
        "median_s": med, "min_s": best, "runs_s": runs, "peak_rss_mib": rss, "output_bytes_each": size,
        "keep_cost": round(med["keep"] / med["sdr"], 3), "keep_cost_min": round(best["keep"] / best["sdr"], 3),
        "apply_cost": round(med["apply"] / med["sdr_avif"], 3),
        "apply_cost_min": round(best["apply"] / best["sdr_avif"], 3),
        "keep_vs_vips": round(med["vips"] / med["keep"], 3), "sdr_vs_vips": round(med["vips"] / med["sdr"], 3),
    }, indent=1))


if __name__ == "__main__":
    main()
