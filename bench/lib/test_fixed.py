import unittest

import fixed


def run(rps, p95, failed=0.0, rnd=1, **kw):
    return {"system": "grafton", "query": "venues", "vus": 10, "round": rnd, "rps": rps, "p50": p95 / 2,
            "p95": p95, "failed_rate": failed, **kw}


class MedianRow(unittest.TestCase):
    def test_throughput_is_the_median_round_and_latencies_are_medians(self):
        rows = [run(1000, 30, rnd=1), run(1200, 10, rnd=2), run(900, 20, rnd=3)]
        m = fixed.median_row(rows)
        self.assertEqual((m["rps"], m["p95"], m["p50"], m["rounds"]), (1000, 20, 10, 3))
        self.assertEqual(m["rps_range"], [900, 1200])
        self.assertNotIn("round", m)

    def test_the_median_is_by_answered_requests(self):
        # The fastest round refused most requests: it ranks lowest.
        rows = [run(5000, 5, failed=0.9), run(1000, 10), run(1100, 10)]
        m = fixed.median_row(rows)
        self.assertEqual((m["rps"], m["failed_rate"]), (1000, 0.0))

    def test_a_failed_round_is_left_out_unless_all_failed(self):
        rows = [run(1000, 10), {"system": "grafton", "query": "venues", "vus": 10, "error": "loadgen failed"}]
        self.assertEqual((fixed.median_row(rows)["rps"], fixed.median_row(rows)["rounds"]), (1000, 1))
        only = fixed.median_row(rows[1:])
        self.assertEqual((only["error"], only["rounds"]), ("loadgen failed", 0))

    def test_index_groups_by_system_query_and_level(self):
        runs = [run(1000, 10), run(2000, 10, rnd=2), {**run(50, 1), "vus": 1}]
        idx = fixed.index(runs)
        self.assertEqual(sorted(idx), [("grafton", "venues", 1), ("grafton", "venues", 10)])
        self.assertEqual(idx[("grafton", "venues", 10)]["rounds"], 2)


class CeilingIndex(unittest.TestCase):
    def test_medians_per_query_and_level_and_ratios_from_them(self):
        def c(q, vus, tps, best, g, rnd):
            return {"query": q, "vus": vus, "round": rnd, "tps": tps, "best_tps": best, "grafton_rps": g,
                    "latency_avg_ms": 1000 * vus / tps}
        runs = [c("venues", 10, 9000, 10000, 8000, 1), c("complex_filter", 10, 140, 141, 130, 1),
                c("venues", 10, 9500, 11000, 8000, 2), c("venues", 10, 7000, 12000, 8000, 3)]
        rows = fixed.ceiling_index(runs)
        self.assertEqual([(r["query"], r["rounds"]) for r in rows], [("venues", 3), ("complex_filter", 1)])
        v = rows[0]
        self.assertEqual((v["tps"], v["best_tps"], v["grafton_rps"], v["tps_range"]), (9000, 11000, 8000, [7000, 9500]))
        self.assertAlmostEqual(v["fraction_best"], 8000 / 11000)
        self.assertAlmostEqual(v["sql_quality"], 9000 / 11000)
        self.assertAlmostEqual(v["fraction"], 8000 / 9000)
        self.assertNotIn("tps_range", rows[1])

    def test_missing_best_sql_leaves_its_ratios_empty(self):
        rows = fixed.ceiling_index([{"query": "venues", "vus": 1, "tps": 100, "grafton_rps": 50}])
        self.assertEqual((rows[0]["best_tps"], rows[0]["fraction_best"], rows[0]["fraction"]), (None, None, 0.5))


if __name__ == "__main__":
    unittest.main()
