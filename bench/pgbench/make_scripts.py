#!/usr/bin/env python3
"""Build pgbench scripts running the exact SQL Grafton generates for the ceiling's queries.

    python3 bench/pgbench/make_scripts.py --grafton PATH_TO_BINARY \\
        --database-url postgres://... --out DIR [--limit 50] [--query NAME ...]

For each seed query this runs

    GRAFTON sql --database-url URL --naming phrag --query Q --variables JSON

which prints one JSON object ``{"sql": "...", "params": [...]}``: ``params[i]``
is placeholder ``$<i+1>`` of the (PostgreSQL) SQL and is either
``{"variable": "<name>"}`` (bound from the request's variables) or
``{"value": <json>}`` (a constant of the document), possibly with more keys
(``"type"``, ``"list"``: an array bind), and the object may carry
``"dialect": "postgres"``. Placeholders carry their type as a cast, e.g.
``$1::"int4"``.

It then writes ``DIR/<query>.sql`` for ``pgbench -n -M prepared -f``:
``\\set`` lines that fix ``limit`` and randomise ``id_gt`` (random(0, 99999))
and ``offset`` (random(0, 49)) per transaction, exactly as the HTTP benchmark
does, followed by the SQL with every ``$n`` replaced by ``:variable`` (pgbench
turns those back into bind parameters of a prepared statement) or by a SQL
literal for constants. ``DIR/<query>.json`` keeps Grafton's raw output next to
it. This measures the ceiling: the database alone executing Grafton's SQL,
without HTTP, GraphQL parsing or JSON handling in a server.
"""

import argparse
import json
import os
import re
import subprocess
import sys

# The Grafton (phrag) documents of the ceiling's queries: the three seed queries and
# the complex filter. They must stay identical to QUERIES[name].grafton.query in
# bench/k6/queries.js (a unit test checks).
CEILING_QUERIES = {
    "venues": (
        "query queryVenues($limit: Int!, $offset: Int!, $id_gt: Int!) { venues(limit: $limit, offset: $offset, "
        "where: { id: { gt: $id_gt } }) { id name postal_code } }"
    ),
    "venue_meetups": (
        "query queryVenueMeetups($limit: Int!, $offset: Int!, $id_gt: Int!) { venues(limit: $limit, offset: $offset, "
        "where: { id: { gt: $id_gt } }) { id name postal_code meetups(limit: $limit, sort: { id: desc }) { id title } } }"
    ),
    "meetups_members": (
        "query queryMeetupsWithMembers($limit: Int!, $offset: Int!, $id_gt: Int!) { meetups(limit: $limit, "
        "offset: $offset, where: { id: { gt: $id_gt } }) { id title meetups_members(limit: $limit) { member { id email } } } }"
    ),
    "complex_filter": (
        'query complexFilter($id_gt: Int!) { meetups(limit: 100, sort: [{ start_at: desc }, { id: asc }], where: '
        '{ and: [{ id: { gt: $id_gt } }, { title: { like: "%a%" } }, { venue_id: { lt: 90000 } }] }) '
        '{ id title start_at venue_id } }'
    ),
}

# Per-transaction randomisation, the same ranges as bench/k6/queries.js.
ID_GT_MAX = 99999  # id_gt uniform in [0, 100000)
OFFSET_MAX = 49  # offset uniform in [0, 50)

# Variables used to ask Grafton for the SQL. Their values do not reach the SQL
# text (they stay bind parameters); they only have to be valid.
def sample_variables(limit):
    return {"limit": limit, "offset": 7, "id_gt": 50345}


class ScriptError(Exception):
    """The SQL cannot be turned into a safe pgbench script."""


_PGBENCH_VAR = re.compile(r"[A-Za-z0-9_]+\Z")


def _is_var_char(ch):
    # pgbench's parseVariable: ASCII letters, digits, '_' and any non-ASCII byte.
    return ch.isalnum() or ch == "_" or ord(ch) > 127


def _colon_var_at(text, i):
    """True when pgbench would read text[i] (a ':') as the start of :variable."""
    return text[i] == ":" and i + 1 < len(text) and _is_var_char(text[i + 1])


def quote_literal(s):
    """A PostgreSQL string literal for s that pgbench cannot mistake for :variables.

    Plain '...' with '' doubling when s has no colon; otherwise an E'...'
    escape string where ':' becomes \\x3a and backslashes are doubled.
    """
    if not isinstance(s, str):
        raise TypeError("quote_literal wants a str")
    if "\x00" in s:
        raise ScriptError("a string constant contains a NUL character, which PostgreSQL text cannot hold")
    if ":" not in s:
        return "'" + s.replace("'", "''") + "'"
    return "E'" + s.replace("\\", "\\\\").replace("'", "''").replace(":", "\\x3a") + "'"


def _array_element(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "{" + ",".join(_array_element(x) for x in v) + "}"
    return '"' + json.dumps(v, separators=(",", ":")).replace("\\", "\\\\").replace('"', '\\"') + '"'


def sql_literal(value, array_cast=False):
    """The SQL text for a constant parameter (the cast that follows in the SQL stays).

    Numbers are written bare (negative ones in parentheses, so that a following
    ::cast applies to the whole number), booleans as TRUE/FALSE, strings as
    quoted literals, lists as an array literal when the placeholder is cast to
    an array type and as JSON text otherwise, objects as JSON text.
    """
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return "(%d)" % value if value < 0 else "%d" % value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ScriptError("non-finite number constant %r" % value)
        text = repr(value)
        return "(%s)" % text if value < 0 else text
    if isinstance(value, str):
        return quote_literal(value)
    if isinstance(value, list) and array_cast:
        return quote_literal("{" + ",".join(_array_element(x) for x in value) + "}")
    return quote_literal(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


_ARRAY_CAST = re.compile(r'\s*::\s*(?:"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*)(?:\s*\.\s*(?:"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*))*\s*\[\]')


def _followed_by_array_cast(sql, j):
    return _ARRAY_CAST.match(sql, j) is not None


def render_script_sql(sql, params, variables=None):
    """Grafton's SQL with $n placeholders replaced for pgbench.

    ``{"variable": name}`` becomes ``:name`` (pgbench binds it as a parameter
    of the prepared statement); ``{"value": v}`` becomes a SQL literal.
    ``variables`` supplies values for variables other than limit, offset and
    id_gt (which the script sets), inlined as literals. Returns (sql, names of
    the pgbench variables used).
    """
    variables = variables or {}
    scripted = {"limit", "offset", "id_gt"}
    out = []
    used = []
    referenced = set()
    i = 0
    n = len(sql)
    while i < n:
        ch = sql[i]
        if ch == "'":
            # A string literal of Grafton's own SQL: copy, escaping colons if needed.
            j = i + 1
            while True:
                k = sql.find("'", j)
                if k < 0:
                    raise ScriptError("unterminated string literal at offset %d" % i)
                if k + 1 < n and sql[k + 1] == "'":
                    j = k + 2
                    continue
                break
            prefix_e = i > 0 and sql[i - 1] in "eE" and (i < 2 or not _is_var_char(sql[i - 2]))
            body = sql[i + 1 : k]
            if ":" in body and not prefix_e:
                out.append(quote_literal(body.replace("''", "'")))
            elif ":" in body:
                raise ScriptError("an E'' string literal contains ':' at offset %d" % i)
            else:
                out.append(sql[i : k + 1])
            i = k + 1
        elif ch == '"':
            j = i + 1
            while True:
                k = sql.find('"', j)
                if k < 0:
                    raise ScriptError("unterminated quoted identifier at offset %d" % i)
                if k + 1 < n and sql[k + 1] == '"':
                    j = k + 2
                    continue
                break
            ident = sql[i : k + 1]
            if any(_colon_var_at(ident, x) for x in range(len(ident))):
                raise ScriptError("quoted identifier %s contains ':' which pgbench would read as a variable" % ident)
            out.append(ident)
            i = k + 1
        elif ch == "$" and i + 1 < n and sql[i + 1].isdigit() and (i == 0 or not (_is_var_char(sql[i - 1]) or sql[i - 1] == "$")):
            j = i + 1
            while j < n and sql[j].isdigit():
                j += 1
            index = int(sql[i + 1 : j])
            if index < 1 or index > len(params):
                raise ScriptError("placeholder $%d but only %d params" % (index, len(params)))
            referenced.add(index)
            p = params[index - 1]
            if not isinstance(p, dict) or len({"variable", "value"} & set(p)) != 1:
                raise ScriptError("param %d is neither {\"variable\": ...} nor {\"value\": ...}: %r" % (index, p))
            # `grafton sql` also says whether the parameter is a list (an array
            # bind); without that key, look for an array cast after it.
            as_array = bool(p["list"]) if "list" in p else _followed_by_array_cast(sql, j)
            if "variable" in p:
                name = p["variable"]
                if not isinstance(name, str) or not _PGBENCH_VAR.match(name):
                    raise ScriptError("variable name %r is not usable as a pgbench variable" % (name,))
                if name in scripted:
                    out.append(":" + name)
                    if name not in used:
                        used.append(name)
                elif name in variables:
                    out.append(sql_literal(variables[name], as_array))
                else:
                    raise ScriptError("param %d refers to variable %r which has no value" % (index, name))
            else:
                out.append(sql_literal(p["value"], as_array))
            i = j
        elif ch == ":":
            if i + 1 < n and sql[i + 1] == ":":
                j = i
                while j < n and sql[j] == ":":
                    j += 1
                out.append(sql[i:j])  # a ::cast; pgbench skips runs of colons
                i = j
            elif _colon_var_at(sql, i):
                raise ScriptError("':' at offset %d would be read by pgbench as a variable" % i)
            else:
                out.append(ch)
                i += 1
        else:
            out.append(ch)
            i += 1
    unreferenced = set(range(1, len(params) + 1)) - referenced
    if unreferenced:
        raise ScriptError("params never referenced in the SQL: %s" % sorted(unreferenced))
    return "".join(out), used


def build_script(name, graphql, grafton_output, limit):
    """The text of DIR/<name>.sql from the parsed output of `grafton sql`."""
    if not isinstance(grafton_output, dict) or not isinstance(grafton_output.get("sql"), str) \
            or not isinstance(grafton_output.get("params"), list):
        raise ScriptError("expected {\"sql\": str, \"params\": [...]}, got %r" % (grafton_output,))
    dialect = grafton_output.get("dialect", "postgres")
    if dialect != "postgres":
        raise ScriptError("the SQL is for %r, pgbench needs the postgres dialect (a postgres:// --database-url)" % (dialect,))
    sql, used = render_script_sql(grafton_output["sql"], grafton_output["params"], sample_variables(limit))
    sql = sql.strip()
    while sql.endswith(";"):
        sql = sql[:-1].rstrip()
    one_line_graphql = " ".join(graphql.split())
    lines = [
        "-- %s: generated by bench/pgbench/make_scripts.py from Grafton's SQL for (phrag)" % name,
        "-- " + one_line_graphql,
        "-- run: pgbench -n -M prepared -c VUS -j 2 -T SECONDS -f %s.sql DATABASE_URL" % name,
        "\\set limit %d" % limit,
        "\\set offset random(0, %d)" % OFFSET_MAX,
        "\\set id_gt random(0, %d)" % ID_GT_MAX,
        sql + ";",
        "",
    ]
    return "\n".join(lines)


def grafton_sql(grafton, database_url, graphql, variables):
    cmd = [grafton, "sql", "--database-url", database_url, "--naming", "phrag",
           "--query", graphql, "--variables", json.dumps(variables)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise ScriptError("`%s sql` exited %d: %s" % (grafton, proc.returncode, proc.stderr.strip()))
    try:
        return json.loads(proc.stdout)
    except ValueError as e:
        raise ScriptError("`%s sql` printed no JSON object (%s): %s" % (grafton, e, proc.stdout[:500]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grafton", required=True, help="path to the grafton binary")
    ap.add_argument("--database-url", required=True, help="postgres://... of the loaded meetup database")
    ap.add_argument("--out", required=True, help="directory for <query>.sql (created if missing)")
    ap.add_argument("--limit", type=int, default=50, help="page size of the seed queries (default 50)")
    ap.add_argument("--query", action="append", choices=sorted(CEILING_QUERIES),
                    help="only this query (repeatable; default: all)")
    args = ap.parse_args(argv)
    if args.limit <= 0:
        ap.error("--limit must be positive")
    os.makedirs(args.out, exist_ok=True)
    names = args.query or list(CEILING_QUERIES)
    for name in names:
        graphql = CEILING_QUERIES[name]
        try:
            raw = grafton_sql(args.grafton, args.database_url, graphql, sample_variables(args.limit))
            script = build_script(name, graphql, raw, args.limit)
        except ScriptError as e:
            print("make_scripts: %s: %s" % (name, e), file=sys.stderr)
            return 1
        with open(os.path.join(args.out, name + ".json"), "w") as f:
            json.dump(raw, f, indent=2)
            f.write("\n")
        path = os.path.join(args.out, name + ".sql")
        with open(path, "w") as f:
            f.write(script)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
