#!/usr/bin/env python3
"""`darkroom thumbnaild` against tumbler's `tumblerd` (Debian's, with its own plugins), each on a private session
bus of its own in turn, asked the same things by the same client (scripts/thumbnail-client.py, jeepney).

    bench/thumbnaild-vs-tumbler.py [--darkroom PATH] [--count 1000] [--trials 5] [--flavor normal]

COUNT files, a fifth each of JPEG, HEIC, PNG, WebP and camera RAW (DNGs with an embedded 1024 px preview, as
cameras write them, made by scripts/make-dng.py), the shared sample photos cycled as links with distinct names.
For each service, on an empty cache:
- per format: the format's files queued in one `Queue` call (scheduler "default", each URI with its MIME type),
  the time until its `Finished`, and how many `Ready` and `Error` signals came; the race's ratio is over the formats
  both read (tumbler has no camera RAW plugin: it answers those with errors at once);
- a foreground request queued 0.2 s after COUNT background ones (a file manager opening a big folder, then the user
  scrolling): the time from its `Queue` call to its `Ready`, TRIALS times on fresh caches, median;
- idle RSS (1 s after the start, before any call) and peak RSS (the service's own high-water mark, plus the sum of
  its decode workers' for Darkroom, read before it stops);
- GLib's verdict (`gio info -a thumbnail::is-valid`) on 10 thumbnails of each format.
tumbler's pixbuf plugin reads WebP and HEIC only through gdk-pixbuf loaders (webp-pixbuf-loader, heif-gdk-pixbuf);
they are installed for the run when missing, so both services race on every format they can read. Prints one JSON
object.
"""
import argparse, glob, json, os, shutil, signal, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHOTOS = os.path.join(ROOT, "..", "shared", "photos")
CLIENT = os.path.join(ROOT, "scripts", "thumbnail-client.py")
TUMBLERD = "/usr/lib/x86_64-linux-gnu/tumbler-1/tumblerd"
KINDS = {"jpeg": "image/jpeg", "heic": "image/heic", "png": "image/png", "webp": "image/webp", "raw": "image/x-adobe-dng"}


def uri(path):
    from urllib.parse import quote
    return "file://" + quote(path, safe="/!$&'()*+,-.:=@_~")


def samples(work, count):
    """COUNT files, a fifth of each kind, links to the samples with distinct names: {kind: [paths]}."""
    sources = {
        "jpeg": sorted(glob.glob(os.path.join(PHOTOS, "jpeg", "*.jpg"))),
        "heic": sorted(glob.glob(os.path.join(PHOTOS, "heic", "*.heic"))),
        "png": sorted(glob.glob(os.path.join(PHOTOS, "png", "*.png"))),
        "webp": sorted(glob.glob(os.path.join(PHOTOS, "webp", "*.webp"))),
    }
    dngs = []
    for i, photo in enumerate(sources["jpeg"][:4]):
        dng = os.path.join(work, f"camera{i}.dng")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make-dng.py"), photo, dng, "--preview", "1024"],
                       check=True, capture_output=True)
        dngs.append(dng)
    sources["raw"] = dngs
    files = {}
    for kind, inputs in sources.items():
        folder = os.path.join(work, kind)
        os.makedirs(folder)
        files[kind] = []
        for i in range(count // len(sources)):
            source = os.path.realpath(inputs[i % len(inputs)])
            link = os.path.join(folder, f"{kind}{i:04d}{os.path.splitext(source)[1]}")
            try:
                os.link(source, link)
            except OSError:
                os.symlink(source, link)
            files[kind].append(link)
    return files


class Bus:
    """A private session bus (dbus-daemon, forked, no signal blocked)."""

    def __init__(self, folder):
        os.makedirs(folder, exist_ok=True)
        conf = os.path.join(folder, "bus.conf")
        with open(conf, "w") as f:
            f.write(f"""<busconfig><type>session</type><listen>unix:path={folder}/socket</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
<allow own="*"/></policy></busconfig>""")
        out = subprocess.run(["dbus-daemon", "--fork", "--print-address=1", "--print-pid=1", "--config-file=" + conf],
                             check=True, capture_output=True, text=True).stdout.split()
        self.address, self.pid = out[0], int(out[1])

    def stop(self):
        os.kill(self.pid, signal.SIGKILL)


def client(address, calls, timeout=600):
    spec = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump({"calls": calls, "timeout": timeout}, spec)
    spec.close()
    out = subprocess.run([sys.executable, CLIENT, address, spec.name], check=True, capture_output=True, text=True)
    os.unlink(spec.name)
    return json.loads(out.stdout)


def queue(paths, scheduler="default", flavor="normal"):
    """A Queue call for `paths`, each with its MIME type (tumbler picks its plugin by it)."""
    return {"method": "Queue", "signature": "asasssu",
            "args": [[uri(p) for p in paths], [KINDS[os.path.basename(os.path.dirname(p))] for p in paths], flavor,
                     scheduler, 0]}


def rss(pid):
    """(current, peak) RSS of a process, MiB."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def descendants(pid):
    kids = []
    for task in glob.glob(f"/proc/{pid}/task/*/children"):
        with open(task) as f:
            for child in f.read().split():
                kids.append(int(child))
                kids += descendants(int(child))
    return kids


def run_service(name, command, files, cache_home, trials, flavor):
    bus = Bus(os.path.join(cache_home, "bus"))
    env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=bus.address, XDG_CACHE_HOME=cache_home)
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:
        owner = subprocess.run(["gdbus", "call", "--address", bus.address, "--dest", "org.freedesktop.DBus",
                                "--object-path", "/org/freedesktop/DBus", "--method",
                                "org.freedesktop.DBus.NameHasOwner", "org.freedesktop.thumbnails.Thumbnailer1"],
                               capture_output=True, text=True).stdout
        if "true" in owner:
            break
        time.sleep(0.1)
    time.sleep(1)
    idle = rss(process.pid)[0]
    result = {"idle_rss_mib": idle, "formats": {}}
    thumbnails = os.path.join(cache_home, "thumbnails")
    for kind, paths in files.items():
        start = time.monotonic()
        session = client(bus.address, [queue(paths, flavor=flavor)])
        wall = time.monotonic() - start
        ready = sum(len(s.get("uris", [])) for s in session["signals"] if s["signal"] == "Ready")
        errors = sum(len(s.get("uris", [])) for s in session["signals"] if s["signal"] == "Error")
        valid = 0
        for path in paths[:10]:
            info = subprocess.run(["gio", "info", "-a", "thumbnail::is-valid", path], env=env,
                                  capture_output=True, text=True).stdout
            valid += "thumbnail::is-valid: TRUE" in info
        result["formats"][kind] = {"files": len(paths), "seconds": round(wall, 3), "ready": ready, "errors": errors,
                                   "files_per_second": round(len(paths) / wall, 1), "glib_valid_of_10": valid}
    result["all_seconds"] = round(sum(f["seconds"] for f in result["formats"].values()), 3)
    # A foreground request behind a full background queue
    everything = [p for paths in files.values() for p in paths]
    latencies = []
    for trial in range(trials):
        shutil.rmtree(thumbnails, ignore_errors=True)
        front = files["jpeg"][trial]
        back = [p for p in everything if p != front]
        session = client(bus.address, [queue(back, scheduler="background", flavor=flavor), {"sleep": 0.2},
                                       queue([front], scheduler="foreground", flavor=flavor), {"sleep": 2.0},
                                       {"method": "Dequeue", "signature": "u", "args": [{"handle_of": 0}]}], timeout=60)
        handle = session["replies"][2]["reply"][0]
        sent = session["replies"][2]["t"]
        ready = [s["t"] for s in session["signals"] if s["handle"] == handle and s["signal"] == "Ready"]
        busy = sum(len(s.get("uris", [])) for s in session["signals"] if s["handle"] == session["replies"][0]["reply"][0]
                   and s["signal"] == "Ready")
        latencies.append((min(ready) - sent) * 1000 if ready else float("inf"))
        result.setdefault("background_ready_in_trial", []).append(busy)
    result["foreground_ms"] = [round(x, 1) for x in latencies]
    result["foreground_median_ms"] = round(statistics.median(latencies), 1)
    peak = rss(process.pid)[1]
    workers = sum(rss(child)[1] for child in descendants(process.pid))
    result["peak_rss_mib"] = round(peak, 1)
    result["workers_peak_rss_mib"] = round(workers, 1)
    process.terminate()
    process.wait(timeout=30)
    bus.stop()
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--darkroom", default=os.path.join(ROOT, ".build", "release", "darkroom"))
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--flavor", default="normal")
    args = parser.parse_args()
    missing = [p for p in ("tumbler", "webp-pixbuf-loader", "heif-gdk-pixbuf")
               if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if missing:
        subprocess.run([os.path.join(ROOT, "scripts", "install-deps.sh")] + missing, check=True)
    work = tempfile.mkdtemp(prefix="thumbnaild-bench-")
    try:
        files = samples(work, args.count)
        yardstick = json.loads(subprocess.run([args.darkroom, "bench", "decode", "--json", "--iterations", "5"],
                                              check=True, capture_output=True, text=True).stdout).get("jpeg_thumb_ms")
        report = {"count": sum(len(v) for v in files.values()), "flavor": args.flavor, "yardstick_jpeg_thumb_ms": yardstick}
        report["tumblerd"] = run_service("tumblerd", [TUMBLERD], files, os.path.join(work, "tumbler"), args.trials,
                                         args.flavor)
        report["darkroom"] = run_service("darkroom", [args.darkroom, "thumbnaild", "--idle-timeout", "0"], files,
                                         os.path.join(work, "darkroom"), args.trials, args.flavor)
        t, d = report["tumblerd"], report["darkroom"]
        # The race counts the formats both services read (tumbler answers RAW with errors at once)
        shared = [k for k in d["formats"] if t["formats"][k]["ready"] == t["formats"][k]["files"]]
        report["raced_formats"] = shared
        report["speedup_raced"] = round(sum(t["formats"][k]["seconds"] for k in shared)
                                        / sum(d["formats"][k]["seconds"] for k in shared), 2)
        report["speedup_per_format"] = {k: round(t["formats"][k]["seconds"] / d["formats"][k]["seconds"], 2)
                                        for k in shared}
        print(json.dumps(report, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
