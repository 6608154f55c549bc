#!/usr/bin/env python3
"""Makes Ultra HDR JPEGs (an SDR JPEG plus a gain map) from an SDR photo with two independent writers, and the
references the gain-map tests compare Darkroom with.

  make-gainmap-samples.py PHOTO OUTDIR [--max-side 640] [--no-references]

Writes, for PHOTO's stem NAME:
  NAME-iso.jpg        libultrahdr 1.4 (PyPI imagecodecs): from an HDR rendition (linear, Display P3, highlights
                      expanded to 4x SDR white), ISO 21496-1 metadata only, the gain map at 1/4 size
  NAME-xmp.jpg        pyultrahdr: the SDR photo as base, hdrgm XMP metadata and an MPF index, gain map at 1/4 size
  NAME-*.json         per file: the base image's size, and the gains libultrahdr itself applies at full headroom
  NAME-*-gain.f32     per file: log2 of libultrahdr's HDR decode over its SDR decode, per pixel and channel
                      (float32, little-endian, row-major RGB)
  NAME-*-hdr.f32      per file: libultrahdr's HDR decode at full headroom (linear, 1.0 = SDR white)
"""
import argparse
import io
import json
from pathlib import Path

import imagecodecs
import numpy as np
import pyultrahdr
from PIL import Image


def load(path, max_side):
    image = Image.open(path).convert("RGB")
    scale = max_side / max(image.size)
    if scale < 1:
        image = image.resize((round(image.width * scale), round(image.height * scale)), Image.LANCZOS)
    return np.asarray(image)


def block_mean(values, factor):
    h, w = values.shape[0] // factor * factor, values.shape[1] // factor * factor
    v = values[:h, :w]
    return v.reshape(h // factor, factor, w // factor, factor, *v.shape[2:]).mean(axis=(1, 3))


def references(data, out, stem):
    hdr = imagecodecs.ultrahdr_decode(data).astype(np.float32)[..., :3]
    sdr = imagecodecs.ultrahdr_decode(data, boost=1.0).astype(np.float32)[..., :3]
    gain = np.log2(np.maximum(hdr, 1e-4) / np.maximum(sdr, 1e-4)).astype("<f4")
    gain.tofile(out / f"{stem}-gain.f32")
    hdr.astype("<f4").tofile(out / f"{stem}-hdr.f32")
    info = {"width": hdr.shape[1], "height": hdr.shape[0], "maxGainStops": float(gain.max()),
            "writer": imagecodecs.ultrahdr_version()}
    (out / f"{stem}.json").write_text(json.dumps(info))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("photo")
    parser.add_argument("outdir")
    parser.add_argument("--max-side", type=int, default=640)
    parser.add_argument("--no-references", action="store_true", help="write the two Ultra HDR JPEGs only")
    args = parser.parse_args()
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    name = Path(args.photo).stem
    sdr = load(args.photo, args.max_side)
    sdr_linear = pyultrahdr.srgb_to_linear(sdr.astype(np.float32) / 255)

    # libultrahdr from an HDR rendition: the photo's light with its highlights expanded up to 4x SDR white.
    luminance = (sdr_linear * np.array([0.2126, 0.7152, 0.0722], np.float32)).sum(-1, keepdims=True)
    boost = 1 + 3 * np.clip((luminance - 0.5) / 0.5, 0, 1) ** 2
    hdr = np.concatenate([sdr_linear * boost, np.ones_like(luminance)], -1).astype(np.float16)
    iso = imagecodecs.ultrahdr_encode(hdr, level=90, scale=4, gamut=imagecodecs.ULTRAHDR.CG.DISPLAY_P3)
    (out / f"{name}-iso.jpg").write_bytes(iso)
    if not args.no_references:
        references(iso, out, f"{name}-iso")

    # pyultrahdr from the SDR photo: its own inverse tone map, a 1/4-size gain map, XMP and MPF written by hand.
    hdr_nits = pyultrahdr.inverse_tone_map(sdr_linear, 203.0, 1000.0)
    gain, gain_min, _ = pyultrahdr.compute_gain_map(sdr_linear, hdr_nits, 203.0)
    gain = block_mean(gain, 4).astype(np.float32)
    xmp = pyultrahdr.build_ultra_hdr(sdr, gain, gain_min, float(gain.max()), 1000.0, 203.0)
    (out / f"{name}-xmp.jpg").write_bytes(xmp)
    if args.no_references:
        return
    references(xmp, out, f"{name}-xmp")

    # The base images as Pillow decodes them (the primary JPEG), for the SDR comparison.
    for stem, data in ((f"{name}-iso", iso), (f"{name}-xmp", xmp)):
        Image.open(io.BytesIO(data)).convert("RGB").save(out / f"{stem}-base.png")


if __name__ == "__main__":
    main()
