"""The write scenarios: their names and descriptions, the run order, the probe
verdict, and the statements that put the venues table back (pure: no I/O here).

The k6 side is bench/k6/writes.js with the documents of bench/k6/mutations.js.
"""

from __future__ import annotations

import re

WRITES = ["insert_one", "insert_batch_100", "update_by_pk"]
BATCH = 100
ROWS_PER_REQUEST = {"insert_one": 1, "insert_batch_100": BATCH, "update_by_pk": 1}
TABLE = "venues"

# What each write compares, recorded in results.json and printed in summary.md.
DESCRIPTIONS = {
    "insert_one": "One venue per request: Grafton `insert_venues_one(object:) { id }`, "
                  "PostGraphile `createVenue(input: {venue:}) { venue { id } }` (v5: `{ venue { rowId } }`)",
    "insert_batch_100": "100 venues per request: Grafton one `insert_venues(objects: [100 objects]) "
                        "{ affected_rows }` (one multi-row INSERT); PostGraphile (v4, v5) has no "
                        "multi-row insert, so its request carries 100 aliased `createVenue` fields "
                        "(`v0: createVenue(…) … v99: createVenue(…)`): one row per call, 100 calls in "
                        "one request",
    "update_by_pk": "The `name` of one existing venue per request: Grafton "
                    "`update_venues_by_pk(pk_columns: {id:}, _set: {name:}) { id name }`, PostGraphile "
                    "`updateVenueById(input: {id:, venuePatch: {name:}}) { venue { id name } }` (v5: "
                    "`updateVenueByRowId(input: {rowId:, …})`); ids "
                    "spread over 1…N, each VU on its own residue class (no two VUs on one row)",
}

# A probe (the warm-up) failing this often means the system cannot do the write at all.
UNAVAILABLE_RATE = 0.5
# Systems whose rows live in PostgreSQL (the other one, sqlite, in the SQLite file).
ON_POSTGRES = ("grafton", "postgraphile", "postgraphile5")


def database(system: str) -> str:
    return "postgres" if system in ON_POSTGRES else "sqlite"


def run_order(writes: list[str], levels: list[int], systems: list[str]) -> list[tuple[str, int, str]]:
    """(write, vus, system) in run order: per write and level every system, the
    system order alternating from one level to the next (as in `fixed`)."""
    out = []
    for w in writes:
        for i, vus in enumerate(levels):
            for s in (systems if i % 2 == 0 else list(reversed(systems))):
                out.append((w, vus, s))
    return out


_FAILED = re.compile(r'msg="(WRITE-FAILED (?:[^"\\]|\\.)*)"')


def first_failure(log_text: str) -> str | None:
    """The first `WRITE-FAILED …` message writes.js logged (unescaped, shortened)."""
    m = _FAILED.search(log_text)
    if not m:
        return None
    text = re.sub(r"\\(.)", r"\1", m.group(1))
    return text if len(text) <= 400 else text[:400] + "…"


def probe_verdict(summary: dict | None, log_text: str) -> str | None:
    """None when the warm-up shows the system can do the write, else why not."""
    if summary is None:
        return "k6 wrote no summary" + (f" ({first_failure(log_text)})" if first_failure(log_text) else "")
    if not summary.get("requests"):
        return "no request completed"
    rate = summary.get("failed_rate")
    if rate is None or rate >= UNAVAILABLE_RATE:
        why = first_failure(log_text) or "no detail in the k6 log"
        return f"{100 * (rate if rate is not None else 1):.0f}% of the warm-up's requests failed: {why}"
    return None


def postgres_reset(max_id: int) -> list[str]:
    """Statements (each run on its own: VACUUM cannot run in a transaction) that
    drop the rows a write run added and clean up after its updates."""
    return [f"DELETE FROM {TABLE} WHERE id > {int(max_id)}", f"VACUUM ANALYZE {TABLE}"]


def sqlite_reset(max_id: int) -> list[str]:
    return [f"DELETE FROM {TABLE} WHERE id > {int(max_id)}"]


RESET_S = 0.7  # DELETE + VACUUM ANALYZE venues (PostgreSQL), DELETE (SQLite)
PREPARE_S = 5  # start PostGraphile with its mutations
