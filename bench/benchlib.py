"""What the thumbnail benchmarks share: timing a command with its peak memory, inputs cycled as hard links, vips's
thumbnails run the same way everywhere, and the machine's yardstick. Imported by the scripts beside it."""
import json
import os
import subprocess


def timed(cmd, shell=False, cpu=False):
    """Runs `cmd` (a list, or a shell line with shell=True): (wall seconds, peak RSS MiB) from /usr/bin/time, and with
    cpu=True the CPU seconds (user + system, all threads) third: the work done, however its threads were scheduled."""
    p = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M %U %S"] + (["sh", "-c", cmd] if shell else cmd),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, VIPS_WARNING="0"))
    if p.returncode != 0:
        raise SystemExit(f"failed: {cmd}\n{p.stderr[-2000:]}")
    line = [l for l in p.stderr.splitlines() if l.startswith("TIME ")][-1].split()
    wall, rss = float(line[1]), int(line[2]) / 1024
    return (wall, rss, float(line[3]) + float(line[4])) if cpu else (wall, rss)


def linked(inputs, count, work, ext):
    """`count` hard links in `work` to `inputs`, cycled: many files without copying them."""
    files = []
    for i in range(count):
        link = os.path.join(work, f"in{i:03d}.{ext}")
        os.link(inputs[i % len(inputs)], link)
        files.append(link)
    return files


def vips_thumbnails(files, out, side=256):
    """vipsthumbnail of `files` to `side` px JPEGs in `out`, two processes: (seconds, peak RSS MiB)."""
    return timed(f"printf '%s\\n' {' '.join(files)} | xargs -P 2 -n {max(1, len(files) // 2)} "
                 f"vipsthumbnail -s {side} -o {out}/%s.jpg[Q=85]", shell=True)


def yardstick(darkroom):
    """This machine's speed: a 12 MP JPEG → 256 px, ms (`darkroom bench decode`)."""
    report = json.loads(subprocess.run([darkroom, "bench", "decode", "--json", "--iterations", "5"],
                                       check=True, capture_output=True, text=True).stdout)
    return report.get("jpeg_thumb_ms")


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def thumbnail_arguments(rounds=5, count=8, extra=()):
    """The options every thumbnail benchmark takes: --darkroom, --photos (12 MP JPEGs), --rounds, --count; and the
    integer options a benchmark adds, as (flag, default) pairs in `extra`."""
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--darkroom", default=os.path.join(ROOT, ".build", "release", "darkroom"))
    parser.add_argument("--photos", default=os.path.join(ROOT, "..", "shared", "photos", "jpeg-12mp"))
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--count", type=int, default=count)
    for flag, default in extra:
        parser.add_argument(flag, type=int, default=default)
    return parser.parse_args()


def alternate(rounds, kinds, run, work):
    """Runs each of `kinds` in turn for `rounds` rounds, so drift on a shared machine touches all alike: `run(kind,
    out)` writes into a fresh folder in `work` and answers (seconds, peak RSS MiB). Returns the seconds per kind, the
    peak RSS per kind, and the output bytes per kind of the last round."""
    import shutil
    import tempfile
    runs = {kind: [] for kind in kinds}
    rss = {kind: 0 for kind in kinds}
    size = {}
    for _ in range(rounds):
        for kind in kinds:
            out = tempfile.mkdtemp(dir=work)
            seconds, mib = run(kind, out)
            runs[kind].append(seconds)
            rss[kind] = max(rss[kind], mib)
            size[kind] = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
            shutil.rmtree(out)
    return runs, rss, size
