"""The auth scenario: roles against admin, and the memory of role schemas.

A part of `runner.Bench` (see runner.py); standard library only.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time

import auth
import plan
import procs
import report
from common import run_row, tail_of


class Auth:
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
        for s, vus, who, rep in auth.run_order(cfg.auth_levels, systems, reps=cfg.auth_reps):
            st.append(S("auth", f"{s} {auth.QUERY} as {who} vus={vus} ({rep}/{cfg.auth_reps})", plan.k6_est(cfg.auth_s, vus),
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
        a["runs"].append(run_row(row, s, "k6"))
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
