#!/usr/bin/env python3
"""What tone mapping PQ and HLG to SDR costs, and keeping them HDR: `darkroom thumb` of 12 MP HDR AVIFs to 256 px,
tone-mapped (the default) against the same files decoded with --keep-color-profile (no tone map: the signal left as
it is), and `vipsthumbnail` (which does not tone-map) beside them; and `--hdr keep --format avif` (a 10-bit AVIF in the
source's transfer: PQ of the light, HLG of the scene light) against the tone-mapped SDR AVIF (`--format avif`),
alternating for --rounds rounds in one run.

    bench/hdr-tonemap.py [--darkroom PATH] [--rounds 5] [--count 8]

The inputs are made once into .build-bench/hdr/ by scripts/make-hdr-samples.py (colour-science + avifenc, 10-bit
4:4:4, BT.2020) from the 12 MP photos in ../shared/photos/jpeg-12mp: each as PQ and as HLG, with its highlights pushed
up to 1,000 nits (--highlights), --count files of each cycled as hard links. Reports the median wall time of each
tool over all files (--jobs 2 for darkroom, 2 vipsthumbnail processes via xargs -P 2), the kept AVIF's time over the
SDR AVIF's, the tone map's cost as a ratio (of the wall-time medians, of the fastest runs, the least disturbed by other
programs, and of the median CPU seconds, user and system over all threads: the work added, however the jobs were
scheduled), Darkroom against vips, and this machine's yardstick: a 12 MP JPEG → 256 px (`darkroom bench decode`,
jpeg_thumb_ms). Then agreement: a 2560 × 1600 SDR photo carried in PQ and HLG (AVIF, and HEIC through pillow-heif) at
1,280 px, white at 203 nits, thumbnailed to 256 px beside the SDR original: PSNR against it, tone-mapped and not; and
the kept AVIFs of the first 12 MP photo with highlights against its light resized by Pillow in linear light (HLG:
its scene light resized, then shown on a 1,000-nit display; scripts/check-hdr-display.py: PSNR of the PQ signal,
brightest light). Prints one JSON object.
"""
import glob, json, os, shutil, statistics, subprocess, tempfile

from benchlib import ROOT, alternate, linked, thumbnail_arguments, timed, vips_thumbnails, yardstick


def main():
    args = thumbnail_arguments()
    samples = os.path.join(ROOT, ".build-bench", "hdr")
    photos = sorted(glob.glob(os.path.join(args.photos, "*.jpg")))[:2]
    for photo in photos:
        name = os.path.splitext(os.path.basename(photo))[0]
        if not os.path.exists(os.path.join(samples, f"{name}-highlights-hlg.avif")):
            subprocess.run(["python3", os.path.join(ROOT, "scripts", "make-hdr-samples.py"), photo, samples,
                            "--highlights"], check=True)
    machine = yardstick(args.darkroom)
    result = {"rounds": args.rounds, "count": args.count, "yardstick_jpeg_thumb_ms": machine,
              "transfers": {}}
    for transfer in ("pq", "hlg"):
        inputs = sorted(glob.glob(os.path.join(samples, f"*-highlights-{transfer}.avif")))
        work = tempfile.mkdtemp(prefix="hdr-bench-")
        files = linked(inputs, args.count, work, "avif")
        def run(kind, out):
            if kind == "vips":
                return vips_thumbnails(files, out)
            extra = {"keep": ["--keep-color-profile"], "sdr_avif": ["--format", "avif"],
                     "kept_avif": ["--hdr", "keep", "--format", "avif"]}.get(kind, [])
            wall, mib, seconds = timed([args.darkroom, "thumb", *files, "--max-pixel-size", "256", "--out", out,
                                        "--jobs", "2", *extra], cpu=True)
            cpu.setdefault(kind, []).append(seconds)
            return wall, mib

        cpu = {}
        runs, rss, _ = alternate(args.rounds, ["tonemap", "keep", "vips", "sdr_avif", "kept_avif"], run, work)
        med = {k: statistics.median(v) for k, v in runs.items()}
        best = {k: min(v) for k, v in runs.items()}
        cpu_med = {k: statistics.median(v) for k, v in cpu.items()}
        result["transfers"][transfer] = {
            "median_s": med, "min_s": best, "runs_s": runs, "cpu_s": cpu, "peak_rss_mib": rss,
            "tonemap_cost": round(med["tonemap"] / med["keep"] - 1, 4),
            "tonemap_cost_min": round(best["tonemap"] / best["keep"] - 1, 4),
            "tonemap_cost_cpu": round(cpu_med["tonemap"] / cpu_med["keep"] - 1, 4),
            "darkroom_vs_vips": round(med["vips"] / med["tonemap"], 3),
            "kept_avif_vs_sdr_avif": round(med["kept_avif"] / med["sdr_avif"], 3),
            "kept_avif_vs_sdr_avif_min": round(best["kept_avif"] / best["sdr_avif"], 3),
        }
        result["transfers"][transfer]["kept"] = kept(args.darkroom, inputs[0])
        shutil.rmtree(work)
    result["agreement_db"] = agreement(args.darkroom, os.path.join(args.photos, "..", "jpeg", "colorfulcups-2560x1600.jpg"))
    print(json.dumps(result, indent=1))


def kept(darkroom, source):
    """The kept AVIF of `source` against its light resized by Pillow in linear light."""
    work = tempfile.mkdtemp(prefix="hdr-kept-")
    subprocess.run([darkroom, "thumb", source, "--max-pixel-size", "256", "--out", work, "--hdr", "keep", "--format",
                    "avif"], check=True, capture_output=True)
    output = glob.glob(os.path.join(work, "*.avif"))[0]
    check = json.loads(subprocess.run(
        ["python3", os.path.join(ROOT, "scripts", "check-hdr-display.py"), output, source, source], check=True,
        capture_output=True, text=True).stdout)
    size = os.path.getsize(output)
    shutil.rmtree(work)
    return {"psnr_pq_db": round(check["psnrPQ"], 2), "peak_nits": round(check["peakNits"], 1),
            "reference_peak_nits": round(check["referencePeakNits"], 1), "bytes": size}


def agreement(darkroom, photo):
    import numpy as np
    from PIL import Image
    work = tempfile.mkdtemp(prefix="hdr-agreement-")
    subprocess.run(["python3", os.path.join(ROOT, "scripts", "make-hdr-samples.py"), photo, work, "--max-side", "1280",
                    "--heif"], check=True, capture_output=True)
    files = sorted(glob.glob(os.path.join(work, "*.avif")) + glob.glob(os.path.join(work, "*.heic")))
    original = glob.glob(os.path.join(work, "*-sdr.png"))
    out = {}
    for kind, extra in (("tonemapped", []), ("untouched", ["--keep-color-profile"])):
        folder = os.path.join(work, kind)
        subprocess.run([darkroom, "thumb", *files, *original, "--max-pixel-size", "256", "--out", folder,
                        "--format", "png", *extra], check=True, capture_output=True)
        ref = np.asarray(Image.open(os.path.join(folder, os.path.basename(original[0]))).convert("RGB")).astype(float)
        for f in files:
            a = np.asarray(Image.open(os.path.join(folder, os.path.basename(f) + ".png")).convert("RGB")).astype(float)
            mse = ((a - ref) ** 2).mean()
            out.setdefault(os.path.basename(f).split("-")[-1], {})[kind] = round(10 * np.log10(255 ** 2 / mse), 2)
    shutil.rmtree(work)
    return out


if __name__ == "__main__":
    main()
