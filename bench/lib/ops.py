"""The operations scenario (issue 13): what observability costs, and how fast a
schema reload is.

- overhead: the seed queries' closed-loop throughput on two Grafton PG servers side
  by side, "off" (no metrics, no traces) and "on" (metrics, and traces exported at
  SAMPLING to a real OpenTelemetry Collector), in alternating pairs (qos.overhead_order),
  judged by qos.overhead_summary/overhead_verdict against TARGET_OVERHEAD.
- reload: RELOADS calls of `reload_metadata` on the "on" server; each call's wall time
  and the server's own `schema reloaded` elapsed_ms.
- console: the bytes the console embeds in the binary (console/dist)."""

import json
import re
import os
import statistics

TARGET_OVERHEAD = 0.03       # metrics and 1% tracing cost at most 3% of throughput
SAMPLING = 0.01
RELOADS = 20
TARGET_RELOAD_MS = 100
TARGET_CONSOLE_MB = 3

# Flags of each variant (qos.VARIANTS: "off", "on"); the endpoint is filled in.
OFF_FLAGS = ["--metrics", "false"]


def on_flags(endpoint: str) -> list[str]:
    # OPS_CALIBRATE=1: the "on" server is a second "off" one, to see what two identical
    # servers side by side differ by (the method's resolution).
    if os.environ.get("OPS_CALIBRATE") == "1":
        return list(OFF_FLAGS)
    return ["--otlp-endpoint", endpoint, "--otlp-sampling-ratio", str(SAMPLING)]


def collector_endpoint(log_text: str) -> str | None:
    """The collector's OTLP/HTTP address from its JSON log, once it is ready."""
    if "Everything is ready" not in log_text:
        return None
    for line in log_text.splitlines():
        if "Starting HTTP server" in line:
            try:
                return "http://" + json.loads(line)["endpoint"]
            except (ValueError, KeyError):
                continue
    return None


def reload_ms(log_text: str) -> list[float]:
    """The elapsed_ms of each `schema reloaded` line of a Grafton log (text format)."""
    out = []
    plain = re.sub(r"\x1b\[[0-9;]*m", "", log_text)  # colours, should a log have them
    for line in plain.splitlines():
        if "schema reloaded" in line and "elapsed_ms=" in line:
            value = line.split("elapsed_ms=", 1)[1].split()[0]
            try:
                out.append(float(value))
            except ValueError:
                continue
    return out


def reload_summary(wall_ms: list[float], server_ms: list[float]) -> dict:
    def stats(xs):
        return {"n": len(xs), "median": round(statistics.median(xs), 2), "max": round(max(xs), 2)} if xs else None
    s = {"wall_ms": stats(wall_ms), "server_ms": stats(server_ms), "target_ms": TARGET_RELOAD_MS}
    worst = (s["wall_ms"] or {}).get("median")
    s["verdict"] = "n/a" if worst is None else "met" if worst < TARGET_RELOAD_MS else "missed"
    return s


def console_bytes(repo: str) -> dict:
    dist = os.path.join(repo, "console", "dist")
    files = {f: os.path.getsize(os.path.join(dist, f)) for f in sorted(os.listdir(dist))} if os.path.isdir(dist) else {}
    total = sum(files.values())
    return {"files": files, "embedded_bytes": total, "target_mb": TARGET_CONSOLE_MB,
            "verdict": "n/a" if not files else "met" if total < TARGET_CONSOLE_MB * 1024 * 1024 else "missed"}


def cpu_summary(runs: list[dict]) -> list[dict]:
    """Per query the median over the repetitions of the server's CPU per request (µs)
    for each variant, and on / off. CPU per request is what observability adds; it
    is steadier than throughput on a shared machine."""
    out = []
    for q in dict.fromkeys(r["query"] for r in runs):
        row = {"query": q}
        for v in ("off", "on"):
            xs = [r["cpu_us_per_req"] for r in runs
                  if r["query"] == q and r["variant"] == v and r.get("cpu_us_per_req")]
            row[v] = statistics.median(xs) if xs else None
        row["ratio"] = row["on"] / row["off"] if row["on"] and row["off"] else None
        out.append(row)
    return out


def section(results: dict) -> str:
    """The summary's markdown for the ops scenario ("" when it did not run)."""
    o = results.get("ops")
    if not o:
        return ""
    if isinstance(o.get("status"), str) and o["status"].startswith("skipped"):
        return f"## Operations (ops)\n\n{o['status']}\n"
    out = ["## Operations (ops): what observability costs, how fast a reload is", ""]
    ov = o.get("overhead") or {}
    if ov.get("error"):
        out.append(f"Overhead not measured: {ov['error']}.")
    rows = []
    for r in ov.get("summary") or []:
        off, on = r.get("off", {}), r.get("on", {})
        fmt = lambda v: f"{v:,.0f}" if v else "—"  # noqa: E731
        rows.append(f"| {r['query']} | {fmt(off.get('ok_rps'))} | {fmt(on.get('ok_rps'))} | "
                    f"{r['ratio']:.3f} | " if r.get("ratio") else f"| {r['query']} | — | — | — | ")
        rows[-1] += (f"{r['paired_ratio']:.3f} |" if r.get("paired_ratio") else "— |")
    if rows:
        out.append(f"Seed queries, closed loop, {ov.get('vus')} VUs, {ov.get('duration_s')} s per run, "
                   f"{ov.get('reps')} alternating pairs. *off*: `{ov.get('off')}`; *on*: {ov.get('on')}.")
        out.append("")
        out.append("| query | off ok/s | on ok/s | on / off | paired on / off |")
        out.append("|---|---|---|---|---|")
        out += rows
        ratios = [r["ratio"] for r in ov.get("summary") or [] if r.get("ratio")]
        if ratios and str(ov.get("on", "")).startswith("calibration"):
            out.append("")
            out.append(f"Calibration, no target: two identical servers side by side differ by up to "
                       f"{100 * max(abs(1 - r) for r in ratios):.1f}% in throughput: the method's resolution.")
        elif ratios:
            worst = min(ratios)
            verdict = "met" if worst >= 1 - ov.get("target", TARGET_OVERHEAD) else "missed"
            out.append("")
            out.append(f"Target: throughput with metrics and {ov.get('sampling', SAMPLING):.0%} tracing within "
                       f"{100 * ov.get('target', TARGET_OVERHEAD):.0f}% of without: lowest on / off "
                       f"{worst:.3f} → **{verdict}**.")
    cpu = cpu_summary(ov.get("runs") or [])
    if any(r.get("ratio") for r in cpu):
        out.append("")
        out.append("Grafton's CPU per request (utime + stime from /proc over each run, divided by the "
                   "requests answered; median over the repetitions):")
        out.append("")
        out.append("| query | off µs/req | on µs/req | on / off |")
        out.append("|---|---|---|---|")
        for r in cpu:
            out.append(f"| {r['query']} | {r['off'] or 0:.1f} | {r['on'] or 0:.1f} | "
                       + (f"{r['ratio']:.3f} |" if r.get("ratio") else "— |"))
    rl = o.get("reload")
    if rl:
        w, s = rl.get("wall_ms") or {}, rl.get("server_ms") or {}
        out.append("")
        out.append(f"Reload (`reload_metadata`, {w.get('n', 0)} calls on the bench schema): median "
                   f"{w.get('median', '—')} ms per call (max {w.get('max', '—')}), of which introspection and "
                   f"build {s.get('median', '—')} ms (Grafton's own `schema reloaded` elapsed). Target < "
                   f"{rl.get('target_ms')} ms: **{rl.get('verdict')}**.")
    c = o.get("console")
    if c:
        out.append("")
        out.append(f"Console: {c['embedded_bytes'] / 1e6:.2f} MB embedded ("
                   + ", ".join(f"{k} {v:,} B" for k, v in c["files"].items())
                   + f"); the binary is {(o.get('binary_bytes') or 0) / 1e6:.1f} MB. Target < "
                   f"{c['target_mb']} MB: **{c['verdict']}**.")
    return "\n".join(out) + "\n"
