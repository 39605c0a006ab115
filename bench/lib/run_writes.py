"""The write scenarios (insert_one, insert_batch_100, update_by_pk).

A part of `runner.Bench` (see runner.py); standard library only.
"""

from __future__ import annotations

import sqlite3

import plan
import procs
import report
import writes as wr
from common import PEERS, _out, k6_system, tail_of


class Writes:
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
        for peer in [p for p in PEERS if p in cfg.systems]:
            port, log_name = procs.free_port(), f"{peer}-writes.log"
            if peer == "postgraphile":
                p = self.start_postgraphile(port, mutations=True, log_name=log_name)
                probe = "{ allVenues(first: 1) { nodes { id } } }"
            else:
                p = self.start_postgraphile5(port, mutations=True, log_name=log_name)
                probe = "{ allVenuesList(first: 1) { rowId } }"
            url = f"http://127.0.0.1:{port}/graphql"
            try:
                procs.wait_graphql(url, probe, p, 90)
            except RuntimeError as e:
                raise RuntimeError(f"{report.label(peer)} (mutations): {e}; raw/{log_name}:\n"
                                   f"{tail_of(self.log(log_name))}")
            self.write_urls[peer] = url
            self.progress.say("writes", f"{report.label(peer)} with mutations: {url} (pid {p.pid}); venues "
                                        "max(id): " + ", ".join(f"{k} {v}" for k, v in self.write_base.items()))

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
