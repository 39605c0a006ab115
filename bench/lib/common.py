"""Paths, pins and small helpers shared by every part of bench/run.

Standard library only.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import resource
import subprocess


HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BENCH = os.path.join(ROOT, "bench")
TOOLS = os.path.join(BENCH, ".tools")
K6_DIR = os.path.join(BENCH, "k6")
MAKE_SCRIPTS = os.environ.get("MAKE_SCRIPTS") or os.path.join(BENCH, "pgbench", "make_scripts.py")
# Hand-written SQL for the seed queries (the ceiling's second reference) and its check.
BEST_DIR = os.path.join(BENCH, "pgbench", "best")
BEST_CHECK = os.path.join(BENCH, "pgbench", "best.py")
K6_VERSION = "v1.8.1"
# @graphile/subscriptions-lds: PostGraphile v4's live queries (the subscriptions scenario's peer).
POSTGRAPHILE_PINS = ["postgraphile@4.14.1", "postgraphile-plugin-connection-filter@2.3.0",
                     "@graphile/subscriptions-lds@4.13.0"]
NODE_DIR = os.path.join(TOOLS, "node")
POSTGRAPHILE_BIN = os.path.join(NODE_DIR, "node_modules", ".bin", "postgraphile")
# PostGraphile v5: package.json, its lock and the config are in the repo; `npm ci`
# installs them (with Node 22 from npm: v5 needs Node >= 22) into the tools folder.
PG5_SRC = os.path.join(BENCH, "peers", "postgraphile5")
PG5_DIR = os.path.join(TOOLS, "postgraphile5")
PG5_FILES = ("package.json", "package-lock.json", "graphile.config.mjs")
PG5_NODE = os.path.join(PG5_DIR, "node_modules", ".bin", "node")
PG5_CLI = os.path.join(PG5_DIR, "node_modules", "postgraphile", "dist", "cli-run.js")
# The peers, each with its own GraphQL dialect in bench/k6/queries.js.
PEERS = ("postgraphile", "postgraphile5")


class Interrupted(Exception):
    pass


def _out(argv, timeout=10) -> str | None:
    """First line of a command's output, None if it cannot run."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    text = (r.stdout or r.stderr).strip()
    return text.splitlines()[0] if text else ""


def _pkg_version(name: str, where: str = NODE_DIR) -> str | None:
    try:
        with open(os.path.join(where, "node_modules", name, "package.json")) as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def k6_system(system: str) -> str:
    """The dialect k6 sends: Grafton on SQLite speaks Grafton's."""
    return system if system in PEERS else "grafton"


def binary_time(path: str) -> str:
    """A file's modification time, UTC."""
    try:
        return dt.datetime.fromtimestamp(os.path.getmtime(path), dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    except OSError:
        return "?"


def proc_stat_cpu() -> list[int] | None:
    """The machine's `cpu` line of /proc/stat (ticks: user nice system idle iowait …)."""
    try:
        with open("/proc/stat") as f:
            return [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None


def children_cpu_s() -> float:
    """CPU seconds of the orchestrator's finished children (k6 runs, once waited for)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def first_lines(path: str, prefix: str, n: int) -> list[str]:
    """The first n lines of a log that contain prefix (from there on, clipped)."""
    out = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if prefix in line:
                    out.append(line[line.index(prefix):].strip()[:500])
                    if len(out) >= n:
                        break
    except OSError:
        pass
    return out


# What a closed-loop run keeps of a client's summary (k6's and loadgen's share these keys).
RUN_KEYS = ("rps", "requests", "failed_rate", "p50", "p75", "p90", "p95", "p99", "min", "max", "avg")


def run_row(row: dict, summary: dict | None, client: str) -> dict:
    """`row` with the run's figures, or with the error of a client that wrote no summary."""
    if summary is None:
        row["error"] = f"{client} failed"
    else:
        row.update({k: summary.get(k) for k in RUN_KEYS})
    return row


def tail_of(path: str, n: int = 15) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:]).strip()
    except OSError:
        return ""


def machine() -> dict:
    model = "?"
    mem_kb = 0
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
        with open("/proc/meminfo") as f:
            mem_kb = int(next(ln.split()[1] for ln in f if ln.startswith("MemTotal")))
    except (OSError, StopIteration):
        pass
    return {"cores": os.cpu_count(), "cpu_model": model, "mem_total_mb": mem_kb // 1024,
            "os": f"{platform.system()} {platform.release()}"}
