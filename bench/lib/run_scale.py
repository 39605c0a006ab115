"""The scale scenario, part 1: one Grafton PG straight, behind HAProxy, and two behind
HAProxy; the steps of every part; HAProxy's install; the measured run shared with
part 2 (run_replica.py).

A part of `runner.Bench` (see runner.py); standard library only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import urllib.request

import plan
import procs
import scale
from common import ROOT, first_lines, proc_stat_cpu, tail_of

HAPROXY_TEMPLATE = os.path.join(ROOT, "deploy", "haproxy.cfg")
DB_CPU_TEXT = ("PostgreSQL's CPU: utime + stime of the postmaster and every process under it (backends, "
               "WAL writer and sender, checkpointer…; for part 2 both clusters), plus the postmaster's "
               "cutime + cstime so that a backend exiting mid-run still counts; from /proc, not "
               "pg_stat_statements (not loaded)")


class Scale:
    def scale_steps(self) -> list[plan.Step]:
        cfg, S = self.cfg, plan.Step
        if "grafton" not in cfg.systems:
            return [S("scale", "skipped: needs grafton among the systems", 0,
                      lambda: self.results.__setitem__("scale", {"status": "skipped: needs Grafton PG"}))]
        run_s = cfg.scale_s + 1  # the run, the settle poll, the CPU readings
        warm = len(cfg.scale_queries) * (cfg.scale_warmup_s + 0.5)
        up1 = lambda: bool(getattr(self, "scale_urls", None))  # noqa: E731
        up2 = lambda: bool(getattr(self, "replica_urls", None))  # noqa: E731
        st = [S("scale", f"start a Grafton PG instance (pool {cfg.pool}), two sharing that pool "
                         f"({half_pool(cfg.pool)} each), and HAProxy (deploy/haproxy.cfg) in front of one and of "
                         "the two", 3 * scale.START_S + 2, self.scale_start)]
        for v in scale.VARIANTS:
            st.append(S("scale", f"warm-up {scale.VARIANT_TEXT[v]} ({cfg.scale_warmup_s} s per query, 10 clients)",
                        warm, lambda v=v: self.scale_warmup("balance", v), when=up1))
        for rnd, q, lv, v in scale.run_order(cfg.scale_queries, cfg.scale_levels, cfg.scale_rounds, scale.VARIANTS):
            st.append(S("scale", f"{scale.VARIANT_TEXT[v]}: {q} clients={lv} round {rnd + 1}", run_s,
                        lambda r=rnd, q=q, lv=lv, v=v: self.scale_balance(r, q, lv, v), when=up1))
        st.append(S("scale", "stop HAProxy and the instances", 1, self.scale_stop))
        st.append(S("scale", "replica: pg_basebackup of the suite's cluster, start it (hot_standby=on); start "
                             "Grafton PG without and with --read-replica-url", 15 + 2 * scale.START_S,
                    self.replica_start))
        for v in scale.REPLICA_VARIANTS:
            st.append(S("scale", f"warm-up {scale.VARIANT_TEXT[v]}", warm,
                        lambda v=v: self.scale_warmup("replica", v), when=lambda v=v: v in getattr(
                            self, "replica_urls", {})))
        for rnd, q, lv, v in scale.run_order(cfg.scale_queries, cfg.scale_levels, cfg.scale_rounds,
                                             scale.REPLICA_VARIANTS):
            st.append(S("scale", f"{scale.VARIANT_TEXT[v]}: {q} clients={lv} round {rnd + 1}", run_s,
                        lambda r=rnd, q=q, lv=lv, v=v: self.replica_run(r, q, lv, v),
                        when=lambda v=v: v in getattr(self, "replica_urls", {})))
        st.append(S("scale", f"replica lag: {scale.WRITE_RATE} inserts/s while reading "
                             f"({', '.join(cfg.scale_queries)}, {cfg.scale_lag_s} s each, "
                             f"{max(cfg.scale_levels)} clients); lag sampled every second",
                    len(cfg.scale_queries) * (cfg.scale_lag_s + 0.5) + 3, self.replica_lag, when=up2))
        st.append(S("scale", "stop the replica and its servers", 3, self.replica_stop))
        for i in range(cfg.scale_restarts):
            st.append(S("scale", f"recovery: pg_ctl restart -m fast under a read loop ({scale.RECOVERY_CLIENTS} "
                                 f"clients), {i + 1}/{cfg.scale_restarts}",
                        scale.START_S + scale.RECOVERY_WARM_S + scale.RECOVERY_AFTER_S + 4,
                        lambda i=i: self.scale_recovery(i)))
        return st

    # ------------------------------------------------------------- set-up
    def install_haproxy(self):
        """Debian's haproxy (apt-get as root, else sudo -n); the service the package may
        start is stopped: the bench runs its own HAProxy processes."""
        pre = [] if self.env.root else ["sudo", "-n"]
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        install = pre + ["apt-get", "install", "-y", "-qq", "haproxy"]
        if self.procs.run(install, log_path=self.log("install-haproxy.log"), env=env, timeout=900) != 0:
            self.check_call(pre + ["apt-get", "update", "-qq"], "install-haproxy.log", "apt-get update", env=env,
                            timeout=900)
            self.check_call(install, "install-haproxy.log", "apt-get install haproxy", env=env, timeout=900)
        if shutil.which("service"):
            self.procs.run(pre + ["service", "haproxy", "stop"], log_path=self.log("install-haproxy.log"), timeout=60)
        self.env.haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"

    def scale_results(self) -> dict:
        cfg = self.cfg
        return self.results.setdefault("scale", {
            "status": "ok", "levels": cfg.scale_levels, "queries": cfg.scale_queries, "duration_s": cfg.scale_s,
            "rounds": cfg.scale_rounds, "warmup_s": cfg.scale_warmup_s, "limit": cfg.limit, "pool": cfg.pool,
            "pool_each_of_two": half_pool(cfg.pool),
            "cores": os.cpu_count(), "client": "bench/loadgen --mode closed", "db_cpu": DB_CPU_TEXT,
            "clk_tck": os.sysconf("SC_CLK_TCK"), "unavailable": [], "config": {}})

    def scale_grafton(self, name: str, extra: list[str] | None = None,
                      pool: int | None = None) -> tuple[subprocess.Popen | None, str]:
        """A Grafton PG for this scenario (the suite's pool unless `pool`, phrag naming); (None, why)
        if it did not answer."""
        port = procs.free_port()
        log_name = f"scale-{name}.log"
        p = self.procs.start(self.grafton_argv("grafton", port, extra=extra, pool=pool), log_path=self.log(log_name))
        url = f"http://127.0.0.1:{port}/v1/graphql"
        try:
            procs.wait_graphql(url, "{ venues(limit: 1) { id } }", p, 60)
        except RuntimeError as e:
            self.procs.stop(p)
            return None, f"{e}; raw/{log_name}: {tail_of(self.log(log_name), 6)[-500:]}"
        return p, url

    def scale_haproxy(self, name: str, ports: list[int]) -> tuple[subprocess.Popen, str]:
        """HAProxy from deploy/haproxy.cfg with this run's ports, checked with `haproxy -c`."""
        port = procs.free_port()
        with open(HAPROXY_TEMPLATE) as f:
            text = scale.haproxy_config(f.read(), port, ports)
        d = os.path.join(self.out, "config")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, f"haproxy-{name}.cfg")
        with open(path, "w") as f:
            f.write(f"# written by bench/run ({self.results['command']}) from deploy/haproxy.cfg\n" + text)
        self.scale_results()["config"][name] = os.path.relpath(path, self.out)
        self.check_call([self.env.haproxy, "-c", "-f", path], f"scale-haproxy-{name}.log", "haproxy -c")
        p = self.procs.start([self.env.haproxy, "-f", path, "-db"], log_path=self.log(f"scale-haproxy-{name}.log"))
        url = f"http://127.0.0.1:{port}/v1/graphql"
        try:
            procs.wait_graphql(url, "{ venues(limit: 1) { id } }", p, 30)
        except RuntimeError as e:
            self.procs.stop(p)
            raise RuntimeError(f"{e}; raw/scale-haproxy-{name}.log: {tail_of(self.log(f'scale-haproxy-{name}.log'), 4)}")
        return p, url

    def scale_start(self):
        sc = self.scale_results()
        sc["haproxy"] = subprocess.run([self.env.haproxy, "-v"], capture_output=True, text=True).stdout.split("\n")[0]
        # One instance with the suite's pool; the two behind HAProxy share it, so the database
        # holds as many connections either way.
        a, url_a = self.scale_grafton("a")
        b, url_b = self.scale_grafton("b", pool=half_pool(self.cfg.pool)) if a else (None, "")
        c, url_c = self.scale_grafton("c", pool=half_pool(self.cfg.pool)) if b else (None, "")
        if not (a and b and c):
            why = url_a if not a else url_b if not b else url_c
            sc["unavailable"].append({"part": "balance", "reason": why})
            self.error(f"scale: a Grafton PG instance did not start: {why}")
            self.scale_stop()
            return
        self.scale_procs = {"a": a, "b": b, "c": c}
        port = lambda u: int(u.split(":")[2].split("/")[0])  # noqa: E731
        try:
            lb1, url1 = self.scale_haproxy("lb1", [port(url_a)])
            self.scale_procs["lb1"] = lb1
            lb2, url2 = self.scale_haproxy("lb2", [port(url_b), port(url_c)])
            self.scale_procs["lb2"] = lb2
        except (RuntimeError, OSError) as e:
            sc["unavailable"].append({"part": "balance", "reason": f"HAProxy: {e}"})
            self.error(f"scale: HAProxy did not start: {e}")
            self.scale_stop()
            return
        self.scale_urls = {"direct": url_a, "lb1": url1, "lb2": url2}
        self.scale_pids = {"direct": [a.pid], "lb1": [a.pid], "lb2": [b.pid, c.pid]}
        self.scale_lb = {"lb1": lb1.pid, "lb2": lb2.pid}
        sc["balance"] = {"variants": {v: scale.VARIANT_TEXT[v] for v in scale.VARIANTS}, "runs": [], "summary": []}

    def scale_stop(self):
        for p in (getattr(self, "scale_procs", None) or {}).values():
            self.procs.stop(p)
        self.scale_procs, self.scale_urls = {}, {}
        # A server HAProxy's /readyz check took out would turn the runs into 503s: say so.
        for name in ("lb1", "lb2"):
            down = [ln[ln.find("Server "):] for ln in first_lines(self.log(f"scale-haproxy-{name}.log"), "", 10_000)
                    if " is DOWN" in ln][:3]
            if down:
                self.scale_results().setdefault("haproxy_down", {})[name] = down
                self.error(f"scale: HAProxy ({name}) took a server out: {down[0]}")

    def scale_warmup(self, part: str, variant: str):
        url = (self.scale_urls if part == "balance" else self.replica_urls)[variant]
        for q in self.cfg.scale_queries:
            self.light("grafton", q, 10, self.cfg.scale_warmup_s, f"scale-warmup-{part}-{variant}-{q}", url=url)

    # ------------------------------------------------------------- a measured run
    def postmaster_pid(self, pgdata: str) -> int | None:
        try:
            with open(os.path.join(pgdata, "postmaster.pid")) as f:
                return int(f.readline())
        except (OSError, ValueError):
            return None

    def scale_measure(self, name: str, query: str, level: int, url: str, grafton_pids: list[int],
                      haproxy_pid: int | None = None, clusters: dict[str, str] | None = None) -> dict:
        """A closed loop of `level` connections with every process's CPU read around it:
        the row's ok_rps, latencies, and CPU µs per request of Grafton (summed over
        `grafton_pids`), PostgreSQL (per cluster and summed), HAProxy, the client, and
        the whole machine (busy, from /proc/stat)."""
        self.settle(name)
        roots = {k: self.postmaster_pid(d) for k, d in (clusters or {"primary": self.pgdata}).items()}
        g0 = [procs.cpu_ticks(p) for p in grafton_pids]
        d0 = {k: procs.tree_cpu_ticks(p) if p else None for k, p in roots.items()}
        h0 = procs.cpu_ticks(haproxy_pid) if haproxy_pid else None
        m0 = proc_stat_cpu()
        s = self.light("grafton", query, level, self.cfg.scale_s, name, url=url)
        m1 = proc_stat_cpu()
        h1 = procs.cpu_ticks(haproxy_pid) if haproxy_pid else None
        d1 = {k: procs.tree_cpu_ticks(p) if p else None for k, p in roots.items()}
        g1 = [procs.cpu_ticks(p) for p in grafton_pids]
        row = {"query": query, "level": level, "raw": f"raw/{name}.json"}
        if s is None:
            row["error"] = "loadgen failed"
            return row
        row.update({k: s.get(k) for k in ("rps", "ok_rps", "requests", "failed_rate", "p50", "p95", "p99",
                                          "client_cpu_s")})
        n, clk = s.get("requests"), os.sysconf("SC_CLK_TCK")
        delta = lambda a, b: b - a if a is not None and b is not None else None  # noqa: E731
        per = [delta(a, b) for a, b in zip(g0, g1)]
        if None not in per:
            row["grafton_us"] = scale.per_request_us(sum(per), clk, n)
            row["instance_share"] = [round(x / sum(per), 3) for x in per] if sum(per) else None
        dbs = {k: delta(d0[k], d1[k]) for k in roots}
        row["db_split_us"] = {k: scale.per_request_us(v, clk, n) for k, v in dbs.items()}
        if None not in dbs.values():
            row["db_us"] = scale.per_request_us(sum(dbs.values()), clk, n)
        if haproxy_pid:
            row["haproxy_us"] = scale.per_request_us(delta(h0, h1), clk, n)
        if s.get("client_cpu_s") is not None and n:
            row["client_us"] = round(1e6 * s["client_cpu_s"] / n, 1)
        if m0 and m1:
            total = sum(m1[:8]) - sum(m0[:8])  # user … steal (guest time is already in user)
            idle = (m1[3] + m1[4]) - (m0[3] + m0[4])
            row["busy_us"] = scale.per_request_us(total - idle, clk, n)
            row["busy_share"] = round((total - idle) / total, 3) if total else None
        return row

    def scale_balance(self, rnd: int, query: str, level: int, variant: str):
        b = self.results["scale"]["balance"]
        name = f"scale-{variant}-{query}-{level}-r{rnd + 1}"
        row = self.scale_measure(name, query, level, self.scale_urls[variant], self.scale_pids[variant],
                                 haproxy_pid=self.scale_lb.get(variant))
        b["runs"].append({"variant": variant, "round": rnd + 1, **row})
        b["summary"] = scale.summarise(b["runs"], scale.VARIANTS)
        b["target"] = scale.two_over_one(b["summary"])
        b["model"] = scale.model_rows(b["summary"], os.cpu_count() or 1)

    def metrics_text(self, graphql_url: str) -> str | None:
        """Grafton's /metrics (no admin secret: every request is admin)."""
        try:
            with urllib.request.urlopen(graphql_url.replace("/v1/graphql", "/metrics"), timeout=5) as r:
                return r.read().decode(errors="replace")
        except OSError:
            return None


def half_pool(pool: int) -> int:
    """Each of the two instances' pool: half the single instance's (at least 1)."""
    return max(1, pool // 2)
