import unittest

import pgbench

PG15 = """pgbench (15.18 (Debian 15.18-0+deb12u1))
transaction type: /tmp/grafton-bench.x/pgbench/venues.sql
scaling factor: 1
query mode: prepared
number of clients: 50
number of threads: 2
maximum number of tries: 1
duration: 4 s
number of transactions actually processed: 40394
number of failed transactions: 0 (0.000%)
latency average = 4.788 ms
initial connection time = 152.553 ms
tps = 10442.450835 (without initial connection time)
"""

PG13 = """transaction type: venues.sql
scaling factor: 1
query mode: prepared
number of clients: 10
number of threads: 2
duration: 10 s
number of transactions actually processed: 25276
latency average = 3.956 ms
latency stddev = 1.204 ms
tps = 2527.607305 (including connections establishing)
tps = 2531.213344 (excluding connections establishing)
"""

FAILED = """pgbench: error: connection to server at "127.0.0.1", port 5999 failed: Connection refused
pgbench: fatal: could not create connection for initialization
"""


class ParseTest(unittest.TestCase):
    def test_pg15(self):
        r = pgbench.parse(PG15)
        self.assertAlmostEqual(r["tps"], 10442.450835)
        self.assertAlmostEqual(r["latency_avg_ms"], 4.788)
        self.assertEqual(r["transactions"], 40394)
        self.assertEqual(r["failed"], 0)
        self.assertEqual(r["clients"], 50)
        self.assertEqual(r["duration_s"], 4)
        self.assertIsNone(r["latency_stddev_ms"])

    def test_pg13_prefers_excluding_connections(self):
        r = pgbench.parse(PG13)
        self.assertAlmostEqual(r["tps"], 2531.213344)
        self.assertAlmostEqual(r["latency_stddev_ms"], 1.204)
        self.assertIsNone(r["failed"])

    def test_failure_raises(self):
        with self.assertRaises(ValueError):
            pgbench.parse(FAILED)
        with self.assertRaises(ValueError):
            pgbench.parse("")


class CommandTest(unittest.TestCase):
    def test_command(self):
        self.assertEqual(pgbench.command("pgbench", "postgres://u@h/db", "v.sql", 50, 10),
                         ["pgbench", "-n", "-M", "prepared", "-c", "50", "-j", "2", "-T", "10", "-f", "v.sql",
                          "postgres://u@h/db"])
        self.assertIn("-j", pgbench.command("pgbench", "u", "v.sql", 1, 10))
        argv = pgbench.command("pgbench", "u", "v.sql", 1, 10)
        self.assertEqual(argv[argv.index("-j") + 1], "1")  # threads never exceed clients


if __name__ == "__main__":
    unittest.main()
