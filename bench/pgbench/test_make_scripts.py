"""Tests of make_scripts.py (no database or Grafton binary needed).

    python3 -m unittest discover -s bench/pgbench        (from the repository root)
    cd bench/pgbench && python3 -m unittest               (or from here)

testdata/<query>.json are what `grafton sql --naming phrag` (commit 1595d4a)
printed for the seed queries; the hand-written cases below cover constants,
lists and quoting that the seed queries do not use.

Set PGBENCH_TEST_DATABASE_URL to a loaded meetup database to also run every
generated script through `pgbench -M prepared` for a few transactions.
"""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import make_scripts as ms  # noqa: E402

TESTDATA = os.path.join(HERE, "testdata")
QUERIES_JS = os.path.join(HERE, "..", "k6", "queries.js")


def fixture(name):
    with open(os.path.join(TESTDATA, name + ".json")) as f:
        return json.load(f)


def sql_lines(script):
    """The script's lines other than comments."""
    return [l for l in script.splitlines() if l and not l.startswith("--")]


class SeedScripts(unittest.TestCase):
    def test_venues(self):
        script = ms.build_script("venues", ms.CEILING_QUERIES["venues"], fixture("venues"), 50)
        lines = sql_lines(script)
        self.assertEqual(lines[:3], ["\\set limit 50", "\\set offset random(0, 49)", "\\set id_gt random(0, 99999)"])
        self.assertEqual(len(lines), 4)
        sql = lines[3]
        self.assertTrue(sql.endswith(";"))
        self.assertIn('WHERE ("_t0"."id" > :id_gt::"int4") ORDER BY "_t0"."id" ASC LIMIT :limit::"int8" OFFSET :offset::"int8")', sql)
        self.assertNotRegex(sql, r"\$\d")

    def test_shared_placeholder_is_replaced_everywhere(self):
        # venue_meetups uses $1 (limit) for both the parent and the child page.
        raw = fixture("venue_meetups")
        self.assertEqual(raw["sql"].count('$1::"int8"'), 2)
        script = ms.build_script("venue_meetups", ms.CEILING_QUERIES["venue_meetups"], raw, 100)
        sql = sql_lines(script)[3]
        self.assertEqual(sql.count(':limit::"int8"'), 2)
        self.assertEqual(sql.count(':id_gt::"int4"'), 1)
        self.assertEqual(sql.count(':offset::"int8"'), 1)
        self.assertIn("\\set limit 100", script)
        self.assertNotRegex(sql, r"\$\d")

    def test_all_fixtures_keep_the_sql_otherwise_unchanged(self):
        for name in ms.CEILING_QUERIES:
            raw = fixture(name)
            sql, used = ms.render_script_sql(raw["sql"], raw["params"])
            want = ["id_gt"] if name == "complex_filter" else ["id_gt", "limit", "offset"]
            self.assertEqual(sorted(used), want, name)
            # Putting the placeholders back gives Grafton's SQL byte for byte.
            back = sql
            for i, p in enumerate(raw["params"]):
                # A variable became :name; a constant, its literal (complex_filter's pattern,
                # bound and page size).
                text = ":" + p["variable"] if "variable" in p else ms.sql_literal(p["value"])
                self.assertIn(text + "::", back, name)
                back = back.replace(text + "::", "$%d::" % (i + 1), -1 if "variable" in p else 1)
            self.assertEqual(back, raw["sql"], name)

    def test_seed_queries_match_k6_queries(self):
        with open(QUERIES_JS) as f:
            js = f.read()
        for name, q in ms.CEILING_QUERIES.items():
            self.assertIn("'" + q + "'", js, "%s differs from bench/k6/queries.js" % name)

    def test_comment_lines_come_first(self):
        # pgbench drops comments only before a command; keep them at the top.
        script = ms.build_script("venues", ms.CEILING_QUERIES["venues"], fixture("venues"), 50)
        lines = script.splitlines()
        first_non_comment = next(i for i, l in enumerate(lines) if not l.startswith("--"))
        self.assertTrue(all(not l.startswith("--") for l in lines[first_non_comment:]))


class Literals(unittest.TestCase):
    def render(self, sql, params, variables=None):
        return ms.render_script_sql(sql, params, variables)[0]

    def test_string_values_are_quoted(self):
        sql = 'SELECT 1 WHERE "t"."title" LIKE $1::"text" AND "t"."v" < $2::"int4" AND "t"."id" > $3::"int4"'
        out = self.render(sql, [{"value": "%a%"}, {"value": 90000}, {"variable": "id_gt"}])
        self.assertEqual(out, 'SELECT 1 WHERE "t"."title" LIKE \'%a%\'::"text" AND "t"."v" < 90000::"int4" AND "t"."id" > :id_gt::"int4"')

    def test_quotes_backslashes_and_colons(self):
        self.assertEqual(ms.quote_literal("it's"), "'it''s'")
        self.assertEqual(ms.quote_literal("a\\b"), "'a\\b'")  # standard_conforming_strings
        self.assertEqual(ms.quote_literal("x:id_gt"), "E'x\\x3aid_gt'")
        self.assertEqual(ms.quote_literal("a\\b:c'd"), "E'a\\\\b\\x3ac''d'")
        with self.assertRaises(ms.ScriptError):
            ms.quote_literal("nul\x00")

    def test_scalars(self):
        self.assertEqual(ms.sql_literal(None), "NULL")
        self.assertEqual(ms.sql_literal(True), "TRUE")
        self.assertEqual(ms.sql_literal(False), "FALSE")
        self.assertEqual(ms.sql_literal(-5), "(-5)")
        self.assertEqual(ms.sql_literal(7), "7")
        self.assertEqual(ms.sql_literal(1.5), "1.5")
        self.assertEqual(ms.sql_literal(-0.25), "(-0.25)")
        with self.assertRaises(ms.ScriptError):
            ms.sql_literal(float("nan"))

    def test_lists_and_objects(self):
        sql = 'SELECT $1::"int4"[], $2::"text"[], $3::"jsonb", $4::"jsonb"'
        out = self.render(sql, [{"value": [1, 2, None]}, {"value": ['a"b', "c,d", "e:f"]},
                                {"value": {"k": [1, "x"]}}, {"value": [1, 2]}])
        self.assertEqual(out, 'SELECT \'{1,2,NULL}\'::"int4"[], E\'{"a\\\\"b","c,d","e\\x3af"}\'::"text"[], '
                              'E\'{"k"\\x3a[1,"x"]}\'::"jsonb", \'[1,2]\'::"jsonb"')

    def test_other_variables_are_inlined(self):
        out = self.render('SELECT $1::"text"', [{"variable": "name"}], {"name": "Tokyo"})
        self.assertEqual(out, 'SELECT \'Tokyo\'::"text"')
        with self.assertRaises(ms.ScriptError):
            self.render('SELECT $1::"text"', [{"variable": "missing"}], {})

    def test_grafton_literals_with_colons_are_rewritten(self):
        out = self.render("SELECT json_build_object('a:b', $1::\"int4\")", [{"variable": "id_gt"}])
        self.assertEqual(out, "SELECT json_build_object(E'a\\x3ab', :id_gt::\"int4\")")

    def test_placeholders_are_not_confused(self):
        params = [{"variable": "limit"}] + [{"value": i} for i in range(2, 12)]
        sql = "SELECT " + ", ".join("$%d::\"int4\"" % i for i in range(11, 0, -1))
        out = self.render(sql, params)
        self.assertEqual(out, "SELECT " + ", ".join(["%d::\"int4\"" % i for i in range(11, 1, -1)] + [':limit::"int4"']))
        # Dollar signs inside literals, identifiers and unquoted names stay.
        out = self.render("SELECT '$1', \"$1\", a$1, $1::\"int8\"", [{"variable": "limit"}])
        self.assertEqual(out, "SELECT '$1', \"$1\", a$1, :limit::\"int8\"")

    def test_extra_keys_of_grafton_sql(self):
        # `grafton sql` adds "dialect" and, per param, "type" and "list".
        raw = {"dialect": "postgres", "sql": 'SELECT $1::"int4", $2::"int4"[], $3::"text"',
               "params": [{"variable": "id_gt", "type": "int4", "list": False},
                          {"value": [1, 2], "type": "int4", "list": True},
                          {"value": "x", "type": "text", "list": False}]}
        script = ms.build_script("t", "q", raw, 50)
        self.assertIn('SELECT :id_gt::"int4", \'{1,2}\'::"int4"[], \'x\'::"text";', script)
        # "list" decides, not the cast: a list bound as JSON text stays JSON.
        out = self.render('SELECT $1::"jsonb"', [{"value": [1, 2], "type": "jsonb", "list": False}])
        self.assertEqual(out, 'SELECT \'[1,2]\'::"jsonb"')
        with self.assertRaises(ms.ScriptError):
            ms.build_script("t", "q", dict(raw, dialect="sqlite"), 50)
        with self.assertRaises(ms.ScriptError):
            ms.build_script("t", "q", dict(raw, sql=None), 50)

    def test_rejections(self):
        with self.assertRaises(ms.ScriptError):
            self.render('SELECT $2::"int4"', [{"variable": "limit"}])  # no such param
        with self.assertRaises(ms.ScriptError):
            self.render('SELECT 1', [{"variable": "limit"}])  # never referenced
        with self.assertRaises(ms.ScriptError):
            self.render('SELECT "a:b"', [])  # pgbench would see :b
        with self.assertRaises(ms.ScriptError):
            self.render("SELECT x[1:n]", [])
        with self.assertRaises(ms.ScriptError):
            self.render('SELECT $1::"int4"', [{"variable": "id-gt"}])
        with self.assertRaises(ms.ScriptError):
            self.render('SELECT $1::"int4"', [{"neither": 1}])
        with self.assertRaises(ms.ScriptError):
            self.render('SELECT $1::"int4"', [{"variable": "limit", "value": 1}])
        with self.assertRaises(ms.ScriptError):
            ms.build_script("venues", "q", {"sql": "SELECT 1"}, 50)


FAKE_GRAFTON = r'''#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
assert args[0] == "sql", args
opts = dict(zip(args[1::2], args[2::2]))
assert opts["--naming"] == "phrag" and opts["--database-url"] == "postgres://fake/meetup", opts
json.loads(opts["--variables"])
names = {"queryVenues": "venues", "queryVenueMeetups": "venue_meetups", "queryMeetupsWithMembers": "meetups_members",
         "complexFilter": "complex_filter"}
name = names[opts["--query"].split("(")[0].split()[1]]
with open(TESTDATA + "/" + name + ".json") as f:
    sys.stdout.write(f.read())
'''


class CommandLine(unittest.TestCase):
    def test_main_with_a_fake_grafton(self):
        tmp = tempfile.mkdtemp()
        try:
            fake = os.path.join(tmp, "grafton")
            with open(fake, "w") as f:
                f.write(FAKE_GRAFTON.replace("TESTDATA", repr(TESTDATA)))
            os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
            out = os.path.join(tmp, "out")
            rc = ms.main(["--grafton", fake, "--database-url", "postgres://fake/meetup", "--out", out, "--limit", "100"])
            self.assertEqual(rc, 0)
            self.assertEqual(sorted(os.listdir(out)), sorted(n + e for n in ms.CEILING_QUERIES for e in (".sql", ".json")))
            with open(os.path.join(out, "meetups_members.sql")) as f:
                script = f.read()
            self.assertIn("\\set limit 100", script)
            self.assertIn(':id_gt::"int4"', script)
        finally:
            shutil.rmtree(tmp)

    def test_grafton_failure_is_reported(self):
        rc = ms.main(["--grafton", "/bin/false", "--database-url", "postgres://fake/meetup", "--out", tempfile.mkdtemp()])
        self.assertEqual(rc, 1)


@unittest.skipUnless(os.environ.get("PGBENCH_TEST_DATABASE_URL") and shutil.which("pgbench"),
                     "set PGBENCH_TEST_DATABASE_URL (a loaded meetup database) to run pgbench")
class RealPgbench(unittest.TestCase):
    def test_scripts_run(self):
        url = os.environ["PGBENCH_TEST_DATABASE_URL"]
        tmp = tempfile.mkdtemp()
        try:
            for name in ms.CEILING_QUERIES:
                path = os.path.join(tmp, name + ".sql")
                with open(path, "w") as f:
                    f.write(ms.build_script(name, ms.CEILING_QUERIES[name], fixture(name), 50))
                proc = subprocess.run(["pgbench", "-n", "-M", "prepared", "-c", "2", "-j", "2", "-t", "20", "-f", path, url],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                self.assertEqual(proc.returncode, 0, proc.stderr + proc.stdout)
                self.assertRegex(proc.stdout, r"number of failed transactions: 0")
                self.assertRegex(proc.stdout, r"tps = [0-9.]+")
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main()
