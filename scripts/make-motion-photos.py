#!/usr/bin/env python3
"""Makes Motion Photos and Live Photos in every layout phones write, from one real photo and a short clip of it.

    make-motion-photos.py PHOTO OUTDIR

  clip.mp4             2 s, 30 fps, 320x240 H.264 pan across the photo: the clip every photo below holds
  portrait.mp4         the same clip 240x320 stored turned (display matrix 90 degrees), as phones record upright
  google.jpg           Google's Motion Photo 1.0: XMP Camera:MotionPhoto + Container:Directory, the clip appended
  micro-video.jpg      the older Micro Video: XMP MicroVideo + MicroVideoOffset, the clip appended
  samsung.jpg          Samsung's layout: no XMP, a trailer whose MotionPhoto_Data block holds the clip, then the
                       SEFH directory and SEFT
  heif.heic            a HEIC with the clip in a top-level mpvd box, as the Motion Photo format stores it in HEIF
  portrait.jpg         google.jpg's layout holding portrait.mp4
  still-only.jpg       google.jpg's layout with Camera:MotionPhoto=0: shown as a still, clip or not
  dropped.jpg          the XMP of google.jpg without the clip (an editor kept the metadata and dropped the video)
  truncated.jpg        google.jpg's XMP and the clip's first half: the clip is damaged
  live/IMG_0001.HEIC   a Live Photo: the still ...
  live/IMG_0001.MOV    ... and its QuickTime video beside it, same base name
  live/IMG_0002.JPG    a still with no video beside it

Each file's clip is found by ExifTool (MotionPhotoVideo, EmbeddedVideoFile), which the tests use as the reference.
"""

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

    heif = io.BytesIO()
    pillow_heif.from_pillow(im).save(heif, quality=80)
    open(p("heif.heic"), "wb").write(heif.getvalue() + struct.pack(">I", 8 + len(clip)) + b"mpvd" + clip)

    open(p("live/IMG_0001.HEIC"), "wb").write(heif.getvalue())
    ffmpeg("-i", p("clip.mp4"), "-c", "copy", "-f", "mov", p("live/IMG_0001.MOV"))
    open(p("live/IMG_0002.JPG"), "wb").write(still)


if __name__ == "__main__":
    main()
