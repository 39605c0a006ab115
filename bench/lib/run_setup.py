"""Installing tools, starting PostgreSQL, the servers under test, and checking they return the same rows.

A part of `runner.Bench` (see runner.py); standard library only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time

import plan
import procs
import report
from common import (K6_DIR, K6_VERSION, NODE_DIR, PEERS, PG5_CLI, PG5_DIR, PG5_FILES, PG5_NODE, PG5_SRC,
                    POSTGRAPHILE_BIN, POSTGRAPHILE_PINS, ROOT, TOOLS, _out, tail_of)


class Setup:
    def install_k6(self):
        if not self.env.go:
            raise RuntimeError("Go is needed to install k6 (go install go.k6.io/k6@" + K6_VERSION + "); "
                               "the distribution's golang-go is too old: install Go ≥ 1.23 from https://go.dev/dl/")
        os.makedirs(os.path.join(TOOLS, "bin"), exist_ok=True)
        self.check_call([self.env.go, "install", f"go.k6.io/k6@{K6_VERSION}"], "install-k6.log", "go install k6",
                        env={**os.environ, "GOBIN": os.path.join(TOOLS, "bin")})
        self.env.has_k6 = True

    def install_postgraphile(self):
        if not (self.env.npm and self.env.node):
            raise RuntimeError("node and npm are needed for PostGraphile")
        os.makedirs(NODE_DIR, exist_ok=True)
        self.check_call([self.env.npm, "install", "--no-audit", "--no-fund", "--prefix", NODE_DIR]
                        + POSTGRAPHILE_PINS, "install-postgraphile.log", "npm install postgraphile")

    def install_postgraphile5(self):
        """`npm ci` of bench/peers/postgraphile5 (its lock pins every package, Node 22 included)."""
        if not self.env.npm:
            raise RuntimeError("npm is needed for PostGraphile v5")
        shutil.rmtree(PG5_DIR, ignore_errors=True)
        os.makedirs(PG5_DIR)
        for f in PG5_FILES:
            shutil.copy(os.path.join(PG5_SRC, f), PG5_DIR)
        self.check_call([self.env.npm, "ci", "--no-audit", "--no-fund"], "install-postgraphile5.log",
                        "npm ci (PostGraphile v5)", cwd=PG5_DIR)
        self.env.has_postgraphile5 = True

    def install_wal2json(self):
        major = os.path.basename(os.path.dirname(self.env.pgbin or ""))
        if not (self.env.root and major.isdigit()):
            raise RuntimeError("wal2json is missing: install postgresql-<version>-wal2json (needs root)")
        self.check_call(["apt-get", "install", "-y", "-qq", f"postgresql-{major}-wal2json"], "install-wal2json.log",
                        "apt-get install wal2json", env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})

    def build_grafton(self):
        if not self.env.cargo:
            raise RuntimeError("cargo not found: install Rust, or set GRAFTON=<path to a grafton binary>")
        self.check_call([self.env.cargo, "build", "--release", "-p", "grafton"], "build-grafton.log",
                        "cargo build", cwd=ROOT, env={**os.environ, "CARGO_TARGET_DIR": self.env.target_dir})
        self.env.has_grafton = True

    def start_postgres(self):
        self.tmp = tempfile.mkdtemp(prefix="grafton-bench.")
        if self.env.root:
            shutil.chown(self.tmp, "postgres")
        self.pgdata = os.path.join(self.tmp, "pgdata")
        self.check_call(self.as_pg([self.env.pg("initdb"), "-D", self.pgdata, "-U", "postgres", "--auth=trust",
                                    "-E", "UTF8", "--no-instructions"]), "initdb.log", "initdb")
        port = procs.free_port()
        opts = (f"-p {port} -k {self.tmp} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
                f"-c full_page_writes=off -c max_connections={plan.MAX_CONNECTIONS} -c shared_buffers=256MB")
        if self.subs_peer():
            # PostGraphile's live queries read changes from a logical replication slot.
            opts += " -c wal_level=logical -c max_replication_slots=10 -c max_wal_senders=10"
        # pg_ctl writes the server log itself (as postgres, into the temp dir); copied to raw/ at the end.
        self.check_call(self.as_pg([self.env.pg("pg_ctl"), "-D", self.pgdata, "-l",
                                    os.path.join(self.tmp, "postgres.log"), "-w", "-t", "60", "start", "-o", opts]),
                        "pg_ctl.log", "pg_ctl start")
        base = f"postgres://postgres@127.0.0.1:{port}"
        self.check_call([self.env.pg("psql"), "-q", "-v", "ON_ERROR_STOP=1", f"{base}/postgres", "-c",
                         "CREATE DATABASE meetup"], "psql.log", "CREATE DATABASE")
        self.db_url = f"{base}/meetup"

    def stop_postgres(self):
        if self.pgdata and os.path.exists(os.path.join(self.pgdata, "postmaster.pid")):
            subprocess.run(self.as_pg([self.env.pg("pg_ctl"), "-D", self.pgdata, "-m", "fast", "-w", "stop"]),
                           capture_output=True, timeout=60)

    def load_postgres(self):
        # grafton demo --postgres-sql | psql
        gen = self.procs.start([self.env.grafton, "demo", "--rows", str(self.cfg.rows), "--postgres-sql"],
                               stdout=subprocess.PIPE)
        psql = self.procs.start([self.env.pg("psql"), "-q", "-v", "ON_ERROR_STOP=1", self.db_url],
                                log_path=self.log("load.log"), stdin_from=gen.stdout)
        gen.stdout.close()
        rc, grc = psql.wait(), gen.wait()
        self.procs.forget(psql)
        self.procs.forget(gen)
        if rc != 0 or grc != 0:
            raise RuntimeError(f"loading the dataset failed (psql {rc}, grafton demo {grc}); see raw/load.log:\n"
                               + tail_of(self.log("load.log")))
        self.check_call([self.env.pg("psql"), "-q", "-v", "ON_ERROR_STOP=1", self.db_url, "-c", "VACUUM ANALYZE"],
                        "load.log", "VACUUM ANALYZE")
        counts = _out([self.env.pg("psql"), "-At", self.db_url, "-c",
                       "select (select count(*) from venues) || ' venues, ' || "
                       "(select count(*) from meetups_members) || ' meetups_members'"])
        self.progress.say("setup", f"loaded: {counts}")

    def create_sqlite(self):
        self.sqlite_file = os.path.join(self.tmp, "meetup.db")
        port = procs.free_port()
        p = self.procs.start([self.env.grafton, "demo", "--file", self.sqlite_file, "--rows", str(self.cfg.rows),
                              "--host", "127.0.0.1", "--port", str(port)], log_path=self.log("sqlite-create.log"))
        try:
            procs.wait_graphql(f"http://127.0.0.1:{port}/v1/graphql", "{ venues(limit: 1) { id } }", p, 300)
        finally:
            self.procs.stop(p)

    def start_servers(self):
        cfg = self.cfg
        started = {}
        for s in cfg.systems:
            port = procs.free_port()
            if s == "postgraphile":
                p = self.start_postgraphile(port, mutations=False, log_name="postgraphile.log")
                url, probe = f"http://127.0.0.1:{port}/graphql", "{ allVenues(first: 1) { nodes { id } } }"
            elif s == "postgraphile5":
                p = self.start_postgraphile5(port, mutations=False, log_name="postgraphile5.log")
                url, probe = f"http://127.0.0.1:{port}/graphql", "{ allVenuesList(first: 1) { rowId } }"
            else:
                p = self.procs.start(self.grafton_argv(s, port), log_path=self.log(f"{s}.log"))
                url, probe = f"http://127.0.0.1:{port}/v1/graphql", "{ venues(limit: 1) { id } }"
            started[s] = (p, url, probe)
        for s, (p, url, probe) in started.items():
            try:
                procs.wait_graphql(url, probe, p, 90)
            except RuntimeError as e:
                raise RuntimeError(f"{report.label(s)}: {e}; log raw/{s}.log:\n{tail_of(self.log(s + '.log'))}")
            self.urls[s], self.pids[s] = url, p.pid
        time.sleep(1)
        idle = {s: procs.tree_kb(self.pids[s], "VmRSS") for s in cfg.systems}
        if "memory" in cfg.scenarios:
            mem = self.results.setdefault("memory", {"systems": {}})
            for s in cfg.systems:
                mem["systems"].setdefault(s, {})["idle_kb"] = idle[s]
        self.progress.say("setup", "up: " + ", ".join(
            f"{report.label(s)} {self.urls[s]} (pid {self.pids[s]}, {report.mb(idle[s])})" for s in cfg.systems))

    def grafton_argv(self, system: str, port: int, config: str | None = None,
                     extra: list[str] | None = None, pool: int | None = None) -> list[str]:
        """`grafton serve` on PostgreSQL (system grafton) or the SQLite file (sqlite), phrag naming,
        with the suite's pool unless `pool` says otherwise."""
        db = self.db_url if system == "grafton" else f"sqlite://{self.sqlite_file}"
        return ([self.env.grafton, "serve", "--database-url", db, "--naming", "phrag", "--host", "127.0.0.1",
                 "--port", str(port), "--pool-size", str(pool or self.cfg.pool)]
                + (["--config", config] if config else []) + (extra or []))

    def start_postgraphile(self, port: int, mutations: bool, log_name: str):
        """PostGraphile as in bench/quick/run.sh; `mutations=False` adds --disable-default-mutations (reads)."""
        argv = [POSTGRAPHILE_BIN, "-c", self.db_url, "--schema", "public", "--host", "127.0.0.1",
                "--port", str(port), "--disable-query-log", "--append-plugins",
                "postgraphile-plugin-connection-filter", "--dynamic-json", "--no-setof-functions-contain-nulls"]
        argv += [] if mutations else ["--disable-default-mutations"]
        argv += ["--max-pool-size", str(self.cfg.pool)]
        return self.procs.start(argv, log_path=self.log(log_name), cwd=NODE_DIR,
                                env={**os.environ, "NODE_ENV": "production"})

    def start_postgraphile5(self, port: int, mutations: bool, log_name: str):
        """PostGraphile v5 (bench/peers/postgraphile5/graphile.config.mjs), one Node 22 process,
        started directly (through npm, stopping the recorded pid would leave node running)."""
        shutil.copy(os.path.join(PG5_SRC, "graphile.config.mjs"), PG5_DIR)  # the repo's config, as edited
        env = {**os.environ, "NODE_ENV": "production", "GRAPHILE_ENV": "production", "DATABASE_URL": self.db_url,
               "PG_POOL_MAX": str(self.cfg.pool), "PORT": str(port), "MUTATIONS": "1" if mutations else "0"}
        return self.procs.start([PG5_NODE, PG5_CLI, "-C", "graphile.config.mjs"], log_path=self.log(log_name),
                                cwd=PG5_DIR, env=env)

    def check_rows(self):
        """Each Grafton against each peer: check.js sends both the same requests and compares rows."""
        peers = [p for p in PEERS if p in self.cfg.systems]
        for s in [x for x in self.cfg.systems if x not in PEERS]:
            for peer in peers:
                name = f"check-{s}-{peer}"
                argv = [self.env.k6, "run", "-q", "--no-usage-report", "--address", "",
                        "-e", f"GRAFTON_URL={self.urls[s]}", "-e", f"PEER={peer}", "-e", f"PEER_URL={self.urls[peer]}",
                        "-e", f"LIMIT={self.cfg.limit}", "-e", "SEEDS=1", os.path.join(K6_DIR, "check.js")]
                rc = self.procs.run(argv, log_path=self.log(f"{name}.log"), timeout=120)
                if rc != 0:
                    self.error(f"same rows? {report.label(s)} and {report.label(peer)} answers differ or the check "
                               f"failed (exit {rc}, raw/{name}.log: {tail_of(self.log(f'{name}.log'), 3)})")
                else:
                    self.progress.say("setup", f"{report.label(s)} and {report.label(peer)} return the same rows")
