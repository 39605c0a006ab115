import unittest
import xml.etree.ElementTree as ET

import capacity as cap
import report
import report_writes


def fixed_run(system, query, vus, rps, p95):
    return {"system": system, "query": query, "vus": vus, "rps": rps, "requests": int(rps * 10),
            "failed_rate": 0, "p50": p95 / 3, "p75": p95 / 2, "p90": p95 * 0.8, "p95": p95, "p99": p95 * 1.5}


def write_run(system, write, vus, rps, p95, rows_per_request=1, failed_rate=0):
    return {"system": system, "write": write, "vus": vus, "rps": rps, "rows_per_s": rps * rows_per_request,
            "rows": int(rps * rows_per_request * 8), "rows_per_request": rows_per_request,
            "requests": int(rps * 8), "failed_rate": failed_rate, "p50": p95 / 3, "p95": p95, "p99": p95 * 1.5}


RESULTS = {
    "mode": "full", "command": "bench/run", "started_utc": "2026-11-22 11:15 UTC", "rows": 100000,
    "limit": 50, "pool": 20, "duration_s": 3725,
    "systems": [{"id": "grafton"}, {"id": "postgraphile"}, {"id": "sqlite"}],
    "machine": {"cores": 2, "cpu_model": "Xeon", "mem_total_mb": 24064, "os": "Linux",
                "load_start": [1.0, 2.0, 3.0], "load_end": [4.0, 5.0, 6.0]},
    "versions": {"grafton": "commit abc", "k6": "k6 v1.8.1"},
    "fixed": {"levels": [1, 10, 50], "queries": ["venues"], "duration_s": 10, "runs": [
        fixed_run("grafton", "venues", 1, 800, 3), fixed_run("postgraphile", "venues", 1, 400, 6),
        fixed_run("grafton", "venues", 10, 2000, 12), fixed_run("postgraphile", "venues", 10, 500, 30),
        fixed_run("sqlite", "venues", 10, 4000, 5),
        fixed_run("grafton", "venues", 50, 2100, 50), fixed_run("postgraphile", "venues", 50, 600, 110),
        {"system": "sqlite", "query": "venues", "vus": 50, "error": "k6 failed"},
    ]},
    "capacity": {"ramp_s": 30, "hold_s": 30, "step": 200, "refine": 100, "max_vus": 3000, "budget_s": 1800,
                 "results": [
                     {"system": "grafton", "query": "venues", "limit": 50, "max_vus": 3000,
                      "stopped_by": cap.MAX_VUS, "best": {"p95": 40, "min": 0.5, "max": 300, "requests": 60000,
                                                          "rps": 1000},
                      "trials": [{"vus": 2800, "passed": True}, {"vus": 3000, "passed": True}]},
                     {"system": "postgraphile", "query": "venues", "limit": 50, "max_vus": 900,
                      "stopped_by": cap.THRESHOLD, "best": {"p95": 450, "min": 1, "max": 900, "requests": 20000,
                                                            "rps": 380},
                      "trials": [{"vus": 800, "passed": True}, {"vus": 1000, "passed": False},
                                 {"vus": 900, "passed": True}]},
                     {"system": "grafton", "query": "venue_meetups", "limit": 100, "max_vus": 600,
                      "stopped_by": cap.THRESHOLD, "best": {"p95": 480}, "trials": []},
                 ]},
    "memory": {"load_vus": 100, "load_queries": ["venues"], "systems": {
        "grafton": {"idle_kb": 9216, "load_kb": 34304, "peak_kb": 35000},
        "postgraphile": {"idle_kb": 95000, "load_kb": 213000, "peak_kb": 215000}}},
    "ceiling": {"status": "ok", "runs": [
        {"query": "venues", "vus": 10, "tps": 10000, "latency_avg_ms": 1.0, "grafton_rps": 2000, "fraction": 0.2},
        {"query": "venues", "vus": 50, "tps": 3000, "latency_avg_ms": 16.0, "grafton_rps": 2100,
         "fraction": 0.7}]},
    "writes": {"status": "ok", "writes": ["insert_one", "insert_batch_100"], "levels": [1, 10], "duration_s": 8,
               "warmup_s": 2, "batch": 100, "state": "after the read scenarios",
               "unavailable": [{"system": "sqlite", "write": "insert_batch_100",
                                "reason": "100% of the warm-up's requests failed: WRITE-FAILED x"}],
               "runs": [
                   write_run("grafton", "insert_one", 1, 900, 2), write_run("postgraphile", "insert_one", 1, 300, 5),
                   write_run("sqlite", "insert_one", 1, 1200, 1),
                   write_run("sqlite", "insert_one", 10, 1500, 9),
                   write_run("postgraphile", "insert_one", 10, 500, 30),
                   {"system": "grafton", "write": "insert_one", "vus": 10, "error": "k6 failed"},
                   write_run("grafton", "insert_batch_100", 1, 50, 30, 100),
                   write_run("postgraphile", "insert_batch_100", 1, 5, 300, 100),
                   # fast but failing: compared on the rows it wrote
                   {**write_run("grafton", "insert_batch_100", 10, 4000, 3, 100, failed_rate=0.9),
                    "rows_per_s": 40000, "first_failure": "WRITE-FAILED grafton insert_batch_100: affected_rows 99"},
                   write_run("postgraphile", "insert_batch_100", 10, 10, 900, 100),
               ]},
    "auth": {"status": "skipped: needs Grafton PG or Grafton SQLite among the systems"},
    "errors": ["fixed-sqlite-venues-50: k6 wrote no summary"],
}


class RenderTest(unittest.TestCase):
    def setUp(self):
        self.md = report.render(RESULTS)

    def row(self, *starts):
        """The first table row whose cells start with `starts`."""
        for line in self.md.splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if line.startswith("|") and cells[:len(starts)] == list(starts):
                return cells
        self.fail(f"no row {starts} in:\n{self.md}")

    def test_sections(self):
        for title in ("# Grafton benchmark, 2026-11-22 11:15 UTC (full)", "## Machine", "## Targets",
                      "## Throughput and latency at fixed concurrency", "### venues (seed, no nest)",
                      "## Capacity (the seed's test)", "## Memory", "## The ceiling", "## Writes",
                      "### Grafton / the fastest peer (rows/s)", "### insert_one", "### insert_batch_100",
                      "## Not yet measured",
                      "## Errors"):
            self.assertIn(title, self.md)
        self.assertIn("62m 05s", self.md)
        self.assertIn("![venues: throughput](charts/venues-throughput.svg)", self.md)
        self.assertIn("- auth: skipped: needs Grafton PG or Grafton SQLite among the systems", self.md)
        self.assertNotIn("## Auth", self.md)
        self.assertNotIn("- writes:", self.md)

    def test_fixed_table(self):
        header = self.row("VUs", "system")
        self.assertEqual(header, ["VUs", "system", "req/s", "×fastest peer", "p50", "p75", "p90", "p95", "p99",
                                  "failed"])
        self.assertEqual(self.row("10", "Grafton PG")[2:4], ["2,000", "4.00×"])
        self.assertEqual(self.row("10", "PostGraphile v4")[3], "")
        self.assertEqual(self.row("10", "Grafton SQLite")[3], "8.00×")
        self.assertEqual(self.row("10", "Grafton PG")[7], "12.0")
        self.assertEqual(self.row("50", "Grafton SQLite")[-1], "k6 failed")
        # every row of the table has as many cells as the header
        fixed = self.md[self.md.index("## Throughput"):self.md.index("## Capacity")]
        for line in fixed.splitlines():
            if line.startswith("| 1 |") or line.startswith("| 10 |"):
                self.assertEqual(len(line.strip("|").split("|")), 10, line)

    def test_capacity_table(self):
        g = self.row("venues", "50", "Grafton PG")
        self.assertEqual(g[3:9], ["3,000", "40.0", "0.50", "300", "60,000", "1,000"])
        self.assertIn("bound: max VUs reached", g[9])
        p = self.row("venues", "50", "PostGraphile v4")
        self.assertEqual(p[3], "900")
        self.assertEqual(p[9], "threshold failure (800✓, 1000✗, 900✓)")

    def test_targets(self):
        t = self.row("venues: ≥ 3× PostGraphile v4 req/s, lower p95 (limit 50)")
        self.assertEqual(t[1:], ["3.50–4.00× at 2 levels ≥ 10 VUs; p95 lower at 2/2", "met"])
        self.assertEqual(self.row("capacity venues limit 50 > 1900 VUs (Phrag)")[2], "met")
        self.assertEqual(self.row("capacity venue_meetups limit 100 > 900 VUs (Phrag)")[2], "**missed**")
        self.assertEqual(self.row("venues: Grafton ≥ ½ of pgbench on the same SQL")[1:],
                         ["0.20–0.70 at 2 levels", "**missed**"])
        self.assertEqual(self.row("Grafton RSS under the 100-VU load < 60 MB")[1:], ["33.5 MB", "met"])

    def test_every_peer_target_and_fastest_peer_ratio(self):
        self.assertEqual(self.row("venues: ahead of every peer at ≥ 10 VUs (answered req/s and p95, < 1% failed)")[1:],
                         ["3.50–4.00× over 2 peer × level pairs; p95 lower at 2/2", "met"])
        # A faster v5 becomes the reference of ×fastest peer, and a level it wins is a miss.
        runs = RESULTS["fixed"]["runs"] + [fixed_run("postgraphile5", "venues", 10, 1000, 20),
                                           fixed_run("postgraphile5", "venues", 50, 2500, 40)]
        results = {**RESULTS, "systems": RESULTS["systems"] + [{"id": "postgraphile5"}],
                   "fixed": {**RESULTS["fixed"], "runs": runs}}
        self.md = report.render(results)
        self.assertEqual(self.row("10", "Grafton PG")[2:4], ["2,000", "2.00×"])
        self.assertEqual(self.row("50", "Grafton PG")[2:4], ["2,100", "0.84×"])
        self.assertEqual(self.row("10", "PostGraphile v5")[3], "")
        self.assertEqual(self.row("venues: ahead of every peer at ≥ 10 VUs (answered req/s and p95, < 1% failed)")[1:],
                         ["0.84–4.00× over 4 peer × level pairs; p95 lower at 3/4", "**missed**"])
        self.assertIsNone(report.fastest_peer([None, {"error": "k6 failed"}]))
        # A Grafton run refusing most requests fast is not ahead: answered req/s count.
        runs = RESULTS["fixed"]["runs"] + [{**fixed_run("grafton", "venues", 200, 9000, 20), "failed_rate": 0.9},
                                           fixed_run("postgraphile", "venues", 200, 1000, 300)]
        results = {**RESULTS, "fixed": {**RESULTS["fixed"], "levels": [1, 10, 50, 200], "runs": runs}}
        self.md = report.render(results)
        self.assertEqual(self.row("200", "Grafton PG")[3], "0.90×")
        t = self.row("venues: ahead of every peer at ≥ 10 VUs (answered req/s and p95, < 1% failed)")
        self.assertIn("Grafton ≥ 1% failed at 200 VUs", t[1])
        self.assertEqual(t[2], "**missed**")

    def test_memory_and_ceiling(self):
        self.assertEqual(self.row("PostGraphile v4", "92.8 MB"), ["PostGraphile v4", "92.8 MB", "208.0 MB", "210.0 MB"])
        self.assertEqual(self.row("venues", "50", "3,000"),
                         ["venues", "50", "3,000", "16.0", "—", "—", "2,100", "0.70", "—"])
        # With the hand-written SQL measured too: its tps and both ratios.
        runs = [{**RESULTS["ceiling"]["runs"][1], "best_tps": 4000, "sql_quality": 0.75, "fraction_best": 0.525}]
        self.md = report.render({**RESULTS, "ceiling": {"status": "ok", "runs": runs,
                                                        "best_check": "same JSON as Grafton"}})
        self.assertEqual(self.row("venues", "50", "3,000"),
                         ["venues", "50", "3,000", "16.0", "4,000", "0.75", "2,100", "0.70", "0.53"])
        self.assertIn("checked it against Grafton's answers first: same JSON as Grafton", self.md)
        # The targets against the best SQL: 0.8 for the no-nest query, 0.9 for the others.
        runs.append({"query": "complex_filter", "vus": 10, "tps": 140, "best_tps": 142, "grafton_rps": 130,
                     "fraction": 0.93, "sql_quality": 0.99, "fraction_best": 0.915})
        self.md = report.render({**RESULTS, "ceiling": {"status": "ok", "runs": runs}})
        self.assertEqual(self.row("venues: Grafton ≥ 0.8 of pgbench on the best hand-written SQL (≥ 10 clients)"),
                         ["venues: Grafton ≥ 0.8 of pgbench on the best hand-written SQL (≥ 10 clients)",
                          "0.53 at 1 level", "**missed**"])
        self.assertEqual(self.row("complex_filter: Grafton ≥ 0.9 of pgbench on the best hand-written SQL "
                                  "(≥ 10 clients)")[1:], ["0.92 at 1 level", "met"])

    def test_waits_for_a_quiet_database_are_listed(self):
        self.assertNotIn("## Waits for a quiet database", self.md)
        md = report.render({**RESULTS, "settle": [
            {"run": "fixed-grafton-aggregate-1-r1", "waited_s": 42.25, "settled": True, "active": 0},
            {"run": "fixed-grafton-venues-10-r1", "waited_s": 180.0, "settled": False, "active": 7}]})
        w = md[md.index("## Waits for a quiet database"):]
        self.assertIn("- fixed-grafton-aggregate-1-r1: 42.2 s\n", w)
        self.assertIn("- fixed-grafton-venues-10-r1: 180.0 s, gave up with 7 still active", w)

    def test_writes_tables(self):
        w = self.md[self.md.index("## Writes"):]
        self.assertIn("100 aliased `createVenue` fields (one row per call, 100 calls in one request)", w)
        self.assertIn("- Grafton SQLite insert_batch_100: 100% of the warm-up's requests failed", w)
        self.assertEqual(self.row("write", "VUs"), ["write", "VUs", "Grafton PG ×fastest peer",
                                                    "Grafton SQLite ×fastest peer"])
        self.assertEqual(self.row("insert_one", "1"), ["insert_one", "1", "3.00×", "4.00×"])
        self.assertEqual(self.row("insert_one", "10"), ["insert_one", "10", "—", "3.00×"])
        self.assertEqual(self.row("insert_batch_100", "1"), ["insert_batch_100", "1", "10.00×", "not measured"])
        # 10% of 4000 req/s succeeded: 40,000 rows/s against 1,000 (not 400× as req/s would say)
        self.assertEqual(self.row("insert_batch_100", "10")[2], "40.00× (Grafton PG 90% failed)")
        header = ["VUs", "system", "req/s", "rows/s", "×fastest peer", "p50", "p95", "p99", "failed"]
        self.assertIn("| " + " | ".join(header) + " |", w)
        rows = [line for line in w.splitlines() if line.startswith("| 1 | Grafton PG |")]
        self.assertEqual(rows[0], "| 1 | Grafton PG | 900 | 900 | 3.00× | 0.67 | 2.00 | 3.00 | 0% |")
        self.assertEqual(rows[1], "| 1 | Grafton PG | 50.0 | 5,000 | 10.00× | 10.0 | 30.0 | 45.0 | 0% |")
        self.assertIn("| 10 | Grafton PG | — | — | — | — | — | — | k6 failed |", w)
        self.assertIn("| 10 | Grafton PG | 4,000 | 40,000 | 40.00× (Grafton PG 90% failed) | 1.00 | 3.00 | 4.50 | 90% |", w)
        self.assertIn("- Grafton PG at 10 VUs: WRITE-FAILED grafton insert_batch_100: affected_rows 99", w)
        self.assertIn("![insert_one: rows/s](charts/writes-insert_one-rows.svg)", w)

    def test_writes_placeholder_and_failures(self):
        md = report.render({"writes": {"status": "skipped: something"}})
        self.assertIn("- writes: skipped: something", md)
        self.assertNotIn("## Writes", md)
        self.assertEqual(report_writes.write_ratio({"rows_per_s": 10}, {"error": "k6 failed"}), "—")
        self.assertEqual(report_writes.write_ratio({"rows_per_s": 0}, {"rows_per_s": 10}), "—")

    def test_partial_results_render(self):
        md = report.render({"ceiling": {"status": "skipped: grafton sql not available"}})
        self.assertIn("skipped: grafton sql not available", md)
        self.assertNotIn("## Targets", md)
        report.render({})

    def test_table_alignment(self):
        t = report.table(["a", "n"], [["x", "1,234"], ["y", "—"]])
        self.assertEqual(t.splitlines()[1], "|---|---:|")


class ChartFilesTest(unittest.TestCase):
    def test_two_charts_per_query_well_formed(self):
        files = report.chart_files(RESULTS)
        self.assertEqual(sorted(files), ["venues-p95.svg", "venues-throughput.svg",
                                         "writes-insert_batch_100-p95.svg", "writes-insert_batch_100-rows.svg",
                                         "writes-insert_one-p95.svg", "writes-insert_one-rows.svg"])
        for svg in files.values():
            ET.fromstring(svg.encode())
        self.assertIn("pgbench (same SQL)", files["venues-throughput.svg"])
        self.assertIn("Grafton SQLite", files["venues-p95.svg"])
        self.assertIn("rows written per second", files["writes-insert_one-rows.svg"])


if __name__ == "__main__":
    unittest.main()
