import unittest

import capacity as cap


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def trial_below(limit, clock=None, cost=0.0):
    """A trial that passes up to `limit` VUs and advances the fake clock by `cost`."""
    ran = []

    def trial(vus):
        ran.append(vus)
        if clock is not None:
            clock.t += cost
        return {"passed": vus <= limit, "p95": vus / 10}

    return trial, ran


class SearchTest(unittest.TestCase):
    def test_up_from_the_start_then_refine(self):
        trial, ran = trial_below(750)
        r = cap.search(trial, start=200, step=200, refine=100, max_vus=3000)
        self.assertEqual(ran, [200, 400, 600, 800, 700])
        self.assertEqual(r["best_vus"], 700)
        self.assertEqual(r["stopped_by"], cap.THRESHOLD)
        self.assertEqual(r["best"]["p95"], 70)
        self.assertEqual([v for v, _ in r["trials"]], ran)

    def test_down_from_a_high_start(self):
        trial, ran = trial_below(1000)
        r = cap.search(trial, start=1400, step=200, refine=100, max_vus=3000)
        self.assertEqual(ran, [1400, 1200, 1000, 1100])
        self.assertEqual(r["best_vus"], 1000)
        self.assertEqual(r["stopped_by"], cap.THRESHOLD)

    def test_start_is_rounded_to_the_step(self):
        trial, ran = trial_below(5000)
        cap.search(trial, start=1350, step=200, refine=100, max_vus=1600)
        self.assertEqual(ran[0], 1200)

    def test_bounded_by_max_vus(self):
        trial, ran = trial_below(10_000)
        r = cap.search(trial, start=2600, step=200, refine=100, max_vus=3000)
        self.assertEqual(ran, [2600, 2800, 3000])
        self.assertEqual(r["best_vus"], 3000)
        self.assertEqual(r["stopped_by"], cap.MAX_VUS)

    def test_max_vus_not_a_multiple_of_the_step(self):
        trial, ran = trial_below(10_000)
        r = cap.search(trial, start=200, step=200, refine=100, max_vus=500)
        self.assertEqual(ran, [200, 400, 500])
        self.assertEqual(r["stopped_by"], cap.MAX_VUS)
        trial, ran = trial_below(450)
        r = cap.search(trial, start=200, step=200, refine=100, max_vus=500)
        self.assertEqual(ran, [200, 400, 500])
        self.assertEqual((r["best_vus"], r["stopped_by"]), (400, cap.THRESHOLD))

    def test_nothing_passes(self):
        trial, ran = trial_below(50)
        r = cap.search(trial, start=600, step=200, refine=100, max_vus=3000)
        self.assertEqual(ran, [600, 400, 200, 100])
        self.assertEqual(r["best_vus"], 0)
        self.assertIsNone(r["best"])
        self.assertEqual(r["stopped_by"], cap.NO_PASS)

    def test_only_the_refine_level_passes(self):
        trial, ran = trial_below(150)
        r = cap.search(trial, start=200, step=200, refine=100, max_vus=3000)
        self.assertEqual(ran, [200, 100])
        self.assertEqual((r["best_vus"], r["stopped_by"]), (100, cap.THRESHOLD))

    def test_time_budget_stops_the_search_and_says_so(self):
        clock = FakeClock()
        trial, ran = trial_below(5000, clock, cost=60)
        r = cap.search(trial, start=200, step=200, refine=100, max_vus=3000,
                       budget_s=200, trial_cost_s=60, clock=clock)
        self.assertEqual(ran, [200, 400, 600])  # a 4th trial would end at 240 s > 200
        self.assertEqual(r["best_vus"], 600)
        self.assertEqual(r["stopped_by"], cap.BUDGET)

    def test_budget_during_refinement(self):
        clock = FakeClock()
        trial, ran = trial_below(700, clock, cost=60)
        r = cap.search(trial, start=600, step=200, refine=100, max_vus=3000,
                       budget_s=130, trial_cost_s=60, clock=clock)
        self.assertEqual(ran, [600, 800])
        self.assertEqual((r["best_vus"], r["stopped_by"]), (600, cap.BUDGET))

    def test_first_trial_always_runs(self):
        clock = FakeClock()
        trial, ran = trial_below(5000, clock, cost=60)
        r = cap.search(trial, start=400, budget_s=1, trial_cost_s=60, clock=clock)
        self.assertEqual(ran, [400])
        self.assertEqual(r["stopped_by"], cap.BUDGET)

    def test_cost_may_depend_on_the_vu_count(self):
        clock = FakeClock()
        trial, ran = trial_below(5000, clock, cost=10)
        cap.search(trial, start=200, step=200, max_vus=3000, budget_s=35,
                   trial_cost_s=lambda vus: vus / 40, clock=clock)
        self.assertEqual(ran, [200, 400, 600])  # the 4th (800 VUs, 20 s) would end at 50 s

    def test_growing_stride_reaches_a_far_boundary_in_few_trials(self):
        trial, ran = trial_below(9_100)
        r = cap.search(trial, start=5500, step=500, refine=250, max_vus=20_000, grow=True)
        # up by 500, 1000, 2000, 4000; then halve the bracket [9000, 13000] down to 250
        self.assertEqual(ran, [5500, 6000, 7000, 9000, 13000, 11000, 10000, 9500, 9250])
        self.assertEqual((r["best_vus"], r["stopped_by"]), (9000, cap.THRESHOLD))

    def test_growing_stride_down_and_bisect(self):
        trial, ran = trial_below(1_300)
        r = cap.search(trial, start=8000, step=500, refine=250, max_vus=20_000, grow=True)
        self.assertEqual(ran, [8000, 7500, 6500, 4500, 500, 2500, 1500, 1000, 1250])
        self.assertEqual((r["best_vus"], r["stopped_by"]), (1250, cap.THRESHOLD))

    def test_growing_stride_stops_at_max_vus(self):
        trial, ran = trial_below(50_000)
        r = cap.search(trial, start=5000, step=500, refine=250, max_vus=9_000, grow=True)
        self.assertEqual(ran, [5000, 5500, 6500, 8500, 9000])
        self.assertEqual((r["best_vus"], r["stopped_by"]), (9000, cap.MAX_VUS))

    def test_growing_stride_when_nothing_passes(self):
        trial, ran = trial_below(100)
        r = cap.search(trial, start=1000, step=500, refine=250, max_vus=20_000, grow=True)
        self.assertEqual(ran, [1000, 500, 250])
        self.assertEqual((r["best_vus"], r["stopped_by"]), (0, cap.NO_PASS))

    def test_growing_stride_respects_the_budget(self):
        clock = FakeClock()
        trial, ran = trial_below(9_100, clock, cost=60)
        r = cap.search(trial, start=5500, step=500, refine=250, max_vus=20_000, grow=True,
                       budget_s=250, trial_cost_s=60, clock=clock)
        self.assertEqual(ran, [5500, 6000, 7000, 9000])
        self.assertEqual((r["best_vus"], r["stopped_by"]), (9000, cap.BUDGET))

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            cap.search(lambda v: {"passed": True}, step=0)


class HintTest(unittest.TestCase):
    def test_hint(self):
        self.assertEqual(cap.hint_from_rps(1000), 1600)  # 1000 rps × 2 s × 0.8
        self.assertEqual(cap.hint_from_rps(5), 200)
        self.assertEqual(cap.hint_from_rps(0), 200)


if __name__ == "__main__":
    unittest.main()
