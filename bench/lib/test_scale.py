import os
import shutil
import subprocess
import tempfile
import unittest

import fake_env
import plan
import report
import report_scale
import scale
import scale_model
from common import ROOT

METRICS = """# HELP grafton_replica_lag_seconds Seconds since the last commit a read replica replayed.
# TYPE grafton_replica_lag_seconds gauge
grafton_replica_lag_seconds{replica="127.0.0.1:5433/meetup"} 0.0125
grafton_replica_lag_seconds{replica="10.0.0.2:5432/app"} 1.5e-3
# TYPE grafton_replica_lag_bytes gauge
grafton_replica_lag_bytes{replica="127.0.0.1:5433/meetup"} 4096
grafton_replica_reads_total{replica="127.0.0.1:5433/meetup"} 1234
grafton_replica_pool_connections{replica="127.0.0.1:5433/meetup",state="idle"} 3
grafton_http_requests_total{status="200"} 99
"""


class ModelTest(unittest.TestCase):
    def test_smallest_bound_wins(self):
        # 100 µs of Grafton, 200 µs of PostgreSQL per request; 4 cores each side.
        p = scale_model.predict(2, 100e-6, 200e-6, cores_per_instance=4, db_cores=4)
        self.assertAlmostEqual(p["bounds"]["grafton"], 80_000)
        self.assertAlmostEqual(p["bounds"]["database"], 20_000)
        self.assertEqual(p["bound"], "database")
        self.assertAlmostEqual(p["rps"], 20_000)

    def test_replicas_multiply_the_database_bound(self):
        both = scale_model.predict(1, 100e-6, 200e-6, replicas=1, db_cores=4)
        only = scale_model.predict(1, 100e-6, 200e-6, replicas=1, db_cores=4, primary_reads=False)
        self.assertAlmostEqual(both["bounds"]["database"], 40_000)  # (1 + R) servers read
        self.assertAlmostEqual(only["bounds"]["database"], 20_000)  # Grafton: the replica alone reads

    def test_shared_machine_and_client(self):
        # Everything on 2 cores: 100 + 200 + 30 + 20 µs a request → 2 / 350 µs.
        p = scale_model.predict(2, 100e-6, 200e-6, cores_per_instance=2, db_cores=2, shared_cores=2,
                                haproxy_s=30e-6, client_s=20e-6, client_limit=scale_model.client_limit(20e-6))
        self.assertEqual(p["bound"], "shared")
        self.assertAlmostEqual(p["rps"], 2 / 350e-6)
        self.assertAlmostEqual(p["bounds"]["client"], 50_000)
        q = scale_model.predict(1, 100e-6, 200e-6, client_limit=1000)
        self.assertEqual((q["bound"], q["rps"]), ("client", 1000))

    def test_unknown_costs_are_left_out(self):
        self.assertEqual(scale_model.predict(1, None, None)["rps"], None)
        p = scale_model.predict(1, None, 200e-6, shared_cores=2)
        self.assertEqual(set(p["bounds"]), {"database"})
        self.assertIsNone(scale_model.client_limit(0))


class OrderTest(unittest.TestCase):
    def test_alternates_per_cell_and_round(self):
        order = scale.run_order(["venues", "venue_meetups"], [10, 50], 2, ["a", "b", "c"])
        self.assertEqual(len(order), 2 * 2 * 2 * 3)
        cells = [tuple(v for *_, v in order[i:i + 3]) for i in range(0, len(order), 3)]
        self.assertEqual(cells[:4], [("a", "b", "c"), ("c", "b", "a"), ("a", "b", "c"), ("c", "b", "a")])
        self.assertEqual(cells[4], ("c", "b", "a"))  # round 2 mirrors round 1 cell by cell
        self.assertEqual(order[0][:3], (0, "venues", 10))


class HaproxyTest(unittest.TestCase):
    def template(self):
        with open(os.path.join(ROOT, "deploy", "haproxy.cfg")) as f:
            return f.read()

    def test_renders_the_deploy_file_with_ports(self):
        text = scale.haproxy_config(self.template(), 18080, [18081, 18082, 18083])
        lines = [ln.strip() for ln in text.splitlines()]
        self.assertIn("bind 127.0.0.1:18080", lines)
        servers = [ln for ln in lines if ln.startswith("server ")]
        self.assertEqual(servers, [f"server grafton{i} 127.0.0.1:{18080 + i} check" for i in (1, 2, 3)])
        self.assertIn("option httpchk GET /readyz", lines)
        self.assertIn("http-check expect status 200", lines)
        self.assertIn("timeout tunnel 1h", lines)
        self.assertNotIn(":8081", text)
        self.assertNotIn("bind :8080", text)

    def test_needs_a_server_line(self):
        with self.assertRaises(ValueError):
            scale.haproxy_config("frontend f\n    bind :80\n", 1, [2])

    @unittest.skipUnless(shutil.which("haproxy"), "haproxy not installed")
    def test_haproxy_accepts_it(self):
        with tempfile.NamedTemporaryFile("w", suffix=".cfg") as f:
            f.write(scale.haproxy_config(self.template(), 18080, [18081, 18082]))
            f.flush()
            r = subprocess.run(["haproxy", "-c", "-f", f.name], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


class ParseTest(unittest.TestCase):
    def test_metrics_lag_lines(self):
        lag = scale.grafton_lag(METRICS)
        self.assertEqual(lag["127.0.0.1:5433/meetup"], {"seconds": 0.0125, "bytes": 4096.0})
        self.assertEqual(lag["10.0.0.2:5432/app"], {"seconds": 0.0015, "bytes": None})
        self.assertEqual(scale.metric_values(METRICS, "grafton_replica_reads_total"),
                         {"127.0.0.1:5433/meetup": 1234.0})
        self.assertEqual(scale.grafton_lag("no metrics here\n"), {})

    def test_pg_stat_replication_rows(self):
        rows = scale.replication_rows("walreceiver|0.004311|1024\nstandby2||0\n\ngarbage\nx|abc|1\n")
        self.assertEqual(rows, [{"name": "walreceiver", "replay_lag_s": 0.004311, "lag_bytes": 1024},
                                {"name": "standby2", "replay_lag_s": None, "lag_bytes": 0}])
        self.assertEqual(scale.replication_rows(""), [])

    def test_lag_summary(self):
        samples = [{"pg": [{"name": "w", "replay_lag_s": None, "lag_bytes": 0}],
                    "grafton": {"r": {"seconds": 0.0, "bytes": 0}}},
                   {"pg": [{"name": "w", "replay_lag_s": 0.02, "lag_bytes": 8192}],
                    "grafton": {"r": {"seconds": 0.5, "bytes": 100}}},
                   {"pg": [{"name": "w", "replay_lag_s": 0.01, "lag_bytes": 4096}], "grafton": None}]
        s = scale.lag_summary(samples)
        self.assertEqual(s["pg_replay_lag_s"], {"n": 3, "median": 0.01, "max": 0.02})
        self.assertEqual(s["pg_lag_bytes"], {"n": 3, "median": 4096, "max": 8192})
        self.assertEqual(s["grafton_lag_s"], {"n": 2, "median": 0.25, "max": 0.5})
        self.assertEqual(scale.lag_summary([])["grafton_lag_bytes"], {"n": 0, "median": None, "max": None})

    def test_classify(self):
        self.assertEqual(scale.classify(200, b'{"data":{"venues":[]}}'), "ok")
        self.assertEqual(scale.classify(503, b'{"data":null,"errors":[{"message":"x","extensions":'
                                              b'{"code":"database-unavailable"}}]}'), "database-unavailable")
        self.assertEqual(scale.classify(200, b'{"data":null,"errors":[{"message":"x"}]}'), "http_200")
        self.assertEqual(scale.classify(502, b"<html>bad gateway</html>"), "http_502")
        self.assertEqual(scale.classify(None, None), "transport")


class RecoveryTest(unittest.TestCase):
    # The restart is issued at 10.0; the database refuses from 10.05 to 10.8; Grafton
    # answers 503 meanwhile and its first 200 after comes at 11.1.
    def timeline(self):
        polls = [(9.99, True), (10.02, True), (10.05, False), (10.5, False), (10.8, True), (10.9, True)]
        records = [(9.9, 9.95, "ok"), (10.0, 10.03, "ok"), (10.1, 10.11, "database-unavailable"),
                   (10.2, 10.21, "database-unavailable"), (10.3, 20.3, "hung"), (10.85, 10.9, "database-unavailable"),
                   (11.0, 11.1, "ok"), (11.2, 11.25, "ok")]
        return records, polls

    def test_times_and_counts(self):
        records, polls = self.timeline()
        r = scale.recovery(records, polls, 10.0, 10.95, alive=True)
        self.assertAlmostEqual(r["db_down_s"], 0.75)
        self.assertAlmostEqual(r["recovery_s"], 0.3)
        self.assertAlmostEqual(r["grafton_gap_s"], 11.1 - 10.03)
        self.assertAlmostEqual(r["restart_s"], 0.95)
        self.assertEqual((r["hung"], r["unavailable_503"], r["requests"]), (1, 3, 8))
        self.assertTrue(r["down_seen"] and r["recovered"] and r["alive"])

    def test_down_never_seen_uses_pg_ctl(self):
        records, _ = self.timeline()
        r = scale.recovery(records, [(10.01, True), (11.5, True)], 10.0, 11.0)
        self.assertIsNone(r["db_down_s"])
        self.assertAlmostEqual(r["recovery_s"], 0.1)
        self.assertFalse(r["down_seen"])

    def test_never_recovered(self):
        records, polls = self.timeline()
        r = scale.recovery(records[:6], polls, 10.0, 10.95, alive=False)
        self.assertIsNone(r["recovery_s"])
        self.assertFalse(r["recovered"])
        s = scale.recovery_summary([r])
        self.assertEqual((s["verdict_recovery"], s["verdict_crashes"], s["verdict_hung"]),
                         ("missed", "missed", "missed"))

    def test_summary(self):
        trials = [{"recovery_s": x, "recovered": True, "alive": True, "hung": 0, "unavailable_503": n}
                  for x, n in ((0.4, 10), (1.2, 30), (0.6, 20))]
        s = scale.recovery_summary(trials)
        self.assertEqual(s["recovery_s"], {"n": 3, "median": 0.6, "max": 1.2})
        self.assertEqual((s["unavailable_503"], s["crashes"], s["hung"]), (60, 0, 0))
        self.assertEqual((s["verdict_recovery"], s["verdict_hung"], s["verdict_crashes"]), ("met", "met", "met"))
        trials[1]["recovery_s"] = 2.5
        self.assertEqual(scale.recovery_summary(trials)["verdict_recovery"], "missed")


def fake_runs():
    runs = []
    for rnd, (a, b, c) in enumerate(((10000, 9500, 9300), (10200, 9600, 9700), (9800, 9400, 9000))):
        for v, rps in zip(scale.VARIANTS, (a, b, c)):
            runs.append({"variant": v, "round": rnd + 1, "query": "venues", "level": 50, "ok_rps": rps,
                         "p95": 10.0 if v == "direct" else 11.0, "p50": 4.0, "failed_rate": 0.0,
                         "grafton_us": 100.0, "db_us": 60.0, "client_us": 25.0, "busy_us": 200.0, "busy_share": 0.97,
                         "haproxy_us": None if v == "direct" else 30.0,
                         "instance_share": [0.52, 0.48] if v == "lb2" else [1.0]})
    runs.append({"variant": "lb2", "round": 4, "query": "venues", "level": 50, "error": "loadgen failed"})
    return runs


class SummaryTest(unittest.TestCase):
    def test_medians_ratios_target_model(self):
        (row,) = scale.summarise(fake_runs(), scale.VARIANTS)
        self.assertEqual((row["direct"]["rps"], row["lb1"]["rps"], row["lb2"]["rps"]), (10000, 9500, 9300))
        self.assertEqual(row["lb2"]["runs"], 3)  # the failed run is left out
        self.assertAlmostEqual(row["lb2_ratio"], 0.93)
        self.assertAlmostEqual(row["lb2_p95_ratio"], 1.1)
        t = scale.two_over_one([row])
        self.assertEqual((t["verdict"], t["worst"]), ("missed", 0.93))
        (m,) = scale.model_rows([row], 2)
        # 2 cores / (100 + 60 + 25 µs) for one; + 30 µs of HAProxy for two.
        self.assertAlmostEqual(m["one"]["rps"], 2 / 185e-6)
        self.assertAlmostEqual(m["two"]["rps"], 2 / 215e-6)
        self.assertEqual(m["two"]["bound"], "shared")
        # Separate machines: 2 × 2 cores / 100 µs of Grafton, 2 cores / 60 µs of PostgreSQL.
        self.assertEqual(m["two_separate"]["bound"], "database")
        self.assertAlmostEqual(m["two_separate"]["rps"], 2 / 60e-6)
        self.assertEqual(scale.per_request_us(100, 100, 1000), 1000.0)
        self.assertIsNone(scale.per_request_us(None, 100, 1000))


def fake_results():
    runs = fake_runs()
    summary = scale.summarise(runs, scale.VARIANTS)
    rec = [{"round": 1, "db_down_s": 0.7, "recovery_s": 0.3, "grafton_gap_s": 1.0, "requests": 900, "hung": 0,
            "unavailable_503": 12, "outcomes": {"ok": 880, "database-unavailable": 12, "transport": 8},
            "alive": True, "recovered": True},
           {"round": 2, "error": "Grafton PG did not start: boom"}]
    lag = {"rate": 100, "reads_on": "primary + 1 streaming replica (--read-replica-url)", "clients": 50,
           "queries": ["venues"], "duration_s": 10, "sample_s": 1.0, "samples": 12, "rows": 1100,
           "write_span_s": 11.0, "achieved_rate": 100.0, "writer": "INSERTs piped into psql",
           "summary": scale.lag_summary([{"pg": [{"name": "w", "replay_lag_s": 0.002, "lag_bytes": 512}],
                                          "grafton": {"r": {"seconds": 0.0, "bytes": 0}}}]),
           "reads": {"venues": {"ok_rps": 5000.0, "p95": 20.0}}}
    rruns = [dict(r, variant="primary" if r["variant"] == "direct" else "replica", replica_reads=r.get("ok_rps"),
                  requests=r.get("ok_rps")) for r in runs if r["variant"] in ("direct", "lb2") and not r.get("error")]
    return {"mode": "full", "command": "bench/run --scenarios scale --systems grafton", "pool": 20,
            "systems": [{"id": "grafton", "label": "Grafton PG"}], "scenarios": ["scale"],
            "scale": {"status": "ok", "cores": 2, "pool": 20, "limit": 50, "duration_s": 8, "rounds": 3,
                      "client": "bench/loadgen --mode closed", "db_cpu": "PostgreSQL's CPU: from /proc",
                      "haproxy": "HAProxy version 2.6.12", "config": {"lb1": "config/haproxy-lb1.cfg"},
                      "unavailable": [{"part": "replica", "reason": "no flag"}],
                      "balance": {"runs": runs, "summary": summary, "target": scale.two_over_one(summary),
                                  "model": scale.model_rows(summary, 2)},
                      "replica": {"status": "ok", "replica": "127.0.0.1:5433/meetup", "runs": rruns,
                                  "summary": scale.summarise(rruns, scale.REPLICA_VARIANTS), "lag": lag},
                      "recovery": {"clients": 8, "interval_s": 0.02, "timeout_s": 10.0, "query": "venues",
                                   "restart": "pg_ctl restart -m fast -w", "poll": "pg_isready -h 127.0.0.1", "poll_s": 0.01,
                                   "target_s": 2.0, "trials": rec, "summary": scale.recovery_summary(rec[:1])}}}


class ReportTest(unittest.TestCase):
    def test_section(self):
        md = report_scale.scale_section(fake_results())
        self.assertIn("Everything shares this machine's 2 cores", md)
        self.assertIn("bench/run --scenarios scale --systems grafton", md)
        self.assertIn("keeps the suite's pool (20 connections)", md)
        self.assertIn("| venues | 50 | 10,000 | 10.0 | 9,500 | 11.0 | 9,300 | 11.0 | 0.950 | 0.930 |", md)
        self.assertIn("worst two / one 0.930 → **missed**", md)
        self.assertIn("(the shared cores)", md)
        self.assertIn("| PostgreSQL replay_lag | 2.0 ms | 2.0 ms | 1 |", md)
        self.assertIn("| 1 | 0.700 | 0.300 | 1.000 | 900 | 0 | 12 | transport 8 | yes |", md)
        self.assertIn("Grafton PG did not start: boom", md)
        self.assertIn("`pg_isready -h 127.0.0.1` every 10 ms times the database", md)
        self.assertIn("reads answered by the replica", md)
        self.assertIn("over 3 runs, range 0.52–0.52): B 0.52, C 0.48.", md)
        self.assertIn("100.0%", md)

    def test_in_the_summary_and_targets(self):
        md = report.render(fake_results())
        self.assertIn("## Scale-out (scale)", md)
        self.assertIn("two instances behind HAProxy within 5% of one", md)
        self.assertIn("recovery after a PostgreSQL restart < 2 s | median 0.300 s, max 0.300 s over 1 | met", md)

    def test_skipped_and_absent(self):
        self.assertEqual(report_scale.scale_section({}), "")
        md = report_scale.scale_section({"scale": {"status": "skipped: needs Grafton PG"}})
        self.assertIn("skipped: needs Grafton PG", md)
        self.assertEqual(report_scale.scale_targets({}), [])


class PlanTest(unittest.TestCase):
    def cfg(self, **kw):
        c = plan.full()
        c.scenarios, c.systems = ["scale"], ["grafton"]
        c.__dict__.update(kw)
        return c

    def test_steps(self):
        labels = [s.label for s in fake_env.steps(self.cfg()) if s.scenario == "scale"]
        runs = 3 * 3 * 2  # rounds × queries × levels
        self.assertEqual(sum(1 for x in labels if "round" in x), runs * (len(scale.VARIANTS) +
                                                                       len(scale.REPLICA_VARIANTS)))
        self.assertEqual(sum(1 for x in labels if x.startswith("recovery")), 3)
        setup = [s.label for s in fake_env.steps(self.cfg()) if s.scenario == "setup"]
        self.assertTrue(any("load client" in x for x in setup))
        self.assertFalse(any("HAProxy" in x for x in setup))

    def test_installs_haproxy_when_missing(self):
        import runner
        b = runner.Bench(self.cfg(), fake_env.env(haproxy=None), "/nonexistent", [])
        self.assertTrue(any("install HAProxy" in s.label for s in b.steps()))

    def test_skipped_without_grafton(self):
        st = [s for s in fake_env.steps(self.cfg(systems=["sqlite"])) if s.scenario == "scale"]
        self.assertEqual(len(st), 1)
        self.assertIn("skipped", st[0].label)


if __name__ == "__main__":
    unittest.main()
