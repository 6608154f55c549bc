#!/usr/bin/env python3
"""Writes a DNG from a photo, for the camera RAW tests: an RGGB Bayer mosaic of the photo (12-bit, linear, in
SubIFD 1), optionally with an embedded JPEG preview (IFD 0, as cameras and Adobe's converter write it) and an
orientation.

    scripts/make-dng.py PHOTO OUT.dng [--preview WIDTH] [--orientation N] [--scale S]

The mosaic is the photo scaled by S (default 1), linearized (sRGB curve undone) and sampled through an RGGB colour
filter; the colour matrix is the identity-like XYZ→camera matrix of sRGB, neutral white balance. Each field follows
the DNG 1.4 specification; libraw and rawpy read the result as a camera file.
"""
import argparse
import io
import struct

import numpy as np
from PIL import Image

# TIFF field types
BYTE, ASCII, SHORT, LONG, RATIONAL, SRATIONAL = 1, 2, 3, 4, 5, 10


def rational(value, signed=False):
    return (int(round(value * 10000)), 10000)


class IFD:
    def __init__(self):
        self.entries = []  # (tag, type, values or bytes)
        self.data = b""  # image data placed after the directory
        self.sub = None

    def add(self, tag, kind, values):
        self.entries.append((tag, kind, values))


def encode_values(kind, values):
    if kind == ASCII:
        return values.encode() + b"\0", len(values) + 1
    if kind == BYTE:
        return bytes(values), len(values)
    if kind == SHORT:
        return b"".join(struct.pack("<H", v) for v in values), len(values)
    if kind == LONG:
        return b"".join(struct.pack("<I", v) for v in values), len(values)
    if kind in (RATIONAL, SRATIONAL):
        fmt = "<ii" if kind == SRATIONAL else "<II"
        return b"".join(struct.pack(fmt, *rational(v)) for v in values), len(values)
    raise ValueError(kind)


def write(path, ifd0):
    """Lays out IFD0, its data, then the SubIFD and its data; offsets patched in as they become known."""
    out = bytearray(b"II*\0" + struct.pack("<I", 8))

    def place(ifd, offset):
        # Directory, then overflow values, then image data
        entries = sorted(ifd.entries, key=lambda e: e[0])
        count = len(entries)
        directory_size = 2 + 12 * count + 4
        overflow = bytearray()
        overflow_start = offset + directory_size
        raw = []
        for tag, kind, values in entries:
            payload, n = encode_values(kind, values)
            raw.append((tag, kind, n, payload))
        data_start = overflow_start + sum(len(p) + (len(p) & 1) for _, _, _, p in raw if len(p) > 4)
        data_start += data_start & 1
        return entries, raw, directory_size, data_start

    def emit(ifd, offset, sub_offset=None):
        entries, raw, directory_size, data_start = place(ifd, offset)
        blob = bytearray(struct.pack("<H", len(raw)))
        overflow = bytearray()
        overflow_at = offset + directory_size
        for tag, kind, n, payload in raw:
            if tag == 273:  # StripOffsets: the image data
                payload = struct.pack("<I", data_start)
            if tag == 330:  # SubIFDs
                payload = struct.pack("<I", sub_offset)
            if len(payload) <= 4:
                blob += struct.pack("<HHI", tag, kind, n) + payload.ljust(4, b"\0")
            else:
                blob += struct.pack("<HHII", tag, kind, n, overflow_at + len(overflow))
                overflow += payload + (b"\0" if len(payload) & 1 else b"")
        blob += struct.pack("<I", 0)
        blob += overflow
        while offset + len(blob) < data_start:
            blob += b"\0"
        blob += ifd.data
        if len(blob) & 1:
            blob += b"\0"
        return blob

    first = emit(ifd0, 8, sub_offset=0)
    sub_offset = 8 + len(first)
    first = emit(ifd0, 8, sub_offset=sub_offset)
    out += first
    out += emit(ifd0.sub, sub_offset)
    with open(path, "wb") as f:
        f.write(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("photo")
    parser.add_argument("out")
    parser.add_argument("--preview", type=int, default=0, help="the JPEG preview's longer side (0: none)")
    parser.add_argument("--orientation", type=int, default=1)
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()

    photo = Image.open(args.photo).convert("RGB")
    if args.scale != 1.0:
        photo = photo.resize((int(photo.width * args.scale) // 2 * 2, int(photo.height * args.scale) // 2 * 2),
                             Image.Resampling.LANCZOS)
    width, height = photo.width // 2 * 2, photo.height // 2 * 2
    rgb = np.asarray(photo, dtype=np.float64)[:height, :width] / 255
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    white = 4095
    mosaic = np.empty((height, width), dtype=np.uint16)
    mosaic[0::2, 0::2] = (linear[0::2, 0::2, 0] * white).round()  # R
    mosaic[0::2, 1::2] = (linear[0::2, 1::2, 1] * white).round()  # G
    mosaic[1::2, 0::2] = (linear[1::2, 0::2, 1] * white).round()  # G
    mosaic[1::2, 1::2] = (linear[1::2, 1::2, 2] * white).round()  # B

    ifd0 = IFD()
    ifd0.add(254, LONG, [1 if args.preview else 0])
    if args.preview:
        preview = photo.copy()
        preview.thumbnail((args.preview, args.preview), Image.Resampling.LANCZOS)
        jpeg = io.BytesIO()
        preview.save(jpeg, "JPEG", quality=92)
        ifd0.data = jpeg.getvalue()
        ifd0.add(256, LONG, [preview.width])
        ifd0.add(257, LONG, [preview.height])
        ifd0.add(258, SHORT, [8, 8, 8])
        ifd0.add(259, SHORT, [7])
        ifd0.add(262, SHORT, [6])
        ifd0.add(277, SHORT, [3])
        ifd0.add(278, LONG, [preview.height])
        ifd0.add(279, LONG, [len(ifd0.data)])
        ifd0.add(273, LONG, [0])
    ifd0.add(271, ASCII, "Darkroom")
    ifd0.add(272, ASCII, "Test Camera")
    ifd0.add(274, SHORT, [args.orientation])
    ifd0.add(50706, BYTE, [1, 4, 0, 0])
    ifd0.add(50707, BYTE, [1, 1, 0, 0])
    ifd0.add(50708, ASCII, "Darkroom Test Camera")
    # XYZ (D65) → camera: the camera's primaries are sRGB's, so this is sRGB's XYZ→linear RGB matrix
    ifd0.add(50721, SRATIONAL, [3.2406, -1.5372, -0.4986, -0.9689, 1.8758, 0.0415, 0.0557, -0.2040, 1.0570])
    ifd0.add(50778, SHORT, [21])  # CalibrationIlluminant1: D65
    ifd0.add(50728, RATIONAL, [1.0, 1.0, 1.0])  # AsShotNeutral

    raw = IFD()
    raw.data = mosaic.astype("<u2").tobytes()
    raw.add(254, LONG, [0])
    raw.add(256, LONG, [width])
    raw.add(257, LONG, [height])
    raw.add(258, SHORT, [16])
    raw.add(259, SHORT, [1])
    raw.add(262, SHORT, [32803])
    raw.add(277, SHORT, [1])
    raw.add(278, LONG, [height])
    raw.add(279, LONG, [len(raw.data)])
    raw.add(273, LONG, [0])
    raw.add(284, SHORT, [1])
    raw.add(33421, SHORT, [2, 2])  # CFARepeatPatternDim
    raw.add(33422, BYTE, [0, 1, 1, 2])  # CFAPattern: RGGB
    raw.add(50714, LONG, [0])  # BlackLevel
    raw.add(50717, LONG, [white])  # WhiteLevel
    ifd0.sub = raw
    ifd0.add(330, LONG, [0])
    write(args.out, ifd0)


if __name__ == "__main__":
    main()
