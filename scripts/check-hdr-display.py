#!/usr/bin/env python3
"""Checks an HDR-display thumbnail (a 10-bit BT.2100 PQ AVIF, or HLG: compared as the light a 1,000-nit display shows
it, coded in PQ) against a reference rendition, with libraries Darkroom does not use: imagecodecs' own libavif (1.x)
decodes the AVIF, numpy does the colour arithmetic.

  check-hdr-display.py OUTPUT.avif REFERENCE SOURCE

REFERENCE is linear light (a .f32 of float32 RGB, 1.0 = SDR white: libultrahdr's HDR decode, say) or an SDR image
(a .png, sRGB-coded), in the primaries of SOURCE's ICC profile (sRGB's without one), at the output's size; or an HDR
image (a BT.2020 PQ or HLG .avif, .heic or .png, decoded by imagecodecs' libavif or libpng, or pillow-heif's libheif), whose display
light (HLG through BT.2100's OOTF for a 1,000-nit display) is resized to the output's size with Pillow's Lanczos filter
in linear light, and SOURCE is then unused.

Prints JSON: the CICP colour triple, bit depth and size read from the file, the brightest light in nits (the 99.9th
percentile of each pixel's brightest channel: above the coding's ringing) in it and in the reference, and the PSNR of the PQ signal against the
reference converted to BT.2020 and coded in PQ with SDR white at 203 nits (BT.2408).
"""
import io
import json
import struct
import sys

import imagecodecs
import numpy as np
from PIL import Image, ImageCms

M1, M2 = 2610 / 16384, 2523 / 4096 * 128
C1, C2, C3 = 3424 / 4096, 2413 / 4096 * 32, 2392 / 4096 * 32
REFERENCE_WHITE = 203.0
BRADFORD = np.array([[0.8951, 0.2664, -0.1614], [-0.7502, 1.7135, 0.0367], [0.0389, -0.0685, 1.0296]])
D65 = (0.3127, 0.3290)
D50_XYZ = np.array([0.9642, 1.0, 0.8249])


def xyz(x, y):
    return np.array([x / y, 1.0, (1 - x - y) / y])


def rgb_to_xyz(white, primaries):
    m = np.stack([xyz(*p) for p in primaries], axis=1)
    s = np.linalg.solve(m, xyz(*white))
    return m * s


def bradford(source_white, target_white):
    cone_s, cone_t = BRADFORD @ source_white, BRADFORD @ target_white
    return np.linalg.inv(BRADFORD) @ np.diag(cone_t / cone_s) @ BRADFORD


def source_to_xyz_d65(source):
    """The source's RGB (linear) to XYZ under D65: from its ICC colorants (stored adapted to D50), or sRGB's."""
    if source.endswith(".heic"):
        import pillow_heif
        pillow_heif.register_heif_opener()
    icc = Image.open(source).info.get("icc_profile")
    srgb = rgb_to_xyz(D65, [(0.64, 0.33), (0.30, 0.60), (0.15, 0.06)])
    if not icc:
        return srgb
    profile = ImageCms.ImageCmsProfile(io.BytesIO(icc)).profile
    columns = [profile.red_colorant[0], profile.green_colorant[0], profile.blue_colorant[0]]
    d50 = np.array(columns, dtype=np.float64).T
    return bradford(D50_XYZ, xyz(*D65)) @ d50


def pq(nits):
    y = (np.clip(nits, 0, 10000) / 10000) ** M1
    return ((C1 + C2 * y) / (1 + C3 * y)) ** M2


def hdr_light(path, width, height, scene=False):
    """A BT.2020 PQ or HLG image's display light at width × height, 1.0 = SDR white (a gray PNG's as RGB). With
    `scene`, an HLG image is resized in scene light and then shown (the OOTF after the resize), as an HLG output is
    made."""
    data = open(path, "rb").read()
    if path.endswith(".avif"):
        coded, box = imagecodecs.avif_decode(data), colour_box(data)
        transfer = box[1]
        signal = coded[..., :3].astype(np.float64) / (1023 if coded.dtype == np.uint16 else 255)
    elif path.endswith(".png"):
        coded = imagecodecs.png_decode(data)
        if coded.ndim == 2:  # gray: the one sample is R, G and B
            coded = np.repeat(coded[..., None], 3, axis=-1)
        transfer = data[data.find(b"cICP") + 5]
        signal = coded[..., :3].astype(np.float64) / (65535 if coded.dtype == np.uint16 else 255)
    else:
        import pillow_heif
        heif = pillow_heif.open_heif(path, convert_hdr_to_8bit=False)
        nclx = heif.info.get("nclx_profile") or {}
        transfer = nclx.get("transfer_characteristics", 16)
        signal = np.asarray(heif, np.float64)[..., :3] / 65535
    def resized(values):
        channels = [Image.fromarray(np.ascontiguousarray(values[..., c].astype(np.float32)), "F")
                    .resize((width, height), Image.LANCZOS) for c in range(3)]
        return np.maximum(np.stack([np.asarray(c, np.float64) for c in channels], axis=-1), 0)
    if transfer == 16:
        p = signal ** (1 / M2)
        nits = 10000 * (np.maximum(p - C1, 0) / (C2 - C3 * p)) ** (1 / M1)
    elif scene:
        return ootf(resized(hlg_scene(signal))) / REFERENCE_WHITE
    else:
        nits = hlg_display_nits(signal)
    return resized(nits / REFERENCE_WHITE)


def hlg_scene(signal):
    """BT.2100 HLG's inverse OETF: relative scene light."""
    a, b = 0.17883277, 1 - 4 * 0.17883277
    c = 0.5 - a * np.log(4 * a)
    return np.where(signal <= 0.5, signal ** 2 / 3, (np.exp((signal - c) / a) + b) / 12)


def ootf(scene):
    """BT.2100 HLG's OOTF (BT.2020) for a 1,000-nit display (gamma 1.2): scene light to nits."""
    ys = scene @ np.array([0.2627, 0.6780, 0.0593])
    return 1000 * scene * np.maximum(ys, 1e-12)[..., None] ** 0.2


def hlg_display_nits(signal):
    """BT.2100 HLG (BT.2020) to the light a 1,000-nit display shows: the inverse OETF, then the OOTF."""
    return ootf(hlg_scene(signal))


def colour_box(data):
    """The first `colr` box of type `nclx`: (primaries, transfer, matrix, full range)."""
    at = data.find(b"colrnclx")
    if at < 0:
        return None
    p, t, m, r = struct.unpack(">HHHB", data[at + 8:at + 15])
    return p, t, m, r >> 7


def main():
    output, reference, source = sys.argv[1:4]
    data = open(output, "rb").read()
    signal = imagecodecs.avif_decode(data).astype(np.float64)
    height, width = signal.shape[:2]
    pixi = data.find(b"pixi")  # then version and flags (4), channel count (1), bits per channel
    depth = int(data[pixi + 9]) if pixi >= 0 else 8
    to_bt2020 = None
    if reference.endswith((".avif", ".heic")) or (reference.endswith(".png") and b"cICP" in open(reference, "rb").read()):
        hlg_output = (colour_box(data) or (0, 16))[1] == 18
        light, to_bt2020 = hdr_light(reference, width, height, scene=hlg_output), np.eye(3)
    elif reference.endswith(".png"):
        coded = np.asarray(Image.open(reference).convert("RGB"), np.float64) / 255
        light = np.where(coded <= 0.04045, coded / 12.92, ((coded + 0.055) / 1.055) ** 2.4)
    else:
        light = np.fromfile(reference, "<f4").astype(np.float64).reshape(height, width, 3)
    if to_bt2020 is None:
        to_bt2020 = np.linalg.inv(rgb_to_xyz(D65, [(0.708, 0.292), (0.170, 0.797), (0.131, 0.046)])) @ (
            source_to_xyz_d65(source))
    expected = pq(np.maximum(light @ to_bt2020.T, 0) * REFERENCE_WHITE)
    got = signal[..., :3] / ((1 << depth) - 1)
    if (colour_box(data) or (0, 16))[1] == 18:  # an HLG output: its display light on a 1,000-nit display, in PQ
        got = pq(hlg_display_nits(got))
    mse = float(np.mean((got - expected) ** 2))
    nits = 10000 * (np.maximum(got ** (1 / M2) - C1, 0) / (C2 - C3 * got ** (1 / M2))) ** (1 / M1)
    print(json.dumps({
        "cicp": list(colour_box(data) or ()), "depth": depth, "width": width, "height": height,
        "peakNits": float(np.percentile(nits.max(axis=-1), 99.9)),
        "referencePeakNits": float(np.percentile((np.maximum(light @ to_bt2020.T, 0) * REFERENCE_WHITE).max(axis=-1), 99.9)), "psnrPQ": 10 * np.log10(1 / mse) if mse > 0 else float("inf"),
    }))


if __name__ == "__main__":
    main()
