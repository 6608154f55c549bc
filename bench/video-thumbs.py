#!/usr/bin/env python3
"""Poster-frame thumbnails of videos: `darkroom thumb` against `ffmpegthumbnailer -s 256` and
`totem-video-thumbnailer -s 256` (Debian's, run once per file as file managers run them), on the same files,
alternating for --rounds rounds in one run.

    bench/video-thumbs.py [--darkroom PATH] [--rounds 3] [--count 6] [--desktop 200] [--only-motion 1]

The inputs are made once into .build-bench/video/ with the ffmpeg command: 8-second pans across two 12 MP photos
(../shared/photos/jpeg-12mp; a pan so every frame differs, as a camera's do) at 30 fps, a keyframe every 2 s as
phones write them, in four kinds: 1080p and 4K (3840 × 2160) H.264 (MP4) and HEVC (MOV, hvc1), plus a 1080p clip that
starts with 3 s of black. Each tool thumbnails --count files of a kind (hard links, cycled) to 256 px JPEGs: darkroom
in one process with one worker (`--jobs 1`), the others one process per file. Reported per kind: the CPU seconds
(user + system, every thread: the work, however it was scheduled) and the peak RSS of the largest process, the
median over the rounds; Darkroom's throughput per core against each peer (their CPU seconds over Darkroom's); and
whether each tool's thumbnail is black or blank (luma spread under 5 of 255, or a mean under 16 with a spread under
10) for every clip: the black-start clip is the test. Then the desktop's thumbnail cache: `darkroom thumbnail-cache
fill` of a folder of --desktop videos (links to the clips of every kind, cycled; one process, `--jobs 2`) against
ffmpegthumbnailer run once per file (as a file manager runs it, one at a time), wall seconds, and GLib's verdict on
every entry Darkroom wrote (`gio info -a thumbnail::is-valid`). And motion previews (`thumb --motion`: 3 s at 10 fps,
256 px animated WebP) of the 1080p H.264 and 4K HEVC clips against the ffmpeg command making the same (alone with
--only-motion 1). With this
machine's yardstick, a 12 MP JPEG → 256
px (`darkroom bench decode`, jpeg_thumb_ms). Prints one JSON object.
"""
import glob, json, os, shutil, statistics, subprocess, tempfile

from benchlib import ROOT, linked, thumbnail_arguments, timed, yardstick

KINDS = {
    "h264-1080p": (1920, 1080, ["-c:v", "libx264", "-preset", "veryfast", "-crf", "20"], "mp4"),
    "h264-4k": (3840, 2160, ["-c:v", "libx264", "-preset", "ultrafast", "-crf", "20"], "mp4"),
    "hevc-1080p": (1920, 1080, ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error",
                                "-crf", "22", "-tag:v", "hvc1"], "mov"),
    "hevc-4k": (3840, 2160, ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error",
                             "-crf", "22", "-tag:v", "hvc1"], "mov"),
    "black-start-1080p": (1920, 1080, ["-c:v", "libx264", "-preset", "veryfast", "-crf", "20"], "mp4"),
}
SECONDS, RATE, GOP = 8, 30, 60


def make_inputs(photos, samples):
    os.makedirs(samples, exist_ok=True)
    made = {}
    for kind, (w, h, codec, ext) in KINDS.items():
        made[kind] = []
        for i, photo in enumerate(photos):
            out = os.path.join(samples, f"{kind}-{i}.{ext}")
            made[kind].append(out)
            if os.path.exists(out):
                continue
            pan = (f"scale={w * 5 // 4}:-2,crop={w}:{h}:x='t*{w // 4}/{SECONDS}':y=(ih-{h})/2,fps={RATE},"
                   "format=yuv420p")
            base = ["ffmpeg", "-v", "error", "-nostdin", "-y"]
            if kind.startswith("black-start"):
                subprocess.run(base + ["-f", "lavfi", "-i", f"color=black:size={w}x{h}:rate={RATE}:duration=3",
                                       "-loop", "1", "-framerate", str(RATE), "-t", str(SECONDS - 3), "-i", photo,
                                       "-filter_complex", f"[1:v]{pan}[p];[0:v]format=yuv420p[b];[b][p]concat=n=2:v=1[v]",
                                       "-map", "[v]", *codec, "-g", str(GOP), out + ".part." + ext], check=True)
            else:
                subprocess.run(base + ["-loop", "1", "-framerate", str(RATE), "-t", str(SECONDS), "-i", photo,
                                       "-vf", pan, *codec, "-g", str(GOP), out + ".part." + ext], check=True)
            os.replace(out + ".part." + ext, out)
    return made


def blank(path):
    from PIL import Image, ImageStat
    stat = ImageStat.Stat(Image.open(path).convert("L"))
    mean, spread = stat.mean[0], stat.stddev[0]
    return spread < 5 or (mean < 16 and spread < 10)


def main():
    args = thumbnail_arguments(rounds=3, count=6, extra=[("--desktop", 200), ("--only-motion", 0)])
    subprocess.run([os.path.join(ROOT, "scripts", "install-deps.sh"), "ffmpeg", "ffmpegthumbnailer", "totem",
                    "gstreamer1.0-libav"], check=True)
    photos = sorted(glob.glob(os.path.join(args.photos, "*.jpg")))[:2]
    made = make_inputs(photos, os.path.join(ROOT, ".build-bench", "video"))
    result = {"rounds": args.rounds, "count": args.count, "yardstick_jpeg_thumb_ms": yardstick(args.darkroom),
              "kinds": {}}
    tools = ["darkroom", "ffmpegthumbnailer", "totem"]
    if args.only_motion:
        result["motion"] = motion(args.darkroom, made, args.rounds, args.count)
        print(json.dumps(result, indent=1))
        return
    for kind, inputs in made.items():
        work = tempfile.mkdtemp(prefix="video-bench-")
        files = linked(inputs, args.count, work, os.path.splitext(inputs[0])[1][1:])
        cpu, rss, black = {t: [] for t in tools}, {t: [] for t in tools}, {t: 0 for t in tools}
        for _ in range(args.rounds):
            for tool in tools:
                out = tempfile.mkdtemp(dir=work)
                if tool == "darkroom":
                    cmd = [args.darkroom, "thumb", *files, "--max-pixel-size", "256", "--out", out, "--jobs", "1"]
                    _, mib, seconds = timed(cmd, cpu=True)
                else:
                    each = ("ffmpegthumbnailer -i {f} -o {o}.jpg -s 256" if tool == "ffmpegthumbnailer"
                            else "totem-video-thumbnailer -s 256 {f} {o}.png")
                    line = "; ".join(each.format(f=f, o=os.path.join(out, os.path.basename(f))) for f in files)
                    _, mib, seconds = timed("set -e; " + line, shell=True, cpu=True)
                cpu[tool].append(seconds)
                rss[tool].append(mib)
                black[tool] = sum(blank(p) for p in glob.glob(os.path.join(out, "*")))
                shutil.rmtree(out)
        med = {t: statistics.median(v) for t, v in cpu.items()}
        result["kinds"][kind] = {
            "cpu_s": cpu, "median_cpu_s": med, "peak_rss_mib": {t: max(v) for t, v in rss.items()},
            "throughput_per_core_vs_ffmpegthumbnailer": round(med["ffmpegthumbnailer"] / med["darkroom"], 2),
            "throughput_per_core_vs_totem": round(med["totem"] / med["darkroom"], 2),
            "blank_thumbnails": black, "files": len(files),
        }
        shutil.rmtree(work)
    result["motion"] = motion(args.darkroom, made, args.rounds, args.count)
    result["desktop"] = desktop(args.darkroom, [f for files in made.values() for f in files], args.desktop)
    print(json.dumps(result, indent=1))


def motion(darkroom, made, rounds, count):
    """Motion previews (3 s at 10 fps, 256 px, animated WebP at quality 85): `darkroom thumb --motion --jobs 1` against
    the ffmpeg command doing the same (fps=10, Lanczos, libwebp_anim) once per file, CPU seconds and peak RSS, the
    median over the rounds, and the frames each wrote."""
    from PIL import Image
    out = {}
    for kind in ("h264-1080p", "hevc-4k"):
        work = tempfile.mkdtemp(prefix="video-motion-")
        files = linked(made[kind], count, work, os.path.splitext(made[kind][0])[1][1:])
        cpu, rss, frames = {"darkroom": [], "ffmpeg": []}, {"darkroom": [], "ffmpeg": []}, {}
        for _ in range(rounds):
            for tool in ("darkroom", "ffmpeg"):
                target = tempfile.mkdtemp(dir=work)
                if tool == "darkroom":
                    cmd = [darkroom, "thumb", *files, "--motion", "--max-pixel-size", "256", "--out", target,
                           "--jobs", "1"]
                    _, mib, seconds = timed(cmd, cpu=True)
                else:
                    line = "; ".join(
                        f"ffmpeg -v error -nostdin -y -t 3 -i {f} -vf 'fps=10,scale=256:-2:flags=lanczos' -an "
                        f"-c:v libwebp_anim -quality 85 -loop 0 {os.path.join(target, os.path.basename(f))}.webp"
                        for f in files)
                    _, mib, seconds = timed("set -e; " + line, shell=True, cpu=True)
                cpu[tool].append(seconds)
                rss[tool].append(mib)
                frames[tool] = sorted({Image.open(p).n_frames for p in glob.glob(os.path.join(target, "*.webp"))})
                shutil.rmtree(target)
        med = {t: statistics.median(v) for t, v in cpu.items()}
        out[kind] = {"median_cpu_s": med, "peak_rss_mib": {t: max(v) for t, v in rss.items()}, "frames": frames,
                     "throughput_per_core_vs_ffmpeg": round(med["ffmpeg"] / med["darkroom"], 2), "files": len(files)}
        shutil.rmtree(work)
    return out


def desktop(darkroom, inputs, count):
    """`thumbnail-cache fill` of `count` linked videos against ffmpegthumbnailer once per file, and GLib's check."""
    work = tempfile.mkdtemp(prefix="video-desktop-")
    folder = os.path.join(work, "videos")
    os.makedirs(folder)
    files = []
    for i in range(count):
        source = inputs[i % len(inputs)]
        files.append(os.path.join(folder, f"{i:04d}-{os.path.basename(source)}"))
        os.link(source, files[-1])
    cache = os.path.join(work, "cache", "thumbnails")
    fill, fill_mib = timed([darkroom, "thumbnail-cache", "fill", folder, "--cache-dir", cache, "--jobs", "2", "--json"])
    out = os.path.join(work, "ffmpegthumbnailer")
    os.makedirs(out)
    line = "; ".join(f"ffmpegthumbnailer -i {f} -o {out}/{i}.png -s 256" for i, f in enumerate(files))
    peer, peer_mib = timed("set -e; " + line, shell=True)
    valid = 0
    for f in files:
        info = subprocess.run(["gio", "info", "-a", "thumbnail::is-valid", f], capture_output=True, text=True,
                              env=dict(os.environ, XDG_CACHE_HOME=os.path.dirname(cache))).stdout
        valid += "thumbnail::is-valid: TRUE" in info
    shutil.rmtree(work)
    return {"videos": count, "darkroom_fill_s": fill, "darkroom_peak_rss_mib": fill_mib,
            "ffmpegthumbnailer_s": peer, "ffmpegthumbnailer_peak_rss_mib": peer_mib,
            "fill_vs_ffmpegthumbnailer": round(peer / fill, 2), "glib_valid": f"{valid} of {count}"}


if __name__ == "__main__":
    main()
