#!/usr/bin/env python3
"""`darkroom thumbnail-cache fill` against gdk-pixbuf-thumbnailer (Debian's, one process per file as GNOME runs it),
side by side on the same files.

    bench/thumbnail-cache-vs-gdk.py [--darkroom PATH] [--count 1000] [--photos DIR...] [--size 256]

COUNT photos (the sample JPEGs, 2560x1600 and 4032x3024, cycled as links with distinct names) get a 256 px
("large") thumbnail each: Darkroom in one process over the folder (its own pool, 2 jobs on 2 cores), writing the
freedesktop cache itself; gdk-pixbuf-thumbnailer once per file, both one at a time and two at a time (xargs -P 2),
writing the PNG a file manager would then store. Afterwards 20 of Darkroom's cache entries are checked with GLib's
own lookup (`gio info -a thumbnail::is-valid`). Prints one JSON object.
"""
import argparse, glob, json, os, shutil, subprocess, tempfile, time


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--darkroom", default=os.path.join(here, "..", ".build", "release", "darkroom"))
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--photos", nargs="*", default=[os.path.join(here, "..", "..", "shared", "photos", d)
                                                    for d in ("jpeg", "jpeg-12mp")])
    ap.add_argument("--size", type=int, default=256)
    a = ap.parse_args()
    if not shutil.which("gdk-pixbuf-thumbnailer"):
        raise SystemExit("gdk-pixbuf-thumbnailer not found: apt-get install libgdk-pixbuf2.0-bin")
    sources = sorted(p for d in a.photos for p in glob.glob(os.path.join(d, "*.jpg")))
    work = tempfile.mkdtemp(prefix="thumbcache-bench-")
    photos = os.path.join(work, "photos")
    os.makedirs(photos)
    files = []
    for i in range(a.count):
        link = os.path.join(photos, f"{i:05d}-{os.path.basename(sources[i % len(sources)])}")
        os.symlink(os.path.abspath(sources[i % len(sources)]), link)
        files.append(link)

    cache = os.path.join(work, "cache", "thumbnails")
    start = time.perf_counter()
    out = subprocess.run([a.darkroom, "thumbnail-cache", "fill", photos, "--cache-dir", cache, "--json"],
                         check=True, capture_output=True, text=True).stdout
    darkroom = time.perf_counter() - start
    summary = json.loads(out)

    gdk_out = os.path.join(work, "gdk")
    os.makedirs(gdk_out)
    start = time.perf_counter()
    for i, f in enumerate(files):
        subprocess.run(["gdk-pixbuf-thumbnailer", "-s", str(a.size), f, os.path.join(gdk_out, f"{i}.png")],
                       check=True, stderr=subprocess.DEVNULL)
    gdk_serial = time.perf_counter() - start
    start = time.perf_counter()
    listing = "\n".join(files) + "\n"
    subprocess.run(["sh", "-c", f"xargs -P 2 -I F sh -c 'gdk-pixbuf-thumbnailer -s {a.size} \"F\" \"{gdk_out}/$(basename \"F\").png\"'"],
                   input=listing, text=True, check=True, stderr=subprocess.DEVNULL)
    gdk_parallel = time.perf_counter() - start

    valid = 0
    checked = files[:: max(1, len(files) // 20)][:20]
    for f in checked:
        info = subprocess.run(["gio", "info", "-a", "thumbnail::is-valid", f], capture_output=True, text=True,
                              env=dict(os.environ, XDG_CACHE_HOME=os.path.dirname(cache))).stdout
        valid += "thumbnail::is-valid: TRUE" in info
    shutil.rmtree(work)
    print(json.dumps({
        "benchmark": "thumbnail-cache-vs-gdk", "files": a.count, "size": a.size,
        "darkroom_s": round(darkroom, 2), "darkroom_files_per_s": round(a.count / darkroom, 1),
        "darkroom_rendered": summary["rendered"], "darkroom_failed": summary["failed"],
        "gdk_serial_s": round(gdk_serial, 2), "gdk_serial_files_per_s": round(a.count / gdk_serial, 1),
        "gdk_2proc_s": round(gdk_parallel, 2), "gdk_2proc_files_per_s": round(a.count / gdk_parallel, 1),
        "ratio_vs_gdk_serial": round(gdk_serial / darkroom, 2), "ratio_vs_gdk_2proc": round(gdk_parallel / darkroom, 2),
        "glib_valid": f"{valid} of {len(checked)}",
    }))


if __name__ == "__main__":
    main()
