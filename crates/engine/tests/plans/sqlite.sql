-- SQLite-only objects of the golden plan tests' schema (after schema.sql): the
-- triggers that make a view writable.
CREATE TRIGGER draft_articles_update INSTEAD OF UPDATE ON draft_articles BEGIN
  UPDATE articles SET title = NEW.title WHERE id = OLD.id;
END;
CREATE TRIGGER draft_articles_delete INSTEAD OF DELETE ON draft_articles BEGIN
  DELETE FROM articles WHERE id = OLD.id;
END;
