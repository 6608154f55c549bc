#!/usr/bin/env python3
"""Decoding in confined workers against decoding in the process, side by side in one run.

`darkroom thumb --json` (decodes in DarkroomWorkers' confined worker processes, the default) against
`darkroom thumb --json --in-process` on the same files, alternating for --rounds rounds; reports the median
images/s of each, their ratio, the parent's peak RSS and one worker's peak RSS. Kinds (--kinds, default all):
  jpeg  12 MP JPEGs (shared/photos/jpeg-12mp, cycled to --count) -> 256 px
  heic  12 MP HEICs without a thumbnail item that fits (the 512 px grid one and the 2560x1600 ones) -> 256 px
  tiff  12 MP TIFFs, LZW strips (bench/make-format-samples.sh writes them to .build-bench/formats/tiff)
  svg   vector illustrations made here (600 shapes each: paths, gradients, strokes) -> 256 px
  gif   animations -> 128 px animated WebP, every frame made in a worker: the cinemagraph of shared/photos/animated
        and the moving GIF where every frame changes (bench/make-moving-gif.py writes it to .build-bench/animated),
        alternating, count // 10 files (at least 2)
  hdr   the 12 MP JPEGs with --hdr apply -> 256 px 10-bit PQ AVIF (the source's bytes copied into the worker, the
        encoded file copied back)
  motion  5 s 1280x720 H.264 clips (ffmpeg's testsrc2, written to .build-bench/motion) with --motion -> 128 px
        animated WebP of 3 s at 10 fps, the clip read by ranges in the worker; count // 10 files (at least 2)
Both runs use the same number of job threads (--jobs, default the cores); the isolated run starts one worker per
job thread. Prints one JSON object. Usage: bench/isolation-overhead.py [--darkroom PATH] [--count 40] [--rounds 3]
"""
import argparse, json, os, random, statistics, subprocess, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PHOTOS = os.path.join(HERE, "..", "..", "shared", "photos")


def svg(path, seed):
    rng = random.Random(seed)
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="2048" height="1536" viewBox="0 0 2048 1536"><defs>']
    for g in range(24):
        c = [f"#{rng.randrange(1 << 24):06x}" for _ in range(3)]
        parts.append(f'<linearGradient id="g{g}" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="{c[0]}"/>'
                     f'<stop offset="0.5" stop-color="{c[1]}"/><stop offset="1" stop-color="{c[2]}"/></linearGradient>')
    parts.append("</defs>")
    for _ in range(600):
        points = " ".join(f"{rng.uniform(0, 2048):.1f},{rng.uniform(0, 1536):.1f}" for _ in range(6))
        parts.append(f'<path d="M{points.replace(" ", " Q", 1)} Z" fill="url(#g{rng.randrange(24)})" '
                     f'fill-opacity="{rng.uniform(0.3, 0.9):.2f}" stroke="#{rng.randrange(1 << 24):06x}" '
                     f'stroke-width="{rng.uniform(0.5, 6):.1f}"/>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("".join(parts))


def inputs(kind, directory, count):
    if kind == "jpeg":
        sources = sorted(os.path.join(PHOTOS, "jpeg-12mp", f) for f in os.listdir(os.path.join(PHOTOS, "jpeg-12mp")))
    elif kind == "heic":
        folder = os.path.join(PHOTOS, "heic")
        sources = [os.path.join(folder, f) for f in ("onestandsout-4032x3024-grid512.heic", "summer_1am-2560x1600.heic",
                                                     "kite-10bit-2560x1600.heic")]
    elif kind == "tiff":
        folder = os.path.join(HERE, "..", ".build-bench", "formats", "tiff")
        if not os.path.isdir(folder):
            subprocess.run([os.path.join(HERE, "make-format-samples.sh")], check=True, stdout=subprocess.DEVNULL)
        sources = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".tif"))
    elif kind == "hdr":
        sources = sorted(os.path.join(PHOTOS, "jpeg-12mp", f) for f in os.listdir(os.path.join(PHOTOS, "jpeg-12mp")))
    elif kind == "motion":
        clip = os.path.join(HERE, "..", ".build-bench", "motion", "testsrc2-1280x720-5s.mp4")
        if not os.path.exists(clip):
            os.makedirs(os.path.dirname(clip), exist_ok=True)
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30",
                            "-t", "5", "-c:v", "libx264", "-pix_fmt", "yuv420p", clip], check=True)
        sources = [clip]
        count = max(2, count // 10)
    elif kind == "gif":
        moving = os.path.join(HERE, "..", ".build-bench", "animated", "pan-300.gif")
        if not os.path.exists(moving):
            subprocess.run([os.path.join(HERE, "make-moving-gif.py")], check=True, stdout=subprocess.DEVNULL)
        sources = [os.path.join(PHOTOS, "animated", "cinemagraph-480x300-300f.gif"), moving]
        count = max(2, count // 10)
    else:
        sources = []
        for i in range(4):
            sources.append(os.path.join(directory, f"source-{i}.svg"))
            svg(sources[-1], i)
    folder = os.path.join(directory, "in")
    os.makedirs(folder)
    for i in range(count):
        source = sources[i % len(sources)]
        os.symlink(os.path.abspath(source), os.path.join(folder, f"{i:03d}{os.path.splitext(source)[1]}"))
    return folder


# Each kind's output size and extra thumb arguments.
SETTINGS = {"gif": (128, []), "motion": (128, ["--motion"]), "hdr": (256, ["--hdr", "apply"])}


def thumb(darkroom, folder, out, jobs, in_process, size=256, extra=()):
    command = [darkroom, "thumb", folder, "--max-pixel-size", str(size), "--out", out, "--json", "--jobs", str(jobs)]
    command += list(extra)
    if in_process:
        command.append("--in-process")
    p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{p.stderr[-2000:]}")
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    if summary["failures"]:
        raise SystemExit(f"failures: {summary['errors'][:3]}")
    return summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--darkroom", default=os.path.join(HERE, "..", ".build", "release", "darkroom"))
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--kinds", default="jpeg,heic,tiff,svg,gif,hdr,motion")
    a = ap.parse_args()
    result = {"count": a.count, "rounds": a.rounds, "jobs": a.jobs, "kinds": {}}
    for kind in a.kinds.split(","):
        with tempfile.TemporaryDirectory(prefix=f"isolation-{kind}-") as directory:
            folder = inputs(kind, directory, a.count)
            runs = {"workers": [], "in_process": []}
            for r in range(a.rounds):
                for name in (("workers", "in_process") if r % 2 == 0 else ("in_process", "workers")):
                    out = os.path.join(directory, f"out-{name}-{r}")
                    size, extra = SETTINGS.get(kind, (256, []))
                    runs[name].append(thumb(a.darkroom, folder, out, a.jobs, name == "in_process", size, extra))
            rate = {n: statistics.median(s["images_per_second"] for s in runs[n]) for n in runs}
            result["kinds"][kind] = {
                "files": len(os.listdir(folder)),
                "workers_images_per_second": round(rate["workers"], 2),
                "in_process_images_per_second": round(rate["in_process"], 2),
                "ratio": round(rate["workers"] / rate["in_process"], 3),
                "parent_peak_rss_mib": {n: round(max(s["peak_rss_bytes"] for s in runs[n]) / 2**20, 1) for n in runs},
                "worker_peak_rss_mib": round(max(s["worker_peak_rss_bytes"] for s in runs["workers"]) / 2**20, 1),
            }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
