//! Rendering the AST to SQL text for one dialect, collecting bind parameters in order.

use crate::ast::*;
use serde::Serialize;
use std::fmt::Write as _;

mod expr;
mod identities;
mod json_ops;
mod key_ids;
mod multiplex;
mod objects;
#[cfg(test)]
mod records_tests;
mod select;
mod size_guard;
mod write;

pub use multiplex::{render_multiplexed, render_reading, Multiplexed};
pub use size_guard::{size_guard_multiplexed, size_guard_postgres};

/// Which SQL dialect to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Dialect {
    /// PostgreSQL: `$n::type` parameters, `json_build_object`, `DISTINCT ON`.
    Postgres,
    /// SQLite: `?n` parameters, `json_object`, window-function `DISTINCT ON`.
    Sqlite,
}

impl Dialect {
    /// Whether a query may select and pass a row whole (PostgreSQL: a computed
    /// field's argument, `to_json(row)`); SQLite has no row values.
    pub fn row_values(self) -> bool {
        self == Dialect::Postgres
    }

    /// The columns of a row's physical identity, as a write returns them
    /// ([`Returning::Identity`]).
    pub fn identity_columns(self) -> &'static [&'static str] {
        match self {
            Dialect::Postgres => &["ctid", "tableoid"],
            Dialect::Sqlite => &["rowid"],
        }
    }
}

/// Rendered SQL text and its parameters; parameter `i` is `$i+1` / `?i+1` in the text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Statement {
    /// The SQL text.
    pub sql: String,
    /// Parameters in placeholder order.
    pub params: Vec<Param>,
    /// Its JSON answer is compact already (no whitespace outside strings), so the
    /// executor passes it on unscanned. PostgreSQL pads what `json_build_object`,
    /// `json_build_array`, `json_agg` and `jsonb` print; rows built as records (see
    /// [`Expr::RowObject`]) and `array_to_json` print none, and neither do the
    /// scalars they hold (a user's own cast of an enum to json is not looked for).
    pub compact: bool,
}

/// Postgres caps function arguments at 100, so wide objects are built in chunks and joined.
const PG_MAX_PAIRS: usize = 50;
/// Longer AND/OR lists are rendered as nested groups of at most this many terms.
const JUNCTION_FANOUT: usize = 32;
/// SQLite's default cap is 127 arguments per function call.
const SQLITE_MAX_PAIRS: usize = 60;

/// The statement that sets the transaction-local settings `grafton.session` and
/// `grafton.trace` to the session's and the trace context's JSON (PostgreSQL):
/// what event-trigger functions read as the `session_variables` and
/// `trace_context` of the write that fired them.
pub fn set_session(session_json: &str, trace_json: &str) -> Statement {
    let text = |v: &str| crate::Param {
        value: crate::ParamValue::Literal(serde_json::Value::String(v.to_owned())),
        ty: crate::SqlType::Builtin("text"),
        list: false,
    };
    Statement {
        sql: "SELECT set_config('grafton.session', $1::text, true), \
              set_config('grafton.trace', $2::text, true)"
            .into(),
        params: vec![text(session_json), text(trace_json)],
        compact: false,
    }
}

/// The SQLite table that stands for those settings: the one row a mutation
/// writes first and deletes last, in its transaction (SQLite has one writer at a
/// time, so no other write sees it).
pub const SQLITE_EVENT_SESSION: &str = "grafton_catalog_event_session";

/// SQLite's [`set_session`]: the session table made if missing, then its row.
pub fn set_session_sqlite(session_json: &str, trace_json: &str) -> (String, Statement) {
    let text = |v: &str| crate::Param {
        value: crate::ParamValue::Literal(serde_json::Value::String(v.to_owned())),
        ty: crate::SqlType::Builtin("text"),
        list: false,
    };
    let create = format!(
        "CREATE TABLE IF NOT EXISTS {SQLITE_EVENT_SESSION} \
         (id INTEGER PRIMARY KEY CHECK (id = 1), session TEXT, trace TEXT)"
    );
    let set = Statement {
        sql: format!(
            "INSERT OR REPLACE INTO {SQLITE_EVENT_SESSION} (id, session, trace) VALUES (1, ?1, ?2)"
        ),
        params: vec![text(session_json), text(trace_json)],
        compact: false,
    };
    (create, set)
}

/// Renders a top-level `SELECT`.
pub fn render(select: &Select, dialect: Dialect) -> Statement {
    let mut r = Renderer {
        dialect,
        sql: String::with_capacity(512),
        params: Vec::new(),
        bare_params: false,
        read: None,
        multiplexed: false,
        renamed: None,
        padded: false,
    };
    r.select(select);
    Statement {
        compact: !r.padded,
        sql: r.sql,
        params: r.params,
    }
}

/// Renders a write statement.
pub fn render_write(write: &Write, dialect: Dialect) -> Statement {
    let mut r = Renderer {
        dialect,
        sql: String::with_capacity(256),
        params: Vec::new(),
        bare_params: false,
        read: None,
        multiplexed: false,
        renamed: None,
        padded: false,
    };
    match write {
        Write::Insert(i) => r.insert(i),
        Write::Update(u) => r.update(u),
        Write::Delete(d) => r.delete(d),
    }
    Statement {
        compact: !r.padded,
        sql: r.sql,
        params: r.params,
    }
}

struct Renderer {
    dialect: Dialect,
    sql: String,
    params: Vec<Param>,
    /// SQLite: render parameters as plain `?n` (see [`Renderer::param`]).
    bare_params: bool,
    /// `Some` while collecting the tables the statement reads.
    read: Option<std::collections::BTreeSet<(Option<String>, String)>>,
    /// Parameters are read from each subscriber's values ([`render_multiplexed`]).
    multiplexed: bool,
    /// References to this alias are rendered as the other name, or bare (`None`):
    /// SQLite's `RETURNING` takes no qualifier, and a SQLite view is not aliased in
    /// `UPDATE` and `DELETE`.
    renamed: Option<(String, Option<String>)>,
    /// Set when PostgreSQL will print JSON with whitespace in it (see
    /// [`Statement::compact`]).
    padded: bool,
}

impl Renderer {
    fn push(&mut self, s: &str) {
        self.sql.push_str(s);
    }

    fn ident(&mut self, name: &str) {
        self.sql.push('"');
        for c in name.chars() {
            if c == '"' {
                self.sql.push('"');
            }
            self.sql.push(c);
        }
        self.sql.push('"');
    }

    fn string(&mut self, s: &str) {
        self.sql.push('\'');
        for c in s.chars() {
            if c == '\'' {
                self.sql.push('\'');
            }
            self.sql.push(c);
        }
        self.sql.push('\'');
    }

    /// Same param (same variable or literal, same type) reuses its placeholder.
    fn param(&mut self, p: &Param) {
        let bound;
        let p = match self.bound_type(&p.ty) {
            Some(ty) => {
                bound = Param { ty, ..p.clone() };
                &bound
            }
            None => p,
        };
        let index = match self.params.iter().position(|q| q == p) {
            Some(i) => i + 1,
            None => {
                self.params.push(p.clone());
                self.params.len()
            }
        };
        if let (SqlType::Spatial { schema, geography }, Dialect::Postgres) = (&p.ty, self.dialect) {
            return self.spatial_param(index, p, schema, *geography);
        }
        self.placeholder(index, p);
    }

    /// A GeoJSON parameter read as PostGIS reads it (`ST_GeomFromGeoJSON`), each
    /// element of a list so.
    fn spatial_param(&mut self, index: usize, p: &Param, schema: &str, geography: bool) {
        let text = Param {
            ty: SqlType::Builtin("text"),
            ..p.clone()
        };
        let read = |r: &mut Self, value: &dyn Fn(&mut Self)| {
            r.ident(schema);
            r.push(".\"st_geomfromgeojson\"(");
            value(r);
            r.push(")");
            if geography {
                r.push("::");
                r.ident(schema);
                r.push(".\"geography\"");
            }
        };
        if p.list {
            // A null list stays null (matching nothing), as other types' do.
            self.push("CASE WHEN ");
            self.placeholder(index, &text);
            self.push(" IS NULL THEN NULL ELSE ARRAY(SELECT ");
            read(self, &|r| r.push("\"_g\""));
            self.push(" FROM unnest(");
            self.placeholder(index, &text);
            self.push(") AS \"_g\") END");
        } else {
            // A scalar subquery: evaluated once (an InitPlan), where a bare call
            // would parse the GeoJSON again for every row the index finds
            // (measured 2.2 against 4.6 ms for 1,500 candidate rows).
            self.push("(SELECT ");
            read(self, &|r| r.placeholder(index, &text));
            self.push(")");
        }
    }

    /// `$n::type` (or a subscriber's value, or SQLite's `?n`) for parameter `index`.
    fn placeholder(&mut self, index: usize, p: &Param) {
        if self.multiplexed {
            return self.subscriber_value(index - 1, p);
        }
        match self.dialect {
            Dialect::Postgres => {
                let _ = write!(self.sql, "${index}::");
                self.sql_type(&p.ty);
                if p.list {
                    self.push("[]");
                }
            }
            // `+?n`: with ANALYZE's sqlite_stat4, a bare parameter in a condition makes
            // SQLite re-prepare the statement for every new value (a measured 20% of
            // the time of a filtered query); unary plus keeps the value and the index
            // use but not the re-prepare. LIKE patterns stay bare: their prefix
            // optimisation needs the parameter itself.
            Dialect::Sqlite if self.bare_params => {
                let _ = write!(self.sql, "?{index}");
            }
            Dialect::Sqlite => {
                let _ = write!(self.sql, "+?{index}");
            }
        }
    }

    /// The type a parameter of type `ty` is bound as, where it is not `ty` itself:
    /// a [`SqlType::Stored`] value's (SQLite stores text, or JSON, and lets the
    /// column's affinity convert it), and SQLite's `text` for PostgreSQL's `citext`.
    fn bound_type(&self, ty: &SqlType) -> Option<SqlType> {
        match (self.dialect, ty) {
            (Dialect::Postgres, SqlType::Stored(inner)) => Some((**inner).clone()),
            (Dialect::Sqlite, SqlType::Stored(inner)) => Some(SqlType::Builtin(match **inner {
                SqlType::Builtin("json" | "jsonb") => "json",
                _ => "text",
            })),
            (Dialect::Sqlite, SqlType::Builtin("citext")) => Some(SqlType::Builtin("text")),
            _ => None,
        }
    }

    fn sql_type(&mut self, ty: &SqlType) {
        match ty {
            SqlType::Builtin(name) => self.ident(name),
            SqlType::Named { schema, name } => {
                self.ident(schema);
                self.push(".");
                self.ident(name);
            }
            SqlType::Stored(inner) => self.sql_type(inner),
            SqlType::Spatial { schema, geography } => {
                self.ident(schema);
                self.push(".");
                self.ident(if *geography { "geography" } else { "geometry" });
            }
        }
    }

    fn comma_list<T>(&mut self, items: &[T], mut each: impl FnMut(&mut Self, &T)) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            each(self, item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(i: i64) -> Expr {
        Expr::Compare {
            left: Box::new(Expr::column("t", "id")),
            op: BinOp::Eq,
            right: Box::new(Expr::Int(i)),
        }
    }

    fn depth(sql: &str) -> usize {
        let mut d: usize = 0;
        let mut max = 0;
        for c in sql.chars() {
            match c {
                '(' => {
                    d += 1;
                    max = max.max(d);
                }
                ')' => d = d.saturating_sub(1),
                _ => {}
            }
        }
        max
    }

    #[test]
    fn long_disjunctions_nest_shallowly_and_keep_every_term() {
        let items: Vec<Expr> = (0..5000).map(leaf).collect();
        let select = Select {
            filter: Some(Expr::Or(items)),
            ..Select::default()
        };
        let sql = render(&select, Dialect::Sqlite).sql;
        assert_eq!(sql.matches(" OR ").count(), 4999);
        assert!(depth(&sql) <= 5, "depth {}", depth(&sql));
    }

    #[test]
    fn identifiers_and_strings_are_escaped() {
        let select = Select {
            items: vec![SelectItem::Expr(Expr::Str("it's".into()), "a\"b".into())],
            from: Some(From::Table {
                schema: Some("s\"x".into()),
                name: "t".into(),
                alias: "_t0".into(),
            }),
            ..Select::default()
        };
        assert_eq!(
            render(&select, Dialect::Postgres).sql,
            r#"SELECT 'it''s' AS "a""b" FROM "s""x"."t" AS "_t0""#
        );
    }
}
