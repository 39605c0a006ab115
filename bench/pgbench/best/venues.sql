-- venues, written by hand as the fastest SQL we found for the same JSON as Grafton's
-- answer's "data" (bench/pgbench/best.py checks it): json_agg over the page's rows,
-- in the page's order.
\set limit 50
\set offset random(0, 49)
\set id_gt random(0, 99999)
SELECT json_build_object('venues', coalesce((SELECT json_agg(v) FROM (SELECT id, name, postal_code FROM venues WHERE id > :id_gt ORDER BY id LIMIT :limit OFFSET :offset) v), '[]'));
