"""Run configurations (quick / full), the step list with time estimates, and the progress line."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Callable

SEED = ["venues", "venue_meetups", "meetups_members"]
# The ceiling's queries: each has Grafton's SQL and the best hand-written SQL (bench/pgbench/best/).
CEILING = SEED + ["complex_filter"]
ALL_QUERIES = SEED + ["simple_list", "complex_filter", "aggregate", "by_pk", "roots_1", "roots_4", "roots_9"]
# Grafton on PostgreSQL, the peers (PostGraphile v4 and v5), Grafton on SQLite.
SYSTEMS = ["grafton", "postgraphile", "postgraphile5", "sqlite"]
# The load client of the throughput scenarios (fixed, memory) and of the capacity search:
# loadgen (bench/loadgen, light: closed loop, and an open-model arrival rate for capacity)
# or k6 (the seed's own scripts: closed loop, and VUs sleeping 2 s for capacity).
CLIENTS = ["loadgen", "k6"]
SCENARIOS = ["fixed", "capacity", "memory", "ceiling", "writes", "auth", "qos", "subscriptions", "ops", "events",
             "scale", "remote"]
NOT_YET: dict[str, str] = {}  # scenario -> why it is a placeholder (none left)
WRITES = ["insert_one", "insert_batch_100", "update_by_pk"]  # bench/lib/writes.py, bench/k6/mutations.js

K6_OVERHEAD_S = 0.6  # k6 start-up + summary per run
K6_PER_VU_S = 0.0035  # k6 initialises each VU (≈3.5 s for 1000 VUs on this machine)
MAX_CONNECTIONS = 300


@dataclass
class Config:
    mode: str
    rows: int = 100_000
    client: str = "loadgen"
    limit: int = 50
    pool: int = 20
    systems: list[str] = field(default_factory=lambda: list(SYSTEMS))
    scenarios: list[str] = field(default_factory=lambda: list(SCENARIOS))
    # fixed concurrency (closed loop)
    fixed_levels: list[int] = field(default_factory=lambda: [1, 10, 50, 100, 200, 500, 1000])
    fixed_queries: list[str] = field(default_factory=lambda: list(ALL_QUERIES))
    fixed_s: int = 8
    fixed_rounds: int = 3
    warmup_queries: list[str] = field(default_factory=lambda: list(ALL_QUERIES))
    warmup_s: int = 2
    # capacity (ramp + hold trials)
    capacity_queries: list[str] = field(default_factory=lambda: list(SEED))
    capacity_limits: list[int] = field(default_factory=lambda: [50, 100])
    capacity_systems: list[str] = field(default_factory=lambda: ["grafton", "postgraphile", "postgraphile5"])
    ramp_s: int = 30
    hold_s: int = 30
    step: int = 500
    refine: int = 250
    max_vus: int = 10_000  # users (loadgen's open model); k6: 3000 VUs
    capacity_budget_s: int = 50 * 60
    probe_s: int = 5
    # memory
    memory_vus: int = 100
    memory_queries: list[str] = field(default_factory=lambda: list(SEED))
    memory_s: int = 10
    # ceiling (pgbench)
    ceiling_levels: list[int] = field(default_factory=lambda: [1, 10, 50, 100, 200])
    ceiling_s: int = 10
    ceiling_rounds: int = 3  # reported as medians, like fixed
    # writes (closed loop; after every read scenario, the table restored after each run)
    writes: list[str] = field(default_factory=lambda: list(WRITES))
    writes_levels: list[int] = field(default_factory=lambda: [1, 10, 50])
    writes_s: int = 8
    writes_warmup_s: int = 2
    # auth (bench/lib/auth.py): admin vs two roles, closed loop, mirrored order per system and level;
    # then idle RSS with and without the role schemas
    auth_levels: list[int] = field(default_factory=lambda: [1, 10, 50])
    auth_s: int = 4
    auth_reps: int = 3  # rounds per system and level, each the mirror of the one before; medians
    auth_warmup_s: int = 2
    auth_idle_window_s: float = 2.0  # idle: RSS within 1% and no CPU used over this long
    auth_idle_max_s: float = 15.0
    # qos (bench/lib/qos.py): an attack beside cheap requests, the limits' overhead, the WSO2
    # shape with and without a per-root-field rate limit, the CPU cost of a rejection
    qos_attack_s: int = 30
    qos_overhead_vus: int = 50
    qos_overhead_s: int = 8
    qos_overhead_reps: int = 5
    qos_warmup_s: int = 2
    qos_wso2_levels: list[int] = field(default_factory=lambda: [50, 100, 200, 500, 1000])
    qos_wso2_s: int = 8
    qos_reject_rate: int = 1000  # requests/s
    qos_reject_s: int = 10
    # subscriptions (bench/lib/subs.py): N subscribers, one update a second
    subs_levels: list[int] = field(default_factory=lambda: [1000, 5000, 20000, 100_000])
    subs_rounds: int = 30
    # scale (bench/lib/scale.py): one Grafton vs two behind HAProxy, a streaming replica,
    # recovery after a PostgreSQL restart; closed loop with bench/loadgen, alternating rounds
    scale_levels: list[int] = field(default_factory=lambda: [10, 50])
    scale_queries: list[str] = field(default_factory=lambda: list(SEED))
    scale_s: int = 8
    scale_rounds: int = 3
    scale_warmup_s: int = 2
    scale_lag_s: int = 10  # per seed query, with 100 inserts/s
    scale_restarts: int = 3
    # events (bench/lib/events.py): event-trigger delivery in a database of its own; pgbench
    # writes, bench/events/receiver.cjs answers; rounds alternate, medians reported
    events_throughput_events: int = 50_000  # per throughput run
    events_rounds: int = 3  # throughput, latency and writer's-cost rounds
    events_latency_s: int = 30  # at events.RATE a second
    events_writer_s: int = 10
    events_trials: int = 3  # SIGKILL runs, and webhook-down runs
    events_trial_s: int = 24
    events_log_events: int = 1_000_000
    # remote (bench/lib/run_remote.py): bench/quick/remote_join.sh and remote_load.sh
    remote_rounds: int = 3
    remote_s: int = 8

    def trial_cost_s(self, vus: int) -> float:
        """Expected wall time of one capacity trial: ramp + hold (+ k6's VU initialisation and last sleeps)."""
        if self.client == "loadgen":
            return self.ramp_s + self.hold_s + 2
        return self.ramp_s + self.hold_s + 3 + K6_PER_VU_S * vus

    def use_k6(self) -> None:
        """k6 as the client: the seed's closed-loop VUs, whose own CPU bounds the search."""
        self.client = "k6"
        self.max_vus = 1600 if self.mode == "quick" else 3000
        self.step, self.refine = 200, 100
        self.capacity_budget_s = 75 if self.mode == "quick" else 22 * 60

    def est(self, seconds: float, vus: int) -> float:
        """Estimated wall time of one closed-loop run with this client."""
        return k6_est(seconds, vus) if self.client == "k6" else seconds + 0.3


def full(rows: int = 100_000) -> Config:
    return Config(mode="full", rows=rows)


def quick(rows: int = 100_000) -> Config:
    return Config(
        mode="quick", rows=rows,
        fixed_levels=[1, 10, 50], fixed_queries=SEED + ["by_pk"], fixed_s=3, fixed_rounds=1,
        warmup_queries=["venues"], warmup_s=2,
        capacity_queries=["venues"], capacity_limits=[50], ramp_s=5, hold_s=5,
        max_vus=6000, capacity_budget_s=75, probe_s=3,
        memory_queries=["venues"], memory_s=4,
        ceiling_levels=[50], ceiling_s=4, ceiling_rounds=1,
        writes_levels=[10], writes_s=3, writes_warmup_s=1,
        auth_levels=[10], auth_s=2, auth_reps=2, auth_warmup_s=1, auth_idle_window_s=1.0, auth_idle_max_s=5.0,
        qos_attack_s=8, qos_overhead_vus=10, qos_overhead_s=3, qos_overhead_reps=3, qos_warmup_s=1, qos_wso2_levels=[50, 200],
        qos_wso2_s=3, qos_reject_rate=500, qos_reject_s=4,
        subs_levels=[1000], subs_rounds=10,
        scale_levels=[10], scale_queries=["venues"], scale_s=3, scale_warmup_s=1, scale_lag_s=4,
        events_throughput_events=10_000, events_rounds=1, events_latency_s=10, events_writer_s=4, events_trials=1,
        events_trial_s=22, events_log_events=100_000, remote_rounds=1, remote_s=3,
    )


def uses_loadgen(cfg: Config) -> bool:
    """bench/loadgen is built and its documents written: the throughput scenarios with
    the light client, and the scale and remote scenarios (always loadgen)."""
    sc = set(cfg.scenarios)
    return (cfg.client == "loadgen" and bool({"fixed", "capacity", "memory", "ceiling"} & sc)) or (
        bool({"scale", "remote"} & sc) and "grafton" in cfg.systems)


def k6_est(seconds: float, vus: int) -> float:
    """Estimated wall time of one k6 run."""
    return seconds + K6_OVERHEAD_S + K6_PER_VU_S * vus


def ceiling_levels(cfg: Config) -> tuple[list[int], list[int]]:
    """(levels pgbench can run, levels skipped): pgbench's clients must fit in
    max_connections next to the servers' pools and the reserved slots."""
    room = MAX_CONNECTIONS - 3 - cfg.pool * 2 - 5
    return [v for v in cfg.ceiling_levels if v <= room], [v for v in cfg.ceiling_levels if v > room]


@dataclass
class Step:
    scenario: str
    label: str
    est_s: float
    fn: Callable[[], object] | None = None
    when: Callable[[], bool] | None = None  # checked at run time: False skips the step silently


def duration(seconds: float) -> str:
    """'45 s', '30 min'."""
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def mmss(seconds: float) -> str:
    s = max(0, int(round(seconds)))
    return f"{s // 60:02d}:{s % 60:02d}"


class Progress:
    """Prints `[mm:ss elapsed, ~mm:ss left] scenario: what (i/n)` on stderr.

    `left` is the estimate of the steps not finished yet; the current step
    counts with what remains of its own estimate."""

    def __init__(self, steps: list[Step], out=sys.stderr, clock=time.monotonic):
        self.steps, self.out, self.clock = steps, out, clock
        self.t0 = clock()
        self.index = -1
        self.step_t0 = self.t0
        self.counts: dict[str, int] = {}
        self.seen: dict[str, int] = {}
        for s in steps:
            self.counts[s.scenario] = self.counts.get(s.scenario, 0) + 1

    def left(self) -> float:
        if self.index < 0:
            return sum(s.est_s for s in self.steps)
        cur = self.steps[self.index]
        rest = sum(s.est_s for s in self.steps[self.index + 1:])
        return rest + max(0.0, cur.est_s - (self.clock() - self.step_t0))

    def line(self, scenario: str, what: str, counter: str = "") -> str:
        return (f"[{mmss(self.clock() - self.t0)} elapsed, ~{mmss(self.left())} left] "
                f"{scenario}: {what}" + (f" ({counter})" if counter else ""))

    def begin(self, index: int) -> None:
        self.index, self.step_t0 = index, self.clock()
        s = self.steps[index]
        self.seen[s.scenario] = self.seen.get(s.scenario, 0) + 1
        self.say(s.scenario, s.label, f"{self.seen[s.scenario]}/{self.counts[s.scenario]}")

    def say(self, scenario: str, what: str, counter: str = "") -> None:
        print(self.line(scenario, what, counter), file=self.out, flush=True)


def total(steps: list[Step]) -> float:
    return sum(s.est_s for s in steps)
