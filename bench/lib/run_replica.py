"""The scale scenario, part 2: a streaming replica of the suite's cluster (a Grafton
with and without --read-replica-url, then the replica's lag under 100 inserts/s).

A part of `runner.Bench` (see runner.py); standard library only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
import urllib.parse

import plan
import procs
import scale


class Replica:
    # ------------------------------------------------------------- part 2: the replica
    def replica_start(self):
        sc = self.scale_results()
        r = sc["replica"] = {"status": "ok", "variants": {v: scale.VARIANT_TEXT[v] for v in scale.REPLICA_VARIANTS},
                             "runs": [], "summary": []}
        self.replica_urls, self.replica_procs = {}, {}
        port = urllib.parse.urlsplit(self.db_url).port
        rdir = os.path.join(self.tmp, "replica")
        try:
            self.check_call(self.as_pg([self.env.pg("pg_basebackup"), "-h", "127.0.0.1", "-p", str(port), "-U",
                                        "postgres", "-D", rdir, "-R", "-X", "stream", "-c", "fast"]),
                            "scale-basebackup.log", "pg_basebackup", timeout=600)
            rport = self.start_replica_cluster(rdir)
        except RuntimeError as e:
            r["status"] = f"not measured: {str(e).splitlines()[0]}"
            sc["unavailable"].append({"part": "replica", "reason": str(e)[:600]})
            self.error(f"scale: the replica did not start: {e}")
            return
        self.replica_url = f"postgres://postgres@127.0.0.1:{rport}/meetup"
        r["replica"] = f"127.0.0.1:{rport}/meetup"  # the name Grafton's /metrics label it by
        r["started"] = ("pg_basebackup -R -X stream -c fast of the suite's cluster, started with hot_standby=on "
                        "and the primary's settings")
        p0, url0 = self.scale_grafton("primary")
        if p0:
            self.replica_procs["primary"], self.replica_urls["primary"] = p0, url0
        else:
            sc["unavailable"].append({"part": "replica", "reason": f"Grafton PG (primary alone): {url0}"})
        r["flag"] = self.env.grafton_serve_has("--read-replica-url")
        if r["flag"] is False:
            r["status"] = ("partial: this Grafton has no --read-replica-url; the lag was measured with the reads "
                           "on the primary, the comparison was not")
            sc["unavailable"].append({"part": "replica", "reason": "grafton serve --help lists no --read-replica-url"})
            return
        p1, url1 = self.scale_grafton("replica", ["--read-replica-url", self.replica_url])
        if not p1:
            r["status"] = f"partial: the replica-backed Grafton did not start ({url1[:300]})"
            sc["unavailable"].append({"part": "replica", "reason": f"Grafton PG --read-replica-url: {url1}"})
            return
        self.replica_procs["replica"], self.replica_urls["replica"] = p1, url1
        text = self.metrics_text(url1) or ""
        r["replica_up_at_start"] = scale.metric_values(text, "grafton_replica_up").get(r["replica"])

    def start_replica_cluster(self, rdir: str) -> int:
        rport = procs.free_port()
        opts = (f"-p {rport} -k {self.tmp} -c listen_addresses=127.0.0.1 -c hot_standby=on -c fsync=off "
                f"-c synchronous_commit=off -c full_page_writes=off -c max_connections={plan.MAX_CONNECTIONS} "
                "-c shared_buffers=256MB -c max_wal_senders=10 -c max_replication_slots=10")
        self.check_call(self.as_pg([self.env.pg("pg_ctl"), "-D", rdir, "-l", os.path.join(self.tmp, "replica.log"),
                                    "-w", "-t", "60", "start", "-o", opts]), "scale-replica-pg_ctl.log",
                        "pg_ctl start (replica)")
        self.replica_pgdata = rdir
        url = f"postgres://postgres@127.0.0.1:{rport}/meetup"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            out = subprocess.run([self.env.pg("psql"), "-At", url, "-c", "SELECT pg_is_in_recovery()"],
                                 capture_output=True, text=True, timeout=10)
            if out.stdout.strip() == "t":
                return rport
            time.sleep(0.2)
        raise RuntimeError("the replica does not answer as a standby (pg_is_in_recovery) within 60 s")

    def replica_reads(self) -> float | None:
        url = self.replica_urls.get("replica")
        text = self.metrics_text(url) if url else None
        if not text:
            return None
        reads = scale.metric_values(text, "grafton_replica_reads_total")
        name = self.results["scale"]["replica"].get("replica")
        return reads.get(name, next(iter(reads.values())) if len(reads) == 1 else None)

    def replica_run(self, rnd: int, query: str, level: int, variant: str):
        rr = self.results["scale"]["replica"]
        name = f"scale-{variant}-{query}-{level}-r{rnd + 1}"
        before = self.replica_reads() if variant == "replica" else None
        row = self.scale_measure(name, query, level, self.replica_urls[variant],
                                 [self.replica_procs[variant].pid],
                                 clusters={"primary": self.pgdata, "replica": self.replica_pgdata})
        after = self.replica_reads() if variant == "replica" else None
        if before is not None and after is not None:
            row["replica_reads"] = int(after - before)  # reads the replica answered (Grafton's counter)
        rr["runs"].append({"variant": variant, "round": rnd + 1, **row})
        rr["summary"] = scale.summarise(rr["runs"], scale.REPLICA_VARIANTS)
        rr["model"] = scale.replica_model_rows(rr["summary"], os.cpu_count() or 1)

    def replica_lag(self):
        cfg, rr = self.cfg, self.results["scale"]["replica"]
        target = "replica" if "replica" in self.replica_urls else "primary"
        if target not in self.replica_urls:
            rr["lag"] = {"error": "no Grafton to read from"}
            return
        url = self.replica_urls[target]
        psql = self.env.pg("psql")
        lag = rr["lag"] = {"rate": scale.WRITE_RATE, "reads_on": scale.VARIANT_TEXT[target],
                           "clients": max(cfg.scale_levels), "queries": cfg.scale_queries,
                           "duration_s": cfg.scale_lag_s, "sample_s": scale.LAG_SAMPLE_S,
                           "writer": f"INSERTs of {len(scale.WRITE_NOTE)} bytes into {scale.WRITE_TABLE}, each its own "
                                     "transaction, piped one every 10 ms into one long-running psql on the primary",
                           "raw": "raw/scale-lag.json"}
        self.check_call([psql, "-q", "-v", "ON_ERROR_STOP=1", self.db_url, "-c", scale.write_table_sql()],
                        "scale-writer.log", f"create {scale.WRITE_TABLE}")
        writer = self.procs.start([psql, "-q", self.db_url], log_path=self.log("scale-writer.log"),
                                  stdin_from=subprocess.PIPE)
        stop, samples, t0 = threading.Event(), [], time.monotonic()
        stmt = scale.insert_sql().encode()

        def write():
            i = 0
            while not stop.is_set():
                wait = t0 + i / scale.WRITE_RATE - time.monotonic()
                if wait > 0 and stop.wait(wait):
                    break
                try:
                    writer.stdin.write(stmt)
                    writer.stdin.flush()
                except OSError:
                    break
                i += 1
            lag["sent"] = i

        def sample():
            while not stop.is_set():
                ts = time.monotonic()
                try:
                    out = subprocess.run([psql, "-At", "-F", "|", self.db_url, "-c", scale.REPLICATION_SQL],
                                         capture_output=True, text=True, timeout=10).stdout
                except (OSError, subprocess.SubprocessError):
                    out = ""
                text = self.metrics_text(url) if target == "replica" else None
                samples.append({"t": round(ts - t0, 3), "pg": scale.replication_rows(out),
                                "grafton": scale.grafton_lag(text) if text else None})
                stop.wait(max(0.0, ts + scale.LAG_SAMPLE_S - time.monotonic()))

        threads = [threading.Thread(target=write, daemon=True), threading.Thread(target=sample, daemon=True)]
        for th in threads:
            th.start()
        reads = {}
        try:
            time.sleep(1)
            for q in cfg.scale_queries:
                s = self.light("grafton", q, lag["clients"], cfg.scale_lag_s, f"scale-lag-{q}", url=url)
                reads[q] = {k: s.get(k) for k in ("ok_rps", "p50", "p95", "failed_rate")} if s else {"error": "loadgen"}
        finally:
            stop.set()
            for th in threads:
                th.join(timeout=15)
            lag["elapsed_s"] = round(time.monotonic() - t0, 2)
            try:
                writer.stdin.close()
                writer.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self.procs.stop(writer)
        lag["reads"] = reads
        out = subprocess.run([psql, "-At", "-F", "|", self.db_url, "-c",
                              f"SELECT count(*), COALESCE(EXTRACT(epoch FROM max(at) - min(at)), 0) "
                              f"FROM {scale.WRITE_TABLE}"], capture_output=True, text=True, timeout=30)
        try:
            n, span_s = out.stdout.strip().split("|")
            lag["rows"], lag["write_span_s"] = int(n), round(float(span_s), 2)
            lag["achieved_rate"] = round(int(n) / float(span_s), 1) if float(span_s) > 0 else None
        except ValueError:
            lag["rows"] = None
        subprocess.run([psql, "-q", self.db_url, "-c", f"DROP TABLE IF EXISTS {scale.WRITE_TABLE}"],
                       capture_output=True, timeout=60)
        with open(self.log("scale-lag.json"), "w") as f:
            json.dump(samples, f)
        lag["summary"] = scale.lag_summary(samples)
        lag["samples"] = len(samples)

    def replica_stop(self):
        for p in (getattr(self, "replica_procs", None) or {}).values():
            self.procs.stop(p)
        self.replica_procs, self.replica_urls = {}, {}
        self.scale_cleanup()

    def scale_cleanup(self):
        """Stops the replica cluster (also from the runner's clean-up) and keeps its log."""
        rdir = getattr(self, "replica_pgdata", None)
        if rdir and os.path.exists(os.path.join(rdir, "postmaster.pid")):
            subprocess.run(self.as_pg([self.env.pg("pg_ctl"), "-D", rdir, "-m", "fast", "-w", "stop"]),
                           capture_output=True, timeout=60)
        log = os.path.join(self.tmp or "", "replica.log")
        if self.tmp and os.path.exists(log) and os.path.isdir(self.raw):
            shutil.copy(log, self.log("replica-postgres.log"))
        self.replica_pgdata = None
