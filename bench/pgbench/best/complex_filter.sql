-- complex_filter, written by hand (see venues.sql). No SQL we found beats the plan of
-- Grafton's own statement: without an index on start_at, PostgreSQL must read every
-- row with id > id_gt, filter it and keep the top 100 (an index scan on the key with a
-- top-N heapsort; a seq scan, or custom plans with a parallel seq scan, were slower
-- under load). Putting the cheap venue_id test before the LIKE made no difference.
\set id_gt random(0, 99999)
SELECT json_build_object('meetups', coalesce((SELECT json_agg(m) FROM (SELECT id, title, start_at, venue_id FROM meetups WHERE id > :id_gt AND title LIKE '%a%' AND venue_id < 90000 ORDER BY start_at DESC, id LIMIT 100) m), '[]'));
