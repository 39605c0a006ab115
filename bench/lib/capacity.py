"""Capacity search (the seed's method): the largest VU count whose trial passes.

Pure logic over a trial callback, so it can be tested without k6:

    result = search(trial, start=1200, step=200, refine=100, max_vus=3000,
                    budget_s=600, trial_cost_s=65)

`trial(vus)` runs one ramp+hold trial and returns a dict with at least
`passed` (bool); anything else in it is kept in the result.  The search:

1. coarse: from `start` (rounded to a multiple of `step`), go up by `step`
   while trials pass, or down by `step` while they fail, until the boundary
   is bracketed (a pass just below a fail), `max_vus` passes, or the lowest
   level (`step`) fails;
2. refine: between the last pass `lo` and the first fail `hi`, try
   `lo + refine`, `lo + 2*refine`, … below `hi`, up while they pass.

With `grow=True` the coarse stride doubles after every trial (`step`, 2×`step`,
4×`step`, …), so a start far from the boundary costs a few trials, not dozens,
and the refine phase halves the bracket until it is `refine` wide. An
open-model client can reach ten thousand users and more, where a fixed stride
would run out of time before the server's limit.

Before each trial the remaining time budget is checked against its expected
cost (`trial_cost_s`, a number or a function of the VU count); when a trial no
longer fits, the search stops and says so (`stopped_by == "budget"`), so a
report can tell a bound from a threshold failure.
"""

from __future__ import annotations

import time
from typing import Callable

THRESHOLD = "threshold"  # a failing trial bounds the answer from above
MAX_VUS = "max_vus"  # passed at the configured maximum; the real capacity may be higher
BUDGET = "budget"  # ran out of time before the boundary was found/refined
NO_PASS = "no_pass"  # even the smallest level failed

EXPLAIN = {
    THRESHOLD: "threshold failure",
    MAX_VUS: "bound: max VUs reached",
    BUDGET: "bound: time budget",
    NO_PASS: "no level passed",
}


def search(
    trial: Callable[[int], dict],
    *,
    start: int = 200,
    step: int = 200,
    refine: int = 100,
    max_vus: int = 3000,
    budget_s: float = float("inf"),
    trial_cost_s: float | Callable[[int], float] = 0.0,
    clock: Callable[[], float] = time.monotonic,
    grow: bool = False,
) -> dict:
    """Run the search; return {best_vus, best, trials, stopped_by}.

    `best` is the passing trial with the most VUs (None if none passed),
    `trials` the list of (vus, trial-dict) in the order they ran.
    """
    if step <= 0 or refine <= 0 or max_vus <= 0:
        raise ValueError("step, refine and max_vus must be positive")
    t0 = clock()
    results: dict[int, dict] = {}
    order: list[tuple[int, dict]] = []

    cost = trial_cost_s if callable(trial_cost_s) else (lambda _vus: trial_cost_s)

    def fits(vus: int) -> bool:
        # Always allow the first trial: a search that runs nothing is useless.
        return not order or clock() - t0 + cost(vus) <= budget_s

    def run(vus: int) -> bool:
        r = trial(vus)
        results[vus] = r
        order.append((vus, r))
        return bool(r.get("passed"))

    def done(stopped_by: str) -> dict:
        passed = [v for v, r in results.items() if r.get("passed")]
        best_vus = max(passed) if passed else 0
        return {
            "best_vus": best_vus,
            "best": results[best_vus] if passed else None,
            "trials": order,
            "stopped_by": stopped_by,
        }

    top = max(step, (max_vus // step) * step)
    v = min(top, max(step, (int(start) // step) * step))
    lo, hi = 0, None  # largest pass, smallest fail
    stride = step
    # Coarse phase.
    while True:
        if not fits(v):
            return done(BUDGET)
        if run(v):
            lo = v
            if v >= top:
                if top < max_vus:  # max_vus not a multiple of step: try it exactly
                    if not fits(max_vus):
                        return done(BUDGET)
                    if run(max_vus):
                        return done(MAX_VUS)
                    hi = max_vus
                    break
                return done(MAX_VUS)
            if hi is not None:
                break
            v = min(top, v + stride)
        else:
            hi = v
            if v <= step:
                break
            if lo:
                break
            v = max(step, v - stride)
        if grow:
            stride *= 2
    # Refine phase: lo passed (or 0), hi failed.
    if grow:
        while hi - lo > refine:
            mid = lo + max(refine, (hi - lo) // 2 // refine * refine)
            if mid >= hi:
                break
            if not fits(mid):
                return done(BUDGET)
            if run(mid):
                lo = mid
            else:
                hi = mid
        return done(THRESHOLD if lo else NO_PASS)
    v = lo + refine
    while v < hi:
        if not fits(v):
            return done(BUDGET)
        if not run(v):
            break
        v += refine
    if not any(r.get("passed") for r in results.values()):
        return done(NO_PASS)
    return done(THRESHOLD)


def hint_from_rps(rps: float, think_s: float = 2.0, step: int = 200, safety: float = 0.8) -> int:
    """A starting VU count from a closed-loop throughput: each capacity VU sends
    one request every `think_s` seconds, so R requests/s serve about R*think_s
    VUs; start a little below that, at a multiple of `step` (at least `step`)."""
    guess = rps * think_s * safety
    return max(step, int(guess // step) * step)
