import unittest
import xml.etree.ElementTree as ET

import charts

NS = "{http://www.w3.org/2000/svg}"
SERIES = [
    {"name": "Grafton PG", "points": [(1, 772), (10, 1843), (50, 2012), (1000, 1900)]},
    {"name": "PostGraphile <v4> & co", "points": [(1, 381), (10, 525), (50, None), (1000, 560)]},
    {"name": "pgbench", "points": [(1, 2000), (10, 9000)], "dashed": True},
]


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode())


class ChartTest(unittest.TestCase):
    def test_well_formed_with_axes_and_legend(self):
        root = parse(charts.line_chart("venues: throughput", "concurrent users", "requests/s", SERIES))
        self.assertEqual(root.tag, NS + "svg")
        texts = [t.text for t in root.iter(NS + "text")]
        self.assertIn("venues: throughput", texts)
        self.assertIn("concurrent users (log scale)", texts)
        self.assertIn("requests/s", texts)
        self.assertIn("PostGraphile <v4> & co", texts)  # escaped in the file, intact when parsed
        for x in ("1", "10", "50", "1k"):
            self.assertIn(x, texts)  # x ticks at the measured levels

    def test_lines_and_points(self):
        root = parse(charts.line_chart("t", "x", "y", SERIES))
        lines = root.findall(NS + "polyline")
        # Grafton: one line; PostGraphile: broken by the missing point into two; pgbench: one.
        self.assertEqual(len(lines), 4)
        self.assertEqual(len(root.findall(NS + "circle")), 4 + 3 + 2)
        self.assertTrue(any(p.get("stroke-dasharray") for p in lines))

    def test_log_x_is_monotonic(self):
        root = parse(charts.line_chart("t", "x", "y", SERIES[:1]))
        pts = [tuple(map(float, p.split(","))) for p in root.find(NS + "polyline").get("points").split()]
        xs = [x for x, _ in pts]
        self.assertEqual(xs, sorted(xs))
        # log scale: 1→10 spans the same width as 10→100 would; 10→50 is log10(5) of it
        self.assertAlmostEqual((xs[2] - xs[1]) / (xs[1] - xs[0]), 0.69897, places=3)

    def test_log_y_and_empty_series(self):
        svg = charts.line_chart("p95", "VUs", "ms", [{"name": "a", "points": [(1, 0.5), (10, 0), (100, 300)]},
                                                     {"name": "empty", "points": []}], log_y=True)
        root = parse(svg)
        self.assertEqual(len(root.findall(NS + "polyline")), 2)  # 0 is not drawable on a log axis
        parse(charts.line_chart("nothing", "x", "y", []))

    def test_ticks(self):
        self.assertEqual(charts.nice_ticks(2012), [0, 500, 1000, 1500, 2000, 2500])
        self.assertEqual(charts.nice_ticks(0), [0.0, 1.0])
        self.assertEqual(charts.log_ticks(0.95, 1560), [0.1, 1, 10, 100, 1000, 10000])
        self.assertEqual(charts.log_ticks(3, 40), [1, 2, 5, 10, 20, 50, 100])
        self.assertEqual(charts.fmt(1500), "1.5k")
        self.assertEqual(charts.fmt(0.25), "0.25")


if __name__ == "__main__":
    unittest.main()
