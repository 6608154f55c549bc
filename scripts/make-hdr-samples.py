#!/usr/bin/env python3
"""Makes HDR AVIFs from an SDR photo, as a camera or a web tool carries SDR content in an HDR container.

    scripts/make-hdr-samples.py SDR_IMAGE OUT_DIR [--max-side N] [--highlights] [--heif] [--png] [--transforms]
                                [--jxl] [--variants]

Writes OUT_DIR/NAME-pq.avif (BT.2020 primaries, PQ, CICP 9/16/9) and OUT_DIR/NAME-hlg.avif (9/18/9), 10-bit 4:4:4,
with --heif also NAME-pq.heic and NAME-hlg.heic (pillow-heif: libheif and x265, 10-bit 4:2:0, the same nclx; Debian's
heif-enc writes no colour box) and, with --variants (not with --highlights), NAME-pq-444.heic and NAME-hlg-444.heic (the
same coded at 4:4:4), NAME-pq-alpha.heic (with an alpha plane falling from opaque at
the left edge to transparent at the right) and NAME-sdr-alpha.png (the SDR original with that alpha), with --png also NAME-pq.png and NAME-hlg.png (16-bit RGB with a `cICP` chunk
9/16/0/1 or 9/18/0/1 and a `cLLi` chunk of the content's light level, PNG's third edition), with --transforms also NAME-pq-irot.avif (the same picture stored turned: irot 1),
NAME-pq-clap.avif (a centred clean aperture of all but 40 × 40 pixels) and NAME-pq-cropped.avif (that region coded
alone), and OUT_DIR/NAME-sdr.png (the sRGB original those were made from, resized as they were). With --variants
also NAME-sdr-gray.png (the original's luma) and its light in PQ: with --png as NAME-pq-gray.png (16-bit gray, cICP)
and NAME-pq-gray.avif (4:0:0), with --heif as NAME-pq-gray.heic (4:0:0, nclx), with --jxl as NAME-pq-gray.jxl,
NAME-pq-gray.lossless.jxl, and NAME-pq-gray-icc.png and .tif (libjxl's gray PQ profile). SDR white becomes BT.2408's
reference white, 203 nits: in PQ directly, in HLG through BT.2100's inverse OOTF for a 1,000-nit display (so it lands
on the 75 % signal). With --highlights, the brightest tenth of the photo is pushed above SDR white (up to 1,000 nits),
as real HDR content has: the SDR original is then no longer the answer.

With --jxl also JPEG XLs and files whose ICC profile says PQ or HLG, as libjxl-tools and libvips write them:
NAME-pq.jxl and NAME-hlg.jxl (cjxl, lossy: XYB-coded, their colour signalled as BT.2100 PQ or HLG), NAME-pq.lossless.jxl
and NAME-hlg.lossless.jxl (lossless: the signal coded as it is), and NAME-pq-icc.tif, NAME-pq-icc.png, NAME-hlg-icc.tif
and NAME-hlg-icc.png (16-bit, the lossless JPEG XL decoded by djxl, copied by `vips copy`: the ICC profile libjxl made for
the signal — PQ or HLG tone curves, BT.2020 colorants — and no cICP chunk), and NAME-{pq,hlg}-icc.avif and .heic with
that profile (avifenc from the PNG; pillow-heif), whose nclx box gives only the YCbCr matrix.

The conversions are colour-science's (sRGB decoding, BT.709 → BT.2020 in linear light, ST 2084, BT.2100 HLG), not
Darkroom's, so a test that decodes these files checks Darkroom against an independent implementation. avifenc
(libavif-bin) encodes near-losslessly (quantizer 0…4).
"""
import argparse
import os
import struct
import subprocess
import tempfile
import warnings
import zlib

import numpy as np
from PIL import Image

warnings.filterwarnings("ignore")
import colour  # noqa: E402  (after the warning filter: colour warns about matplotlib at import)

REFERENCE_WHITE = 203.0
HLG_PEAK = 1000.0


def write_png16(path, arr, cicp=None, light_level=None):
    """A 16-bit PNG of `arr` (h × w × 3, or h × w for gray), with a cICP chunk and a cLLi chunk when given."""
    h, w = arr.shape[:2]
    raw = b"".join(b"\0" + arr[y].astype(">u2").tobytes() for y in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))

    ihdr = struct.pack(">IIBBBBB", w, h, 16, 2 if arr.ndim == 3 else 0, 0, 0, 0)
    colour = chunk(b"cICP", bytes(cicp)) if cicp else b""
    if light_level:  # cLLi: the brightest pixel and the frame's average, in units of 0.0001 nits
        colour += chunk(b"cLLi", struct.pack(">II", *(round(v * 10000) for v in light_level)))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + colour + chunk(b"IDAT", zlib.compress(raw, 6))
                + chunk(b"IEND", b""))


def to16(signal):
    return np.clip(np.round(signal * 65535), 0, 65535).astype(np.uint16)


def encode(signal, cicp, out, extra=()):
    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, "in.png")
        write_png16(png, to16(signal))
        subprocess.run(["avifenc", "-d", "10", "-y", "444", "-r", "full", "--cicp", cicp, "--min", "0", "--max", "4",
                        "-s", "6", "-j", "2", *extra, png, out], check=True, stdout=subprocess.DEVNULL)


def alpha_ramp(h, w):
    """Transparency for the samples with alpha: opaque at the left edge, fully transparent at the right."""
    return np.broadcast_to(np.linspace(1, 0, w)[None, :], (h, w))


def encode_heif(signal, transfer, out, icc=None, alpha=None, chroma=420):
    """A 10-bit HEIC of `signal` (h × w × 3, or h × w for gray: 4:0:0): described by nclx (BT.2020, `transfer`), or
    with `icc` by that profile, its nclx box then giving only the YCbCr matrix (BT.2020) and range; with `alpha` (0…1),
    that alpha plane besides; colour coded at `chroma` (420 or 444)."""
    import pillow_heif
    pillow_heif.options.SAVE_HDR_TO_12_BIT = False
    if alpha is not None:
        signal = np.concatenate([signal, alpha[..., None]], axis=-1)
    data = np.clip(np.round(signal * 65535), 0, 65535).astype(np.uint16)
    h, w = data.shape[:2]
    mode = "L;16" if data.ndim == 2 else "RGB;16" if alpha is None else "RGBA;16"
    heif = pillow_heif.from_bytes(mode=mode, size=(w, h), data=data.tobytes())
    primaries, transfer = (2, 2) if icc else (9, transfer)
    chroma = {} if data.ndim == 2 else {"chroma": chroma}
    heif.save(out, quality=95, save_nclx_profile=True, color_primaries=primaries, transfer_characteristics=transfer,
              matrix_coefficients=9, full_range_flag=1, icc_profile=icc, **chroma)


def encode_jxl(signal, transfer, out_dir, stem, suffix=""):
    """STEM-TRANSFER[SUFFIX].jxl (lossy) and .lossless.jxl, and the lossless one decoded by djxl into -icc.tif and
    -icc.png (the ICC profile libjxl makes for the signal); for RGB `signal` also -icc.avif and -icc.heic with that
    profile. Gray (h × w) is coded as gray."""
    gray = signal.ndim == 2
    hint = "color_space=" + ("Gra_D65_Rel_" if gray else "RGB_D65_202_Rel_") + ("PeQ" if transfer == "pq" else "HLG")
    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, "in.png")
        write_png16(png, to16(signal))
        lossless = os.path.join(out_dir, f"{stem}-{transfer}{suffix}.lossless.jxl")
        for out, distance in ((os.path.join(out_dir, f"{stem}-{transfer}{suffix}.jxl"), "0.3"), (lossless, "0")):
            subprocess.run(["cjxl", png, out, "-d", distance, "-e", "3", "-x", hint], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        decoded = os.path.join(tmp, "decoded.png")
        subprocess.run(["djxl", lossless, decoded], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for extension in ("tif", "png"):
            subprocess.run(["vips", "copy", decoded, os.path.join(out_dir, f"{stem}-{transfer}{suffix}-icc.{extension}")],
                           check=True)
        if gray:
            return
        # The same profile in AVIF (avifenc embeds the PNG's; its nclx box then says only BT.2020's matrix) and HEIF
        icc_png = os.path.join(out_dir, f"{stem}-{transfer}-icc.png")
        subprocess.run(["avifenc", "-d", "10", "-y", "444", "-r", "full", "--cicp", "2/2/9", "--min", "0", "--max", "4",
                        "-s", "6", "-j", "2", icc_png, os.path.join(out_dir, f"{stem}-{transfer}-icc.avif")],
                       check=True, stdout=subprocess.DEVNULL)
        encode_heif(signal, None, os.path.join(out_dir, f"{stem}-{transfer}-icc.heic"),
                    icc=Image.open(icc_png).info["icc_profile"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("image")
    ap.add_argument("out")
    ap.add_argument("--max-side", type=int, default=0)
    ap.add_argument("--highlights", action="store_true")
    ap.add_argument("--heif", action="store_true")
    ap.add_argument("--png", action="store_true")
    ap.add_argument("--transforms", action="store_true")
    ap.add_argument("--jxl", action="store_true")
    ap.add_argument("--variants", action="store_true", help="also transparent and gray samples (not with --highlights)")
    args = ap.parse_args()
    if args.variants and args.highlights:
        ap.error("--variants makes samples of the SDR original, which --highlights changes")
    os.makedirs(args.out, exist_ok=True)
    name = os.path.splitext(os.path.basename(args.image))[0]
    img = Image.open(args.image).convert("RGB")
    if args.max_side and max(img.size) > args.max_side:
        scale = args.max_side / max(img.size)
        img = img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))), Image.LANCZOS)
    img.save(os.path.join(args.out, name + "-sdr.png"))
    srgb = np.asarray(img).astype(np.float64) / 255
    linear = colour.cctf_decoding(srgb, function="sRGB")
    bt2020 = colour.RGB_to_RGB(linear, colour.RGB_COLOURSPACES["sRGB"], colour.RGB_COLOURSPACES["ITU-R BT.2020"])
    nits = np.clip(bt2020, 0, None) * REFERENCE_WHITE
    suffix = ""
    if args.highlights:
        y = nits @ np.array([0.2627, 0.6780, 0.0593])
        knee = np.quantile(y, 0.9)
        boost = np.where(y > knee, 1 + 4 * ((y - knee) / max(y.max() - knee, 1e-9)) ** 2, 1.0)
        nits = np.minimum(nits * boost[..., None], HLG_PEAK)
        suffix = "-highlights"
    pq = colour.models.eotf_inverse_ST2084(nits)
    encode(pq, "9/16/9", os.path.join(args.out, f"{name}{suffix}-pq.avif"))
    if args.heif:
        encode_heif(pq, 16, os.path.join(args.out, f"{name}{suffix}-pq.heic"))
        if args.variants:
            # The same with transparency, and the SDR original with that alpha (8-bit RGBA PNG) to compare with
            alpha = alpha_ramp(*pq.shape[:2])
            encode_heif(pq, 16, os.path.join(args.out, f"{name}-pq-444.heic"), chroma=444)
            encode_heif(pq, 16, os.path.join(args.out, f"{name}-pq-alpha.heic"), alpha=alpha)
            rgba = np.concatenate([srgb, alpha[..., None]], axis=-1)
            Image.fromarray(np.round(rgba * 255).astype(np.uint8), "RGBA").save(
                os.path.join(args.out, f"{name}-sdr-alpha.png"))
    brightest = nits.max(axis=-1)
    light_level = (float(brightest.max()), float(brightest.mean()))
    if args.png:
        write_png16(os.path.join(args.out, f"{name}{suffix}-pq.png"), to16(pq), (9, 16, 0, 1), light_level)
    if args.variants:
        # Gray: the original's sRGB luma as SDR, and its light in PQ as a gray 16-bit PNG (cICP), a 4:0:0 AVIF and HEIC,
        # and JPEG XLs and ICC-described PNG and TIFF
        gray = np.asarray(img.convert("L"), np.float64) / 255
        Image.fromarray(np.round(gray * 255).astype(np.uint8), "L").save(os.path.join(args.out, f"{name}-sdr-gray.png"))
        gray_pq = colour.models.eotf_inverse_ST2084(colour.cctf_decoding(gray, function="sRGB") * REFERENCE_WHITE)
        if args.png:
            write_png16(os.path.join(args.out, f"{name}-pq-gray.png"), to16(gray_pq), (9, 16, 0, 1))
            encode(np.repeat(gray_pq[..., None], 3, axis=-1), "9/16/9", os.path.join(args.out, f"{name}-pq-gray.avif"),
                   ["-y", "400"])
        if args.heif:
            encode_heif(gray_pq, 16, os.path.join(args.out, f"{name}-pq-gray.heic"))
        if args.jxl:
            encode_jxl(gray_pq, "pq", args.out, name, suffix="-gray")
    if args.transforms:
        # irot 1 turns the stored picture a quarter anticlockwise for display: store it turned clockwise
        encode(np.rot90(pq, -1), "9/16/9", os.path.join(args.out, f"{name}{suffix}-pq-irot.avif"), ["--irot", "1"])
        h, w = pq.shape[:2]
        clap = f"{w - 40},1,{h - 40},1,0,1,0,1"
        encode(pq, "9/16/9", os.path.join(args.out, f"{name}{suffix}-pq-clap.avif"), ["--clap", clap])
        encode(pq[20:h - 20, 20:w - 20], "9/16/9", os.path.join(args.out, f"{name}{suffix}-pq-cropped.avif"))
    scene = colour.models.ootf_inverse_BT2100_HLG(nits, L_B=0, L_W=HLG_PEAK)
    hlg = colour.models.oetf_BT2100_HLG(scene)
    encode(hlg, "9/18/9", os.path.join(args.out, f"{name}{suffix}-hlg.avif"))
    if args.heif:
        encode_heif(hlg, 18, os.path.join(args.out, f"{name}{suffix}-hlg.heic"))
        if args.variants:
            encode_heif(hlg, 18, os.path.join(args.out, f"{name}-hlg-444.heic"), chroma=444)
    if args.png:
        write_png16(os.path.join(args.out, f"{name}{suffix}-hlg.png"), to16(hlg), (9, 18, 0, 1), light_level)
    if args.jxl:
        encode_jxl(pq, "pq", args.out, name + suffix)
        encode_jxl(hlg, "hlg", args.out, name + suffix)


if __name__ == "__main__":
    main()
