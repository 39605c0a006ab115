import base64
import hashlib
import hmac
import json
import unittest

from fake_env import env, steps

import auth
import plan
import report
import runner


def unb64(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


class TokenTest(unittest.TestCase):
    def test_rfc7515_hs256_vector(self):
        # RFC 7515, appendix A.1: the HMAC SHA-256 example.
        key = unb64("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow")
        signing_input = (b"eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQog"
                         b"Imh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ")
        self.assertEqual(auth.hs256(signing_input, key), "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")

    def test_token_carries_hasura_claims(self):
        key = "k" * 43
        tok = auth.jwt_hs256(auth.claims(10001, now=1_700_000_000), key)
        head, body, sig = tok.split(".")
        self.assertNotIn("=", tok)
        self.assertEqual(json.loads(unb64(head)), {"alg": "HS256", "typ": "JWT"})
        expect = base64.urlsafe_b64encode(hmac.new(key.encode(), f"{head}.{body}".encode(), hashlib.sha256)
                                          .digest()).rstrip(b"=").decode()
        self.assertEqual(sig, expect)
        p = json.loads(unb64(body))
        self.assertEqual(p["exp"] - p["iat"], auth.TOKEN_TTL_S)
        self.assertEqual(p["https://hasura.io/jwt/claims"], {
            "x-hasura-allowed-roles": ["user"], "x-hasura-default-role": "user", "x-hasura-user-id": "10001"})
        self.assertEqual(json.loads(auth.jwt_secret_json(key)), {"type": "HS256", "key": key})

    def test_header_sets(self):
        users = auth.user_ids(100_000)
        self.assertEqual(users, [10000, 10001, 10002, 10003])
        self.assertEqual(auth.user_ids(5, 2), [1, 2])
        self.assertEqual(auth.header_sets("jwt", "admin", users, admin_secret="s"), [{"x-hasura-admin-secret": "s"}])
        self.assertEqual(auth.header_sets("headers", "admin", users), [{}])
        self.assertEqual(auth.header_sets("headers", "user_rel", users)[1],
                         {"x-hasura-role": "user_rel", "x-hasura-user-id": "10001"})
        jwt = auth.header_sets("jwt", "user_rel", users, key="k" * 40, now=5)
        self.assertEqual(len(jwt), 4)
        self.assertTrue(all(h["Authorization"].startswith("Bearer ey") for h in jwt))
        self.assertEqual(len({h["Authorization"] for h in jwt}), 4)
        p = json.loads(unb64(jwt[0]["Authorization"].split(".")[1]))["https://hasura.io/jwt/claims"]
        self.assertEqual((p["x-hasura-default-role"], p["x-hasura-allowed-roles"]), ("user_rel", ["user_rel"]))

    def test_rejected_flag(self):
        clap = ("error: unexpected argument '--jwt-secret' found\n\n  tip: to pass '--jwt-secret' as a value, "
                "use '-- --jwt-secret'\n\nUsage: grafton serve [OPTIONS] --database-url <DATABASE_URL>\n")
        self.assertTrue(auth.rejects_jwt_flags(clap))
        self.assertTrue(auth.rejects_jwt_flags("error: unexpected argument '--admin-secret' found"))
        self.assertFalse(auth.rejects_jwt_flags("error: invalid value for '--jwt-secret': key too short"))
        self.assertFalse(auth.rejects_jwt_flags("Grafton is serving GraphQL at http://127.0.0.1:1/v1/graphql"))


class ConfigTest(unittest.TestCase):
    def test_auth_config_yaml(self):
        y = auth.to_yaml(auth.auth_config())
        self.assertIn("      user:\n        select:\n          columns: [\"id\", \"title\", \"start_at\", "
                      "\"venue_id\"]\n          filter:\n            venue_id:\n"
                      "              _gt: \"X-Hasura-User-Id\"\n          allow_aggregations: true\n", y)
        self.assertIn("      user_rel:\n        select:\n          columns: [\"id\", \"title\", \"start_at\", "
                      "\"venue_id\"]\n          filter:\n            venue:\n              id:\n"
                      "                _gt: \"X-Hasura-User-Id\"\n          allow_aggregations: true\n", y)
        self.assertIn("  venues:\n    permissions:\n      user:\n        select:\n", y)
        perms = auth.auth_config()["tables"]["meetups"]["permissions"]
        self.assertEqual(auth.brief(perms["user_rel"]["select"]["filter"]), "{venue: {id: {_gt: X-Hasura-User-Id}}}")
        self.assertEqual(auth.brief(perms["user"]["select"]["filter"]), "{venue_id: {_gt: X-Hasura-User-Id}}")

    def test_yaml_quotes_what_yaml_would_not_read_as_a_string(self):
        self.assertEqual(auth.to_yaml({"a": {"null": False, "b c": "x", "n": [1, {"d": None}], "e": {}}}),
                         'a:\n  "null": false\n  "b c": "x"\n  "n": [1, {"d": null}]\n  e: {}\n')

    def test_ten_roles_on_every_table(self):
        c = auth.roles_config()
        self.assertEqual(set(c["tables"]), set(auth.TABLES))
        for t, tc in c["tables"].items():
            perms = tc["permissions"]
            self.assertEqual(len(perms), 10, t)
            filters = {json.dumps(p["select"]["filter"], sort_keys=True) for p in perms.values()}
            self.assertGreaterEqual(len(filters), 3, t)
            for p in perms.values():
                cols = p["select"]["columns"]
                if cols != "*":
                    self.assertTrue(set(auth.TABLES[t][:auth.KEYS[t]]) <= set(cols), (t, cols))
        y = auth.to_yaml(c)
        self.assertIn("_eq", y)  # Hasura's spelling, whatever the naming
        self.assertIn('_is_null: false', y)
        self.assertEqual(y.count("select:"), 70)


class RunsTest(unittest.TestCase):
    def test_mirrored_order(self):
        order = auth.run_order([1, 10], ["grafton", "sqlite"])
        self.assertEqual(len(order), 2 * 2 * 6)
        self.assertEqual(order[:6], [("grafton", 1, "admin", 1), ("grafton", 1, "user", 1),
                                     ("grafton", 1, "user_rel", 1), ("grafton", 1, "user_rel", 2),
                                     ("grafton", 1, "user", 2), ("grafton", 1, "admin", 2)])
        self.assertEqual(order[6][0], "sqlite")
        self.assertEqual(order[12:18], [("sqlite", 10, "user_rel", 1), ("sqlite", 10, "user", 1),
                                        ("sqlite", 10, "admin", 1), ("sqlite", 10, "admin", 2),
                                        ("sqlite", 10, "user", 2), ("sqlite", 10, "user_rel", 2)])
        for s, v in {(s, v) for s, v, _, _ in order}:
            whos = [w for s2, v2, w, _ in order if (s2, v2) == (s, v)]
            self.assertEqual(sorted(whos), sorted(auth.WHO * 2))

    def test_three_rounds_keep_mirroring(self):
        order = auth.run_order([1], ["grafton"], reps=3)
        self.assertEqual([(w, rep) for _, _, w, rep in order],
                         [("admin", 1), ("user", 1), ("user_rel", 1), ("user_rel", 2), ("user", 2), ("admin", 2),
                          ("admin", 3), ("user", 3), ("user_rel", 3)])
        # The median of three runs, not their mean: one disturbed run does not move it.
        runs = [{"system": "grafton", "vus": 1, "who": w, "rep": rep, "rps": 100, "p50": p50, "p95": 2 * p50,
                 "failed_rate": 0} for (_, _, w, rep), p50 in zip(order, (1.0, 1.0, 1.0, 9.0, 1.1, 1.0, 1.0, 1.0, 1.1))]
        rel = [r for r in auth.overhead(runs) if r["role"] == "user_rel"][0]
        self.assertEqual((rel["as_role"]["p50"], rel["as_role"]["runs"], rel["p50_ratio"]), (1.1, 3, 1.1))

    def test_overhead_and_verdict(self):
        runs = [{"system": "grafton", "vus": 10, "who": w, "rep": i, "rps": 1000, "p50": p50, "p95": p95,
                 "failed_rate": 0} for w, i, p50, p95 in
                (("admin", 1, 2.0, 4.0), ("user", 1, 2.1, 4.6), ("user", 2, 2.3, 4.2), ("admin", 2, 2.0, 4.0),
                 ("user_rel", 1, 3.0, 6.0), ("user_rel", 2, 3.0, 6.0))]
        runs.append({"system": "grafton", "vus": 50, "who": "admin", "rep": 1, "error": "k6 failed"})
        runs.append({"system": "grafton", "vus": 50, "who": "user", "rep": 1, "error": "k6 failed"})
        ov = auth.overhead(runs)
        self.assertEqual([(r["system"], r["vus"], r["role"]) for r in ov],
                         [("grafton", 10, "user"), ("grafton", 10, "user_rel"), ("grafton", 50, "user")])
        r = ov[0]
        self.assertAlmostEqual(r["as_role"]["p50"], 2.2)
        self.assertEqual(r["admin"]["runs"], 2)
        self.assertAlmostEqual(r["p50_ratio"], 1.1)
        self.assertAlmostEqual(r["p95_ratio"], 1.1)
        self.assertAlmostEqual(ov[1]["p50_ratio"], 1.5)
        self.assertIsNone(ov[2]["p50_ratio"])
        user = [x for x in ov if x["role"] == "user"]
        self.assertEqual(auth.verdict(user)[0], "missed")  # 1.10 is not < 1.10
        self.assertEqual(auth.verdict(user, 1.2)[0], "met")
        ov[0]["as_role"]["failed_rate"] = 0.01
        self.assertEqual(auth.verdict(user, 1.2)[0], "missed")
        self.assertEqual(auth.verdict([]), ("n/a", None))

    def test_settled(self):
        self.assertFalse(auth.settled([(1000, 5)] * 3, 4))
        self.assertTrue(auth.settled([(900, 1)] + [(1000, 5)] * 4, 4))
        self.assertFalse(auth.settled([(1000, 5), (1000, 5), (1000, 7), (1000, 7)], 4))  # still working
        self.assertFalse(auth.settled([(1000, 5), (1020, 5), (1000, 5), (1000, 5)], 4))  # 2% apart
        self.assertEqual(auth.memory_verdict(39 * 1024), "met")
        self.assertEqual(auth.memory_verdict(41 * 1024), "missed")


class PlanTest(unittest.TestCase):
    def test_time_budget(self):
        for cfg, limit in ((plan.full(), 6 * 60), (plan.quick(), 60)):
            a = [s for s in steps(cfg) if s.scenario == "auth"]
            runs = [s for s in a if " vus=" in s.label]
            self.assertEqual(len(runs), 2 * 3 * cfg.auth_reps * len(cfg.auth_levels), cfg.mode)
            self.assertLessEqual(sum(s.est_s for s in a), limit, cfg.mode)

    def test_only_auth(self):
        cfg = plan.quick()
        cfg.scenarios = ["auth"]
        st = steps(cfg)
        self.assertEqual({s.scenario for s in st}, {"setup", "auth", "report"})
        labels = [s.label for s in st if s.scenario == "auth"]
        self.assertIn("grafton idle RSS with 10 roles", labels)
        self.assertIn("sqlite idle RSS with 0 roles", labels)
        self.assertEqual(plan.NOT_YET, {})

    def test_auth_runs_wait_for_their_server(self):
        cfg = plan.quick()
        cfg.scenarios = ["auth"]
        b = runner.Bench(cfg, env(), "/nonexistent", [])
        runs = [s for s in b.steps() if s.scenario == "auth" and s.when is not None]
        self.assertEqual(len(runs), 2 + 2 * 6)
        self.assertFalse(any(s.when() for s in runs))
        b.auth_urls["sqlite"] = "http://x"
        self.assertEqual(sum(1 for s in runs if s.when()), 1 + 6)

    def test_no_grafton_system(self):
        cfg = plan.quick()
        cfg.scenarios, cfg.systems = ["auth"], ["postgraphile"]
        a = [s for s in steps(cfg) if s.scenario == "auth"]
        self.assertEqual(len(a), 1)
        self.assertIn("skipped", a[0].label)


def overhead_runs(system, ratio, rel_ratio=1.5):
    out = []
    for vus in (1, 10):
        for who, rep in (("admin", 1), ("user", 1), ("user_rel", 1), ("user_rel", 2), ("user", 2), ("admin", 2)):
            f = {"admin": 1.0, "user": ratio, "user_rel": rel_ratio}[who]
            out.append({"system": system, "vus": vus, "who": who, "rep": rep, "rps": 1000 / f,
                        "p50": 2.0 * f, "p95": 5.0 * f, "failed_rate": 0})
    return out


RESULTS = {
    "mode": "full", "limit": 50, "systems": [{"id": "grafton"}, {"id": "postgraphile"}, {"id": "sqlite"}],
    "auth": {
        "status": "ok", "mode": "headers", "mode_text": auth.MODE_TEXT["headers"], "query": "meetups_venue",
        "roles": ["user", "user_rel"], "filters": auth.FILTER_TEXT, "config": "config/auth.yaml",
        "users": [10000, 10001],
        "jwt_rejected": "error: unexpected argument '--jwt-secret' found",
        "duration_s": 5, "order": "ABBA", "target_ratio": 1.1,
        "kept": {"grafton": {"total": 100000, "roles": {
            "user": {"per_user": {"10000": 90012, "10001": 90003}, "share": 0.9},
            "user_rel": {"per_user": {"10000": 90012, "10001": 90003}, "share": 0.9}}}},
        "unavailable": [{"system": "sqlite", "reason": "exited with code 1"}],
        "overhead": auth.overhead(overhead_runs("grafton", 1.05)),
        "memory": {"roles": 10, "target_mb": 40, "config": "config/roles-10.yaml", "idle_window_s": 2,
                   "idle_max_s": 15, "systems": {
                       "grafton": {"none": {"idle_kb": 10240, "ready_s": 0.4, "settled": True},
                                   "roles": {"idle_kb": 20480, "hwm_kb": 30720, "ready_s": 0.9, "settled": True},
                                   "delta_kb": 10240},
                       "sqlite": {"none": {"idle_kb": 9216, "settled": True},
                                  "roles": {"error": "no answer"}}}},
    },
}


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.md = report.render(RESULTS)

    def row(self, *starts):
        for line in self.md.splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if line.startswith("|") and cells[:len(starts)] == list(starts):
                return cells
        self.fail(f"no row {starts} in:\n{self.md}")

    def test_overhead_table(self):
        self.assertIn("## Auth", self.md)
        self.assertIn("**Mode: roles via headers, no JWT.**", self.md)
        self.assertIn("`error: unexpected argument '--jwt-secret' found`", self.md)
        self.assertIn("admin sees 100,000 meetups, each user as `user` 90,003–90,012 (90.0%), as `user_rel` "
                      "90,003–90,012 (90.0%)", self.md)
        self.assertIn("`user_rel`: the same through the relationship", self.md)
        self.assertIn("- Grafton SQLite: exited with code 1", self.md)
        self.assertEqual(self.row("Grafton PG", "10", "user"),
                         ["Grafton PG", "10", "user", "1,000", "952", "2.00", "2.10", "1.05×", "5.00", "5.25", "1.05×",
                          "0%"])
        self.assertEqual(self.row("Grafton PG", "1", "user_rel")[7], "1.50×")
        self.assertIn("Grafton PG `user`: worst 1.05× → met; Grafton PG `user_rel`: worst 1.50× → **missed**", self.md)

    def test_rows_in_system_level_role_order(self):
        r = json.loads(json.dumps(RESULTS))
        r["auth"]["overhead"] = list(reversed(r["auth"]["overhead"]))
        md = report.render(r)
        lines = [ln for ln in md.splitlines() if ln.startswith("| Grafton PG | ")]
        self.assertEqual([ln.split("|")[2:4] for ln in lines][:4],
                         [[" 1 ", " user "], [" 1 ", " user_rel "], [" 10 ", " user "], [" 10 ", " user_rel "]])
        self.assertIn("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|", md)

    def test_targets(self):
        t = self.row("auth (roles via headers, no JWT), Grafton PG, role `user`: latency < 1.10× admin's at p50 and p95")
        self.assertEqual(t[1:], ["p50 1.05×, p95 1.05× at 2 levels", "met"])
        t = self.row("auth (roles via headers, no JWT), Grafton PG, role `user_rel`: latency < 1.10× admin's at p50 "
                     "and p95")
        self.assertEqual(t[1:], ["p50 1.50×, p95 1.50× at 2 levels", "**missed**"])
        self.assertEqual(self.row("Grafton PG idle RSS with 10 roles < 40 MB")[1:],
                         ["20.0 MB (no roles: 10.0 MB)", "met"])

    def test_memory_table(self):
        self.assertEqual(self.row("Grafton PG", "10.0 MB"),
                         ["Grafton PG", "10.0 MB", "20.0 MB", "+10.0 MB", "30.0 MB", "0.9 / 0.4 s", "met", ""])
        s = self.row("Grafton SQLite", "9.0 MB")
        self.assertEqual(s[2], "—")
        self.assertIn("roles: no answer", s[-1])

    def test_jwt_and_missed(self):
        r = json.loads(json.dumps(RESULTS))
        r["auth"].update(mode="jwt", overhead=auth.overhead(overhead_runs("grafton", 1.2)))
        r["auth"].pop("jwt_rejected")
        md = report.render(r)
        self.assertIn("**Mode: JWT.**", md)
        self.assertIn("| auth (JWT), Grafton PG, role `user`: latency < 1.10× admin's at p50 and p95 | p50 1.20×, "
                      "p95 1.20× at 2 levels | **missed** |", md)

    def test_failed_status(self):
        md = report.render({"auth": {"status": "failed: Grafton PG: no answer"}})
        self.assertIn("- auth: failed: Grafton PG: no answer", md)
        self.assertNotIn("## Auth", md)


if __name__ == "__main__":
    unittest.main()
