"""Formatting shared by the report's sections: names, numbers, ratios and tables (pure)."""

from __future__ import annotations

import re

NUMERIC = re.compile(r"^[-+]?[\d,.]+(×| MB| ms|%)?$")
LABELS = {"grafton": "Grafton PG", "postgraphile": "PostGraphile v4", "postgraphile5": "PostGraphile v5",
          "sqlite": "Grafton SQLite",
          "pgbench": "pgbench (same SQL)"}
# The peers Grafton is compared with; a ratio is taken against the fastest one present.
PEERS = ("postgraphile", "postgraphile5")


def ok_rps(r: dict | None) -> float | None:
    """Answered requests a second: a run's rate without its failures (a server refusing
    most requests quickly must not look fast)."""
    if not r or r.get("error") or not r.get("rps"):
        return None
    return r["rps"] * (1 - (r.get("failed_rate") or 0))


def fastest_peer(rows: list[dict | None], key: str = "rps") -> dict | None:
    """Of the peers' rows at one level, the one with the highest `key` (None if none
    measured); `rps` means answered requests a second ([`ok_rps`])."""
    value = ok_rps if key == "rps" else (lambda r: r.get(key))
    ok = [r for r in rows if r and not r.get("error") and value(r)]
    return max(ok, key=value) if ok else None


def label(system: str) -> str:
    return LABELS.get(system, system)


def num(v, digits: int = 0) -> str:
    if v is None:
        return "—"
    return f"{v:,.{digits}f}"


def rate(v) -> str:
    """requests/s: no decimals from 100 up."""
    if v is None:
        return "—"
    return num(v, 0 if v >= 100 else 1)


def ms(v) -> str:
    if v is None:
        return "—"
    return f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 100 else f"{v:,.0f}"


def pct(v) -> str:
    if v is None:
        return "—"
    return "0%" if v == 0 else f"{100 * v:.2g}%"


def ratio(a, b) -> str:
    if not a or not b:
        return "—"
    return f"{a / b:.2f}×"


def mb(kb) -> str:
    return "—" if kb is None else f"{kb / 1024:.1f} MB"


def span(values: list[float], fmt: str = "{:.2f}", unit: str = "") -> str:
    """"a–b" (or "a" when all equal)."""
    lo, hi = fmt.format(min(values)) + unit, fmt.format(max(values)) + unit
    return lo if lo == hi else f"{fmt.format(min(values))}–{hi}"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured markdown table; numeric-looking columns align right."""
    def numeric(col):
        cells = [r[col] for r in rows if r[col] not in ("—", "")]
        return bool(cells) and all(NUMERIC.match(c) for c in cells)
    align = ["---:" if rows and numeric(i) else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def systems_of(results) -> list[str]:
    return [s["id"] for s in results.get("systems", [])] or ["grafton", "postgraphile", "sqlite"]


def share(v) -> str:
    """A share with one decimal (99.8%), unlike pct's two significant digits."""
    return "—" if v is None else f"{100 * v:.1f}%"


def met_text(v: str) -> str:
    return "met" if v == "met" else "**missed**" if v == "missed" else v

def clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


def level_rows(levels, systems, idx: dict, name: str, peer_of, cells, width: int) -> list[list[str]]:
    """A table's rows, level by level and system by system: `cells(system, row, peer)` after
    the level and the system's label, or dashes and the error of a run that failed;
    `peer_of(level)` is the figure the ratios are taken against."""
    rows = []
    for vus in levels:
        peer = peer_of(vus)
        for s in systems:
            r = idx.get((s, name, vus))
            if r is None:
                continue
            if r.get("error"):
                rows.append([str(vus), label(s), *["—"] * (width - 3), r["error"]])
            else:
                rows.append([str(vus), label(s), *cells(s, r, peer)])
    return rows
