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

    def test_reload_verdict(self):
        self.assertEqual(ops.reload_summary([10, 20, 30], [5])["verdict"], "met")
        self.assertEqual(ops.reload_summary([150, 160], [])["verdict"], "missed")
        self.assertEqual(ops.reload_summary([], [])["verdict"], "n/a")


if __name__ == "__main__":
    unittest.main()
