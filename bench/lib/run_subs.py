"""The subscriptions scenario: live-query subscribers on Grafton and PostGraphile.

A part of `runner.Bench` (see runner.py); standard library only.
"""

from __future__ import annotations

import json
import os
import subprocess

import plan
import procs
import subs
from common import NODE_DIR, POSTGRAPHILE_BIN, ROOT


class Subs:
    def subs_steps(self) -> list[plan.Step]:
        cfg, S = self.cfg, plan.Step
        st = [S("subscriptions", "build the load client (cargo build --release -p grafton-bench-subscribers)",
                60, self.subs_build)]
        for n in cfg.subs_levels:
            if self.subs_peer():
                st.append(S("subscriptions", f"{n:,} subscribers, PostGraphile v4 live queries (subscriptions-lds): "
                                             f"{cfg.subs_rounds} updates one a second",
                            20 + n / 500 + cfg.subs_rounds + 5, lambda n=n: self.subs_run_postgraphile(n),
                            when=lambda: os.path.exists(self.subs_client())))
            for variant in subs.VARIANTS:
                st.append(S("subscriptions", f"{n:,} subscribers ({subs.per_socket(n)} per socket), {variant}: "
                                             f"{cfg.subs_rounds} updates one a second (a fresh Grafton PG and "
                                             "live_items table)",
                            15 + n / 1000 + cfg.subs_rounds + 5, lambda n=n, v=variant: self.subs_run(n, v),
                            when=lambda: os.path.exists(self.subs_client())))
        return st

    def subs_peer(self) -> bool:
        """PostGraphile's live queries run beside Grafton's when it is among the systems."""
        return "subscriptions" in self.cfg.scenarios and "postgraphile" in self.cfg.systems

    def subs_run_postgraphile(self, n: int):
        """The same load against PostGraphile v4 with live queries (LDS: logical decoding
        through wal2json); no roles: it runs as the database owner."""
        cfg = self.cfg
        r = self.subs_results()
        per = subs.per_socket(n)
        self.check_call([self.env.pg("psql"), "-q", "-v", "ON_ERROR_STOP=1", self.db_url, "-c",
                         subs.table_sql(n, per)], "subs-table.log", "create live_items")
        port = procs.free_port()
        log_name = f"subs-postgraphile-{n}.log"
        argv = [POSTGRAPHILE_BIN, "-c", self.db_url, "--schema", "public", "--host", "127.0.0.1",
                "--port", str(port), "--disable-query-log", "--subscriptions", "--live",
                "--owner-connection", self.db_url, "--append-plugins", "@graphile/subscriptions-lds",
                "--max-pool-size", str(cfg.pool)]
        p = self.procs.start(argv, log_path=self.log(log_name), cwd=NODE_DIR, env={**os.environ, "NODE_ENV": "production"})
        try:
            procs.wait_graphql(f"http://127.0.0.1:{port}/graphql", "{ liveItemById(id: 1) { id } }", p, 60)
            argv = subs.client_argv(self.subs_client(), f"ws://127.0.0.1:{port}/graphql", self.db_url,
                                    "none", n, cfg.subs_rounds, p.pid)
            argv += ["--target", "postgraphile", "--protocol", "graphql-ws"]
            self.subs_client_run(r, argv, n, "postgraphile")
        finally:
            self.procs.stop(p)

    def subs_results(self) -> dict:
        return self.results.setdefault("subscriptions", {
            "status": "ok", "query": subs.QUERY, "rounds": self.cfg.subs_rounds, "levels": [],
            "targets": {"n": subs.TARGET_N, "p95_ms": subs.TARGET_P95_MS, "rss_mb": subs.TARGET_RSS_MB}})

    def subs_client_run(self, r: dict, argv: list[str], n: int, variant: str):
        out = subprocess.run(argv, capture_output=True, text=True, timeout=300 + n / 100)
        with open(self.log(f"subs-{n}-{variant}.json"), "w") as f:
            f.write(out.stdout)
        if out.returncode != 0:
            raise RuntimeError(f"subscribers exited {out.returncode}: {out.stderr.strip()[-400:]}")
        run = json.loads(out.stdout)
        run["variant"] = variant
        run["verdict"] = subs.verdict(run)
        run["raw"] = f"raw/subs-{n}-{variant}.json"
        r["levels"].append(run)

    def subs_client(self) -> str:
        return os.path.join(self.env.target_dir, "release", "subscribers")

    def subs_build(self):
        self.check_call([self.env.cargo or "cargo", "build", "--release", "-p", "grafton-bench-subscribers"],
                        "build-subscribers.log", "cargo build (subscribers)", cwd=ROOT,
                        env={**os.environ, "CARGO_TARGET_DIR": self.env.target_dir})

    def subs_run(self, n: int, variant: str):
        cfg = self.cfg
        r = self.subs_results()
        per = subs.per_socket(n)
        self.check_call([self.env.pg("psql"), "-q", "-v", "ON_ERROR_STOP=1", self.db_url, "-c",
                         subs.table_sql(n, per)], "subs-table.log", "create live_items")
        if variant == "triggers":
            sql = subprocess.run([self.env.grafton, "live-triggers", "--database-url", self.db_url],
                                 capture_output=True, text=True, check=True, timeout=60).stdout
            self.check_call([self.env.pg("psql"), "-q", "-v", "ON_ERROR_STOP=1", self.db_url, "-c", sql],
                            "subs-table.log", "install the live triggers")
        path = self.write_config("subscriptions.yaml", subs.config(), see="bench/lib/subs.py")
        port = procs.free_port()
        log_name = f"subs-server-{n}-{variant}.log"
        p = self.procs.start(self.grafton_argv("grafton", port, path, subs.server_extra(n, self.qos_secret)),
                             log_path=self.log(log_name))
        try:
            procs.wait_graphql(f"http://127.0.0.1:{port}/v1/graphql", "{ live_items(limit: 1) { id } }", p, 60,
                               headers={"x-hasura-admin-secret": self.qos_secret})
            argv = subs.client_argv(self.subs_client(), f"ws://127.0.0.1:{port}/v1/graphql", self.db_url,
                                    self.qos_secret, n, cfg.subs_rounds, p.pid)
            self.subs_client_run(r, argv, n, variant)
        finally:
            self.procs.stop(p)
