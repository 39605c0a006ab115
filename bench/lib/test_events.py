"""Tests of the events scenario's pure parts (bench/lib/events.py, report_events.py) and its plan."""

import unittest

from fake_env import steps

import events as ev
import plan
import report
import report_events

RECEIPTS = (
    "a 7 2026-11-26T08:00:00.000000Z 1795680000010.500\n"
    "b 7 2026-11-26T08:00:00.500000Z 1795680000520.000\n"
    "a 7 2026-11-26T08:00:00.000000Z 1795680005000.000\n"  # a again: a duplicate, later
    "c 8 2026-11-26T08:00:01.000000Z 1795680001002.000\n"
    "garbage line\n"
    "- - - 1795680001003.000\n"  # a call whose body was not an event
)


class ReceiptsTest(unittest.TestCase):
    def test_created_at_is_utc(self):
        self.assertEqual(ev.parse_created_at("2026-11-26T08:00:00.250000Z"), 1795680000.25)
        self.assertEqual(ev.parse_created_at("2026-11-26T08:00:00Z"), 1795680000.0)
        with self.assertRaises(ValueError):
            ev.parse_created_at("-")

    def test_lines_parse(self):
        rec = ev.parse_receipts(RECEIPTS)
        self.assertEqual(len(rec), 5)
        self.assertEqual(rec[0], ("a", "7", 1795680000.0, 1795680000.0105))
        self.assertEqual(rec[-1][:3], ("-", "-", None))

    def test_latency_takes_each_events_first_call_of_its_run(self):
        lat = ev.latency_ms(ev.parse_receipts(RECEIPTS), 7)
        self.assertEqual(lat["n"], 2)
        self.assertEqual((lat["p50"], lat["max"]), (15.2, 20.0))  # 10.5 and 20 ms; a's second call not counted
        self.assertEqual(ev.latency_ms([], 1), {"n": 0, "p50": None, "p95": None, "p99": None, "max": None})

    def test_losses_and_duplicates(self):
        rec = ev.parse_receipts(RECEIPTS)
        self.assertEqual(ev.delivery_counts(rec, 7, 3),
                         {"inserted": 3, "received": 2, "calls": 3, "duplicates": 1, "lost": 1})
        self.assertEqual(ev.delivery_counts(rec, "8", 1)["lost"], 0)


class NumbersTest(unittest.TestCase):
    def test_percentile_interpolates(self):
        xs = list(range(1, 101))
        self.assertEqual(ev.percentile(xs, 50), 50.5)
        self.assertAlmostEqual(ev.percentile(xs, 95), 95.05)
        self.assertEqual(ev.percentile(xs, 100), 100)
        self.assertEqual(ev.percentile([3.0], 99), 3.0)
        self.assertEqual(ev.percentile([5, 1], 0), 1)
        self.assertIsNone(ev.percentile([], 50))

    def test_stats(self):
        self.assertEqual(ev.stats([3, None, 1, 2]), {"n": 3, "median": 2, "min": 1, "max": 3})
        self.assertIsNone(ev.stats([None]))

    def test_throughput_summary_per_kind(self):
        runs = [{"kind": "one", "events_per_s": x, "cpu_s_per_1000": 0.05, "insert_per_s": 9000} for x in (5000, 6000, 7000)]
        runs += [{"kind": "batch", "error": "pgbench exit 1"}]
        (s,) = ev.throughput_summary(runs)
        self.assertEqual((s["kind"], s["events_per_s"]["median"], s["events_per_s"]["n"]), ("one", 6000, 3))

    def test_writer_ratios(self):
        runs = [{"variant": "off", "round": 1, "tps": 10000}, {"variant": "on", "round": 1, "tps": 7000},
                {"variant": "held", "round": 1, "tps": 9000}, {"variant": "off", "round": 2, "tps": 12000},
                {"variant": "on", "round": 2, "tps": 9000}, {"variant": "held", "round": 2, "tps": None}]
        s = ev.writer_summary(runs)
        self.assertAlmostEqual(s["on_ratio"], 8000 / 11000)
        self.assertEqual(s["on_round_ratios"], [0.7, 0.75])
        self.assertAlmostEqual(s["held_ratio"], 9000 / 11000)
        self.assertEqual(s["held_round_ratios"], [0.9])
        self.assertIsNone(s["drain_events_per_s"])
        runs[2]["drain_events_per_s"] = 6000.0
        self.assertEqual(ev.writer_summary(runs)["drain_events_per_s"]["median"], 6000.0)

    def test_latency_summary(self):
        runs = [{"achieved_rate": 990 + i, "webhook": {"p50": 5, "p95": 10 * (i + 1), "p99": 50, "max": 90},
                 "log": {"p50": 8, "p95": 20, "p99": 60}, "cpu_s_per_1000": 0.1} for i in range(3)]
        s = ev.latency_summary(runs + [{"error": "x", "webhook": {"p95": 1}}])
        self.assertEqual((s["rounds"], s["webhook_p95"]["median"], s["webhook_p95"]["max"]), (3, 20, 30))
        self.assertEqual(s["rate"]["median"], 991)
        self.assertIsNone(ev.latency_summary([]))

    def test_cleanup_bound(self):
        below = ev.cleanup_bound(1000.0, 100, 36)
        self.assertTrue(below["bounded"])
        self.assertEqual(below["cleanup_max_rate"], 333.3)
        self.assertEqual(below["max_events"], 100 * (36 + 300))
        self.assertEqual(below["max_bytes"], 100 * 336 * 1000)
        above = ev.cleanup_bound(1000.0, 1000, 36)
        self.assertFalse(above["bounded"])
        self.assertEqual(above["growth_events_per_s"], 666.7)
        self.assertNotIn("max_events", above)
        self.assertIsNone(ev.cleanup_bound(None, 10, 36)["max_bytes"])

    def test_cleanup_lines(self):
        log = ("2026-11-26T08:00:00Z  INFO grafton_events::cleanup: event log cleaned up deleted=100000\n"
               "\x1b[2m2026\x1b[0m INFO event log cleaned up \x1b[3mdeleted\x1b[0m\x1b[2m=\x1b[0m2500\nother\n")
        self.assertEqual(ev.cleaned_counts(log), [100000, 2500])
        self.assertEqual(ev.cleaned_counts("nothing"), [])


class CpuTest(unittest.TestCase):
    def test_split(self):
        # /proc/stat: user nice system idle iowait irq softirq steal; 100 ticks a second
        c0 = {"grafton": 100, "postgres": 1000, "webhook": 50, "client": 2.0, "machine": [0, 0, 0, 0, 0, 0, 0, 0]}
        c1 = {"grafton": 150, "postgres": 1200, "webhook": 80, "client": 2.5,
              "machine": [300, 0, 100, 150, 50, 0, 0, 0]}
        s = ev.cpu_split(c0, c1, 100, 1000)
        self.assertEqual((s["grafton"], s["postgres"], s["webhook"], s["client"]), (0.5, 2.0, 0.3, 0.5))
        self.assertEqual((s["busy"], s["busy_share"]), (4.0, round(400 / 600, 3)))
        self.assertAlmostEqual(s["other"], 0.7)
        self.assertIsNone(ev.cpu_split(c0, {**c1, "machine": None}, 100, 1000))
        gone = ev.cpu_split(c0, {**c1, "webhook": None}, 100, 1000)
        self.assertIsNone(gone["webhook"])
        self.assertAlmostEqual(gone["other"], 1.0)

    def test_summary_and_table(self):
        runs = [{"cpu": {"grafton": g, "postgres": 0.1, "webhook": 0.05, "client": 0.02, "other": 0.01,
                         "busy": 0.3, "busy_share": 0.9}} for g in (0.06, 0.07, 0.05)] + [{"cpu": None}]
        s = ev.cpu_summary(runs)
        self.assertEqual((s["grafton"], s["busy_share"]), (0.06, 0.9))
        self.assertIsNone(ev.cpu_summary([{}]))
        text = report_events.cpu_table([("single-row inserts", s), ("none", None)])
        self.assertIn("| single-row inserts | 0.060 | 0.100 | 0.050 | 0.020 | 0.010 | 0.300 | 90% |", text)
        self.assertEqual(report_events.cpu_table([]), "")


class CommandsTest(unittest.TestCase):
    def test_scripts_tag_the_run(self):
        self.assertIn("VALUES (:run, 12.5, 'order')", ev.script("one"))
        self.assertIn("generate_series(1, 100)", ev.script("batch"))
        self.assertIn(ev.PLAIN, ev.script("one", ev.PLAIN))
        self.assertIn(f"CREATE TABLE {ev.PLAIN} (id bigserial", ev.tables_sql())

    def test_pgbench_lines(self):
        one = ev.throughput_argv("pgbench", "url", "one.sql", "one", 50_000, 3)
        self.assertEqual(one[one.index("-t") + 1], str(50_000 // ev.THROUGHPUT_CLIENTS["one"]))
        self.assertIn("run=3", one)
        batch = ev.throughput_argv("pgbench", "url", "b.sql", "batch", 1_000_000, 4)
        self.assertEqual(int(batch[batch.index("-t") + 1]) * ev.THROUGHPUT_CLIENTS["batch"] * ev.BATCH, 1_000_000)
        paced = ev.paced_argv("pgbench", "url", "one.sql", 30, 5)
        self.assertEqual((paced[paced.index("-R") + 1], paced[paced.index("-T") + 1]), ("1000", "30"))
        self.assertEqual(ev.writer_argv("pgbench", "url", "p.sql", 10, 6)[-1], "url")

    def test_trigger_has_retries(self):
        t = ev.trigger_request("http://127.0.0.1:9/")
        self.assertEqual(t["type"], "pg_create_event_trigger")
        self.assertEqual((t["args"]["table"], t["args"]["insert"]), (ev.TABLE, {"columns": "*"}))
        self.assertGreater(t["args"]["retry_conf"]["num_retries"] * t["args"]["retry_conf"]["interval_sec"],
                           ev.DOWN_S)

    def test_orders_alternate(self):
        self.assertEqual(ev.throughput_order(3), [(0, "one"), (0, "batch"), (1, "batch"), (1, "one"),
                                                  (2, "one"), (2, "batch")])
        order = ev.writer_order(3)
        self.assertEqual([v for r, v in order if r == 0], ["off", "on", "held"])
        self.assertEqual([v for r, v in order if r == 1], ["on", "held", "off"])
        self.assertEqual(len(order), 9)


def results(**over):
    e = {"status": "ok", "rate": 1000, "rounds": 3, "cores": 2, "database": ev.DATABASE, "table": ev.TABLE,
         "throughput_events": 50_000, "clients": dict(ev.THROUGHPUT_CLIENTS),
         "throughput": [{"kind": "one", "events_per_s": 6000}],
         "throughput_summary": [{"kind": k, "events_per_s": {"n": 3, "median": m, "min": m - 100, "max": m + 100},
                                 "cpu_s_per_1000": {"n": 3, "median": 0.05, "min": 0.04, "max": 0.06},
                                 "insert_per_s": {"n": 1, "median": 9000, "min": 9000, "max": 9000}}
                                for k, m in (("one", 5500), ("batch", 7000))],
         "latency": [{"round": 1, "achieved_rate": 998, "events": 30000, "webhook": {"p50": 4, "p95": 12, "p99": 30,
                                                                                   "max": 80},
                      "log": {"p50": 6, "p95": 15, "p99": 35}, "cpu_s_per_1000": 0.1}],
         "latency_summary": {"rounds": 1, "rate": {"n": 1, "median": 998, "min": 998, "max": 998},
                             "webhook_p95": {"n": 1, "median": 12, "min": 12, "max": 12}},
         "writer": [{"variant": "off", "round": 1, "tps": 10000}],
         "writer_summary": {"variants": {"off": {"n": 1, "median": 10000, "min": 10000, "max": 10000}},
                            "on_ratio": 0.75, "held_ratio": 0.9, "on_round_ratios": [0.75]},
         "kill": [{"trial": 1, "inserted": 24000, "received": 24000, "lost": 0, "duplicates": 87, "dead": 0,
                   "all_delivered_after_kill_s": 21.5, "webhook": {"max": 20500}}],
         "webhook_down": [{"trial": 1, "inserted": 24000, "received": 24000, "lost": 0, "duplicates": 3, "dead": 0,
                           "all_delivered_after_back_s": 5.2, "webhook": {"max": 15000}}],
         "log_size": {"events": 1_000_000, "delivered": 1_000_000, "flags": "--events-retention-hours 0.01",
                      "events_per_s": 6000, "cleanup_interval_s": 300, "cleanup_per_pass": 100_000,
                      "before": {"event_log_rows": 0, "invocation_log_rows": 0, "total_bytes": 16384},
                      "after_delivery": {"event_log_rows": 1_000_000, "invocation_log_rows": 1_000_000,
                                         "total_bytes": 1_500_000_000, "event_log_bytes": 500_000_000,
                                         "invocation_logs_bytes": 1_000_000_000},
                      "passes": [{"pass": 1, "deleted": 100_000, "seconds_from_start": 3.2,
                                  "event_log_rows": 900_000, "invocation_log_rows": 900_000,
                                  "total_bytes": 1_500_000_000}],
                      "bytes_per_event": 1500.0,
                      "bounds": [ev.cleanup_bound(1500.0, 1000, 36), ev.cleanup_bound(1500.0, 100, 36)]}}
    e.update(over)
    return {"events": e}


class ReportTest(unittest.TestCase):
    def test_verdicts(self):
        v = ev.run_verdicts(results()["events"])
        self.assertEqual(v, {"throughput": "met", "latency": "met", "writer": "missed", "nothing_lost": "met"})
        lost = results(kill=[{"lost": 2, "dead": 0}])["events"]
        self.assertEqual(ev.run_verdicts(lost)["nothing_lost"], "missed")
        self.assertEqual(ev.run_verdicts({})["throughput"], "n/a")

    def test_section_shows_every_part(self):
        text = report_events.events_section(results())
        for part in ("### Throughput", "### Latency at 1,000 events/s", "### The writer's cost", "### Nothing lost",
                     "### The log's size"):
            self.assertIn(part, text)
        self.assertIn("| single-row inserts | 5,500 (5,400–5,600) |", text)
        self.assertIn("after clean-up pass 1 (100,000 deleted", text)
        self.assertIn("grows 667 events/s, 86.4 GB a day", text)
        self.assertIn("| SIGKILL of Grafton | 1 | 24,000 | 24,000 | 0 | 87 |", text)
        self.assertEqual(report_events.events_section({}), "")
        self.assertIn("skipped", report_events.events_section({"events": {"status": "skipped: needs Grafton PG"}}))

    def test_targets_in_the_summary(self):
        rows = report_events.events_targets(results())
        self.assertEqual([r[2] for r in rows], ["met", "met", "**missed**", "met"])
        self.assertIn("0.75× (Grafton delivering); 0.90× with Grafton stopped", rows[2][1])
        whole = report.render({**results(), "systems": [{"id": "grafton"}]})
        self.assertIn("## Event triggers", whole)
        self.assertIn("events: nothing lost", whole)

    def test_spread(self):
        self.assertEqual(report_events.spread({"n": 1, "median": 5, "min": 5, "max": 5}), "5")
        self.assertEqual(report_events.spread({"n": 3, "median": 0.05, "min": 0.04, "max": 0.06}, 3, " s"),
                         "0.050 s (0.040 s–0.060 s)")
        self.assertEqual(report_events.spread(None), "—")


class PlanTest(unittest.TestCase):
    def test_events_come_before_scale(self):
        kinds = list(dict.fromkeys(s.scenario for s in steps(plan.full())))
        self.assertEqual(kinds[-4:], ["events", "remote", "scale", "report"])

    def test_time_budget(self):
        for cfg, limit in ((plan.full(), 25 * 60), (plan.quick(), 6 * 60)):
            e = [s for s in steps(cfg) if s.scenario == "events"]
            self.assertLessEqual(sum(s.est_s for s in e), limit, cfg.mode)
            self.assertEqual(len(e), 1 + 2 * cfg.events_rounds + cfg.events_rounds + 3 * cfg.events_rounds
                             + 2 * cfg.events_trials + 2)

    def test_skipped_without_grafton(self):
        cfg = plan.quick()
        cfg.scenarios, cfg.systems = ["events"], ["postgraphile"]
        e = [s for s in steps(cfg) if s.scenario == "events"]
        self.assertEqual(len(e), 1)
        self.assertIn("skipped", e[0].label)

    def test_trials_outlast_the_outage(self):
        for cfg in (plan.full(), plan.quick()):
            self.assertGreater(cfg.events_trial_s, ev.KILL_AT_S + ev.DOWN_S)

class StatsDelta(unittest.TestCase):
    def test_counters_move_and_dead_rows_are_a_level(self):
        before = {"event_log": {"seq_scan": 2, "seq_tup_read": 100, "n_dead_tup": 50, "n_tup_upd": 10}}
        after = {"event_log": {"seq_scan": 5, "seq_tup_read": 400, "n_dead_tup": 70, "n_tup_upd": 30},
                 "database": {"xact_commit": 9, "tup_returned": 12}}
        d = ev.stats_delta(before, after)
        self.assertEqual(d["event_log"], {"seq_scan": 3, "seq_tup_read": 300, "n_dead_tup": 70, "n_tup_upd": 20})
        self.assertEqual(d["database"], {"xact_commit": 9, "tup_returned": 12})
        text = ev.stats_text(d)
        self.assertIn("3 seq scans reading 300 rows", text)
        self.assertIn("70 dead after", text)


if __name__ == "__main__":
    unittest.main()
