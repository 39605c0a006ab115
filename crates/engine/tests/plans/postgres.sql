-- PostgreSQL-only objects of the golden plan tests' schema (after schema.sql).
ALTER TABLE articles ADD COLUMN keywords TEXT[];
ALTER TABLE articles ADD COLUMN metadata JSONB;
CREATE FUNCTION search_articles(search TEXT) RETURNS SETOF articles
  LANGUAGE sql STABLE AS $$ SELECT * FROM articles WHERE title ILIKE '%' || search || '%' $$;
CREATE FUNCTION author_display_name(author_row authors) RETURNS TEXT
  LANGUAGE sql STABLE AS $$ SELECT author_row.name || ' (' || author_row.id || ')' $$;
CREATE FUNCTION author_recent_articles(author_row authors, since TIMESTAMP) RETURNS SETOF articles
  LANGUAGE sql STABLE AS $$ SELECT * FROM articles WHERE author_id = author_row.id AND published_at > since $$;
