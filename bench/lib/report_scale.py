"""The report's scale section and targets (pure)."""

from __future__ import annotations

import scale
from report_fmt import clip, met_text, ms, num, rate, share, table

BOUND_TEXT = {"grafton": "instances' CPU", "database": "database's CPU", "client": "client's CPU",
              "shared": "the shared cores", None: "—"}


def _f(v, digits: int = 1) -> str:
    return "—" if v is None else f"{v:,.{digits}f}"


def _ratio(v) -> str:
    return "—" if v is None else f"{v:.3f}"


def _model(p: dict | None) -> str:
    if not p or p.get("rps") is None:
        return "—"
    return f"{rate(p['rps'])} ({BOUND_TEXT.get(p.get('bound'), p.get('bound'))})"


def scale_section(results) -> str:
    s = results.get("scale")
    if not s:
        return ""
    if str(s.get("status", "")).startswith("skipped"):
        return f"## Scale-out (scale)\n\n{s['status']}\n"
    cores, pool = s.get("cores", "?"), s.get("pool", results.get("pool", 20))
    half = s.get("pool_each_of_two", pool)
    out = ["## Scale-out (scale): two instances behind HAProxy, a read replica, a database restart",
           f"`{results.get('command', 'bench/run')}`. **Everything shares this machine's {cores} cores**: "
           "PostgreSQL (and its replica), every Grafton instance, HAProxy and the load client. A second "
           "instance adds no CPU here, so *two / one* measures what the balancer and a second instance cost, "
           "not how Grafton scales; the model below says what the same per-request costs give on separate "
           f"machines. The single instance keeps the suite's pool ({pool} connections); the two behind "
           f"HAProxy hold {half} each, and the replica-backed Grafton "
           f"{pool} on the primary plus {pool} on the replica. Closed loop ({s.get('client')}), limit "
           f"{s.get('limit')}, {s.get('duration_s')} s per run, {s.get('rounds')} rounds with the order "
           "alternating; each figure is the median of the rounds (req/s: answered requests)."]
    if results.get("mode") == "quick":
        out.append("*Quick mode: one query, one level, short runs: indicative only.*")
    if s.get("unavailable"):
        out.append("Not measured:\n\n" + "\n".join(f"- {u['part']}: {clip(u['reason'], 400)}"
                                                   for u in s["unavailable"]))
    out += balance_part(s) + replica_part(s) + recovery_part(s)
    return "\n\n".join(out) + "\n"


def balance_part(s: dict) -> list[str]:
    b = s.get("balance")
    if not b or not b.get("summary"):
        return []
    cfg = s.get("config", {})
    out = ["### One instance vs two behind HAProxy",
           f"{s.get('haproxy') or 'HAProxy'}, from `deploy/haproxy.cfg` with this run's ports "
           f"(`{cfg.get('lb1', 'config/haproxy-lb1.cfg')}`, `{cfg.get('lb2', 'config/haproxy-lb2.cfg')}`). "
           "*one direct*: loadgen → instance A; *one via HAProxy*: loadgen → HAProxy → A (the balancer's own "
           "cost); *two via HAProxy*: loadgen → HAProxy → B and C (half A's pool each). Latencies in ms."]
    rows = []
    for r in b["summary"]:
        a, l1, l2 = r.get("direct", {}), r.get("lb1", {}), r.get("lb2", {})
        via = l2["rps"] / l1["rps"] if l1.get("rps") and l2.get("rps") else None
        rows.append([r["query"], str(r["level"]), rate(a.get("rps")), ms(a.get("p95")), rate(l1.get("rps")),
                     ms(l1.get("p95")), rate(l2.get("rps")), ms(l2.get("p95")), _ratio(r.get("lb1_ratio")),
                     _ratio(r.get("lb2_ratio")), _ratio(via), _ratio(r.get("lb2_p95_ratio"))])
    out.append(table(["query", "clients", "one direct req/s", "p95", "one via HAProxy req/s", "p95",
                      "two via HAProxy req/s", "p95", "via HAProxy / direct", "two / one", "two / one via HAProxy",
                      "two / one p95"], rows))
    t = b.get("target") or {}
    if t.get("worst") is not None:
        out.append(f"Target: two instances behind HAProxy within {100 * (1 - t['target']):.0f}% of one instance's "
                   f"throughput (direct), at every query and level: worst two / one {t['worst']:.3f} → "
                   f"{met_text(t['verdict'])}. On {s.get('cores')} shared cores this is the price of the "
                   "extra hop and process, not a scaling figure.")
    out.append(cpu_table(b["summary"], scale.VARIANTS, s.get("db_cpu", "")))
    shares = [r["instance_share"][0] for r in b.get("runs", []) if r.get("variant") == "lb2"
              and len(r.get("instance_share") or []) == 2]
    if shares:
        a_share = sorted(shares)[len(shares) // 2]
        out.append(f"Work split behind HAProxy (instance B's share of the two instances' CPU, median over "
                   f"{len(shares)} runs, range {min(shares):.2f}–{max(shares):.2f}): B {a_share:.2f}, "
                   f"C {1 - a_share:.2f}.")
    model = b.get("model") or []
    if model:
        out.append("The scaling model (`bench/lib/scale_model.py`): throughput(N instances, R replicas) ≈ min(N × "
                   "cores per instance / Grafton's CPU per request, (1 + R) × database cores / PostgreSQL's CPU "
                   "per request, the client's limit), and with everything on one machine X × (Grafton + "
                   "PostgreSQL + HAProxy + client CPU per request) ≤ its cores. Inputs: the one-direct run's CPU "
                   "per request and HAProxy's from the via-HAProxy run, so the two-instance figure is a "
                   "prediction, not a fit. The model's req/s and the bound that sets it, on this machine and "
                   f"with each instance and the database on {s.get('cores')} cores of their own (*separate*):")
        rows = [[m["query"], str(m["level"]), rate(m.get("measured_one")), _model(m.get("one")),
                 rate(m.get("measured_two")), _model(m.get("two")), _model(m.get("two_separate")),
                 " / ".join(_f((m.get("inputs_us") or {}).get(k)) for k in ("grafton", "db", "haproxy", "client"))]
                for m in model]
        out.append(table(["query", "clients", "one measured", "one model", "two measured", "two model",
                          "two model, separate", "µs/req in: Grafton / PG / HAProxy / client"], rows))
    return out


def cpu_table(summary: list[dict], variants: list[str], db_text: str) -> str:
    rows = []
    for r in summary:
        for v in variants:
            c = r.get(v) or {}
            if not c.get("runs"):
                continue
            rows.append([r["query"], str(r["level"]), scale.VARIANT_TEXT.get(v, v), _f(c.get("grafton_us")),
                         _f(c.get("db_us")), _f(c.get("haproxy_us")), _f(c.get("client_us")), _f(c.get("busy_us")),
                         share(c.get("busy_share"))])
    return ("CPU per request, µs (utime + stime from `/proc/<pid>/stat` over each run, divided by its requests; "
            f"medians). {db_text}. *machine*: every process, from `/proc/stat` (the rest is the kernel, the "
            "runner and anything else running); *busy*: the share of the cores in use.\n\n"
            + table(["query", "clients", "setup", "Grafton", "PostgreSQL", "HAProxy", "client", "machine",
                     "busy"], rows))


def replica_part(s: dict) -> list[str]:
    r = s.get("replica")
    if not r:
        return []
    out = ["### Primary + 1 streaming replica vs the primary alone"]
    if r.get("status", "ok") != "ok":
        out.append(f"*{r['status']}*")
    if r.get("replica"):
        out.append(f"Replica `{r['replica']}`" + (f": {r['started']}" if r.get("started") else "")
                   + ". Grafton sends every read to a replica while one is up (mutations to the primary).")
    rows = []
    for x in r.get("summary") or []:
        p, q = x.get("primary", {}), x.get("replica", {})
        reads = [y.get("replica_reads") for y in r.get("runs", []) if y.get("variant") == "replica"
                 and (y["query"], y["level"]) == (x["query"], x["level"]) and y.get("replica_reads") is not None]
        sent = [y.get("requests") for y in r.get("runs", []) if y.get("variant") == "replica"
                and (y["query"], y["level"]) == (x["query"], x["level"]) and y.get("replica_reads") is not None]
        on = share(sum(reads) / sum(sent)) if reads and sum(sent) else "—"
        rows.append([x["query"], str(x["level"]), rate(p.get("rps")), ms(p.get("p95")), rate(q.get("rps")),
                     ms(q.get("p95")), _ratio(x.get("replica_ratio")), _ratio(x.get("replica_p95_ratio")), on])
    if rows:
        out.append(table(["query", "clients", "primary alone req/s", "p95", "with replica req/s", "p95",
                          "replica / primary", "p95 ratio", "reads answered by the replica"], rows))
        out.append(cpu_table(r["summary"], scale.REPLICA_VARIANTS, "PostgreSQL: both clusters summed"))
    model = r.get("model") or []
    if any((m.get("replica") or {}).get("rps") for m in model):
        out.append("Model with R = 1 (reads on the replica only), from the replica run's own CPU per request: "
                   + "; ".join(f"{m['query']} at {m['level']}: {_model(m['replica'])}, measured "
                               f"{rate(m.get('measured'))}" for m in model) + ".")
    out += lag_part(r.get("lag"))
    return out


def lag_part(lag: dict | None) -> list[str]:
    if not lag:
        return []
    if lag.get("error"):
        return [f"Replica lag not measured: {lag['error']}."]
    out = [f"**Replica lag under writes.** {lag.get('writer')}: target {lag.get('rate')} inserts/s, "
           f"{num(lag.get('rows'))} rows written over {_f(lag.get('write_span_s'))} s "
           f"({_f(lag.get('achieved_rate'))} a second), while {lag.get('clients')} clients read "
           f"({', '.join(lag.get('queries') or [])}, {lag.get('duration_s')} s each) from the {lag.get('reads_on')} "
           f"Grafton. Sampled every {lag.get('sample_s')} s ({lag.get('samples')} samples): the primary's "
           "`pg_stat_replication` (`replay_lag`, NULL while the standby has nothing to replay, counted as 0; "
           "`pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)`) and Grafton's `/metrics`."]
    sm = lag.get("summary") or {}
    names = [("pg_replay_lag_s", "PostgreSQL replay_lag", "s"), ("pg_lag_bytes", "PostgreSQL WAL not replayed", "B"),
             ("grafton_lag_s", "Grafton grafton_replica_lag_seconds", "s"),
             ("grafton_lag_bytes", "Grafton grafton_replica_lag_bytes", "B")]
    rows = []
    for key, text, unit in names:
        x = sm.get(key) or {}
        fmt = (lambda v: "—" if v is None else f"{v * 1000:.1f} ms") if unit == "s" else (
            lambda v: "—" if v is None else f"{v:,.0f} B")
        rows.append([text, fmt(x.get("median")), fmt(x.get("max")), str(x.get("n", 0))])
    out.append(table(["series", "median", "max", "samples"], rows))
    reads = lag.get("reads") or {}
    if reads:
        out.append("Reads meanwhile: " + "; ".join(
            f"{q} {rate(v.get('ok_rps'))} req/s, p95 {ms(v.get('p95'))} ms" for q, v in reads.items()) + ".")
    return out


def recovery_part(s: dict) -> list[str]:
    rec = s.get("recovery")
    if not rec or not rec.get("trials"):
        return []
    out = ["### Recovery after a PostgreSQL restart",
           f"A fresh Grafton PG per restart; {rec.get('clients')} clients each send `{rec.get('query')}` at most "
           f"every {1000 * rec.get('interval_s', 0):.0f} ms (a client-side timeout of {rec.get('timeout_s'):.0f} s: "
           f"a request reaching it is *hung*); after 2 s, `{rec.get('restart')}` of the suite's cluster. "
           f"`{rec.get('poll')}` every {1000 * rec.get('poll_s', 0.01):.0f} ms times the database: down at the "
           "first refused poll, back at the next accepting one. *Recovery*: back → Grafton's first 200 with data. *Gap*: Grafton's last 200 before the database "
           "was back → its first after."]
    rows = []
    for t in rec["trials"]:
        if t.get("error"):
            rows.append([str(t["round"]), "—", "—", "—", "—", "—", "—", "—", clip(t["error"], 200)])
            continue
        other = {k: v for k, v in (t.get("outcomes") or {}).items()
                 if k not in ("ok", "hung", "database-unavailable")}
        rows.append([str(t["round"]), _f(t.get("db_down_s"), 3), _f(t.get("recovery_s"), 3),
                     _f(t.get("grafton_gap_s"), 3), num(t.get("requests")), str(t.get("hung", 0)),
                     str(t.get("unavailable_503", 0)), ", ".join(f"{k} {v}" for k, v in other.items()) or "0",
                     "yes" if t.get("alive") else "**no (crashed)**"])
    out.append(table(["restart", "database down (s)", "recovery (s)", "gap (s)", "requests", "hung",
                      "503 database-unavailable", "other failures", "Grafton alive after"], rows))
    sm = rec.get("summary") or {}
    r = sm.get("recovery_s") or {}
    if sm:
        out.append(f"Recovery over {sm.get('trials')} restarts: median {_f(r.get('median'), 3)} s, max "
                   f"{_f(r.get('max'), 3)} s (target < {rec.get('target_s')} s: "
                   f"{met_text(sm.get('verdict_recovery'))}); hung requests {sm.get('hung')} (target 0: "
                   f"{met_text(sm.get('verdict_hung'))}); Grafton crashes {sm.get('crashes')} "
                   f"({met_text(sm.get('verdict_crashes'))}); 503 database-unavailable answers "
                   f"{sm.get('unavailable_503')} in all.")
    return out


def scale_targets(results) -> list[list[str]]:
    """Rows of the summary's targets table."""
    s = results.get("scale") or {}
    rows = []
    t = (s.get("balance") or {}).get("target") or {}
    if t.get("worst") is not None:
        rows.append([f"two instances behind HAProxy within {100 * (1 - t['target']):.0f}% of one "
                     f"(throughput; {s.get('cores')} shared cores)", f"worst two / one {t['worst']:.3f}",
                     met_text(t["verdict"])])
    sm = (s.get("recovery") or {}).get("summary") or {}
    if sm.get("trials"):
        r = sm.get("recovery_s") or {}
        rows.append([f"recovery after a PostgreSQL restart < {scale.TARGET_RECOVERY_S:g} s",
                     f"median {_f(r.get('median'), 3)} s, max {_f(r.get('max'), 3)} s over {sm['trials']}",
                     met_text(sm.get("verdict_recovery"))])
        rows.append(["no hung request during a restart", f"{sm.get('hung')} hung; {sm.get('crashes')} crashes",
                     met_text("met" if sm.get("verdict_hung") == "met" and sm.get("verdict_crashes") == "met"
                              else "missed")])
    return rows
