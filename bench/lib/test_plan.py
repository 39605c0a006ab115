import io
import unittest

import plan


class Clock:
    t = 0.0

    def __call__(self):
        return self.t


class ProgressTest(unittest.TestCase):
    def test_line(self):
        steps = [plan.Step("setup", "a", 30), plan.Step("fixed", "grafton venues vus=1", 60),
                 plan.Step("fixed", "grafton venues vus=50", 60)]
        clock, out = Clock(), io.StringIO()
        p = plan.Progress(steps, out=out, clock=clock)
        p.begin(0)
        clock.t = 45  # setup overran its estimate
        p.begin(1)
        clock.t = 75
        p.begin(2)
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0], "[00:00 elapsed, ~02:30 left] setup: a (1/1)")
        self.assertEqual(lines[1], "[00:45 elapsed, ~02:00 left] fixed: grafton venues vus=1 (1/2)")
        self.assertEqual(lines[2], "[01:15 elapsed, ~01:00 left] fixed: grafton venues vus=50 (2/2)")
        clock.t = 100
        self.assertEqual(p.line("fixed", "x"), "[01:40 elapsed, ~00:35 left] fixed: x")

    def test_mmss(self):
        self.assertEqual(plan.mmss(0), "00:00")
        self.assertEqual(plan.mmss(3725), "62:05")


class ConfigTest(unittest.TestCase):
    def test_quick_is_small(self):
        q = plan.quick()
        self.assertEqual(q.fixed_levels, [1, 10, 50])
        self.assertEqual(q.fixed_queries, ["venues", "venue_meetups", "meetups_members", "by_pk"])
        self.assertLessEqual(q.capacity_budget_s, 120)

    def test_full_covers_the_issue(self):
        f = plan.full()
        self.assertEqual(f.fixed_levels, [1, 10, 50, 100, 200, 500, 1000])
        self.assertEqual(len(f.fixed_queries), 10)
        # loadgen's open model searches up to 10,000 users; k6's VUs stop at 3,000.
        self.assertEqual((f.client, f.ramp_s, f.hold_s, f.step, f.refine, f.max_vus),
                         ("loadgen", 30, 30, 500, 250, 10_000))
        self.assertEqual(f.capacity_limits, [50, 100])
        self.assertEqual(f.capacity_systems, ["grafton", "postgraphile", "postgraphile5"])
        self.assertEqual(f.trial_cost_s(5000), 62)
        f.use_k6()
        self.assertEqual((f.client, f.step, f.refine, f.max_vus), ("k6", 200, 100, 3000))
        self.assertGreater(f.trial_cost_s(3000), 70)

    def test_ceiling_levels_fit_max_connections(self):
        f = plan.full()
        f.ceiling_levels = [1, 10, 200, 500, 1000]
        run, skipped = plan.ceiling_levels(f)
        self.assertEqual((run, skipped), ([1, 10, 200], [500, 1000]))


if __name__ == "__main__":
    unittest.main()
