"""The read scenarios: fixed levels, the capacity search, memory and the pgbench ceiling.

A part of `runner.Bench` (see runner.py); standard library only.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time

import capacity as cap
import fixed
import pgbench
import plan
import procs
from common import BEST_CHECK, BEST_DIR, MAKE_SCRIPTS, k6_system, run_row, tail_of


class Reads:
    def warmup(self, system: str):
        for q in self.cfg.warmup_queries:
            self.load(system, q, 10, self.cfg.warmup_s, f"warmup-{system}-{q}")

    def fixed(self, system: str, query: str, vus: int, rnd: int = 0):
        fx = self.results.setdefault("fixed", {"levels": self.cfg.fixed_levels, "queries": self.cfg.fixed_queries,
                                               "duration_s": self.cfg.fixed_s, "rounds": self.cfg.fixed_rounds,
                                               "runs": []})
        name = f"fixed-{system}-{query}-{vus}" + (f"-r{rnd + 1}" if self.cfg.fixed_rounds > 1 else "")
        s = self.load(system, query, vus, self.cfg.fixed_s, name)
        row = {"system": system, "query": query, "vus": vus, "round": rnd + 1, "raw": f"raw/{name}.json"}
        fx["runs"].append(run_row(row, s, self.cfg.client))

    def capacity(self, system: str, query: str, limit: int):
        cfg = self.cfg
        c = self.results.setdefault("capacity", {
            "ramp_s": cfg.ramp_s, "hold_s": cfg.hold_s, "step": cfg.step, "refine": cfg.refine,
            "max_vus": cfg.max_vus, "budget_s": cfg.capacity_budget_s, "quick": cfg.mode == "quick",
            "client": cfg.client, "results": []})
        t0 = time.monotonic()
        budget = self.capacity_left_s / max(1, self.capacity_combos_left)
        tag = f"{system}-{query}-{limit}"
        probe = self.load(system, query, 50, cfg.probe_s, f"capacity-probe-{tag}", limit=limit)
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
            if cfg.client == "loadgen":
                s = self.open_trial(system, query, vus, limit, name)
                if s is None:
                    return {"vus": vus, "passed": False, "error": "loadgen failed", "raw": f"raw/{name}.json"}
                # The seed's thresholds, and no arrival the client itself could not send.
                s["passed"] = (s.get("failed_rate", 1) < 0.01 and (s.get("p95") or 0) < 500
                               and not s.get("dropped"))
                keep = {k: s.get(k) for k in ("passed", "p95", "p50", "p99", "min", "max", "avg", "requests", "rps",
                                              "failed_rate", "dropped")}
                return {"vus": vus, **keep, "raw": f"raw/{name}.json"}
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
                         budget_s=max(0.0, budget - (time.monotonic() - t0)), trial_cost_s=cfg.trial_cost_s,
                         grow=cfg.client == "loadgen")
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
                self.load(system, q, self.cfg.memory_vus, self.cfg.memory_s, f"memory-{system}-{q}")
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
                for q in plan.CEILING:
                    shutil.copy(os.path.join(d, f"{q}.sql"), self.log(f"ceiling-{q}.sql"))
            except (RuntimeError, OSError) as e:
                c["status"] = f"skipped: {str(e).splitlines()[0]}"
        if c["status"] == "ok" and "grafton" in self.urls:
            # The hand-written SQL counts only once it is shown to give Grafton's JSON.
            rc = self.procs.run([sys.executable, BEST_CHECK, "--psql", self.env.pg("psql"), "--database-url",
                                 self.db_url, "--grafton-url", self.urls["grafton"], "--sets", "10"],
                                log_path=self.log("ceiling-best-check.log"), timeout=300)
            c["best_check"] = "same JSON as Grafton" if rc == 0 else (
                f"differs from Grafton (raw/ceiling-best-check.log: {tail_of(self.log('ceiling-best-check.log'), 2)})")
            self.best_sql = rc == 0
        if c["status"] != "ok":
            self.progress.say("ceiling", c["status"])

    def ceiling(self, query: str, vus: int, rnd: int = 0):
        c = self.results["ceiling"]
        c["rounds"] = self.cfg.ceiling_rounds
        suffix = f"-r{rnd + 1}" if self.cfg.ceiling_rounds > 1 else ""
        name = f"ceiling-{query}-{vus}{suffix}"
        self.settle(name)
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
        g = fixed.index(self.results.get("fixed", {}).get("runs", [])).get(("grafton", query, vus))
        g = g if g and g.get("rps") else None
        if g is None and "grafton" in self.urls:  # fixed did not run there: measure Grafton now
            g = self.load("grafton", query, vus, self.cfg.ceiling_s, f"ceiling-grafton-{query}-{vus}{suffix}")
        grps = g.get("rps") if g else None
        row = {"query": query, "vus": vus, "round": rnd + 1, "tps": r["tps"], "latency_avg_ms": r["latency_avg_ms"],
               "failed": r["failed"], "transactions": r["transactions"], "grafton_rps": grps,
               "fraction": grps / r["tps"] if grps and r["tps"] else None, "raw": f"raw/{name}.txt"}
        best = os.path.join(BEST_DIR, f"{query}.sql")
        if getattr(self, "best_sql", False) and os.path.exists(best):
            bname = f"ceiling-best-{query}-{vus}{suffix}"
            self.settle(bname)
            argv = pgbench.command(self.env.pg("pgbench"), self.db_url, best, vus, self.cfg.ceiling_s)
            self.procs.run(argv, log_path=self.log(f"{bname}.txt"), timeout=self.cfg.ceiling_s + 120)
            try:
                with open(self.log(f"{bname}.txt"), errors="replace") as f:
                    b = pgbench.parse(f.read())
                row.update({"best_tps": b["tps"], "sql_quality": r["tps"] / b["tps"] if b["tps"] else None,
                            "fraction_best": grps / b["tps"] if grps and b["tps"] else None})
            except (OSError, ValueError):
                self.error(f"{bname}: pgbench failed (raw/{bname}.txt: {tail_of(self.log(bname + '.txt'), 3)})")
        c["runs"].append(row)
