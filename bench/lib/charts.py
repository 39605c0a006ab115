"""Line charts as standalone SVG, standard library only.

    svg = line_chart("venues: throughput", "concurrent users", "requests/s",
                     [{"name": "Grafton", "points": [(1, 900), (10, 4000)]}, …])

x is on a log scale (concurrency 1…1000) unless log_x=False; y is linear from
0, or log (log_y=True, useful for latencies spanning decades).  A point with
y None (or ≤ 0 on a log axis) breaks the line.  A series may set
"dashed": True (e.g. a reference such as pgbench's ceiling).
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

PALETTE = ["#1f6fb4", "#d9482b", "#2e9e44", "#8a5cc2", "#c88a00", "#555555"]
W, H = 680, 380
LEFT, RIGHT, TOP, BOTTOM = 64, 170, 36, 48


def fmt(v: float) -> str:
    """Short tick label: 0.5, 12, 250, 1.5k, 20k."""
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v / 1000:.3g}k"
    return f"{v:.3g}"


def nice_ticks(hi: float, n: int = 5) -> list[float]:
    """0 and multiples of a 1/2/5×10^k step up to at least hi."""
    if hi <= 0:
        return [0.0, 1.0]
    raw = hi / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    count = math.ceil(hi / step - 1e-9)
    return [i * step for i in range(count + 1)]


def log_ticks(lo: float, hi: float) -> list[float]:
    """Decades covering [lo, hi]; 2 and 5 multiples too when that is only a decade or two."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if b == a:
        b += 1
    mults = (1,) if b - a > 2 else (1, 2, 5)
    ticks = [m * 10 ** e for e in range(a, b + 1) for m in mults]
    return [t for t in ticks if 10 ** a <= t <= 10 ** b]


class _Axis:
    def __init__(self, lo: float, hi: float, a: float, b: float, log: bool):
        self.log, self.a, self.b = log, a, b
        f = math.log10 if log else float
        self.lo, self.hi = f(lo), f(hi)
        if self.hi == self.lo:
            self.lo, self.hi = self.lo - 1, self.hi + 1

    def __call__(self, v: float) -> float:
        v = math.log10(v) if self.log else v
        return self.a + (v - self.lo) / (self.hi - self.lo) * (self.b - self.a)


def _usable(y, log: bool) -> bool:
    return y is not None and not (isinstance(y, float) and math.isnan(y)) and (y > 0 or not log)


def line_chart(title: str, x_label: str, y_label: str, series: list[dict],
               *, log_x: bool = True, log_y: bool = False) -> str:
    pts = [(x, y) for s in series for x, y in s["points"] if _usable(y, log_y) and (x > 0 or not log_x)]
    xs = sorted({x for x, _ in pts}) or [1, 10]
    ys = [y for _, y in pts] or [1.0]
    px0, px1, py0, py1 = LEFT, W - RIGHT, H - BOTTOM, TOP
    if log_y:
        yt = log_ticks(min(ys), max(ys))
    else:
        yt = nice_ticks(max(ys))
    xt = xs if log_x else nice_ticks(xs[-1])
    sx = _Axis(xt[0], xt[-1], px0 + 10, px1 - 10, log_x)
    sy = _Axis(yt[0], yt[-1], py0, py1, log_y)

    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
        'font-family="Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<text x="{(px0 + px1) / 2:.1f}" y="20" text-anchor="middle" font-size="14" '
        f'font-weight="bold">{escape(title)}</text>',
    ]
    for t in yt:
        y = sy(t)
        out.append(f'<line x1="{px0}" y1="{y:.1f}" x2="{px1}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        out.append(f'<text x="{px0 - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt(t)}</text>')
    for t in xt:
        x = sx(t)
        out.append(f'<line x1="{x:.1f}" y1="{py0}" x2="{x:.1f}" y2="{py0 + 5}" stroke="#333"/>')
        out.append(f'<text x="{x:.1f}" y="{py0 + 18}" text-anchor="middle">{fmt(t)}</text>')
    out.append(f'<path d="M{px0},{py1} V{py0} H{px1}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{(px0 + px1) / 2:.1f}" y="{H - 10}" text-anchor="middle">'
               f'{escape(x_label)}{" (log scale)" if log_x else ""}</text>')
    out.append(f'<text transform="translate(16,{(py0 + py1) / 2:.1f}) rotate(-90)" text-anchor="middle">'
               f'{escape(y_label)}{" (log scale)" if log_y else ""}</text>')

    for i, s in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        dash = ' stroke-dasharray="6 4"' if s.get("dashed") else ""
        segments, current = [], []
        for x, y in sorted(s["points"], key=lambda p: p[0]):
            if _usable(y, log_y) and (x > 0 or not log_x):
                current.append((sx(x), sy(y)))
            elif current:
                segments.append(current)
                current = []
        if current:
            segments.append(current)
        for seg in segments:
            d = " ".join(f"{x:.1f},{y:.1f}" for x, y in seg)
            out.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
            out.extend(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"/>' for x, y in seg)
        ly = TOP + 10 + 20 * i
        out.append(f'<line x1="{px1 + 14}" y1="{ly}" x2="{px1 + 38}" y2="{ly}" stroke="{color}" '
                   f'stroke-width="2"{dash}/>')
        out.append(f'<text x="{px1 + 44}" y="{ly + 4}">{escape(s["name"])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
