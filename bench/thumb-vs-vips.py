#!/usr/bin/env python3
"""darkroom thumb vs vipsthumbnail, side by side in one run.

40 twelve-megapixel JPEGs (the 5 in shared/photos/jpeg-12mp, cycled) -> 256 px JPEG files at quality 85
(or, with --ext heic / avif and --photos, the HEIC or AVIF samples: --files picks some by name),
alternating the tools for --rounds rounds; reports the median wall time, images/s and peak RSS of each
(/usr/bin/time %M). vipsthumbnail runs once over all files (its own thread pool) and, for a like-for-like
use of both cores, as 2 processes in parallel (xargs -P 2, peak RSS of the larger process).
Usage: bench/thumb-vs-vips.py [--darkroom PATH] [--count 40] [--rounds 3] [--photos DIR] [--ext jpg|heic|avif]
       [--files NAME,NAME] [--size 256]
e.g.   bench/thumb-vs-vips.py --photos ../shared/photos/heic --ext heic --files eveningglow-4032x3024-thumb320.heic,onestandsout-4032x3024-grid512.heic --count 20
With --animated, animations instead: each input becomes a 128 px animated WebP at quality 75 — darkroom thumb
--format webp against vipsthumbnail 'x.gif[n=-1]' -o %s.webp[Q=75] (both libwebp at effort 4); every output must
play as long as its source. By default two kinds, --count 6 each, one after the other in the same run: the 300-frame
480x300 cinemagraph GIF (most pixels repeat between frames) and the moving GIF of bench/make-moving-gif.py (a pan
where every frame changes; written to .build-bench/animated/ when missing). --photos/--files pick other inputs.
Prints one JSON object (with --animated, one per kind under "kinds"). Needs libvips-tools (apt-get install
libvips-tools); --animated also needs Pillow.
"""
import argparse, json, os, shutil, statistics, subprocess, tempfile

def timed(cmd, shell=False):
    # /usr/bin/time prints "<seconds> <max RSS KiB>" on the last line of stderr.
    fmt = ["/usr/bin/time", "-f", "TIME %e %M"]
    full = fmt + (["sh", "-c", cmd] if shell else cmd)
    p = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=dict(os.environ, VIPS_WARNING="0"))
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(full)}\n{p.stderr[-2000:]}")
    line = [l for l in p.stderr.splitlines() if l.startswith("TIME ")][-1].split()
    return float(line[1]), int(line[2]) * 1024

def play_ms(path):
    """(one play in ms, frames, longest side) as Pillow reads an animation. libwebp merges a frame identical to the
    one before it into that frame's duration, so frame counts differ between encoders while the timing does not."""
    from PIL import Image
    with Image.open(path) as im:
        total = 0
        for i in range(getattr(im, "n_frames", 1)):
            im.seek(i); im.load(); total += im.info.get("duration", 0)
        return total, getattr(im, "n_frames", 1), max(im.size)

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--darkroom", default=os.path.join(here, "..", ".build", "release", "darkroom"))
    ap.add_argument("--photos", default=os.path.join(here, "..", "..", "shared", "photos", "jpeg-12mp"))
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--ext", default="jpg")
    ap.add_argument("--files", default="", help="comma-separated names inside --photos (default: every *.EXT)")
    ap.add_argument("--animated", action="store_true", help="animations to animated WebP (see above)")
    a = ap.parse_args()
    if not shutil.which("vipsthumbnail"):
        raise SystemExit("vipsthumbnail not found: apt-get install libvips-tools")
    if a.animated:
        for key, value in {"ext": "gif", "count": 6, "size": 128}.items():
            if getattr(a, key) == ap.get_default(key):
                setattr(a, key, value)
    if a.animated and a.photos == ap.get_default("photos") and not a.files:
        moving = os.path.join(here, "..", ".build-bench", "animated", "pan-300.gif")
        if not os.path.exists(moving):
            subprocess.run([os.path.join(here, "make-moving-gif.py"), "--out", moving], check=True)
        kinds = {"cinemagraph": (os.path.join(here, "..", "..", "shared", "photos", "animated"),
                                 "cinemagraph-480x300-300f.gif"),
                 "moving": (os.path.dirname(moving), os.path.basename(moving))}
        summary = {"benchmark": "thumb-vs-vips-animated", "kinds": {}}
        for kind, (photos, name) in kinds.items():
            a.photos, a.files, a.ext = photos, name, "gif"
            summary["kinds"][kind] = compare(a)
        print(json.dumps(summary))
        return
    print(json.dumps(compare(a)))

def compare(a):
    """One side-by-side comparison of darkroom and vipsthumbnail over a.count inputs; returns its summary."""
    names = a.files.split(",") if a.files else [f for f in os.listdir(a.photos) if f.lower().endswith("." + a.ext)]
    photos = sorted(os.path.join(a.photos, f) for f in names)
    if not photos:
        raise SystemExit(f"no .{a.ext} files in {a.photos}")
    work = tempfile.mkdtemp(prefix="darkroom-vs-vips-")
    src = os.path.join(work, "src"); os.mkdir(src)
    inputs = []
    for i in range(a.count):
        p = photos[i % len(photos)]
        dst = os.path.join(src, f"{i:03d}-{os.path.basename(p)}")
        shutil.copyfile(p, dst)  # real files, so neither tool sees a symlink
        inputs.append(dst)
    results = {"darkroom": [], "vips": [], "vips_2proc": []}
    sizes = {}
    for r in range(a.rounds):
        for name in results:
            out = os.path.join(work, f"out-{name}-{r}"); os.mkdir(out)
            if name == "darkroom":
                fmt, q = ("webp", "75") if a.animated else ("jpeg", "85")
                cmd = [a.darkroom, "thumb", src, "--max-pixel-size", str(a.size), "--out", out, "--format", fmt,
                       "--quality", q, "--json"]
                results[name].append(timed(cmd))
            elif a.animated and name == "vips":
                cmd = ["vipsthumbnail", "-s", str(a.size), "-o", os.path.join(out, "%s.webp[Q=75]")] + \
                      [p + "[n=-1]" for p in inputs]
                results[name].append(timed(cmd))
            elif a.animated:
                cmd = (f"ls {src}/*.{a.ext} | sed 's/$/[n=-1]/' | xargs -P 2 -n {max(1, a.count // 2)} "
                       f"vipsthumbnail -s {a.size} -o '{out}/%s.webp[Q=75]'")
                results[name].append(timed(cmd, shell=True))
            elif name == "vips":
                cmd = ["vipsthumbnail", "-s", str(a.size), "-o", os.path.join(out, "%s.jpg[Q=85]")] + inputs
                results[name].append(timed(cmd))
            else:
                cmd = (f"ls {src}/*.{a.ext} | xargs -P 2 -n {max(1, a.count // 2)} "
                       f"vipsthumbnail -s {a.size} -o '{out}/%s.jpg[Q=85]'")
                results[name].append(timed(cmd, shell=True))
            made = len(os.listdir(out))
            if made != a.count:
                raise SystemExit(f"{name} wrote {made} files, expected {a.count}")
            if a.animated:
                for f in os.listdir(out):
                    made_ms = play_ms(os.path.join(out, f))
                    source_ms = play_ms(inputs[0])
                    if made_ms[0] != source_ms[0] or made_ms[2] != a.size:
                        raise SystemExit(f"{name} wrote {f}: {made_ms}, the source plays {source_ms}")
                sizes[name] = statistics.mean(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    summary = {"benchmark": "thumb-vs-vips-animated" if a.animated else "thumb-vs-vips", "images": a.count, "size": a.size, "rounds": a.rounds,
               "cores": os.cpu_count(), "sources": [os.path.basename(p) for p in photos]}
    for name, runs in results.items():
        wall = statistics.median(t for t, _ in runs)
        summary[f"{name}_wall_s"] = round(wall, 3)
        summary[f"{name}_images_per_s"] = round(a.count / wall, 2)
        summary[f"{name}_ms_per_image"] = round(1000 * wall / a.count, 2)
        summary[f"{name}_peak_rss_mib"] = round(max(m for _, m in runs) / 1048576, 1)
    for name, size in sizes.items():
        summary[f"{name}_mean_output_bytes"] = round(size)
    summary["throughput_ratio_vs_vips"] = round(summary["vips_wall_s"] / summary["darkroom_wall_s"], 2)
    summary["throughput_ratio_vs_vips_2proc"] = round(summary["vips_2proc_wall_s"] / summary["darkroom_wall_s"], 2)
    shutil.rmtree(work)
    return summary

if __name__ == "__main__":
    main()
