"""pgbench: the command line for the ceiling scenario and parsing of its report."""

from __future__ import annotations

import re

_TPS = re.compile(r"^tps = ([0-9.]+)\s*\((.*)\)", re.M)
_LAT = re.compile(r"^latency average = ([0-9.]+) ms", re.M)
_STDDEV = re.compile(r"^latency stddev = ([0-9.]+) ms", re.M)
_TX = re.compile(r"^number of transactions actually processed: (\d+)", re.M)
_FAILED = re.compile(r"^number of failed transactions: (\d+)", re.M)
_CLIENTS = re.compile(r"^number of clients: (\d+)", re.M)
_DURATION = re.compile(r"^duration: (\d+) s", re.M)


def command(pgbench: str, url: str, script: str, clients: int, seconds: int) -> list[str]:
    """`pgbench -n -M prepared -c C -j J -T S -f script url` (J = min(2, C))."""
    return [pgbench, "-n", "-M", "prepared", "-c", str(clients), "-j", str(min(2, clients)),
            "-T", str(seconds), "-f", script, url]


def parse(text: str) -> dict:
    """Numbers from pgbench's report: tps (excluding connection set-up when
    pgbench reports both), latency_avg_ms, latency_stddev_ms, transactions,
    failed, clients, duration_s.  Missing figures are None.  Raises
    ValueError when there is no tps line (pgbench failed)."""
    tps_lines = _TPS.findall(text)
    if not tps_lines:
        raise ValueError("no tps line in pgbench output")
    tps = float(tps_lines[0][0])
    for value, note in tps_lines:  # PG ≤ 13 prints including/excluding; 14+ one line
        if "excluding" in note or "without" in note:
            tps = float(value)

    def num(rx, cast=float):
        m = rx.search(text)
        return cast(m.group(1)) if m else None

    return {
        "tps": tps,
        "latency_avg_ms": num(_LAT),
        "latency_stddev_ms": num(_STDDEV),
        "transactions": num(_TX, int),
        "failed": num(_FAILED, int),
        "clients": num(_CLIENTS, int),
        "duration_s": num(_DURATION, int),
    }
