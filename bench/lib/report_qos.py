"""The report's qos section and targets (pure)."""

from __future__ import annotations

import qos
from report_fmt import clip, mb, met_text, ms, num, rate, share, span, table


def qos_section(results) -> str:
    q = results.get("qos")
    if not q or q.get("status", "ok") != "ok":
        return ""
    out = ["## Safe under load (qos)",
           "Each part runs on Grafton PG servers started for it (pool "
           f"{results.get('pool', 20)}, `--naming phrag`, the config files in `config/`), next to nothing else "
           "under load; the database is the suite's."]
    if results.get("mode") == "quick":
        out.append("*Quick mode: short runs, few levels: indicative only.*")
    if q.get("unavailable"):
        out.append("Not measured:\n\n" + "\n".join(f"- {u['server']}: {clip(u['reason'], 400)}"
                                                   for u in q["unavailable"]))
    a = q.get("attack")
    if a:
        out.append("### Attack: an unbounded nested query beside cheap requests")
        out.append(f"For {a.get('duration_s')} s, {a.get('heavy_vus')} VUs loop `{a.get('heavy_query')}` (as admin: "
                   "no row limit; every meetup with its members) while "
                   f"{a.get('cheap_vus')} VUs loop `{a.get('cheap_query')}` (a random id), closed loop, against a "
                   f"fresh server whose only limit is admin's `time_limit` of {a.get('time_limit_s')} s "
                   f"(`{q.get('config', {}).get('attack', 'config/qos-attack.yaml')}`). Grafton's VmRSS sampled "
                   "every 0.25 s. Latencies in ms; outcomes by error code.")
        if a.get("error"):
            out.append(f"Not measured: {a['error']}.")
        else:
            rows = []
            for k in ("cheap", "heavy"):
                g = a.get(k) or {}
                rows.append([k, num(g.get("requests")), rate(g.get("rps")), ms(g.get("p50")), ms(g.get("p95")),
                             ms(g.get("p99")), ms(g.get("max")), qos.outcomes_text(g.get("outcomes") or {})])
            out.append(table(["workload", "requests", "req/s", "p50", "p95", "p99", "max", "outcomes"], rows))
            rss = a.get("rss") or {}
            v = a.get("verdicts") or qos.attack_verdicts(a)
            heavy = a.get("heavy") or {}
            out.append(
                f"Grafton's RSS: idle {mb(rss.get('idle_kb'))}, peak {mb(rss.get('peak_kb'))} (VmHWM "
                f"{mb(rss.get('hwm_kb'))}); CPU {a.get('cpu_s', '—')} s over the run. "
                + (f"The largest heavy answer with data: {mb(heavy['bytes_max'] / 1024)}."
                   if (heavy.get("outcomes") or {}).get("ok") and heavy.get("bytes_max") else
                   "No heavy request answered with data.")
                + (machine_note(a) + "\n\n")
                + f"Targets: cheap p95 < {a.get('target_p95_ms', qos.TARGET_CHEAP_P95_MS):.0f} ms with no errors: "
                f"p95 {ms((a.get('cheap') or {}).get('p95'))} ms, {(a.get('cheap') or {}).get('errors')} errors → "
                f"{met_text(v.get('cheap', 'n/a'))}; RSS < {a.get('target_rss_mb', qos.TARGET_RSS_MB):.0f} MB: "
                f"{mb(rss.get('peak_kb'))} → {met_text(v.get('rss', 'n/a'))}.")
            if a.get("unexpected"):
                out.append("Unexpected answers (first of each kind):\n\n" + "\n".join(
                    f"- `{clip(x, 300)}`" for x in a["unexpected"]))
    o = q.get("overhead")
    if o:
        out.append("### Overhead of the limits")
        lim = ", ".join(f"`{k}` {json_brief(v)}" for k, v in (o.get("limits") or {}).items())
        out.append(f"The seed queries (limit {o.get('limit', 50)}) as admin, closed loop, {o.get('vus')} VUs × "
                   f"{o.get('duration_s')} s, on two fresh servers side by side: limits *off* (no config) and "
                   f"*on*: every limit configured for every role and for admin, generously so none triggers "
                   f"({lim}). {o.get('order', '')}; {o.get('reps')} repetitions. Before measuring, a "
                   f"{(o.get('check') or {}).get('document_depth', '?')}-deep document: "
                   + ", ".join(f"{k}: {v}" for k, v in ((o.get('check') or {}).get('answers') or {}).items())
                   + ".")
        if o.get("error"):
            out.append(f"Not measured: {o['error']}.")
        rows = []
        for r in o.get("summary") or []:
            off, on = r.get("off", {}), r.get("on", {})
            rows.append([r["query"], rate(off.get("ok_rps")), rate(on.get("ok_rps")),
                         f"{r['ratio']:.3f}" if r.get("ratio") else "—",
                         (f"{r['paired_ratio']:.3f} ({span(r['paired_ratios'], '{:.2f}')})"
                          if r.get("paired_ratio") else "—"), ms(off.get("p50")), ms(on.get("p50")),
                         ms(off.get("p95")), ms(on.get("p95")), f"{refused_text(off)} / {refused_text(on)}"])
        if rows:
            out.append(table(["query", "off ok/s", "on ok/s", "on / off", "paired (range)", "off p50", "on p50",
                              "off p95", "on p95", "refused (off / on)"], rows))
            out.append("*ok/s*: answers with data per second, the median over the repetitions; *on / off*: "
                       "the medians' ratio (the target's figure); *paired*: the median of each repetition's own "
                       "on / off (the two runs of a pair are back to back), with the range over the repetitions. "
                       "Latencies (ms) of the answers with data. *refused*: the share of answers without data, by "
                       "code, over all repetitions.")
            v, worst = qos.overhead_verdict(o.get("summary") or [], o.get("target", qos.TARGET_OVERHEAD))
            per_rep = {}
            for r in o.get("runs", []):
                per_rep.setdefault((r["query"], r["variant"]), []).append(rate(r.get("ok_rps")))
            out.append("Each repetition's ok/s: " + "; ".join(
                f"{qq} {vv} {', '.join(xs)}" for (qq, vv), xs in per_rep.items()) + ".")
            out.append(f"Target: with every limit on, throughput within {100 * o.get('target', qos.TARGET_OVERHEAD):.0f}% "
                       f"(on / off ≥ {1 - o.get('target', qos.TARGET_OVERHEAD):.2f}): lowest "
                       f"{worst:.3f} → {met_text(v)}." if worst is not None else "Target: —")
    w = q.get("wso2")
    if w:
        out.append("### The WSO2 shape: 1, 4 and 9 root fields, with and without a rate limit per root field")
        out.append(f"Documents of 1, 4 and 9 aliased root fields (`{w.get('document', '')}` for 4), closed loop, "
                   f"{w.get('duration_s')} s per run, sent as role `{w.get('role')}` (admin secret + "
                   f"`x-hasura-role`). *on*: `rate_limit: {{global: {{max_reqs_per_min: {w.get('per_min'):,}, "
                   "per_root_field: true}}` (one allowance for the role: "
                   f"{w.get('per_min', 0) / 60:,.0f} root fields/s, so at most "
                   + ", ".join(f"{qos.allowed_rps(n, w.get('per_min', qos.WSO2_PER_MIN)):,.0f} req/s of {d}"
                               for d, n in (w.get("docs") or {}).items())
                   + "); before each *on* run k6's setup() spends the allowance (a minute's worth may go at "
                     "once), so the run sees the steady rate. *answered*: every answer per second, 429s included; "
                     "*ok*: answers with data. Latencies (ms) over every answer; *ok p95* over those with data.")
        if w.get("error"):
            out.append(f"Not measured: {w['error']}.")
        rows = []
        for r in sorted(w.get("runs", []), key=lambda r: (r.get("roots", 0), r["vus"], r["variant"])):
            if r.get("error"):
                rows.append([r["doc"], str(r["vus"]), r["variant"], "—", "—", "—", "—", "—", "—", "—", r["error"]])
                continue
            rows.append([r["doc"], str(r["vus"]), r["variant"], rate(r.get("rps")), rate(r.get("ok_rps")),
                         ms(r.get("p90")), ms(r.get("p95")), ms(r.get("p99")), ms(r.get("ok_p95")),
                         share(r.get("rejected_share")),
                         num(r.get("failed"))])
        if rows:
            out.append(table(["document", "VUs", "rate limit", "answered/s", "ok/s", "p90", "p95", "p99", "ok p95",
                              "429 share", "other failures"], rows))
    rj = q.get("rejection")
    if rj:
        out.append("### Cost of a rejection")
        out.append(f"Grafton's CPU time (utime + stime of the process, `/proc/PID/stat`, {rj.get('clk_tck')} ticks/s) "
                   f"over a k6 run of {rj.get('rate')} requests/s for {rj.get('duration_s')} s (constant arrival "
                   "rate; a 1 s warm-up first, which also spends the rate-limited roles' allowance of "
                   f"{rj.get('per_min')}/min), divided by the requests sent. Idle, the server used "
                   f"{rj.get('idle_cpu_ms_per_s', '—')} ms of CPU per second. PostgreSQL's own CPU (the accepted "
                   "requests' queries) is not in these figures. Target: < "
                   f"{rj.get('target_ms', qos.TARGET_REJECT_CPU_MS)} ms per rejected request.")
        if rj.get("error"):
            out.append(f"Not measured: {rj['error']}.")
        rows = []
        for r in rj.get("runs", []):
            if r.get("error"):
                rows.append([r["kind"], "—", "—", "—", "—", "—", "—", "—", "—", r["error"]])
                continue
            per = r.get("cpu_ms_per_request")
            expected = r.get("expected", "")
            expected = expected.replace("_", "-") if expected in qos.OUTCOMES[1:6] else expected
            rows.append([r["kind"], num(r.get("requests")), rate(r.get("rps")),
                         f"{qos.outcomes_text(r.get('outcomes') or {})} ({share(r.get('expected_share'))} {expected})",
                         f"{r.get('cpu_ms', 0):,.0f}", f"{per:.4f}" if per is not None else "—",
                         f"±{r['resolution_ms_per_request']:.4f}" if r.get("resolution_ms_per_request") else "—",
                         f"{r['above_floor_ms']:+.4f}" if r.get("above_floor_ms") is not None else "—",
                         ms(r.get("p50")), met_text(r["verdict"]) if r.get("verdict") else "(comparison)"])
        if rows:
            out.append(table(["kind", "requests", "req/s", "outcomes", "CPU ms", "CPU ms / request",
                              "resolution", "above the 404", "p50 ms",
                              f"< {rj.get('target_ms', qos.TARGET_REJECT_CPU_MS)} ms"], rows))
            out.append("\n".join(f"- `{k}`: {t}" for k, t in (rj.get("kinds") or {}).items()))
    return "\n\n".join(out)


def machine_note(a: dict) -> str:
    m = a.get("machine_cpu")
    if not m or m.get("busy_share") is None:
        return ""
    rest = m["busy_s"] - (a.get("cpu_s") or 0) - (m.get("k6_s") or 0)
    return (f" Over the run the machine's {m.get('cores', '?')} cores were {100 * m['busy_share']:.0f}% busy "
            f"({m['busy_s']:.1f} of {m['total_s']:.1f} core-seconds): Grafton {a.get('cpu_s', '—')} s, k6 "
            f"{m.get('k6_s', '—')} s, the rest (PostgreSQL, and anything else running on the machine) {rest:.1f} s.")


def refused_text(v: dict) -> str:
    """"overloaded 7.9%" from a variant's refusals over its requests."""
    refused, n = v.get("refused") or {}, v.get("requests") or 0
    if not n or not any(refused.values()):
        return "—"
    return ", ".join(f"{qos.outcomes_text({k: c}).rsplit(' ', 1)[0]} {share(c / n)}"
                     for k, c in refused.items() if c)


def json_brief(v) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {json_brief(x)}" for k, x in v.items()) + "}"
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


def qos_targets(results) -> list[list[str]]:
    q = results.get("qos") or {}
    rows = []
    a = q.get("attack") or {}
    if a.get("cheap"):
        v = qos.attack_verdicts(a)
        rows.append([f"qos attack: cheap requests' p95 < {a.get('target_p95_ms', qos.TARGET_CHEAP_P95_MS):.0f} ms, "
                     "no errors",
                     f"p95 {ms(a['cheap'].get('p95'))} ms, {a['cheap'].get('errors')} errors", met_text(v["cheap"])])
        rows.append([f"qos attack: Grafton RSS < {a.get('target_rss_mb', qos.TARGET_RSS_MB):.0f} MB",
                     mb((a.get("rss") or {}).get("peak_kb")), met_text(v["rss"])])
    o = q.get("overhead") or {}
    if o.get("summary"):
        v, worst = qos.overhead_verdict(o["summary"], o.get("target", qos.TARGET_OVERHEAD))
        refused = [f"{r['query']} {x} {refused_text(r[x])}" for r in o["summary"] for x in qos.VARIANTS
                   if refused_text(r[x]) != "—"]
        rows.append([f"qos: every limit on costs < {100 * o.get('target', qos.TARGET_OVERHEAD):.0f}% throughput",
                     (f"on / off {span([r['ratio'] for r in o['summary'] if r.get('ratio')], '{:.3f}')} "
                      f"(ok/s, medians of {o.get('reps')})" if worst is not None else "—")
                     + ("; refused: " + ", ".join(refused) if refused else ""),
                     met_text(v)])
    for r in (q.get("rejection") or {}).get("runs", []):
        if r.get("verdict") and r.get("cpu_ms_per_request") is not None:
            rows.append([f"qos: CPU per rejected request ({r['kind']}) < "
                         f"{q['rejection'].get('target_ms', qos.TARGET_REJECT_CPU_MS)} ms",
                         f"{r['cpu_ms_per_request']:.4f} ms", met_text(r["verdict"])])
    return rows
