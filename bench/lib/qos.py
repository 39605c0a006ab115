"""The qos scenario's pure parts (no I/O here): issue 11's targets for "safe under
load", the servers' api_limits configs, the run orders, and the verdicts.

Four measurements, each on Grafton on PostgreSQL servers started for it (see
bench/README.md, "The qos scenario"; the load is bench/k6/qos.js):

- attack: HEAVY_VUS loop an unbounded nested query (every meetup with its members)
  while CHEAP_VUS loop a primary-key fetch, against a server whose admin has a
  `time_limit`; the cheap requests' latency and errors, the heavy requests'
  outcomes by error code, and the server's peak RSS;
- overhead: the seed queries' closed-loop throughput with no limits against every
  limit configured (generously, so none triggers), two servers side by side;
- wso2: documents of 1, 4 and 9 root fields at rising concurrency, with and without
  a rate limit counted per root field (WSO2's operation-based throttling);
- rejection: Grafton's CPU time per refused request (rate-limited, depth limit)
  and per accepted cheap request, at a steady arrival rate.
"""

from __future__ import annotations

import statistics

# ----------------------------------------------------------------- targets (issue 11)
TARGET_CHEAP_P95_MS = 50.0  # cheap requests' p95 during the attack, with no errors
TARGET_RSS_MB = 300.0  # Grafton's peak RSS during the attack
TARGET_OVERHEAD = 0.03  # every limit configured costs at most 3% of throughput
TARGET_REJECT_CPU_MS = 0.1  # server CPU per rejected request

# ----------------------------------------------------------------- attack
HEAVY_VUS, CHEAP_VUS = 12, 10
ATTACK_TIME_LIMIT_S = 3
# phrag naming (the bench serves --naming phrag): Hasura's names.
HEAVY_QUERY = "{ meetups { id title start_at meetups_members { member { id email first_name last_name } } } }"
CHEAP_QUERY = "query cheap($id: Int!) { venues_by_pk(id: $id) { id name postal_code } }"
# The heavy requests' outcomes, in report order (the codes of docs/limits.md; k6
# writes `-` as `_`). `other_error`: any other code; `http_error`: a status other
# than 200 without a GraphQL error; `transport`: no answer (k6's timeout included).
OUTCOMES = ["ok", "timeout", "overloaded", "response_too_large", "rate_limited", "depth_limit_exceeded",
            "other_error", "http_error", "transport"]

# ----------------------------------------------------------------- overhead
OVERHEAD_QUERIES = ["venues", "venue_meetups", "meetups_members"]  # the seed (bench/k6/queries.js)
VARIANTS = ["off", "on"]
# Every limit of docs/limits.md, generous: the seed queries are 4 deep, ≤ 9 fields,
# 1 root field, cost ≤ 5,050 at limit 50, ≤ 20 kB; 50 VUs from one address.
GENEROUS = {
    "depth_limit": 20,
    "node_limit": 1000,
    "root_field_limit": 50,
    "cost_limit": 10_000_000,
    "batch_limit": 20,
    "time_limit": 30,
    "max_response_bytes": 16 * 1024 * 1024,
    "max_concurrent": 1000,
    "rate_limit": {"max_reqs_per_min": 100_000_000, "unique_params": "IP"},
}
# A document deeper than GENEROUS's depth_limit: the "on" server must refuse it
# (proof that the limits apply to the bench's admin requests).
CHECK_DEPTH = GENEROUS["depth_limit"] + 1

# ----------------------------------------------------------------- wso2
WSO2_DOCS = {"roots_1": 1, "roots_4": 4, "roots_9": 9}
ROLE = "client"  # the role the wso2 and rejection requests are sent as (admin secret + x-hasura-role)
# Root fields per minute for ROLE (one allowance for the role: no unique_params).
# 1,000 root fields/s: about a third of what roots_1 gets through unlimited at 50
# VUs here, a ninth for roots_9, so the limit rejects most requests at every level.
WSO2_PER_MIN = 60_000
# The allowance is a minute's worth at once (GCRA): k6's setup() spends it first
# (documents of DRAIN_CHUNK `__typename` root fields, then halving), so each run
# measures the steady rate, not the burst.
DRAIN_CHUNK = 1000

# ----------------------------------------------------------------- rejection
REJECT_PER_MIN = 60  # the rejection roles' allowance: spent by the warm-up
DEEP_LIMIT = 3
DEEP_QUERY = "query deep($id: Int!) { venues_by_pk(id: $id) { id meetups(limit: 1) { id venue { id } } } }"  # 4 deep
# kind -> (role, document in bench/k6/qos.js, the outcome expected, what it shows)
REJECTIONS = {
    "not_found": ("deep", "not_found", "http_error",
                  "`GET /bench-not-found`: 404 from the router, no GraphQL work at all: the floor of any request "
                  "on this server (HTTP parsing, routing, the runtime's wake-ups; for comparison)"),
    "rate_limited": ("per_request", "by_pk", "rate_limited",
                     "429 `rate-limited`, counted per request: refused before the document is parsed"),
    "rate_limited_per_root_field": ("per_root_field", "by_pk", "rate_limited",
                                    "429 `rate-limited`, counted per root field: refused once the (cached) "
                                    "document is measured"),
    "depth_limit": ("deep", "deep", "depth_limit_exceeded",
                    f"`depth-limit-exceeded` (4 deep, limit {DEEP_LIMIT}): refused after validation, "
                    "before any SQL"),
    "accepted": ("deep", "by_pk", "ok", "accepted: `venues_by_pk` answered from PostgreSQL (for comparison)"),
}
REJECTION_ROLES = ["per_request", "per_root_field", "deep"]
COMPARISONS = {"not_found", "accepted"}  # measured for comparison: no target
FLOOR = "not_found"

# Time estimates of the runner's steps beyond k6's own (seconds).
START_S = 2.0  # start a server, wait until it answers
DRAIN_S = 1.5  # setup()'s drain of the rate limit's allowance
GRACE_S = 3.0  # the attack's heavy requests finishing after the run


# ----------------------------------------------------------------- configs

def _limit(value, roles: list[str]) -> dict:
    return {"global": value, "per_role": {r: value for r in roles}}


def attack_config(time_limit_s: float = ATTACK_TIME_LIMIT_S) -> dict:
    """Default limits, plus a time limit for admin (the attack's requests are admin's)."""
    return {"api_limits": {"time_limit": {"per_role": {"admin": time_limit_s}}}}


def overhead_config() -> dict:
    """Every limit of docs/limits.md, generous, for every role and (named) for admin."""
    return {"api_limits": {k: _limit(v, ["admin"]) for k, v in GENEROUS.items()}}


def _select(columns: list[str]) -> dict:
    return {"select": {"columns": columns, "filter": {}}}


def wso2_config(rate_limited: bool, per_min: int = WSO2_PER_MIN) -> dict:
    """ROLE reads venues; with `rate_limited`, WSO2_PER_MIN root fields a minute for it."""
    cfg: dict = {"tables": {"venues": {"permissions": {ROLE: _select(["id", "name"])}}}}
    if rate_limited:
        cfg["api_limits"] = {"rate_limit": {"global": {"max_reqs_per_min": per_min, "per_root_field": True}}}
    return cfg


def rejection_config(per_min: int = REJECT_PER_MIN, depth: int = DEEP_LIMIT) -> dict:
    """Three roles reading venues and meetups: `per_request` and `per_root_field` with a
    small rate limit counted each way, `deep` with a depth limit."""
    perms = {r: None for r in REJECTION_ROLES}
    return {
        "tables": {
            "venues": {"permissions": {r: _select(["id", "name", "postal_code"]) for r in perms}},
            "meetups": {"permissions": {r: _select(["id", "title", "venue_id"]) for r in perms}},
        },
        "api_limits": {
            "rate_limit": {"per_role": {"per_request": {"max_reqs_per_min": per_min},
                                        "per_root_field": {"max_reqs_per_min": per_min, "per_root_field": True}}},
            "depth_limit": {"per_role": {"deep": depth}},
        },
    }


def role_headers(role: str, admin_secret: str) -> dict:
    """A role's request with the admin secret (docs/limits.md: admin secret + x-hasura-role)."""
    return {"x-hasura-admin-secret": admin_secret, "x-hasura-role": role}


def deep_document(depth: int) -> str:
    """A valid document `depth` fields deep (venues_by_pk, then meetups and venue in turn, then id)."""
    if depth < 2:
        raise ValueError("depth must be at least 2")
    # The levels between the root field and `id`, outside in: a venue's meetups, a meetup's venue, …
    levels = ["meetups(limit: 1)" if k % 2 == 0 else "venue" for k in range(depth - 2)]
    inner = "id"
    for f in reversed(levels):
        inner = f"{f} {{ {inner} }}"
    return f"{{ venues_by_pk(id: 1) {{ {inner} }} }}"


def roots_document(n: int) -> str:
    """n aliased small lists (the wso2 documents; bench/k6/qos.js builds the same)."""
    args = ", ".join(f"$g{k}: Int!" for k in range(1, n + 1))
    fields = " ".join(f"r{k}: venues(limit: 10, where: {{id: {{gt: $g{k}}}}}) {{ id name }}" for k in range(1, n + 1))
    return f"query roots{n}({args}) {{ {fields} }}"


# ----------------------------------------------------------------- run orders

def overhead_order(queries: list[str], reps: int) -> list[tuple[str, str, int]]:
    """(query, variant, rep): per query `reps` pairs, the pair's order alternating
    (off on, on off, off on, …), the next query starting where the last one's pattern
    would continue, so neither variant always runs first."""
    out = []
    k = 0
    for q in queries:
        for rep in range(1, reps + 1):
            pair = VARIANTS if k % 2 == 0 else VARIANTS[::-1]
            out += [(q, v, rep) for v in pair]
            k += 1
    return out


def wso2_order(docs: list[str], levels: list[int]) -> list[tuple[str, int, str]]:
    """(doc, vus, variant): per document and level both variants, their order alternating."""
    out = []
    k = 0
    for d in docs:
        for vus in levels:
            pair = VARIANTS if k % 2 == 0 else VARIANTS[::-1]
            out += [(d, vus, v) for v in pair]
            k += 1
    return out


# ----------------------------------------------------------------- verdicts

def median(values):
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def overhead_summary(runs: list[dict]) -> list[dict]:
    """Per query and variant the median over the reps of ok req/s (answers with data)
    and of the ok answers' p50/p95/p99, the largest failed share and every refusal by
    code; on / off of the ok req/s (the throughput ratio) and of p50, and the median
    of each pair's own on / off."""
    out = []
    for q in dict.fromkeys(r["query"] for r in runs):
        row: dict = {"query": q}
        for v in VARIANTS:
            rs = [r for r in runs if r["query"] == q and r["variant"] == v and not r.get("error")]
            refused: dict = {}
            for r in rs:
                for k, n in (r.get("outcomes") or {}).items():
                    if k != "ok":
                        refused[k] = refused.get(k, 0) + n
            row[v] = {"runs": len(rs), **{k: median(r.get(k) for r in rs) for k in ("ok_rps", "p50", "p95", "p99")},
                      "failed_rate": max((r.get("failed_rate") or 0 for r in rs), default=None),
                      "requests": sum(r.get("requests") or 0 for r in rs), "refused": refused}
        off, on = row["off"], row["on"]
        row["ratio"] = on["ok_rps"] / off["ok_rps"] if on.get("ok_rps") and off.get("ok_rps") else None
        row["p50_ratio"] = on["p50"] / off["p50"] if on.get("p50") and off.get("p50") else None
        # Each repetition's pair ran back to back: on / off within the pair cancels slower drifts.
        pairs = []
        for rep in dict.fromkeys(r["rep"] for r in runs if r["query"] == q):
            by = {r["variant"]: r.get("ok_rps") for r in runs
                  if r["query"] == q and r["rep"] == rep and not r.get("error")}
            if by.get("on") and by.get("off"):
                pairs.append(by["on"] / by["off"])
        row["paired_ratios"] = pairs
        row["paired_ratio"] = median(pairs)
        out.append(row)
    return out


def overhead_verdict(summary: list[dict], target: float = TARGET_OVERHEAD) -> tuple[str, float | None]:
    """("met" | "missed" | "n/a", the lowest on/off ratio of ok throughput): met when every
    query keeps ≥ 1 - target of its throughput with the limits on. Refusals that both
    variants see (the server's own admission lanes) are reported, not judged here:
    they are no cost of the limits."""
    ratios = [r["ratio"] for r in summary if r.get("ratio") is not None]
    if not ratios:
        return "n/a", None
    worst = min(ratios)
    return ("met" if worst >= 1 - target else "missed"), worst


def attack_verdicts(attack: dict) -> dict:
    """{"cheap": met | missed | n/a, "rss": …}: cheap p95 < TARGET_CHEAP_P95_MS with no
    failed cheap request; peak RSS < TARGET_RSS_MB."""
    cheap = attack.get("cheap") or {}
    p95, errors = cheap.get("p95"), cheap.get("errors")
    out = {"cheap": "n/a" if p95 is None or errors is None
           else "met" if p95 < attack.get("target_p95_ms", TARGET_CHEAP_P95_MS) and errors == 0 else "missed"}
    peak = (attack.get("rss") or {}).get("peak_kb")
    out["rss"] = "n/a" if peak is None else "met" if peak / 1024 < attack.get("target_rss_mb", TARGET_RSS_MB) \
        else "missed"
    return out


def errors_of(outcomes: dict) -> int:
    """Requests that did not answer with data."""
    return sum(n for k, n in (outcomes or {}).items() if k != "ok")


def outcomes_text(outcomes: dict) -> str:
    """"timeout 40, ok 3" in OUTCOMES order (codes with `-` again), zero counts left out."""
    keys = [k for k in OUTCOMES if outcomes.get(k)] + sorted(k for k in outcomes if k not in OUTCOMES and outcomes[k])
    return ", ".join(f"{k.replace('_', '-') if k in OUTCOMES[1:6] else k} {outcomes[k]:,}" for k in keys) or "—"


def allowed_rps(roots: int, per_min: int = WSO2_PER_MIN) -> float:
    """Requests/s of a `roots`-field document the rate limit lets through at steady state."""
    return per_min / 60 / roots


def machine_cpu(before: list[int], after: list[int], clk_tck: int) -> dict:
    """From two readings of /proc/stat's `cpu` line (user nice system idle iowait …,
    in ticks): the seconds the cores were busy and available, and the busy share."""
    d = [b - a for a, b in zip(before, after)]
    total = sum(d[:8])  # guest time is already in user
    idle = d[3] + (d[4] if len(d) > 4 else 0)
    return {"busy_s": round((total - idle) / clk_tck, 2), "total_s": round(total / clk_tck, 2),
            "busy_share": (total - idle) / total if total else None}


def cpu_ms(ticks_before: int, ticks_after: int, clk_tck: int) -> float:
    return (ticks_after - ticks_before) * 1000 / clk_tck


def rejection_row(kind: str, requests: int, outcomes: dict, ticks: int, clk_tck: int) -> dict:
    """CPU per request of one rejection run (every request counted, whatever its
    outcome), the share with the expected outcome, and the verdict for the refused kinds."""
    expected = REJECTIONS[kind][2]
    ms = ticks * 1000 / clk_tck
    per = ms / requests if requests else None
    share = outcomes.get(expected, 0) / requests if requests else None
    row = {"kind": kind, "expected": expected, "requests": requests, "outcomes": outcomes,
           "cpu_ticks": ticks, "cpu_ms": round(ms, 1), "cpu_ms_per_request": per, "expected_share": share,
           "resolution_ms_per_request": 1000 / clk_tck / requests if requests else None}
    if kind not in COMPARISONS:
        row["verdict"] = "n/a" if per is None else "met" if per < TARGET_REJECT_CPU_MS and (share or 0) >= 0.99 \
            else "missed"
    return row


def above_floor(rows: list[dict]) -> None:
    """Adds each row's CPU per request above the FLOOR kind's (the same run's 404s)."""
    floor = next((r.get("cpu_ms_per_request") for r in rows if r.get("kind") == FLOOR), None)
    for r in rows:
        if floor is not None and r.get("cpu_ms_per_request") is not None and r.get("kind") != FLOOR:
            r["above_floor_ms"] = r["cpu_ms_per_request"] - floor
