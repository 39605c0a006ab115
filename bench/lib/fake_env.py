"""Test helper: a runner environment with everything installed, and the steps a
config plans under it (no process is started)."""

import types

import runner


def env(**kw):
    """The parts of runner.Env that Bench.steps() reads: everything installed and built."""
    e = types.SimpleNamespace(has_k6=True, has_postgraphile=True, has_postgraphile5=True, grafton_given=True, has_grafton=True,
                              check_js=True, has_wal2json=True, haproxy="/usr/sbin/haproxy", root=True)
    e.__dict__.update(kw)
    return e


def steps(cfg):
    """The steps `cfg` plans, with everything installed."""
    return runner.Bench(cfg, env(), "/nonexistent", []).steps()
