"""bench/run's command line: the flags, and the run's Config they make."""

from __future__ import annotations

import argparse

import plan


def parse_args(argv: list[str]):
    p = argparse.ArgumentParser(prog="bench/run", description="Grafton's benchmark suite (see bench/README.md).")
    p.add_argument("--quick", action="store_true", help="smoke run, under 7 minutes")
    p.add_argument("--dry-run", action="store_true", help="check the environment and print the plan; run nothing")
    p.add_argument("--rows", type=int, default=100_000, help="rows per main table (default 100000)")
    p.add_argument("--out", help="results directory (default bench/results/<UTC timestamp>)")
    p.add_argument("--scenarios", help="comma-separated subset of: " + ",".join(plan.SCENARIOS))
    p.add_argument("--systems", help="comma-separated subset of: " + ",".join(plan.SYSTEMS))
    p.add_argument("--writes", help="comma-separated subset of the write scenarios: " + ",".join(plan.WRITES))
    p.add_argument("--queries", help="fixed (capacity and scale: the seed queries among them): comma-separated "
                                     "subset of: " + ",".join(plan.ALL_QUERIES))
    p.add_argument("--levels", help="fixed: comma-separated concurrency levels (default 1,10,50,100,200,500,1000)")
    p.add_argument("--rounds", type=int, help="fixed and ceiling: rounds over every level, reported as medians (default 3)")
    p.add_argument("--capacity-limits", help="capacity: comma-separated page sizes (default 50,100)")
    p.add_argument("--capacity-budget", type=float, metavar="MIN", help="time budget of the capacity search, minutes")
    p.add_argument("--max-vus", type=int, help="upper bound of the capacity search")
    p.add_argument("--client", choices=plan.CLIENTS, default="loadgen",
                   help="load client of fixed, memory and capacity (default loadgen; k6: the seed's scripts)")
    return p.parse_args(argv)


def subset(value: str | None, allowed: list[str], what: str) -> list[str] | None:
    if value is None:
        return None
    items = [x.strip() for x in value.split(",") if x.strip()]
    bad = [x for x in items if x not in allowed]
    if bad or not items:
        raise SystemExit(f"bench/run: unknown {what}: {', '.join(bad) or '(none)'}; choose from {', '.join(allowed)}")
    return [x for x in allowed if x in items]


def numbers(value: str, flag: str) -> list[int]:
    """A comma-separated list of positive whole numbers, sorted, without repeats."""
    try:
        items = sorted({int(x) for x in value.split(",") if x.strip()})
    except ValueError:
        raise SystemExit(f"bench/run: {flag} takes whole numbers: {value}")
    if not items or min(items) < 1:
        raise SystemExit(f"bench/run: {flag} must be positive")
    return items


def config(a: argparse.Namespace) -> plan.Config:
    """The run's Config: the full (or quick) plan, narrowed and bounded by the flags."""
    cfg = plan.quick(a.rows) if a.quick else plan.full(a.rows)
    cfg.scenarios = subset(a.scenarios, plan.SCENARIOS, "scenario") or cfg.scenarios
    cfg.systems = subset(a.systems, plan.SYSTEMS, "system") or cfg.systems
    cfg.writes = subset(a.writes, plan.WRITES, "write") or cfg.writes
    cfg.fixed_queries = subset(a.queries, plan.ALL_QUERIES, "query") or cfg.fixed_queries
    if a.queries:
        cfg.capacity_queries = [q for q in cfg.capacity_queries if q in cfg.fixed_queries]
        cfg.scale_queries = [q for q in cfg.scale_queries if q in cfg.fixed_queries]
    if a.capacity_limits:
        cfg.capacity_limits = numbers(a.capacity_limits, "--capacity-limits")
    if a.levels:
        cfg.fixed_levels = numbers(a.levels, "--levels")
    if a.rounds is not None:
        if a.rounds < 1:
            raise SystemExit("bench/run: --rounds must be at least 1")
        cfg.fixed_rounds = cfg.ceiling_rounds = a.rounds
    if a.client == "k6":
        cfg.use_k6()
    if a.capacity_budget is not None:
        cfg.capacity_budget_s = int(a.capacity_budget * 60)
    if a.max_vus:
        cfg.max_vus = a.max_vus
    if a.rows <= 0:
        raise SystemExit("bench/run: --rows must be positive")
    return cfg
