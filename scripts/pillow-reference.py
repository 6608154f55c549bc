#!/usr/bin/env python3
"""Decodes images with Pillow as an independent reference: one JSON line a file, and an RGBA PNG of what Pillow shows.

    scripts/pillow-reference.py --out DIR FILE...

For each FILE: the first page (frame 0), turned upright by its orientation tag, converted to sRGB with ImageCms when
it carries a colour profile (CMYK without one by Pillow's plain inversion; Lab through ImageCms's Lab profile),
16-bit gray scaled to 8 bits (Pillow's own convert would clip), saved as DIR/<index>.png. The line says
{"file", "ok", "mode", "width", "height", "png"} or {"file", "ok": false, "error"}. `comparable` is false for modes
with no agreed display mapping (32-bit integer and float gray, whose range the file does not state, and signed
TIFF samples, whose sign Pillow ignores).
"""
import argparse
import io
import json
import os
import sys
import warnings

from PIL import Image, ImageCms, ImageOps

warnings.simplefilter("ignore")
Image.MAX_IMAGE_PIXELS = None


def to_rgba(image):
    """Pillow's image as 8-bit sRGB RGBA, or None when its mode has no agreed mapping."""
    mode = image.mode
    profile = image.info.get("icc_profile")
    if mode in ("I;16", "I;16B", "I;16L", "I;16N"):
        return _scale16(image)
    if mode in ("I", "F"):
        return None
    if mode == "LAB":
        lab = ImageCms.createProfile("LAB")
        srgb = ImageCms.createProfile("sRGB")
        return ImageCms.profileToProfile(image, lab, srgb, outputMode="RGB").convert("RGBA")
    if profile and mode in ("RGB", "RGBA", "CMYK", "L"):
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(profile))
            srgb = ImageCms.createProfile("sRGB")
            out_mode = "RGBA" if mode == "RGBA" else "RGB"
            converted = ImageCms.profileToProfile(image, source, srgb, outputMode=out_mode,
                                                  renderingIntent=ImageCms.Intent.PERCEPTUAL)
            return converted.convert("RGBA")
        except Exception:
            pass  # an unusable profile: Darkroom treats the image as sRGB too
    return image.convert("RGBA")


def _scale16(image):
    """16-bit gray to 8 bits by rounding v × 255 / 65535 (what a display shows)."""
    data = image.tobytes("raw", "I;16")
    values = bytes((int.from_bytes(data[i:i + 2], "little") * 255 + 32767) // 65535 for i in range(0, len(data), 2))
    return Image.frombytes("L", image.size, values).convert("RGBA")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for index, path in enumerate(args.files):
        line = {"file": path}
        try:
            with Image.open(path) as image:
                if getattr(image, "n_frames", 1) > 1:
                    image.seek(0)
                image.load()
                mode = image.mode
                upright = ImageOps.exif_transpose(image)
                # Signed TIFF samples: Pillow ignores the sign (libvips clips negatives); no agreed display
                signed = getattr(image, "tag_v2", {}).get(339) in (2, (2,), (2, 2, 2))
                rgba = None if signed else to_rgba(upright)
                line.update(ok=True, mode=mode, width=upright.width, height=upright.height, comparable=rgba is not None)
                if rgba is not None:
                    png = os.path.join(args.out, f"{index}.png")
                    rgba.save(png)
                    line["png"] = png
        except Exception as error:  # Pillow refuses it: the file is not counted against Darkroom
            line.update(ok=False, error=f"{type(error).__name__}: {error}")
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    sys.exit(main())
