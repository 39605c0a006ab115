import unittest

import ops


class OpsTest(unittest.TestCase):
    def test_collector_endpoint_waits_for_ready(self):
        log = '{"msg":"Starting HTTP server","endpoint":"127.0.0.1:4318"}\n'
        self.assertIsNone(ops.collector_endpoint(log))
        log += '{"msg":"Everything is ready. Begin running and processing data."}\n'
        self.assertEqual(ops.collector_endpoint(log), "http://127.0.0.1:4318")

    def test_reload_lines_are_read(self):
        log = ("2026-11-24T04:00:00Z  INFO grafton_server::reload: schema reloaded why=\"reload_metadata\" "
               "tables=9 roles=0 elapsed_ms=12.5\nother line\n")
        self.assertEqual(ops.reload_ms(log), [12.5])
        coloured = "\x1b[2mgrafton_server::reload\x1b[0m schema reloaded \x1b[3melapsed_ms\x1b[0m\x1b[2m=\x1b[0m9.4\n"
        self.assertEqual(ops.reload_ms(coloured), [9.4])

    def test_reload_verdict(self):
        self.assertEqual(ops.reload_summary([10, 20, 30], [5])["verdict"], "met")
        self.assertEqual(ops.reload_summary([150, 160], [])["verdict"], "missed")
        self.assertEqual(ops.reload_summary([], [])["verdict"], "n/a")

    def test_cpu_per_request_is_compared_by_median(self):
        runs = [{"query": "venues", "variant": "off", "cpu_us_per_req": x} for x in (100, 110, 120)] + \
               [{"query": "venues", "variant": "on", "cpu_us_per_req": x} for x in (102, 112, 500)]
        (row,) = ops.cpu_summary(runs)
        self.assertEqual((row["off"], row["on"]), (110, 112))
        self.assertAlmostEqual(row["ratio"], 112 / 110)


if __name__ == "__main__":
    unittest.main()
