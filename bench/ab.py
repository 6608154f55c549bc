#!/usr/bin/env python3
"""Two builds of `darkroom`, side by side: each `darkroom bench NAME --json` run for one build then the other, ROUNDS
times, so both meet the same machine load; prints, per figure, the median of each build and their ratio.

    bench/ab.py --before /tmp/darkroom-before --after .build/release/darkroom [--rounds 2] \
        [--bench decode --bench cache ...] [--json out.json] [-- extra args for every bench]

Figures are the numeric leaves of each bench's JSON (nested keys joined with '.'); lists of per-file records are
skipped (their medians are in the top-level figures). A ratio after/before near 1 means unchanged; whether higher is
better depends on the figure (times: lower; ops/s and speedups: higher).
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

DEFAULT_BENCHES = ["decode", "cache", "table", "pipeline"]
EXTRA = {
    # Shorter runs where the defaults take minutes; the same for both builds.
    "cache": ["--memory-ops", "200000", "--repeats", "3"],
    "table": ["--entries", "2000", "--files", "300", "--gets", "100000", "--decodes", "100", "--batches", "3"],
}


def leaves(value, prefix=""):
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield prefix, float(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, f"{prefix}.{k}" if prefix else k)


def run(binary, bench, extra):
    started = time.time()
    out = subprocess.run([binary, "bench", bench, "--json", *EXTRA.get(bench, []), *extra],
                         capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        sys.exit(f"{binary} bench {bench} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    text = out.stdout
    start = text.find("{")
    data = json.loads(text[start:])
    return dict(leaves(data)), time.time() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--bench", action="append")
    parser.add_argument("--json")
    parser.add_argument("extra", nargs="*")
    args = parser.parse_args()
    benches = args.bench or DEFAULT_BENCHES
    results = {}
    for bench in benches:
        runs = {"before": [], "after": []}
        for r in range(args.rounds):
            for side in (["before", "after"] if r % 2 == 0 else ["after", "before"]):
                figures, seconds = run(getattr(args, side), bench, args.extra)
                runs[side].append(figures)
                print(f"{bench} round {r + 1} {side}: {seconds:.0f} s", file=sys.stderr)
        keys = sorted(set(runs["before"][0]) & set(runs["after"][0]))
        rows = []
        for key in keys:
            b = statistics.median(f[key] for f in runs["before"] if key in f)
            a = statistics.median(f[key] for f in runs["after"] if key in f)
            rows.append({"figure": key, "before": b, "after": a, "ratio": (a / b) if b else None})
        results[bench] = rows
        print(f"\n### bench {bench} (medians of {args.rounds} runs each, interleaved)\n")
        print("| figure | before | after | after ÷ before |\n| --- | ---: | ---: | ---: |")
        for row in rows:
            ratio = f"{row['ratio']:.3f}" if row["ratio"] is not None else "—"
            print(f"| {row['figure']} | {row['before']:.4g} | {row['after']:.4g} | {ratio} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
