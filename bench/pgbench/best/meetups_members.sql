-- meetups_members, written by hand (see venues.sql): a meetup's first members by key,
-- each member's object looked up by key once the page is cut.
\set limit 50
\set offset random(0, 49)
\set id_gt random(0, 99999)
SELECT json_build_object('meetups', coalesce((SELECT json_agg(json_build_object('id', t.id, 'title', t.title, 'meetups_members', coalesce((SELECT json_agg(json_build_object('member', (SELECT json_build_object('id', mb.id, 'email', mb.email) FROM members mb WHERE mb.id = mm.member_id))) FROM (SELECT member_id FROM meetups_members WHERE meetup_id = t.id ORDER BY member_id LIMIT :limit) mm), '[]'))) FROM (SELECT id, title FROM meetups WHERE id > :id_gt ORDER BY id LIMIT :limit OFFSET :offset) t), '[]'));
