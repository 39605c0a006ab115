-- The golden plan tests' schema: the same DDL on PostgreSQL and SQLite.
-- PostgreSQL-only objects (functions, arrays, jsonb) are in postgres.sql.
CREATE TABLE organisations (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL
);
CREATE TABLE authors (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT UNIQUE,
  org_id INTEGER REFERENCES organisations (id),
  created_at TIMESTAMP
);
CREATE TABLE articles (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  body TEXT,
  rating REAL,
  published BOOLEAN NOT NULL DEFAULT FALSE,
  author_id INTEGER NOT NULL REFERENCES authors (id),
  published_at TIMESTAMP
);
CREATE TABLE tags (
  id INTEGER PRIMARY KEY,
  label TEXT NOT NULL UNIQUE
);
CREATE TABLE article_tags (
  article_id INTEGER NOT NULL REFERENCES articles (id),
  tag_id INTEGER NOT NULL REFERENCES tags (id),
  PRIMARY KEY (article_id, tag_id)
);
CREATE TABLE comments (
  id INTEGER PRIMARY KEY,
  article_id INTEGER NOT NULL REFERENCES articles (id),
  author_id INTEGER REFERENCES authors (id),
  text TEXT NOT NULL,
  created_at TIMESTAMP
);
CREATE VIEW published_articles AS
  SELECT id, title, author_id, rating FROM articles WHERE published;
-- A writable view (PostgreSQL: simple, so updatable; SQLite: by the triggers in
-- sqlite.sql): its key finds the rows it wrote.
CREATE VIEW draft_articles AS
  SELECT id, title, author_id FROM articles WHERE NOT published;
