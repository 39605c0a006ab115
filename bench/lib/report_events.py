"""The report's events section and its targets (pure)."""

from __future__ import annotations

import events as ev
from report_fmt import met_text, num, table


def spread(s: dict | None, digits: int = 0, unit: str = "") -> str:
    """"median (min–max)" of a stats dict, or the one value when there is one round."""
    if not s:
        return "—"
    f = lambda v: f"{v:,.{digits}f}{unit}"  # noqa: E731
    return f(s["median"]) if s["n"] == 1 or s["min"] == s["max"] else f"{f(s['median'])} ({f(s['min'])}–{f(s['max'])})"


def mbytes(b) -> str:
    if b is None:
        return "—"
    return f"{b / 1e9:,.1f} GB" if b >= 1e10 else f"{b / 1e6:,.1f} MB"


def cpu_table(rows: list[tuple[str, dict | None]]) -> str:
    """Where the CPU went, seconds per 1,000 events (medians over the rounds)."""
    f = lambda v: "—" if v is None else f"{v:.3f}"  # noqa: E731
    body = [[name, *(f(c.get(k)) for k in ev.CPU_PARTS + ["other", "busy"]),
             "—" if c.get("busy_share") is None else f"{100 * c['busy_share']:.0f}%"] for name, c in rows if c]
    if not body:
        return ""
    return ("CPU seconds per 1,000 events, by process (medians over the rounds; *client*: pgbench and the "
            "orchestrator; *other*: the machine's busy time less those, i.e. every other process; *busy*: the "
            "machine's, share of both cores in the last column), from `/proc` and `/proc/stat` around each run:\n\n"
            + table(["run", "Grafton", "PostgreSQL", "webhook", "client", "other", "machine busy", "cores busy"],
                    body))


def events_targets(results: dict) -> list[list[str]]:
    e = results.get("events")
    if not e or e.get("status", "ok") != "ok":
        return []
    v = ev.run_verdicts(e)
    t = e.get("targets") or {}
    rows = []
    thr = e.get("throughput_summary") or []
    if thr:
        rows.append([f"events: ≥ {t.get('events_per_s', ev.TARGET_EVENTS_PER_S):,.0f} events/s delivered "
                     "(single-row and 100-row inserts, default flags)",
                     "; ".join(f"{ev.KIND_TEXT[s['kind']]} {spread(s['events_per_s'])}" for s in thr),
                     met_text(v["throughput"])])
    lat = e.get("latency_summary")
    if lat:
        rows.append([f"events: p95 commit-to-webhook < {t.get('p95_ms', ev.TARGET_P95_MS):.0f} ms at "
                     f"{e.get('rate', ev.RATE):,}/s", f"{spread(lat['webhook_p95'], 1, ' ms')} "
                     f"(at {spread(lat['rate'])} events/s)", met_text(v["latency"])])
    wr = e.get("writer_summary") or {}
    if wr.get("on_ratio") is not None:
        rows.append([f"events: writer's inserts/s with the trigger ≥ {t.get('writer_ratio', ev.TARGET_WRITER_RATIO)}"
                     "× without", f"{wr['on_ratio']:.2f}× (Grafton delivering)"
                     + (f"; {wr['held_ratio']:.2f}× with Grafton stopped" if wr.get("held_ratio") else ""),
                     met_text(v["writer"])])
    trials = [x for x in (e.get("kill") or []) + (e.get("webhook_down") or []) if not x.get("error")]
    if trials:
        lost = sum(x.get("lost") or 0 for x in trials)
        dead = sum(x.get("dead") or 0 for x in trials)
        dups = sum(x.get("duplicates") or 0 for x in trials)
        rows.append(["events: nothing lost (SIGKILL of Grafton, webhook down)",
                     f"{lost} lost, {dead} dead, {dups} duplicates over {len(trials)} runs",
                     met_text(v["nothing_lost"])])
    return rows


def events_section(results: dict) -> str:
    e = results.get("events")
    if not e:
        return ""
    if e.get("status", "ok") != "ok":
        return f"## Event triggers\n\n{e['status']}"
    rate = e.get("rate", ev.RATE)
    out = ["## Event triggers",
           f"One `grafton serve` (default flags unless said) on a database of its own ({e.get('database')}), an "
           f"insert trigger on `{e.get('table')}` (retry_conf {e.get('retry_conf')}), the webhook "
           "`bench/events/receiver.cjs` (Node, answers 200 at once, records each call), pgbench as the writer. "
           f"PostgreSQL, the webhook, Grafton and pgbench share the machine's {e.get('cores', '?')} cores. "
           "Grafton's CPU: utime + stime from /proc/PID/stat."]
    thr = e.get("throughput") or []
    if thr:
        out.append(f"### Throughput\n\n{e.get('throughput_events', 0):,} events per run, inserted as fast as pgbench "
                   f"can ({', '.join(f'{ev.KIND_TEXT[k]}: {c} clients' for k, c in (e.get('clients') or {}).items())}); "
                   "events/s from the first event's capture to the last one's `delivered_at` (the log's clock); "
                   f"{e.get('rounds')} rounds, the kinds alternating; median (min–max).")
        rows = [[ev.KIND_TEXT[s["kind"]], spread(s["events_per_s"]), spread(s["insert_per_s"]),
                 spread(s["cpu_s_per_1000"], 3, " s")] for s in e.get("throughput_summary") or []]
        out.append(table(["inserts", "events/s delivered", "rows/s inserted", "Grafton CPU per 1,000 events"], rows))
        out.append(cpu_table([(ev.KIND_TEXT[s["kind"]], s.get("cpu")) for s in e.get("throughput_summary") or []]
                             + [(f"{rate:,} events/s (latency runs)", (e.get("latency_summary") or {}).get("cpu"))]))
    lat = e.get("latency") or []
    if lat:
        out.append(f"### Latency at {rate:,} events/s\n\npgbench `-R {rate}` (Poisson arrivals, "
                   f"{e.get('paced_clients')} clients), single-row inserts, {e.get('latency_s')} s per round. "
                   "*webhook*: the receiver's clock at the call minus the payload's `created_at` (the inserting "
                   "transaction's `now()`, a fraction of a millisecond before its commit here), each event's first "
                   "call; *log*: `delivered_at − created_at` in the event log (`delivered_at` is written by the "
                   "batched recorder, after the call). Milliseconds.")
        rows = [[str(r["round"]), num(r.get("achieved_rate")), num(r.get("events")),
                 *(num((r.get("webhook") or {}).get(p), 1) for p in ("p50", "p95", "p99", "max")),
                 *(num((r.get("log") or {}).get(p), 1) for p in ("p50", "p95", "p99")),
                 num(r.get("cpu_s_per_1000"), 3), r.get("error", "")] for r in lat]
        out.append(table(["round", "events/s achieved", "events", "webhook p50", "p95", "p99", "max", "log p50", "p95",
                          "p99", "CPU s / 1,000", ""], rows))
    w = e.get("writer") or []
    if w:
        s = e.get("writer_summary") or {}
        rows = [[v, ev.WRITER_TEXT[v], spread((s.get("variants") or {}).get(v)),
                 ", ".join(f"{x:.2f}" for x in s.get(f"{v}_round_ratios") or []) or "—",
                 f"{s[f'{v}_ratio']:.2f}×" if s.get(f"{v}_ratio") else "—"] for v in ev.WRITER_VARIANTS]
        out.append(f"### The writer's cost\n\npgbench, {e.get('writer_clients')} clients, single-row inserts, "
                   f"{e.get('writer_s')} s per round into `{ev.TABLE}` (the trigger's table) or `{ev.PLAIN}` "
                   f"(the same columns, no trigger), {e.get('rounds')} rounds, the order rotating; every backlog "
                   "delivered before the next round.")
        out.append(table(["variant", "", "inserts/s, median (min–max)", "per round / off", "median / off"], rows))
        if s.get("drain_events_per_s"):
            out.append(f"After each *held* round Grafton resumes with the round's events waiting: it delivered "
                       f"that backlog at {spread(s['drain_events_per_s'])} events/s (the writer idle).")
    trials = [("SIGKILL of Grafton", x) for x in e.get("kill") or []] + [
        ("webhook down", x) for x in e.get("webhook_down") or []]
    if trials:
        out.append(f"### Nothing lost\n\n{rate:,} single-row inserts/s for {e.get('trial_s')} s each. *SIGKILL*: "
                   f"{e.get('kill_at_s')} s in, the instance is killed and another started at once (both with "
                   f"`--events-claim-timeout {e.get('kill_claim_timeout_s')}`: the default, 360 s, would deliver the "
                   "killed instance's claimed events six minutes later); *webhook down*: "
                   f"{e.get('kill_at_s')} s in, the receiver stops (SIGTERM: it writes its record and exits; calls "
                   f"in flight get no answer) and starts again {e.get('down_s')} s later. Counted: rows inserted, "
                   "distinct event ids the webhook got, calls past the first per event (duplicates), events dead.")
        rows = []
        for kind, x in trials:
            after = x.get("all_delivered_after_kill_s", x.get("all_delivered_after_back_s"))
            rows.append([kind, str(x.get("trial")), num(x.get("inserted")), num(x.get("received")),
                         num(x.get("lost")), num(x.get("duplicates")), num(x.get("dead")),
                         num((x.get("webhook") or {}).get("max"), 0), num(after, 1), x.get("error", "")])
        out.append(table(["", "run", "inserted", "received", "lost", "duplicates", "dead", "max latency ms",
                          "all delivered after (s)", ""], rows))
    lg = e.get("log_size")
    if lg:
        a = lg.get("after_delivery") or {}
        rows = [["before (truncated)", num((lg.get("before") or {}).get("event_log_rows")),
                 num((lg.get("before") or {}).get("invocation_log_rows")),
                 mbytes((lg.get("before") or {}).get("total_bytes")), ""],
                [f"after {num(lg.get('delivered'))} delivered", num(a.get("event_log_rows")),
                 num(a.get("invocation_log_rows")), mbytes(a.get("total_bytes")),
                 f"event_log {mbytes(a.get('event_log_bytes'))}, invocation logs "
                 f"{mbytes(a.get('invocation_logs_bytes'))}"]]
        for p in lg.get("passes") or []:
            rows.append([f"after clean-up pass {p['pass']} ({num(p.get('deleted'))} deleted, "
                         f"{num(p.get('seconds_from_start'), 1)} s from start)", num(p.get("event_log_rows")),
                         num(p.get("invocation_log_rows")), mbytes(p.get("total_bytes")), ""])
        out.append(f"### The log's size\n\n{num(lg.get('events'))} events ({ev.BATCH}-row inserts) on an instance "
                   f"with `{lg.get('flags')}`, delivered at {num(lg.get('events_per_s'))} events/s; sizes are "
                   "`pg_total_relation_size` (table, indexes, TOAST) of `grafton_catalog.event_log` and "
                   "`event_invocation_logs`. Each clean-up pass is the first of a fresh instance (the clean-up runs "
                   f"at start, then every {lg.get('cleanup_interval_s')} s; a pass deletes at most "
                   f"{num(lg.get('cleanup_per_pass'))} events). A `DELETE` leaves the files their size: the space "
                   "is reused once (auto)vacuumed.")
        out.append(table(["", "event_log rows", "invocation rows", "total size", ""], rows))
        bounds = []
        for b in lg.get("bounds") or []:
            where = (f"≤ {num(b.get('max_events'))} events, {mbytes(b.get('max_bytes'))}" if b.get("bounded") else
                     f"grows {num(b.get('growth_events_per_s'))} events/s, "
                     f"{mbytes(b.get('growth_bytes_per_day'))} a day")
            bounds.append([num(b["rate"]), f"{b['retention_s'] / 3600:g} h", where])
        if bounds:
            out.append(f"At {num(lg.get('bytes_per_event'))} bytes per event (measured above), the default clean-up "
                       f"keeps up with at most {num((lg.get('bounds') or [{}])[0].get('cleanup_max_rate'))} "
                       "events/s; below that the log holds at most rate × (retention + interval):")
            out.append(table(["events/s", "retention", "the log"], bounds))
    return "\n\n".join(out)
