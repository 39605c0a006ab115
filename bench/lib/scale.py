"""The scale scenario's pure parts (no I/O here): what is compared, the run order, the
HAProxy config rendered from deploy/haproxy.cfg, parsing of /metrics and of
pg_stat_replication, the recovery timeline, and the medians. The scaling model is
scale_model.py; the runs are run_scale.py; the summary's section report_scale.py.
"""

from __future__ import annotations

import json
import re
import statistics

import scale_model

# Part 1: one instance, straight and behind HAProxy, and two instances behind HAProxy.
VARIANTS = ["direct", "lb1", "lb2"]
# Part 2: a Grafton on the primary alone, and one with --read-replica-url.
REPLICA_VARIANTS = ["primary", "replica"]
VARIANT_TEXT = {
    "direct": "one instance, direct", "lb1": "one instance behind HAProxy", "lb2": "two instances behind HAProxy",
    "primary": "primary alone", "replica": "primary + 1 streaming replica (--read-replica-url)",
}

TARGET_RATIO = 0.95  # two instances behind HAProxy within 5% of one instance's throughput
TARGET_RECOVERY_S = 2.0  # the database accepts connections → Grafton's first 200
TARGET_HUNG = 0  # requests that hit the client's timeout during the restart

WRITE_RATE = 100  # inserts a second while the replica's lag is sampled
WRITE_TABLE = "scale_writes"
WRITE_NOTE = "x" * 100  # each insert's payload: 100 bytes
LAG_SAMPLE_S = 1.0

RECOVERY_CLIENTS = 8  # the read loop during a restart: clients …
RECOVERY_INTERVAL_S = 0.02  # … each sending at most one request every 20 ms
CLIENT_TIMEOUT_S = 10.0  # a request unanswered this long counts as hung
POLL_S = 0.01  # pg_isready's period
RECOVERY_WARM_S = 2.0  # read loop before the restart
RECOVERY_AFTER_S = 2.0  # and after Grafton's first 200
RECOVERY_MAX_S = 30.0  # longest wait for the first 200 after the restart
START_S = 3  # starting a Grafton (estimate)

# The primary's view of each standby: name, replay_lag (s; empty when idle), bytes not replayed.
REPLICATION_SQL = ("SELECT application_name, COALESCE(EXTRACT(epoch FROM replay_lag)::text, ''), "
                   "COALESCE(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint::text, '') "
                   "FROM pg_stat_replication")


def write_table_sql() -> str:
    return (f"DROP TABLE IF EXISTS {WRITE_TABLE};\n"
            f"CREATE TABLE {WRITE_TABLE} (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), "
            "note text NOT NULL);\n")


def insert_sql() -> str:
    return f"INSERT INTO {WRITE_TABLE} (note) VALUES ('{WRITE_NOTE}');\n"


def run_order(queries: list[str], levels: list[int], rounds: int,
              variants: list[str]) -> list[tuple[int, str, int, str]]:
    """(round, query, level, variant): per round every query and level, the variants'
    order alternating from one (query, level) to the next and from round to round, so
    a drift of the machine falls on each variant alike."""
    out, cell = [], 0
    for rnd in range(rounds):
        for q in queries:
            for lv in levels:
                order = variants if (cell + rnd) % 2 == 0 else list(reversed(variants))
                out += [(rnd, q, lv, v) for v in order]
                cell += 1
    return out


# ----------------------------------------------------------------- HAProxy

def haproxy_config(template: str, bind_port: int, servers: list[int], host: str = "127.0.0.1") -> str:
    """deploy/haproxy.cfg with its `bind` on host:bind_port and its `server` lines
    replaced by one per port (the first server line's options kept)."""
    out, done = [], False
    for line in template.splitlines():
        words = line.split()
        if words and words[0] == "bind":
            indent = line[:len(line) - len(line.lstrip())]
            out.append(f"{indent}bind {host}:{bind_port}")
        elif words and words[0] == "server":
            if not done:
                indent = line[:len(line) - len(line.lstrip())]
                opts = " ".join(words[3:])
                out += [f"{indent}server grafton{i + 1} {host}:{p}" + (f" {opts}" if opts else "")
                        for i, p in enumerate(servers)]
                done = True
        else:
            out.append(line)
    if not done:
        raise ValueError("the template has no `server` line")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------- parsing

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def metric_values(text: str, name: str, label: str = "replica") -> dict[str, float]:
    """{value of `label`: sample} of one metric in Prometheus's text format."""
    out = {}
    for line in text.splitlines():
        m = _SAMPLE.match(line.strip())
        if not m or m.group(1) != name:
            continue
        labels = dict(_LABEL.findall(m.group(2) or ""))
        try:
            out[labels.get(label, "")] = float(m.group(3))
        except ValueError:
            continue
    return out


def grafton_lag(text: str) -> dict[str, dict]:
    """Per replica Grafton's own view: {name: {"seconds", "bytes"}} from /metrics."""
    secs = metric_values(text, "grafton_replica_lag_seconds")
    nbytes = metric_values(text, "grafton_replica_lag_bytes")
    return {r: {"seconds": secs.get(r), "bytes": nbytes.get(r)} for r in sorted(set(secs) | set(nbytes))}


def replication_rows(text: str) -> list[dict]:
    """`psql -At -F '|'` output of REPLICATION_SQL: [{"name", "replay_lag_s", "lag_bytes"}]
    (None where PostgreSQL reports nothing: replay_lag is NULL while the standby is idle)."""
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split("|")
        if len(parts) != 3:
            continue
        num = lambda s, cast: cast(s) if s.strip() else None  # noqa: E731
        try:
            rows.append({"name": parts[0], "replay_lag_s": num(parts[1], float), "lag_bytes": num(parts[2], int)})
        except ValueError:
            continue
    return rows


def stats(values: list) -> dict:
    xs = [v for v in values if v is not None]
    return {"n": len(xs), "median": statistics.median(xs) if xs else None, "max": max(xs) if xs else None}


def lag_summary(samples: list[dict]) -> dict:
    """Median and max of each lag series over the samples (each sample: {"t", "pg":
    [replication rows], "grafton": {replica: {"seconds", "bytes"}}}); a NULL replay_lag
    (the standby idle, nothing to replay) counts as 0 s."""
    pg_s, pg_b, g_s, g_b = [], [], [], []
    for s in samples:
        for r in s.get("pg") or []:
            pg_s.append(r["replay_lag_s"] if r["replay_lag_s"] is not None else 0.0)
            pg_b.append(r["lag_bytes"])
        for v in (s.get("grafton") or {}).values():
            g_s.append(v.get("seconds"))
            g_b.append(v.get("bytes"))
    return {"pg_replay_lag_s": stats(pg_s), "pg_lag_bytes": stats(pg_b),
            "grafton_lag_s": stats(g_s), "grafton_lag_bytes": stats(g_b)}


# ----------------------------------------------------------------- recovery

def classify(status: int | None, body: bytes | None) -> str:
    """A read's outcome: ok (data, no errors), the first error's code (e.g.
    database-unavailable), http_<status> without one, or transport (no answer)."""
    if status is None:
        return "transport"
    try:
        doc = json.loads(body or b"")
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        errors = doc.get("errors")
        if errors:
            code = ((errors[0] or {}).get("extensions") or {}).get("code")
            if code:
                return str(code)
        elif status == 200 and doc.get("data") is not None:
            return "ok"
    return f"http_{status}"


def recovery(records: list[tuple[float, float, str]], polls: list[tuple[float, bool]], t_restart: float,
             t_restart_done: float | None = None, alive: bool = True) -> dict:
    """One restart's timeline. records: the read loop's (sent, answered, outcome);
    polls: pg_isready's (started, accepting); t_restart: `pg_ctl restart` issued;
    t_restart_done: it returned. The database is down from the first refused poll
    after t_restart and back at the first accepting poll after that (if no poll saw
    it down, back when pg_ctl returned). Recovery: back → Grafton's first ok answer
    after it. Hung: requests that hit the client's timeout ("hung")."""
    t_down = next((t for t, ok in polls if t >= t_restart and not ok), None)
    if t_down is not None:
        t_back = next((t for t, ok in polls if t > t_down and ok), None)
    else:
        t_back = t_restart_done
    oks = sorted(t1 for _, t1, o in records if o == "ok")
    first_ok = next((t for t in oks if t_back is not None and t >= t_back), None)
    last_ok = max((t for t in oks if t_back is None or t < t_back), default=None)
    outcomes: dict[str, int] = {}
    for _, _, o in records:
        outcomes[o] = outcomes.get(o, 0) + 1
    r = lambda x: round(x, 4) if x is not None else None  # noqa: E731
    return {
        "db_down_s": r(t_back - t_down) if t_down is not None and t_back is not None else None,
        "restart_s": r(t_restart_done - t_restart) if t_restart_done is not None else None,
        "recovery_s": r(first_ok - t_back) if first_ok is not None else None,
        "grafton_gap_s": r(first_ok - last_ok) if first_ok is not None and last_ok is not None else None,
        "down_seen": t_down is not None, "recovered": first_ok is not None, "alive": alive,
        "requests": len(records), "hung": outcomes.get("hung", 0),
        "unavailable_503": outcomes.get("database-unavailable", 0),
        "outcomes": outcomes,
    }


def recovery_summary(trials: list[dict]) -> dict:
    """Median and max over the restarts, the counts summed, and the verdicts."""
    rec = [t.get("recovery_s") for t in trials]
    s = {"trials": len(trials), "recovery_s": stats(rec), "db_down_s": stats([t.get("db_down_s") for t in trials]),
         "crashes": sum(1 for t in trials if not t.get("alive", True)),
         "hung": sum(t.get("hung", 0) for t in trials),
         "unavailable_503": sum(t.get("unavailable_503", 0) for t in trials),
         "not_recovered": sum(1 for t in trials if not t.get("recovered"))}
    worst = s["recovery_s"]["max"]
    s["verdict_recovery"] = ("n/a" if not trials else "missed" if s["not_recovered"] or worst is None
                             or worst >= TARGET_RECOVERY_S else "met")
    s["verdict_hung"] = "n/a" if not trials else "met" if s["hung"] <= TARGET_HUNG else "missed"
    s["verdict_crashes"] = "n/a" if not trials else "met" if s["crashes"] == 0 else "missed"
    return s


# ----------------------------------------------------------------- medians, ratios and the model

CPU_KEYS = ("grafton_us", "db_us", "haproxy_us", "client_us", "busy_us")


def per_request_us(ticks: int | None, clk_tck: int, requests: int | None) -> float | None:
    """CPU clock ticks over a run → µs per request."""
    if ticks is None or not requests:
        return None
    return round(1e6 * ticks / clk_tck / requests, 1)


def summarise(runs: list[dict], variants: list[str]) -> list[dict]:
    """Per (query, level): per variant the median over the rounds of rps, p95 and each
    CPU per request, and the ratios of the medians to the first variant's."""
    out = []
    cells = dict.fromkeys((r["query"], r["level"]) for r in runs)
    for q, lv in cells:
        row = {"query": q, "level": lv}
        for v in variants:
            mine = [r for r in runs if (r["query"], r["level"], r["variant"]) == (q, lv, v) and not r.get("error")]

            def med(k, mine=mine):
                xs = [r[k] for r in mine if r.get(k) is not None]
                return statistics.median(xs) if xs else None
            row[v] = {"runs": len(mine), "rps": med("ok_rps"), "p95": med("p95"), "p50": med("p50"),
                      "failed_rate": med("failed_rate"), **{k: med(k) for k in CPU_KEYS},
                      "busy_share": med("busy_share")}
        base = row[variants[0]]["rps"]
        for v in variants[1:]:
            row[f"{v}_ratio"] = row[v]["rps"] / base if base and row[v]["rps"] else None
            b95, v95 = row[variants[0]]["p95"], row[v]["p95"]
            row[f"{v}_p95_ratio"] = v95 / b95 if b95 and v95 else None
        out.append(row)
    return out


def two_over_one(summary: list[dict]) -> dict:
    """The target: two instances behind HAProxy within 5% of one instance direct, at
    every query and level (the worst ratio decides)."""
    ratios = [r["lb2_ratio"] for r in summary if r.get("lb2_ratio")]
    if not ratios:
        return {"verdict": "n/a", "worst": None, "target": TARGET_RATIO}
    worst = min(ratios)
    return {"verdict": "met" if worst >= TARGET_RATIO else "missed", "worst": worst, "target": TARGET_RATIO}


def model_rows(summary: list[dict], cores: int) -> list[dict]:
    """Per (query, level): the model's throughput for one instance and for two behind
    HAProxy on this machine, and for two with the instances and the database on
    machines of their own, from the single instance's CPU per request (direct) and
    HAProxy's own (lb1), beside what was measured."""
    out = []
    for r in summary:
        a, b = r.get("direct") or {}, r.get("lb1") or {}
        us = lambda d, k: d.get(k) / 1e6 if d.get(k) else None  # noqa: E731
        g, db, c, h = us(a, "grafton_us"), us(a, "db_us"), us(a, "client_us"), us(b, "haproxy_us")
        common = dict(cores_per_instance=cores, db_cores=cores, shared_cores=cores, client_s=c or 0.0,
                      client_limit=scale_model.client_limit(c))
        one = scale_model.predict(1, g, db, **common)
        two = scale_model.predict(2, g, db, haproxy_s=h or 0.0, **common)
        # Each instance and the database on `cores` of their own; the client as here.
        separate = scale_model.predict(2, g, db, cores_per_instance=cores, db_cores=cores,
                                       client_limit=scale_model.client_limit(c))
        out.append({"query": r["query"], "level": r["level"], "one": one, "two": two, "two_separate": separate,
                    "measured_one": a.get("rps"), "measured_two": (r.get("lb2") or {}).get("rps"),
                    "inputs_us": {"grafton": a.get("grafton_us"), "db": a.get("db_us"),
                                  "haproxy": b.get("haproxy_us"), "client": a.get("client_us")}})
    return out


def replica_model_rows(summary: list[dict], cores: int) -> list[dict]:
    """The model for Grafton with one replica (reads on the replica only) from the
    replica run's own CPU per request (both clusters' CPU counted as the database's)."""
    out = []
    for r in summary:
        v = r.get("replica") or {}
        us = lambda k: v.get(k) / 1e6 if v.get(k) else None  # noqa: E731
        c = us("client_us")
        p = scale_model.predict(1, us("grafton_us"), us("db_us"), replicas=1, primary_reads=False,
                                cores_per_instance=cores, db_cores=cores, shared_cores=cores,
                                client_s=c or 0.0, client_limit=scale_model.client_limit(c))
        out.append({"query": r["query"], "level": r["level"], "replica": p, "measured": v.get("rps")})
    return out
