"""The remote scenario's section and target rows of summary.md (see run_remote.py)."""

from __future__ import annotations

from report_fmt import met_text
from run_remote import TARGET_JOIN_RATIO, TARGET_RSS_MB


def remote_targets(results: dict) -> list[list[str]]:
    r = results.get("remote")
    if not r or r.get("status", "ok") != "ok":
        return []
    rows = []
    p50 = (r.get("join") or {}).get("p50")
    if p50:
        rows.append([f"remote: 50 rows joined to a remote field within {TARGET_JOIN_RATIO}× of the SQL part + "
                     "one remote call (p50), one call",
                     f"{p50['join']:.2f} ms vs {p50['sql']:.2f} + {p50['remote']:.2f} ms: {p50['ratio']:.2f}× "
                     f"(two client round trips: {p50['two']:.2f} ms)",
                     met_text("met" if p50["ratio"] <= TARGET_JOIN_RATIO else "missed")])
    load = r.get("load") or {}
    if load.get("rss_mb") is not None:
        rows.append([f"remote: Grafton's RSS < {TARGET_RSS_MB} MB with 100 clients on a 50 ms remote",
                     f"{load['rss_mb']:.0f} MB", met_text("met" if load["rss_mb"] < TARGET_RSS_MB else "missed")])
    if load.get("through") is not None:
        slower = load["through"] > load["direct"] * 1.05
        rows.append(["remote: no other query slows (a table query's p95 beside the remote load through Grafton, "
                     "against beside the same load sent to the remote directly)",
                     f"{load['through']:.2f} vs {load['direct']:.2f} ms (alone {load['alone']:.2f} ms)",
                     met_text("missed" if slower else "met")])
    return rows


def remote_section(results: dict) -> str:
    r = results.get("remote")
    if not r:
        return ""
    if r.get("status", "ok") != "ok":
        return f"## Remote schemas\n\n{r['status']}"
    out = ["## Remote schemas",
           "bench/quick/remote_join.sh and bench/quick/remote_load.sh: one `grafton serve` on a SQLite demo "
           "file, the graphql-js remote of tests/conformance/remote_server.mjs; rounds alternate, medians."]
    for key, title in (("join", "50 rows joined to a remote field (one connection)"),
                       ("load", "a 50 ms remote under 100 clients, a table query beside it")):
        lines = (r.get(key) or {}).get("lines") or []
        if lines:
            out.append(f"**{title}**\n\n```\n" + "\n".join(lines) + "\n```")
    return "\n\n".join(out)
