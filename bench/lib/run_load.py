"""The light load client (bench/loadgen): building it, its documents, closed-loop runs
and open-model capacity trials.

A part of `runner.Bench` (see runner.py); standard library only.
"""

from __future__ import annotations

import json
import os
import subprocess

import settle as st
from common import BENCH, ROOT, _out, k6_system, tail_of

LOADGEN_DOCS = os.path.join(BENCH, "loadgen", "docs.mjs")
# Variable sets per document: drawn once by queries.js's generators, then at random per request.
DOC_SETS = 4096
# The longest a run waits for an earlier run's backlog to drain in the database.
SETTLE_TIMEOUT_S = 180


class Load:
    def loadgen(self) -> str:
        return os.path.join(self.env.target_dir, "release", "loadgen")

    def loadgen_build(self):
        self.check_call([self.env.cargo or "cargo", "build", "--release", "-p", "grafton-bench-loadgen"],
                        "build-loadgen.log", "cargo build (loadgen)", cwd=ROOT,
                        env={**os.environ, "CARGO_TARGET_DIR": self.env.target_dir})

    def loadgen_docs(self):
        """One document file per dialect, query and page size, from bench/k6/queries.js."""
        limits = sorted({self.cfg.limit, *self.cfg.capacity_limits})
        for limit in limits:
            self.check_call([self.env.node or "node", LOADGEN_DOCS, self.docs_dir(limit), str(limit),
                             str(DOC_SETS)], "loadgen-docs.log", "node bench/loadgen/docs.mjs")

    def docs_dir(self, limit: int) -> str:
        return os.path.join(self.tmp, f"loadgen-docs-{limit}")

    def loadgen_run(self, argv: list[str], name: str, timeout: float) -> dict | None:
        """Runs loadgen; its summary goes to raw/<name>.json; None (and an error) if it failed."""
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.error(f"{name}: loadgen did not finish within {timeout:.0f} s")
            return None
        with open(self.log(f"{name}.log"), "w") as f:
            f.write(out.stderr)
        if out.returncode != 0:
            self.error(f"{name}: loadgen exited {out.returncode} (raw/{name}.log: {tail_of(self.log(name + '.log'), 3)})")
            return None
        with open(self.log(f"{name}.json"), "w") as f:
            f.write(out.stdout)
        try:
            return json.loads(out.stdout)
        except ValueError:
            self.error(f"{name}: loadgen printed no JSON summary")
            return None

    def doc_file(self, system: str, query: str, limit: int | None) -> str:
        return os.path.join(self.docs_dir(limit or self.cfg.limit), f"{k6_system(system)}-{query}.json")

    def light(self, system: str, query: str, vus: int, seconds: int, name: str, limit: int | None = None,
              url: str | None = None) -> dict | None:
        """A closed loop of `vus` connections for `seconds` (k6's closed.js, lighter)."""
        argv = [self.loadgen(), "--url", url or self.urls[system], "--doc", self.doc_file(system, query, limit),
                "--mode", "closed", "--connections", str(vus), "--duration", str(seconds)]
        return self.loadgen_run(argv, name, timeout=seconds + 60)

    def open_trial(self, system: str, query: str, users: int, limit: int, name: str) -> dict | None:
        """The seed's capacity trial as an open model: `users` each sending one request
        every 2 s is users/2 requests a second, ramped then held, whatever the answers."""
        cfg = self.cfg
        self.settle(name)
        argv = [self.loadgen(), "--url", self.urls[system], "--doc", self.doc_file(system, query, limit),
                "--mode", "open", "--rate", str(users / 2), "--ramp", str(cfg.ramp_s), "--hold", str(cfg.hold_s),
                "--timeout", "10"]
        return self.loadgen_run(argv, name, timeout=cfg.ramp_s + cfg.hold_s + 60)

    def load(self, system: str, query: str, vus: int, seconds: int, name: str,
             limit: int | None = None) -> dict | None:
        """A closed-loop run with the configured client."""
        self.settle(name)
        if self.cfg.client == "loadgen":
            return self.light(system, query, vus, seconds, name, limit=limit)
        return self.closed(system, query, vus, seconds, name, limit=limit)

    def settle(self, name: str) -> dict | None:
        """Waits for PostgreSQL to have no other active statement (see settle.py); a
        wait over a second, or one that timed out, is kept in results["settle"]."""
        if not self.db_url:
            return None
        psql = [self.env.pg("psql"), "-At", self.db_url, "-c", st.ACTIVE_SQL]

        def active() -> int | None:
            out = _out(psql)
            return int(out) if out and out.isdigit() else None

        r = st.wait_quiet(active, timeout_s=SETTLE_TIMEOUT_S)
        if r["waited_s"] > 1.5 or not r["settled"]:
            self.results.setdefault("settle", []).append({"run": name, **r})
            self.progress.say("settle", f"{name}: waited {r['waited_s']:.1f} s for the database to go quiet"
                                        + ("" if r["settled"] else f" (gave up; {r['active']} still active)"))
        return r
