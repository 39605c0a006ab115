"""The qos scenario: attack, the limits' overhead, the WSO2 shape and the cost of a rejection.

A part of `runner.Bench` (see runner.py); standard library only.
"""

from __future__ import annotations

import json
import os
import threading
import time

import plan
import procs
import qos
import report
from common import children_cpu_s, first_lines, proc_stat_cpu, tail_of


class Qos:
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
