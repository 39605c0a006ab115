"""The fixed-concurrency scenario's figures: one row per system, query and level, the
median of its rounds. Standard library only."""

from __future__ import annotations

import statistics

LATENCIES = ("p50", "p75", "p90", "p95", "p99", "avg")


def answered(r: dict) -> float:
    """Answered requests a second of one run (failures left out)."""
    return (r.get("rps") or 0) * (1 - (r.get("failed_rate") or 0))


def median_row(rows: list[dict]) -> dict:
    """One row for several rounds of the same run. Throughput (req/s, failures) is the
    round with the median answered rate, so the two stay a pair; each latency percentile
    is the median of the rounds'. Rounds that failed to run are left out, unless all did."""
    ok = [r for r in rows if not r.get("error") and r.get("rps")]
    if len(ok) <= 1:
        base = dict(ok[0] if ok else rows[0])
        base["rounds"] = len(ok)
        return base
    ranked = sorted(ok, key=answered)
    mid = dict(ranked[(len(ranked) - 1) // 2])
    for key in LATENCIES:
        mid[key] = median_of(r.get(key) for r in ok)
    mid["rounds"] = len(ok)
    mid["rps_range"] = [ranked[0]["rps"], ranked[-1]["rps"]]
    mid.pop("round", None)
    return mid


def index(runs: list[dict]) -> dict:
    """{(system, query, vus): the median row of its rounds}."""
    groups: dict[tuple, list[dict]] = {}
    for r in runs:
        groups.setdefault((r["system"], r["query"], r["vus"]), []).append(r)
    return {k: median_row(v) for k, v in groups.items()}


def median_of(values) -> float | None:
    """The median of the values that are not None; None if there are none."""
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def ceiling_index(runs: list[dict]) -> list[dict]:
    """The ceiling's rows, one per query and level, in first-seen order: the median of
    the rounds' pgbench tps (Grafton's SQL and the best SQL) and of Grafton's req/s, and
    the ratios recomputed from those medians."""
    groups: dict[tuple, list[dict]] = {}
    for r in runs:
        groups.setdefault((r["query"], r["vus"]), []).append(r)
    out = []
    for (query, vus), rows in groups.items():
        row = {"query": query, "vus": vus, "rounds": len(rows),
               **{k: median_of(r.get(k) for r in rows) for k in ("tps", "latency_avg_ms", "best_tps", "grafton_rps")}}
        tps, best, g = row["tps"], row["best_tps"], row["grafton_rps"]
        row["sql_quality"] = tps / best if tps and best else None
        row["fraction"] = g / tps if g and tps else None
        row["fraction_best"] = g / best if g and best else None
        if len(rows) > 1:
            row["tps_range"] = [min(r["tps"] for r in rows if r.get("tps") is not None),
                                max(r["tps"] for r in rows if r.get("tps") is not None)]
        out.append(row)
    return out
