-- venue_meetups, written by hand (see venues.sql): each venue's meetups built only for
-- the page's rows, after LIMIT/OFFSET.
\set limit 50
\set offset random(0, 49)
\set id_gt random(0, 99999)
SELECT json_build_object('venues', coalesce((SELECT json_agg(json_build_object('id', v.id, 'name', v.name, 'postal_code', v.postal_code, 'meetups', coalesce((SELECT json_agg(m) FROM (SELECT id, title FROM meetups WHERE venue_id = v.id ORDER BY id DESC LIMIT :limit) m), '[]'))) FROM (SELECT id, name, postal_code FROM venues WHERE id > :id_gt ORDER BY id LIMIT :limit OFFSET :offset) v), '[]'));
