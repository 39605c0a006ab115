"""The report's writes section (pure)."""

from __future__ import annotations

import writes as wr
from report_fmt import PEERS, clip, fastest_peer, label, level_rows, ms, pct, rate, ratio, systems_of, table


def writes_index(results) -> dict:
    return {(r["system"], r["write"], r["vus"]): r for r in results.get("writes", {}).get("runs", [])}


def write_ratio(g: dict | None, p: dict | None) -> str:
    """Grafton's rows/s over a peer's (rows of successful requests only: a run
    with failures compares what it wrote, not how fast it failed)."""
    if not g or not p or g.get("error") or p.get("error"):
        return "—"
    r = ratio(g.get("rows_per_s"), p.get("rows_per_s"))
    failed = [f"{label(x['system'])} {pct(x['failed_rate'])} failed" for x in (g, p)
              if (x.get("failed_rate") or 0) >= 0.01 and x.get("system")]
    return r + (f" ({', '.join(failed)})" if failed and r != "—" else "")



def writes_section(results) -> str:
    w = results.get("writes")
    if not w or w.get("status", "ok") != "ok":
        return ""
    idx = writes_index(results)
    systems = systems_of(results)
    names = w.get("writes", [])
    descr = {**wr.DESCRIPTIONS, **w.get("descriptions", {})}
    out = ["## Writes",
           f"Closed loop (each VU sends its next mutation as soon as the previous one is answered), "
           f"{w.get('duration_s', '?')} s per run at each level, systems alternating "
           f"per level, after a {w.get('warmup_s', '?')} s warm-up per write and system at 10 VUs. "
           f"PostGraphile runs these from a second instance started with its default CRUD mutations "
           f"(the read instance keeps `--disable-default-mutations`), same pool. "
           f"State: {w.get('state', '?')}. A request counts only if it answers status 200, without "
           "`errors`, with the expected data (an id back; `affected_rows` = 100; the updated row with its new "
           "name); *rows/s* counts the rows of those requests only. Latencies in ms. "
           "*×fastest peer*: rows/s relative to the faster of PostGraphile v4 and v5 at the same concurrency."]
    if "insert_batch_100" in names:
        out.append("*insert_batch_100 is not the same operation on both sides: Grafton inserts the 100 rows "
                   "with one `insert_venues(objects:)` (one multi-row statement); PostGraphile (v4 and v5) has "
                   "no multi-row insert, so its request carries 100 aliased `createVenue` fields (one row per "
                   "call, 100 calls in one request). That is the comparison made.*")
    if w.get("unavailable"):
        out.append("Not measured (most of the warm-up's requests failed; full reasons in `results.json`):\n\n"
                   + "\n".join(f"- {label(u['system'])} {u['write']}: {clip(u['reason'], 240)}"
                                for u in w["unavailable"]))
    skipped = {(u["system"], u["write"]) for u in w.get("unavailable", [])}
    others = [s for s in systems if s not in PEERS]
    if any(p in systems for p in PEERS) and others:
        rows = []
        for name in names:
            for vus in w.get("levels", []):
                p = fastest_peer([idx.get((x, name, vus)) for x in PEERS], "rows_per_s")
                cells = ["not measured" if (s, name) in skipped else write_ratio(idx.get((s, name, vus)), p)
                         for s in others]
                if any(c != "—" for c in cells) or p is not None:
                    rows.append([name, str(vus), *cells])
        if rows:
            out.append("### Grafton / the fastest peer (rows/s)")
            out.append(table(["write", "VUs", *(f"{label(s)} ×fastest peer" for s in others)], rows))
    for name in names:
        out.append(f"### {name}" + (f"\n\n{descr[name]}" if descr.get(name) else ""))
        if any(r.get("rows_per_s") is not None for k, r in idx.items() if k[1] == name):
            out.append(f"![{name}: rows/s](charts/writes-{name}-rows.svg) "
                       f"![{name}: p95](charts/writes-{name}-p95.svg)")
        rows = level_rows(w.get("levels", []), systems, idx, name,
                          lambda vus: fastest_peer([idx.get((x, name, vus)) for x in PEERS], "rows_per_s"),
                          lambda s, r, peer: [rate(r.get("rps")), rate(r.get("rows_per_s")),
                                              "" if s in PEERS else write_ratio(r, peer),
                                              *(ms(r.get(k)) for k in ("p50", "p95", "p99")),
                                              pct(r.get("failed_rate"))], 9)
        if rows:
            out.append(table(["VUs", "system", "req/s", "rows/s", "×fastest peer", "p50", "p95", "p99",
                              "failed"], rows))
        fails = [f"- {label(r['system'])} at {r['vus']} VUs: {r['first_failure']}" for r in w.get("runs", [])
                 if r["write"] == name and r.get("first_failure")]
        if fails:
            out.append("First failure per run:\n\n" + "\n".join(fails))
    return "\n\n".join(out)
