"""The report's auth section (pure)."""

from __future__ import annotations

import auth
from report_fmt import clip, label, mb, ms, num, pct, rate, span, systems_of, table


def auth_mode(a: dict) -> str:
    return "JWT" if a.get("mode") == "jwt" else "roles via headers, no JWT"


def auth_roles(a: dict) -> list[str]:
    return a.get("roles") or auth.MEASURED


def auth_section(results) -> str:
    a = results.get("auth")
    if not a or (a.get("status", "ok") != "ok" and not a.get("memory")):
        return ""
    out = ["## Auth"]
    order = {s: i for i, s in enumerate(systems_of(results))}
    roles = auth_roles(a)
    rows_ov = sorted(a.get("overhead") or [], key=lambda r: (order.get(r["system"], 99), r["vus"],
                                                             roles.index(r["role"]) if r["role"] in roles else 99))
    target = a.get("target_ratio", auth.TARGET_RATIO)
    if a.get("status", "ok") == "ok":
        out.append("### Overhead: roles with a row filter against admin")
        kept = []
        for s, k in a.get("kept", {}).items():
            per_role = []
            for r, kr in k.get("roles", {}).items():
                counts = list(kr.get("per_user", {}).values())
                per_role.append(f"`{r}` {span(counts, '{:,.0f}')} ({100 * (kr.get('share') or 0):.1f}%)"
                                if counts else f"`{r}` —")
            kept.append(f"{label(s)}: admin sees {num(k.get('total'))} meetups, each user as "
                        + ", as ".join(per_role)
                        + (f"; a request without credentials: {k['anonymous']}" if k.get("anonymous") else ""))
        filters = "; ".join(f"`{r}`: {a.get('filters', {}).get(r, auth.FILTER_TEXT.get(r, '?'))}"
                            for r in auth_roles(a))
        out.append(
            f"**Mode: {auth_mode(a)}.** {a.get('mode_text', '')}"
            + (f" (`{a['jwt_rejected']}`)" if a.get("jwt_rejected") else "") + ".\n\n"
            f"Query `{a.get('query')}` (`bench/k6/queries.js`: a page of {results.get('limit', 50)} meetups, "
            f"`id_gt` and `offset` random, each with its venue), the same document as admin and as each role "
            f"on the same server (config `{a.get('config')}`). Row filters on meetups (venues: none): {filters}. "
            f"Users {', '.join(map(str, a.get('users', [])))}, one "
            + ("token" if a.get("mode") == "jwt" else "header set")
            + " each per role, VU *v* sending user (*v* − 1) mod "
            f"{len(a.get('users', [])) or '?'}. Rows kept (counted through the server with "
            f"`meetups_aggregate`): " + ("; ".join(kept) or "—") + ".\n\n"
            f"Closed loop, {a.get('duration_s', '?')} s per run; {a.get('order', '')}. Latencies in ms; "
            f"*×* is role / admin; target < {target:.2f}× at p50 and p95.")
        if results.get("mode") == "quick":
            out.append("*Quick mode: short runs, one level: indicative only.*")
        if a.get("unavailable"):
            out.append("Not measured:\n\n" + "\n".join(f"- {label(u['system'])}: {clip(u['reason'], 400)}"
                                                       for u in a["unavailable"]))
        rows = []
        for r in rows_ov:
            ad, ro = r.get("admin", {}), r.get("as_role", {})
            failed = max(ad.get("failed_rate") or 0, ro.get("failed_rate") or 0)
            rows.append([label(r["system"]), str(r["vus"]), r["role"], rate(ad.get("rps")), rate(ro.get("rps")),
                         ms(ad.get("p50")), ms(ro.get("p50")),
                         f"{r['p50_ratio']:.2f}×" if r.get("p50_ratio") else "—",
                         ms(ad.get("p95")), ms(ro.get("p95")),
                         f"{r['p95_ratio']:.2f}×" if r.get("p95_ratio") else "—", pct(failed)])
        if rows:
            out.append(table(["system", "VUs", "role", "admin req/s", "role req/s", "admin p50", "role p50",
                              "p50 ×", "admin p95", "role p95", "p95 ×", "failed"], rows))
            verdicts = []
            for s in systems_of(results):
                for role in auth_roles(a):
                    mine = [r for r in rows_ov if r["system"] == s and r["role"] == role]
                    if mine:
                        v, worst = auth.verdict(mine, target)
                        verdicts.append(f"{label(s)} `{role}`: worst {worst:.2f}× → "
                                        f"{'met' if v == 'met' else '**' + v + '**'}"
                                        if worst is not None else f"{label(s)} `{role}`: —")
            out.append(f"Target role/admin < {target:.2f}× at p50 and p95 ({auth_mode(a)}): "
                       + "; ".join(verdicts) + ".")
    elif a.get("status"):
        out.append(f"Overhead not measured: {a['status']}")
    m = a.get("memory")
    if m and m.get("systems"):
        out.append("### Role schemas: idle memory")
        out.append(f"A fresh server with {m.get('roles')} roles in its config (`{m.get('config', '?')}`: each "
                   "with a select permission on every demo table, different columns, row filters — literals, "
                   "session variables, relationships —, limits and aggregates) against the same server "
                   "without a config. Started, one admin query answered, then VmRSS sampled every 0.25 s "
                   f"until idle (RSS within 1% and no CPU used for {m.get('idle_window_s', '?')} s, at most "
                   f"{m.get('idle_max_s', '?')} s). Target: < {m.get('target_mb', auth.TARGET_MEMORY_MB)} MB "
                   f"idle with {m.get('roles')} roles.")
        rows = []
        for s, e in m["systems"].items():
            none, roles = e.get("none", {}), e.get("roles", {})
            v = auth.memory_verdict(roles.get("idle_kb"), m.get("target_mb", auth.TARGET_MEMORY_MB))
            note = "; ".join(f"{k}: {x['error'][:200]}" for k, x in (("no roles", none), ("roles", roles))
                             if x.get("error")) or ("" if none.get("settled", True) and roles.get("settled", True)
                                                    else "not settled within the limit")
            rows.append([label(s), mb(none.get("idle_kb")), mb(roles.get("idle_kb")),
                         ("+" if (e.get("delta_kb") or 0) >= 0 else "") + mb(e.get("delta_kb"))
                         if e.get("delta_kb") is not None else "—",
                         mb(roles.get("hwm_kb")),
                         f"{roles['ready_s']:.1f} / {none.get('ready_s', 0):.1f} s" if roles.get("ready_s") else "—",
                         "met" if v == "met" else "**" + v + "**" if v == "missed" else v, note])
        out.append(table(["system", "no roles", f"{m.get('roles')} roles", "difference",
                          f"peak ({m.get('roles')} roles, start-up)", "ready (roles / none)",
                          f"< {m.get('target_mb', auth.TARGET_MEMORY_MB)} MB", "note"], rows))
    return "\n\n".join(out)
