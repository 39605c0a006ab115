"""Waiting for the database to go quiet before a measured run.

A peer pushed past its limit can keep executing its backlog after its clients stop
(PostGraphile v5 ran ~1000 queued complex-filter queries for minutes), and that work
would be charged to whichever run comes next. Each measured run therefore starts only
once PostgreSQL has had no other active client backend for `quiet_s`, waiting at most
`timeout_s`. Standard library only.
"""

from __future__ import annotations

import time
from typing import Callable

# Other client backends running a statement now (the poll's own backend left out).
ACTIVE_SQL = ("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
              "AND backend_type = 'client backend' AND pid <> pg_backend_pid()")


def wait_quiet(active: Callable[[], int | None], timeout_s: float = 120.0, quiet_s: float = 1.0,
               interval_s: float = 0.25, clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], None] = time.sleep) -> dict:
    """Polls `active()` until it has read 0 for `quiet_s` in a row, or `timeout_s` passed.

    Returns {"waited_s", "settled", "active"} (the last count read). A poll that cannot
    answer (None) ends the wait unsettled: the run goes ahead rather than hang on it.
    """
    t0 = clock()
    quiet_since: float | None = None
    n: int | None = None
    while True:
        n = active()
        now = clock()
        if n is None:
            return {"waited_s": now - t0, "settled": False, "active": None}
        if n == 0:
            quiet_since = now if quiet_since is None else quiet_since
            if now - quiet_since >= quiet_s:
                return {"waited_s": now - t0, "settled": True, "active": 0}
        else:
            quiet_since = None
        if now - t0 >= timeout_s:
            return {"waited_s": now - t0, "settled": False, "active": n}
        sleep(interval_s)
