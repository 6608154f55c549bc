#!/usr/bin/env python3
"""Makes an HEIC laid out as an iPhone writes an HDR photo, and the HDR rendition Apple's rule gives it.

    scripts/make-apple-gainmap-heic.py SDR_IMAGE OUT_DIR [--max-side N] [--maker33 V] [--maker48 V]

An iPhone HEIC (iOS 14.1 and later) holds an SDR photo in Display P3 and, as an auxiliary image of it
(`auxC` urn:com:apple:photo:2020:aux:hdrgainmap, `auxl` reference), a monochrome gain map at half its size; the
headroom is in the EXIF maker note ("Apple iOS", big-endian IFD: tags 0x0021 and 0x0030, which ExifTool names
HDRHeadroom and HDRGain). The defaults are an iPhone 15 Pro's (1.01 and 1.1846: 3.85 × SDR white).

Writes OUT_DIR/NAME-apple.heic: the photo (its ICC profile kept, or Display P3 given), encoded by pillow-heif
(libheif and x265), with a gain map that lifts the photo's bright parts (the SDR luminance above 0.5, sRGB-coded) and
the EXIF maker note, the map made an auxiliary image by `heif-transform.py` since no HEIF writer adds Apple's; and
NAME-apple-hdr.f32 (float32 RGB, linear, 1.0 = SDR white, in the photo's primaries), the HDR rendition at full
headroom by the PyPI package apple-hdr-heic (the steps of its `load_as_displayp3_linear`: the headroom from ExifTool's
reading of the maker note, the image and map from pillow-heif, the map resized by OpenCV, Apple's published formula),
so a test that decodes the file checks Darkroom against another reader of it; NAME-apple-hdr-1stop.f32, that
rendition for a display with one stop of headroom (each pixel's gain over the SDR base taken to the power
1 / log2 headroom, ISO 21496-1's weighting: Apple publishes none). Also NAME-apple.json: the maker-note values
ExifTool reads and the headroom apple-hdr-heic computes from them.
"""
import argparse
import importlib
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pillow_heif
from PIL import Image

AUX_TYPE = "urn:com:apple:photo:2020:aux:hdrgainmap"
SCRIPTS = os.path.dirname(os.path.abspath(__file__))
boxes = importlib.import_module("heif-transform").boxes  # this script's folder is on sys.path


def apple_exif(entries):
    """TIFF-structured EXIF (big-endian): IFD0 → Exif IFD → Apple's maker note, whose one IFD holds `entries`
    ((tag, type, count, value bytes) each, the values stored after the IFD, none inline)."""
    # The maker note: signature, version 1, "MM", then an IFD at 14 whose offsets count from the note's start
    data_at = 14 + 2 + 12 * len(entries) + 4
    note = b"Apple iOS\0" + b"\0\x01" + b"MM" + struct.pack(">H", len(entries))
    data = b""
    for tag, kind, count, value in entries:
        note += struct.pack(">HHII", tag, kind, count, data_at + len(data))
        data += value
    note += struct.pack(">I", 0) + data
    # IFD0 at 8 (one entry: the Exif IFD pointer), the Exif IFD after it (one entry: the maker note), then the note
    ifd0 = 8
    exif_ifd = ifd0 + 2 + 12 + 4
    note_at = exif_ifd + 2 + 12 + 4
    tiff = b"MM\0*" + struct.pack(">I", ifd0)
    tiff += struct.pack(">H", 1) + struct.pack(">HHII", 0x8769, 4, 1, exif_ifd) + struct.pack(">I", 0)
    tiff += struct.pack(">H", 1) + struct.pack(">HHII", 0x927C, 7, len(note), note_at) + struct.pack(">I", 0)
    return tiff + note


def maker_note_exif(maker33, maker48):
    """Apple's EXIF holding the HDR tags 0x21 and 0x30 (signed rationals)."""
    def srational(v):
        return struct.pack(">ii", int(round(v * 1_000_000)), 1_000_000)
    return apple_exif([(0x21, 10, 1, srational(maker33)), (0x30, 10, 1, srational(maker48))])


def image_items(data):
    """The primary item's ID (`pitm`) and the other coded image's (the one pillow-heif wrote second)."""
    meta = next(b for b in boxes(data, 0, len(data)) if b[0] == "meta")
    children = list(boxes(data, meta[1] + meta[2] + 4, meta[3]))
    pitm = next(c for c in children if c[0] == "pitm")
    primary = struct.unpack(">H", data[pitm[1] + pitm[2] + 4:pitm[1] + pitm[2] + 6])[0]
    _, at, header, end = next(c for c in children if c[0] == "iinf")
    first = at + header + 4 + (2 if data[at + header] == 0 else 4)
    images = []
    for _, bat, bheader, _ in boxes(data, first, end):
        body = bat + bheader + 4  # infe version 2: item ID, protection index, item type
        if data[body + 4:body + 8] == b"hvc1":
            images.append(struct.unpack(">H", data[body:body + 2])[0])
    return primary, next(i for i in images if i != primary)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("image")
    ap.add_argument("out")
    ap.add_argument("--max-side", type=int, default=640)
    ap.add_argument("--maker33", type=float, default=1.01)
    ap.add_argument("--maker48", type=float, default=1.1846)
    ap.add_argument("--profile", help="an ICC profile to embed when the photo has none")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    photo = Image.open(args.image)
    icc = photo.info.get("icc_profile") or (open(args.profile, "rb").read() if args.profile else None)
    photo = photo.convert("RGB")
    photo.thumbnail((args.max_side, args.max_side), Image.LANCZOS)
    name = os.path.splitext(os.path.basename(args.image))[0]
    stem = os.path.join(args.out, f"{name}-apple")

    # The gain map: the photo's bright parts, sRGB-coded, at half size
    coded = np.asarray(photo, np.float64) / 255
    luma = coded @ np.array([0.2126, 0.7152, 0.0722])
    lift = np.clip((luma - 0.5) / 0.5, 0, 1)
    coded_map = np.where(lift <= 0.0031308, 12.92 * lift, 1.055 * lift ** (1 / 2.4) - 0.055)
    gain_map = Image.fromarray(np.round(coded_map * 255).astype(np.uint8), "L")
    gain_map = gain_map.resize((photo.width // 2, photo.height // 2), Image.LANCZOS)

    heif = pillow_heif.from_pillow(photo)
    heif.add_from_pillow(gain_map)
    path = stem + ".heic"
    heif.save(path, quality=95, icc_profile=icc, exif=maker_note_exif(args.maker33, args.maker48))
    primary_id, map_id = image_items(open(path, "rb").read())
    subprocess.run([sys.executable, os.path.join(SCRIPTS, "heif-transform.py"), path, path, "--item", str(map_id),
                    "--aux", AUX_TYPE, "--aux-of", f"{map_id}:{primary_id}"], check=True)

    # The reference: apple-hdr-heic's rendition of the file as written, by its own steps (its
    # load_as_displayp3_linear, which insists on the profile description "Display P3" of Apple's own profile)
    import warnings
    warnings.filterwarnings("ignore")  # colour warns about matplotlib at import
    import colour
    import cv2
    from apple_hdr_heic.lib import apply_hdrgainmap, load_primary_and_aux
    from apple_hdr_heic.metadata import AppleHDRMetadata
    metadata = AppleHDRMetadata.from_file(path)
    sdr, hdr_map = load_primary_and_aux(path, metadata.aux_type or AUX_TYPE)
    hdr_map = np.clip(cv2.resize(hdr_map, (sdr.shape[1], sdr.shape[0]), interpolation=cv2.INTER_LANCZOS4), 0, 1)
    hdr = apply_hdrgainmap(sdr, hdr_map, metadata.compute_headroom())
    hdr.astype("<f4").tofile(stem + "-hdr.f32")
    # For a display with one stop of headroom: the gain taken to ISO 21496-1's weight, 1 / log2(headroom)
    gain = hdr / np.maximum(colour.models.eotf_sRGB(sdr), 1e-6)
    weighted = colour.models.eotf_sRGB(sdr) * gain ** (1 / np.log2(metadata.compute_headroom()))
    weighted.astype("<f4").tofile(stem + "-hdr-1stop.f32")
    opened = pillow_heif.open_heif(path)
    with open(stem + ".json", "w") as f:
        json.dump({"maker33": metadata.maker33, "maker48": metadata.maker48,
                   "headroom": metadata.compute_headroom(), "aux": {k: len(v) for k, v in opened.info["aux"].items()},
                   "width": photo.width, "height": photo.height,
                   "map": [gain_map.width, gain_map.height]}, f)
    print(path)


if __name__ == "__main__":
    main()
