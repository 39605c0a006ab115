"""One loadgen run as a row of the quick scripts' results (tab-separated):
round, name, rps, p50, p95, the server's CPU µs per request, failed requests
(the run's and its warm-up's).

    python3 loadgen_row.py RUN.json WARMUP.json ROUND NAME TICKS_BEFORE TICKS_AFTER CLK_TCK
"""
import json
import sys

run, warm = (json.load(open(p)) for p in sys.argv[1:3])
r, name, t0, t1, tck = sys.argv[3], sys.argv[4], *map(float, sys.argv[5:8])
cpu_us = (t1 - t0) / tck * 1e6 / max(1, run["requests"])
print(r, name, run["rps"], run["p50"], run["p95"], round(cpu_us, 1), run["failed"] + warm["failed"], sep="\t")
