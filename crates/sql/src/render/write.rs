//! `INSERT`, `UPDATE` and `DELETE`, with `RETURNING` and SQLite's row-id lists.

use super::*;

impl Renderer {
    pub(super) fn returning(&mut self, items: &[Expr]) {
        if !items.is_empty() {
            self.push(" RETURNING ");
            self.comma_list(items, |r, e| r.expr(e));
        }
    }

    pub(super) fn insert(&mut self, i: &Insert) {
        self.push("INSERT INTO ");
        self.table_ref(&i.table);
        if i.columns.is_empty() {
            self.push(" DEFAULT VALUES");
        } else {
            self.push(" (");
            self.comma_list(&i.columns, |r, c| r.ident(&c.name));
            self.push(") SELECT ");
            match self.dialect {
                Dialect::Postgres => {
                    self.comma_list(&i.columns, |r, c| {
                        r.push("\"_r\".");
                        r.ident(&c.name);
                    });
                    self.push(" FROM json_populate_recordset(NULL::");
                    if let Some(schema) = &i.table.schema {
                        self.ident(schema);
                        self.push(".");
                    }
                    self.ident(&i.table.name);
                    self.push(", ");
                    self.param(&i.rows);
                    self.push(") AS \"_r\"");
                }
                Dialect::Sqlite => {
                    for (n, c) in i.columns.iter().enumerate() {
                        if n > 0 {
                            self.push(", ");
                        }
                        // `->` keeps JSON as JSON text; a JSON null must still be NULL.
                        if c.json {
                            let _ =
                                write!(self.sql, "nullif(\"_r\".\"value\" -> '$[{n}]', 'null')");
                        } else {
                            let _ = write!(self.sql, "\"_r\".\"value\" ->> '$[{n}]'");
                        }
                    }
                    self.push(" FROM json_each(");
                    self.param(&i.rows);
                    // `WHERE true` resolves SQLite's INSERT … SELECT … ON CONFLICT ambiguity.
                    self.push(") AS \"_r\" WHERE true");
                }
            }
        }
        if let Some(c) = &i.on_conflict {
            self.push(" ON CONFLICT (");
            self.comma_list(&c.columns, |r, col| r.ident(col));
            self.push(")");
            if c.update.is_empty() {
                self.push(" DO NOTHING");
            } else {
                self.push(" DO UPDATE SET ");
                self.comma_list(&c.update, |r, col| {
                    r.ident(col);
                    r.push(" = \"excluded\".");
                    r.ident(col);
                });
                for (col, value) in &c.set {
                    self.push(", ");
                    self.ident(col);
                    self.push(" = ");
                    self.expr(value);
                }
                if let Some(f) = &c.filter {
                    self.push(" WHERE ");
                    self.expr(f);
                }
            }
        }
        self.returning(&i.returning);
    }

    pub(super) fn update(&mut self, u: &Update) {
        self.push("UPDATE ");
        self.table_ref(&u.table);
        self.push(" SET ");
        self.comma_list(&u.set, |r, (col, e)| {
            r.ident(col);
            r.push(" = ");
            r.expr(e);
        });
        if let Some(source) = &u.source {
            self.push(" FROM json_populate_record(NULL::");
            if let Some(schema) = &u.table.schema {
                self.ident(schema);
                self.push(".");
            }
            self.ident(&u.table.name);
            self.push(", ");
            self.param(source);
            self.push(") AS \"_r\"");
        }
        if let Some(f) = &u.filter {
            self.push(" WHERE ");
            self.expr(f);
        }
        self.returning(&u.returning);
    }

    pub(super) fn delete(&mut self, d: &Delete) {
        self.push("DELETE FROM ");
        self.table_ref(&d.table);
        if let Some(f) = &d.filter {
            self.push(" WHERE ");
            self.expr(f);
        }
        self.returning(&d.returning);
    }

    pub(super) fn row_ids_from(&mut self, t: &TableRef, ids: &[Param]) {
        let keys = format!("{}_k", t.alias);
        match (self.dialect, ids) {
            (Dialect::Postgres, [tids, oids]) => {
                self.push("unnest(");
                self.param(tids);
                self.push(", ");
                self.param(oids);
                self.push(") WITH ORDINALITY AS ");
                self.ident(&keys);
                self.push("(\"tid\", \"oid\", \"n\") JOIN ");
                self.table_ref(t);
                self.push(" ON (");
                self.ident(&t.alias);
                self.push(".\"ctid\" = ");
                self.ident(&keys);
                self.push(".\"tid\" AND ");
                self.ident(&t.alias);
                self.push(".\"tableoid\" = ");
                self.ident(&keys);
                self.push(".\"oid\")");
            }
            (_, [rowids, ..]) => {
                self.push("json_each(");
                self.param(rowids);
                self.push(") AS ");
                self.ident(&keys);
                self.push(" JOIN ");
                self.table_ref(t);
                self.push(" ON ");
                self.ident(&t.alias);
                self.push(".\"rowid\" = ");
                self.ident(&keys);
                self.push(".\"value\"");
            }
            // Translation always passes the identity lists; no lists, no rows.
            (_, []) => {
                self.table_ref(t);
                self.push(" WHERE FALSE");
            }
        }
    }

    pub(super) fn row_id_in(&mut self, alias: &str, ids: &[Param]) {
        match (self.dialect, ids) {
            (Dialect::Postgres, [tids, oids]) => {
                // `ctid = ANY` lets Postgres fetch the rows by TID; the pair test is exact
                // for partitioned tables, where a ctid repeats across partitions.
                self.push("(");
                self.ident(alias);
                self.push(".\"ctid\" = ANY(");
                self.param(tids);
                self.push(") AND (");
                self.ident(alias);
                self.push(".\"ctid\", ");
                self.ident(alias);
                self.push(".\"tableoid\") IN (SELECT * FROM unnest(");
                self.param(tids);
                self.push(", ");
                self.param(oids);
                self.push(")))");
            }
            (_, [rowids, ..]) => {
                self.push("(");
                self.ident(alias);
                self.push(".\"rowid\" IN (SELECT \"value\" FROM json_each(");
                self.param(rowids);
                self.push(")))");
            }
            (_, []) => self.push("FALSE"),
        }
    }

    pub(super) fn column_update(&mut self, column: &Expr, op: UpdateOp, operand: &Expr) {
        let function = match (self.dialect, op) {
            (_, UpdateOp::Inc) => None,
            (Dialect::Postgres, _) => None,
            (Dialect::Sqlite, UpdateOp::Append | UpdateOp::Prepend) => Some("grafton_jsonb_concat"),
            (Dialect::Sqlite, UpdateOp::DeleteKey) => Some("grafton_jsonb_delete_key"),
            (Dialect::Sqlite, UpdateOp::DeleteElem) => Some("grafton_jsonb_delete_elem"),
            (Dialect::Sqlite, UpdateOp::DeleteAtPath) => Some("grafton_jsonb_delete_path"),
        };
        let (first, second) = match op {
            UpdateOp::Prepend => (operand, column),
            _ => (column, operand),
        };
        if let Some(f) = function {
            // SQLite has no jsonb operators; the executor registers Postgres-exact ones.
            self.push(f);
            self.push("(");
            self.expr(first);
            self.push(", ");
            self.expr(second);
            self.push(")");
            return;
        }
        self.push("(");
        self.expr(first);
        self.push(match op {
            UpdateOp::Inc => " + ",
            UpdateOp::Append | UpdateOp::Prepend => " || ",
            UpdateOp::DeleteKey | UpdateOp::DeleteElem => " - ",
            UpdateOp::DeleteAtPath => " #- ",
        });
        self.expr(second);
        self.push(")");
    }
}
