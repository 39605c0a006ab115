//! `INSERT`, `UPDATE` and `DELETE`, with `RETURNING` and SQLite's row-id lists.

use super::*;
use serde_json::{Map, Value};

impl Renderer {
    /// ` RETURNING …` of the written rows (aliased `alias`), each value read as
    /// text on PostgreSQL; SQLite's takes no qualifier.
    fn returning(&mut self, alias: &str, items: &[Returning]) {
        if items.is_empty() {
            return;
        }
        let column = |name: &str| Expr::ReadText(Box::new(Expr::column(alias, name)));
        let mut exprs = Vec::with_capacity(items.len() + 1);
        for item in items {
            match item {
                Returning::Column(name) => exprs.push(column(name)),
                Returning::Expr(e) => exprs.push(Expr::ReadText(Box::new(e.clone()))),
                Returning::Identity => {
                    exprs.extend(self.identity_columns().iter().map(|name| column(name)))
                }
                Returning::Inserted => {
                    if self.dialect == Dialect::Postgres {
                        exprs.push(Expr::ReadText(Box::new(Expr::Compare {
                            left: Box::new(Expr::column(alias, "xmax")),
                            op: BinOp::Eq,
                            right: Box::new(Expr::Int(0)),
                        })));
                    }
                }
            }
        }
        if exprs.is_empty() {
            return;
        }
        let outer = self.renamed.take();
        if self.dialect == Dialect::Sqlite {
            self.renamed = Some((alias.to_owned(), None));
        }
        self.push(" RETURNING ");
        self.comma_list(&exprs, |r, e| r.expr(e));
        self.renamed = outer;
    }

    /// The table a write writes. A SQLite view takes no alias in `UPDATE` and
    /// `DELETE` (nor, as before, in `INSERT`): it is named by itself, and so are its
    /// alias's references.
    fn write_target(&mut self, t: &TableRef) {
        if self.dialect == Dialect::Sqlite && t.view {
            self.table_name(t.schema.as_ref(), &t.name);
            self.renamed = Some((t.alias.clone(), Some(t.name.clone())));
        } else {
            self.table_ref(t);
        }
    }

    pub(super) fn insert(&mut self, i: &Insert) {
        self.push("INSERT INTO ");
        self.write_target(&i.table);
        if i.columns.is_empty() {
            self.push(" DEFAULT VALUES");
        } else {
            self.push(" (");
            self.comma_list(&i.columns, |r, c| r.ident(&c.name));
            self.push(") SELECT ");
            // One JSON array parameter: PostgreSQL's rows are objects keyed by column
            // name, SQLite's arrays in column order.
            // With PostGIS columns, each row is `{"r": record, "g": GeoJSON values}`:
            // json_populate_record cannot read GeoJSON into them.
            let spatial = i.columns.iter().any(|c| c.spatial.is_some());
            let rows = i.rows.iter().map(|values| match self.dialect {
                Dialect::Postgres if spatial => {
                    let (mut record, mut shapes) = (Map::new(), Map::new());
                    for (c, v) in i.columns.iter().zip(values) {
                        let to = if c.spatial.is_some() {
                            &mut shapes
                        } else {
                            &mut record
                        };
                        to.insert(c.name.clone(), v.clone());
                    }
                    serde_json::json!({"r": record, "g": shapes})
                }
                Dialect::Postgres => Value::Object(
                    (i.columns.iter().zip(values))
                        .map(|(c, v)| (c.name.clone(), v.clone()))
                        .collect(),
                ),
                Dialect::Sqlite => Value::Array(values.clone()),
            });
            let rows = Param {
                value: ParamValue::Literal(Value::Array(rows.collect())),
                ty: SqlType::Builtin("json"),
                list: false,
            };
            match self.dialect {
                Dialect::Postgres if spatial => {
                    self.comma_list(&i.columns, |r, c| match &c.spatial {
                        Some(SqlType::Spatial { schema, geography }) => {
                            r.ident(schema);
                            r.push(".\"st_geomfromgeojson\"(\"_j\".\"v\" -> 'g' ->> ");
                            r.string(&c.name);
                            r.push(")");
                            if *geography {
                                r.push("::");
                                r.ident(schema);
                                r.push(".\"geography\"");
                            }
                        }
                        _ => {
                            r.push("\"_r\".");
                            r.ident(&c.name);
                        }
                    });
                    self.push(" FROM json_array_elements(");
                    self.param(&rows);
                    self.push(") AS \"_j\"(\"v\") CROSS JOIN LATERAL json_populate_record(NULL::");
                    if let Some(schema) = &i.table.schema {
                        self.ident(schema);
                        self.push(".");
                    }
                    self.ident(&i.table.name);
                    self.push(", \"_j\".\"v\" -> 'r') AS \"_r\"");
                }
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
                    self.param(&rows);
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
                    self.param(&rows);
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
        self.returning(&i.table.alias, &i.returning);
        self.renamed = None;
    }

    pub(super) fn update(&mut self, u: &Update) {
        self.push("UPDATE ");
        self.write_target(&u.table);
        self.push(" SET ");
        self.comma_list(&u.set, |r, (col, e)| {
            r.ident(col);
            r.push(" = ");
            r.expr(e);
        });
        // PostgreSQL: the written values in one JSON record (see `Update`).
        let mut record = serde_json::Map::new();
        if self.dialect == Dialect::Postgres {
            for (_, e) in &u.set {
                written(e, &mut record);
            }
        }
        if !record.is_empty() {
            let source = Param {
                value: ParamValue::Literal(Value::Object(record)),
                ty: SqlType::Builtin("json"),
                list: false,
            };
            self.push(" FROM json_populate_record(NULL::");
            if let Some(schema) = &u.table.schema {
                self.ident(schema);
                self.push(".");
            }
            self.ident(&u.table.name);
            self.push(", ");
            self.param(&source);
            self.push(") AS \"_r\"");
        }
        if let Some(f) = &u.filter {
            self.push(" WHERE ");
            self.expr(f);
        }
        self.returning(&u.table.alias, &u.returning);
        self.renamed = None;
    }

    pub(super) fn delete(&mut self, d: &Delete) {
        self.push("DELETE FROM ");
        self.write_target(&d.table);
        if let Some(f) = &d.filter {
            self.push(" WHERE ");
            self.expr(f);
        }
        self.returning(&d.table.alias, &d.returning);
        self.renamed = None;
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

/// The [`Expr::Written`] values of an assignment, into PostgreSQL's record.
fn written(e: &Expr, record: &mut serde_json::Map<String, Value>) {
    match e {
        Expr::Written {
            ty: SqlType::Spatial { .. },
            ..
        } => {}
        Expr::Written { column, value, .. } => {
            record.insert(column.clone(), (**value).clone());
        }
        Expr::ColumnUpdate {
            column, operand, ..
        } => {
            written(column, record);
            written(operand, record);
        }
        _ => {}
    }
}
