#!/usr/bin/env python3
"""Reads an Ultra HDR thumbnail with libultrahdr (PyPI imagecodecs) and compares it with its Ultra HDR source.

  check-ultrahdr-thumbnail.py THUMBNAIL SOURCE
  check-ultrahdr-thumbnail.py THUMBNAIL SOURCE.heic SOURCE_HDR.f32

SOURCE is an Ultra HDR JPEG, whose renditions libultrahdr decodes too; or an iPhone HEIC with its HDR rendition at
full headroom beside it (float32 RGB, linear, 1.0 = SDR white: apple-hdr-heic's, say), whose SDR rendition is its
primary image as pillow-heif decodes it; its gain map, coded by another rule, is not compared.

Prints one JSON object:
  width, height             the thumbnail's size as libultrahdr decodes it
  gainMapWidth/Height       the thumbnail's gain map JPEG's size
  gainMapPSNR               its gain map against the source's, resized to the same size by Pillow (Lanczos), dB
  hdrPSNR                   libultrahdr's HDR rendition of the thumbnail (full headroom) against the source's,
                            reduced to the thumbnail's size by averaging linear light; PQ-coded at 203 nits, dB
  sdrPSNR                   the same for the SDR renditions: the floor that resampling and re-encoding set
"""
import io
import json
import sys

import imagecodecs
import numpy as np
from PIL import Image


def pq(light):
    y = np.clip(light * 203 / 10000, 0, 1) ** 0.1593017578125
    return ((0.8359375 + 18.8515625 * y) / (1 + 18.6875 * y)) ** 78.84375


def reduced(image, size):
    return np.stack([np.asarray(Image.fromarray(image[..., c].astype(np.float32)).resize(size, Image.BOX))
                     for c in range(image.shape[2])], -1)


def psnr_pq(a, b):
    return float(10 * np.log10(1 / ((pq(a) - pq(b)) ** 2).mean()))


def gain_map(data):
    return Image.open(io.BytesIO(data[data.rfind(b"\xff\xd8\xff"):])).convert("RGB")


def heif_renditions(path, hdr_path):
    """An iPhone HEIC's SDR rendition (pillow-heif's decode, linear) and its HDR one (the .f32 beside it)."""
    import colour  # colour-science, imported only here: it takes a second
    import pillow_heif
    coded = np.asarray(pillow_heif.open_heif(path), np.float64)[..., :3] / 255
    sdr = colour.cctf_decoding(coded, function="sRGB")
    hdr = np.fromfile(hdr_path, "<f4").astype(np.float64).reshape(sdr.shape)
    return {"hdr": hdr, "sdr": sdr}


def main():
    thumb = open(sys.argv[1], "rb").read()
    heif = heif_renditions(sys.argv[2], sys.argv[3]) if sys.argv[2].endswith(".heic") else None
    source = None if heif else open(sys.argv[2], "rb").read()
    result = {}
    for name, boost in (("hdr", None), ("sdr", 1.0)):
        t = imagecodecs.ultrahdr_decode(thumb, boost=boost).astype(np.float64)[..., :3]
        s = heif[name] if heif else imagecodecs.ultrahdr_decode(source, boost=boost).astype(np.float64)[..., :3]
        result["height"], result["width"] = t.shape[:2]
        result[name + "PSNR"] = psnr_pq(t, reduced(s, (t.shape[1], t.shape[0])))
    t_map = gain_map(thumb)
    if heif:
        result.update(gainMapWidth=t_map.width, gainMapHeight=t_map.height)
        print(json.dumps(result))
        return
    s_map = gain_map(source).resize(t_map.size, Image.LANCZOS)
    mse = ((np.asarray(t_map, np.float64) - np.asarray(s_map, np.float64)) ** 2).mean()
    result.update(gainMapWidth=t_map.width, gainMapHeight=t_map.height,
                  gainMapPSNR=float(10 * np.log10(255 ** 2 / mse)))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
