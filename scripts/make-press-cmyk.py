#!/usr/bin/env python3
"""Writes a CMYK JPEG whose press profile carries a perceptual table unlike its colorimetric one, as commercial
press profiles (Coated FOGRA39, ISO Coated v2, US Web Coated SWOP) do, for the colour tests.

    scripts/make-press-cmyk.py CMYK.jpg OUT.jpg

CMYK.jpg is a CMYK JPEG with an embedded LUT profile whose A2B0 (perceptual) and A2B1 (colorimetric) tables are the
same, like the ArgyllCMS-built Coated FOGRA39 sample. The output keeps its pixels (Pillow writes them Adobe-style,
inverted, with an APP14 segment) and embeds a copy of the profile whose A2B0 is A2B1 with its output curves bent the
way a perceptual rendering for the screen bends them: mid-tones lighter (L* to the power 0.8) and chroma compressed
by 20 %. Prints the PSNR between ImageCms's perceptual and its relative colorimetric (with black point
compensation) conversions of the result, to show how far apart the two renderings are.
"""
import io
import math
import struct
import sys

import numpy as np
from PIL import Image, ImageCms


def tag_table(profile):
    count = struct.unpack(">I", profile[128:132])[0]
    tags = {}
    for index in range(count):
        signature, offset, size = struct.unpack(">4sII", profile[132 + 12 * index:144 + 12 * index])
        tags[signature] = (index, offset, size)
    return tags


def perceptual_variant(profile):
    """The profile with a new A2B0: A2B1 (an `mft2` lut16) with bent output curves, appended at the end."""
    profile = bytearray(profile)
    tags = tag_table(profile)
    _, offset, size = tags[b"A2B1"]
    lut = bytearray(profile[offset:offset + size])
    if lut[:4] != b"mft2":
        raise SystemExit("A2B1 is not a lut16Type table")
    inputs, outputs, grid = lut[8], lut[9], lut[10]
    input_entries, output_entries = struct.unpack(">HH", lut[48:52])
    start = 52 + inputs * input_entries * 2 + grid ** inputs * outputs * 2
    for channel in range(outputs):
        for entry in range(output_entries):
            at = start + 2 * (channel * output_entries + entry)
            value = struct.unpack(">H", lut[at:at + 2])[0] / 65535
            value = value ** 0.8 if channel == 0 else 0.5 + 0.8 * (value - 0.5)
            lut[at:at + 2] = struct.pack(">H", round(value * 65535))
    while len(profile) % 4:
        profile.append(0)
    index = tags[b"A2B0"][0]
    profile[132 + 12 * index + 4:132 + 12 * index + 12] = struct.pack(">II", len(profile), len(lut))
    profile += lut
    profile[0:4] = struct.pack(">I", len(profile))
    profile[84:100] = bytes(16)  # the profile ID no longer matches
    return bytes(profile)


def main():
    source, out = sys.argv[1], sys.argv[2]
    with Image.open(source) as image:
        image.load()
        profile = perceptual_variant(image.info["icc_profile"])
        image.save(out, quality=95, icc_profile=profile)
    with Image.open(out) as image:
        cms = ImageCms.ImageCmsProfile(io.BytesIO(profile))
        srgb = ImageCms.createProfile("sRGB")
        perceptual = ImageCms.profileToProfile(image, cms, srgb, outputMode="RGB",
                                               renderingIntent=ImageCms.Intent.PERCEPTUAL)
        colorimetric = ImageCms.profileToProfile(image, cms, srgb, outputMode="RGB",
                                                 renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC,
                                                 flags=ImageCms.Flags.BLACKPOINTCOMPENSATION)
        difference = np.asarray(perceptual, dtype=float) - np.asarray(colorimetric, dtype=float)
        print(round(10 * math.log10(255 ** 2 / max(np.mean(difference ** 2), 1e-12)), 2))


if __name__ == "__main__":
    main()
