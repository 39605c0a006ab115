#!/usr/bin/env python3
"""Check that the hand-written SQL in bench/pgbench/best/ returns the JSON Grafton answers.

    python3 bench/pgbench/best.py --psql PSQL --database-url URL --grafton-url http://…/v1/graphql [--sets 20]

For each best/<query>.sql (a pgbench script: `\\set` lines, then one statement) it
draws SETS variable sets from the script's own `\\set` lines (a constant or
`random(lo, hi)`), runs the statement through psql (`-v name=value`, so `:name`
becomes the value) and sends the seed document of make_scripts.py to Grafton with
the same variables; the statement's JSON must equal Grafton's `data`. Exits 0 when
every set agrees, 1 otherwise, printing each difference. Standard library only.
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_scripts import CEILING_QUERIES  # noqa: E402

BEST = os.path.join(HERE, "best")
SET = re.compile(r"^\\set\s+(\w+)\s+(?:(-?\d+)|random\((-?\d+),\s*(-?\d+)\))\s*$")


def parse(path):
    """(the variables' draws, the statement) of a pgbench script."""
    draws, sql = {}, []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = SET.match(line)
            if m:
                const, lo, hi = m.group(2), m.group(3), m.group(4)
                draws[m.group(1)] = (int(const), int(const)) if const is not None else (int(lo), int(hi))
            elif line.startswith("\\"):
                raise SystemExit(f"{path}: unsupported meta-command {line}")
            elif not line.startswith("--") and line.strip():
                sql.append(line)
    return draws, "\n".join(sql)


def by_sql(psql, url, sql, variables):
    argv = [psql, "-X", "-At", "-v", "ON_ERROR_STOP=1", url]
    for k, v in variables.items():
        argv += ["-v", f"{k}={v}"]
    out = subprocess.run(argv, input=sql, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    return json.loads(out.stdout)


def by_grafton(url, query, variables):
    req = urllib.request.Request(url, data=json.dumps({"query": query, "variables": variables}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        body = json.loads(r.read())
    if "errors" in body:
        raise RuntimeError(json.dumps(body["errors"]))
    return body["data"]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--psql", default="psql")
    p.add_argument("--database-url", required=True)
    p.add_argument("--grafton-url", required=True)
    p.add_argument("--sets", type=int, default=20)
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args(argv)
    rng = random.Random(a.seed)
    bad = 0
    for name in sorted(CEILING_QUERIES):
        path = os.path.join(BEST, f"{name}.sql")
        if not os.path.exists(path):
            continue
        draws, sql = parse(path)
        for i in range(a.sets):
            variables = {k: rng.randint(lo, hi) for k, (lo, hi) in draws.items()}
            if i == 0:
                variables["id_gt"] = 99990  # a short last page
            want = by_grafton(a.grafton_url, CEILING_QUERIES[name], variables)
            got = by_sql(a.psql, a.database_url, sql, variables)
            if got != want:
                bad += 1
                print(f"DIFFERENT {name} {variables}:\n  sql:     {json.dumps(got)[:400]}\n"
                      f"  grafton: {json.dumps(want)[:400]}")
        print(f"{name}: {a.sets} variable sets checked")
    print("all agree" if not bad else f"{bad} set(s) differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
