#!/usr/bin/env python3
"""Writes the benchmark's moving GIF: a slow pan over a photo where every frame changes.

The cinemagraph in shared/photos/animated repeats most of its pixels from frame to frame, which flatters any
decoder or encoder that skips unchanged areas. This file is the hard case: a 480x300 window crosses the
photo (shared/photos/jpeg/kite-2560x1600.jpg scaled to 1280x800) diagonally over 300 frames at 40 ms, each frame
quantized to its own 256-colour palette (Pillow's median cut), so every pixel of every frame is new LZW data.
About 30 MB; deterministic for one Pillow version.

Usage: bench/make-moving-gif.py [--photo PATH] [--out .build-bench/animated/pan-300.gif] [--frames 300]
Then:  bench/thumb-vs-vips.py --animated --photos .build-bench/animated --files pan-300.gif
Needs Pillow.
"""
import argparse, os

from PIL import Image


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--photo", default=os.path.join(here, "..", "..", "shared", "photos", "jpeg", "kite-2560x1600.jpg"))
    ap.add_argument("--out", default=os.path.join(here, "..", ".build-bench", "animated", "pan-300.gif"))
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--size", default="480x300", help="the window, WxH")
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.split("x"))
    if not os.path.exists(a.photo):
        raise SystemExit(f"no photo at {a.photo}")
    with Image.open(a.photo) as im:
        photo = im.convert("RGB").resize((1280, 800), Image.Resampling.LANCZOS)
    span_x, span_y = photo.width - w, photo.height - h
    frames = []
    for i in range(a.frames):
        t = i / max(1, a.frames - 1)
        x, y = round(t * span_x), round(t * span_y)
        frames.append(photo.crop((x, y, x + w, y + h)).quantize(256, method=Image.Quantize.MEDIANCUT))
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    partial = a.out + ".partial"
    frames[0].save(partial, format="GIF", save_all=True, append_images=frames[1:], duration=40, loop=0,
                   optimize=False, disposal=1)
    os.replace(partial, a.out)
    with Image.open(a.out) as check:
        if check.n_frames != a.frames or check.size != (w, h):
            raise SystemExit(f"wrote {check.n_frames} frames of {check.size}, expected {a.frames} of {(w, h)}")
    print(f"{a.out}: {a.frames} frames of {w}x{h}, {os.path.getsize(a.out)} bytes")


if __name__ == "__main__":
    main()
