import unittest

import cli
import plan


def config(*argv):
    return cli.config(cli.parse_args(list(argv)))


class CliTest(unittest.TestCase):
    def test_defaults_are_the_full_plan(self):
        cfg = config()
        self.assertEqual(cfg.mode, "full")
        self.assertEqual(cfg.capacity_queries, list(plan.SEED))
        self.assertEqual(cfg.capacity_limits, [50, 100])

    def test_queries_narrow_the_capacity_search_too(self):
        cfg = config("--queries", "venues,by_pk")
        self.assertEqual(sorted(cfg.fixed_queries), ["by_pk", "venues"])
        self.assertEqual(cfg.capacity_queries, ["venues"])

    def test_capacity_limits(self):
        self.assertEqual(config("--capacity-limits", "100,50,100").capacity_limits, [50, 100])
        for bad in ("0", "x", ","):
            with self.assertRaises(SystemExit):
                config("--capacity-limits", bad)

    def test_levels_and_rounds(self):
        cfg = config("--levels", "10,1", "--rounds", "2")
        self.assertEqual(cfg.fixed_levels, [1, 10])
        self.assertEqual((cfg.fixed_rounds, cfg.ceiling_rounds), (2, 2))
        with self.assertRaises(SystemExit):
            config("--rounds", "0")

    def test_unknown_names_are_refused(self):
        with self.assertRaises(SystemExit):
            config("--scenarios", "fixed,nope")

    def test_k6_then_explicit_bounds(self):
        cfg = config("--client", "k6", "--max-vus", "2000", "--capacity-budget", "5")
        self.assertEqual((cfg.client, cfg.max_vus, cfg.capacity_budget_s), ("k6", 2000, 300))


if __name__ == "__main__":
    unittest.main()
