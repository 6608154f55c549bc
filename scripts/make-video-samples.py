#!/usr/bin/env python3
"""Writes the video samples the video tests read, with the ffmpeg command-line tool (and ExifTool for rotation).

Usage: make-video-samples.py PHOTO OUTDIR

Every clip pans across PHOTO (a real photo, so frames look like a camera's and differ from one moment to the next),
one per container and codec a phone or a desktop library holds:

  pan-h264.mp4       1920x1080 H.264, 30 fps, 4 s, a keyframe a second, AAC audio
  pan-hevc10.mov     1280x720 HEVC Main 10 (hvc1, as iPhones write it), 25 fps
  pan-vp9.webm       640x360 VP9; pan-vp8.webm 640x360 VP8
  pan-av1.mkv        640x360 AV1 (SVT-AV1), 24 fps
  pan-mpeg4.avi      640x360 MPEG-4 Part 2
  pan-h263.3gp       352x288 H.263
  rotated-90.mp4     640x360 H.264 whose display matrix turns it 90 degrees clockwise (ExifTool's Rotation tag);
  rotated-270.mp4    and 270
  anamorphic.mp4     480x360 H.264 with 4:3 pixels (shown 640x360)
  black-start.mp4    640x360 H.264: 2 s of black, then the pan; a keyframe a second
  hlg.mov            1280x720 HEVC Main 10 tagged BT.2020 / HLG, and hlg-frame-1.png: its frame at 1 s decoded by
                     ffmpeg to 16-bit RGB with a cICP chunk (9, 18, 0, 1), the same signal as a still HDR image
"""
import os
import struct
import subprocess
import sys
import zlib


def ffmpeg(*args):
    """One ffmpeg run on one thread: the samples are made while other test suites run, whose timing must not suffer."""
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-threads", "1", *args[:-1], "-threads", "1",
                    args[-1]], check=True)


def pan(photo, width, height, seconds, rate):
    """Input arguments and a filter: a pan across the photo, scaled to cover width x height."""
    chain = (f"scale={width * 3 // 2}:-2,crop={width}:{height}:x='min(t*{width // 8},{width // 2})':y=(ih-{height})/2,"
             f"fps={rate},format=yuv420p")
    return ["-loop", "1", "-framerate", str(rate), "-t", str(seconds), "-i", photo], chain


def clip(photo, out, width, height, codec_args, seconds=4, rate=25, extra_inputs=(), pix="yuv420p", vf_tail=""):
    inputs, chain = pan(photo, width, height, seconds, rate)
    chain = chain.replace("format=yuv420p", f"format={pix}") + vf_tail
    ffmpeg(*inputs, *extra_inputs, "-vf", chain, *codec_args, out)


def add_cicp(png_path, primaries, transfer):
    """Inserts a cICP chunk (full range, RGB) after IHDR."""
    data = open(png_path, "rb").read()
    body = b"cICP" + bytes([primaries, transfer, 0, 1])
    chunk = struct.pack(">I", 4) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    end_of_ihdr = 8 + 4 + 4 + 13 + 4
    open(png_path, "wb").write(data[:end_of_ihdr] + chunk + data[end_of_ihdr:])


def main():
    photo, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)
    x264 = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "18"]
    clip(photo, p("pan-h264.mp4"), 1920, 1080, [*x264, "-g", "30", "-c:a", "aac", "-shortest"], rate=30,
         extra_inputs=["-f", "lavfi", "-t", "4", "-i", "sine=frequency=440"])
    x265 = ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error:keyint=25:pools=1:frame-threads=1", "-crf", "18",
            "-tag:v", "hvc1"]
    clip(photo, p("pan-hevc10.mov"), 1280, 720, x265, pix="yuv420p10le")
    clip(photo, p("pan-vp9.webm"), 640, 360, ["-c:v", "libvpx-vp9", "-b:v", "2M", "-g", "25"])
    clip(photo, p("pan-vp8.webm"), 640, 360, ["-c:v", "libvpx", "-b:v", "2M", "-g", "25"])
    clip(photo, p("pan-av1.mkv"), 640, 360, ["-c:v", "libsvtav1", "-preset", "12", "-crf", "30", "-g", "24", "-svtav1-params", "lp=1"], rate=24)
    clip(photo, p("pan-mpeg4.avi"), 640, 360, ["-c:v", "mpeg4", "-q:v", "2", "-g", "25"])
    clip(photo, p("pan-h263.3gp"), 352, 288, ["-c:v", "h263", "-q:v", "2", "-g", "25"])
    for degrees in (90, 270):
        name = p(f"rotated-{degrees}.mp4")
        clip(photo, name, 640, 360, [*x264, "-g", "25"])
        subprocess.run(["exiftool", "-q", "-overwrite_original", f"-Rotation={degrees}", name], check=True)
    clip(photo, p("anamorphic.mp4"), 640, 360, [*x264, "-g", "25"], vf_tail=",scale=480:360,setsar=4/3")
    # Two seconds of black before the pan: the poster frame's first tries land in it
    inputs, chain = pan(photo, 640, 360, 2, 25)
    ffmpeg("-f", "lavfi", "-i", "color=black:size=640x360:rate=25:duration=2", *inputs,
           "-filter_complex", f"[1:v]{chain}[p];[0:v]format=yuv420p[b];[b][p]concat=n=2:v=1[v]", "-map", "[v]",
           *x264, "-g", "25", p("black-start.mp4"))
    tags = ["-color_primaries", "bt2020", "-color_trc", "arib-std-b67", "-colorspace", "bt2020nc"]
    clip(photo, p("hlg.mov"), 1280, 720, [*x265, *tags], pix="yuv420p10le")
    ffmpeg("-ss", "1", "-i", p("hlg.mov"), "-frames:v", "1", "-vf",
           "scale=flags=lanczos+accurate_rnd+full_chroma_int:in_color_matrix=bt2020:in_range=tv:out_range=pc",
           "-pix_fmt", "rgb48be", p("hlg-frame-1.png"))
    add_cicp(p("hlg-frame-1.png"), 9, 18)


if __name__ == "__main__":
    main()
