"""The remote scenario (issue 33): remote relationships and a slow remote under
load, run by the quick scripts that measure them (bench/quick/remote_join.sh and
bench/quick/remote_load.sh: one `grafton serve` on a SQLite demo file, the
graphql-js remote of tests/conformance/remote_server.mjs), their summaries read
into results.json.

A part of `runner.Bench` (see runner.py); standard library only.
"""

from __future__ import annotations

import os
import re

import plan
from common import ROOT

QUICK = os.path.join(ROOT, "bench", "quick")
TARGET_JOIN_RATIO = 1.5  # the join within 1.5x of the SQL part plus one remote call
TARGET_RSS_MB = 100
NUMBER = r"([0-9.]+)"


class Remote:
    def remote_steps(self) -> list[plan.Step]:
        cfg, S = self.cfg, plan.Step
        if "grafton" not in cfg.systems:
            return [S("remote", "skipped: needs grafton among the systems", 0,
                      lambda: self.results.__setitem__("remote", {"status": "skipped: needs Grafton"}))]
        r, s = cfg.remote_rounds, cfg.remote_s
        return [
            S("remote", f"50 rows joined to a remote field: the join, its SQL part, one remote call, two client "
                        f"round trips (bench/quick/remote_join.sh, {r} rounds × 4 runs × {s} s)",
              r * 4 * (s + 1) + 10, self.remote_join),
            S("remote", f"a 50 ms remote under 100 clients beside a table query (bench/quick/remote_load.sh, "
                        f"{r} rounds × 3 runs × {s} s)", r * 3 * (s + 5) + 10, self.remote_load),
        ]

    def remote_script(self, script: str, name: str) -> str:
        env = {**os.environ, "GRAFTON": self.env.grafton, "LOADGEN": self.loadgen(),
               "ROUNDS": str(self.cfg.remote_rounds), "DURATION": str(self.cfg.remote_s)}
        self.check_call(["bash", os.path.join(QUICK, script)], f"{name}.log", script, env=env,
                        timeout=30 * 60)
        with open(self.log(f"{name}.log")) as f:
            return f.read()

    def remote_join(self):
        text = self.remote_script("remote_join.sh", "remote-join")
        r = self.results.setdefault("remote", {"status": "ok"})
        r["join"] = join_summary(text)

    def remote_load(self):
        text = self.remote_script("remote_load.sh", "remote-load")
        r = self.results.setdefault("remote", {"status": "ok"})
        r["load"] = load_summary(text)


def join_summary(text: str) -> dict:
    """remote_join.sh's last lines: per percentile, the join, the SQL part, one
    remote call, two client round trips (ms)."""
    out = {"lines": [l for l in text.splitlines() if l.startswith(("p50:", "p95:", "target"))]}
    for p in ("p50", "p95"):
        m = re.search(rf"{p}: join {NUMBER} ms; SQL part {NUMBER} \+ one remote call {NUMBER} = {NUMBER} ms "
                      rf"\(ratio {NUMBER}\); two client round trips {NUMBER} ms", text)
        if m:
            join, sql, remote, _, ratio, two = map(float, m.groups())
            out[p] = {"join": join, "sql": sql, "remote": remote, "ratio": ratio, "two": two}
    return out


def load_summary(text: str) -> dict:
    """remote_load.sh's last lines: the table query's p95 alone, beside the
    remote load through Grafton and beside it sent to the remote directly (ms),
    and Grafton's peak RSS (MB)."""
    out = {"lines": [l for l in text.splitlines() if l.startswith(("table p95", "table rps", "remote:", "CPU",
                                                                    "target"))]}
    m = re.search(rf"table p95: alone {NUMBER} ms, beside the remote load through Grafton {NUMBER} ms "
                  rf"\(ratio {NUMBER}\), beside the same load sent to the remote directly {NUMBER} ms", text)
    if m:
        out["alone"], out["through"], _, out["direct"] = map(float, m.groups())
    m = re.search(rf"Grafton's peak RSS {NUMBER} MB", text)
    if m:
        out["rss_mb"] = float(m.group(1))
    return out
