import os
import re
import unittest

from fake_env import env, steps

import auth
import plan
import qos
import report
import runner

K6_QOS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "k6", "qos.js")


def depth(document: str) -> int:
    """Fields deep: the deepest brace nesting, less the operation's own braces, plus the leaf."""
    d = best = 0
    for ch in re.sub(r"\([^)]*\)", "", document):
        if ch == "{":
            d += 1
            best = max(best, d)
        elif ch == "}":
            d -= 1
    return best


class ConfigTest(unittest.TestCase):
    def test_attack_limits_admin_time_only(self):
        self.assertEqual(qos.attack_config(), {"api_limits": {"time_limit": {"per_role": {"admin": 3}}}})
        self.assertEqual(auth.to_yaml(qos.attack_config()),
                         "api_limits:\n  time_limit:\n    per_role:\n      admin: 3\n")

    def test_overhead_sets_every_limit_for_admin(self):
        limits = qos.overhead_config()["api_limits"]
        # Every key of docs/limits.md's table.
        self.assertEqual(set(limits), {"depth_limit", "node_limit", "root_field_limit", "cost_limit", "batch_limit",
                                       "time_limit", "max_response_bytes", "max_concurrent", "rate_limit"})
        for k, v in limits.items():
            self.assertEqual(v["global"], v["per_role"]["admin"], k)  # admin is exempt unless named
        self.assertEqual(limits["rate_limit"]["per_role"]["admin"],
                         {"max_reqs_per_min": 100_000_000, "unique_params": "IP"})
        y = auth.to_yaml(qos.overhead_config())
        self.assertIn("  rate_limit:\n    global:\n      max_reqs_per_min: 100000000\n      unique_params: \"IP\"\n", y)
        self.assertIn("  max_response_bytes:\n    global: 16777216\n    per_role:\n      admin: 16777216\n", y)
        # Generous: the seed queries are 4 deep and cost 5,050 at limit 50.
        self.assertGreater(qos.GENEROUS["depth_limit"], 4)
        self.assertGreater(qos.GENEROUS["cost_limit"], 50 + 50 * 50 + 50 * 50)
        self.assertEqual(qos.CHECK_DEPTH, qos.GENEROUS["depth_limit"] + 1)

    def test_wso2_rate_limit_per_root_field(self):
        off, on = qos.wso2_config(False), qos.wso2_config(True)
        self.assertNotIn("api_limits", off)
        self.assertEqual(off["tables"], on["tables"])
        self.assertEqual(on["tables"]["venues"]["permissions"]["client"],
                         {"select": {"columns": ["id", "name"], "filter": {}}})
        self.assertEqual(on["api_limits"], {"rate_limit": {"global": {"max_reqs_per_min": qos.WSO2_PER_MIN,
                                                                      "per_root_field": True}}})
        self.assertIn("      client:\n        select:\n          columns: [\"id\", \"name\"]\n          filter: {}\n",
                      auth.to_yaml(on))

    def test_rejection_roles(self):
        c = qos.rejection_config()
        for t in ("venues", "meetups"):
            self.assertEqual(set(c["tables"][t]["permissions"]), set(qos.REJECTION_ROLES))
        rate = c["api_limits"]["rate_limit"]["per_role"]
        self.assertEqual(rate["per_request"], {"max_reqs_per_min": 60})
        self.assertEqual(rate["per_root_field"], {"max_reqs_per_min": 60, "per_root_field": True})
        self.assertEqual(c["api_limits"]["depth_limit"], {"per_role": {"deep": 3}})
        self.assertEqual({r for r, *_ in qos.REJECTIONS.values()}, set(qos.REJECTION_ROLES))
        self.assertEqual(qos.role_headers("deep", "s"), {"x-hasura-admin-secret": "s", "x-hasura-role": "deep"})

    def test_documents(self):
        self.assertEqual(depth(qos.DEEP_QUERY), 4)
        self.assertGreater(depth(qos.DEEP_QUERY), qos.DEEP_LIMIT)
        self.assertLessEqual(depth(qos.CHEAP_QUERY), qos.DEEP_LIMIT)
        self.assertEqual(depth(qos.HEAVY_QUERY), 4)
        for n in (2, 3, 4, 21):
            d = qos.deep_document(n)
            self.assertEqual(depth(d), n, d)
        self.assertEqual(qos.deep_document(4), "{ venues_by_pk(id: 1) { meetups(limit: 1) { venue { id } } } }")
        self.assertEqual(qos.roots_document(1), "query roots1($g1: Int!) { r1: venues(limit: 10, where: "
                                                "{id: {gt: $g1}}) { id name } }")
        self.assertEqual(qos.roots_document(9).count("venues(limit: 10"), 9)

    def test_k6_script_sends_the_same_documents(self):
        with open(K6_QOS) as f:
            js = f.read()
        for text in (qos.HEAVY_QUERY, qos.CHEAP_QUERY, qos.DEEP_QUERY):
            self.assertIn("'" + text + "'", js)
        self.assertIn("'r' + k + ': venues(limit: 10, where: {id: {gt: $g' + k + '}}) { id name }'", js)
        outcomes = re.search(r"export const OUTCOMES = \[([^\]]*)\]", js).group(1)
        self.assertEqual(re.findall(r"'([a-z_]+)'", outcomes), qos.OUTCOMES)
        for _, doc, _, _ in qos.REJECTIONS.values():
            self.assertIn(f"  {doc}: {{", js)
        for d in qos.WSO2_DOCS:
            self.assertIn(f"  {d}: {{", js)


class OrderTest(unittest.TestCase):
    def test_overhead_pairs_alternate(self):
        o = qos.overhead_order(["a", "b"], 3)
        self.assertEqual([(q, v) for q, v, _ in o],
                         [("a", "off"), ("a", "on"), ("a", "on"), ("a", "off"), ("a", "off"), ("a", "on"),
                          ("b", "on"), ("b", "off"), ("b", "off"), ("b", "on"), ("b", "on"), ("b", "off")])
        self.assertEqual([r for _, _, r in o[:6]], [1, 1, 2, 2, 3, 3])
        firsts = [o[i][1] for i in range(0, len(o), 2)]
        self.assertEqual(firsts.count("off"), firsts.count("on"))

    def test_wso2_order(self):
        o = qos.wso2_order(["roots_1", "roots_9"], [50, 200])
        self.assertEqual(len(o), 8)
        self.assertEqual(o[:4], [("roots_1", 50, "off"), ("roots_1", 50, "on"), ("roots_1", 200, "on"),
                                 ("roots_1", 200, "off")])
        self.assertEqual(o[4], ("roots_9", 50, "off"))


def overhead_run(query, variant, rep, ok_rps, p50=2.0, failed=0):
    requests = round(ok_rps * 8 / (1 - failed))
    refused = requests - round(ok_rps * 8)
    return {"query": query, "variant": variant, "rep": rep, "requests": requests, "rps": requests / 8,
            "ok_rps": ok_rps, "outcomes": {"ok": round(ok_rps * 8), **({"overloaded": refused} if refused else {})},
            "p50": p50, "p95": p50 * 3, "p99": p50 * 5, "failed_rate": failed}


class VerdictTest(unittest.TestCase):
    def test_overhead_medians(self):
        runs = [overhead_run("venues", "off", r, x) for r, x in ((1, 1000), (2, 3000), (3, 1100))]
        runs += [overhead_run("venues", "on", r, x, p50=2.2) for r, x in ((1, 1050), (2, 900), (3, 2000))]
        runs.append({"query": "venues", "variant": "on", "rep": 4, "error": "k6 failed"})
        s = qos.overhead_summary(runs)
        self.assertEqual(len(s), 1)
        self.assertEqual((s[0]["off"]["ok_rps"], s[0]["on"]["ok_rps"], s[0]["on"]["runs"]), (1100, 1050, 3))
        self.assertAlmostEqual(s[0]["ratio"], 1050 / 1100)
        self.assertAlmostEqual(s[0]["p50_ratio"], 1.1)
        self.assertEqual(s[0]["paired_ratios"], [1.05, 0.3, 2000 / 1100])
        self.assertAlmostEqual(s[0]["paired_ratio"], 1.05)
        self.assertEqual(qos.overhead_verdict(s)[0], "missed")  # 0.955
        runs2 = [overhead_run("q", "off", 1, 1000), overhead_run("q", "on", 1, 975)]
        self.assertEqual(qos.overhead_verdict(qos.overhead_summary(runs2)), ("met", 0.975))
        # Refusals both servers see are reported, not judged: the ratio is of answers with data.
        runs3 = [overhead_run("q", "off", 1, 1000, failed=0.1), overhead_run("q", "on", 1, 990, failed=0.1)]
        s3 = qos.overhead_summary(runs3)
        self.assertEqual(qos.overhead_verdict(s3), ("met", 0.99))
        self.assertEqual(s3[0]["off"]["refused"], {"overloaded": 889})
        self.assertEqual((s3[0]["off"]["requests"], s3[0]["off"]["failed_rate"]), (8889, 0.1))
        self.assertEqual(qos.overhead_verdict([]), ("n/a", None))

    def test_attack(self):
        a = {"cheap": {"p95": 49.0, "errors": 0}, "rss": {"peak_kb": 299 * 1024}}
        self.assertEqual(qos.attack_verdicts(a), {"cheap": "met", "rss": "met"})
        a = {"cheap": {"p95": 12.0, "errors": 1}, "rss": {"peak_kb": 301 * 1024}}
        self.assertEqual(qos.attack_verdicts(a), {"cheap": "missed", "rss": "missed"})
        self.assertEqual(qos.attack_verdicts({}), {"cheap": "n/a", "rss": "n/a"})

    def test_outcomes(self):
        o = {"ok": 3, "timeout": 40, "other_error": 1, "overloaded": 0}
        self.assertEqual(qos.errors_of(o), 41)
        self.assertEqual(qos.outcomes_text(o), "ok 3, timeout 40, other_error 1")
        self.assertEqual(qos.outcomes_text({"response_too_large": 2}), "response-too-large 2")
        self.assertEqual(qos.outcomes_text({}), "—")

    def test_rejection_row(self):
        r = qos.rejection_row("rate_limited", 10_000, {"rate_limited": 9_990, "ok": 10}, 40, 100)
        self.assertEqual((r["cpu_ms"], r["cpu_ms_per_request"], r["verdict"]), (400.0, 0.04, "met"))
        self.assertAlmostEqual(r["expected_share"], 0.999)
        self.assertAlmostEqual(r["resolution_ms_per_request"], 0.001)
        self.assertEqual(qos.rejection_row("depth_limit", 1000, {"depth_limit_exceeded": 1000}, 20, 100)["verdict"],
                         "missed")  # 0.2 ms each
        self.assertEqual(qos.rejection_row("depth_limit", 1000, {"ok": 1000}, 1, 100)["verdict"],
                         "missed")  # not refused: the limit did not apply
        self.assertNotIn("verdict", qos.rejection_row("accepted", 1000, {"ok": 1000}, 50, 100))
        self.assertNotIn("verdict", qos.rejection_row("not_found", 1000, {"http_error": 1000}, 20, 100))
        rows = [qos.rejection_row("not_found", 1000, {"http_error": 1000}, 5, 100),
                qos.rejection_row("depth_limit", 1000, {"depth_limit_exceeded": 1000}, 8, 100)]
        qos.above_floor(rows)
        self.assertNotIn("above_floor_ms", rows[0])
        self.assertAlmostEqual(rows[1]["above_floor_ms"], 0.03)
        self.assertEqual(qos.allowed_rps(4, 60_000), 250)
        self.assertEqual(qos.cpu_ms(10, 35, 100), 250)

    def test_machine_cpu(self):
        before = [100, 0, 50, 1000, 10, 0, 5, 0, 0, 0]
        after = [250, 0, 100, 1040, 10, 0, 15, 0, 0, 0]  # 210 busy ticks, 40 idle
        m = qos.machine_cpu(before, after, 100)
        self.assertEqual((m["busy_s"], m["total_s"]), (2.1, 2.5))
        self.assertAlmostEqual(m["busy_share"], 0.84)


class PlanTest(unittest.TestCase):
    def test_time_budget(self):
        for cfg, limit in ((plan.full(), 15 * 60), (plan.quick(), 4 * 60)):
            q = [s for s in steps(cfg) if s.scenario == "qos"]
            self.assertEqual(len([s for s in q if s.label.startswith("overhead: ") and " vus=" in s.label]),
                             3 * 2 * cfg.qos_overhead_reps)
            self.assertEqual(len([s for s in q if s.label.startswith("wso2: ") and " vus=" in s.label]),
                             3 * 2 * len(cfg.qos_wso2_levels))
            self.assertLessEqual(sum(s.est_s for s in q), limit, cfg.mode)
        self.assertEqual((plan.quick().qos_overhead_reps, plan.full().qos_overhead_reps), (3, 5))
        self.assertEqual(plan.full().qos_wso2_levels, [50, 100, 200, 500, 1000])
        self.assertEqual(plan.quick().qos_wso2_levels, [50, 200])

    def test_only_qos(self):
        cfg = plan.quick()
        cfg.scenarios = ["qos"]
        st = steps(cfg)
        self.assertEqual({s.scenario for s in st}, {"setup", "qos", "report"})
        labels = [s.label for s in st if s.scenario == "qos"]
        self.assertTrue(labels[0].startswith("attack: 12 VUs loop the unbounded nested query, 10 VUs venues_by_pk, "
                                             "8 s"), labels[0])
        self.assertIn("rejection: depth_limit, 500 req/s for 4 s (after a 1 s warm-up); CPU from /proc/PID/stat",
                      labels)

    def test_runs_wait_for_their_servers(self):
        cfg = plan.quick()
        cfg.scenarios = ["qos"]
        b = runner.Bench(cfg, env(), "/nonexistent", [])
        gated = [s for s in b.steps() if s.scenario == "qos" and s.when is not None]
        self.assertFalse(any(s.when() for s in gated))
        b.qos_urls.update({"off": "x", "on": "y"})
        live = [s.label for s in gated if s.when()]
        self.assertEqual(len(live), 2 + 3 * 2 * cfg.qos_overhead_reps)
        self.assertTrue(all(x.startswith("overhead: ") for x in live))

    def test_no_grafton(self):
        cfg = plan.quick()
        cfg.scenarios, cfg.systems = ["qos"], ["sqlite"]
        q = [s for s in steps(cfg) if s.scenario == "qos"]
        self.assertEqual(len(q), 1)
        self.assertIn("skipped", q[0].label)


RESULTS = {
    "mode": "full", "pool": 20, "systems": [{"id": "grafton"}],
    "qos": {
        "status": "ok", "unavailable": [], "config": {"attack": "config/qos-attack.yaml"},
        "attack": {"heavy_vus": 12, "cheap_vus": 10, "duration_s": 30, "time_limit_s": 3,
                   "heavy_query": qos.HEAVY_QUERY, "cheap_query": qos.CHEAP_QUERY, "target_p95_ms": 50,
                   "target_rss_mb": 300,
                   "cheap": {"requests": 30000, "rps": 1000, "p50": 3.0, "p95": 61.5, "p99": 120, "max": 900,
                             "outcomes": {"ok": 30000}, "errors": 0},
                   "heavy": {"requests": 120, "rps": 4, "p50": 3000, "p95": 3100, "p99": 3200, "max": 3300,
                             "outcomes": {"timeout": 100, "ok": 20}, "errors": 100, "bytes_max": 31457280},
                   "rss": {"idle_kb": 10240, "peak_kb": 204800, "hwm_kb": 210000}, "cpu_s": 20.5,
                   "machine_cpu": {"busy_s": 58.0, "total_s": 60.0, "busy_share": 58 / 60, "k6_s": 10.0,
                                   "cores": 2}},
        "overhead": {"queries": ["venues"], "vus": 50, "duration_s": 8, "reps": 3, "limit": 50,
                     "limits": qos.GENEROUS, "target": 0.03, "order": "alternating",
                     "check": {"document_depth": 21, "answers": {"off": "data", "on": "depth-limit-exceeded"}},
                     "runs": [overhead_run("venues", "off", 1, 3000), overhead_run("venues", "on", 1, 2950, failed=0.1)],
                     "summary": qos.overhead_summary([overhead_run("venues", "off", 1, 3000),
                                                      overhead_run("venues", "on", 1, 2950, failed=0.1)])},
        "wso2": {"docs": qos.WSO2_DOCS, "levels": [50], "duration_s": 8, "role": "client", "per_min": 60000,
                 "document": qos.roots_document(4), "runs": [
                     {"doc": "roots_4", "roots": 4, "vus": 50, "variant": "on", "rps": 9000, "ok_rps": 250,
                      "p90": 9, "p95": 12, "p99": 30, "ok_p95": 15, "rejected_share": 0.972, "failed": 0},
                     {"doc": "roots_4", "roots": 4, "vus": 50, "variant": "off", "rps": 2000, "ok_rps": 2000,
                      "p90": 30, "p95": 40, "p99": 60, "ok_p95": 40, "rejected_share": 0, "failed": 0}]},
        "rejection": {"rate": 1000, "duration_s": 10, "per_min": 60, "clk_tck": 100, "target_ms": 0.1,
                      "idle_cpu_ms_per_s": 0.0, "kinds": {k: v[3] for k, v in qos.REJECTIONS.items()}, "runs": [
                          qos.rejection_row("not_found", 10000, {"http_error": 10000}, 20, 100),
                          qos.rejection_row("rate_limited", 10000, {"rate_limited": 10000}, 30, 100),
                          qos.rejection_row("depth_limit", 10000, {"depth_limit_exceeded": 10000}, 150, 100),
                          qos.rejection_row("accepted", 10000, {"ok": 10000}, 200, 100)]},
    },
}


qos.above_floor(RESULTS["qos"]["rejection"]["runs"])


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.md = report.render(RESULTS)

    def row(self, *starts):
        for line in self.md.splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if line.startswith("|") and cells[:len(starts)] == list(starts):
                return cells
        self.fail(f"no row {starts} in:\n{self.md}")

    def test_sections(self):
        self.assertIn("## Safe under load (qos)", self.md)
        self.assertEqual(self.row("cheap")[1:], ["30,000", "1,000", "3.00", "61.5", "120", "900", "ok 30,000"])
        self.assertEqual(self.row("heavy")[-1], "ok 20, timeout 100")
        self.assertIn("The largest heavy answer with data: 30.0 MB. Over the run the machine's 2 cores were 97% busy "
                      "(58.0 of 60.0 core-seconds): Grafton 20.5 s, k6 10.0 s, the rest (PostgreSQL, and anything "
                      "else running on the machine) 27.5 s.\n", self.md)
        self.assertIn("p95 61.5 ms, 0 errors → **missed**; RSS < 300 MB: 200.0 MB → met.", self.md)
        self.assertEqual(self.row("venues")[1:5], ["3,000", "2,950", "0.983", "0.983 (0.98)"])
        self.assertEqual(self.row("venues")[-1], "— / overloaded 10.0%")
        self.assertIn("lowest 0.983 → met", self.md)
        self.assertIn("off: data, on: depth-limit-exceeded", self.md)
        self.assertEqual(self.row("roots_4", "50", "on")[3:], ["9,000", "250", "9.00", "12.0", "30.0", "15.0",
                                                               "97.2%", "0"])
        self.assertIn("1,000 req/s of roots_1, 250 req/s of roots_4, 111 req/s of roots_9", self.md)
        self.assertEqual(self.row("depth_limit")[3:], ["depth-limit-exceeded 10,000 (100.0% depth-limit-exceeded)",
                                                       "1,500", "0.1500", "±0.0010", "+0.1300", "—", "**missed**"])
        self.assertEqual(self.row("accepted")[-1], "(comparison)")
        self.assertEqual(self.row("not_found")[3:], ["http_error 10,000 (100.0% http_error)", "200", "0.0200",
                                                     "±0.0010", "—", "—", "(comparison)"])

    def test_no_heavy_data(self):
        r = {"qos": {**RESULTS["qos"], "attack": {**RESULTS["qos"]["attack"], "heavy": {
            "requests": 36, "outcomes": {"timeout": 36}, "bytes_max": 120}}}}
        self.assertIn("over the run. No heavy request answered with data. Over the run the machine", report.render(r))

    def test_targets(self):
        self.assertEqual(self.row("qos attack: cheap requests' p95 < 50 ms, no errors")[1:],
                         ["p95 61.5 ms, 0 errors", "**missed**"])
        self.assertEqual(self.row("qos attack: Grafton RSS < 300 MB")[1:], ["200.0 MB", "met"])
        self.assertEqual(self.row("qos: every limit on costs < 3% throughput")[1:],
                         ["on / off 0.983 (ok/s, medians of 3); refused: venues on overloaded 10.0%", "met"])
        self.assertEqual(self.row("qos: CPU per rejected request (rate_limited) < 0.1 ms")[1:], ["0.0300 ms", "met"])

    def test_skipped(self):
        md = report.render({"qos": {"status": "skipped: needs Grafton PG among the systems"}})
        self.assertIn("- qos: skipped: needs Grafton PG among the systems", md)
        self.assertNotIn("## Safe under load", md)


if __name__ == "__main__":
    unittest.main()
