#!/usr/bin/env python3
"""Writes a copy of a JPEG with an EXIF thumbnail, as cameras and phones store one: an APP1 "Exif" segment right after
SOI whose IFD0 keeps the source's Orientation and whose IFD1 holds a baseline JPEG thumbnail (Compression 6,
JPEGInterchangeFormat and JPEGInterchangeFormatLength), made by Pillow from the pixels as stored (not turned upright,
as the camera writes it). Any EXIF segment the source had is replaced; every other segment (ICC, Adobe) is kept.

    scripts/add-exif-thumbnail.py SOURCE.jpg OUT.jpg [--width 160] [--letterbox WxH] [--big-endian] [--fill R,G,B]

--letterbox 160x120 writes the thumbnail some cameras make for a picture of another shape: the picture fitted into
WxH with black bars, which a viewer must not show in place of the picture. Prints the thumbnail's size and its byte
range in OUT (offset from the start of the file, length) as JSON. --fill R,G,B makes the thumbnail one solid colour: a
marker, for tests that must tell from a screenshot which of the two pictures was drawn.
"""
import argparse, io, json, struct, sys
from PIL import Image


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--width", type=int, default=160)
    ap.add_argument("--letterbox")
    ap.add_argument("--big-endian", action="store_true")
    ap.add_argument("--fill")
    a = ap.parse_args()

    image = Image.open(a.source)
    orientation = image.getexif().get(0x0112)
    stored = image.convert("RGB")
    w, h = stored.size
    if a.letterbox:
        bw, bh = (int(v) for v in a.letterbox.split("x"))
        fitted = stored.copy()
        fitted.thumbnail((bw, bh), Image.LANCZOS)
        thumb = Image.new("RGB", (bw, bh))
        thumb.paste(fitted, ((bw - fitted.width) // 2, (bh - fitted.height) // 2))
    else:
        thumb = stored.resize((a.width, max(1, round(a.width * h / w))), Image.LANCZOS)
    if a.fill:
        thumb = Image.new("RGB", thumb.size, tuple(int(v) for v in a.fill.split(",")))
    buffer = io.BytesIO()
    thumb.save(buffer, "JPEG", quality=80)
    thumb_bytes = buffer.getvalue()

    e = ">" if a.big_endian else "<"
    ifd0 = [(0x0112, 3, 1, orientation)] if orientation else []
    # IFD0 at 8, then IFD1, then the thumbnail
    ifd0_size = 2 + 12 * len(ifd0) + 4
    ifd1_offset = 8 + ifd0_size
    ifd1_entries = 3
    thumb_offset = ifd1_offset + 2 + 12 * ifd1_entries + 4
    tiff = (b"MM" if a.big_endian else b"II") + struct.pack(e + "HI", 42, 8)
    tiff += struct.pack(e + "H", len(ifd0))
    for tag, typ, count, value in ifd0:
        tiff += struct.pack(e + "HHIH", tag, typ, count, value) + b"\0\0"
    tiff += struct.pack(e + "I", ifd1_offset)
    tiff += struct.pack(e + "H", ifd1_entries)
    tiff += struct.pack(e + "HHIH", 0x0103, 3, 1, 6) + b"\0\0"
    tiff += struct.pack(e + "HHII", 0x0201, 4, 1, thumb_offset)
    tiff += struct.pack(e + "HHII", 0x0202, 4, 1, len(thumb_bytes))
    tiff += struct.pack(e + "I", 0)
    assert len(tiff) == thumb_offset
    tiff += thumb_bytes
    payload = b"Exif\0\0" + tiff
    if len(payload) + 2 > 0xFFFF:
        sys.exit("thumbnail too large for one APP1 segment")

    data = open(a.source, "rb").read()
    assert data[:2] == b"\xff\xd8", "not a JPEG"
    kept = []
    i = 2
    while i + 4 <= len(data) and data[i] == 0xFF and data[i + 1] != 0xDA:
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        segment = data[i:i + 2 + length]
        if not (data[i + 1] == 0xE1 and segment[4:10] == b"Exif\0\0"):
            kept.append(segment)
        i += 2 + length
    app1 = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
    out = b"\xff\xd8" + app1 + b"".join(kept) + data[i:]
    with open(a.out, "wb") as f:
        f.write(out)
    start = 2 + 4 + 6 + thumb_offset
    print(json.dumps({"width": thumb.width, "height": thumb.height, "offset": start, "length": len(thumb_bytes)}))


if __name__ == "__main__":
    main()
