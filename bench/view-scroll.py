#!/usr/bin/env python3
"""`darkroom view` scrolling a folder of 12 MP photos under Xvfb: the library's pipeline cold (nothing cached), the same
script warm (second pass, from the image table), and the naive strategy (decoding on the drawing thread) side by side.

    bench/view-scroll.py [--darkroom PATH] [--count 10000] [--cell 256] [--speed 5000] [--seconds 20]
                         [--long 0] [--json FILE] [--only cold,warm,naive,desktop,plain] [--keep DIR]
                         [--exif-thumbnails] [--videos FRACTION] [--view-args "ARGS"] [--hogs N]

COUNT photos (../shared/photos/jpeg-12mp, 4032x3024, cycled as hard links with distinct names, 100 per folder; the
files stay in the page cache, so "cold" means nothing in Darkroom's memory cache or image table) are scrolled at
SPEED px/s for SECONDS, then flung at 9000 px/s, in a 1280x800 window at 120 Hz (software renderer). With --long S a
last run scrolls down and up for S seconds (RSS sampled once a second: flat or not). `desktop` first fills a
freedesktop thumbnail cache for the folder (`darkroom thumbnail-cache fill --size large`, timed) and runs the cold
script at 180 px cells (what `large` thumbnails cover) with and without reading it (`--desktop-thumbnails`). The
other runs point `--desktop-thumbnails` at an empty folder, so the user's own cache never plays a part. Prints one
JSON object with each run's summary (the frame record's summary fields of `--stats`); `--keep DIR` also keeps each
run's whole stats file (with the frame record) as DIR/RUN.json, for `bench/frame-chart.py`.

--exif-thumbnails first gives each photo a 160 x 120 EXIF thumbnail as cameras and phones write one
(`scripts/add-exif-thumbnail.py`), so cold cells can show it while the photo decodes; `plain` runs the cold script
with `--no-embedded-thumbnails` beside it. The output's `decodeRate` is this machine's rate for the same photos,
`darkroom thumb` at the cell size with every core (photos/s), measured in the same run: the cold figures depend on it.
Before the runs the machine's timer floor is measured for as long as a scroll: a bare sleep loop at 120 Hz with
nothing else running (`timerFloor`: wakeups later than 2 and 4 ms, the latest, and how many ticks a frame doing the
cold run's median work would have missed from that lateness alone).
--view-args passes more `darkroom view` options to every run (for example `--decode-niceness 10`).
--hogs N stands in for a machine with slower cores: N busy loops at the decoding threads' niceness (10) run through the
decode-rate measure (itself run at niceness 10) and every scroll, so the decoders get a share of the cores as they would
of slower ones while the cores stay as busy as a cold scroll keeps them; the drawing thread (niceness 0) keeps its
weight. `decodeRate` is then the rate under the hogs, the figure to compare with a slower machine's.

--videos F (with `cold` in --only) adds a run, `pipeline_cold_videos`, over a second folder where every file whose
index is a multiple of round(1/F) is a video instead (8 s 1080p H.264 and HEVC pans, as bench/video-thumbs.py makes
them into .build-bench/video/), beside the photos-only cold run: a video's cell decodes one keyframe (its poster
frame) where a photo's decodes the JPEG at the cell's size.
"""
import argparse, glob, json, os, shutil, subprocess, tempfile, time


KEEP = None


VIEW_ARGS = []


def run(darkroom, folder, cache, script_text, strategy, cell, desktop, extra=(), name=None):
    work = tempfile.mkdtemp(prefix="view-bench-")
    script = os.path.join(work, "script.txt")
    stats = os.path.join(work, "stats.json")
    with open(script, "w") as f:
        f.write(script_text)
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1400x900x24", darkroom, "view", folder, "--renderer", "software",
           "--cell-size", str(cell), "--strategy", strategy, "--script", script, "--stats", stats,
           "--cache-dir", cache, "--desktop-thumbnails", desktop, *VIEW_ARGS, *extra]
    subprocess.run(cmd, check=True)
    with open(stats) as f:
        d = json.load(f)
    if KEEP and name:
        shutil.copy(stats, os.path.join(KEEP, name + ".json"))
    shutil.rmtree(work)
    return {k: v for k, v in d.items() if k not in ("frameRecord", "neverShownCells")}


def timer_floor(fps, seconds):
    """How late a bare sleep at `fps` wakes on this machine with nothing else running: each tick's lateness, ms.

    A frame whose thread wakes this late has lost that much of its budget before doing any work; on a virtual
    machine an idle virtual CPU must first be scheduled by the host, so the floor is the host's as much as ours."""
    period = 1 / fps
    late = []
    next_tick = time.monotonic()
    for _ in range(int(seconds * fps)):
        next_tick += period
        wait = next_tick - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        late.append(max(0.0, time.monotonic() - next_tick) * 1000)
    return late


def start_hogs(count):
    """`count` busy loops at niceness 10, each its own process (killed by stop_hogs)."""
    return [subprocess.Popen(["nice", "-n", "10", "python3", "-c", "while True: pass"]) for _ in range(count)]


def stop_hogs(hogs):
    for hog in hogs:
        hog.kill()
        hog.wait()


def floor_summary(late, budget_ms, work_ms):
    return {"ticks": len(late), "lateOver2ms": sum(1 for x in late if x > 2), "lateOver4ms": sum(1 for x in late if x > 4),
            "maxMs": round(max(late), 2),
            # ticks at which a frame doing the cold run's median work would have missed its vsync from lateness alone
            "missedAtMedianWork": sum(1 for x in late if x + work_ms > budget_ms)}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--darkroom", default=os.path.join(here, "..", ".build", "release", "darkroom"))
    ap.add_argument("--photos", default=os.path.join(here, "..", "..", "shared", "photos", "jpeg-12mp"))
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--cell", type=int, default=256)
    ap.add_argument("--speed", type=float, default=5000)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--long", type=float, default=0)
    ap.add_argument("--only", default="cold,warm,naive,desktop")
    ap.add_argument("--json")
    ap.add_argument("--keep")
    ap.add_argument("--exif-thumbnails", action="store_true")
    ap.add_argument("--view-args", default="", help="more `darkroom view` arguments for every run")
    ap.add_argument("--hogs", type=int, default=0, help="busy loops at niceness 10 during the runs (a slower machine)")
    ap.add_argument("--videos", type=float, default=0, help="the fraction of files that are videos in a second cold run")
    a = ap.parse_args()
    global KEEP
    KEEP = a.keep
    VIEW_ARGS.extend(a.view_args.split())
    if KEEP:
        os.makedirs(KEEP, exist_ok=True)
    if not shutil.which("xvfb-run"):
        raise SystemExit("xvfb-run not found: apt-get install xvfb xauth")
    sources = sorted(glob.glob(os.path.join(a.photos, "*.jpg")))
    if not sources:
        raise SystemExit(f"no photos in {a.photos}")
    work = tempfile.mkdtemp(prefix="view-bench-lib-")
    if a.exif_thumbnails:
        tool = os.path.join(here, "..", "scripts", "add-exif-thumbnail.py")
        os.makedirs(os.path.join(work, "sources"))
        made = []
        for source in sources:
            out = os.path.join(work, "sources", os.path.basename(source))
            subprocess.run(["python3", tool, source, out], check=True, stdout=subprocess.DEVNULL)
            made.append(out)
        sources = made
    folder = os.path.join(work, "photos")
    for i in range(a.count):
        d = os.path.join(folder, f"d{i // 100:04}")
        os.makedirs(d, exist_ok=True)
        os.link(sources[i % len(sources)], os.path.join(d, f"p{i:06}.jpg"))
    mixed = None
    if a.videos > 0:
        # The same folder with every n-th file a video (the clips bench/video-thumbs.py makes)
        import importlib.util
        spec = importlib.util.spec_from_file_location("video_thumbs", os.path.join(here, "video-thumbs.py"))
        video_thumbs = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(video_thumbs)
        clips = video_thumbs.make_inputs(sources[:2], os.path.join(here, "..", ".build-bench", "video"))
        videos = clips["h264-1080p"] + clips["hevc-1080p"]
        every = max(1, round(1 / a.videos))
        mixed = os.path.join(work, "mixed")
        for i in range(a.count):
            d = os.path.join(mixed, f"d{i // 100:04}")
            os.makedirs(d, exist_ok=True)
            if i % every == every - 1:
                clip = videos[(i // every) % len(videos)]
                os.link(clip, os.path.join(d, f"p{i:06}{os.path.splitext(clip)[1]}"))
            else:
                os.link(sources[i % len(sources)], os.path.join(d, f"p{i:06}.jpg"))
    cache = os.path.join(work, "cache")
    empty = os.path.join(work, "no-desktop-thumbnails")
    os.makedirs(empty)
    script = f"settle 30\nscroll {a.speed} {a.seconds}\nfling 9000\nsettle 30\n"
    runs = {}
    wanted = a.only.split(",")
    # The machine's decode rate for these photos at the cell size, every core busy
    rate_in = os.path.join(work, "rate-in")
    os.makedirs(rate_in)
    for i in range(40):
        os.link(sources[i % len(sources)], os.path.join(rate_in, f"r{i:03}.jpg"))
    floor = timer_floor(120, a.seconds + 2)
    hogs = start_hogs(a.hogs)
    try:
        t0 = time.monotonic()
        subprocess.run([*(["nice", "-n", "10"] if hogs else []), a.darkroom, "thumb",
                        *sorted(glob.glob(os.path.join(rate_in, "*.jpg"))), "--max-pixel-size", str(a.cell),
                        "--out", os.path.join(work, "rate-out")], check=True, stdout=subprocess.DEVNULL)
        decode_rate = 40 / (time.monotonic() - t0)
        if "cold" in wanted or "warm" in wanted:
            runs["pipeline_cold"] = run(
                a.darkroom, folder, cache, script, "pipeline", a.cell, empty, name="pipeline_cold")
        if mixed and "cold" in wanted:
            runs["pipeline_cold_videos"] = run(
                a.darkroom, mixed, os.path.join(work, "cache-videos"), script, "pipeline", a.cell, empty,
                name="pipeline_cold_videos")
        if "warm" in wanted:
            runs["pipeline_warm"] = run(
                a.darkroom, folder, cache, script, "pipeline", a.cell, empty, name="pipeline_warm")
        if "plain" in wanted:
            runs["pipeline_cold_no_embedded"] = run(
                a.darkroom, folder, os.path.join(work, "cache-plain"), script, "pipeline", a.cell, empty,
                extra=["--no-embedded-thumbnails"], name="pipeline_cold_no_embedded")
        if "naive" in wanted:
            runs["naive"] = run(a.darkroom, folder, cache, script, "naive", a.cell, empty, name="naive")
        if "desktop" in wanted:
            desktop = os.path.join(work, "desktop-thumbnails")
            t0 = time.monotonic()
            subprocess.run([a.darkroom, "thumbnail-cache", "fill", folder, "--cache-dir", desktop, "--size", "large"],
                           check=True, stdout=subprocess.DEVNULL)
            fill_seconds = time.monotonic() - t0
            # `large` thumbnails (256 px, 192 on the short side of a 4:3 photo) cover cells up to 192 px: 180 here,
            # measured cold with and without the desktop's thumbnails
            runs["pipeline_cold_180"] = run(
                a.darkroom, folder, os.path.join(work, "cache-180"), script, "pipeline", 180, empty,
                name="pipeline_cold_180")
            runs["pipeline_cold_180_desktop"] = run(
                a.darkroom, folder, os.path.join(work, "cache-desktop"), script, "pipeline", 180, desktop,
                name="pipeline_cold_180_desktop")
            runs["pipeline_cold_180_desktop"]["fillSeconds"] = fill_seconds
        if a.long > 0:
            long_cache = os.path.join(work, "cache-long")
            steps, t = [], 0.0
            leg = min(a.long, 0.9 * (a.count / max(1, (1280 - 16) // (a.cell + 6))) * (a.cell + 6) / a.speed)
            down = True
            while t < a.long:
                s = min(leg, a.long - t)
                steps.append(f"scroll {a.speed if down else -a.speed} {s}")
                t += s
                down = not down
            runs["pipeline_long"] = run(
                a.darkroom, folder, long_cache, "\n".join(steps) + "\n", "pipeline", a.cell, empty,
                name="pipeline_long")
    finally:
        stop_hogs(hogs)
        shutil.rmtree(work)
    out = {"count": a.count, "cell": a.cell, "speed": a.speed, "seconds": a.seconds, "runs": runs,
           "exifThumbnails": a.exif_thumbnails, "videos": a.videos, "decodeRate": round(decode_rate, 1), "hogs": a.hogs}
    cold = runs.get("pipeline_cold") or runs.get("pipeline_cold_no_embedded")
    out["timerFloor"] = floor_summary(floor, 1000 / 120, cold["frameMs"]["p50"] if cold else 0)
    text = json.dumps(out, indent=1, sort_keys=True)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
