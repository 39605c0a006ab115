"""Child processes, ports, HTTP readiness and memory readings.

Every child is started in its own session (so a Ctrl-C on the terminal reaches
only the orchestrator, which then stops the children in order) and registered
in a `Procs`, whose `stop_all()` the orchestrator calls from `finally`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request


class Procs:
    """A registry of running children; stop_all() terminates them (group-wise) in reverse order."""

    def __init__(self):
        self.running: list[subprocess.Popen] = []

    def start(self, argv, *, log_path=None, stdout=None, stdin_from=None, **kw) -> subprocess.Popen:
        """Start argv in a new session; output to log_path (appended) or `stdout`."""
        if log_path is not None:
            stdout = open(log_path, "ab")
        p = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.STDOUT if log_path else None,
                             stdin=stdin_from if stdin_from is not None else subprocess.DEVNULL,
                             start_new_session=True, **kw)
        if log_path is not None:
            stdout.close()  # the child holds its own descriptor
        self.running.append(p)
        return p

    def run(self, argv, *, timeout=None, log_path=None, **kw) -> int:
        """Run to completion (registered meanwhile, so an interrupt stops it); return the exit code."""
        p = self.start(argv, log_path=log_path, **kw)
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop(p)
            return -1
        finally:
            if p in self.running and p.poll() is not None:
                self.running.remove(p)

    def forget(self, p: subprocess.Popen) -> None:
        if p in self.running:
            self.running.remove(p)

    def stop(self, p: subprocess.Popen, grace: float = 5.0) -> None:
        if p.poll() is None:
            for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    p.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if p in self.running:
            self.running.remove(p)

    def stop_all(self) -> None:
        for p in reversed(list(self.running)):
            try:
                self.stop(p)
            except Exception:  # keep stopping the others
                pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post_json(url: str, body: dict, timeout: float = 5.0, headers: dict | None = None) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def post_status(url: str, body: dict, timeout: float = 5.0, headers: dict | None = None) -> tuple[int, dict | None]:
    """(HTTP status, JSON body or None) without raising on 4xx/5xx."""
    try:
        req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json", **(headers or {})})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, None


def wait_graphql(url: str, query: str, proc: subprocess.Popen, timeout: float = 60.0,
                 headers: dict | None = None) -> dict:
    """Poll until `query` answers with data; raise if the process exits or time runs out."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with code {proc.returncode} before answering")
        try:
            answer = post_json(url, {"query": query}, timeout=2.0, headers=headers)
            if answer.get("data") and not answer.get("errors"):
                return answer
            last = answer
        except (OSError, urllib.error.URLError, ValueError) as e:
            last = e
        time.sleep(0.1)
    raise RuntimeError(f"no answer from {url} within {timeout:.0f} s (last: {str(last)[:300]})")


def descendants(pid: int) -> list[int]:
    """pid and all its descendants (by walking /proc/*/stat)."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(d))
            except (OSError, IndexError, ValueError):
                continue
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def status_kb(pid: int, field: str) -> int | None:
    """VmRSS / VmHWM (kB) of one process, None if gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def tree_kb(pid: int, field: str) -> int | None:
    """The field summed over pid and its descendants."""
    vals = [v for p in descendants(pid) if (v := status_kb(p, field)) is not None]
    return sum(vals) if vals else None


def cpu_ticks(pid: int) -> int | None:
    """utime + stime of one process (clock ticks), None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def tree_cpu_ticks(pid: int) -> int | None:
    """utime + stime of pid and every live descendant, plus pid's cutime + cstime (the
    children it has reaped: a PostgreSQL backend that exits keeps counting), in clock
    ticks; None if pid is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total = int(fields[13]) + int(fields[14])
    except (OSError, IndexError, ValueError):
        return None
    return total + sum(t for p in descendants(pid) if (t := cpu_ticks(p)) is not None)
