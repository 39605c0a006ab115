import unittest

import settle


class Clock:
    def __init__(self):
        self.t = 0.0

    def now(self):
        return self.t

    def sleep(self, s):
        self.t += s


def run(counts, **kw):
    clock, seq = Clock(), iter(counts)
    return settle.wait_quiet(lambda: next(seq), clock=clock.now, sleep=clock.sleep, **kw)


class WaitQuietTest(unittest.TestCase):
    def test_idle_database_settles_after_the_quiet_period(self):
        r = run([0] * 10, quiet_s=1.0, interval_s=0.25)
        self.assertEqual(r, {"waited_s": 1.0, "settled": True, "active": 0})

    def test_a_backlog_delays_the_run_until_it_drains(self):
        r = run([5, 3, 1, 0, 2, 0, 0, 0, 0, 0], quiet_s=1.0, interval_s=0.25)
        # The 0 at 0.75 s does not count: a statement ran again at 1.0 s.
        self.assertTrue(r["settled"])
        self.assertEqual(r["waited_s"], 2.25)

    def test_gives_up_at_the_timeout(self):
        r = run([4] * 100, timeout_s=2.0, interval_s=0.5)
        self.assertEqual(r, {"waited_s": 2.0, "settled": False, "active": 4})

    def test_a_failed_poll_does_not_hang(self):
        r = run([2, None], interval_s=0.25)
        self.assertEqual(r, {"waited_s": 0.25, "settled": False, "active": None})


if __name__ == "__main__":
    unittest.main()
