"""The scaling model of the scale scenario (pure; standard library only).

Throughput with N Grafton instances and R read replicas is bounded by whichever
runs out first:

    X(N, R) ≈ min(N × cores_per_instance / grafton_s,       the instances' CPU
                  read_servers × db_cores / db_s,            the databases' CPU
                  client_limit,                              what the client can send
                  shared_cores / (grafton_s + db_s + haproxy_s + client_s))

where *_s are CPU seconds per request (measured: utime + stime over a run divided
by its requests). read_servers is 1 + R when the primary also serves reads; Grafton
sends every read to a replica while one is up (crates/execute/src/replicas.rs), so
the bench passes primary_reads=False and read_servers is R. The last bound applies
when everything shares one machine (this bench: two cores for PostgreSQL, its
replica, the instances, HAProxy and the client): then X × the CPU of one request
summed over every process cannot exceed the cores.
"""

from __future__ import annotations


def predict(instances: int, grafton_s: float | None, db_s: float | None, *, replicas: int = 0,
            cores_per_instance: float = 1.0, db_cores: float = 1.0, primary_reads: bool = True,
            client_limit: float | None = None, shared_cores: float | None = None,
            haproxy_s: float = 0.0, client_s: float = 0.0) -> dict:
    """{"rps": the smallest bound (None when no bound could be computed), "bound": its
    name (grafton | database | client | shared), "bounds": {name: requests/s}}.

    A bound whose cost is unknown (None or 0) is left out rather than guessed."""
    bounds: dict[str, float] = {}
    if grafton_s and instances > 0:
        bounds["grafton"] = instances * cores_per_instance / grafton_s
    read_servers = (1 + replicas) if primary_reads else max(1, replicas)
    if db_s:
        bounds["database"] = read_servers * db_cores / db_s
    if client_limit:
        bounds["client"] = client_limit
    per_request = (grafton_s or 0.0) + (db_s or 0.0) + (haproxy_s or 0.0) + (client_s or 0.0)
    if shared_cores and per_request > 0 and grafton_s and db_s:
        bounds["shared"] = shared_cores / per_request
    if not bounds:
        return {"rps": None, "bound": None, "bounds": {}}
    bound = min(bounds, key=bounds.get)
    return {"rps": bounds[bound], "bound": bound, "bounds": bounds}


def client_limit(client_s: float | None, client_cores: float = 1.0) -> float | None:
    """What a client of `client_cores` cores spending `client_s` per request can send
    (bench/loadgen runs one thread)."""
    return client_cores / client_s if client_s else None
