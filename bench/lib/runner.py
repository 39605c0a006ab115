"""bench/run: set up, run the scenarios, write bench/results/<timestamp>/.

See bench/README.md.  Standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

import auth
import capacity as cap
import pgbench
import plan
import procs
import ops
import qos
import subs
import report
import writes as wr

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BENCH = os.path.join(ROOT, "bench")
TOOLS = os.path.join(BENCH, ".tools")
K6_DIR = os.path.join(BENCH, "k6")
MAKE_SCRIPTS = os.environ.get("MAKE_SCRIPTS") or os.path.join(BENCH, "pgbench", "make_scripts.py")
K6_VERSION = "v1.8.1"
# @graphile/subscriptions-lds: PostGraphile v4's live queries (the subscriptions scenario's peer).
POSTGRAPHILE_PINS = ["postgraphile@4.14.1", "postgraphile-plugin-connection-filter@2.3.0",
                     "@graphile/subscriptions-lds@4.13.0"]
NODE_DIR = os.path.join(TOOLS, "node")
POSTGRAPHILE_BIN = os.path.join(NODE_DIR, "node_modules", ".bin", "postgraphile")


class Interrupted(Exception):
    pass


def _out(argv, timeout=10) -> str | None:
    """First line of a command's output, None if it cannot run."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    text = (r.stdout or r.stderr).strip()
    return text.splitlines()[0] if text else ""


def _pkg_version(name: str) -> str | None:
    try:
        with open(os.path.join(NODE_DIR, "node_modules", name, "package.json")) as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


# ----------------------------------------------------------------- environment

class Env:
    """What is on this machine, found without installing or starting anything."""

    def __init__(self):
        self.root = os.geteuid() == 0
        self.go = shutil.which("go") or ("/usr/local/go/bin/go" if os.access("/usr/local/go/bin/go", os.X_OK) else None)
        self.k6 = os.path.join(TOOLS, "bin", "k6")
        self.has_k6 = os.access(self.k6, os.X_OK)
        self.node, self.npm = shutil.which("node"), shutil.which("npm")
        self.has_postgraphile = os.access(POSTGRAPHILE_BIN, os.X_OK) and _pkg_version(
            "postgraphile-plugin-connection-filter") is not None and os.path.isdir(
            os.path.join(NODE_DIR, "node_modules", "@graphile", "subscriptions-lds"))
        self.pgbin = self._pgbin()
        # PostgreSQL's wal2json plugin (PostGraphile's live queries decode the WAL with it).
        self.has_wal2json = bool(self.pgbin) and os.path.exists(
            os.path.join(os.path.dirname(self.pgbin), "lib", "wal2json.so"))
        self.cargo = shutil.which("cargo")
        self.target_dir = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
        self.grafton_given = bool(os.environ.get("GRAFTON"))
        self.grafton = os.path.abspath(os.environ.get("GRAFTON") or os.path.join(self.target_dir, "release", "grafton"))
        self.has_grafton = os.access(self.grafton, os.X_OK)
        self.runuser = shutil.which("runuser")
        self.k6_scripts = all(os.path.isfile(os.path.join(K6_DIR, f)) for f in ("closed.js", "capacity.js"))
        self.qos_js = os.path.isfile(os.path.join(K6_DIR, "qos.js"))
        self.writes_js = all(os.path.isfile(os.path.join(K6_DIR, f)) for f in ("writes.js", "mutations.js"))
        self.check_js = os.path.isfile(os.path.join(K6_DIR, "check.js"))
        self.make_scripts = os.path.isfile(MAKE_SCRIPTS)

    @staticmethod
    def _pgbin() -> str | None:
        d = _out(["pg_config", "--bindir"], timeout=3)
        cands = [d] if d else []
        if shutil.which("initdb"):
            cands.append(os.path.dirname(os.path.realpath(shutil.which("initdb"))))
        cands += sorted((f"/usr/lib/postgresql/{v}/bin" for v in os.listdir("/usr/lib/postgresql")), reverse=True) \
            if os.path.isdir("/usr/lib/postgresql") else []
        for c in cands:
            if all(os.access(os.path.join(c, t), os.X_OK) for t in ("initdb", "pg_ctl", "psql", "pgbench")):
                return c
        return None

    def pg(self, tool: str) -> str:
        return os.path.join(self.pgbin, tool)



    def grafton_has_sql(self) -> bool:
        return self.has_grafton and _out([self.grafton, "sql", "--help"], timeout=3) is not None

    def grafton_has_jwt(self) -> bool | None:
        """Whether `grafton serve` lists --jwt-secret (None: no binary to ask). The run
        itself decides by starting the server with the flag (see Bench.auth_prepare)."""
        if not self.has_grafton:
            return None
        try:
            r = subprocess.run([self.grafton, "serve", "--help"], capture_output=True, text=True, timeout=5)
        except (OSError, subprocess.SubprocessError):
            return None
        return "--jwt-secret" in r.stdout

    def checks(self, cfg: plan.Config) -> list[tuple[str, str]]:
        """(status, text) per requirement; status ok | install | build | missing | note."""
        c = []
        c.append(("ok", f"python {platform.python_version()}"))
        if self.has_k6:
            c.append(("ok", f"k6 ({self.k6})"))
        elif self.go:
            c.append(("install", f"k6 {K6_VERSION} → bench/.tools/bin (go install, with {self.go})"))
        else:
            c.append(("missing", "go (needed to install k6; distribution golang-go packages are too old: "
                                 "install Go ≥ 1.23 from go.dev)"))
        if "postgraphile" in cfg.systems:
            if self.has_postgraphile:
                c.append(("ok", f"PostGraphile {_pkg_version('postgraphile')} + connection-filter "
                                f"{_pkg_version('postgraphile-plugin-connection-filter')} (bench/.tools/node)"))
            elif self.npm and self.node:
                c.append(("install", f"{' '.join(POSTGRAPHILE_PINS)} → bench/.tools/node (npm)"))
            else:
                c.append(("missing", "node and npm (for PostGraphile)"))
        c.append(("ok", f"PostgreSQL binaries ({self.pgbin})") if self.pgbin else
                 ("missing", "PostgreSQL server binaries (initdb, pg_ctl, psql, pgbench), e.g. apt-get install postgresql"))
        if self.root:
            c.append(("ok", "runuser (PostgreSQL runs as user postgres)") if self.runuser else
                     ("missing", "runuser (running as root: PostgreSQL must run as an unprivileged user)"))
        if self.grafton_given:
            c.append(("ok" if self.has_grafton else "missing", f"GRAFTON={self.grafton}"))
        elif self.cargo:
            c.append(("build", f"cargo build --release -p grafton (target dir {self.target_dir})"))
        else:
            c.append(("missing", "cargo (to build Grafton), or set GRAFTON=<binary>"))
        c.append(("ok", "bench/k6/closed.js, capacity.js") if self.k6_scripts else
                 ("missing", "bench/k6/closed.js and capacity.js"))
        if "writes" in cfg.scenarios:
            c.append(("ok", "bench/k6/writes.js, mutations.js") if self.writes_js else
                     ("missing", "bench/k6/writes.js and mutations.js"))
        if "auth" in cfg.scenarios:
            jwt = self.grafton_has_jwt()
            c.append(("note", "auth: JWT or role headers, decided when the server starts (is --jwt-secret accepted?)"
                      if jwt is None else "auth: `grafton serve` has --jwt-secret: the roles are measured with JWTs"
                      if jwt else "auth: `grafton serve --help` lists no --jwt-secret: unless the server accepts "
                                  "it, the roles are measured via x-hasura-role/x-hasura-user-id headers "
                                  "(labelled so)"))
            if not any(x in cfg.systems for x in auth.SYSTEMS):
                c.append(("note", "auth: needs grafton or sqlite among the systems: it will be skipped"))
        if "qos" in cfg.scenarios:
            c.append(("ok", "bench/k6/qos.js") if self.qos_js else ("missing", "bench/k6/qos.js"))
            if "grafton" not in cfg.systems:
                c.append(("note", "qos: needs grafton among the systems: it will be skipped"))
        if "ceiling" in cfg.scenarios:
            if not self.make_scripts:
                c.append(("note", "bench/pgbench/make_scripts.py not found: the ceiling will be skipped"))
            elif self.has_grafton and not self.grafton_has_sql():
                c.append(("note", "`grafton sql` not available in this binary: the ceiling will be skipped"))
        return c


# ----------------------------------------------------------------- the run

class Bench:
    def __init__(self, cfg: plan.Config, env: Env, out_dir: str, argv: list[str]):
        self.cfg, self.env, self.out = cfg, env, out_dir
        self.raw = os.path.join(out_dir, "raw")
        self.procs = procs.Procs()
        self.tmp: str | None = None
        self.pgdata: str | None = None
        self.db_url: str | None = None
        self.urls: dict[str, str] = {}
        self.pids: dict[str, int] = {}
        self.ceiling_sql: str | None = None
        self.write_urls: dict[str, str] = {}  # PostGraphile with its mutations (started for the writes)
        self.write_base: dict[str, int] = {}  # "postgres" / "sqlite": venues' max(id) before any write
        self.write_skip: dict[tuple[str, str], str] = {}  # (system, write) the warm-up found impossible
        self.memory_final = False  # VmHWM taken before the writes: the memory figures are the reads'
        self.auth_urls: dict[str, str] = {}  # system -> the auth server's endpoint (measurable)
        self.auth_procs: dict[str, subprocess.Popen] = {}
        self.auth_headers: dict[str, list[dict]] = {}  # "admin" / each measured role -> header sets, per user
        self.qos_procs: dict[str, subprocess.Popen] = {}  # the qos scenario's servers, by name
        self.qos_urls: dict[str, str] = {}
        self.qos_secret = secrets.token_urlsafe(24)  # their --admin-secret (wso2, rejection), never written down
        self.progress: plan.Progress | None = None
        self.capacity_left_s = float(cfg.capacity_budget_s)
        self.capacity_combos_left = 0
        self.t_start = time.time()
        self.results: dict = {
            "schema": 1,
            "mode": cfg.mode,
            "command": "bench/run" + ("".join(" " + a for a in argv)),
            "started_utc": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "rows": cfg.rows, "limit": cfg.limit, "pool": cfg.pool,
            "systems": [{"id": s, "label": report.label(s)} for s in cfg.systems],
            "scenarios": cfg.scenarios,
            "machine": machine(),
            "versions": {},
            "errors": [],
        }

    # ------------------------------------------------------------- plan
    def steps(self) -> list[plan.Step]:
        cfg, env, S = self.cfg, self.env, plan.Step
        st: list[plan.Step] = []
        if not env.has_k6:
            st.append(S("setup", f"install k6 {K6_VERSION} (go install)", 240, self.install_k6))
        if "postgraphile" in cfg.systems and not env.has_postgraphile:
            st.append(S("setup", "install PostGraphile (npm)", 60, self.install_postgraphile))
        if not env.grafton_given:
            st.append(S("setup", "build Grafton (cargo build --release -p grafton)",
                        30 if env.has_grafton else 600, self.build_grafton))
        per100k = cfg.rows / 100_000
        if self.subs_peer() and not env.has_wal2json:
            st.append(S("setup", "install wal2json for PostGraphile's live queries (apt-get, as root)", 30,
                        self.install_wal2json))
        st += [
            S("setup", "start a throwaway PostgreSQL cluster", 4, self.start_postgres),
            S("setup", f"load {cfg.rows:,} rows per table into PostgreSQL", 4 + 12 * per100k, self.load_postgres),
        ]
        if "sqlite" in cfg.systems:
            st.append(S("setup", f"create the SQLite file ({cfg.rows:,} rows per table)", 1 + 4 * per100k,
                        self.create_sqlite))
        st.append(S("setup", f"start {', '.join(report.label(s) for s in cfg.systems)} (pool {cfg.pool})", 4,
                    self.start_servers))
        if env.check_js and "postgraphile" in cfg.systems:
            st.append(S("setup", "check that the systems return the same rows (k6 check.js)",
                        3 * (len(cfg.systems) - 1), self.check_rows))
        sc = cfg.scenarios
        if "fixed" in sc:
            for s in cfg.systems:
                st.append(S("fixed", f"warm-up {s} ({', '.join(cfg.warmup_queries)}, {cfg.warmup_s} s each)",
                            len(cfg.warmup_queries) * plan.k6_est(cfg.warmup_s, 10),
                            lambda s=s: self.warmup(s)))
            for q in cfg.fixed_queries:
                for i, vus in enumerate(cfg.fixed_levels):
                    order = cfg.systems if i % 2 == 0 else list(reversed(cfg.systems))
                    for s in order:
                        st.append(S("fixed", f"{s} {q} vus={vus}", plan.k6_est(cfg.fixed_s, vus),
                                    lambda s=s, q=q, v=vus: self.fixed(s, q, v)))
        if "capacity" in sc:
            combos = [(s, q, lim) for q in cfg.capacity_queries for lim in cfg.capacity_limits
                      for s in cfg.capacity_systems if s in cfg.systems]
            self.capacity_combos_left = len(combos)
            share = cfg.capacity_budget_s / max(1, len(combos))
            for s, q, lim in combos:
                est = min(share, plan.k6_est(cfg.probe_s, 50) + 3 * cfg.trial_cost_s(cfg.max_vus // 2))
                st.append(S("capacity", f"{s} {q} limit={lim}", est,
                            lambda s=s, q=q, lim=lim: self.capacity(s, q, lim)))
        if "memory" in sc:
            for s in cfg.systems:
                st.append(S("memory", f"{s} RSS under {cfg.memory_vus} VUs ({', '.join(cfg.memory_queries)})",
                            len(cfg.memory_queries) * plan.k6_est(cfg.memory_s, cfg.memory_vus),
                            lambda s=s: self.memory(s)))
        if "ceiling" in sc:
            levels, _ = plan.ceiling_levels(cfg)
            st.append(S("ceiling", "generate Grafton's SQL for pgbench (make_scripts.py)", 2, self.ceiling_prepare))
            for q in plan.SEED:
                for vus in levels:
                    st.append(S("ceiling", f"pgbench {q} clients={vus}", cfg.ceiling_s + 1,
                                lambda q=q, v=vus: self.ceiling(q, v), when=lambda: bool(self.ceiling_sql)))
        if "writes" in sc:
            st.append(S("writes", "start PostGraphile with its default mutations; venues' max(id)", wr.PREPARE_S,
                        self.writes_prepare))
            for s in cfg.systems:
                st.append(S("writes", f"warm-up and probe {s} ({', '.join(cfg.writes)}, {cfg.writes_warmup_s} s "
                                      "each, 10 VUs)",
                            len(cfg.writes) * plan.k6_est(cfg.writes_warmup_s, 10) + wr.RESET_S,
                            lambda s=s: self.writes_warmup(s)))
            for w, vus, s in wr.run_order(cfg.writes, cfg.writes_levels, cfg.systems):
                st.append(S("writes", f"{s} {w} vus={vus}", plan.k6_est(cfg.writes_s, vus) + wr.RESET_S,
                            lambda s=s, w=w, v=vus: self.write(s, w, v),
                            when=lambda s=s, w=w: (s, w) not in self.write_skip))
        if "auth" in sc:
            st += self.auth_steps()
        if "qos" in sc:
            st += self.qos_steps()
        if "subscriptions" in sc:
            st += self.subs_steps()
        if "ops" in sc:
            st += self.ops_steps()
        st.append(S("report", "results.json, summary.md, charts", 1, self.write_report))
        return st

    # ------------------------------------------------------------- helpers
    def log(self, name: str) -> str:
        return os.path.join(self.raw, name)

    def error(self, msg: str) -> None:
        self.results["errors"].append(msg)
        print(f"!! {msg}", file=sys.stderr, flush=True)

    def as_pg(self, argv: list[str]) -> list[str]:
        return ["runuser", "-u", "postgres", "--"] + argv if self.env.root else argv

    def check_call(self, argv, log_name, what, timeout=None, **kw):
        rc = self.procs.run(argv, log_path=self.log(log_name), timeout=timeout, **kw)
        if rc != 0:
            tail = tail_of(self.log(log_name))
            raise RuntimeError(f"{what} failed (exit {rc}); raw/{log_name}:\n{tail}")

    def k6(self, script: str, env: dict, log_name: str, summary: str) -> dict | None:
        argv = [self.env.k6, "run", "-q", "--no-usage-report", "--address", ""]
        for k, v in env.items():
            argv += ["-e", f"{k}={v}"]
        argv += ["-e", f"SUMMARY={summary}", os.path.join(K6_DIR, script)]
        if os.path.exists(summary):
            os.remove(summary)
        self.procs.run(argv, log_path=self.log(log_name), env={**os.environ, "K6_NO_USAGE_REPORT": "true"})
        try:
            with open(summary) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def closed(self, system: str, query: str, vus: int, seconds: int, name: str, limit: int | None = None,
               url: str | None = None, headers: list[dict] | None = None):
        env = {"URL": url or self.urls[system], "SYSTEM": k6_system(system), "QUERY": query,
               "LIMIT": limit or self.cfg.limit, "VUS": vus, "DURATION": f"{seconds}s"}
        if headers:
            env["HEADERS"] = json.dumps(headers, separators=(",", ":"))
        s = self.k6("closed.js", env, f"{name}.log", self.log(f"{name}.json"))
        if s is None:
            self.error(f"{name}: k6 wrote no summary (see raw/{name}.log: {tail_of(self.log(name + '.log'), 3)})")
        return s

    # ------------------------------------------------------------- setup
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
            else:
                p = self.procs.start(self.grafton_argv(s, port), log_path=self.log(f"{s}.log"))
                url, probe = f"http://127.0.0.1:{port}/v1/graphql", "{ venues(limit: 1) { id } }"
            started[s] = (p, url, probe)
        for s, (p, url, probe) in started.items():
            try:
                procs.wait_graphql(url, probe, p, 90)
            except RuntimeError as e:
                raise RuntimeError(f"{report.label(s)}: {e}; log raw/{'postgraphile' if s == 'postgraphile' else s}"
                                   f".log:\n{tail_of(self.log(s + '.log'))}")
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
                     extra: list[str] | None = None) -> list[str]:
        """`grafton serve` on PostgreSQL (system grafton) or the SQLite file (sqlite), phrag naming."""
        db = self.db_url if system == "grafton" else f"sqlite://{self.sqlite_file}"
        return ([self.env.grafton, "serve", "--database-url", db, "--naming", "phrag", "--host", "127.0.0.1",
                 "--port", str(port), "--pool-size", str(self.cfg.pool)]
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

    def check_rows(self):
        for s in [x for x in self.cfg.systems if x != "postgraphile"]:
            argv = [self.env.k6, "run", "-q", "--no-usage-report", "--address", "", "-e", f"GRAFTON_URL={self.urls[s]}",
                    "-e", f"POSTGRAPHILE_URL={self.urls['postgraphile']}", "-e", f"LIMIT={self.cfg.limit}",
                    "-e", "SEEDS=1", os.path.join(K6_DIR, "check.js")]
            rc = self.procs.run(argv, log_path=self.log(f"check-{s}.log"), timeout=120)
            if rc != 0:
                self.error(f"same rows? {report.label(s)} and PostGraphile answers differ or the check failed "
                           f"(exit {rc}, raw/check-{s}.log: {tail_of(self.log(f'check-{s}.log'), 3)})")
            else:
                self.progress.say("setup", f"{report.label(s)} and PostGraphile return the same rows")

    # ------------------------------------------------------------- scenarios
    def warmup(self, system: str):
        for q in self.cfg.warmup_queries:
            self.closed(system, q, 10, self.cfg.warmup_s, f"warmup-{system}-{q}")

    def fixed(self, system: str, query: str, vus: int):
        fx = self.results.setdefault("fixed", {"levels": self.cfg.fixed_levels, "queries": self.cfg.fixed_queries,
                                               "duration_s": self.cfg.fixed_s, "runs": []})
        name = f"fixed-{system}-{query}-{vus}"
        s = self.closed(system, query, vus, self.cfg.fixed_s, name)
        row = {"system": system, "query": query, "vus": vus, "raw": f"raw/{name}.json"}
        if s is None:
            row["error"] = "k6 failed"
        else:
            row.update({k: s.get(k) for k in ("rps", "requests", "failed_rate", "p50", "p75", "p90", "p95", "p99",
                                              "min", "max", "avg")})
        fx["runs"].append(row)

    def capacity(self, system: str, query: str, limit: int):
        cfg = self.cfg
        c = self.results.setdefault("capacity", {
            "ramp_s": cfg.ramp_s, "hold_s": cfg.hold_s, "step": cfg.step, "refine": cfg.refine,
            "max_vus": cfg.max_vus, "budget_s": cfg.capacity_budget_s, "quick": cfg.mode == "quick", "results": []})
        t0 = time.monotonic()
        budget = self.capacity_left_s / max(1, self.capacity_combos_left)
        tag = f"{system}-{query}-{limit}"
        probe = self.closed(system, query, 50, cfg.probe_s, f"capacity-probe-{tag}", limit=limit)
        if probe and probe.get("rps"):
            start = min(cap.hint_from_rps(probe["rps"], step=cfg.step), cfg.max_vus)
        else:
            start = cfg.step
        trials_n = [0]

        def trial(vus: int) -> dict:
            trials_n[0] += 1
            self.progress.say("capacity", f"{system} {query} limit={limit} trial {trials_n[0]}: {vus} VUs "
                                          f"({cfg.ramp_s} s ramp + {cfg.hold_s} s hold)")
            name = f"capacity-{tag}-{vus}"
            s = self.k6("capacity.js", {"URL": self.urls[system], "SYSTEM": k6_system(system), "QUERY": query,
                                        "LIMIT": limit, "TARGET": vus, "RAMP": f"{cfg.ramp_s}s",
                                        "HOLD": f"{cfg.hold_s}s"}, f"{name}.log", self.log(f"{name}.json"))
            if s is None:
                self.error(f"{name}: k6 wrote no summary (raw/{name}.log)")
                return {"vus": vus, "passed": False, "error": "k6 failed", "raw": f"raw/{name}.json"}
            keep = {k: s.get(k) for k in ("passed", "p95", "p50", "p99", "min", "max", "avg", "requests", "rps",
                                          "failed_rate")}
            return {"vus": vus, **keep, "raw": f"raw/{name}.json"}

        # The probe's time counts against this combination's share.
        res = cap.search(trial, start=start, step=cfg.step, refine=cfg.refine, max_vus=cfg.max_vus,
                         budget_s=max(0.0, budget - (time.monotonic() - t0)), trial_cost_s=cfg.trial_cost_s)
        best = res["best"]
        c["results"].append({
            "system": system, "query": query, "limit": limit, "max_vus": res["best_vus"],
            "stopped_by": res["stopped_by"], "start_vus": start, "probe_rps": probe.get("rps") if probe else None,
            "best": {k: best.get(k) for k in ("p95", "min", "max", "requests", "rps", "failed_rate")} if best else None,
            "trials": [t for _, t in res["trials"]],
        })
        self.progress.say("capacity", f"{system} {query} limit={limit}: {res['best_vus']} VUs "
                                      f"({cap.EXPLAIN[res['stopped_by']]})")
        self.capacity_left_s -= time.monotonic() - t0
        self.capacity_combos_left -= 1

    def memory(self, system: str):
        m = self.results.setdefault("memory", {"systems": {}})
        m.update({"load_vus": self.cfg.memory_vus, "load_queries": self.cfg.memory_queries})
        pid, samples, stop = self.pids[system], [], threading.Event()

        def sample():
            while not stop.is_set():
                v = procs.tree_kb(pid, "VmRSS")
                if v:
                    samples.append(v)
                stop.wait(0.25)

        th = threading.Thread(target=sample, daemon=True)
        th.start()
        try:
            for q in self.cfg.memory_queries:
                self.closed(system, q, self.cfg.memory_vus, self.cfg.memory_s, f"memory-{system}-{q}")
        finally:
            stop.set()
            th.join()
        entry = m["systems"].setdefault(system, {})
        entry["load_kb"] = max(samples) if samples else None
        entry["peak_kb"] = max(filter(None, [procs.tree_kb(pid, "VmHWM"), entry["load_kb"]]), default=None)

    def ceiling_prepare(self):
        levels, skipped = plan.ceiling_levels(self.cfg)
        c = self.results.setdefault("ceiling", {"status": "ok", "levels": levels, "runs": []})
        if skipped:
            c["note"] = (f"Not run at {', '.join(map(str, skipped))} clients: pgbench opens one connection per "
                         f"client and the cluster allows {plan.MAX_CONNECTIONS}.")
        if not self.env.make_scripts:
            c["status"] = "skipped: bench/pgbench/make_scripts.py not found"
        elif not self.env.grafton_has_sql():
            c["status"] = "skipped: grafton sql not available"
        else:
            d = os.path.join(self.tmp, "pgbench")
            os.makedirs(d, exist_ok=True)
            try:
                self.check_call([sys.executable, MAKE_SCRIPTS, "--grafton", self.env.grafton, "--database-url",
                                 self.db_url, "--out", d, "--limit", str(self.cfg.limit)], "make_scripts.log",
                                "make_scripts.py")
                self.ceiling_sql = d
                for q in plan.SEED:
                    shutil.copy(os.path.join(d, f"{q}.sql"), self.log(f"ceiling-{q}.sql"))
            except (RuntimeError, OSError) as e:
                c["status"] = f"skipped: {str(e).splitlines()[0]}"
        if c["status"] != "ok":
            self.progress.say("ceiling", c["status"])

    def ceiling(self, query: str, vus: int):
        c = self.results["ceiling"]
        name = f"ceiling-{query}-{vus}"
        argv = pgbench.command(self.env.pg("pgbench"), self.db_url, os.path.join(self.ceiling_sql, f"{query}.sql"),
                               vus, self.cfg.ceiling_s)
        rc = self.procs.run(argv, log_path=self.log(f"{name}.txt"), timeout=self.cfg.ceiling_s + 120)
        with open(self.log(f"{name}.txt"), errors="replace") as f:
            text = f.read()
        try:
            r = pgbench.parse(text)
        except ValueError:
            self.error(f"{name}: pgbench failed (exit {rc}, raw/{name}.txt: {tail_of(self.log(name + '.txt'), 3)})")
            return
        g = next((x for x in self.results.get("fixed", {}).get("runs", [])
                  if (x["system"], x["query"], x["vus"]) == ("grafton", query, vus) and x.get("rps")), None)
        if g is None and "grafton" in self.urls:  # fixed did not run there: measure Grafton now
            g = self.closed("grafton", query, vus, self.cfg.ceiling_s, f"ceiling-grafton-{query}-{vus}")
        grps = g.get("rps") if g else None
        c["runs"].append({"query": query, "vus": vus, "tps": r["tps"], "latency_avg_ms": r["latency_avg_ms"],
                          "failed": r["failed"], "transactions": r["transactions"], "grafton_rps": grps,
                          "fraction": grps / r["tps"] if grps and r["tps"] else None, "raw": f"raw/{name}.txt"})

    # ------------------------------------------------------------- writes
    def writes_prepare(self):
        """Runs after every read scenario. Freezes the memory peaks (the writes must not
        count in them), records venues' max(id) per database (the reset point and the
        id range of update_by_pk), starts PostGraphile again with its CRUD mutations
        (the read one keeps --disable-default-mutations)."""
        cfg = self.cfg
        self.freeze_memory()
        self.write_base["postgres"] = self.venues_max_id("postgres")
        if "sqlite" in cfg.systems:
            self.write_base["sqlite"] = self.venues_max_id("sqlite")
        self.results["writes"] = {
            "status": "ok", "writes": cfg.writes, "levels": cfg.writes_levels, "duration_s": cfg.writes_s,
            "warmup_s": cfg.writes_warmup_s, "batch": wr.BATCH,
            "descriptions": {w: wr.DESCRIPTIONS[w] for w in cfg.writes},
            "state": "after the read scenarios; after every run (warm-ups included) the rows it inserted are "
                     "deleted (id > the max(id) before the writes) and, on PostgreSQL, venues is "
                     "VACUUM ANALYZEd, so every run starts from the loaded table",
            "base_max_id": dict(self.write_base), "unavailable": [], "warmups": [], "runs": []}
        if "postgraphile" in cfg.systems:
            port = procs.free_port()
            p = self.start_postgraphile(port, mutations=True, log_name="postgraphile-writes.log")
            url = f"http://127.0.0.1:{port}/graphql"
            try:
                procs.wait_graphql(url, "{ allVenues(first: 1) { nodes { id } } }", p, 90)
            except RuntimeError as e:
                raise RuntimeError(f"PostGraphile (mutations): {e}; raw/postgraphile-writes.log:\n"
                                   f"{tail_of(self.log('postgraphile-writes.log'))}")
            self.write_urls["postgraphile"] = url
            self.progress.say("writes", f"PostGraphile with mutations: {url} (pid {p.pid}); venues max(id): "
                                        + ", ".join(f"{k} {v}" for k, v in self.write_base.items()))

    def freeze_memory(self):
        m = self.results.get("memory")
        if m and "memory" in self.cfg.scenarios:
            for s, pid in self.pids.items():
                e = m["systems"].setdefault(s, {})
                e["peak_kb"] = max(filter(None, [procs.tree_kb(pid, "VmHWM"), e.get("peak_kb")]), default=None)
        self.memory_final = True

    def venues_max_id(self, db: str) -> int:
        if db == "postgres":
            v = _out([self.env.pg("psql"), "-At", self.db_url, "-c", f"SELECT coalesce(max(id), 0) FROM {wr.TABLE}"])
            if v is None or not v.strip().isdigit():
                raise RuntimeError(f"could not read max(id) of {wr.TABLE} from PostgreSQL")
            return int(v)
        c = sqlite3.connect(self.sqlite_file, timeout=30)
        try:
            return int(c.execute(f"SELECT coalesce(max(id), 0) FROM {wr.TABLE}").fetchone()[0])
        finally:
            c.close()

    def writes_reset(self, system: str):
        """Put venues back as loaded (the inserted rows go; the renamed names stay)."""
        db = wr.database(system)
        base = self.write_base[db]
        if db == "postgres":
            argv = [self.env.pg("psql"), "-q", "-v", "ON_ERROR_STOP=1", self.db_url]
            for stmt in wr.postgres_reset(base):
                argv += ["-c", stmt]
            self.check_call(argv, "writes-reset.log", "resetting venues (PostgreSQL)", timeout=300)
        else:
            c = sqlite3.connect(self.sqlite_file, timeout=60)
            try:
                for stmt in wr.sqlite_reset(base):
                    c.execute(stmt)
                c.commit()
            finally:
                c.close()

    def write_k6(self, system: str, write: str, vus: int, seconds: int, name: str):
        url = self.write_urls.get(system) or self.urls[system]
        s = self.k6("writes.js", {"URL": url, "SYSTEM": k6_system(system), "WRITE": write, "VUS": vus,
                                  "DURATION": f"{seconds}s", "MAX_ID": self.write_base[wr.database(system)],
                                  "TAG": name}, f"{name}.log", self.log(f"{name}.json"))
        try:
            with open(self.log(f"{name}.log"), errors="replace") as f:
                log_text = f.read()
        except OSError:
            log_text = ""
        return s, log_text

    def writes_warmup(self, system: str):
        """Each write for a few seconds at 10 VUs: warms the system up and probes it; a
        write that mostly fails here (e.g. no such mutation) is not measured."""
        w_res = self.results["writes"]
        try:
            for w in self.cfg.writes:
                name = f"writes-warmup-{system}-{w}"
                s, log_text = self.write_k6(system, w, 10, self.cfg.writes_warmup_s, name)
                why = wr.probe_verdict(s, log_text)
                w_res["warmups"].append({"system": system, "write": w, "requests": s and s.get("requests"),
                                         "failed_rate": s and s.get("failed_rate"), "raw": f"raw/{name}.json"})
                if why:
                    self.write_skip[(system, w)] = why
                    w_res["unavailable"].append({"system": system, "write": w, "reason": why})
                    self.progress.say("writes", f"{system} {w}: not measured ({why[:200]})")
        finally:
            self.writes_reset(system)

    def write(self, system: str, write: str, vus: int):
        name = f"writes-{system}-{write}-{vus}"
        try:
            s, log_text = self.write_k6(system, write, vus, self.cfg.writes_s, name)
        finally:
            self.writes_reset(system)
        row = {"system": system, "write": write, "vus": vus, "raw": f"raw/{name}.json"}
        if s is None:
            row["error"] = "k6 failed"
            self.error(f"{name}: k6 wrote no summary (raw/{name}.log: {tail_of(self.log(name + '.log'), 3)})")
        else:
            row.update({k: s.get(k) for k in ("rps", "rows_per_s", "rows", "rows_per_request", "requests",
                                              "failed_rate", "p50", "p75", "p90", "p95", "p99", "min", "max",
                                              "avg")})
            if s.get("failed_rate"):
                row["first_failure"] = wr.first_failure(log_text)
        self.results["writes"]["runs"].append(row)

    def not_yet(self, name: str):
        self.results[name] = {"status": plan.NOT_YET[name]}

    # ------------------------------------------------------------- auth
    def auth_systems(self) -> list[str]:
        return [s for s in auth.SYSTEMS if s in self.cfg.systems]

    def auth_steps(self) -> list[plan.Step]:
        cfg, S = self.cfg, plan.Step
        systems = self.auth_systems()
        if not systems:
            return [S("auth", "skipped: needs grafton or sqlite among the systems", 0,
                      lambda: self.results.__setitem__("auth", {
                          "status": "skipped: needs Grafton PG or Grafton SQLite among the systems"}))]
        live = lambda s: (lambda: s in self.auth_urls)  # noqa: E731
        labels = ", ".join(report.label(s) for s in systems)
        roles = " and ".join(auth.MEASURED)
        st = [S("auth", f"start {labels} with roles {roles} (JWT if accepted, else headers); "
                        "count the rows they keep", auth.PREPARE_S, self.auth_prepare)]
        for s in systems:
            st.append(S("auth", f"warm-up {s} {auth.QUERY} as {', '.join(auth.WHO)} ({cfg.auth_warmup_s} s "
                                "each, 10 VUs)", len(auth.WHO) * plan.k6_est(cfg.auth_warmup_s, 10),
                        lambda s=s: self.auth_warmup(s), when=live(s)))
        for s, vus, who, rep in auth.run_order(cfg.auth_levels, systems):
            st.append(S("auth", f"{s} {auth.QUERY} as {who} vus={vus} ({rep}/2)", plan.k6_est(cfg.auth_s, vus),
                        lambda s=s, v=vus, w=who, r=rep: self.auth_run(s, v, w, r), when=live(s)))
        st.append(S("auth", "stop the auth servers", 0.5, self.auth_stop))
        idle_est = auth.MEMORY_START_S + cfg.auth_idle_window_s + 0.5
        for s in systems:
            for n in (0, auth.ROLES):
                st.append(S("auth", f"{s} idle RSS with {n} roles", idle_est,
                            lambda s=s, n=n: self.auth_memory(s, n)))
        return st

    def write_config(self, name: str, config: dict, see: str = "bench/lib/auth.py") -> str:
        """Writes a config YAML into <out>/config/ (committed with the results); returns its path."""
        d = os.path.join(self.out, "config")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(f"# written by bench/run ({self.results['command']}); see {see}\n")
            f.write(auth.to_yaml(config))
        return path

    def start_auth_server(self, system: str, config: str, extra: list[str], log_name: str,
                          headers: dict) -> tuple[subprocess.Popen | None, str, str | None]:
        """(process, url, None) once it answers as admin, else (None, url, why: the log's tail)."""
        port = procs.free_port()
        p = self.procs.start(self.grafton_argv(system, port, config, extra), log_path=self.log(log_name))
        url = f"http://127.0.0.1:{port}/v1/graphql"
        try:
            procs.wait_graphql(url, "{ venues(limit: 1) { id } }", p, 60, headers=headers)
        except RuntimeError as e:
            self.procs.stop(p)
            return None, url, f"{e}; raw/{log_name}:\n{tail_of(self.log(log_name), 30)}"
        return p, url, None

    def auth_prepare(self):
        """Starts Grafton PG / SQLite with the measured roles (config/auth.yaml), first
        with --jwt-secret and --admin-secret; a Grafton that rejects those flags is
        started again without them and the roles go by headers. Then counts, through
        the server, the meetups admin sees and each user of each role sees."""
        cfg = self.cfg
        users = auth.user_ids(cfg.rows)
        config = self.write_config("auth.yaml", auth.auth_config())
        a = self.results["auth"] = {
            "status": "ok", "mode": "jwt", "query": auth.QUERY, "roles": auth.MEASURED,
            "filters": {r: auth.FILTER_TEXT[r] for r in auth.MEASURED},
            "filter_config": {r: auth.brief(auth.FILTERS[r]) for r in auth.MEASURED},
            "config": os.path.relpath(config, self.out), "users": users, "levels": cfg.auth_levels,
            "duration_s": cfg.auth_s, "warmup_s": cfg.auth_warmup_s, "reps": 2,
            "order": "per level every system (order alternating per level), per system admin and the roles "
                     f"mirrored ({', '.join(auth.WHO + auth.WHO[::-1])}; the next level the reverse); a "
                     "figure is the mean of its two runs",
            "target_ratio": auth.TARGET_RATIO, "kept": {}, "unavailable": [], "runs": [], "overhead": [],
        }
        key, admin_secret, now = secrets.token_urlsafe(32), secrets.token_urlsafe(24), int(time.time())
        jwt_flags = ["--jwt-secret", auth.jwt_secret_json(key), "--admin-secret", admin_secret]
        mode = "jwt"
        for s in self.auth_systems():
            admin = auth.header_sets(mode, "admin", users, admin_secret=admin_secret)[0]
            p, url, failed_log = self.start_auth_server(s, config, jwt_flags if mode == "jwt" else [],
                                                        f"auth-{s}.log", admin)
            if p is None and mode == "jwt" and auth.rejects_jwt_flags(failed_log):
                mode = a["mode"] = "headers"
                a["jwt_rejected"] = next((ln.strip() for ln in failed_log.splitlines() if "jwt-secret" in ln
                                          or "admin-secret" in ln), failed_log.splitlines()[0] if failed_log else "")
                self.progress.say("auth", f"this Grafton rejects --jwt-secret ({a['jwt_rejected']}): "
                                          "measuring the roles via x-hasura-role/x-hasura-user-id headers")
                admin = auth.header_sets(mode, "admin", users)[0]
                p, url, failed_log = self.start_auth_server(s, config, [], f"auth-{s}.log", admin)
            if p is None:
                why = failed_log[-800:]
                a["unavailable"].append({"system": s, "reason": why})
                self.error(f"auth: {report.label(s)} {why}")
                continue
            self.auth_procs[s] = p
            self.auth_headers = {w: auth.header_sets(mode, w, users, key=key, admin_secret=admin_secret, now=now)
                                 for w in auth.WHO}
            why = self.auth_count(s, url)
            if why:
                a["unavailable"].append({"system": s, "reason": why})
                self.error(f"auth: {report.label(s)}: {why}")
                continue
            self.auth_urls[s] = url
        a["mode"], a["mode_text"] = mode, auth.MODE_TEXT[mode]
        if not self.auth_urls:
            a["status"] = "failed: " + "; ".join(f"{report.label(u['system'])}: {u['reason'][:300]}"
                                                 for u in a["unavailable"])

    def auth_count(self, system: str, url: str) -> str | None:
        """Counts meetups as admin and as each user (aggregates, through the server);
        checks an anonymous request is refused when secrets are set. Returns why the
        system cannot be measured, or None."""
        a = self.results["auth"]
        q = {"query": "{ meetups_aggregate { aggregate { count } } }"}

        def count(headers):
            status, body = procs.post_status(url, q, timeout=60, headers=headers)
            try:
                return int(body["data"]["meetups_aggregate"]["aggregate"]["count"]), None
            except (TypeError, KeyError, ValueError):
                return None, f"status {status}: {json.dumps(body)[:400] if body is not None else 'no JSON'}"

        total, err = count(self.auth_headers["admin"][0])
        if err:
            return f"counting meetups as admin failed ({err})"
        kept: dict = {"total": total, "roles": {}}
        for role in auth.MEASURED:
            per_user = {}
            for u, h in zip(a["users"], self.auth_headers[role]):
                n, err = count(h)
                if err:
                    return f"{role}'s request was refused or failed ({err})"
                per_user[str(u)] = n
            kept["roles"][role] = {"per_user": per_user,
                                   "share": sum(per_user.values()) / len(per_user) / total if total else None}
        if a["mode"] == "jwt":  # in dev mode (headers) a request without headers is admin
            status, body = procs.post_status(url, q, timeout=30)
            answered = bool(body and body.get("data") and not body.get("errors"))
            kept["anonymous"] = f"status {status}, " + ("answered with data" if answered else "refused")
        a["kept"][system] = kept
        self.progress.say("auth", f"{report.label(system)}: admin sees {total:,} meetups; " + "; ".join(
            f"{r} {', '.join(f'{n:,}' for n in k['per_user'].values())} ({100 * (k['share'] or 0):.1f}%)"
            for r, k in kept["roles"].items()))
        for r, k in kept["roles"].items():
            if any(n >= total for n in k["per_user"].values()):
                return f"{r} sees every meetup ({k['per_user']} of {total}): its filter is not applied"
        return None

    def auth_warmup(self, system: str):
        for who in auth.WHO:
            self.closed(system, auth.QUERY, 10, self.cfg.auth_warmup_s, f"auth-warmup-{system}-{who}",
                        url=self.auth_urls[system], headers=self.auth_headers[who])

    def auth_run(self, system: str, vus: int, who: str, rep: int):
        a = self.results["auth"]
        name = f"auth-{system}-{who}-{vus}-{rep}"
        s = self.closed(system, auth.QUERY, vus, self.cfg.auth_s, name, url=self.auth_urls[system],
                        headers=self.auth_headers[who])
        row = {"system": system, "vus": vus, "who": who, "rep": rep, "raw": f"raw/{name}.json"}
        if s is None:
            row["error"] = "k6 failed"
        else:
            row.update({k: s.get(k) for k in ("rps", "requests", "failed_rate", "p50", "p75", "p90", "p95", "p99",
                                              "min", "max", "avg")})
        a["runs"].append(row)
        a["overhead"] = auth.overhead(a["runs"])

    def auth_stop(self):
        for p in self.auth_procs.values():
            self.procs.stop(p)
        self.auth_procs.clear()

    def auth_memory(self, system: str, n: int):
        """Idle RSS of a fresh server with n roles (n = 0: no config): started, answered
        one admin query, then sampled every 0.25 s until idle (RSS within 1% and no CPU
        used over the idle window) or the time limit."""
        cfg = self.cfg
        a = self.results.setdefault("auth", {"status": "ok"})
        m = a.setdefault("memory", {"roles": auth.ROLES, "target_mb": auth.TARGET_MEMORY_MB,
                                    "idle_window_s": cfg.auth_idle_window_s, "idle_max_s": cfg.auth_idle_max_s,
                                    "systems": {}})
        config = None
        if n:
            config = self.write_config(f"roles-{n}.yaml", auth.roles_config(n))
            m["config"] = os.path.relpath(config, self.out)
        entry = m["systems"].setdefault(system, {})
        key = "roles" if n else "none"
        name = f"auth-memory-{system}-{n}"
        t0 = time.monotonic()
        port = procs.free_port()
        p = self.procs.start(self.grafton_argv(system, port, config), log_path=self.log(f"{name}.log"))
        try:
            try:
                procs.wait_graphql(f"http://127.0.0.1:{port}/v1/graphql", "{ venues(limit: 1) { id } }", p, 90)
            except RuntimeError as e:
                entry[key] = {"error": f"{e}; raw/{name}.log: {tail_of(self.log(name + '.log'), 5)[-400:]}"}
                self.error(f"auth memory: {report.label(system)} with {n} roles: {entry[key]['error']}")
                return
            ready_s = time.monotonic() - t0
            window = max(2, int(cfg.auth_idle_window_s / 0.25) + 1)
            samples: list[tuple[int, int]] = []
            deadline = time.monotonic() + cfg.auth_idle_max_s
            while time.monotonic() < deadline:
                rss, ticks = procs.status_kb(p.pid, "VmRSS"), procs.cpu_ticks(p.pid)
                if rss is None or ticks is None:
                    break
                samples.append((rss, ticks))
                if auth.settled(samples, window):
                    break
                time.sleep(0.25)
            idle = bool(samples) and auth.settled(samples, window)
            entry[key] = {"roles": n, "idle_kb": samples[-1][0] if samples else None,
                          "hwm_kb": procs.status_kb(p.pid, "VmHWM"), "ready_s": round(ready_s, 2),
                          "settled": idle, "sampled_s": round(0.25 * max(0, len(samples) - 1), 2),
                          "raw": f"raw/{name}.log"}
            if "none" in entry and "roles" in entry and entry["none"].get("idle_kb") and \
                    entry["roles"].get("idle_kb"):
                entry["delta_kb"] = entry["roles"]["idle_kb"] - entry["none"]["idle_kb"]
            self.progress.say("auth", f"{report.label(system)} with {n} roles: idle {report.mb(entry[key]['idle_kb'])}"
                                      f"{'' if idle else ' (not settled)'}, ready in {ready_s:.1f} s")
        finally:
            self.procs.stop(p)

    # ------------------------------------------------------------- subscriptions
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

    # ------------------------------------------------------------- qos
    def qos_steps(self) -> list[plan.Step]:
        cfg, S = self.cfg, plan.Step
        if "grafton" not in cfg.systems:
            return [S("qos", "skipped: needs grafton among the systems", 0,
                      lambda: self.results.__setitem__("qos", {
                          "status": "skipped: needs Grafton PG among the systems"}))]
        up = lambda *names: (lambda: all(n in self.qos_urls for n in names))  # noqa: E731
        stop = lambda *names: (lambda: self.qos_stop(*names))  # noqa: E731
        st = [S("qos", f"attack: {qos.HEAVY_VUS} VUs loop the unbounded nested query, {qos.CHEAP_VUS} VUs "
                       f"venues_by_pk, {cfg.qos_attack_s} s (a fresh Grafton PG, admin time_limit "
                       f"{qos.ATTACK_TIME_LIMIT_S} s; RSS every 0.25 s)",
                qos.START_S + plan.k6_est(cfg.qos_attack_s, qos.HEAVY_VUS + qos.CHEAP_VUS) + qos.GRACE_S,
                self.qos_attack)]
        # overhead: two servers, limits off and on, side by side
        st.append(S("qos", "overhead: start Grafton PG without limits and with every limit (generous); "
                           f"check the limits apply ({qos.CHECK_DEPTH} deep is refused)", 2 * qos.START_S,
                    self.qos_overhead_start))
        for v in qos.VARIANTS:
            st.append(S("qos", f"overhead: warm-up limits {v} ({', '.join(qos.OVERHEAD_QUERIES)}, "
                               f"{cfg.qos_warmup_s} s each, 10 VUs)",
                        len(qos.OVERHEAD_QUERIES) * plan.k6_est(cfg.qos_warmup_s, 10),
                        lambda v=v: self.qos_overhead_warmup(v), when=up("off", "on")))
        for q, v, rep in qos.overhead_order(qos.OVERHEAD_QUERIES, cfg.qos_overhead_reps):
            st.append(S("qos", f"overhead: {q} limits {v} vus={cfg.qos_overhead_vus} "
                               f"({rep}/{cfg.qos_overhead_reps})",
                        plan.k6_est(cfg.qos_overhead_s, cfg.qos_overhead_vus),
                        lambda q=q, v=v, r=rep: self.qos_overhead(q, v, r), when=up("off", "on")))
        st.append(S("qos", "overhead: stop its servers", 0.5, stop("off", "on")))
        # wso2: 1, 4, 9 root fields with and without a per-root-field rate limit
        st.append(S("qos", f"wso2: start Grafton PG (role {qos.ROLE}) without and with a rate limit of "
                           f"{qos.WSO2_PER_MIN:,} root fields/min", 2 * qos.START_S, self.qos_wso2_start))
        for v in qos.VARIANTS:
            st.append(S("qos", f"wso2: warm-up rate limit {v} ({', '.join(qos.WSO2_DOCS)}, {cfg.qos_warmup_s} s "
                               "each, 50 VUs)", len(qos.WSO2_DOCS) * plan.k6_est(cfg.qos_warmup_s, 50),
                        lambda v=v: self.qos_wso2_warmup(v), when=up("wso2-off", "wso2-on")))
        for d, vus, v in qos.wso2_order(list(qos.WSO2_DOCS), cfg.qos_wso2_levels):
            st.append(S("qos", f"wso2: {d} rate limit {v} vus={vus}",
                        plan.k6_est(cfg.qos_wso2_s, vus) + (qos.DRAIN_S if v == "on" else 0),
                        lambda d=d, vus=vus, v=v: self.qos_wso2(d, vus, v), when=up("wso2-off", "wso2-on")))
        st.append(S("qos", "wso2: stop its servers", 0.5, stop("wso2-off", "wso2-on")))
        # rejection: Grafton's CPU per refused (and per accepted) request
        st.append(S("qos", "rejection: start Grafton PG (roles with a rate limit and a depth limit); idle CPU",
                    qos.START_S + 2, self.qos_reject_start))
        for kind in qos.REJECTIONS:
            st.append(S("qos", f"rejection: {kind}, {cfg.qos_reject_rate} req/s for {cfg.qos_reject_s} s "
                               "(after a 1 s warm-up); CPU from /proc/PID/stat",
                        plan.k6_est(1, 50) + plan.k6_est(cfg.qos_reject_s, 50),
                        lambda k=kind: self.qos_reject(k), when=up("reject")))
        st.append(S("qos", "rejection: stop its server", 0.5, stop("reject")))
        return st

    def qos_results(self) -> dict:
        return self.results.setdefault("qos", {"status": "ok", "unavailable": [], "config": {}})

    def qos_start(self, name: str, config: dict | None, admin_secret: bool = False,
                  flags: list[str] | None = None, section: str = "qos") -> bool:
        """Starts a Grafton PG for the qos (or ops) scenario (config/qos-<name>.yaml, extra
        `flags`); True once it answers."""
        q = self.results.setdefault(section, {"status": "ok", "unavailable": [], "config": {}})
        path = None
        if config is not None:
            path = self.write_config(f"qos-{name}.yaml", config, see="bench/lib/qos.py")
            q["config"][name] = os.path.relpath(path, self.out)
        extra = (["--admin-secret", self.qos_secret] if admin_secret else []) + (flags or [])
        port = procs.free_port()
        log_name = f"qos-server-{name}.log"
        p = self.procs.start(self.grafton_argv("grafton", port, path, extra), log_path=self.log(log_name))
        url = f"http://127.0.0.1:{port}/v1/graphql"
        try:
            procs.wait_graphql(url, "{ venues(limit: 1) { id } }", p, 60, headers=self.qos_admin(admin_secret))
        except RuntimeError as e:
            self.procs.stop(p)
            why = f"{e}; raw/{log_name}: {tail_of(self.log(log_name), 10)[-600:]}"
            q["unavailable"].append({"server": name, "reason": why})
            self.error(f"qos: Grafton PG ({name}): {why}")
            return False
        self.qos_procs[name], self.qos_urls[name] = p, url
        return True

    def qos_admin(self, admin_secret: bool) -> dict:
        return {"x-hasura-admin-secret": self.qos_secret} if admin_secret else {}

    def qos_stop(self, *names: str):
        for n in names:
            p = self.qos_procs.pop(n, None)
            self.qos_urls.pop(n, None)
            if p is not None:
                self.procs.stop(p)

    def qos_k6(self, name: str, env: dict) -> dict | None:
        env = {"MAX_ID": self.cfg.rows, **env}
        s = self.k6("qos.js", env, f"{name}.log", self.log(f"{name}.json"))
        if s is None:
            self.error(f"{name}: k6 wrote no summary (raw/{name}.log: {tail_of(self.log(name + '.log'), 3)})")
        return s

    def qos_attack(self):
        cfg = self.cfg
        q = self.qos_results()
        a = q["attack"] = {
            "heavy_vus": qos.HEAVY_VUS, "cheap_vus": qos.CHEAP_VUS, "duration_s": cfg.qos_attack_s,
            "time_limit_s": qos.ATTACK_TIME_LIMIT_S, "heavy_query": qos.HEAVY_QUERY, "cheap_query": qos.CHEAP_QUERY,
            "target_p95_ms": qos.TARGET_CHEAP_P95_MS, "target_rss_mb": qos.TARGET_RSS_MB, "raw": "raw/qos-attack.json"}
        if not self.qos_start("attack", qos.attack_config()):
            a["error"] = "the server did not start"
            return
        p = self.qos_procs["attack"]
        try:
            idle = procs.status_kb(p.pid, "VmRSS")
            samples: list[tuple[float, int]] = []
            stop = threading.Event()
            t0 = time.monotonic()

            def sample():
                while not stop.is_set():
                    v = procs.status_kb(p.pid, "VmRSS")
                    if v:
                        samples.append((round(time.monotonic() - t0, 2), v))
                    stop.wait(0.25)

            th = threading.Thread(target=sample, daemon=True)
            th.start()
            ticks0, stat0, k6_0 = procs.cpu_ticks(p.pid), proc_stat_cpu(), children_cpu_s()
            try:
                s = self.qos_k6("qos-attack", {"URL": self.qos_urls["attack"], "MODE": "attack",
                                               "HEAVY_VUS": qos.HEAVY_VUS, "CHEAP_VUS": qos.CHEAP_VUS,
                                               "DURATION": f"{cfg.qos_attack_s}s"})
            finally:
                stop.set()
                th.join()
            ticks1, stat1, k6_1 = procs.cpu_ticks(p.pid), proc_stat_cpu(), children_cpu_s()
            if stat0 and stat1:
                a["machine_cpu"] = {**qos.machine_cpu(stat0, stat1, os.sysconf("SC_CLK_TCK")),
                                    "k6_s": round(k6_1 - k6_0, 2), "cores": os.cpu_count()}
            with open(self.log("qos-attack-rss.csv"), "w") as f:
                f.write("seconds,vmrss_kb\n" + "".join(f"{t},{kb}\n" for t, kb in samples))
            a["rss"] = {"idle_kb": idle, "peak_kb": max((kb for _, kb in samples), default=None),
                        "hwm_kb": procs.status_kb(p.pid, "VmHWM"), "samples": len(samples),
                        "raw": "raw/qos-attack-rss.csv"}
            if ticks0 is not None and ticks1 is not None:
                a["cpu_s"] = round(qos.cpu_ms(ticks0, ticks1, os.sysconf("SC_CLK_TCK")) / 1000, 2)
            if s is None:
                a["error"] = "k6 failed"
                return
            g = s.get("groups", {})
            for k in ("heavy", "cheap"):
                gs = g.get(k) or {}
                a[k] = {x: gs.get(x) for x in ("requests", "rps", "ok_rps", "outcomes", "p50", "p90", "p95", "p99",
                                               "max", "bytes_max", "ok_p50", "ok_p95")}
                a[k]["errors"] = qos.errors_of(gs.get("outcomes") or {}) if gs else None
            a["unexpected"] = first_lines(self.log("qos-attack.log"), "QOS-UNEXPECTED", 3)
            a["verdicts"] = qos.attack_verdicts(a)
            self.progress.say("qos", f"attack: cheap p95 {report.ms(a['cheap'].get('p95'))} ms, "
                                     f"{a['cheap'].get('errors')} errors; heavy "
                                     f"{qos.outcomes_text(a['heavy'].get('outcomes') or {})}; peak RSS "
                                     f"{report.mb(a['rss']['peak_kb'])}")
        finally:
            self.qos_stop("attack")

    def qos_overhead_start(self):
        cfg = self.cfg
        q = self.qos_results()
        o = q["overhead"] = {
            "queries": qos.OVERHEAD_QUERIES, "vus": cfg.qos_overhead_vus, "duration_s": cfg.qos_overhead_s,
            "reps": cfg.qos_overhead_reps, "warmup_s": cfg.qos_warmup_s, "limit": cfg.limit,
            "limits": qos.GENEROUS, "target": qos.TARGET_OVERHEAD,
            "order": "per query the pair (off, on) repeated, its order alternating (off on, on off, …); "
                     "a figure is the median over the repetitions",
            "runs": [], "summary": []}
        if not (self.qos_start("off", None) and self.qos_start("on", qos.overhead_config())):
            o["error"] = "a server did not start"
            self.qos_stop("off", "on")
            return
        doc = qos.deep_document(qos.CHECK_DEPTH)
        checks = {}
        for v in qos.VARIANTS:
            status, body = procs.post_status(self.qos_urls[v], {"query": doc}, timeout=30)
            code = ((body or {}).get("errors") or [{}])[0].get("extensions", {}).get("code") if body else None
            checks[v] = "data" if body and body.get("data") and not body.get("errors") else (code or f"status {status}")
        o["check"] = {"document_depth": qos.CHECK_DEPTH, "answers": checks}
        if checks.get("on") != "depth-limit-exceeded" or checks.get("off") != "data":
            o["error"] = (f"the limits do not apply as configured: a {qos.CHECK_DEPTH}-deep document got "
                          f"{checks.get('off')} without limits and {checks.get('on')} with them")
            self.error(f"qos overhead: {o['error']}")
            self.qos_stop("off", "on")
        else:
            self.progress.say("qos", f"overhead: a {qos.CHECK_DEPTH}-deep document: without limits data, with "
                                     "limits depth-limit-exceeded")

    def qos_overhead_env(self, query: str, variant: str, vus: int, seconds: int) -> dict:
        """The closed loop of the fixed scenario (bench/k6/queries.js' document, limit and
        variables), through qos.js so that every answer is classified by its code."""
        return {"URL": self.qos_urls[variant], "MODE": "closed", "DOC": query, "LIMIT": self.cfg.limit,
                "VUS": vus, "DURATION": f"{seconds}s"}

    def qos_overhead_warmup(self, variant: str):
        for query in qos.OVERHEAD_QUERIES:
            self.qos_k6(f"qos-overhead-warmup-{variant}-{query}",
                        self.qos_overhead_env(query, variant, 10, self.cfg.qos_warmup_s))

    def qos_overhead(self, query: str, variant: str, rep: int, section: str = "qos"):
        o = self.results[section]["overhead"]
        name = f"{section}-overhead-{query}-{variant}-{rep}"
        pid = self.qos_procs[variant].pid
        ticks0 = procs.cpu_ticks(pid)
        s = self.qos_k6(name, self.qos_overhead_env(query, variant, self.cfg.qos_overhead_vus,
                                                    self.cfg.qos_overhead_s))
        ticks1 = procs.cpu_ticks(pid)
        row = {"query": query, "variant": variant, "rep": rep, "raw": f"raw/{name}.json"}
        if ticks0 is not None and ticks1 is not None:
            row["cpu_ms"] = qos.cpu_ms(ticks0, ticks1, os.sysconf("SC_CLK_TCK"))
        g = (s or {}).get("groups", {}).get("main")
        if not g:
            row["error"] = "k6 failed" if s is None else "no requests"
        else:
            out = g.get("outcomes") or {}
            # Latencies of the answers with data (a refusal is fast and would flatter them).
            row.update({"requests": g.get("requests"), "rps": g.get("rps"), "ok_rps": g.get("ok_rps"),
                        "outcomes": out, "failed_rate": qos.errors_of(out) / g["requests"] if g.get("requests")
                        else None, "p50": g.get("ok_p50"), "p95": g.get("ok_p95"), "p99": g.get("ok_p99"),
                        "all_p95": g.get("p95")})
            if row.get("cpu_ms") is not None and g.get("requests"):
                # The server's own CPU (utime + stime) per request answered.
                row["cpu_us_per_req"] = round(1000 * row["cpu_ms"] / g["requests"], 1)
            if row["failed_rate"]:
                row["unexpected"] = first_lines(self.log(f"{name}.log"), "QOS-UNEXPECTED", 1)
        o["runs"].append(row)
        o["summary"] = qos.overhead_summary(o["runs"])
        o["verdict"], o["worst_ratio"] = qos.overhead_verdict(o["summary"], o.get("target", qos.TARGET_OVERHEAD))

    # ---------------------------------------------------------------- ops
    def ops_steps(self) -> list[plan.Step]:
        cfg, S = self.cfg, plan.Step
        if "grafton" not in cfg.systems:
            return [S("ops", "skipped: needs grafton among the systems", 0,
                      lambda: self.results.__setitem__("ops", {"status": "skipped: needs Grafton PG"}))]
        up = lambda: all(n in self.qos_urls for n in qos.VARIANTS)  # noqa: E731
        st = [S("ops", "start an OpenTelemetry Collector (tests/otlp/install.sh builds it once, ~3 min)", 200,
                self.ops_collector),
              S("ops", f"start Grafton PG without metrics/traces (off) and with metrics and traces at "
                       f"{ops.SAMPLING:.0%} to the collector (on)", 2 * qos.START_S, self.ops_start)]
        for v in qos.VARIANTS:
            st.append(S("ops", f"overhead: warm-up {v}", len(qos.OVERHEAD_QUERIES) * plan.k6_est(cfg.qos_warmup_s, 10),
                        lambda v=v: self.qos_overhead_warmup(v), when=up))
        for q, v, rep in qos.overhead_order(qos.OVERHEAD_QUERIES, cfg.qos_overhead_reps):
            st.append(S("ops", f"overhead: {q} observability {v} vus={cfg.qos_overhead_vus} "
                               f"({rep}/{cfg.qos_overhead_reps})", plan.k6_est(cfg.qos_overhead_s, cfg.qos_overhead_vus),
                        lambda q=q, v=v, r=rep: self.qos_overhead(q, v, r, section="ops"), when=up))
        st.append(S("ops", f"reload: {ops.RELOADS} reload_metadata calls", 5, self.ops_reload, when=up))
        st.append(S("ops", "stop its servers and the collector", 0.5, self.ops_stop))
        return st

    def ops_collector(self):
        o = self.results.setdefault("ops", {"status": "ok", "unavailable": [], "config": {}})
        o["console"] = ops.console_bytes(ROOT)
        o["binary_bytes"] = os.path.getsize(self.env.grafton) if os.path.exists(self.env.grafton) else None
        install = os.path.join(ROOT, "tests", "otlp", "install.sh")
        self.check_call(["bash", install], "ops-collector-install.log", "tests/otlp/install.sh", timeout=900)
        binary = tail_of(self.log("ops-collector-install.log"), 1).strip().splitlines()[-1]
        env = {**os.environ, "OTLP_SPANS_FILE": self.log("ops-spans.jsonl"), "OTLP_GRPC_PORT": "0",
               "OTLP_HTTP_PORT": "0"}
        self.ops_collector_proc = self.procs.start(
            [binary, "--config", os.path.join(ROOT, "tests", "otlp", "collector.yaml")],
            log_path=self.log("ops-collector.log"), env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with open(self.log("ops-collector.log")) as f:
                endpoint = ops.collector_endpoint(f.read())
            if endpoint:
                o["collector"] = endpoint
                return
            time.sleep(0.05)
        raise RuntimeError(f"the collector did not start: {tail_of(self.log('ops-collector.log'), 5)}")

    def ops_start(self):
        o = self.results["ops"]
        o["overhead"] = {"queries": qos.OVERHEAD_QUERIES, "vus": self.cfg.qos_overhead_vus,
                         "duration_s": self.cfg.qos_overhead_s, "reps": self.cfg.qos_overhead_reps,
                         "target": ops.TARGET_OVERHEAD, "sampling": ops.SAMPLING,
                         "off": " ".join(ops.OFF_FLAGS), "on": "metrics on, --otlp-sampling-ratio "
                         f"{ops.SAMPLING} to a real collector", "runs": [], "summary": []}
        on = ops.on_flags(o["collector"])
        if on == ops.OFF_FLAGS:
            o["overhead"]["on"] = f"calibration (OPS_CALIBRATE=1): the same flags as off, `{' '.join(on)}`"
        # No admin secret: every request is admin, as in the qos overhead runs.
        if not (self.qos_start("off", None, False, ops.OFF_FLAGS, "ops")
                and self.qos_start("on", None, False, on, "ops")):
            o["overhead"]["error"] = "a server did not start"
            self.qos_stop(*qos.VARIANTS)

    def ops_reload(self):
        url = self.qos_urls["on"].replace("/v1/graphql", "/v1/metadata")
        wall = []
        for _ in range(ops.RELOADS):
            t0 = time.monotonic()
            status, body = procs.post_status(url, {"type": "reload_metadata", "args": {}}, timeout=30)
            if status != 200:
                self.error(f"ops reload: {status} {json.dumps(body)[:200]}")
                break
            wall.append((time.monotonic() - t0) * 1000)
        with open(self.log("qos-server-on.log")) as f:
            server = ops.reload_ms(f.read())
        self.results["ops"]["reload"] = ops.reload_summary(wall, server)

    def ops_stop(self):
        self.qos_stop(*qos.VARIANTS)
        p = getattr(self, "ops_collector_proc", None)
        if p is not None:
            self.procs.stop(p)
            self.ops_collector_proc = None

    def qos_wso2_start(self):
        cfg = self.cfg
        q = self.qos_results()
        w = q["wso2"] = {
            "docs": qos.WSO2_DOCS, "levels": cfg.qos_wso2_levels, "duration_s": cfg.qos_wso2_s,
            "warmup_s": cfg.qos_warmup_s, "role": qos.ROLE, "per_min": qos.WSO2_PER_MIN,
            "document": qos.roots_document(4), "drain_chunk": qos.DRAIN_CHUNK, "runs": []}
        ok = self.qos_start("wso2-off", qos.wso2_config(False), admin_secret=True) and \
            self.qos_start("wso2-on", qos.wso2_config(True), admin_secret=True)
        if not ok:
            w["error"] = "a server did not start"
            self.qos_stop("wso2-off", "wso2-on")
            return
        # The role must read venues on both (and nothing else may refuse it).
        h = qos.role_headers(qos.ROLE, self.qos_secret)
        for v in ("wso2-off", "wso2-on"):
            status, body = procs.post_status(self.qos_urls[v], {"query": "{ venues(limit: 1) { id name } }"},
                                             timeout=30, headers=h)
            if not (body and body.get("data") and not body.get("errors")):
                w["error"] = f"{v}: role {qos.ROLE} cannot read venues (status {status}: {json.dumps(body)[:300]})"
                self.error(f"qos wso2: {w['error']}")
                self.qos_stop("wso2-off", "wso2-on")
                return

    def qos_wso2_env(self, doc: str, vus: int, seconds: int, variant: str, drain: bool) -> dict:
        env = {"URL": self.qos_urls[f"wso2-{variant}"], "MODE": "closed", "DOC": doc, "VUS": vus,
               "DURATION": f"{seconds}s", "HEADERS": json.dumps(qos.role_headers(qos.ROLE, self.qos_secret))}
        if drain:
            env["DRAIN_CHUNK"] = qos.DRAIN_CHUNK
        return env

    def qos_wso2_warmup(self, variant: str):
        for d in qos.WSO2_DOCS:
            self.qos_k6(f"qos-wso2-warmup-{variant}-{d}",
                        self.qos_wso2_env(d, 50, self.cfg.qos_warmup_s, variant, False))

    def qos_wso2(self, doc: str, vus: int, variant: str):
        w = self.results["qos"]["wso2"]
        name = f"qos-wso2-{doc}-{variant}-{vus}"
        s = self.qos_k6(name, self.qos_wso2_env(doc, vus, self.cfg.qos_wso2_s, variant, variant == "on"))
        row = {"doc": doc, "roots": qos.WSO2_DOCS[doc], "vus": vus, "variant": variant, "raw": f"raw/{name}.json"}
        g = (s or {}).get("groups", {}).get("main")
        if not g:
            row["error"] = "k6 failed" if s is None else "no requests"
        else:
            out = g.get("outcomes") or {}
            row.update({k: g.get(k) for k in ("requests", "rps", "ok_rps", "p50", "p90", "p95", "p99", "max",
                                              "ok_p95", "ok_p99")})
            row["outcomes"] = out
            row["rejected_share"] = out.get("rate_limited", 0) / g["requests"] if g.get("requests") else None
            row["failed"] = qos.errors_of(out) - out.get("rate_limited", 0)
            row["drain"] = s.get("drain")
            if variant == "on":
                row["allowed_rps"] = round(qos.allowed_rps(qos.WSO2_DOCS[doc]), 2)
            if row["failed"]:
                row["unexpected"] = first_lines(self.log(f"{name}.log"), "QOS-UNEXPECTED", 1)
        w["runs"].append(row)

    def qos_reject_start(self):
        cfg = self.cfg
        q = self.qos_results()
        r = q["rejection"] = {
            "rate": cfg.qos_reject_rate, "duration_s": cfg.qos_reject_s, "per_min": qos.REJECT_PER_MIN,
            "depth_limit": qos.DEEP_LIMIT, "deep_query": qos.DEEP_QUERY, "cheap_query": qos.CHEAP_QUERY,
            "clk_tck": os.sysconf("SC_CLK_TCK"), "target_ms": qos.TARGET_REJECT_CPU_MS,
            "kinds": {k: v[3] for k, v in qos.REJECTIONS.items()}, "runs": []}
        if not self.qos_start("reject", qos.rejection_config(), admin_secret=True):
            r["error"] = "the server did not start"
            return
        pid = self.qos_procs["reject"].pid
        time.sleep(0.5)
        t0, ticks0 = time.monotonic(), procs.cpu_ticks(pid)
        time.sleep(2)
        ticks1 = procs.cpu_ticks(pid)
        if ticks0 is not None and ticks1 is not None:
            r["idle_cpu_ms_per_s"] = round(qos.cpu_ms(ticks0, ticks1, r["clk_tck"]) / (time.monotonic() - t0), 2)

    def qos_reject(self, kind: str):
        cfg = self.cfg
        r = self.results["qos"]["rejection"]
        role, doc, expected, _ = qos.REJECTIONS[kind]
        env = {"URL": self.qos_urls["reject"], "MODE": "rate", "DOC": doc, "EXPECT": expected,
               "HEADERS": json.dumps(qos.role_headers(role, self.qos_secret))}
        # The warm-up also spends the rate-limited roles' allowance.
        self.qos_k6(f"qos-reject-warmup-{kind}", {**env, "RATE": min(200, cfg.qos_reject_rate), "DURATION": "1s"})
        pid = self.qos_procs["reject"].pid
        name = f"qos-reject-{kind}"
        ticks0 = procs.cpu_ticks(pid)
        s = self.qos_k6(name, {**env, "RATE": cfg.qos_reject_rate, "DURATION": f"{cfg.qos_reject_s}s"})
        ticks1 = procs.cpu_ticks(pid)
        g = (s or {}).get("groups", {}).get("main")
        if not g or ticks0 is None or ticks1 is None:
            r["runs"].append({"kind": kind, "error": "k6 failed" if s is None else "no requests or no CPU reading",
                              "raw": f"raw/{name}.json"})
            return
        row = qos.rejection_row(kind, g["requests"], g.get("outcomes") or {}, ticks1 - ticks0, r["clk_tck"])
        row.update({"rps": g.get("rps"), "p50": g.get("p50"), "p95": g.get("p95"),
                    "dropped": s.get("dropped_iterations"), "raw": f"raw/{name}.json"})
        r["runs"].append(row)
        qos.above_floor(r["runs"])
        per = row.get("cpu_ms_per_request")
        self.progress.say("qos", f"rejection {kind}: {row['cpu_ms']} ms CPU over {g['requests']:,} requests = "
                                 f"{per:.4f} ms each" if per is not None else f"rejection {kind}: —")

    # ------------------------------------------------------------- report
    def finish_numbers(self):
        """Numbers read at the very end, with the servers still up."""
        if not self.memory_final:
            self.freeze_memory()
        self.results["machine"]["load_end"] = list(os.getloadavg())
        self.results["finished_utc"] = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        self.results["duration_s"] = round(time.time() - self.t_start, 1)

    def write_report(self):
        self.finish_numbers()
        self.save()

    def save(self):
        """results.json, summary.md and charts from what is there (also after a failure)."""
        os.makedirs(self.out, exist_ok=True)
        with open(os.path.join(self.out, "results.json"), "w") as f:
            json.dump(self.results, f, indent=1, sort_keys=False)
            f.write("\n")
        charts_dir = os.path.join(self.out, "charts")
        files = report.chart_files(self.results)
        if files:
            os.makedirs(charts_dir, exist_ok=True)
        for name, svg in files.items():
            with open(os.path.join(charts_dir, name), "w") as f:
                f.write(svg)
        with open(os.path.join(self.out, "summary.md"), "w") as f:
            f.write(report.render(self.results))

    def collect_versions(self):
        v = self.results["versions"]
        commit = _out(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
        dirty = subprocess.run(["git", "-C", ROOT, "diff", "--quiet", "HEAD", "--", "crates", "Cargo.lock", "Cargo.toml"],
                               capture_output=True).returncode != 0 if commit else False
        gv = _out([self.env.grafton, "--version"]) or "?"
        v["grafton"] = (f"commit {commit}{' + local changes' if dirty else ''}, " if commit else "") + gv + (
            f" ({self.env.grafton}, built {binary_time(self.env.grafton)}: the commit is the checkout's, "
            "which the binary may predate)" if self.env.grafton_given else "")
        v["postgresql"] = _out([self.env.pg("postgres"), "--version"]) or "?"
        if "postgraphile" in self.cfg.systems:
            v["postgraphile"] = (f"{_pkg_version('postgraphile')} + connection-filter "
                                 f"{_pkg_version('postgraphile-plugin-connection-filter')}, node "
                                 f"{_out([self.env.node or 'node', '--version']) or '?'}")
        v["k6"] = _out([self.env.k6, "version"]) or "?"
        v["pgbench"] = _out([self.env.pg("pgbench"), "--version"]) or "?"

    # ------------------------------------------------------------- driver
    def run(self, steps: list[plan.Step]) -> int:
        self.progress = plan.Progress(steps)
        os.makedirs(self.raw, exist_ok=True)
        self.results["machine"]["load_start"] = list(os.getloadavg())
        rc = 0
        try:
            for i, step in enumerate(steps):
                if step.scenario == "setup" and "start a throwaway" in step.label:
                    self.collect_versions()
                if step.when is not None and not step.when():
                    continue
                self.progress.begin(i)
                step.fn()
                if step.scenario not in ("setup", "report"):
                    self.save()
            print(f"\nresults: {os.path.relpath(self.out)}/summary.md "
                  f"({plan.mmss(time.time() - self.t_start)})", file=sys.stderr)
        except KeyboardInterrupt:
            self.error("interrupted (SIGINT)")
            rc = 130
        except Interrupted as e:
            self.error(f"interrupted ({e})")
            rc = 130
        except Exception as e:  # setup failures and bugs: report, clean up, keep partial results
            self.error(f"{type(e).__name__}: {e}")
            rc = 1
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # do not interrupt the clean-up
            try:
                if rc != 0:
                    self.finish_numbers()
                    self.save()
            except Exception as e:
                print(f"!! could not write the report: {e}", file=sys.stderr)
            self.procs.stop_all()
            self.stop_postgres()
            if self.tmp:
                pglog = os.path.join(self.tmp, "postgres.log")
                if os.path.exists(pglog):
                    shutil.copy(pglog, self.log("postgres.log"))
                shutil.rmtree(self.tmp, ignore_errors=True)
            signal.signal(signal.SIGINT, signal.default_int_handler)
        return rc


# ----------------------------------------------------------------- helpers

def k6_system(system: str) -> str:
    """The dialect k6 sends: Grafton on SQLite speaks Grafton's."""
    return "postgraphile" if system == "postgraphile" else "grafton"


def binary_time(path: str) -> str:
    """A file's modification time, UTC."""
    try:
        return dt.datetime.fromtimestamp(os.path.getmtime(path), dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    except OSError:
        return "?"


def proc_stat_cpu() -> list[int] | None:
    """The machine's `cpu` line of /proc/stat (ticks: user nice system idle iowait …)."""
    try:
        with open("/proc/stat") as f:
            return [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None


def children_cpu_s() -> float:
    """CPU seconds of the orchestrator's finished children (k6 runs, once waited for)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def first_lines(path: str, prefix: str, n: int) -> list[str]:
    """The first n lines of a log that contain prefix (from there on, clipped)."""
    out = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if prefix in line:
                    out.append(line[line.index(prefix):].strip()[:500])
                    if len(out) >= n:
                        break
    except OSError:
        pass
    return out


def tail_of(path: str, n: int = 15) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:]).strip()
    except OSError:
        return ""


def machine() -> dict:
    model = "?"
    mem_kb = 0
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
        with open("/proc/meminfo") as f:
            mem_kb = int(next(ln.split()[1] for ln in f if ln.startswith("MemTotal")))
    except (OSError, StopIteration):
        pass
    return {"cores": os.cpu_count(), "cpu_model": model, "mem_total_mb": mem_kb // 1024,
            "os": f"{platform.system()} {platform.release()}"}


def parse_args(argv: list[str]):
    p = argparse.ArgumentParser(prog="bench/run", description="Grafton's benchmark suite (see bench/README.md).")
    p.add_argument("--quick", action="store_true", help="smoke run, under 7 minutes")
    p.add_argument("--dry-run", action="store_true", help="check the environment and print the plan; run nothing")
    p.add_argument("--rows", type=int, default=100_000, help="rows per main table (default 100000)")
    p.add_argument("--out", help="results directory (default bench/results/<UTC timestamp>)")
    p.add_argument("--scenarios", help="comma-separated subset of: " + ",".join(plan.SCENARIOS))
    p.add_argument("--systems", help="comma-separated subset of: " + ",".join(plan.SYSTEMS))
    p.add_argument("--writes", help="comma-separated subset of the write scenarios: " + ",".join(plan.WRITES))
    p.add_argument("--capacity-budget", type=float, metavar="MIN", help="time budget of the capacity search, minutes")
    p.add_argument("--max-vus", type=int, help="upper bound of the capacity search")
    return p.parse_args(argv)


def subset(value: str | None, allowed: list[str], what: str) -> list[str] | None:
    if value is None:
        return None
    items = [x.strip() for x in value.split(",") if x.strip()]
    bad = [x for x in items if x not in allowed]
    if bad or not items:
        raise SystemExit(f"bench/run: unknown {what}: {', '.join(bad) or '(none)'}; choose from {', '.join(allowed)}")
    return [x for x in allowed if x in items]


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    cfg = plan.quick(a.rows) if a.quick else plan.full(a.rows)
    cfg.scenarios = subset(a.scenarios, plan.SCENARIOS, "scenario") or cfg.scenarios
    cfg.systems = subset(a.systems, plan.SYSTEMS, "system") or cfg.systems
    cfg.writes = subset(a.writes, plan.WRITES, "write") or cfg.writes
    if a.capacity_budget is not None:
        cfg.capacity_budget_s = int(a.capacity_budget * 60)
    if a.max_vus:
        cfg.max_vus = a.max_vus
    if a.rows <= 0:
        raise SystemExit("bench/run: --rows must be positive")
    env = Env()
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = os.path.abspath(a.out or os.path.join(BENCH, "results", stamp))
    bench = Bench(cfg, env, out, argv)
    steps = bench.steps()
    checks = env.checks(cfg)

    out_f = sys.stdout if a.dry_run else sys.stderr
    print(f"bench/run: {cfg.mode} run, {cfg.rows:,} rows, scenarios {','.join(cfg.scenarios)}, "
          f"systems {','.join(cfg.systems)}", file=out_f)
    print("environment:", file=out_f)
    for status, text in checks:
        print(f"  {status:8} {text}", file=out_f)
    if a.dry_run:
        counts: dict[str, int] = {}
        for s in steps:
            counts[s.scenario] = counts.get(s.scenario, 0) + 1
        print(f"plan ({len(steps)} steps; capacity trials are adaptive, bounded by "
              f"{cfg.capacity_budget_s / 60:.1f} min and {cfg.max_vus} VUs in all):")
        for s in steps:
            print(f"  ~{plan.mmss(s.est_s)}  {s.scenario}: {s.label}")
        print(f"total ~{plan.mmss(plan.total(steps))} ({', '.join(f'{k} {v}' for k, v in counts.items())} steps); "
              f"results would go to {os.path.relpath(out)}")
        if any(st == "missing" for st, _ in checks):
            print("note: something is missing (see above): a real run would stop before starting")
        return 0
    missing = [t for s, t in checks if s == "missing"]
    if missing:
        print("bench/run: cannot run, missing:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 2

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    def on_signal(signum, frame):
        raise Interrupted(signal.Signals(signum).name)

    # Explicitly: a shell starts background jobs with SIGINT ignored, and Python keeps that.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    return bench.run(steps)
