"""The auth scenario's pure parts (no I/O here): HS256 tokens with Hasura's claims,
the permission configs the runner writes for Grafton, the run order, how a
Grafton without JWT support is recognised, and the overhead/memory verdicts.

Two measurements (see bench/README.md):

- overhead: one read query as admin and as two roles whose select permissions have
  a row filter with a session variable (a column comparison; the same through a
  relationship), on the same server, closed loop;
- role schemas: idle RSS of Grafton with ROLES roles in its config against the
  same server without roles.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re

from fixed import median_of

# The roles measured against admin: the same rows kept, two ways.
COLUMN_ROLE, RELATION_ROLE = "user", "user_rel"
ROLE = COLUMN_ROLE  # the default role of a token
MEASURED = [COLUMN_ROLE, RELATION_ROLE]
WHO = ["admin"] + MEASURED
QUERY = "meetups_venue"  # bench/k6/queries.js
TARGET_RATIO = 1.10  # role/admin latency, at p50 and at p95
TARGET_MEMORY_MB = 40  # idle RSS with ROLES roles
ROLES = 10
SYSTEMS = ["grafton", "sqlite"]  # Grafton on PostgreSQL and on SQLite (bench/lib/plan.py's ids)
USERS = 4  # one token (or header set) per user; VU v uses user (v - 1) % USERS
CLAIMS_NS = "https://hasura.io/jwt/claims"
TOKEN_TTL_S = 10 * 365 * 86400  # long expiry: a token outlives any run

# Permission filters are written in Hasura's spelling (`_eq`, column names), which
# Grafton reads whatever naming the API is served with (the runner serves phrag).

# The demo's tables and columns (crates/demo/src/data.rs), key columns first.
TABLES = {
    "members": ["id", "first_name", "last_name", "email"],
    "groups": ["id", "name", "created_at"],
    "venues": ["id", "name", "postal_code", "prefecture", "city", "street1", "street2", "building"],
    "meetups": ["id", "title", "start_at", "end_at", "venue_id", "group_id"],
    "meetups_members": ["meetup_id", "member_id"],
    "groups_members": ["group_id", "member_id"],
    "member_follow": ["created_by", "member_id"],
}
KEYS = {"members": 1, "groups": 1, "venues": 1, "meetups": 1, "meetups_members": 2, "groups_members": 2,
        "member_follow": 2}

USER = "X-Hasura-User-Id"
# The measured roles' row filters on meetups, both "the meetup's venue id is above the
# session's user id": `user` compares the column (one more condition on the scan),
# `user_rel` goes through the relationship `venue` (Hasura compiles it to an EXISTS on
# venues per meetup row; Grafton on PostgreSQL, since the rule reads only the venue's
# key through an enforced foreign key, to a condition on meetups.venue_id, and on
# SQLite to the EXISTS). Users get ids from rows/10 up, so both keep about 90% of the
# meetups.
FILTERS = {COLUMN_ROLE: {"venue_id": {"_gt": USER}},
           RELATION_ROLE: {"venue": {"id": {"_gt": USER}}}}
MEETUPS_FILTER = FILTERS[RELATION_ROLE]
FILTER_TEXT = {
    COLUMN_ROLE: "a column comparison, `{venue_id: {_gt: X-Hasura-User-Id}}`: one more condition on the "
                 "meetups scan, the user id a bind parameter",
    RELATION_ROLE: "the same through the relationship, `{venue: {id: {_gt: X-Hasura-User-Id}}}`: on "
                   "PostgreSQL a condition on meetups.venue_id (the rule reads only the venue's key, and the "
                   "foreign key is enforced), on SQLite an `EXISTS` on venues per meetup row",
}

# Row filters the ROLES roles of the memory measurement take turns with, per table
# (None: every row). Literals, session-variable comparisons and relationships.
FILTER_CHOICES = {
    "members": [None, {"id": {"_neq": USER}}, {"email": {"_is_null": False}},
                {"meetups_members": {"meetup_id": {"_gt": 0}}}],
    "groups": [None, {"id": {"_gte": USER}}, {"groups_members": {"member_id": {"_eq": USER}}}],
    "venues": [None, {"prefecture": {"_is_null": False}}, {"id": {"_gt": USER}},
               {"_or": [{"city": {"_like": "%o%"}}, {"meetups": {"id": {"_gt": 0}}}]}],
    "meetups": [None, MEETUPS_FILTER, {"group": {"groups_members": {"member_id": {"_eq": USER}}}},
                {"_and": [{"venue_id": {"_neq": USER}}, {"title": {"_like": "Meetup%"}}]}],
    "meetups_members": [None, {"member_id": {"_eq": USER}}, {"meetup": {"venue_id": {"_gt": USER}}}],
    "groups_members": [None, {"member_id": {"_neq": USER}}, {"group": {"name": {"_is_null": False}}}],
    "member_follow": [None, {"created_by": {"_eq": USER}}, {"member_id": {"_neq": USER}}],
}


# ----------------------------------------------------------------- tokens

def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def hs256(signing_input: bytes, key: bytes) -> str:
    return b64url(hmac.new(key, signing_input, hashlib.sha256).digest())


def jwt_hs256(payload: dict, key: str) -> str:
    """A compact JWS (HS256) of `payload`, signed with the key's UTF-8 bytes (as Hasura does)."""
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = b64url(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
    return f"{head}.{body}.{hs256(f'{head}.{body}'.encode(), key.encode())}"


def claims(user_id: int, now: int, role: str = ROLE, ttl_s: int = TOKEN_TTL_S) -> dict:
    """Hasura's claims for one user of `role` (session values are strings)."""
    return {"sub": str(user_id), "iat": now, "exp": now + ttl_s,
            CLAIMS_NS: {"x-hasura-allowed-roles": [role], "x-hasura-default-role": role,
                        "x-hasura-user-id": str(user_id)}}


def jwt_secret_json(key: str) -> str:
    """The value of `--jwt-secret`."""
    return json.dumps({"type": "HS256", "key": key}, separators=(",", ":"))


def user_ids(rows: int, n: int = USERS) -> list[int]:
    """The users: ids from rows/10 up, so MEETUPS_FILTER keeps about 90% of the meetups."""
    base = max(1, rows // 10)
    return [base + k for k in range(n)]


def header_sets(mode: str, who: str, users: list[int], *, key: str | None = None,
                admin_secret: str | None = None, now: int = 0) -> list[dict]:
    """The request headers per user, for mode jwt | headers and who: admin or a role.

    jwt: admin sends `x-hasura-admin-secret`, a role a bearer token per user (the
    role its default and only allowed role). headers (a Grafton without
    --jwt-secret: dev mode, every request is admin unless it names a role): admin
    sends nothing, a role `x-hasura-role` and `x-hasura-user-id`."""
    if who == "admin":
        return [{"x-hasura-admin-secret": admin_secret}] if mode == "jwt" else [{}]
    if mode == "jwt":
        return [{"Authorization": "Bearer " + jwt_hs256(claims(u, now, role=who), key)} for u in users]
    return [{"x-hasura-role": who, "x-hasura-user-id": str(u)} for u in users]


_UNKNOWN_FLAG = re.compile(r"unexpected argument '--(jwt-secret|admin-secret)'|"
                           r"unrecognized (?:argument|option) '?--(jwt-secret|admin-secret)|"
                           r"Found argument '--(jwt-secret|admin-secret)'")


def rejects_jwt_flags(log_text: str) -> bool:
    """Whether a `grafton serve` log is clap refusing --jwt-secret / --admin-secret."""
    return bool(_UNKNOWN_FLAG.search(log_text))


MODE_TEXT = {
    "jwt": "JWT: the roles' requests carry `Authorization: Bearer <HS256 token>` with Hasura's claims "
           "(`x-hasura-default-role`, `x-hasura-user-id`); admin's carry `x-hasura-admin-secret`; the "
           "server runs with `--jwt-secret` and `--admin-secret`",
    "headers": "roles via headers: this Grafton rejects `--jwt-secret` (no JWT support yet), so it runs in "
               "dev mode (no secret) and the roles' requests carry `x-hasura-role` and `x-hasura-user-id`; "
               "admin's carry no header. JWT verification is not in these figures",
}


# ----------------------------------------------------------------- configs

def auth_config() -> dict:
    """The overhead measurement's config: each measured role reads meetups through its
    filter (with aggregates, to count what it keeps) and venues (for the nested
    `venue`; no filter)."""
    return {"tables": {
        "meetups": {"permissions": {r: {"select": {
            "columns": ["id", "title", "start_at", "venue_id"], "filter": FILTERS[r],
            "allow_aggregations": True}} for r in MEASURED}},
        "venues": {"permissions": {r: {"select": {
            "columns": ["id", "name", "postal_code", "city"], "filter": {}}} for r in MEASURED}},
    }}


def roles_config(n: int = ROLES) -> dict:
    """n roles, each with a select permission on every demo table: role k sees all
    columns (k % 3 == 0) or all but one, takes the tables' filter choices in turn,
    a row limit on even k, aggregates on odd k."""
    tables: dict = {t: {"permissions": {}} for t in TABLES}
    for k in range(n):
        role = f"role{k + 1:02d}"
        for t, cols in TABLES.items():
            if k % 3 == 0:
                columns = "*"
            else:
                free = cols[KEYS[t]:]  # never a key column
                drop = free[k % len(free)] if free else None
                columns = [c for c in cols if c != drop]
            choices = FILTER_CHOICES[t]
            f = choices[k % len(choices)]
            sel = {"columns": columns, "filter": f if f else {}}
            if k % 2 == 0:
                sel["limit"] = 100 + 10 * k
            if k % 2 == 1:
                sel["allow_aggregations"] = True
            tables[t]["permissions"][role] = {"select": sel}
    return {"tables": tables}


_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Plain scalars YAML reads as something other than a string.
_YAML_WORDS = {"null", "true", "false", "yes", "no", "on", "off", "y", "n"}


def _key(k: str) -> str:
    return k if _PLAIN.match(k) and k.lower() not in _YAML_WORDS else json.dumps(k)


def _scalar(v) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return str(v)
    return json.dumps(v)  # a JSON string is a YAML double-quoted scalar


def to_yaml(obj: dict, indent: int = 0) -> str:
    """Block-style YAML for nested dicts; lists and leaves as JSON (valid YAML flow)."""
    out = []
    pad = " " * indent
    for k, v in obj.items():
        key = _key(k)
        if isinstance(v, dict) and v:
            out.append(f"{pad}{key}:\n" + to_yaml(v, indent + 2))
        elif isinstance(v, (dict, list)):
            out.append(f"{pad}{key}: {json.dumps(v)}\n")
        else:
            out.append(f"{pad}{key}: {_scalar(v)}\n")
    return "".join(out)


def brief(value) -> str:
    """A filter as text without JSON's quotes: {venue: {id: {gt: X-Hasura-User-Id}}}."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {brief(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(brief(v) for v in value) + "]"
    if isinstance(value, str) and _PLAIN.match(value.replace("-", "_")):
        return value
    return _scalar(value)


# ----------------------------------------------------------------- runs

def run_order(levels: list[int], systems: list[str], who: list[str] = WHO,
              reps: int = 2) -> list[tuple[str, int, str, int]]:
    """(system, vus, who, rep) in run order. Per level every system, the system order
    alternating from one level to the next; per system and level `reps` rounds of admin
    and the roles, each round the mirror of the one before (A B C C B A A B C; the next
    level starts C B A), so a drift of the machine over the runs weighs on each alike."""
    out = []
    for i, vus in enumerate(levels):
        seq = list(who) if i % 2 == 0 else list(reversed(who))
        for s in (systems if i % 2 == 0 else list(reversed(systems))):
            for rep in range(1, reps + 1):
                out += [(s, vus, w, rep) for w in (seq if rep % 2 else list(reversed(seq)))]
    return out


def overhead(runs: list[dict]) -> list[dict]:
    """Per (system, vus, role): admin's and the role's p50/p95 (the median over their
    runs), req/s, failures, and role/admin for p50 and p95."""
    keys: list[tuple[str, int, str]] = []
    for r in runs:
        if r["who"] != "admin" and (r["system"], r["vus"], r["who"]) not in keys:
            keys.append((r["system"], r["vus"], r["who"]))

    def stats(s, v, who):
        rs = [r for r in runs if (r["system"], r["vus"], r["who"]) == (s, v, who) and not r.get("error")]
        return {"runs": len(rs), **{k: median_of(r.get(k) for r in rs) for k in ("rps", "p50", "p95", "p99")},
                "failed_rate": max((r.get("failed_rate") or 0 for r in rs), default=None)}

    out = []
    for s, v, who in keys:
        row = {"system": s, "vus": v, "role": who, "admin": stats(s, v, "admin"), "as_role": stats(s, v, who)}
        for p in ("p50", "p95"):
            a, b = row["admin"].get(p), row["as_role"].get(p)
            row[f"{p}_ratio"] = b / a if a and b else None
        out.append(row)
    return out


def verdict(rows: list[dict], target: float = TARGET_RATIO) -> tuple[str, float | None]:
    """("met" | "missed" | "n/a", the worst ratio) over every row given (levels) and both
    percentiles; a level with failed requests misses."""
    ratios = [r[k] for r in rows for k in ("p50_ratio", "p95_ratio") if r.get(k) is not None]
    if not ratios:
        return "n/a", None
    failed = any((r[w].get("failed_rate") or 0) > 0 for r in rows for w in ("admin", "as_role"))
    worst = max(ratios)
    return ("met" if worst < target and not failed else "missed"), worst


def settled(samples: list[tuple[int, int]], window: int, tolerance: float = 0.01) -> bool:
    """Whether the process is idle: over the last `window` (VmRSS kB, CPU ticks) samples
    RSS stays within `tolerance` and the process used at most one clock tick."""
    if len(samples) < window or window < 2:
        return False
    last = samples[-window:]
    rss = [r for r, _ in last]
    return max(rss) - min(rss) <= tolerance * max(rss) and last[-1][1] - last[0][1] <= 1


def memory_verdict(roles_kb: int | None, target_mb: float = TARGET_MEMORY_MB) -> str:
    if roles_kb is None:
        return "n/a"
    return "met" if roles_kb / 1024 < target_mb else "missed"


PREPARE_S = 6  # start the two auth servers (and maybe retry without JWT), count the kept rows
MEMORY_START_S = 1.5  # start a server, wait until it answers
