"""The ops scenario: what metrics and tracing cost, reload time, console size.

A part of `runner.Bench` (see runner.py); standard library only.
"""

from __future__ import annotations

import json
import os
import time

import ops
import plan
import procs
import qos
from common import ROOT, tail_of


class Ops:
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
