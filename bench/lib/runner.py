"""bench/run: set up, run the scenarios, write bench/results/<timestamp>/.

See bench/README.md.  Standard library only. The scenarios live in run_*.py, one
class each, which `Bench` combines.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import time

import cli
import plan
import procs
import report
import writes as wr
from env import Env
from run_auth import Auth
from run_events import EventTriggers
from run_load import Load
from run_ops import Ops
from run_qos import Qos
from run_reads import Reads
from run_recovery import Recovery
from run_replica import Replica
from run_remote import Remote
from run_scale import Scale
from run_setup import Setup
from run_subs import Subs
from run_writes import Writes
from common import (BENCH, Interrupted, K6_DIR, K6_VERSION, PEERS, PG5_DIR, PG5_NODE, ROOT, _out, _pkg_version,
                    binary_time, k6_system, machine, tail_of)


# ----------------------------------------------------------------- the run

class Bench(Setup, Load, Reads, Writes, Auth, Subs, Qos, Ops, EventTriggers, Scale, Replica, Recovery, Remote):
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
        if "postgraphile5" in cfg.systems and not env.has_postgraphile5:
            st.append(S("setup", "install PostGraphile v5 (npm ci of bench/peers/postgraphile5)", 90,
                        self.install_postgraphile5))
        if not env.grafton_given:
            st.append(S("setup", "build Grafton (cargo build --release -p grafton)",
                        30 if env.has_grafton else 600, self.build_grafton))
        per100k = cfg.rows / 100_000
        if "scale" in cfg.scenarios and "grafton" in cfg.systems and not env.haproxy:
            how = "as root" if env.root else "through sudo -n"
            st.append(S("setup", f"install HAProxy (apt-get install -y haproxy, {how})", 30, self.install_haproxy))
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
        if plan.uses_loadgen(cfg):
            st.append(S("setup", "build the load client (cargo build --release -p grafton-bench-loadgen)", 30,
                        self.loadgen_build))
            st.append(S("setup", "write the load client's documents (node bench/loadgen/docs.mjs)", 2,
                        self.loadgen_docs))
        st.append(S("setup", f"start {', '.join(report.label(s) for s in cfg.systems)} (pool {cfg.pool})", 4,
                    self.start_servers))
        peers = [p for p in PEERS if p in cfg.systems]
        if env.check_js and peers:
            st.append(S("setup", "check that the systems return the same rows (k6 check.js)",
                        3 * (len(cfg.systems) - len(peers)) * len(peers), self.check_rows))
        sc = cfg.scenarios
        if "fixed" in sc:
            for s in cfg.systems:
                st.append(S("fixed", f"warm-up {s} ({', '.join(cfg.warmup_queries)}, {cfg.warmup_s} s each)",
                            len(cfg.warmup_queries) * cfg.est(cfg.warmup_s, 10),
                            lambda s=s: self.warmup(s)))
            # Rounds over the whole grid, the systems' order alternating per level and per
            # round, so drift on a shared machine falls on every system alike; the report
            # takes the median of the rounds.
            for rnd in range(cfg.fixed_rounds):
                for q in cfg.fixed_queries:
                    for i, vus in enumerate(cfg.fixed_levels):
                        order = cfg.systems if (i + rnd) % 2 == 0 else list(reversed(cfg.systems))
                        for s in order:
                            label = f"{s} {q} vus={vus}" + (f" round {rnd + 1}" if cfg.fixed_rounds > 1 else "")
                            st.append(S("fixed", label, cfg.est(cfg.fixed_s, vus),
                                        lambda s=s, q=q, v=vus, r=rnd: self.fixed(s, q, v, r)))
        if "capacity" in sc:
            combos = [(s, q, lim) for q in cfg.capacity_queries for lim in cfg.capacity_limits
                      for s in cfg.capacity_systems if s in cfg.systems]
            self.capacity_combos_left = len(combos)
            share = cfg.capacity_budget_s / max(1, len(combos))
            for s, q, lim in combos:
                est = min(share, cfg.est(cfg.probe_s, 50) + 3 * cfg.trial_cost_s(cfg.max_vus // 2))
                st.append(S("capacity", f"{s} {q} limit={lim}", est,
                            lambda s=s, q=q, lim=lim: self.capacity(s, q, lim)))
        if "memory" in sc:
            for s in cfg.systems:
                st.append(S("memory", f"{s} RSS under {cfg.memory_vus} VUs ({', '.join(cfg.memory_queries)})",
                            len(cfg.memory_queries) * cfg.est(cfg.memory_s, cfg.memory_vus),
                            lambda s=s: self.memory(s)))
        if "ceiling" in sc:
            levels, _ = plan.ceiling_levels(cfg)
            st.append(S("ceiling", "generate Grafton's SQL for pgbench (make_scripts.py)", 2, self.ceiling_prepare))
            for rnd in range(cfg.ceiling_rounds):
                for q in plan.CEILING:
                    for vus in levels:
                        label = f"pgbench {q} clients={vus}" + (
                            f" round {rnd + 1}" if cfg.ceiling_rounds > 1 else "")
                        st.append(S("ceiling", label, 2 * cfg.ceiling_s + 2,
                                    lambda q=q, v=vus, r=rnd: self.ceiling(q, v, r),
                                    when=lambda: bool(self.ceiling_sql)))
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
        if "events" in sc:
            st += self.events_steps()
        if "remote" in sc:
            st += self.remote_steps()
        if "scale" in sc:
            st += self.scale_steps()
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
        if "postgraphile5" in self.cfg.systems:
            v["postgraphile5"] = (f"{_pkg_version('postgraphile', PG5_DIR)} (Amber) + connection-filter "
                                  f"{_pkg_version('postgraphile-plugin-connection-filter', PG5_DIR)}, grafast "
                                  f"{_pkg_version('grafast', PG5_DIR)}, node {_out([PG5_NODE, '--version']) or '?'}")
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
            try:
                self.scale_cleanup()
            except Exception as e:
                print(f"!! could not stop the replica: {e}", file=sys.stderr)
            self.stop_postgres()
            if self.tmp:
                pglog = os.path.join(self.tmp, "postgres.log")
                if os.path.exists(pglog):
                    shutil.copy(pglog, self.log("postgres.log"))
                shutil.rmtree(self.tmp, ignore_errors=True)
            signal.signal(signal.SIGINT, signal.default_int_handler)
        return rc


def main(argv: list[str]) -> int:
    a = cli.parse_args(argv)
    cfg = cli.config(a)
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
