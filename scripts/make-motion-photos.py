#!/usr/bin/env python3
"""Makes Motion Photos and Live Photos in every layout phones write, from one real photo and a short clip of it.

    make-motion-photos.py PHOTO OUTDIR

  clip.mp4             2 s, 30 fps, 320x240 H.264 pan across the photo: the clip every photo below holds
  portrait.mp4         the same clip 240x320 stored turned (display matrix 90 degrees), as phones record upright
  google.jpg           Google's Motion Photo 1.0: XMP Camera:MotionPhoto + Container:Directory, the clip appended
  micro-video.jpg      the older Micro Video: XMP MicroVideo + MicroVideoOffset, the clip appended
  samsung.jpg          Samsung's layout: no XMP, a trailer whose MotionPhoto_Data block holds the clip, then the
                       SEFH directory and SEFT
  heif.heic            a HEIC with the clip in a top-level mpvd box, as the Motion Photo format stores it in HEIF,
                       and an XMP item (Camera:MotionPhoto=1, the still's frame at 0.5 s)
  heif-still-only.heic heif.heic's layout whose XMP says Camera:MotionPhoto=0
  portrait.jpg         google.jpg's layout holding portrait.mp4
  still-only.jpg       google.jpg's layout with Camera:MotionPhoto=0: shown as a still, clip or not
  dropped.jpg          the XMP of google.jpg without the clip (an editor kept the metadata and dropped the video)
  truncated.jpg        google.jpg's XMP and the clip's first half: the clip is damaged
  live/IMG_0001.HEIC   a Live Photo: the still (Apple's maker note with content identifier A) ...
  live/IMG_0001.MOV    ... and its QuickTime video beside it, same base name, its content identifier A
  live/IMG_0002.JPG    a still with no video beside it
  live/IMG_0003.HEIC   a still with content identifier C beside IMG_0003.MOV, whose identifier is D: not a pair
  live/IMG_0003.MOV
  live/2024-05-01 10.00.00.jpg    a renamed Live Photo: the JPEG still (identifier B) ...
  live/exported-clip.mov          ... and its video under another name (identifier B)

The content identifiers are ExifTool's MediaGroupUUID (the still) and ContentIdentifier (the video), which the
tests compare with Darkroom's. Each file's clip is found by ExifTool (MotionPhotoVideo, EmbeddedVideoFile), which the tests use as the reference.
"""

import importlib
import io
import os
import struct
import subprocess
import sys

from PIL import Image
import pillow_heif


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-threads", "1", *args], check=True)


def jpeg(photo, size):
    im = Image.open(photo).convert("RGB")
    im.thumbnail((size, size))
    out = io.BytesIO()
    im.save(out, "JPEG", quality=85)
    return out.getvalue(), im


apple_exif = importlib.import_module("make-apple-gainmap-heic").apple_exif  # this script's folder is on sys.path
IDENTIFIERS = {name: f"{n}A5F3E2C-1B7D-4E9A-8C3F-0D2B6A9E41F{n}" for n, name in enumerate("ABCD", start=1)}


def live_photo_exif(identifier):
    """Apple's EXIF whose maker note holds tag 0x11, the Live Photo content identifier (ASCII)."""
    value = identifier.encode() + b"\0"
    return apple_exif([(0x11, 2, len(value), value)])


def quicktime(clip, out, identifier):
    """The clip copied into a QuickTime file whose mdta key com.apple.quicktime.content.identifier is `identifier`."""
    ffmpeg("-i", clip, "-map_metadata", "-1", "-c", "copy", "-f", "mov", "-movflags", "use_metadata_tags",
           "-metadata", f"com.apple.quicktime.content.identifier={identifier}", out)


def heif_motion_xmp(flag=1, timestamp_us=500000):
    return f"""<x:xmpmeta xmlns:x="adobe:ns:meta/">
  <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
    <rdf:Description rdf:about="" xmlns:GCamera="http://ns.google.com/photos/1.0/camera/"
      GCamera:MotionPhoto="{flag}" GCamera:MotionPhotoVersion="1"
      GCamera:MotionPhotoPresentationTimestampUs="{timestamp_us}"/>
  </rdf:RDF>
</x:xmpmeta>"""


def with_xmp(jpeg_bytes, xmp):
    """The JPEG with an XMP APP1 segment right after SOI."""
    payload = b"http://ns.adobe.com/xap/1.0/\0" + xmp.encode()
    segment = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
    return jpeg_bytes[:2] + segment + jpeg_bytes[2:]


def motion_xmp(clip_length, flag=1, timestamp_us=1000000):
    return f"""<x:xmpmeta xmlns:x="adobe:ns:meta/">
  <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
    <rdf:Description rdf:about=""
        xmlns:GCamera="http://ns.google.com/photos/1.0/camera/"
        xmlns:Container="http://ns.google.com/photos/1.0/container/"
        xmlns:Item="http://ns.google.com/photos/1.0/container/item/"
      GCamera:MotionPhoto="{flag}"
      GCamera:MotionPhotoVersion="1"
      GCamera:MotionPhotoPresentationTimestampUs="{timestamp_us}">
      <Container:Directory>
        <rdf:Seq>
          <rdf:li rdf:parseType="Resource">
            <Container:Item Item:Mime="image/jpeg" Item:Semantic="Primary" Item:Length="0" Item:Padding="0"/>
          </rdf:li>
          <rdf:li rdf:parseType="Resource">
            <Container:Item Item:Mime="video/mp4" Item:Semantic="MotionPhoto" Item:Length="{clip_length}" Item:Padding="0"/>
          </rdf:li>
        </rdf:Seq>
      </Container:Directory>
    </rdf:Description>
  </rdf:RDF>
</x:xmpmeta>"""


def micro_video_xmp(clip_length):
    return f"""<x:xmpmeta xmlns:x="adobe:ns:meta/">
  <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
    <rdf:Description rdf:about="" xmlns:GCamera="http://ns.google.com/photos/1.0/camera/"
      GCamera:MicroVideo="1" GCamera:MicroVideoVersion="1" GCamera:MicroVideoOffset="{clip_length}"
      GCamera:MicroVideoPresentationTimestampUs="500000"/>
  </rdf:RDF>
</x:xmpmeta>"""


def samsung_trailer(clip, at):
    """Samsung's trailer for a file whose trailer starts at byte `at`: one MotionPhoto_Data block, the SEFH
    directory (version 106, one 12-byte entry: type 0x0A30, the block's offset back from the directory, its size)
    and the directory's length followed by SEFT."""
    name = b"MotionPhoto_Data"
    block = b"\x00\x00\x30\x0a" + struct.pack("<I", len(name)) + name + clip
    directory = b"SEFH" + struct.pack("<II", 106, 1) + b"\x00\x00\x30\x0a" + struct.pack("<II", len(block), len(block))
    return block + directory + struct.pack("<I", len(directory)) + b"SEFT"


def main():
    photo, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(out, "live"), exist_ok=True)
    p = lambda name: os.path.join(out, name)
    pan = "scale=480:-2,crop=320:240:x='min(t*60,150)':y=(ih-240)/2,fps=30,format=yuv420p"
    ffmpeg("-loop", "1", "-framerate", "30", "-t", "2", "-i", photo, "-vf", pan, "-c:v", "libx264", "-preset",
           "veryfast", "-crf", "18", "-g", "30", p("clip.mp4"))
    ffmpeg("-i", p("clip.mp4"), "-c", "copy", p("portrait.mp4"))
    subprocess.run(["exiftool", "-q", "-overwrite_original", "-Rotation=90", p("portrait.mp4")], check=True)
    clip = open(p("clip.mp4"), "rb").read()
    portrait = open(p("portrait.mp4"), "rb").read()
    still, im = jpeg(photo, 640)

    open(p("google.jpg"), "wb").write(with_xmp(still, motion_xmp(len(clip))) + clip)
    open(p("micro-video.jpg"), "wb").write(with_xmp(still, micro_video_xmp(len(clip))) + clip)
    open(p("samsung.jpg"), "wb").write(still + samsung_trailer(clip, len(still)))
    open(p("portrait.jpg"), "wb").write(with_xmp(still, motion_xmp(len(portrait))) + portrait)
    open(p("still-only.jpg"), "wb").write(with_xmp(still, motion_xmp(len(clip), flag=0)) + clip)
    open(p("dropped.jpg"), "wb").write(with_xmp(still, motion_xmp(len(clip))))
    half = clip[: len(clip) // 2]
    open(p("truncated.jpg"), "wb").write(with_xmp(still, motion_xmp(len(half))) + half)

    def heic(**extra):
        out = io.BytesIO()
        pillow_heif.from_pillow(im).save(out, quality=80, **extra)
        return out.getvalue()

    mpvd = struct.pack(">I", 8 + len(clip)) + b"mpvd" + clip
    open(p("heif.heic"), "wb").write(heic(xmp=heif_motion_xmp().encode()) + mpvd)
    open(p("heif-still-only.heic"), "wb").write(heic(xmp=heif_motion_xmp(flag=0).encode()) + mpvd)

    open(p("live/IMG_0001.HEIC"), "wb").write(heic(exif=live_photo_exif(IDENTIFIERS["A"])))
    quicktime(p("clip.mp4"), p("live/IMG_0001.MOV"), IDENTIFIERS["A"])
    open(p("live/IMG_0002.JPG"), "wb").write(still)
    open(p("live/IMG_0003.HEIC"), "wb").write(heic(exif=live_photo_exif(IDENTIFIERS["C"])))
    quicktime(p("clip.mp4"), p("live/IMG_0003.MOV"), IDENTIFIERS["D"])
    renamed = io.BytesIO()
    im.save(renamed, "JPEG", quality=85, exif=b"Exif\0\0" + live_photo_exif(IDENTIFIERS["B"]))
    open(p("live/2024-05-01 10.00.00.jpg"), "wb").write(renamed.getvalue())
    quicktime(p("clip.mp4"), p("live/exported-clip.mov"), IDENTIFIERS["B"])


if __name__ == "__main__":
    main()
