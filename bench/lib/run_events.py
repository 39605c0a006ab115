"""The events scenario: event-trigger delivery on PostgreSQL (issue 32): throughput,
latency at a steady rate, the writer's cost, the log's size, and nothing lost when
Grafton is killed or the webhook goes down.

A part of `runner.Bench` (see runner.py); standard library only. The pure parts are
in events.py, the report's section in report_events.py.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import time
import urllib.error
import urllib.request

import events as ev
import pgbench
import plan
import procs
from common import BENCH, children_cpu_s, proc_stat_cpu, tail_of

RECEIVER = os.path.join(BENCH, "events", "receiver.cjs")

FIGURES_SQL = """SELECT count(*), count(*) FILTER (WHERE delivered), count(*) FILTER (WHERE dead),
  extract(epoch FROM min(created_at)), extract(epoch FROM max(created_at)), extract(epoch FROM max(delivered_at)),
  1000 * percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM delivered_at - created_at)),
  1000 * percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM delivered_at - created_at)),
  1000 * percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM delivered_at - created_at))
FROM grafton_catalog.event_log WHERE trigger_name = '{trigger}' AND data->'new'->>'run' = '{run}'"""
# The drain's probe, 20 times a second: on the log's partial index of waiting events,
# never a sequential scan (with the log's statistics stale after a burst the planner
# chose one, reading the whole log each time: up to 80 million rows and most of a
# core in one round, which the runs then counted as the delivery's cost).
PENDING_SQL = ("SET enable_seqscan = off; "
               "SELECT count(*) FROM grafton_catalog.event_log WHERE NOT delivered AND NOT dead; "
               "RESET enable_seqscan")
# Per table of the events' way, what the database did (deltas per throughput round
# say where PostgreSQL's CPU per event goes: scans of the log, updates, vacuums).
TABLE_STATS = ("seq_scan", "seq_tup_read", "idx_scan", "idx_tup_fetch", "n_tup_ins", "n_tup_upd",
               "n_tup_hot_upd", "n_tup_del", "n_dead_tup", "autovacuum_count", "autoanalyze_count")
TABLE_STATS_SQL = ("SELECT relname, " + ", ".join(f"coalesce({c}, 0)" for c in TABLE_STATS)
                   + " FROM pg_stat_user_tables WHERE schemaname = 'grafton_catalog' OR relname = '{table}'")
DB_STATS = ("xact_commit", "tup_returned", "tup_fetched", "tup_inserted", "tup_updated", "tup_deleted",
            "blks_hit", "blks_read")
DB_STATS_SQL = ("SELECT " + ", ".join(DB_STATS) + " FROM pg_stat_database WHERE datname = current_database()")
SIZES_SQL = ("SELECT pg_total_relation_size('grafton_catalog.event_log'), "
             "pg_total_relation_size('grafton_catalog.event_invocation_logs'), "
             "(SELECT count(*) FROM grafton_catalog.event_log), "
             "(SELECT count(*) FROM grafton_catalog.event_invocation_logs)")


class Psql:
    """One psql session kept open (polling costs no process start): a statement in,
    its unaligned rows back."""

    MARK = "__bench_events_done__"

    def __init__(self, psql: str, url: str, registry: procs.Procs):
        self.p = subprocess.Popen([psql, "-X", "-q", "-At", "-F", "|", url], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                                  start_new_session=True)
        registry.running.append(self.p)
        self.registry = registry

    def rows(self, sql: str) -> list[list[str]]:
        self.p.stdin.write(sql.strip().rstrip(";") + ";\n\\echo " + self.MARK + "\n")
        self.p.stdin.flush()
        out = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("psql ended: " + " ".join(out)[-300:])
            line = line.rstrip("\n")
            if line == self.MARK:
                break
            out.append(line)
        errors = [x for x in out if x.startswith(("ERROR:", "psql:"))]
        if errors:
            raise RuntimeError(f"psql: {' '.join(errors)[:300]} ({sql[:120]})")
        return [x.split("|") for x in out]

    def one(self, sql: str) -> list[str]:
        rows = self.rows(sql)
        return rows[0] if rows else []

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.registry.stop(self.p)


def _f(v: str) -> float | None:
    return float(v) if v not in ("", None) else None


class EventTriggers:
    def events_steps(self) -> list[plan.Step]:
        cfg, S = self.cfg, plan.Step
        if "grafton" not in cfg.systems:
            return [S("events", "skipped: needs grafton among the systems", 0,
                      lambda: self.results.__setitem__("events", {"status": "skipped: needs Grafton PG"}))]
        up = lambda: getattr(self, "events_psql", None) is not None  # noqa: E731
        n, rounds = cfg.events_throughput_events, cfg.events_rounds
        st = [S("events", f"database {ev.DATABASE}, tables, the webhook (bench/events/receiver.cjs), Grafton PG "
                          f"(default flags) and an insert trigger; a 2,000-event warm-up", 8, self.events_prepare)]
        for rnd, kind in ev.throughput_order(rounds):
            st.append(S("events", f"throughput: {n:,} events from {ev.KIND_TEXT[kind]} (round {rnd + 1}/{rounds})",
                        n / 4000 + 2, lambda r=rnd, k=kind: self.events_throughput(k, r), when=up))
        for rnd in range(rounds):
            st.append(S("events", f"latency: {ev.RATE:,} single-row inserts/s for {cfg.events_latency_s} s "
                                  f"(round {rnd + 1}/{rounds})", cfg.events_latency_s + 3,
                        lambda r=rnd: self.events_latency(r), when=up))
        for rnd, v in ev.writer_order(rounds):
            st.append(S("events", f"writer's cost: pgbench {ev.WRITER_CLIENTS} clients × {cfg.events_writer_s} s, "
                                  f"{ev.WRITER_TEXT[v]} (round {rnd + 1}/{rounds})",
                        cfg.events_writer_s + (1 if v == "off" else 8), lambda r=rnd, v=v: self.events_writer(v, r),
                        when=up))
        for i in range(cfg.events_trials):
            st.append(S("events", f"SIGKILL Grafton {ev.KILL_AT_S} s into {cfg.events_trial_s} s at {ev.RATE:,}/s, "
                                  f"start another (claim timeout {ev.KILL_CLAIM_TIMEOUT_S} s) "
                                  f"({i + 1}/{cfg.events_trials})",
                        cfg.events_trial_s + ev.KILL_CLAIM_TIMEOUT_S + 2 * ev.START_S + 3,
                        lambda i=i: self.events_kill(i), when=up))
        for i in range(cfg.events_trials):
            st.append(S("events", f"webhook down {ev.DOWN_S} s, {ev.KILL_AT_S} s into {cfg.events_trial_s} s at "
                                  f"{ev.RATE:,}/s ({i + 1}/{cfg.events_trials})",
                        cfg.events_trial_s + ev.RETRY_CONF["interval_sec"] + 3, lambda i=i: self.events_down(i),
                        when=up))
        m = cfg.events_log_events
        st.append(S("events", f"log size: {m:,} events ({ev.BATCH}-row inserts) with --events-retention-hours "
                              f"{ev.RETENTION_HOURS}, then {ev.CLEANUP_PASSES} clean-up passes",
                    m / 6000 + 45 + ev.CLEANUP_PASSES * 5, self.events_log_size, when=up))
        st.append(S("events", f"stop its servers and the webhook; drop {ev.DATABASE}", 2, self.events_stop))
        return st

    # ------------------------------------------------------------- set-up
    def events_results(self) -> dict:
        cfg = self.cfg
        return self.results.setdefault("events", {
            "status": "ok", "database": ev.DATABASE, "table": ev.TABLE, "trigger": ev.TRIGGER,
            "retry_conf": ev.RETRY_CONF, "rate": ev.RATE, "batch": ev.BATCH, "rounds": cfg.events_rounds,
            "throughput_events": cfg.events_throughput_events, "clients": ev.THROUGHPUT_CLIENTS,
            "paced_clients": ev.PACED_CLIENTS, "writer_clients": ev.WRITER_CLIENTS,
            "latency_s": cfg.events_latency_s, "writer_s": cfg.events_writer_s, "trial_s": cfg.events_trial_s,
            "kill_at_s": ev.KILL_AT_S, "down_s": ev.DOWN_S, "kill_claim_timeout_s": ev.KILL_CLAIM_TIMEOUT_S,
            "cores": os.cpu_count(), "clk_tck": os.sysconf("SC_CLK_TCK"),
            "targets": {"events_per_s": ev.TARGET_EVENTS_PER_S, "p95_ms": ev.TARGET_P95_MS,
                        "writer_ratio": ev.TARGET_WRITER_RATIO},
            "throughput": [], "latency": [], "writer": [], "kill": [], "webhook_down": []})

    def events_prepare(self):
        r = self.events_results()
        psql = self.env.pg("psql")
        base = self.db_url.rsplit("/", 1)[0]
        self.events_url = f"{base}/{ev.DATABASE}"
        self.check_call([psql, "-q", "-v", "ON_ERROR_STOP=1", f"{base}/postgres", "-c",
                         f"DROP DATABASE IF EXISTS {ev.DATABASE}", "-c", f"CREATE DATABASE {ev.DATABASE}"],
                        "events-setup.log", f"CREATE DATABASE {ev.DATABASE}")
        self.check_call([psql, "-q", "-v", "ON_ERROR_STOP=1", self.events_url, "-c", ev.tables_sql()],
                        "events-setup.log", "create the events tables")
        d = os.path.join(self.tmp, "events")
        os.makedirs(d, exist_ok=True)
        self.events_scripts = {}
        for name, text in (("one", ev.script("one")), ("batch", ev.script("batch")),
                           ("plain", ev.script("one", ev.PLAIN))):
            path = os.path.join(d, f"{name}.sql")
            with open(path, "w") as f:
                f.write(text)
            self.events_scripts[name] = path
        self.events_receipts = self.log("events-receipts.txt")
        open(self.events_receipts, "w").close()
        self.events_hook_port = procs.free_port()
        self.events_receiver_start()
        self.events_run_id = 0
        p, url = self.events_grafton("main")
        r["flags"] = "default"
        status, body = procs.post_status(url.replace("/v1/graphql", "/v1/metadata"),
                                         ev.trigger_request(f"http://127.0.0.1:{self.events_hook_port}/"), timeout=30)
        if status != 200:
            raise RuntimeError(f"events: creating the trigger: {status} {json.dumps(body)[:300]}")
        self.events_psql = Psql(psql, self.events_url, self.procs)
        run = self.events_next_run()
        rc = self.procs.run(ev.throughput_argv(self.env.pg("pgbench"), self.events_url, self.events_scripts["one"],
                                               "one", 2000, run), log_path=self.log("events-warmup.txt"), timeout=120)
        waited = self.events_drain()
        if rc != 0 or waited is None:
            raise RuntimeError(f"events: the warm-up failed (pgbench exit {rc}, drained: {waited is not None}); "
                               f"raw/events-warmup.txt, raw/events-grafton-main.log:\n"
                               f"{tail_of(self.log('events-grafton-main.log'), 5)}")
        self.progress.say("events", f"Grafton PG {url} (pid {p.pid}), webhook 127.0.0.1:{self.events_hook_port}; "
                                    f"warm-up delivered")

    def events_receiver_start(self):
        self.events_hook = self.procs.start([self.env.node or "node", RECEIVER, str(self.events_hook_port),
                                             self.events_receipts], log_path=self.log("events-receiver.log"))
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.events_hook_calls() is not None:
                return
            if self.events_hook.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"events: the webhook did not start: {tail_of(self.log('events-receiver.log'), 5)}")

    def events_hook_calls(self) -> int | None:
        """The webhook's count of calls (this also writes out what it holds)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.events_hook_port}/count", timeout=5) as resp:
                return json.loads(resp.read())["calls"]
        except (OSError, urllib.error.URLError, ValueError, KeyError):
            return None

    def events_grafton(self, name: str, extra: list[str] | None = None,
                       log_filter: str | None = None) -> tuple[subprocess.Popen, str]:
        """A `grafton serve` on the events database (default flags but `extra`; `log_filter`
        as GRAFTON_LOG); it becomes the instance the runs measure."""
        port = procs.free_port()
        log_name = f"events-grafton-{name}.log"
        argv = [self.env.grafton, "serve", "--database-url", self.events_url, "--host", "127.0.0.1",
                "--port", str(port)] + (extra or [])
        env = {**os.environ, "GRAFTON_LOG": log_filter} if log_filter else None
        p = self.procs.start(argv, log_path=self.log(log_name), env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if p.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as resp:
                    if resp.status == 200:
                        self.events_proc = p
                        return p, f"http://127.0.0.1:{port}/v1/graphql"
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.05)
        self.procs.stop(p)
        raise RuntimeError(f"events: Grafton PG ({name}) did not start; raw/{log_name}:\n"
                           f"{tail_of(self.log(log_name), 8)}")

    def events_next_run(self) -> int:
        self.events_run_id += 1
        return self.events_run_id

    # ------------------------------------------------------------- readings
    def events_pending(self) -> int:
        return int(self.events_psql.one(PENDING_SQL)[0])

    def events_drain(self, timeout: float = ev.DRAIN_MAX_S) -> float | None:
        """Waits until no event is waiting (each delivered or dead); the seconds it took,
        None on timeout."""
        t0 = time.monotonic()
        while time.monotonic() < t0 + timeout:
            if self.events_pending() == 0:
                return time.monotonic() - t0
            time.sleep(0.05)
        return None

    def events_figures(self, run: int) -> dict:
        row = self.events_psql.one(FIGURES_SQL.format(trigger=ev.TRIGGER, run=int(run)))
        inserted = int(self.events_psql.one(f"SELECT count(*) FROM {ev.TABLE} WHERE run = {int(run)}")[0])
        count, delivered, dead = (int(x) for x in row[:3])
        first, last, done = (_f(x) for x in row[3:6])
        p50, p95, p99 = (_f(x) for x in row[6:9])
        return {"inserted": inserted, "events": count, "delivered": delivered, "dead": dead, "first": first,
                "last": last, "done": done,
                "log": {"p50": _r(p50), "p95": _r(p95), "p99": _r(p99)}}

    def events_receipts_from(self, offset: int) -> list[tuple]:
        self.events_hook_calls()  # writes out what the webhook holds
        time.sleep(0.15)
        with open(self.events_receipts, errors="replace") as f:
            f.seek(offset)
            return ev.parse_receipts(f.read())

    def events_offset(self) -> int:
        self.events_hook_calls()
        time.sleep(0.15)
        return os.path.getsize(self.events_receipts)

    def events_cpu(self) -> int | None:
        return procs.cpu_ticks(self.events_proc.pid)

    def events_reading(self) -> dict:
        """Every part's CPU now (for events.cpu_split)."""
        pm = self.postmaster_pid(self.pgdata)
        me = resource.getrusage(resource.RUSAGE_SELF)
        return {"grafton": procs.cpu_ticks(self.events_proc.pid), "postgres": procs.tree_cpu_ticks(pm) if pm else None,
                "webhook": procs.cpu_ticks(self.events_hook.pid),
                "client": children_cpu_s() + me.ru_utime + me.ru_stime, "machine": proc_stat_cpu()}

    def events_pg_stats(self) -> dict:
        """The database's counters now: per table (TABLE_STATS) and for the database."""
        self.events_psql.one("SELECT pg_stat_clear_snapshot()")
        out = {}
        for row in self.events_psql.rows(TABLE_STATS_SQL.format(table=ev.TABLE)):
            out[row[0]] = dict(zip(TABLE_STATS, (int(x) for x in row[1:])))
        out["database"] = dict(zip(DB_STATS, (int(x) for x in self.events_psql.one(DB_STATS_SQL))))
        return out

    def events_per_1000(self, c0: int | None, c1: int | None, events: int) -> tuple[float | None, float | None]:
        if c0 is None or c1 is None or not events:
            return None, None
        cpu = (c1 - c0) / os.sysconf("SC_CLK_TCK")
        return round(cpu, 2), round(1000 * cpu / events, 4)

    # ------------------------------------------------------------- throughput
    def events_throughput(self, kind: str, rnd: int):
        r = self.events_results()
        run = self.events_next_run()
        name = f"events-throughput-{kind}-{rnd + 1}"
        argv = ev.throughput_argv(self.env.pg("pgbench"), self.events_url, self.events_scripts[kind], kind,
                                  self.cfg.events_throughput_events, run)
        s0 = self.events_pg_stats()
        r0 = self.events_reading()
        c0 = self.events_cpu()
        rc = self.procs.run(argv, log_path=self.log(f"{name}.txt"), timeout=900)
        waited = self.events_drain()
        c1 = self.events_cpu()
        r1 = self.events_reading()
        s1 = self.events_pg_stats()
        row = {"kind": kind, "round": rnd + 1, "run": run, "raw": f"raw/{name}.txt"}
        f = self.events_figures(run)
        row.update({k: f[k] for k in ("inserted", "events", "delivered", "dead")})
        if rc != 0 or waited is None or not f["first"] or not f["done"]:
            row["error"] = f"pgbench exit {rc}" if rc != 0 else "not every event delivered in time"
            r["throughput"].append(row)
            self.error(f"events throughput {kind} round {rnd + 1}: {row['error']}")
            return
        span = f["done"] - f["first"]
        row["insert_s"] = round(f["last"] - f["first"], 3)
        row["span_s"] = round(span, 3)
        row["events_per_s"] = round(f["delivered"] / span, 1)
        row["insert_per_s"] = round(f["inserted"] / row["insert_s"], 1) if row["insert_s"] > 0 else None
        row["cpu_s"], row["cpu_s_per_1000"] = self.events_per_1000(c0, c1, f["delivered"])
        row["cpu"] = ev.cpu_split(r0, r1, os.sysconf("SC_CLK_TCK"), f["delivered"])
        row["pg_stats"] = ev.stats_delta(s0, s1)
        r["throughput"].append(row)
        r["throughput_summary"] = ev.throughput_summary(r["throughput"])
        self.progress.say("events", f"{ev.KIND_TEXT[kind]}: {f['delivered']:,} delivered in {span:.2f} s = "
                                    f"{row['events_per_s']:,.0f} events/s; Grafton CPU {row['cpu_s']} s "
                                    f"({row['cpu_s_per_1000']} s per 1,000); {ev.stats_text(row['pg_stats'])}")

    # ------------------------------------------------------------- latency
    def events_paced(self, name: str, seconds: int, run: int) -> subprocess.Popen:
        argv = ev.paced_argv(self.env.pg("pgbench"), self.events_url, self.events_scripts["one"], seconds, run)
        return self.procs.start(argv, log_path=self.log(f"{name}.txt"))

    def events_pgbench_end(self, p: subprocess.Popen, name: str, seconds: int) -> dict:
        try:
            p.wait(timeout=seconds + 120)
        except subprocess.TimeoutExpired:
            pass
        self.procs.stop(p)
        try:
            with open(self.log(f"{name}.txt"), errors="replace") as f:
                return pgbench.parse(f.read())
        except (OSError, ValueError):
            return {}

    def events_latency(self, rnd: int):
        r = self.events_results()
        s = self.cfg.events_latency_s
        run, name = self.events_next_run(), f"events-latency-{rnd + 1}"
        offset = self.events_offset()
        r0 = self.events_reading()
        c0 = self.events_cpu()
        pg = self.events_pgbench_end(self.events_paced(name, s, run), name, s)
        waited = self.events_drain()
        c1 = self.events_cpu()
        r1 = self.events_reading()
        f = self.events_figures(run)
        rec = self.events_receipts_from(offset)
        row = {"round": rnd + 1, "run": run, "seconds": s, "pgbench_tps": _r(pg.get("tps")),
               **{k: f[k] for k in ("inserted", "events", "delivered", "dead")},
               "achieved_rate": round(f["events"] / (f["last"] - f["first"]), 1)
               if f["first"] and f["last"] and f["last"] > f["first"] else None,
               "webhook": ev.latency_ms(rec, run), "log": f["log"], **ev.delivery_counts(rec, run, f["inserted"]),
               "raw": f"raw/{name}.txt"}
        row["cpu_s"], row["cpu_s_per_1000"] = self.events_per_1000(c0, c1, f["delivered"])
        row["cpu"] = ev.cpu_split(r0, r1, os.sysconf("SC_CLK_TCK"), f["delivered"])
        if waited is None:
            row["error"] = "not every event delivered in time"
            self.error(f"events latency round {rnd + 1}: {row['error']}")
        r["latency"].append(row)
        r["latency_summary"] = ev.latency_summary(r["latency"])
        w = row["webhook"]
        self.progress.say("events", f"latency round {rnd + 1}: {row['achieved_rate']} events/s; webhook p50 "
                                    f"{w['p50']} / p95 {w['p95']} / p99 {w['p99']} ms; log p95 {f['log']['p95']} ms")

    # ------------------------------------------------------------- the writer's cost
    def events_writer(self, variant: str, rnd: int):
        r = self.events_results()
        s = self.cfg.events_writer_s
        run, name = self.events_next_run(), f"events-writer-{variant}-{rnd + 1}"
        script = self.events_scripts["plain" if variant == "off" else "one"]
        argv = ev.writer_argv(self.env.pg("pgbench"), self.events_url, script, s, run)
        pid = self.events_proc.pid
        c0 = self.events_cpu()
        if variant == "held":
            os.kill(pid, signal.SIGSTOP)
        try:
            rc = self.procs.run(argv, log_path=self.log(f"{name}.txt"), timeout=s + 120)
        finally:
            if variant == "held":
                os.kill(pid, signal.SIGCONT)
        c1 = self.events_cpu()
        backlog = self.events_pending()
        waited = self.events_drain()
        row = {"variant": variant, "round": rnd + 1, "run": run, "backlog_at_end": backlog,
               "drain_s": _r(waited, 2), "raw": f"raw/{name}.txt"}
        if variant == "held" and backlog and waited:
            row["drain_events_per_s"] = round(backlog / waited, 1)  # from a backlog, the writer idle
        try:
            with open(self.log(f"{name}.txt"), errors="replace") as f:
                p = pgbench.parse(f.read())
            row.update({"tps": _r(p["tps"]), "transactions": p.get("transactions"),
                        "latency_avg_ms": p.get("latency_avg_ms")})
        except (OSError, ValueError):
            row["error"] = f"pgbench exit {rc}"
            self.error(f"events writer {variant} round {rnd + 1}: {row['error']}")
        row["grafton_cpu_s"] = self.events_per_1000(c0, c1, 1)[0]
        r["writer"].append(row)
        r["writer_summary"] = ev.writer_summary(r["writer"])
        self.progress.say("events", f"writer {variant} round {rnd + 1}: {row.get('tps')} inserts/s "
                                    f"(backlog at the end {backlog:,})")

    # ------------------------------------------------------------- nothing lost
    def events_kill(self, i: int):
        """SIGKILL the instance mid-run, start another at once; every event delivered?"""
        r = self.events_results()
        s = self.cfg.events_trial_s
        flags = ["--events-claim-timeout", str(ev.KILL_CLAIM_TIMEOUT_S)]
        self.procs.stop(self.events_proc)
        first, _ = self.events_grafton(f"kill-{i + 1}-a", flags)
        run, name = self.events_next_run(), f"events-kill-{i + 1}"
        offset = self.events_offset()
        p = self.events_paced(name, s, run)
        time.sleep(ev.KILL_AT_S)
        calls_at_kill = self.events_hook_calls()
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        self.procs.forget(first)
        t_kill = time.monotonic()
        second, _ = self.events_grafton(f"kill-{i + 1}-b", flags)
        started_s = time.monotonic() - t_kill
        pg = self.events_pgbench_end(p, name, s)
        waited = self.events_drain()
        done_s = time.monotonic() - t_kill
        f = self.events_figures(run)
        rec = self.events_receipts_from(offset)
        row = {"trial": i + 1, "run": run, "pgbench_tps": _r(pg.get("tps")), "calls_before_kill": calls_at_kill,
               "restart_s": round(started_s, 2), "all_delivered_after_kill_s": round(done_s, 1),
               **ev.delivery_counts(rec, run, f["inserted"]), "delivered": f["delivered"], "dead": f["dead"],
               "webhook": ev.latency_ms(rec, run), "raw": f"raw/{name}.txt"}
        if waited is None:
            row["error"] = "not every event delivered in time"
        r["kill"].append(row)
        self.procs.stop(second)
        self.events_grafton("main")
        self.progress.say("events", f"kill {i + 1}: {row['inserted']:,} inserted, {row['received']:,} received, "
                                    f"{row['lost']} lost, {row['duplicates']} duplicates, all delivered "
                                    f"{row['all_delivered_after_kill_s']} s after the kill")

    def events_down(self, i: int):
        """Stop the webhook for DOWN_S mid-run, start it again; every event delivered?"""
        r = self.events_results()
        s = self.cfg.events_trial_s
        run, name = self.events_next_run(), f"events-down-{i + 1}"
        offset = self.events_offset()
        p = self.events_paced(name, s, run)
        time.sleep(ev.KILL_AT_S)
        self.procs.stop(self.events_hook)
        time.sleep(ev.DOWN_S)
        self.events_receiver_start()
        t_back = time.monotonic()
        pg = self.events_pgbench_end(p, name, s)
        waited = self.events_drain()
        done_s = time.monotonic() - t_back
        f = self.events_figures(run)
        rec = self.events_receipts_from(offset)
        row = {"trial": i + 1, "run": run, "pgbench_tps": _r(pg.get("tps")),
               "all_delivered_after_back_s": round(done_s, 1), **ev.delivery_counts(rec, run, f["inserted"]),
               "delivered": f["delivered"], "dead": f["dead"], "webhook": ev.latency_ms(rec, run),
               "raw": f"raw/{name}.txt"}
        if waited is None:
            row["error"] = "not every event delivered in time"
        r["webhook_down"].append(row)
        self.progress.say("events", f"webhook down {i + 1}: {row['inserted']:,} inserted, {row['received']:,} "
                                    f"received, {row['lost']} lost, {row['duplicates']} duplicates, {row['dead']} "
                                    f"dead; all delivered {row['all_delivered_after_back_s']} s after it was back")

    # ------------------------------------------------------------- the log's size
    def events_sizes(self) -> dict:
        a, b, n, m = (int(x) for x in self.events_psql.one(SIZES_SQL))
        return {"event_log_bytes": a, "invocation_logs_bytes": b, "total_bytes": a + b, "event_log_rows": n,
                "invocation_log_rows": m}

    def events_log_size(self):
        r = self.events_results()
        m = self.cfg.events_log_events
        flags = ["--events-retention-hours", str(ev.RETENTION_HOURS)]
        lg = r["log_size"] = {"events": m, "retention_hours": ev.RETENTION_HOURS, "flags": " ".join(flags),
                              "cleanup_interval_s": ev.CLEANUP_INTERVAL_S, "cleanup_per_pass": ev.CLEANUP_PER_PASS,
                              "passes": []}
        self.procs.stop(self.events_proc)
        self.events_psql.rows(f"TRUNCATE grafton_catalog.event_log, grafton_catalog.event_invocation_logs, {ev.TABLE}")
        lg["before"] = self.events_sizes()
        lg["log_filter"] = ev.CLEANUP_LOG
        self.events_grafton("log", flags, ev.CLEANUP_LOG)
        run, name = self.events_next_run(), "events-log-size"
        c0 = self.events_cpu()
        rc = self.procs.run(ev.throughput_argv(self.env.pg("pgbench"), self.events_url, self.events_scripts["batch"],
                                               "batch", m, run), log_path=self.log(f"{name}.txt"), timeout=3600)
        waited = self.events_drain(timeout=max(ev.DRAIN_MAX_S, m / 500))
        c1 = self.events_cpu()
        row = self.events_psql.one("SELECT count(*) FILTER (WHERE delivered), count(*) FILTER (WHERE dead), "
                                   "extract(epoch FROM max(delivered_at) - min(created_at)) "
                                   "FROM grafton_catalog.event_log")
        lg.update({"pgbench_rc": rc, "delivered": int(row[0]), "dead": int(row[1]),
                   "span_s": _r(_f(row[2]), 2), "all_delivered": waited is not None})
        lg["events_per_s"] = round(lg["delivered"] / lg["span_s"], 1) if lg["span_s"] else None
        lg["cpu_s"], lg["cpu_s_per_1000"] = self.events_per_1000(c0, c1, lg["delivered"])
        with open(self.log("events-grafton-log.log"), errors="replace") as f:
            lg["cleaned_during_run"] = ev.cleaned_counts(f.read())
        lg["after_delivery"] = self.events_sizes()
        self.procs.stop(self.events_proc)
        # A fresh instance's clean-up runs at once (then every 300 s): one pass each, once
        # every event and invocation log is older than the retention.
        age = _f(self.events_psql.one("SELECT extract(epoch FROM now() - greatest((SELECT max(created_at) FROM "
                                      "grafton_catalog.event_log), (SELECT max(created_at) FROM "
                                      "grafton_catalog.event_invocation_logs)))")[0]) or 0
        time.sleep(max(0.0, ev.RETENTION_HOURS * 3600 + 2 - age))
        for k in range(ev.CLEANUP_PASSES):
            if self.events_sizes()["event_log_rows"] == 0:
                break  # nothing left to clean up
            log_name = f"events-grafton-cleanup-{k + 1}.log"
            t0 = time.monotonic()
            self.events_grafton(f"cleanup-{k + 1}", flags, ev.CLEANUP_LOG)
            counts = []
            while time.monotonic() < t0 + 120 and not counts:
                time.sleep(0.2)
                with open(self.log(log_name), errors="replace") as f:
                    counts = ev.cleaned_counts(f.read())
            took = time.monotonic() - t0
            self.procs.stop(self.events_proc)
            lg["passes"].append({"pass": k + 1, "deleted": counts[0] if counts else None,
                                 "seconds_from_start": round(took, 2), **self.events_sizes()})
        after = lg["after_delivery"]
        per_event = after["total_bytes"] / m if m else None
        lg["bytes_per_event"] = round(per_event, 1) if per_event else None
        lg["bounds"] = [ev.cleanup_bound(per_event, rate, ev.RETENTION_HOURS * 3600)
                        for rate in (ev.RATE, ev.CLEANUP_PER_PASS / ev.CLEANUP_INTERVAL_S)]
        lg["bounds"] += [ev.cleanup_bound(per_event, rate, ev.DEFAULT_RETENTION_HOURS * 3600)
                         for rate in (ev.RATE, 100)]
        self.progress.say("events", f"log size after {lg['delivered']:,} delivered: {after['total_bytes'] / 1e6:,.0f} "
                                    f"MB; clean-up passes deleted "
                                    f"{', '.join(str(p['deleted']) for p in lg['passes'])}")

    def events_stop(self):
        for attr in ("events_proc", "events_hook"):
            p = getattr(self, attr, None)
            if p is not None:
                self.procs.stop(p)
        if getattr(self, "events_psql", None) is not None:
            self.events_psql.close()
            self.events_psql = None
        base = self.db_url.rsplit("/", 1)[0]
        self.procs.run([self.env.pg("psql"), "-q", f"{base}/postgres", "-c",
                        f"DROP DATABASE IF EXISTS {ev.DATABASE} WITH (FORCE)"], log_path=self.log("events-setup.log"),
                       timeout=120)
        r = self.results.get("events")
        if r:
            r["verdicts"] = ev.run_verdicts(r)


def _r(v, digits: int = 1):
    return None if v is None else round(v, digits)
