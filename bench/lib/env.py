"""What is on this machine, found without installing or starting anything.

Standard library only.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess

import auth
import plan
from common import (K6_DIR, K6_VERSION, MAKE_SCRIPTS, NODE_DIR, PG5_CLI, PG5_DIR, PG5_NODE, PG5_SRC,
                    POSTGRAPHILE_BIN, POSTGRAPHILE_PINS, ROOT, TOOLS, _out, _pkg_version)


class Env:
    """What is on this machine, found without installing or starting anything."""

    def __init__(self):
        self.root = os.geteuid() == 0
        self.go = shutil.which("go") or ("/usr/local/go/bin/go" if os.access("/usr/local/go/bin/go", os.X_OK) else None)
        self.k6 = os.path.join(TOOLS, "bin", "k6")
        self.has_k6 = os.access(self.k6, os.X_OK)
        self.node, self.npm = shutil.which("node"), shutil.which("npm")
        self.has_postgraphile = os.access(POSTGRAPHILE_BIN, os.X_OK) and _pkg_version(
            "postgraphile-plugin-connection-filter") is not None and os.path.isdir(
            os.path.join(NODE_DIR, "node_modules", "@graphile", "subscriptions-lds"))
        self.has_postgraphile5 = os.access(PG5_NODE, os.X_OK) and os.path.isfile(PG5_CLI) and _same_file(
            os.path.join(PG5_SRC, "package-lock.json"), os.path.join(PG5_DIR, "package-lock.json"))
        self.pgbin = self._pgbin()
        # PostgreSQL's wal2json plugin (PostGraphile's live queries decode the WAL with it).
        self.has_wal2json = bool(self.pgbin) and os.path.exists(
            os.path.join(os.path.dirname(self.pgbin), "lib", "wal2json.so"))
        self.cargo = shutil.which("cargo")
        self.target_dir = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
        self.grafton_given = bool(os.environ.get("GRAFTON"))
        self.grafton = os.path.abspath(os.environ.get("GRAFTON") or os.path.join(self.target_dir, "release", "grafton"))
        self.has_grafton = os.access(self.grafton, os.X_OK)
        self.runuser = shutil.which("runuser")
        self.k6_scripts = all(os.path.isfile(os.path.join(K6_DIR, f)) for f in ("closed.js", "capacity.js"))
        self.qos_js = os.path.isfile(os.path.join(K6_DIR, "qos.js"))
        self.writes_js = all(os.path.isfile(os.path.join(K6_DIR, f)) for f in ("writes.js", "mutations.js"))
        self.check_js = os.path.isfile(os.path.join(K6_DIR, "check.js"))
        self.make_scripts = os.path.isfile(MAKE_SCRIPTS)
        # HAProxy (the scale scenario); installed with apt-get when missing (as root, else sudo).
        self.haproxy = shutil.which("haproxy") or next(
            (p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if os.access(p, os.X_OK)), None)
        self.sudo = shutil.which("sudo")

    @staticmethod
    def _pgbin() -> str | None:
        d = _out(["pg_config", "--bindir"], timeout=3)
        cands = [d] if d else []
        if shutil.which("initdb"):
            cands.append(os.path.dirname(os.path.realpath(shutil.which("initdb"))))
        cands += sorted((f"/usr/lib/postgresql/{v}/bin" for v in os.listdir("/usr/lib/postgresql")), reverse=True) \
            if os.path.isdir("/usr/lib/postgresql") else []
        for c in cands:
            if all(os.access(os.path.join(c, t), os.X_OK) for t in ("initdb", "pg_ctl", "psql", "pgbench")):
                return c
        return None

    def pg(self, tool: str) -> str:
        return os.path.join(self.pgbin, tool)



    def grafton_has_sql(self) -> bool:
        return self.has_grafton and _out([self.grafton, "sql", "--help"], timeout=3) is not None

    def grafton_serve_has(self, flag: str) -> bool | None:
        """Whether `grafton serve --help` lists `flag` (None: no binary to ask)."""
        if not self.has_grafton:
            return None
        try:
            r = subprocess.run([self.grafton, "serve", "--help"], capture_output=True, text=True, timeout=5)
        except (OSError, subprocess.SubprocessError):
            return None
        return flag in r.stdout

    def grafton_has_jwt(self) -> bool | None:
        """Whether `grafton serve` lists --jwt-secret (None: no binary to ask). The run
        itself decides by starting the server with the flag (see Bench.auth_prepare)."""
        return self.grafton_serve_has("--jwt-secret")

    def checks(self, cfg: plan.Config) -> list[tuple[str, str]]:
        """(status, text) per requirement; status ok | install | build | missing | note."""
        c = []
        c.append(("ok", f"python {platform.python_version()}"))
        if self.has_k6:
            c.append(("ok", f"k6 ({self.k6})"))
        elif self.go:
            c.append(("install", f"k6 {K6_VERSION} → bench/.tools/bin (go install, with {self.go})"))
        else:
            c.append(("missing", "go (needed to install k6; distribution golang-go packages are too old: "
                                 "install Go ≥ 1.23 from go.dev)"))
        if "postgraphile" in cfg.systems:
            if self.has_postgraphile:
                c.append(("ok", f"PostGraphile {_pkg_version('postgraphile')} + connection-filter "
                                f"{_pkg_version('postgraphile-plugin-connection-filter')} (bench/.tools/node)"))
            elif self.npm and self.node:
                c.append(("install", f"{' '.join(POSTGRAPHILE_PINS)} → bench/.tools/node (npm)"))
            else:
                c.append(("missing", "node and npm (for PostGraphile)"))
        if "postgraphile5" in cfg.systems:
            if self.has_postgraphile5:
                c.append(("ok", f"PostGraphile {_pkg_version('postgraphile', PG5_DIR)} + connection-filter "
                                f"{_pkg_version('postgraphile-plugin-connection-filter', PG5_DIR)} on Node "
                                f"{_pkg_version('node', PG5_DIR)} (bench/.tools/postgraphile5)"))
            elif self.npm:
                c.append(("install", "bench/peers/postgraphile5 (PostGraphile 5, Node 22 from npm) → "
                                     "bench/.tools/postgraphile5 (npm ci)"))
            else:
                c.append(("missing", "npm (for PostGraphile v5)"))
        c.append(("ok", f"PostgreSQL binaries ({self.pgbin})") if self.pgbin else
                 ("missing", "PostgreSQL server binaries (initdb, pg_ctl, psql, pgbench), e.g. apt-get install postgresql"))
        if self.root:
            c.append(("ok", "runuser (PostgreSQL runs as user postgres)") if self.runuser else
                     ("missing", "runuser (running as root: PostgreSQL must run as an unprivileged user)"))
        if self.grafton_given:
            c.append(("ok" if self.has_grafton else "missing", f"GRAFTON={self.grafton}"))
        elif self.cargo:
            c.append(("build", f"cargo build --release -p grafton (target dir {self.target_dir})"))
        else:
            c.append(("missing", "cargo (to build Grafton), or set GRAFTON=<binary>"))
        if plan.uses_loadgen(cfg):
            c.append(("build", "bench/loadgen, the light load client (cargo build --release -p grafton-bench-loadgen)")
                     if self.cargo else ("missing", "cargo (to build bench/loadgen), or run with --client k6"))
            if not self.node:
                c.append(("missing", "node (bench/loadgen/docs.mjs writes the load client's documents from "
                                     "bench/k6/queries.js), or run with --client k6"))
        c.append(("ok", "bench/k6/closed.js, capacity.js") if self.k6_scripts else
                 ("missing", "bench/k6/closed.js and capacity.js"))
        if "writes" in cfg.scenarios:
            c.append(("ok", "bench/k6/writes.js, mutations.js") if self.writes_js else
                     ("missing", "bench/k6/writes.js and mutations.js"))
        if "auth" in cfg.scenarios:
            jwt = self.grafton_has_jwt()
            c.append(("note", "auth: JWT or role headers, decided when the server starts (is --jwt-secret accepted?)"
                      if jwt is None else "auth: `grafton serve` has --jwt-secret: the roles are measured with JWTs"
                      if jwt else "auth: `grafton serve --help` lists no --jwt-secret: unless the server accepts "
                                  "it, the roles are measured via x-hasura-role/x-hasura-user-id headers "
                                  "(labelled so)"))
            if not any(x in cfg.systems for x in auth.SYSTEMS):
                c.append(("note", "auth: needs grafton or sqlite among the systems: it will be skipped"))
        if "qos" in cfg.scenarios:
            c.append(("ok", "bench/k6/qos.js") if self.qos_js else ("missing", "bench/k6/qos.js"))
            if "grafton" not in cfg.systems:
                c.append(("note", "qos: needs grafton among the systems: it will be skipped"))
        if "events" in cfg.scenarios:
            if "grafton" not in cfg.systems:
                c.append(("note", "events: needs grafton among the systems: it will be skipped"))
            elif not self.node:
                c.append(("missing", "node (the events scenario's webhook, bench/events/receiver.cjs)"))
            else:
                c.append(("ok", "node (the events scenario's webhook, bench/events/receiver.cjs)"))
        if "scale" in cfg.scenarios:
            c += self.scale_checks(cfg)
        if "ceiling" in cfg.scenarios:
            if not self.make_scripts:
                c.append(("note", "bench/pgbench/make_scripts.py not found: the ceiling will be skipped"))
            elif self.has_grafton and not self.grafton_has_sql():
                c.append(("note", "`grafton sql` not available in this binary: the ceiling will be skipped"))
        return c

    def scale_checks(self, cfg: plan.Config) -> list[tuple[str, str]]:
        c = []
        if "grafton" not in cfg.systems:
            return [("note", "scale: needs grafton among the systems: it will be skipped")]
        if self.haproxy:
            c.append(("ok", f"HAProxy ({_out([self.haproxy, '-v']) or self.haproxy})"))
        elif self.root:
            c.append(("install", "haproxy (apt-get install -y haproxy; its own service stopped after)"))
        elif self.sudo:
            c.append(("install", "haproxy (sudo -n apt-get install -y haproxy: needs password-less sudo)"))
        else:
            c.append(("missing", "haproxy (apt-get install haproxy; not root and no sudo)"))
        tools = ("pg_basebackup", "pg_isready")
        if self.pgbin and not all(os.access(self.pg(t), os.X_OK) for t in tools):
            c.append(("missing", f"{' and '.join(tools)} next to initdb ({self.pgbin})"))
        has = self.grafton_serve_has("--read-replica-url")
        if has is False:
            c.append(("note", "scale: `grafton serve --help` lists no --read-replica-url: the replica's lag is "
                              "measured, the comparison with a replica-backed Grafton is not"))
        return c


def _same_file(a: str, b: str) -> bool:
    """Both exist with the same bytes (an install matches the repo's lock file)."""
    try:
        with open(a, "rb") as f, open(b, "rb") as g:
            return f.read() == g.read()
    except OSError:
        return False
