#!/usr/bin/env python3
"""Draws `darkroom view --stats` frame records as one SVG: each run's drawing-thread time per frame over the run
(budget line at 1/fps), and under it the cells drawn as placeholders per frame.

    bench/frame-chart.py OUT.svg LABEL=stats.json [LABEL=stats.json ...] [--seconds 22]

`bench/view-scroll.py --keep DIR` leaves the stats files to chart.
"""
import json, sys

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    seconds = None
    if "--seconds" in sys.argv:
        seconds = float(sys.argv[sys.argv.index("--seconds") + 1])
        args = [a for a in args if a != sys.argv[sys.argv.index("--seconds") + 1]]
    out, runs = args[0], [a.split("=", 1) for a in args[1:]]
    data = [(label, json.load(open(path))) for label, path in runs]
    width, top_h, bottom_h, left, pad = 1040, 300, 120, 60, 30
    height = top_h + bottom_h + 3 * pad + 20 * len(data)
    span = seconds or max(d["frameRecord"][-1]["t"] for _, d in data)
    max_ms = 20.0
    budget = data[0][1]["budgetMs"]

    def x(t):
        return left + (width - left - pad) * min(t, span) / span

    def y_ms(ms):
        return pad + top_h * (1 - min(ms, max_ms) / max_ms)

    max_ph = max(1, max(f["placeholders"] for _, d in data for f in d["frameRecord"]))

    def y_ph(n):
        return 2 * pad + top_h + bottom_h * (1 - n / max_ph)

    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="12"><rect width="100%" height="100%" fill="white"/>']
    svg.append(f'<text x="{left}" y="18">drawing-thread time per frame, ms (clipped at {max_ms:.0f}); dashed: '
               f'the {budget:.2f} ms budget</text>')
    for ms in range(0, int(max_ms) + 1, 4):
        svg.append(f'<line x1="{left}" x2="{width - pad}" y1="{y_ms(ms)}" y2="{y_ms(ms)}" stroke="#eee"/>')
        svg.append(f'<text x="{left - 8}" y="{y_ms(ms) + 4}" text-anchor="end">{ms}</text>')
    svg.append(f'<line x1="{left}" x2="{width - pad}" y1="{y_ms(budget)}" y2="{y_ms(budget)}" stroke="black" '
               f'stroke-dasharray="6,4"/>')
    svg.append(f'<text x="{left}" y="{2 * pad + top_h - 6}">cells drawn as placeholders per frame '
               f'(max {max_ph})</text>')
    for i, (label, d) in enumerate(data):
        c = COLORS[i % len(COLORS)]
        frames = [f for f in d["frameRecord"][1:] if not f.get("screenshot")]
        pts = " ".join(f'{x(f["t"]):.1f},{y_ms(f["ms"]):.1f}' for f in frames if f["t"] <= span)
        svg.append(f'<polyline fill="none" stroke="{c}" stroke-width="1" points="{pts}"/>')
        pts = " ".join(f'{x(f["t"]):.1f},{y_ph(f["placeholders"]):.1f}' for f in frames if f["t"] <= span)
        svg.append(f'<polyline fill="none" stroke="{c}" stroke-width="1" points="{pts}"/>')
        over = d["overBudget"]
        ly = 3 * pad + top_h + bottom_h + 20 * i
        svg.append(f'<rect x="{left}" y="{ly - 10}" width="12" height="12" fill="{c}"/>')
        svg.append(f'<text x="{left + 18}" y="{ly}">{label}: {d["frames"]} frames, {over} over budget, p99 '
                   f'{d["frameMs"]["p99"]:.1f} ms, max {d["frameMs"]["max"]:.1f} ms; placeholders max '
                   f'{d["placeholderMs"]["max"]:.0f} ms, never shown {d["cellsNeverShown"]}</text>')
    for t in range(0, int(span) + 1, 5):
        svg.append(f'<text x="{x(t)}" y="{2 * pad + top_h + bottom_h + 14}" text-anchor="middle">{t} s</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg))


if __name__ == "__main__":
    main()
