#!/usr/bin/env python3
"""darkroom's colour management against Pillow + ImageCms (lcms2), an independent implementation.

For each image in shared/photos/icc: Pillow converts the full image from its embedded profile to sRGB with
ImageCms (as darkroom does: relative colorimetric for RGB, perceptual for CMYK) and resizes it with LANCZOS to the
size darkroom's thumbnail has; darkroom thumbnails the same file to PNG (`darkroom thumb --format png`, colour
converted after its own shrink-on-load and resample). Reports PSNR (RGB) between the two, and between Pillow's
reference and the file's pixels with the profile ignored. Adds `press-cmyk.jpg`, the CMYK sample with a press
profile whose perceptual table differs from its colorimetric one (scripts/make-press-cmyk.py), where the intent
matters.
Usage: bench/color-vs-pillow.py [--darkroom PATH] [--photos DIR] [--size 256]
Prints one JSON object. Needs Pillow (pip install Pillow).
"""
import argparse, io, json, math, os, subprocess, tempfile

from PIL import Image, ImageCms


def psnr(a, b):
    a, b = a.convert("RGB"), b.convert("RGB")
    assert a.size == b.size, (a.size, b.size)
    pa, pb = a.tobytes(), b.tobytes()
    se = sum((x - y) ** 2 for x, y in zip(pa, pb))
    return float("inf") if se == 0 else 10 * math.log10(255 * 255 * len(pa) / se)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--darkroom", default=os.path.join(here, "..", ".build", "release", "darkroom"))
    ap.add_argument("--photos", default=os.path.join(here, "..", "..", "shared", "photos", "icc"))
    ap.add_argument("--size", type=int, default=256)
    a = ap.parse_args()
    files = sorted(f for f in os.listdir(a.photos) if f.rsplit(".", 1)[-1] in ("jpg", "png", "webp"))
    out = tempfile.mkdtemp(prefix="darkroom-color-")
    paths = {f: os.path.join(a.photos, f) for f in files}
    cmyk = next(f for f in files if "cmyk" in f)
    paths["press-cmyk.jpg"] = os.path.join(out, "press-cmyk.jpg")
    subprocess.run(["python3", os.path.join(here, "..", "scripts", "make-press-cmyk.py"), paths[cmyk],
                    paths["press-cmyk.jpg"]], check=True, stdout=subprocess.DEVNULL)
    files.append("press-cmyk.jpg")
    subprocess.run([a.darkroom, "thumb"] + [paths[f] for f in files] +
                   ["--max-pixel-size", str(a.size), "--out", out, "--format", "png", "--json"],
                   check=True, stdout=subprocess.DEVNULL)
    srgb = ImageCms.createProfile("sRGB")
    rows = []
    for f in files:
        ours = Image.open(os.path.join(out, os.path.splitext(f)[0] + ".png"))
        im = Image.open(paths[f])
        icc = im.info.get("icc_profile")
        source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
        if im.mode == "CMYK":
            ref = ImageCms.profileToProfile(im, source, srgb, renderingIntent=ImageCms.Intent.PERCEPTUAL,
                                            outputMode="RGB")
        else:
            ref = ImageCms.profileToProfile(im, source, srgb,
                                            renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC,
                                            outputMode="RGB", flags=ImageCms.Flags.BLACKPOINTCOMPENSATION)
        ref = ref.resize(ours.size, Image.LANCZOS)
        ignored = (im.convert("RGB") if im.mode != "CMYK" else im.convert("RGB")).resize(ours.size, Image.LANCZOS)
        rows.append({"file": f, "mode": im.mode, "size": list(ours.size),
                     "psnr_db_vs_pillow_imagecms": round(psnr(ours, ref), 2),
                     "psnr_db_profile_ignored_vs_pillow_imagecms": round(psnr(ignored, ref), 2)})
    print(json.dumps({"benchmark": "color-vs-pillow", "size": a.size, "pillow": Image.__version__, "files": rows}))


if __name__ == "__main__":
    main()
