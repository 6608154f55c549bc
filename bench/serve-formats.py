#!/usr/bin/env python3
"""darkroom serve: uncached thumbnail rate by output format, side by side in one run.

The uncached workload of bench/serve-vs-thumbor.py (every request a new cache key: 12 MP photo n mod 5 fitted
inside 256 x (300 + n div 5), wrk -t2 -c4, --max-renders 2), once per output format (default jpeg, webp,
avif), alternating formats for --rounds rounds against one server, so the only difference is the encoder.
Usage: bench/serve-formats.py [--darkroom PATH] [--photos DIR] [--duration 10] [--rounds 2] [--formats jpeg,webp,avif]
Prints one JSON object. Needs wrk (installed from Debian when missing).
"""
import argparse, importlib.util, json, os, statistics, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("svt", os.path.join(HERE, "serve-vs-thumbor.py"))
svt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(svt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--darkroom", default=os.path.join(HERE, "..", ".build", "release", "darkroom"))
    ap.add_argument("--photos", default=os.path.join(HERE, "..", "..", "shared", "photos"))
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--formats", default="jpeg,webp,avif")
    a = ap.parse_args()
    svt.ensure_wrk()
    photos = sorted(os.path.join("jpeg-12mp", f) for f in os.listdir(os.path.join(a.photos, "jpeg-12mp"))
                    if f.endswith(".jpg"))
    work = tempfile.mkdtemp(prefix="darkroom-formats-")
    server = svt.start_darkroom(os.path.abspath(a.darkroom), a.photos, work)
    runs = {f: [] for f in a.formats.split(",")}
    base = 0
    try:
        for _ in range(a.rounds):
            for fmt in runs:
                template = f"/v1/thumb?src={{src}}&w=256&h={{h}}&fit=contain&format={fmt}&q=82"
                first = template.replace("{src}", photos[base % len(photos)]).replace("{h}", str(300 + base // len(photos)))
                r = svt.run_wrk(server, 4, a.duration, os.path.join(HERE, "wrk-uncached.lua"), first,
                                [base, svt.THREADS, 300, template] + photos)
                base = max(base + r["requests"] + 4, (r["max_n"] or 0) + 1)
                runs[fmt].append({k: r[k] for k in ("rps_2xx", "non_2xx", "latency_ms", "mib_per_s", "peak_rss_mib")})
    finally:
        server.stop()
    summary = {"benchmark": "serve-formats", "duration_s": a.duration, "rounds": a.rounds, "runs": runs}
    for fmt, rs in runs.items():
        summary[f"{fmt}_rps_median"] = statistics.median(r["rps_2xx"] for r in rs)
        summary[f"{fmt}_kib_per_response"] = round(statistics.median(
            r["mib_per_s"] * 1024 / r["rps_2xx"] for r in rs if r["rps_2xx"]), 1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
