#!/usr/bin/env python3
"""`darkroom thumbnail-cache fill` against gdk-pixbuf-thumbnailer (Debian's, one process per file as GNOME runs it),
side by side on the same files.

    bench/thumbnail-cache-vs-gdk.py [--darkroom PATH] [--count 1000] [--photos DIR...] [--size 256]

COUNT photos (the sample JPEGs, 2560x1600 and 4032x3024, cycled as links with distinct names) get a 256 px
("large") thumbnail each: Darkroom in one process over the folder (its own pool, 2 jobs on 2 cores), writing the
freedesktop cache itself; gdk-pixbuf-thumbnailer once per file, both one at a time and two at a time (xargs -P 2),
writing the PNG a file manager would then store. Afterwards 20 of Darkroom's cache entries are checked with GLib's
own lookup (`gio info -a thumbnail::is-valid`). Darkroom runs twice, decoding in its confined workers (the
default) and `--in-process`; gdk-pixbuf-thumbnailer runs bare and, as GNOME runs its thumbnailers, inside bubblewrap
(`bwrap` with the arguments of gnome-desktop's thumbnail script: /usr read-only, every namespace unshared, the input
bound read-only and the output folder writable; GNOME adds a seccomp filter, which costs nothing measurable).
Prints one JSON object.
"""
import argparse, glob, json, os, shutil, subprocess, sys, tempfile, time


def gdk_command(f, out, size, sandboxed):
    """gdk-pixbuf-thumbnailer writing OUT from F; sandboxed, inside bwrap as gnome-desktop's thumbnail script
    (gnome-desktop-thumbnail-script.c) runs it: /usr and the loader cache read-only, every namespace unshared, the
    input bound read-only and the output folder writable."""
    thumbnailer = ["gdk-pixbuf-thumbnailer", "-s", str(size)]
    if not sandboxed:
        return thumbnailer + [f, out]
    command = ["bwrap", "--ro-bind", "/usr", "/usr", "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
               "--ro-bind-try", "/etc/fonts", "/etc/fonts"]
    for d in ("lib", "lib64", "bin", "sbin"):
        if os.path.islink("/" + d):
            command += ["--symlink", os.readlink("/" + d), "/" + d]
    return command + ["--proc", "/proc", "--dev", "/dev", "--chdir", "/", "--setenv", "GIO_USE_VFS", "local",
                      "--unshare-all", "--die-with-parent", "--ro-bind", os.path.realpath(f), "/tmp/input",
                      "--bind", os.path.dirname(out), "/tmp/output"] + thumbnailer + [
                      "/tmp/input", "/tmp/output/" + os.path.basename(out)]


def one_by_one(argv):
    """`--one-by-one [--bwrap] --size N OUT FILE...`: gdk-pixbuf-thumbnailer on each file in turn (one of the two
    processes of the two-at-a-time run)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--bwrap", action="store_true")
    ap.add_argument("--size", type=int)
    ap.add_argument("out")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args(argv)
    for f in a.files:
        out = os.path.join(a.out, os.path.basename(f) + ".png")
        subprocess.run(gdk_command(f, out, a.size, a.bwrap), check=True, stderr=subprocess.DEVNULL)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--one-by-one":
        return one_by_one(sys.argv[2:])
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

    def fill(name, extra):
        cache = os.path.join(work, name, "thumbnails")
        start = time.perf_counter()
        out = subprocess.run([a.darkroom, "thumbnail-cache", "fill", photos, "--cache-dir", cache, "--json"] + extra,
                             check=True, capture_output=True, text=True).stdout
        return time.perf_counter() - start, json.loads(out), cache

    darkroom, summary, cache = fill("cache", [])
    darkroom_in_process, _, _ = fill("cache-in-process", ["--in-process"])

    gdk_out = os.path.join(work, "gdk")
    os.makedirs(gdk_out)

    def gdk(sandboxed):
        start = time.perf_counter()
        for i, f in enumerate(files):
            out = os.path.join(gdk_out, f"{i}.png")
            subprocess.run(gdk_command(f, out, a.size, sandboxed), check=True, stderr=subprocess.DEVNULL)
        serial = time.perf_counter() - start
        start = time.perf_counter()
        half = [files[0::2], files[1::2]]
        procs = [subprocess.Popen([sys.executable, __file__, "--one-by-one", "--size", str(a.size)] +
                                  (["--bwrap"] if sandboxed else []) + [gdk_out] + part) for part in half]
        for p in procs:
            if p.wait() != 0:
                raise SystemExit("gdk-pixbuf-thumbnailer failed")
        return serial, time.perf_counter() - start

    gdk_serial, gdk_parallel = gdk(False)
    has_bwrap = shutil.which("bwrap") is not None
    bwrap_serial, bwrap_parallel = gdk(True) if has_bwrap else (None, None)

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
        "darkroom_in_process_files_per_s": round(a.count / darkroom_in_process, 1),
        "workers_vs_in_process": round(darkroom_in_process / darkroom, 3),
        "gdk_bwrap_serial_files_per_s": bwrap_serial and round(a.count / bwrap_serial, 1),
        "gdk_bwrap_2proc_files_per_s": bwrap_parallel and round(a.count / bwrap_parallel, 1),
        "ratio_vs_gdk_bwrap_serial": bwrap_serial and round(bwrap_serial / darkroom, 2),
        "ratio_vs_gdk_bwrap_2proc": bwrap_parallel and round(bwrap_parallel / darkroom, 2),
        "glib_valid": f"{valid} of {len(checked)}",
    }))


if __name__ == "__main__":
    main()
