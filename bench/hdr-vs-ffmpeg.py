#!/usr/bin/env python3
"""Darkroom's PQ/HLG → SDR tone map against ffmpeg's (zscale + the tonemap filter), in CIEDE2000.

    bench/hdr-vs-ffmpeg.py [--darkroom PATH] [--photos DIR] [--real AVIF ...]

The inputs are SDR photos (a 2560 × 1600 one and the first 12 MP one) made HDR by scripts/make-hdr-samples.py --highlights --png (colour-science: BT.2020 PQ
16-bit PNGs with `cICP`, reference white at 203 nits, the brightest tenth pushed up to 1,000 nits), at 1,280 px. Each
is tone-mapped at full size by `darkroom thumb --format png` (BT.2390 from the measured peak, hue-preserving) and by
ffmpeg 5.1 (Debian's; installed with apt-get when missing): `zscale` to linear light with 203 nits as 1.0, BT.2020 →
BT.709 in linear light, `tonemap` with the Möbius and Hable operators (`desat=0`, peak from the file), then the sRGB
curve. colour-science's CIEDE2000 compares them (sRGB → XYZ D65 → Lab), over every pixel and split where the source's
brightest channel is below half of SDR white (where a tone map should leave light alone), between that and SDR
white, and above it (the roll-off, where the operators differ by design). The SDR original is scored the same way.

With --real, real HDR content is compared too: each AVIF in PQ (its own primaries, BT.2020 or Display P3), as
Darkroom reads it and, for ffmpeg, as libavif's own avifdec decodes it to 16-bit RGB (ffmpeg 5.1 reads no AVIF).
There is no SDR original for such content; the peak is measured from the file. Prints one JSON object.
"""
import argparse, glob, json, os, shutil, struct, subprocess, tempfile, warnings

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
M1, M2 = 2610 / 16384, 2523 / 4096 * 128
C1, C2, C3 = 3424 / 4096, 2413 / 4096 * 32, 2392 / 4096 * 32


def lab(path):
    warnings.filterwarnings("ignore")
    import colour
    rgb = np.asarray(Image.open(path).convert("RGB"), np.float64) / 255
    xyz = colour.RGB_to_XYZ(colour.cctf_decoding(rgb, function="sRGB"), colour.RGB_COLOURSPACES["sRGB"],
                            illuminant=colour.RGB_COLOURSPACES["sRGB"].whitepoint)
    return colour.XYZ_to_Lab(xyz, illuminant=colour.RGB_COLOURSPACES["sRGB"].whitepoint)


def source_nits(path):
    import imagecodecs
    signal = imagecodecs.png_decode(open(path, "rb").read())[..., :3].astype(np.float64) / 65535
    p = signal ** (1 / M2)
    return 10000 * (np.maximum(p - C1, 0) / (C2 - C3 * p)) ** (1 / M1)


def colour_box(data):
    """An AVIF's first `colr` box of type `nclx`: (primaries, transfer, matrix)."""
    at = data.find(b"colrnclx")
    return struct.unpack(">HHH", data[at + 8:at + 14])


def compare(darkroom, source, ffmpeg_source, primaries, work, name, sdr_original):
    """CIEDE2000 between Darkroom's and ffmpeg's tone maps of one PQ image (`ffmpeg_source`: the same signal as a
    16-bit PNG in `primaries`), split by the source's light; `sdr_original` is scored too when there is one."""
    import colour
    nits = source_nits(ffmpeg_source)
    peak = float(nits.max())
    out = os.path.join(work, "darkroom-" + name)
    subprocess.run([darkroom, "thumb", source, "--max-pixel-size", "1280", "--format", "png", "--out", out],
                   check=True, capture_output=True)
    renders = {"darkroom": glob.glob(os.path.join(out, "*.png"))[0]}
    if sdr_original:
        renders["sdr_original"] = sdr_original
    for operator in ("mobius", "hable"):
        target = os.path.join(work, f"{name}-{operator}.png")
        chain = (f"setparams=color_primaries={primaries}:color_trc=smpte2084:colorspace=gbr:range=pc,"
                 "zscale=t=linear:npl=203,format=gbrpf32le,zscale=p=bt709,"
                 f"tonemap=tonemap={operator}:desat=0:peak={peak / 203:.4f},"
                 "zscale=t=iec61966-2-1:m=gbr:r=pc,format=rgb24")
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-i", ffmpeg_source, "-vf", chain,
                        target], check=True)
        renders["ffmpeg_" + operator] = target
    # A source larger than 1,280 px: Darkroom's output is its thumbnail; ffmpeg's (full size) and the source's light
    # are resized to it (Lanczos; the light in linear light) before they are compared
    size = Image.open(renders["darkroom"]).size
    for key, path in list(renders.items()):
        if Image.open(path).size != size:
            resized = os.path.join(work, f"{name}-{key}-{size[0]}.png")
            Image.open(path).convert("RGB").resize(size, Image.LANCZOS).save(resized)
            renders[key] = resized
    if nits.shape[1::-1] != size:
        nits = np.stack([np.asarray(Image.fromarray(nits[..., c].astype(np.float32), "F").resize(size, Image.LANCZOS))
                         for c in range(3)], axis=-1).astype(np.float64)
    brightest = nits.max(axis=-1)
    regions = {"all": np.ones_like(brightest, bool), "below_half_white": brightest < 101.5,
               "to_white": (brightest >= 101.5) & (brightest <= 203), "above_white": brightest > 203}
    labs = {k: lab(v) for k, v in renders.items()}
    pairs = [("darkroom", "ffmpeg_mobius"), ("darkroom", "ffmpeg_hable"), ("ffmpeg_mobius", "ffmpeg_hable")]
    if sdr_original:
        pairs += [("darkroom", "sdr_original"), ("ffmpeg_mobius", "sdr_original")]
    scores = {}
    for a, b in pairs:
        de = colour.delta_E(labs[a], labs[b], method="CIE 2000")
        scores[f"{a}_vs_{b}"] = {r: {"mean": round(float(de[m].mean()), 2),
                                     "p95": round(float(np.percentile(de[m], 95)), 2)}
                                 for r, m in regions.items() if m.any()}
    return {"peak_nits": round(peak, 1), "share_above_white": round(float(regions["above_white"].mean()), 3),
            "delta_e2000": scores}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--darkroom", default=os.path.join(ROOT, ".build", "release", "darkroom"))
    ap.add_argument("--photos", default=os.path.join(ROOT, "..", "shared", "photos", "jpeg"))
    ap.add_argument("--real", nargs="*", default=[], help="real HDR AVIFs in PQ (BT.2020 or Display P3 primaries)")
    args = ap.parse_args()
    if shutil.which("ffmpeg") is None:
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "ffmpeg"], check=True,
                       stdout=subprocess.DEVNULL)
    import colour
    warnings.filterwarnings("ignore")
    version = subprocess.run(["ffmpeg", "-version"], capture_output=True, text=True).stdout.split("\n")[0]
    work = tempfile.mkdtemp(prefix="hdr-ffmpeg-")
    result = {"ffmpeg": version, "photos": {}}
    for photo in sorted(glob.glob(os.path.join(args.photos, "colorfulcups-2560x1600.jpg"))
                        + sorted(glob.glob(os.path.join(args.photos, "..", "jpeg-12mp", "*.jpg")))[:1]):
        name = os.path.splitext(os.path.basename(photo))[0]
        subprocess.run(["python3", os.path.join(ROOT, "scripts", "make-hdr-samples.py"), photo, work, "--max-side",
                        "1280", "--highlights", "--png"], check=True, capture_output=True)
        source = os.path.join(work, f"{name}-highlights-pq.png")
        result["photos"][name] = compare(
            args.darkroom, source, source, "bt2020", work, name, os.path.join(work, f"{name}-sdr.png"))
    for path in args.real:
        name = os.path.splitext(os.path.basename(path))[0]
        decoded = os.path.join(work, f"{name}-avifdec.png")
        subprocess.run(["avifdec", "-d", "16", path, decoded], check=True, capture_output=True)
        primaries = {9: "bt2020", 12: "smpte432"}[colour_box(open(path, "rb").read())[0]]
        result["photos"][name] = compare(args.darkroom, path, decoded, primaries, work, name, None)
    shutil.rmtree(work)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
