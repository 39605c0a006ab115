"""The scale scenario, part 3: recovery after `pg_ctl restart -m fast` of the suite's
cluster while a read loop runs against a fresh Grafton PG.

A part of `runner.Bench` (see runner.py); standard library only.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import subprocess
import threading
import time
import urllib.parse

import scale


class Recovery:
    def scale_recovery(self, i: int):
        sc = self.scale_results()
        rec = sc.setdefault("recovery", {
            "clients": scale.RECOVERY_CLIENTS, "interval_s": scale.RECOVERY_INTERVAL_S,
            "timeout_s": scale.CLIENT_TIMEOUT_S, "poll_s": scale.POLL_S, "query": "venues",
            "restart": "pg_ctl restart -m fast -w", "poll": "pg_isready -h 127.0.0.1",
            "target_s": scale.TARGET_RECOVERY_S, "trials": []})
        p, url = self.scale_grafton(f"recovery-{i + 1}")
        if not p:
            rec["trials"].append({"round": i + 1, "error": f"Grafton PG did not start: {url[:400]}"})
            return
        with open(self.doc_file("grafton", "venues", None)) as f:
            doc = json.load(f)
        gport = int(urllib.parse.urlsplit(url).port)
        records: list[tuple[float, float, str]] = []
        polls: list[tuple[float, bool]] = []
        stop, pstop = threading.Event(), threading.Event()

        def client(seed: int):
            pick, conn = random.Random(seed), None
            while not stop.is_set():
                body = json.dumps({"query": doc["query"], "variables": pick.choice(doc["variables"])})
                t0 = time.monotonic()
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection("127.0.0.1", gport, timeout=scale.CLIENT_TIMEOUT_S)
                    conn.request("POST", "/v1/graphql", body=body, headers={"content-type": "application/json"})
                    resp = conn.getresponse()
                    outcome = scale.classify(resp.status, resp.read())
                except TimeoutError:  # no answer within the client's timeout: hung
                    outcome = "hung"
                except (OSError, http.client.HTTPException):
                    outcome = "transport"
                if outcome in ("hung", "transport") and conn is not None:
                    conn.close()
                    conn = None
                records.append((t0, time.monotonic(), outcome))
                stop.wait(max(0.0, t0 + scale.RECOVERY_INTERVAL_S - time.monotonic()))

        pg_port = urllib.parse.urlsplit(self.db_url).port
        ready = [self.env.pg("pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(pg_port), "-U", "postgres",
                 "-d", "postgres", "-t", "2"]

        def poll():
            while not pstop.is_set():
                t0 = time.monotonic()
                rc = subprocess.run(ready, capture_output=True).returncode
                polls.append((t0, rc == 0))
                pstop.wait(max(0.0, t0 + scale.POLL_S - time.monotonic()))

        clients = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(scale.RECOVERY_CLIENTS)]
        poller = threading.Thread(target=poll, daemon=True)
        for th in clients:
            th.start()
        time.sleep(scale.RECOVERY_WARM_S)
        poller.start()
        time.sleep(0.1)
        t_restart = time.monotonic()
        rc = self.procs.run(self.as_pg([self.env.pg("pg_ctl"), "-D", self.pgdata, "-l",
                                        os.path.join(self.tmp, "postgres.log"), "-m", "fast", "-w", "-t", "60",
                                        "restart"]), log_path=self.log("scale-restart.log"), timeout=120)
        t_done = time.monotonic()
        seen = 0
        while time.monotonic() < t_restart + scale.RECOVERY_MAX_S:
            now = len(records)
            if any(o == "ok" and t1 >= t_done for _, t1, o in records[seen:now]):
                break
            seen = now
            time.sleep(0.05)
        time.sleep(scale.RECOVERY_AFTER_S)
        stop.set()
        pstop.set()
        for th in clients + [poller]:
            th.join(timeout=scale.CLIENT_TIMEOUT_S + 5)
        alive = p.poll() is None
        self.procs.stop(p)
        trial = {"round": i + 1, "pg_ctl_rc": rc, **scale.recovery(records, polls, t_restart, t_done, alive),
                 "raw": f"raw/scale-recovery-{i + 1}.json"}
        with open(self.log(f"scale-recovery-{i + 1}.json"), "w") as f:
            rel = lambda t: round(t - t_restart, 4)  # noqa: E731
            json.dump({"t0": "pg_ctl restart issued", "restart_returned": rel(t_done),
                       "requests": [[rel(a), rel(b), o] for a, b, o in records],
                       "polls": [[rel(t), ok] for t, ok in polls]}, f)
        rec["trials"].append(trial)
        rec["summary"] = scale.recovery_summary([t for t in rec["trials"] if not t.get("error")])
        self.progress.say("scale", f"recovery {i + 1}: database down {trial['db_down_s']} s, Grafton's first 200 "
                                   f"{trial['recovery_s']} s after it was back; {trial['hung']} hung, "
                                   f"{trial['unavailable_503']} × 503, Grafton {'alive' if alive else 'DEAD'}")
        if rc != 0 and subprocess.run(ready, capture_output=True).returncode != 0:
            raise RuntimeError(f"pg_ctl restart failed (exit {rc}) and the database is down; raw/scale-restart.log")
