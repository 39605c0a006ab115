"""The subscriptions scenario's pure parts (no I/O here): issue 12's targets, the
table and config the servers get, the load client's command line, and verdicts.

Hasura's published live-query test, reshaped for one machine: N subscribers,
each on its own WebSocket as role `user` with its own `x-hasura-user-id`, each
subscribed to its own row (`live_items_by_pk(id: <its user id>)`; the role's rule
lets it read only that row), and an updater that changes every subscribed row
once a second straight in PostgreSQL (an external writer: Grafton sees it at its
next poll, as Hasura's test measures). The load client is bench/subscribers (Rust,
one light task per socket); it times each update from its commit to each
subscriber's receipt.
"""

from __future__ import annotations

# ----------------------------------------------------------- targets (issues 12 and 35)
TARGET_N = 100_000  # subscribers on this 2-core machine (with PostgreSQL and the client)
TARGET_P95_MS = 1000.0  # delivery latency, commit to receipt
TARGET_RSS_MB = 1024.0  # Grafton's RSS

TABLE = "live_items"
# interval: the updates are seen at Grafton's next poll (Hasura's test); triggers:
# `grafton live-triggers` installed, each update wakes the live queries at once.
VARIANTS = ["interval", "triggers"]
ROLE = "user"
QUERY = "subscription ($id: Int!) { live_items_by_pk(id: $id) { id v } }"


# One process may hold at most 20,000 open files here (the hard limit, which this
# container cannot raise); the server needs some for itself and its pool, the client
# one for its updater. Past this many sockets, subscribers share them: 100,000
# subscribers take six per socket (five would need 20,000 sockets).
MAX_SOCKETS = 19_000


def per_socket(n: int) -> int:
    """Subscribers per socket for n subscribers: 1 while the sockets fit, else 2, 3…"""
    return -(-n // MAX_SOCKETS)


def table_sql(rows: int, per: int) -> str:
    """`live_items`: rows 1..=rows; row i belongs to user ⌈i / per⌉ (the user of its socket)."""
    return (f"DROP TABLE IF EXISTS {TABLE};\n"
            f"CREATE TABLE {TABLE} (id integer PRIMARY KEY, owner text NOT NULL, v integer NOT NULL DEFAULT 0);\n"
            f"INSERT INTO {TABLE} (id, owner) SELECT i, ((i - 1) / {int(per)} + 1)::text "
            f"FROM generate_series(1, {int(rows)}) AS i;\n"
            f"ANALYZE {TABLE};\n")


def config() -> dict:
    """Role `user` reads only its own row (the session variable is bound per subscriber)."""
    return {"tables": {TABLE: {"permissions": {ROLE: {"select": {
        "columns": ["id", "v"], "filter": {"owner": {"_eq": "X-Hasura-User-Id"}}}}}}}}


def server_extra(n: int, secret: str) -> list[str]:
    """Grafton's flags for n subscribers: only the admin secret. The scenario runs on
    the default flags: the connection cap follows the open-files limit (raised to its
    hard limit at start-up), room for every socket here; `n` is kept for callers."""
    return ["--admin-secret", secret]


def client_argv(binary: str, ws_url: str, db_url: str, secret: str, n: int, rounds: int, pid: int | None) -> list[str]:
    argv = [binary, "--url", ws_url, "--database-url", db_url, "--admin-secret", secret,
            "--clients", str(n), "--per-socket", str(per_socket(n)), "--rounds", str(rounds)]
    return argv + (["--grafton-pid", str(pid)] if pid else [])


def verdict(run: dict) -> dict:
    """Whether one level met the targets (latency, nothing missed, RSS; N only at TARGET_N)."""
    lat = (run.get("latency_ms") or {}).get("p95")
    rss = ((run.get("grafton") or {}).get("rss_mb_max"))
    clients = run.get("clients") or 0
    # Every subscriber had its first result and the last update, no error, and no
    # update skipped (a poll that came late would fold two updates into one).
    complete = (run.get("first_results") == clients and run.get("up_to_date_at_end") == clients
                and not run.get("errors") and run.get("skipped_updates") == 0)
    p95_ok = lat is not None and lat < TARGET_P95_MS
    rss_ok = rss is not None and rss < TARGET_RSS_MB
    return {"p95_ok": p95_ok, "rss_ok": rss_ok, "complete": complete, "met": p95_ok and rss_ok and complete}


def section(results: dict) -> str:
    """The summary's subscriptions section ("" when the scenario did not run)."""
    r = results.get("subscriptions")
    if not r:
        return ""
    out = ["## Subscriptions",
           f"Live queries: each subscriber on `{QUERY}` as role `{ROLE}` with its own `x-hasura-user-id`; "
           f"every subscribed row updated once a second straight in PostgreSQL, {r.get('rounds')} times; latency "
           "from each update's commit to each subscriber's receipt (bench/subscribers). Grafton polls every 1 s "
           "(the default): with `interval` the updates are seen at the next poll, as in Hasura's test; with "
           "`triggers` (`grafton live-triggers` installed) each update wakes the live queries at once. "
           "PostGraphile v4 (with `postgraphile` among the systems) serves the same subscriptions as live queries "
           "through @graphile/subscriptions-lds (logical decoding, wal2json), without roles (it runs as the "
           "database owner), over the legacy protocol. Past "
           f"{MAX_SOCKETS:,} subscribers they share sockets (this machine allows 20,000 open files per process). "
           "CPU is a share of one core over the updates (this machine has two, for the server, PostgreSQL "
           "and the client): PostgreSQL's includes the updates themselves."]
    if r.get("status", "ok") != "ok":
        out.append(f"Not measured: {r['status']}")
    head = ["subscribers", "sockets", "server, refresh", "p50 ms", "p95 ms", "p99 ms", "max ms", "messages/s", "skipped", "up to date",
            "errors", "server CPU", "server RSS max", "PG xacts/s", "PG CPU", "client CPU", "met"]
    rows = []
    for run in r.get("levels", []):
        lat, g, pg = run.get("latency_ms") or {}, run.get("grafton") or {}, run.get("postgres") or {}
        v = run.get("verdict") or verdict(run)
        cpu = g.get("cpu_percent")
        tps = pg.get("transactions_per_s")
        pg_cpu, client_cpu = pg.get("cpu_percent"), (run.get("client") or {}).get("cpu_percent")
        variant = run.get("variant", "interval")
        server = "PostGraphile v4, live (LDS)" if variant == "postgraphile" else f"Grafton PG, {variant}"
        rows.append([f"{run.get('clients', 0):,}", f"{run.get('sockets', 0):,}", server,
                     f"{lat.get('p50', 0):.0f}",
                     f"{lat.get('p95', 0):.0f}", f"{lat.get('p99', 0):.0f}", f"{lat.get('max', 0):.0f}",
                     f"{run.get('messages_per_s', 0):,.0f}", str(run.get("skipped_updates")),
                     f"{run.get('up_to_date_at_end', 0):,}", str(run.get("errors")),
                     "n/a" if cpu is None else f"{cpu:.0f}%", f"{g.get('rss_mb_max', 0):.0f} MB",
                     "n/a" if tps is None else f"{tps:,.0f}", "n/a" if pg_cpu is None else f"{pg_cpu:.0f}%",
                     "n/a" if client_cpu is None else f"{client_cpu:.0f}%", "yes" if v.get("met") else "no"])
    if rows:
        out.append("\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
                             + ["| " + " | ".join(row) + " |" for row in rows]))
    t = r.get("targets") or {}
    out.append(f"Target: {t.get('n', TARGET_N):,} subscribers with p95 < {t.get('p95_ms', TARGET_P95_MS):.0f} ms, "
               f"no update skipped, Grafton RSS < {t.get('rss_mb', TARGET_RSS_MB):.0f} MB.")
    return "\n\n".join(out)
