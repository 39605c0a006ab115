import unittest

from fake_env import env, steps

import plan
import runner
import writes as wr

LOG = (
    'time="2026-11-22T13:04:56Z" level=error msg="WRITE-FAILED grafton insert_one: GraphQL errors; answer: '
    '{\\"errors\\":[{\\"message\\":\\"Cannot query field \\\\\\"insert_venues_one\\\\\\" on type '
    '\\\\\\"Mutation\\\\\\".\\"}]}" source=console\n'
    'time="2026-11-22T13:04:56Z" level=error msg="WRITE-FAILED grafton insert_one: second VU" source=console\n'
)


class RunOrderTest(unittest.TestCase):
    def test_alternates_per_level(self):
        order = wr.run_order(["insert_one", "update_by_pk"], [1, 10, 50], ["grafton", "postgraphile", "sqlite"])
        self.assertEqual(len(order), 2 * 3 * 3)
        self.assertEqual(order[:6], [("insert_one", 1, "grafton"), ("insert_one", 1, "postgraphile"),
                                     ("insert_one", 1, "sqlite"), ("insert_one", 10, "sqlite"),
                                     ("insert_one", 10, "postgraphile"), ("insert_one", 10, "grafton")])
        self.assertEqual(order[6:9], [("insert_one", 50, s) for s in ("grafton", "postgraphile", "sqlite")])
        self.assertEqual(order[9], ("update_by_pk", 1, "grafton"))

    def test_database(self):
        self.assertEqual([wr.database(s) for s in ("grafton", "postgraphile", "sqlite")],
                         ["postgres", "postgres", "sqlite"])


class ProbeTest(unittest.TestCase):
    def test_first_failure_unescapes(self):
        self.assertEqual(wr.first_failure(LOG),
                         'WRITE-FAILED grafton insert_one: GraphQL errors; answer: {"errors":[{"message":'
                         '"Cannot query field \\"insert_venues_one\\" on type \\"Mutation\\"."}]}')
        self.assertIsNone(wr.first_failure("running...\n"))
        long = 'msg="WRITE-FAILED ' + "x" * 1000 + '" source=console'
        self.assertEqual(len(wr.first_failure(long)), 401)

    def test_verdict(self):
        self.assertIsNone(wr.probe_verdict({"requests": 400, "failed_rate": 0}, ""))
        self.assertIsNone(wr.probe_verdict({"requests": 400, "failed_rate": 0.2}, LOG))  # measured, failures shown
        why = wr.probe_verdict({"requests": 5000, "failed_rate": 1}, LOG)
        self.assertTrue(why.startswith("100% of the warm-up's requests failed: WRITE-FAILED grafton insert_one"), why)
        self.assertEqual(wr.probe_verdict({"requests": 0, "failed_rate": 0}, ""), "no request completed")
        self.assertEqual(wr.probe_verdict(None, ""), "k6 wrote no summary")
        self.assertIn("no detail", wr.probe_verdict({"requests": 3, "failed_rate": 0.5}, ""))

    def test_reset_statements(self):
        self.assertEqual(wr.postgres_reset(100000), ["DELETE FROM venues WHERE id > 100000", "VACUUM ANALYZE venues"])
        self.assertEqual(wr.sqlite_reset(7), ["DELETE FROM venues WHERE id > 7"])

    def test_every_write_described(self):
        self.assertEqual(set(wr.WRITES), set(plan.WRITES))
        self.assertEqual(set(wr.DESCRIPTIONS), set(wr.WRITES))
        self.assertIn("100 aliased `createVenue`", wr.DESCRIPTIONS["insert_batch_100"])
        self.assertIn("one row per call, 100 calls in one request", wr.DESCRIPTIONS["insert_batch_100"])


class PlanTest(unittest.TestCase):
    def test_configs(self):
        self.assertEqual((plan.full().writes_levels, plan.full().writes_s), ([1, 10, 50], 8))
        self.assertEqual((plan.quick().writes_levels, plan.quick().writes_s), ([10], 3))
        self.assertEqual(plan.full().writes, ["insert_one", "insert_batch_100", "update_by_pk"])
        self.assertNotIn("writes", plan.NOT_YET)
        self.assertNotIn("auth", plan.NOT_YET)

    def test_writes_come_after_every_read_scenario(self):
        st = steps(plan.full())
        kinds = [s.scenario for s in st]
        first_write = kinds.index("writes")
        self.assertFalse({"fixed", "capacity", "memory", "ceiling"} & set(kinds[first_write:]))
        # auth, then qos, then subscriptions (its own table, created last), then ops (its
        # reloads read the final schema), then events (a database of its own, dropped
        # after), then remote (a SQLite file of its own), then scale (it restarts
        # PostgreSQL), last
        self.assertEqual(list(dict.fromkeys(kinds))[-8:],
                         ["auth", "qos", "subscriptions", "ops", "events", "remote", "scale", "report"])
        self.assertLess(first_write, kinds.index("auth"))  # auth after the writes
        self.assertIn("start PostGraphile with its default mutations", st[first_write].label)

    def test_time_budget(self):
        for cfg, limit in ((plan.full(), 8 * 60), (plan.quick(), 85)):
            w = [s for s in steps(cfg) if s.scenario == "writes"]
            n = len(cfg.systems)
            self.assertEqual(len(w), 1 + n + 3 * len(cfg.writes_levels) * n)
            self.assertLessEqual(sum(s.est_s for s in w), limit, cfg.mode)

    def test_skipped_writes(self):
        cfg = plan.quick()
        cfg.systems = ["grafton", "postgraphile"]
        b = runner.Bench(cfg, env(), "/nonexistent", [])
        runs = [s for s in b.steps() if s.scenario == "writes" and s.when is not None]
        self.assertEqual(len(runs), 3 * 2)
        b.write_skip[("grafton", "insert_one")] = "no mutation"
        live = [s.label for s in runs if s.when()]
        self.assertNotIn("grafton insert_one vus=10", live)
        self.assertIn("postgraphile insert_one vus=10", live)
        self.assertEqual(len(live), 5)

    def test_only_writes(self):
        cfg = plan.quick()
        cfg.scenarios = ["writes"]
        kinds = {s.scenario for s in steps(cfg)}
        self.assertEqual(kinds, {"setup", "writes", "report"})


if __name__ == "__main__":
    unittest.main()
