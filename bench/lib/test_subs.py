"""Tests of the subscriptions scenario's pure parts (bench/lib/subs.py)."""

import unittest

import subs


def run(**over):
    r = {"clients": 100, "sockets": 100, "first_results": 100, "up_to_date_at_end": 100, "errors": 0,
         "skipped_updates": 0, "latency_ms": {"p50": 400, "p95": 900, "p99": 990, "max": 1000},
         "grafton": {"rss_mb_max": 50, "cpu_percent": 5}, "postgres": {"transactions_per_s": 3},
         "messages_per_s": 100}
    r.update(over)
    return r


class SubsTest(unittest.TestCase):
    def test_sockets_are_shared_only_past_the_limit(self):
        self.assertEqual(subs.per_socket(1000), 1)
        self.assertEqual(subs.per_socket(subs.MAX_SOCKETS), 1)
        self.assertEqual(subs.per_socket(subs.MAX_SOCKETS + 1), 2)
        self.assertEqual(subs.per_socket(20_000), 2)
        # Five per socket would need 20,000 sockets, the whole open-files limit.
        self.assertEqual(subs.per_socket(100_000), 6)

    def test_rows_belong_to_the_user_of_their_socket(self):
        sql = subs.table_sql(10, 2)
        self.assertIn("((i - 1) / 2 + 1)::text", sql)
        self.assertIn("generate_series(1, 10)", sql)

    def test_the_client_gets_the_sharing(self):
        argv = subs.client_argv("c", "ws://x", "postgres://y", "s", 20_000, 30, 42)
        self.assertEqual(argv[argv.index("--per-socket") + 1], "2")
        self.assertEqual(argv[-2:], ["--grafton-pid", "42"])

    def test_the_server_runs_on_default_flags_but_the_secret(self):
        for n in (1000, 2000, 20_000):
            self.assertEqual(subs.server_extra(n, "s"), ["--admin-secret", "s"])

    def test_verdicts(self):
        self.assertTrue(subs.verdict(run())["met"])
        self.assertFalse(subs.verdict(run(latency_ms={"p95": 1001}))["p95_ok"])
        self.assertFalse(subs.verdict(run(grafton={"rss_mb_max": 1025}))["rss_ok"])
        self.assertFalse(subs.verdict(run(skipped_updates=1))["complete"])
        self.assertFalse(subs.verdict(run(up_to_date_at_end=99))["met"])
        self.assertFalse(subs.verdict(run(errors=1))["met"])

    def test_the_section_shows_each_level(self):
        text = subs.section({"subscriptions": {"rounds": 30, "levels": [run(), run(clients=100_000)]}})
        self.assertIn("| 100,000 |", text)
        self.assertIn("Target: 100,000 subscribers", text)
        self.assertEqual(subs.section({}), "")


if __name__ == "__main__":
    unittest.main()
