"""summary.md and the charts from a results.json dict (pure: no I/O here).

The shape of `results` is documented in bench/README.md; every section is
optional so a partial run (--scenarios) still renders.
"""

from __future__ import annotations

import re

import auth
import capacity as cap
import charts
import plan
import ops
import qos
import subs
import writes as wr

SEED = ["venues", "venue_meetups", "meetups_members"]
# Phrag's published capacity (max VUs) on 2 vCPU with a dedicated database.
PHRAG_CAPACITY = {
    ("venues", 50): 1900, ("venue_meetups", 50): 1400, ("meetups_members", 50): 1200,
    ("venues", 100): 2000, ("venue_meetups", 100): 900, ("meetups_members", 100): 700,
}
MEMORY_TARGET_MB = 60
NUMERIC = re.compile(r"^[-+]?[\d,.]+(×| MB| ms|%)?$")
LABELS = {"grafton": "Grafton PG", "postgraphile": "PostGraphile v4", "postgraphile5": "PostGraphile v5",
          "sqlite": "Grafton SQLite",
          "pgbench": "pgbench (same SQL)"}
QUERY_NOTES = {
    "venues": "seed, no nest", "venue_meetups": "seed, has-many nest",
    "meetups_members": "seed, has-many then has-one", "simple_list": "members(limit: 10)",
    "complex_filter": "_and of 3 conditions, order_by, limit 100",
    "aggregate": "meetups_aggregate count + max", "by_pk": "fetch by primary key",
    "roots_1": "1 root field", "roots_4": "4 root fields", "roots_9": "9 root fields",
}


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


def _systems(results) -> list[str]:
    return [s["id"] for s in results.get("systems", [])] or ["grafton", "postgraphile", "sqlite"]


def _fixed_index(results) -> dict:
    return {(r["system"], r["query"], r["vus"]): r for r in results.get("fixed", {}).get("runs", [])}


# ----------------------------------------------------------------- sections

def machine_section(results) -> str:
    m, v = results.get("machine", {}), results.get("versions", {})
    load = lambda key: " / ".join(f"{x:.2f}" for x in m[key]) if m.get(key) else "—"  # noqa: E731
    rows = [
        ["CPU", f"{m.get('cores', '?')} cores, {m.get('cpu_model', '?')}"],
        ["memory", f"{m.get('mem_total_mb', 0) / 1024:.1f} GiB"],
        ["OS", m.get("os", "—")],
        ["load average (1/5/15 min)", f"start {load('load_start')}; end {load('load_end')}"],
        ["Grafton", v.get("grafton", "—")],
        ["PostgreSQL", v.get("postgresql", "—")],
        ["PostGraphile v4", v.get("postgraphile", "—")],
        ["PostGraphile v5", v.get("postgraphile5", "—")],
        ["k6", v.get("k6", "—")],
        ["pgbench", v.get("pgbench", "—")],
    ]
    return "## Machine\n\n" + table(["", ""], rows) + (
        "\n\nThe database, the servers and the load generator share this machine.")


def fixed_section(results) -> str:
    fx = results.get("fixed")
    if not fx or not fx.get("runs"):
        return ""
    idx = _fixed_index(results)
    systems = _systems(results)
    out = ["## Throughput and latency at fixed concurrency",
           f"Closed loop: each virtual user sends its next request as soon as the previous one "
           f"is answered; {fx.get('duration_s', '?')} s per run, systems alternating per level; "
           f"limit {results.get('limit', 50)}, `id_gt` and `offset` random per request. "
           "Latencies in ms. *×fastest peer*: answered requests/s (failures left out) relative to "
           "the faster of PostGraphile v4 and v5 at the same concurrency."]
    for q in fx.get("queries", []):
        note = QUERY_NOTES.get(q)
        out.append(f"### {q}" + (f" ({note})" if note else ""))
        out.append(f"![{q}: throughput](charts/{q}-throughput.svg) ![{q}: p95](charts/{q}-p95.svg)")
        rows = []
        for vus in fx.get("levels", []):
            peer = ok_rps(fastest_peer([idx.get((p, q, vus)) for p in PEERS]))
            for s in systems:
                r = idx.get((s, q, vus))
                if r is None:
                    continue
                if r.get("error"):
                    rows.append([str(vus), label(s), "—", "—", "—", "—", "—", "—", "—", r["error"]])
                    continue
                rows.append([str(vus), label(s), rate(r.get("rps")),
                             "" if s in PEERS else ratio(ok_rps(r), peer),
                             *(ms(r.get(p)) for p in ("p50", "p75", "p90", "p95", "p99")),
                             pct(r.get("failed_rate"))])
        out.append(table(["VUs", "system", "req/s", "×fastest peer", "p50", "p75", "p90", "p95",
                          "p99", "failed"], rows))
    return "\n\n".join(out)


def capacity_section(results) -> str:
    c = results.get("capacity")
    if not c or not c.get("results"):
        return ""
    if c.get("client") == "loadgen":
        how = (f"Open model (`bench/loadgen`): N users each sending one request every 2 s arrive as "
               f"N/2 requests a second, whatever the answers, ramped over {c.get('ramp_s')} s then held "
               f"{c.get('hold_s')} s (the *max VUs* column counts users); a trial passes with < 1% "
               f"failed requests (an error, a status other than 200, or no answer within 10 s), p95 "
               f"< 500 ms, and no arrival the client could not send")
    else:
        how = (f"Each VU sends one request then sleeps 2 s (k6, `bench/k6/capacity.js`); "
               f"{c.get('ramp_s')} s ramp to the target then {c.get('hold_s')} s hold; a trial passes "
               f"with `http_req_failed` < 1% and p95 < 500 ms")
    out = ["## Capacity (the seed's test)",
           f"{how}. The search starts at an estimate from a short closed-loop probe, moves in "
           f"steps of {c.get('step')} up (or down) to the boundary, then refines by "
           f"{c.get('refine')}; bounded at "
           f"{c.get('max_vus')} and {plan.duration(c.get('budget_s', 0))} in all. "
           "Figures are those of the largest passing trial."]
    if c.get("quick"):
        out.append("*Quick mode: short trials and a small bound, a smoke check only; not "
                   "comparable with the seed's numbers.*")
    rows = []
    for r in c["results"]:
        if r.get("error"):
            rows.append([r["query"], str(r["limit"]), label(r["system"]), "—", "—", "—", "—", "—",
                         "—", r["error"]])
            continue
        b = r.get("best") or {}
        trials = ", ".join(f"{t['vus']}{'✓' if t.get('passed') else '✗'}" for t in r.get("trials", []))
        rows.append([r["query"], str(r["limit"]), label(r["system"]),
                     num(r.get("max_vus")) if r.get("max_vus") else "0",
                     ms(b.get("p95")), ms(b.get("min")), ms(b.get("max")), num(b.get("requests")),
                     rate(b.get("rps")),
                     f"{cap.EXPLAIN.get(r.get('stopped_by'), r.get('stopped_by'))} ({trials})"])
    out.append(table(["query", "limit", "system", "max VUs", "p95", "min", "max", "requests",
                      "req/s", "stopped by (trials)"], rows))
    return "\n\n".join(out)


def memory_section(results) -> str:
    m = results.get("memory")
    if not m or not m.get("systems"):
        return ""
    vus = m.get("load_vus", 100)
    rows = [[label(s), mb(v.get("idle_kb")), mb(v.get("load_kb")), mb(v.get("peak_kb"))]
            for s, v in m["systems"].items()]
    load = (f" Under load: the largest VmRSS sampled (every 0.25 s) during a {vus}-VU closed loop on "
            f"{', '.join(m['load_queries'])}." if m.get("load_queries") else "")
    return "\n\n".join([
        "## Memory",
        "Resident set size from `/proc/PID/status` (PostGraphile: its node processes summed). Idle: after "
        f"start-up and one check query.{load} Peak: VmHWM at the end of the read scenarios (before "
        "the writes, if any).",
        table(["system", "idle", f"under {vus} VUs", "peak"], rows)])


def ceiling_section(results) -> str:
    c = results.get("ceiling")
    if not c:
        return ""
    head = ["## The ceiling: pgbench on Grafton's SQL"]
    if c.get("status", "ok") != "ok":
        return "\n\n".join(head + [c["status"]])
    head.append("`pgbench -n -M prepared` runs the SQL Grafton generates for each seed query "
                "(same random variables) at the same concurrency; the fraction is Grafton's "
                "requests/s over pgbench's transactions/s." + (
                    f" {c['note']}" if c.get("note") else ""))
    if c.get("best_check"):
        head.append("The second reference is the fastest SQL we could write by hand for the same "
                    "answer (`bench/pgbench/best/`), run the same way; `bench/pgbench/best.py` checked "
                    f"it against Grafton's answers first: {c['best_check']}. *Grafton's SQL / best* "
                    "measures the generated SQL; *Grafton / best* the whole server against the best "
                    "the database can do.")
    f2 = lambda v: f"{v:.2f}" if v is not None else "—"  # noqa: E731
    rows = [[r["query"], str(r["vus"]), rate(r.get("tps")), ms(r.get("latency_avg_ms")),
             rate(r.get("best_tps")), f2(r.get("sql_quality")), rate(r.get("grafton_rps")),
             f2(r.get("fraction")), f2(r.get("fraction_best"))]
            for r in c.get("runs", [])]
    return "\n\n".join(head + [table(["query", "VUs", "pgbench tps (Grafton's SQL)", "latency avg",
                                      "pgbench tps (best SQL)", "Grafton's SQL / best", "Grafton req/s",
                                      "Grafton / pgbench", "Grafton / best"], rows)])


def _writes_index(results) -> dict:
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


def clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


def writes_section(results) -> str:
    w = results.get("writes")
    if not w or w.get("status", "ok") != "ok":
        return ""
    idx = _writes_index(results)
    systems = _systems(results)
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
        rows = []
        for vus in w.get("levels", []):
            peer = fastest_peer([idx.get((x, name, vus)) for x in PEERS], "rows_per_s")
            for s in systems:
                r = idx.get((s, name, vus))
                if r is None:
                    continue
                if r.get("error"):
                    rows.append([str(vus), label(s), "—", "—", "—", "—", "—", "—", "—", r["error"]])
                    continue
                rows.append([str(vus), label(s), rate(r.get("rps")), rate(r.get("rows_per_s")),
                             "" if s in PEERS else write_ratio(r, peer),
                             *(ms(r.get(k)) for k in ("p50", "p95", "p99")), pct(r.get("failed_rate"))])
        if rows:
            out.append(table(["VUs", "system", "req/s", "rows/s", "×fastest peer", "p50", "p95", "p99",
                              "failed"], rows))
        fails = [f"- {label(r['system'])} at {r['vus']} VUs: {r['first_failure']}" for r in w.get("runs", [])
                 if r["write"] == name and r.get("first_failure")]
        if fails:
            out.append("First failure per run:\n\n" + "\n".join(fails))
    return "\n\n".join(out)


def _auth_mode(a: dict) -> str:
    return "JWT" if a.get("mode") == "jwt" else "roles via headers, no JWT"


def _auth_roles(a: dict) -> list[str]:
    return a.get("roles") or auth.MEASURED


def auth_section(results) -> str:
    a = results.get("auth")
    if not a or (a.get("status", "ok") != "ok" and not a.get("memory")):
        return ""
    out = ["## Auth"]
    order = {s: i for i, s in enumerate(_systems(results))}
    roles = _auth_roles(a)
    rows_ov = sorted(a.get("overhead") or [], key=lambda r: (order.get(r["system"], 99), r["vus"],
                                                             roles.index(r["role"]) if r["role"] in roles else 99))
    target = a.get("target_ratio", auth.TARGET_RATIO)
    if a.get("status", "ok") == "ok":
        out.append("### Overhead: roles with a row filter against admin")
        kept = []
        for s, k in a.get("kept", {}).items():
            per_role = []
            for r, kr in k.get("roles", {}).items():
                counts = list(kr.get("per_user", {}).values())
                per_role.append(f"`{r}` {span(counts, '{:,.0f}')} ({100 * (kr.get('share') or 0):.1f}%)"
                                if counts else f"`{r}` —")
            kept.append(f"{label(s)}: admin sees {num(k.get('total'))} meetups, each user as "
                        + ", as ".join(per_role)
                        + (f"; a request without credentials: {k['anonymous']}" if k.get("anonymous") else ""))
        filters = "; ".join(f"`{r}`: {a.get('filters', {}).get(r, auth.FILTER_TEXT.get(r, '?'))}"
                            for r in _auth_roles(a))
        out.append(
            f"**Mode: {_auth_mode(a)}.** {a.get('mode_text', '')}"
            + (f" (`{a['jwt_rejected']}`)" if a.get("jwt_rejected") else "") + ".\n\n"
            f"Query `{a.get('query')}` (`bench/k6/queries.js`: a page of {results.get('limit', 50)} meetups, "
            f"`id_gt` and `offset` random, each with its venue), the same document as admin and as each role "
            f"on the same server (config `{a.get('config')}`). Row filters on meetups (venues: none): {filters}. "
            f"Users {', '.join(map(str, a.get('users', [])))}, one "
            + ("token" if a.get("mode") == "jwt" else "header set")
            + " each per role, VU *v* sending user (*v* − 1) mod "
            f"{len(a.get('users', [])) or '?'}. Rows kept (counted through the server with "
            f"`meetups_aggregate`): " + ("; ".join(kept) or "—") + ".\n\n"
            f"Closed loop, {a.get('duration_s', '?')} s per run; {a.get('order', '')}. Latencies in ms; "
            f"*×* is role / admin; target < {target:.2f}× at p50 and p95.")
        if results.get("mode") == "quick":
            out.append("*Quick mode: short runs, one level: indicative only.*")
        if a.get("unavailable"):
            out.append("Not measured:\n\n" + "\n".join(f"- {label(u['system'])}: {clip(u['reason'], 400)}"
                                                       for u in a["unavailable"]))
        rows = []
        for r in rows_ov:
            ad, ro = r.get("admin", {}), r.get("as_role", {})
            failed = max(ad.get("failed_rate") or 0, ro.get("failed_rate") or 0)
            rows.append([label(r["system"]), str(r["vus"]), r["role"], rate(ad.get("rps")), rate(ro.get("rps")),
                         ms(ad.get("p50")), ms(ro.get("p50")),
                         f"{r['p50_ratio']:.2f}×" if r.get("p50_ratio") else "—",
                         ms(ad.get("p95")), ms(ro.get("p95")),
                         f"{r['p95_ratio']:.2f}×" if r.get("p95_ratio") else "—", pct(failed)])
        if rows:
            out.append(table(["system", "VUs", "role", "admin req/s", "role req/s", "admin p50", "role p50",
                              "p50 ×", "admin p95", "role p95", "p95 ×", "failed"], rows))
            verdicts = []
            for s in _systems(results):
                for role in _auth_roles(a):
                    mine = [r for r in rows_ov if r["system"] == s and r["role"] == role]
                    if mine:
                        v, worst = auth.verdict(mine, target)
                        verdicts.append(f"{label(s)} `{role}`: worst {worst:.2f}× → "
                                        f"{'met' if v == 'met' else '**' + v + '**'}"
                                        if worst is not None else f"{label(s)} `{role}`: —")
            out.append(f"Target role/admin < {target:.2f}× at p50 and p95 ({_auth_mode(a)}): "
                       + "; ".join(verdicts) + ".")
    elif a.get("status"):
        out.append(f"Overhead not measured: {a['status']}")
    m = a.get("memory")
    if m and m.get("systems"):
        out.append("### Role schemas: idle memory")
        out.append(f"A fresh server with {m.get('roles')} roles in its config (`{m.get('config', '?')}`: each "
                   "with a select permission on every demo table, different columns, row filters — literals, "
                   "session variables, relationships —, limits and aggregates) against the same server "
                   "without a config. Started, one admin query answered, then VmRSS sampled every 0.25 s "
                   f"until idle (RSS within 1% and no CPU used for {m.get('idle_window_s', '?')} s, at most "
                   f"{m.get('idle_max_s', '?')} s). Target: < {m.get('target_mb', auth.TARGET_MEMORY_MB)} MB "
                   f"idle with {m.get('roles')} roles.")
        rows = []
        for s, e in m["systems"].items():
            none, roles = e.get("none", {}), e.get("roles", {})
            v = auth.memory_verdict(roles.get("idle_kb"), m.get("target_mb", auth.TARGET_MEMORY_MB))
            note = "; ".join(f"{k}: {x['error'][:200]}" for k, x in (("no roles", none), ("roles", roles))
                             if x.get("error")) or ("" if none.get("settled", True) and roles.get("settled", True)
                                                    else "not settled within the limit")
            rows.append([label(s), mb(none.get("idle_kb")), mb(roles.get("idle_kb")),
                         ("+" if (e.get("delta_kb") or 0) >= 0 else "") + mb(e.get("delta_kb"))
                         if e.get("delta_kb") is not None else "—",
                         mb(roles.get("hwm_kb")),
                         f"{roles['ready_s']:.1f} / {none.get('ready_s', 0):.1f} s" if roles.get("ready_s") else "—",
                         "met" if v == "met" else "**" + v + "**" if v == "missed" else v, note])
        out.append(table(["system", "no roles", f"{m.get('roles')} roles", "difference",
                          f"peak ({m.get('roles')} roles, start-up)", "ready (roles / none)",
                          f"< {m.get('target_mb', auth.TARGET_MEMORY_MB)} MB", "note"], rows))
    return "\n\n".join(out)


def targets_section(results) -> str:
    """The issue's targets, each with the measured figure and met/missed."""
    rows = []
    idx = _fixed_index(results)
    # Throughput targets are about load: judged at 10+ concurrent users (1 VU measures latency only).
    levels = [v for v in results.get("fixed", {}).get("levels", []) if v >= 10]
    for q in SEED:
        pairs = [(idx[("grafton", q, v)], idx[("postgraphile", q, v)]) for v in levels
                 if ("grafton", q, v) in idx and ("postgraphile", q, v) in idx
                 and idx[("grafton", q, v)].get("rps") and idx[("postgraphile", q, v)].get("rps")]
        if not pairs:
            continue
        ratios = [(ok_rps(g) or 0) / (ok_rps(p) or 1) for g, p in pairs]
        lower = sum(1 for g, p in pairs if (g.get("p95") or 0) < (p.get("p95") or 0))
        ok = min(ratios) >= 3 and lower == len(pairs)
        rows.append([f"{q}: ≥ 3× PostGraphile v4 req/s, lower p95 (limit 50)",
                     f"{span(ratios, unit='×')} at {len(pairs)} level{'s' if len(pairs) > 1 else ''} "
                     f"≥ 10 VUs; "
                     f"p95 lower at {lower}/{len(pairs)}", "met" if ok else "**missed**"])
    for q in results.get("fixed", {}).get("queries", []):
        pairs = [(idx[("grafton", q, v)], idx[(p, q, v)]) for v in levels for p in PEERS
                 if ("grafton", q, v) in idx and (p, q, v) in idx
                 and idx[("grafton", q, v)].get("rps") and idx[(p, q, v)].get("rps")]
        if not pairs:
            continue
        ratios = [(ok_rps(g) or 0) / (ok_rps(p) or 1) for g, p in pairs]
        lower = sum(1 for g, p in pairs if (g.get("p95") or 0) < (p.get("p95") or 0))
        failing = sorted({g["vus"] for g, _ in pairs if (g.get("failed_rate") or 0) >= 0.01})
        rows.append([f"{q}: ahead of every peer at ≥ 10 VUs (answered req/s and p95, < 1% failed)",
                     f"{span(ratios, unit='×')} over {len(pairs)} peer × level pairs; p95 lower at "
                     f"{lower}/{len(pairs)}" + (f"; Grafton ≥ 1% failed at {', '.join(map(str, failing))} VUs"
                                                if failing else ""),
                     "met" if min(ratios) > 1 and lower == len(pairs) and not failing else "**missed**"])
    c = results.get("capacity", {})
    for r in c.get("results", []):
        want = PHRAG_CAPACITY.get((r["query"], r["limit"]))
        if r["system"] != "grafton" or want is None or r.get("error"):
            continue
        got = r.get("max_vus") or 0
        bound = r.get("stopped_by") in (cap.MAX_VUS, cap.BUDGET)
        verdict = ("n/a (quick)" if c.get("quick") else "met" if got > want
                   else "open (search bounded)" if bound else "**missed**")
        rows.append([f"capacity {r['query']} limit {r['limit']} > {want} VUs (Phrag)",
                     f"{got} VUs" + (f" ({cap.EXPLAIN[r['stopped_by']]})" if bound else ""), verdict])
    ce = results.get("ceiling", {})
    for q in SEED:
        fr = [r["fraction"] for r in ce.get("runs", []) if r["query"] == q and r.get("fraction")]
        if fr:
            rows.append([f"{q}: Grafton ≥ ½ of pgbench on the same SQL",
                         span(fr) + f" at {len(fr)} level{'s' if len(fr) > 1 else ''}",
                         "met" if min(fr) >= 0.5 else "**missed**"])
    g = results.get("memory", {}).get("systems", {}).get("grafton", {})
    if g.get("load_kb"):
        rows.append([f"Grafton RSS under the 100-VU load < {MEMORY_TARGET_MB} MB", mb(g["load_kb"]),
                     "met" if g["load_kb"] / 1024 < MEMORY_TARGET_MB else "**missed**"])
    a = results.get("auth", {})
    for s in _systems(results):
        for role in _auth_roles(a):
            mine = [r for r in a.get("overhead") or [] if r["system"] == s and r.get("role") == role]
            if not mine:
                continue
            v, worst = auth.verdict(mine, a.get("target_ratio", auth.TARGET_RATIO))
            p50 = [r["p50_ratio"] for r in mine if r.get("p50_ratio")]
            p95 = [r["p95_ratio"] for r in mine if r.get("p95_ratio")]
            rows.append([f"auth ({_auth_mode(a)}), {label(s)}, role `{role}`: latency < "
                         f"{a.get('target_ratio', auth.TARGET_RATIO):.2f}× admin's at p50 and p95",
                         (f"p50 {span(p50, unit='×')}, p95 {span(p95, unit='×')} at {len(mine)} "
                          f"level{'s' if len(mine) > 1 else ''}" if p50 and p95 else "—"),
                         "met" if v == "met" else v if v == "n/a" else "**missed**"])
    mem = a.get("memory", {})
    for s, e in mem.get("systems", {}).items():
        roles = e.get("roles", {})
        if roles.get("idle_kb"):
            v = auth.memory_verdict(roles["idle_kb"], mem.get("target_mb", auth.TARGET_MEMORY_MB))
            rows.append([f"{label(s)} idle RSS with {mem.get('roles')} roles < "
                         f"{mem.get('target_mb', auth.TARGET_MEMORY_MB)} MB",
                         mb(roles["idle_kb"]) + (f" (no roles: {mb(e['none']['idle_kb'])})"
                                                 if e.get("none", {}).get("idle_kb") else ""),
                         "met" if v == "met" else "**missed**"])
    rows += qos_targets(results)
    if not rows:
        return ""
    return "## Targets\n\n" + table(["target", "measured", ""], rows)


# ----------------------------------------------------------------- qos

def share(v) -> str:
    """A share with one decimal (99.8%), unlike pct's two significant digits."""
    return "—" if v is None else f"{100 * v:.1f}%"


def _verdict(v: str) -> str:
    return "met" if v == "met" else "**missed**" if v == "missed" else v


def qos_section(results) -> str:
    q = results.get("qos")
    if not q or q.get("status", "ok") != "ok":
        return ""
    out = ["## Safe under load (qos)",
           "Each part runs on Grafton PG servers started for it (pool "
           f"{results.get('pool', 20)}, `--naming phrag`, the config files in `config/`), next to nothing else "
           "under load; the database is the suite's."]
    if results.get("mode") == "quick":
        out.append("*Quick mode: short runs, few levels: indicative only.*")
    if q.get("unavailable"):
        out.append("Not measured:\n\n" + "\n".join(f"- {u['server']}: {clip(u['reason'], 400)}"
                                                   for u in q["unavailable"]))
    a = q.get("attack")
    if a:
        out.append("### Attack: an unbounded nested query beside cheap requests")
        out.append(f"For {a.get('duration_s')} s, {a.get('heavy_vus')} VUs loop `{a.get('heavy_query')}` (as admin: "
                   "no row limit; every meetup with its members) while "
                   f"{a.get('cheap_vus')} VUs loop `{a.get('cheap_query')}` (a random id), closed loop, against a "
                   f"fresh server whose only limit is admin's `time_limit` of {a.get('time_limit_s')} s "
                   f"(`{q.get('config', {}).get('attack', 'config/qos-attack.yaml')}`). Grafton's VmRSS sampled "
                   "every 0.25 s. Latencies in ms; outcomes by error code.")
        if a.get("error"):
            out.append(f"Not measured: {a['error']}.")
        else:
            rows = []
            for k in ("cheap", "heavy"):
                g = a.get(k) or {}
                rows.append([k, num(g.get("requests")), rate(g.get("rps")), ms(g.get("p50")), ms(g.get("p95")),
                             ms(g.get("p99")), ms(g.get("max")), qos.outcomes_text(g.get("outcomes") or {})])
            out.append(table(["workload", "requests", "req/s", "p50", "p95", "p99", "max", "outcomes"], rows))
            rss = a.get("rss") or {}
            v = a.get("verdicts") or qos.attack_verdicts(a)
            heavy = a.get("heavy") or {}
            out.append(
                f"Grafton's RSS: idle {mb(rss.get('idle_kb'))}, peak {mb(rss.get('peak_kb'))} (VmHWM "
                f"{mb(rss.get('hwm_kb'))}); CPU {a.get('cpu_s', '—')} s over the run. "
                + (f"The largest heavy answer with data: {mb(heavy['bytes_max'] / 1024)}."
                   if (heavy.get("outcomes") or {}).get("ok") and heavy.get("bytes_max") else
                   "No heavy request answered with data.")
                + (machine_note(a) + "\n\n")
                + f"Targets: cheap p95 < {a.get('target_p95_ms', qos.TARGET_CHEAP_P95_MS):.0f} ms with no errors: "
                f"p95 {ms((a.get('cheap') or {}).get('p95'))} ms, {(a.get('cheap') or {}).get('errors')} errors → "
                f"{_verdict(v.get('cheap', 'n/a'))}; RSS < {a.get('target_rss_mb', qos.TARGET_RSS_MB):.0f} MB: "
                f"{mb(rss.get('peak_kb'))} → {_verdict(v.get('rss', 'n/a'))}.")
            if a.get("unexpected"):
                out.append("Unexpected answers (first of each kind):\n\n" + "\n".join(
                    f"- `{clip(x, 300)}`" for x in a["unexpected"]))
    o = q.get("overhead")
    if o:
        out.append("### Overhead of the limits")
        lim = ", ".join(f"`{k}` {json_brief(v)}" for k, v in (o.get("limits") or {}).items())
        out.append(f"The seed queries (limit {o.get('limit', 50)}) as admin, closed loop, {o.get('vus')} VUs × "
                   f"{o.get('duration_s')} s, on two fresh servers side by side: limits *off* (no config) and "
                   f"*on*: every limit configured for every role and for admin, generously so none triggers "
                   f"({lim}). {o.get('order', '')}; {o.get('reps')} repetitions. Before measuring, a "
                   f"{(o.get('check') or {}).get('document_depth', '?')}-deep document: "
                   + ", ".join(f"{k}: {v}" for k, v in ((o.get('check') or {}).get('answers') or {}).items())
                   + ".")
        if o.get("error"):
            out.append(f"Not measured: {o['error']}.")
        rows = []
        for r in o.get("summary") or []:
            off, on = r.get("off", {}), r.get("on", {})
            rows.append([r["query"], rate(off.get("ok_rps")), rate(on.get("ok_rps")),
                         f"{r['ratio']:.3f}" if r.get("ratio") else "—",
                         (f"{r['paired_ratio']:.3f} ({span(r['paired_ratios'], '{:.2f}')})"
                          if r.get("paired_ratio") else "—"), ms(off.get("p50")), ms(on.get("p50")),
                         ms(off.get("p95")), ms(on.get("p95")), f"{refused_text(off)} / {refused_text(on)}"])
        if rows:
            out.append(table(["query", "off ok/s", "on ok/s", "on / off", "paired (range)", "off p50", "on p50",
                              "off p95", "on p95", "refused (off / on)"], rows))
            out.append("*ok/s*: answers with data per second, the median over the repetitions; *on / off*: "
                       "the medians' ratio (the target's figure); *paired*: the median of each repetition's own "
                       "on / off (the two runs of a pair are back to back), with the range over the repetitions. "
                       "Latencies (ms) of the answers with data. *refused*: the share of answers without data, by "
                       "code, over all repetitions.")
            v, worst = qos.overhead_verdict(o.get("summary") or [], o.get("target", qos.TARGET_OVERHEAD))
            per_rep = {}
            for r in o.get("runs", []):
                per_rep.setdefault((r["query"], r["variant"]), []).append(rate(r.get("ok_rps")))
            out.append("Each repetition's ok/s: " + "; ".join(
                f"{qq} {vv} {', '.join(xs)}" for (qq, vv), xs in per_rep.items()) + ".")
            out.append(f"Target: with every limit on, throughput within {100 * o.get('target', qos.TARGET_OVERHEAD):.0f}% "
                       f"(on / off ≥ {1 - o.get('target', qos.TARGET_OVERHEAD):.2f}): lowest "
                       f"{worst:.3f} → {_verdict(v)}." if worst is not None else "Target: —")
    w = q.get("wso2")
    if w:
        out.append("### The WSO2 shape: 1, 4 and 9 root fields, with and without a rate limit per root field")
        out.append(f"Documents of 1, 4 and 9 aliased root fields (`{w.get('document', '')}` for 4), closed loop, "
                   f"{w.get('duration_s')} s per run, sent as role `{w.get('role')}` (admin secret + "
                   f"`x-hasura-role`). *on*: `rate_limit: {{global: {{max_reqs_per_min: {w.get('per_min'):,}, "
                   "per_root_field: true}}` (one allowance for the role: "
                   f"{w.get('per_min', 0) / 60:,.0f} root fields/s, so at most "
                   + ", ".join(f"{qos.allowed_rps(n, w.get('per_min', qos.WSO2_PER_MIN)):,.0f} req/s of {d}"
                               for d, n in (w.get("docs") or {}).items())
                   + "); before each *on* run k6's setup() spends the allowance (a minute's worth may go at "
                     "once), so the run sees the steady rate. *answered*: every answer per second, 429s included; "
                     "*ok*: answers with data. Latencies (ms) over every answer; *ok p95* over those with data.")
        if w.get("error"):
            out.append(f"Not measured: {w['error']}.")
        rows = []
        for r in sorted(w.get("runs", []), key=lambda r: (r.get("roots", 0), r["vus"], r["variant"])):
            if r.get("error"):
                rows.append([r["doc"], str(r["vus"]), r["variant"], "—", "—", "—", "—", "—", "—", "—", r["error"]])
                continue
            rows.append([r["doc"], str(r["vus"]), r["variant"], rate(r.get("rps")), rate(r.get("ok_rps")),
                         ms(r.get("p90")), ms(r.get("p95")), ms(r.get("p99")), ms(r.get("ok_p95")),
                         share(r.get("rejected_share")),
                         num(r.get("failed"))])
        if rows:
            out.append(table(["document", "VUs", "rate limit", "answered/s", "ok/s", "p90", "p95", "p99", "ok p95",
                              "429 share", "other failures"], rows))
    rj = q.get("rejection")
    if rj:
        out.append("### Cost of a rejection")
        out.append(f"Grafton's CPU time (utime + stime of the process, `/proc/PID/stat`, {rj.get('clk_tck')} ticks/s) "
                   f"over a k6 run of {rj.get('rate')} requests/s for {rj.get('duration_s')} s (constant arrival "
                   "rate; a 1 s warm-up first, which also spends the rate-limited roles' allowance of "
                   f"{rj.get('per_min')}/min), divided by the requests sent. Idle, the server used "
                   f"{rj.get('idle_cpu_ms_per_s', '—')} ms of CPU per second. PostgreSQL's own CPU (the accepted "
                   "requests' queries) is not in these figures. Target: < "
                   f"{rj.get('target_ms', qos.TARGET_REJECT_CPU_MS)} ms per rejected request.")
        if rj.get("error"):
            out.append(f"Not measured: {rj['error']}.")
        rows = []
        for r in rj.get("runs", []):
            if r.get("error"):
                rows.append([r["kind"], "—", "—", "—", "—", "—", "—", "—", "—", r["error"]])
                continue
            per = r.get("cpu_ms_per_request")
            expected = r.get("expected", "")
            expected = expected.replace("_", "-") if expected in qos.OUTCOMES[1:6] else expected
            rows.append([r["kind"], num(r.get("requests")), rate(r.get("rps")),
                         f"{qos.outcomes_text(r.get('outcomes') or {})} ({share(r.get('expected_share'))} {expected})",
                         f"{r.get('cpu_ms', 0):,.0f}", f"{per:.4f}" if per is not None else "—",
                         f"±{r['resolution_ms_per_request']:.4f}" if r.get("resolution_ms_per_request") else "—",
                         f"{r['above_floor_ms']:+.4f}" if r.get("above_floor_ms") is not None else "—",
                         ms(r.get("p50")), _verdict(r["verdict"]) if r.get("verdict") else "(comparison)"])
        if rows:
            out.append(table(["kind", "requests", "req/s", "outcomes", "CPU ms", "CPU ms / request",
                              "resolution", "above the 404", "p50 ms",
                              f"< {rj.get('target_ms', qos.TARGET_REJECT_CPU_MS)} ms"], rows))
            out.append("\n".join(f"- `{k}`: {t}" for k, t in (rj.get("kinds") or {}).items()))
    return "\n\n".join(out)


def machine_note(a: dict) -> str:
    m = a.get("machine_cpu")
    if not m or m.get("busy_share") is None:
        return ""
    rest = m["busy_s"] - (a.get("cpu_s") or 0) - (m.get("k6_s") or 0)
    return (f" Over the run the machine's {m.get('cores', '?')} cores were {100 * m['busy_share']:.0f}% busy "
            f"({m['busy_s']:.1f} of {m['total_s']:.1f} core-seconds): Grafton {a.get('cpu_s', '—')} s, k6 "
            f"{m.get('k6_s', '—')} s, the rest (PostgreSQL, and anything else running on the machine) {rest:.1f} s.")


def refused_text(v: dict) -> str:
    """"overloaded 7.9%" from a variant's refusals over its requests."""
    refused, n = v.get("refused") or {}, v.get("requests") or 0
    if not n or not any(refused.values()):
        return "—"
    return ", ".join(f"{qos.outcomes_text({k: c}).rsplit(' ', 1)[0]} {share(c / n)}"
                     for k, c in refused.items() if c)


def json_brief(v) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {json_brief(x)}" for k, x in v.items()) + "}"
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


def qos_targets(results) -> list[list[str]]:
    q = results.get("qos") or {}
    rows = []
    a = q.get("attack") or {}
    if a.get("cheap"):
        v = qos.attack_verdicts(a)
        rows.append([f"qos attack: cheap requests' p95 < {a.get('target_p95_ms', qos.TARGET_CHEAP_P95_MS):.0f} ms, "
                     "no errors",
                     f"p95 {ms(a['cheap'].get('p95'))} ms, {a['cheap'].get('errors')} errors", _verdict(v["cheap"])])
        rows.append([f"qos attack: Grafton RSS < {a.get('target_rss_mb', qos.TARGET_RSS_MB):.0f} MB",
                     mb((a.get("rss") or {}).get("peak_kb")), _verdict(v["rss"])])
    o = q.get("overhead") or {}
    if o.get("summary"):
        v, worst = qos.overhead_verdict(o["summary"], o.get("target", qos.TARGET_OVERHEAD))
        refused = [f"{r['query']} {x} {refused_text(r[x])}" for r in o["summary"] for x in qos.VARIANTS
                   if refused_text(r[x]) != "—"]
        rows.append([f"qos: every limit on costs < {100 * o.get('target', qos.TARGET_OVERHEAD):.0f}% throughput",
                     (f"on / off {span([r['ratio'] for r in o['summary'] if r.get('ratio')], '{:.3f}')} "
                      f"(ok/s, medians of {o.get('reps')})" if worst is not None else "—")
                     + ("; refused: " + ", ".join(refused) if refused else ""),
                     _verdict(v)])
    for r in (q.get("rejection") or {}).get("runs", []):
        if r.get("verdict") and r.get("cpu_ms_per_request") is not None:
            rows.append([f"qos: CPU per rejected request ({r['kind']}) < "
                         f"{q['rejection'].get('target_ms', qos.TARGET_REJECT_CPU_MS)} ms",
                         f"{r['cpu_ms_per_request']:.4f} ms", _verdict(r["verdict"])])
    return rows


def render(results: dict) -> str:
    """The whole summary.md."""
    mode = results.get("mode", "?")
    dur = results.get("duration_s")
    head = [f"# Grafton benchmark, {results.get('started_utc', '?')} ({mode})",
            f"`{results.get('command', 'bench/run')}`: {num(results.get('rows'))} rows per main "
            f"table, limit {results.get('limit', 50)}, pool {results.get('pool', 20)} per server"
            + (f", {int(dur) // 60}m {int(dur) % 60:02d}s" if dur is not None else "")
            + ". Raw k6/pgbench output in `raw/` (not committed), all numbers in `results.json`."]
    if results.get("rows") and results["rows"] < 100_000:
        head.append(f"*Note: the queries draw `id_gt` and primary keys up to 100,000; with "
                    f"{results['rows']:,} rows many requests return fewer rows than the limit.*")
    parts = head + [machine_section(results), targets_section(results), fixed_section(results),
                    capacity_section(results), memory_section(results), ceiling_section(results),
                    writes_section(results), auth_section(results), qos_section(results), subs.section(results),
                    ops.section(results)]
    later = [f"- {k}: {results[k]['status']}" for k in ("writes", "auth", "qos", "subscriptions")
             if results.get(k) and results[k].get("status", "ok") != "ok"]
    if later:
        parts.append("## Not yet measured\n\n" + "\n".join(later))
    if results.get("errors"):
        parts.append("## Errors\n\n" + "\n".join(f"- {e}" for e in results["errors"]))
    return "\n\n".join(p for p in parts if p) + "\n"


def chart_files(results: dict) -> dict[str, str]:
    """{"<query>-throughput.svg": svg, "<query>-p95.svg": svg} for each fixed query;
    the pgbench ceiling is drawn dashed on the throughput chart when measured."""
    fx = results.get("fixed", {})
    idx = _fixed_index(results)
    ceiling = results.get("ceiling", {}).get("runs", [])
    out = {}
    for q in fx.get("queries", []):
        def series(key):
            s = []
            for sys in _systems(results):
                pts = [(v, idx[(sys, q, v)].get(key)) for v in fx.get("levels", []) if (sys, q, v) in idx]
                if pts:
                    s.append({"name": label(sys), "points": pts})
            return s
        thr = series("rps")
        pg = [(r["vus"], r.get("tps")) for r in ceiling if r["query"] == q]
        if pg:
            thr.append({"name": label("pgbench"), "points": pg, "dashed": True})
        out[f"{q}-throughput.svg"] = charts.line_chart(
            f"{q}: throughput", "concurrent users (VUs)", "requests/s", thr)
        out[f"{q}-p95.svg"] = charts.line_chart(
            f"{q}: p95 latency", "concurrent users (VUs)", "p95 latency (ms)", series("p95"), log_y=True)
    w = results.get("writes", {})
    widx = _writes_index(results)
    for name in w.get("writes", []):
        def wseries(key):
            s = []
            for sys in _systems(results):
                pts = [(v, widx[(sys, name, v)].get(key)) for v in w.get("levels", [])
                       if (sys, name, v) in widx and widx[(sys, name, v)].get(key) is not None]
                if pts:
                    s.append({"name": label(sys), "points": pts})
            return s
        rows_s = wseries("rows_per_s")
        if not rows_s:
            continue
        out[f"writes-{name}-rows.svg"] = charts.line_chart(
            f"{name}: rows written per second", "concurrent users (VUs)", "rows/s", rows_s)
        out[f"writes-{name}-p95.svg"] = charts.line_chart(
            f"{name}: p95 latency", "concurrent users (VUs)", "p95 latency (ms)", wseries("p95"), log_y=True)
    return out
