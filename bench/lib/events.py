"""The events scenario's pure parts (no I/O here): issue 32's targets, the tables,
the trigger and the pgbench scripts, the run orders, and what the webhook's record
and the database's figures come to (percentiles, losses, duplicates, medians, the
clean-up's bound).

The scenario (bench/lib/run_events.py) runs in a database of its own on the suite's
cluster, with one `grafton serve` on it, the webhook bench/events/receiver.cjs
(Node, answers 200 at once and writes one line per call: event id, run, the
payload's created_at, when it arrived) and pgbench as the writer.
"""

from __future__ import annotations

import datetime as dt
import re
import statistics

# ----------------------------------------------------------------- targets (issue 32)
TARGET_EVENTS_PER_S = 5000.0  # delivered to a fast local webhook, default flags
TARGET_P95_MS = 200.0  # commit to webhook at a steady RATE
TARGET_WRITER_RATIO = 0.8  # insert throughput with the trigger over without

DATABASE = "grafton_events"
TABLE = "bench_events"  # the event trigger's table
PLAIN = "bench_plain"  # the same table without a trigger (the writer's cost)
TRIGGER = "bench_event"
RATE = 1000  # events a second: latency, the kill and the webhook-down runs
BATCH = 100  # rows per statement of the batch inserts
KINDS = ["one", "batch"]  # single-row inserts, BATCH-row inserts
KIND_TEXT = {"one": "single-row inserts", "batch": f"{BATCH}-row inserts"}
THROUGHPUT_CLIENTS = {"one": 4, "batch": 2}  # pgbench clients inserting
PACED_CLIENTS = 4  # pgbench clients sharing RATE
WRITER_CLIENTS = 8  # pgbench clients measuring the writer's cost
# The writer's cost: off = the table without a trigger; on = with it, Grafton
# delivering meanwhile (every process on the same two cores); held = with it,
# Grafton stopped (SIGSTOP) for the round, so only the database's own work counts.
WRITER_VARIANTS = ["off", "on", "held"]
WRITER_TEXT = {"off": "no trigger", "on": "trigger, Grafton delivering",
               "held": "trigger, Grafton stopped (SIGSTOP) during the round"}
# Hasura's default is no retry (a failed call is dead at once); the webhook-down runs
# need retries, so the trigger has them (they change nothing while the webhook answers).
RETRY_CONF = {"num_retries": 10, "interval_sec": 5, "timeout_sec": 10}
# The killed instance's claims are taken over once this old (default 360 s): the
# kill runs set it on both instances so a run does not wait six minutes.
KILL_CLAIM_TIMEOUT_S = 20
# The log-size run: the shortest retention worth having (the flag takes fractions).
RETENTION_HOURS = 0.01  # 36 s
DEFAULT_RETENTION_HOURS = 168.0
CLEANUP_INTERVAL_S = 300  # Grafton's clean-up period (crates/events/src/lib.rs; no flag)
CLEANUP_PER_PASS = 100 * 1000  # MAX_BATCHES × BATCH rows per pass (crates/events/src/cleanup.rs)
CLEANUP_PASSES = 2
# Grafton's default log filter (warn,grafton_server=info) hides the clean-up's
# `event log cleaned up deleted=N` line; the log-size instances show it.
CLEANUP_LOG = "warn,grafton_server=info,grafton_events=info"
DOWN_S = 10  # the webhook is down this long
KILL_AT_S = 8  # into a paced run: the SIGKILL, or the webhook's stop
DRAIN_MAX_S = 180  # longest wait for every event to be delivered after a run
START_S = 2  # starting a Grafton (estimate)


def tables_sql() -> str:
    cols = ("(id bigserial PRIMARY KEY, run int NOT NULL, total numeric NOT NULL, note text NOT NULL, "
            "at timestamptz NOT NULL DEFAULT now())")
    return f"CREATE TABLE {TABLE} {cols};\nCREATE TABLE {PLAIN} {cols};\n"


def trigger_request(webhook: str) -> dict:
    """The metadata call that creates the insert trigger on TABLE."""
    return {"type": "pg_create_event_trigger", "args": {
        "name": TRIGGER, "table": TABLE, "webhook": webhook, "insert": {"columns": "*"},
        "retry_conf": dict(RETRY_CONF)}}


def script(kind: str, table: str = TABLE) -> str:
    """A pgbench script: one insert of one row or of BATCH rows, tagged with `:run`."""
    if kind == "one":
        return f"INSERT INTO {table} (run, total, note) VALUES (:run, 12.5, 'order');\n"
    return (f"INSERT INTO {table} (run, total, note) SELECT :run, g * 1.5, 'order ' || g "
            f"FROM generate_series(1, {BATCH}) g;\n")


def throughput_argv(pgbench: str, url: str, script_path: str, kind: str, events: int, run: int) -> list[str]:
    """pgbench inserting `events` rows in `kind` statements, as fast as it can."""
    clients = THROUGHPUT_CLIENTS[kind]
    per_tx = 1 if kind == "one" else BATCH
    tx = max(1, events // (clients * per_tx))
    return [pgbench, "-n", "-M", "prepared", "-c", str(clients), "-j", str(min(2, clients)), "-t", str(tx),
            "-D", f"run={run}", "-f", script_path, url]


def paced_argv(pgbench: str, url: str, script_path: str, seconds: int, run: int, rate: int = RATE) -> list[str]:
    """pgbench sending single-row inserts at `rate` a second (Poisson arrivals) for `seconds`."""
    return [pgbench, "-n", "-M", "prepared", "-c", str(PACED_CLIENTS), "-j", "2", "-R", str(rate),
            "-T", str(seconds), "-D", f"run={run}", "-f", script_path, url]


def writer_argv(pgbench: str, url: str, script_path: str, seconds: int, run: int) -> list[str]:
    return [pgbench, "-n", "-M", "prepared", "-c", str(WRITER_CLIENTS), "-j", "2", "-T", str(seconds),
            "-D", f"run={run}", "-f", script_path, url]


def throughput_order(rounds: int) -> list[tuple[int, str]]:
    """(round, kind): every kind per round, their order alternating from round to round."""
    return [(r, k) for r in range(rounds) for k in (KINDS if r % 2 == 0 else list(reversed(KINDS)))]


def writer_order(rounds: int) -> list[tuple[int, str]]:
    """(round, variant): every variant per round, the order rotating one place a round."""
    n = len(WRITER_VARIANTS)
    return [(r, WRITER_VARIANTS[(r + i) % n]) for r in range(rounds) for i in range(n)]


# ----------------------------------------------------------------- the webhook's record

def parse_created_at(text: str) -> float:
    """The payload's created_at ("YYYY-MM-DDTHH:MM:SS.ffffffZ", UTC) as epoch seconds."""
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if "." in text else "%Y-%m-%dT%H:%M:%SZ"
    return dt.datetime.strptime(text, fmt).replace(tzinfo=dt.timezone.utc).timestamp()


def parse_receipts(text: str) -> list[tuple[str, str, float | None, float]]:
    """The receiver's lines `id run created_at received_ms` as (id, run, created epoch s,
    received epoch s); lines that do not parse are left out."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 4:
            continue
        try:
            received = float(parts[3]) / 1000
        except ValueError:
            continue
        try:
            created = parse_created_at(parts[2])
        except ValueError:
            created = None
        out.append((parts[0], parts[1], created, received))
    return out


def percentile(values: list[float], p: float) -> float | None:
    """The p-th percentile (0–100), linear between the closest ranks (numpy's default)."""
    if not values:
        return None
    xs = sorted(values)
    k = (len(xs) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def latency_ms(receipts: list[tuple], run: int | str) -> dict:
    """Capture-to-webhook latency of one run's events (each event's first call): n,
    p50, p95, p99, max in ms."""
    first: dict[str, float] = {}
    for eid, r, created, received in receipts:
        if r == str(run) and created is not None and eid not in first:
            first[eid] = (received - created) * 1000
    xs = list(first.values())
    return {"n": len(xs), **{f"p{p}": _round(percentile(xs, p)) for p in (50, 95, 99)},
            "max": _round(max(xs) if xs else None)}


def delivery_counts(receipts: list[tuple], run: int | str, inserted: int) -> dict:
    """What one run's webhook got against what was inserted: the distinct events, the
    calls, the duplicates (calls past the first per event) and the events lost."""
    ids = [eid for eid, r, _, _ in receipts if r == str(run)]
    distinct = len(set(ids))
    return {"inserted": inserted, "received": distinct, "calls": len(ids), "duplicates": len(ids) - distinct,
            "lost": inserted - distinct}


def _round(v, digits: int = 1):
    return None if v is None else round(v, digits)


# ----------------------------------------------------------------- summaries

def stats(values: list[float]) -> dict | None:
    """Median, min and max of the measured values (None left out)."""
    xs = [v for v in values if v is not None]
    if not xs:
        return None
    return {"n": len(xs), "median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def throughput_summary(runs: list[dict]) -> list[dict]:
    """Per kind: the rounds' events/s and CPU per 1,000 events (median, min, max)."""
    out = []
    for kind in KINDS:
        mine = [r for r in runs if r.get("kind") == kind and not r.get("error")]
        if mine:
            out.append({"kind": kind, "events_per_s": stats([r.get("events_per_s") for r in mine]),
                        "cpu_s_per_1000": stats([r.get("cpu_s_per_1000") for r in mine]),
                        "insert_per_s": stats([r.get("insert_per_s") for r in mine]), "cpu": cpu_summary(mine)})
    return out


def writer_summary(runs: list[dict]) -> dict:
    """Per variant the rounds' inserts/s; on / off and held / off from the medians,
    and per round (the rounds' ratios, to show the spread)."""
    by = {v: [r for r in runs if r.get("variant") == v and r.get("tps")] for v in WRITER_VARIANTS}
    s = {v: stats([r["tps"] for r in rows]) for v, rows in by.items()}
    out = {"variants": s, "drain_events_per_s": stats([r.get("drain_events_per_s") for r in by["held"]])}
    for v in ("on", "held"):
        if s.get(v) and s.get("off"):
            out[f"{v}_ratio"] = s[v]["median"] / s["off"]["median"]
            rounds = sorted({r["round"] for r in by[v]} & {r["round"] for r in by["off"]})
            out[f"{v}_round_ratios"] = [
                next(r["tps"] for r in by[v] if r["round"] == k) / next(r["tps"] for r in by["off"] if r["round"] == k)
                for k in rounds]
    return out


def latency_summary(runs: list[dict]) -> dict | None:
    """The paced runs' medians (achieved rate, percentiles at the webhook and in the
    log, CPU) and the worst p95."""
    ok = [r for r in runs if not r.get("error") and (r.get("webhook") or {}).get("p95") is not None]
    if not ok:
        return None
    med = lambda xs: stats(xs)  # noqa: E731
    return {"rounds": len(ok), "rate": med([r.get("achieved_rate") for r in ok]),
            **{f"webhook_{p}": med([r["webhook"].get(p) for r in ok]) for p in ("p50", "p95", "p99", "max")},
            **{f"log_{p}": med([(r.get("log") or {}).get(p) for r in ok]) for p in ("p50", "p95", "p99")},
            "cpu_s_per_1000": med([r.get("cpu_s_per_1000") for r in ok]), "cpu": cpu_summary(ok)}


CPU_PARTS = ["grafton", "postgres", "webhook", "client"]


def cpu_split(c0: dict, c1: dict, clk: int, events: int) -> dict | None:
    """Where the machine's CPU went between two readings, in seconds per 1,000 events:
    Grafton, PostgreSQL (the postmaster's tree), the webhook, the client (pgbench and the
    orchestrator), every other process (the machine's busy time less those), and the
    share of the cores busy. A reading is {grafton, postgres, webhook: ticks, client: s,
    machine: /proc/stat's cpu line}."""
    if not events or not c0.get("machine") or not c1.get("machine"):
        return None
    m0, m1 = c0["machine"], c1["machine"]
    total = sum(m1[:8]) - sum(m0[:8])  # user … steal
    idle = (m1[3] + m1[4]) - (m0[3] + m0[4])
    busy = (total - idle) / clk
    out, known = {}, 0.0
    for k in CPU_PARTS:
        a, b = c0.get(k), c1.get(k)
        if a is None or b is None:
            out[k] = None
            continue
        s = (b - a) if k == "client" else (b - a) / clk
        known += s
        out[k] = round(1000 * s / events, 4)
    out["other"] = round(1000 * max(0.0, busy - known) / events, 4)
    out["busy"] = round(1000 * busy / events, 4)
    out["busy_share"] = round((total - idle) / total, 3) if total else None
    return out


def cpu_summary(runs: list[dict]) -> dict | None:
    """The median of each part of the runs' cpu_split."""
    splits = [r["cpu"] for r in runs if r.get("cpu")]
    if not splits:
        return None
    return {k: (stats([s.get(k) for s in splits]) or {}).get("median")
            for k in CPU_PARTS + ["other", "busy", "busy_share"]}


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else "met" if ok else "missed"


def cleanup_bound(bytes_per_event: float | None, rate: float, retention_s: float,
                  interval_s: float = CLEANUP_INTERVAL_S, per_pass: int = CLEANUP_PER_PASS) -> dict:
    """What the default clean-up lets the log grow to at `rate` events a second: a pass
    every `interval_s` deletes at most `per_pass` events older than the retention, so it
    keeps up with at most per_pass / interval_s events a second; below that the log
    holds at most rate × (retention + interval) events, above it grows without bound."""
    keeps_up = per_pass / interval_s
    out = {"rate": rate, "retention_s": retention_s, "interval_s": interval_s, "per_pass": per_pass,
           "cleanup_max_rate": round(keeps_up, 1), "bounded": rate <= keeps_up}
    if rate <= keeps_up:
        rows = rate * (retention_s + interval_s)
        out["max_events"] = round(rows)
        out["max_bytes"] = round(rows * bytes_per_event) if bytes_per_event else None
    else:
        out["growth_events_per_s"] = round(rate - keeps_up, 1)
        out["growth_bytes_per_day"] = round((rate - keeps_up) * 86400 * bytes_per_event) if bytes_per_event else None
    return out


_CLEANED = re.compile(r"event log cleaned up.*?deleted\S*?=\S*?(\d+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def cleaned_counts(log_text: str) -> list[int]:
    """The `deleted` of each `event log cleaned up` line of a Grafton log."""
    return [int(m.group(1)) for m in _CLEANED.finditer(_ANSI.sub("", log_text))]


def run_verdicts(results: dict) -> dict:
    """met / missed / n/a per target from the scenario's results."""
    e = results or {}
    thr = {t["kind"]: t for t in e.get("throughput_summary") or []}
    lat = e.get("latency_summary") or {}
    wr = e.get("writer_summary") or {}
    worst = min((t["events_per_s"]["median"] for t in thr.values() if t.get("events_per_s")), default=None)
    p95 = (lat.get("webhook_p95") or {}).get("median")
    trials = (e.get("kill") or []) + (e.get("webhook_down") or [])
    done = [t for t in trials if not t.get("error")]
    return {
        "throughput": verdict(None if worst is None else worst >= TARGET_EVENTS_PER_S),
        "latency": verdict(None if p95 is None else p95 < TARGET_P95_MS),
        "writer": verdict(None if wr.get("on_ratio") is None else wr["on_ratio"] >= TARGET_WRITER_RATIO),
        "nothing_lost": verdict(None if not done else all(t.get("lost") == 0 and not t.get("dead") for t in done)),
    }


def stats_delta(before: dict, after: dict) -> dict:
    """What each table's (and the database's) counters moved by between two readings;
    `n_dead_tup`, a level, is kept as it was after."""
    out = {}
    for name, now in after.items():
        was = before.get(name, {})
        out[name] = {k: (v if k == "n_dead_tup" else v - was.get(k, 0)) for k, v in now.items()}
    return out


def stats_text(delta: dict) -> str:
    """The readings that say where the database's work went, on one line."""
    log = delta.get("event_log", {})
    db = delta.get("database", {})
    return (f"event_log: {log.get('seq_scan', 0)} seq scans reading {log.get('seq_tup_read', 0):,} rows, "
            f"{log.get('idx_scan', 0):,} index scans, {log.get('n_tup_upd', 0):,} updates "
            f"({log.get('n_tup_hot_upd', 0):,} HOT), {log.get('n_dead_tup', 0):,} dead after, "
            f"{log.get('autovacuum_count', 0)} autovacuums; database: {db.get('xact_commit', 0):,} commits, "
            f"{db.get('tup_returned', 0):,} rows returned")
