import os
import tempfile
import unittest

import best


class ParseTest(unittest.TestCase):
    def test_sets_and_statement(self):
        with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
            f.write("-- a comment\n\\set limit 50\n\\set offset random(0, 49)\nSELECT :limit,\n  :offset;\n")
        try:
            draws, sql = best.parse(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(draws, {"limit": (50, 50), "offset": (0, 49)})
        self.assertEqual(sql, "SELECT :limit,\n  :offset;")

    def test_every_best_script_parses_and_matches_a_seed_query(self):
        for name in os.listdir(best.BEST):
            draws, sql = best.parse(os.path.join(best.BEST, name))
            self.assertIn(name[:-4], best.CEILING_QUERIES)
            # Each draws the seed's id_gt; paged queries also their limit and offset.
            self.assertIn("id_gt", draws, name)
            self.assertLessEqual(set(draws), {"limit", "offset", "id_gt"}, name)
            self.assertTrue(sql.startswith("SELECT"), name)


if __name__ == "__main__":
    unittest.main()
