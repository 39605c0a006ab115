//! Rendering the AST to SQL text for one dialect, collecting bind parameters in order.

use crate::ast::*;
use serde::Serialize;
use std::fmt::Write as _;

mod json_ops;
mod key_ids;
mod multiplex;
mod size_guard;

pub use multiplex::{render_multiplexed, Multiplexed};
pub use size_guard::{size_guard_multiplexed, size_guard_postgres};

/// Which SQL dialect to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Dialect {
    /// PostgreSQL: `$n::type` parameters, `json_build_object`, `DISTINCT ON`.
    Postgres,
    /// SQLite: `?n` parameters, `json_object`, window-function `DISTINCT ON`.
    Sqlite,
}

/// Rendered SQL text and its parameters; parameter `i` is `$i+1` / `?i+1` in the text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Statement {
    /// The SQL text.
    pub sql: String,
    /// Parameters in placeholder order.
    pub params: Vec<Param>,
}

/// Postgres caps function arguments at 100, so wide objects are built in chunks and joined.
const PG_MAX_PAIRS: usize = 50;
/// Longer AND/OR lists are rendered as nested groups of at most this many terms.
const JUNCTION_FANOUT: usize = 32;
/// SQLite's default cap is 127 arguments per function call.
const SQLITE_MAX_PAIRS: usize = 60;

/// Renders a top-level `SELECT`.
pub fn render(select: &Select, dialect: Dialect) -> Statement {
    let mut r = Renderer {
        dialect,
        sql: String::with_capacity(512),
        params: Vec::new(),
        bare_params: false,
        read: None,
        multiplexed: false,
    };
    r.select(select);
    Statement {
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
    };
    match write {
        Write::Insert(i) => r.insert(i),
        Write::Update(u) => r.update(u),
        Write::Delete(d) => r.delete(d),
    }
    Statement {
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
        let index = match self.params.iter().position(|q| q == p) {
            Some(i) => i + 1,
            None => {
                self.params.push(p.clone());
                self.params.len()
            }
        };
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

    fn sql_type(&mut self, ty: &SqlType) {
        match ty {
            SqlType::Builtin(name) => self.ident(name),
            SqlType::Named { schema, name } => {
                self.ident(schema);
                self.push(".");
                self.ident(name);
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

    fn select(&mut self, s: &Select) {
        if self.dialect == Dialect::Sqlite && !s.distinct_on.is_empty() {
            if let Some(From::Table { alias, .. }) = &s.from {
                return self.sqlite_distinct_on(s, alias);
            }
        }
        self.push("SELECT ");
        if !s.distinct_on.is_empty() {
            self.push("DISTINCT ON (");
            self.comma_list(&s.distinct_on, |r, e| r.expr(e));
            self.push(") ");
        }
        self.select_items(&s.items);
        if let Some(from) = &s.from {
            self.push(" FROM ");
            self.from(from);
        }
        self.select_tail(s.filter.as_ref(), s);
        if s.lock && self.dialect == Dialect::Postgres {
            if let Some(From::Table { alias, .. }) = &s.from {
                self.push(" FOR UPDATE OF ");
                self.ident(alias);
            }
        }
    }

    fn table_ref(&mut self, t: &TableRef) {
        if let Some(schema) = &t.schema {
            self.ident(schema);
            self.push(".");
        }
        self.ident(&t.name);
        // A table that is its own alias (a SQLite view, which takes no alias in
        // UPDATE and DELETE) is named once.
        if t.alias != t.name {
            self.push(" AS ");
            self.ident(&t.alias);
        }
    }

    fn returning(&mut self, items: &[Expr]) {
        if !items.is_empty() {
            self.push(" RETURNING ");
            self.comma_list(items, |r, e| r.expr(e));
        }
    }

    fn insert(&mut self, i: &Insert) {
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

    fn update(&mut self, u: &Update) {
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

    fn delete(&mut self, d: &Delete) {
        self.push("DELETE FROM ");
        self.table_ref(&d.table);
        if let Some(f) = &d.filter {
            self.push(" WHERE ");
            self.expr(f);
        }
        self.returning(&d.returning);
    }

    fn row_ids_from(&mut self, t: &TableRef, ids: &[Param]) {
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

    fn row_id_in(&mut self, alias: &str, ids: &[Param]) {
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

    fn column_update(&mut self, column: &Expr, op: UpdateOp, operand: &Expr) {
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

    fn select_items(&mut self, items: &[SelectItem]) {
        if items.is_empty() {
            self.push("1");
        }
        self.comma_list(items, |r, item| match item {
            SelectItem::Expr(e, alias) => {
                r.expr(e);
                r.push(" AS ");
                r.ident(alias);
            }
            SelectItem::AllFrom(alias) => {
                r.ident(alias);
                r.push(".*");
            }
        });
    }

    fn select_tail(&mut self, filter: Option<&Expr>, s: &Select) {
        if let Some(f) = filter {
            self.push(" WHERE ");
            self.expr(f);
        }
        if !s.order_by.is_empty() {
            self.push(" ORDER BY ");
            self.order_items(&s.order_by);
        }
        if let Some(l) = &s.limit {
            self.push(" LIMIT ");
            self.page_value(l, "-1");
        } else if s.offset.is_some() && self.dialect == Dialect::Sqlite {
            // SQLite only accepts OFFSET after a LIMIT.
            self.push(" LIMIT -1");
        }
        if let Some(o) = &s.offset {
            self.push(" OFFSET ");
            self.page_value(o, "0");
        }
    }

    /// A LIMIT/OFFSET value. A NULL parameter means "none" on Postgres; SQLite needs
    /// it spelled out (`-1` is no limit, `0` no offset).
    fn page_value(&mut self, e: &Expr, sqlite_none: &str) {
        if self.dialect == Dialect::Sqlite && matches!(e, Expr::Param(_)) {
            self.push("coalesce(");
            self.expr(e);
            let _ = write!(self.sql, ", {sqlite_none})");
        } else {
            self.expr(e);
        }
    }

    /// SQLite has no `DISTINCT ON`: keep the first row per partition by a window.
    fn sqlite_distinct_on(&mut self, s: &Select, alias: &str) {
        self.push("SELECT ");
        self.select_items(&s.items);
        self.push(" FROM (SELECT ");
        self.ident(alias);
        self.push(".*, row_number() OVER (PARTITION BY ");
        self.comma_list(&s.distinct_on, |r, e| r.expr(e));
        if !s.order_by.is_empty() {
            self.push(" ORDER BY ");
            self.order_items(&s.order_by);
        }
        self.push(") AS \"__grafton_rn\"");
        if let Some(from) = &s.from {
            self.push(" FROM ");
            self.from(from);
        }
        if let Some(f) = &s.filter {
            self.push(" WHERE ");
            self.expr(f);
        }
        self.push(") AS ");
        self.ident(alias);
        let rn = Expr::Compare {
            left: Box::new(Expr::Column {
                table: alias.to_owned(),
                column: "__grafton_rn".to_owned(),
            }),
            op: BinOp::Eq,
            right: Box::new(Expr::Int(1)),
        };
        self.select_tail(Some(&rn), s);
    }

    fn from(&mut self, f: &From) {
        match f {
            From::Table {
                schema,
                name,
                alias,
            } => {
                if let Some(read) = &mut self.read {
                    read.insert((schema.clone(), name.clone()));
                }
                if let Some(schema) = schema {
                    self.ident(schema);
                    self.push(".");
                }
                self.ident(name);
                self.push(" AS ");
                self.ident(alias);
            }
            From::RowIds { table, ids, key } if !key.is_empty() => {
                self.key_ids_from(table, ids, key)
            }
            From::RowIds { table, ids, .. } => self.row_ids_from(table, ids),
            From::Subquery { select, alias } => {
                self.push("(");
                self.select(select);
                self.push(") AS ");
                self.ident(alias);
            }
        }
    }

    fn order_items(&mut self, items: &[OrderItem]) {
        self.comma_list(items, |r, o| {
            r.expr(&o.expr);
            r.push(match o.direction {
                Direction::Asc => " ASC",
                Direction::Desc => " DESC",
            });
            match o.nulls {
                Some(Nulls::First) => r.push(" NULLS FIRST"),
                Some(Nulls::Last) => r.push(" NULLS LAST"),
                None => {}
            }
        });
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Column { table, column } => {
                self.ident(table);
                self.push(".");
                self.ident(column);
            }
            Expr::Param(p) => self.param(p),
            Expr::Bare(name) => self.ident(name),
            Expr::ColumnUpdate {
                column,
                op,
                operand,
            } => self.column_update(column, *op, operand),
            Expr::RowIdOrder(alias) => {
                self.ident(&format!("{alias}_k"));
                self.push(match self.dialect {
                    Dialect::Postgres => ".\"n\"",
                    Dialect::Sqlite => ".\"key\"",
                });
            }
            Expr::RowIdIn { alias, ids, key } if !key.is_empty() => self.key_in(alias, ids, key),
            Expr::RowIdIn { alias, ids, .. } => self.row_id_in(alias, ids),
            Expr::Least(value, cap) => match self.dialect {
                // LEAST skips NULLs; SQLite's min() would return NULL.
                Dialect::Postgres => {
                    self.push("LEAST(");
                    self.expr(value);
                    let _ = write!(self.sql, ", {cap})");
                }
                Dialect::Sqlite => {
                    self.push("min(coalesce(");
                    self.expr(value);
                    let _ = write!(self.sql, ", {cap}), {cap})");
                }
            },
            Expr::Str(s) => self.string(s),
            Expr::Int(i) => {
                let _ = write!(self.sql, "{i}");
            }
            Expr::Bool(true) => self.push("TRUE"),
            Expr::Bool(false) => self.push("FALSE"),
            Expr::Null => self.push("NULL"),
            Expr::Compare { left, op, right } => {
                self.push("(");
                self.expr(left);
                self.push(match op {
                    BinOp::Eq => " = ",
                    BinOp::Neq => " <> ",
                    BinOp::Gt => " > ",
                    BinOp::Gte => " >= ",
                    BinOp::Lt => " < ",
                    BinOp::Lte => " <= ",
                });
                self.expr(right);
                self.push(")");
            }
            Expr::Pattern {
                expr,
                op,
                negated,
                pattern,
            } => self.pattern(expr, *op, *negated, pattern),
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                self.push("(");
                self.expr(expr);
                match self.dialect {
                    Dialect::Postgres => {
                        self.push(if *negated { " <> ALL(" } else { " = ANY(" });
                        self.param(list);
                        self.push(")");
                    }
                    Dialect::Sqlite => {
                        self.push(if *negated { " NOT IN" } else { " IN" });
                        self.push(" (SELECT value FROM json_each(");
                        self.param(list);
                        self.push("))");
                    }
                }
                self.push(")");
            }
            Expr::JsonTest { expr, op, operand } => self.json_test(expr, *op, operand),
            Expr::JsonAt { expr, path } => self.json_at(expr, path),
            Expr::IsNull { expr, negated } => {
                self.push("(");
                self.expr(expr);
                self.push(if *negated {
                    " IS NOT NULL)"
                } else {
                    " IS NULL)"
                });
            }
            Expr::IsNullParam { expr, param } => {
                self.push("((");
                self.expr(expr);
                self.push(" IS NULL) = ");
                self.param(param);
                self.push(")");
            }
            Expr::And(items) => self.junction(items, " AND ", "TRUE"),
            Expr::Or(items) => self.junction(items, " OR ", "FALSE"),
            Expr::Not(inner) => {
                self.push("(NOT ");
                self.expr(inner);
                self.push(")");
            }
            Expr::NotTrue(inner) => {
                self.push("(");
                self.expr(inner);
                self.push(" IS NOT TRUE)");
            }
            Expr::Exists(s) => {
                self.push("EXISTS (");
                self.select(s);
                self.push(")");
            }
            Expr::Subquery(s) => {
                self.push("(");
                self.select(s);
                self.push(")");
            }
            Expr::JsonSubquery(s) => match self.dialect {
                Dialect::Postgres => {
                    self.push("(");
                    self.select(s);
                    self.push(")");
                }
                Dialect::Sqlite => {
                    // Subquery results lose SQLite's JSON subtype; json() restores it.
                    self.push("json((");
                    self.select(s);
                    self.push("))");
                }
            },
            Expr::JsonObject(pairs) => self.json_object(pairs),
            Expr::ToJson(inner, kind) => self.json_value(inner, *kind),
            Expr::JsonAgg { expr, order_by } => {
                match self.dialect {
                    Dialect::Postgres => self.push("coalesce(json_agg("),
                    Dialect::Sqlite => self.push("json_group_array(json("),
                }
                self.expr(expr);
                if self.dialect == Dialect::Sqlite {
                    self.push(")");
                }
                if !order_by.is_empty() {
                    self.push(" ORDER BY ");
                    self.order_items(order_by);
                }
                match self.dialect {
                    Dialect::Postgres => self.push("), '[]')"),
                    // json_group_array already yields [] for no rows.
                    Dialect::Sqlite => self.push(")"),
                }
            }
            Expr::Cast(inner, ty) => match self.dialect {
                Dialect::Postgres => {
                    self.push("(");
                    self.expr(inner);
                    self.push(")::");
                    self.sql_type(ty);
                }
                Dialect::Sqlite => {
                    self.push("CAST(");
                    self.expr(inner);
                    self.push(" AS TEXT)");
                }
            },
            Expr::CountStar => self.push("count(*)"),
            Expr::Count { columns, distinct } => self.count(columns, *distinct),
            Expr::Agg(func, inner) => self.agg(*func, inner),
        }
    }

    fn junction(&mut self, items: &[Expr], sep: &str, empty: &str) {
        match items {
            [] => self.push(empty),
            [one] => self.expr(one),
            _ if items.len() > JUNCTION_FANOUT => {
                // `a OR b OR c …` parses as a left-deep tree, and SQLite refuses trees
                // deeper than 1000; nesting groups keeps the depth logarithmic.
                self.push("(");
                for (i, group) in items
                    .chunks(items.len().div_ceil(JUNCTION_FANOUT))
                    .enumerate()
                {
                    if i > 0 {
                        self.push(sep);
                    }
                    self.junction(group, sep, empty);
                }
                self.push(")");
            }
            _ => {
                self.push("(");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.push(sep);
                    }
                    self.expr(item);
                }
                self.push(")");
            }
        }
    }

    fn pattern(&mut self, expr: &Expr, op: PatternOp, negated: bool, pattern: &Expr) {
        self.push("(");
        let sqlite = self.dialect == Dialect::Sqlite;
        if sqlite && op == PatternOp::ILike {
            self.push("lower(");
            self.expr(expr);
            self.push(")");
        } else {
            self.expr(expr);
        }
        let not = if negated { " NOT" } else { "" };
        match (op, self.dialect) {
            (PatternOp::Like, _) | (PatternOp::ILike, Dialect::Sqlite) => {
                let _ = write!(self.sql, "{not} LIKE ");
            }
            (PatternOp::ILike, Dialect::Postgres) => {
                let _ = write!(self.sql, "{not} ILIKE ");
            }
            (PatternOp::Similar, _) => {
                let _ = write!(self.sql, "{not} SIMILAR TO ");
            }
            (PatternOp::Regex | PatternOp::IRegex, Dialect::Sqlite) => {
                let _ = write!(self.sql, "{not} REGEXP ");
            }
            (PatternOp::Regex, Dialect::Postgres) => {
                self.push(if negated { " !~ " } else { " ~ " });
            }
            (PatternOp::IRegex, Dialect::Postgres) => {
                self.push(if negated { " !~* " } else { " ~* " });
            }
        }
        self.bare_params = sqlite && matches!(op, PatternOp::Like);
        if sqlite && op == PatternOp::ILike {
            self.push("lower(");
            self.expr(pattern);
            self.push(")");
        } else {
            self.expr(pattern);
        }
        self.bare_params = false;
        if sqlite && matches!(op, PatternOp::Like | PatternOp::ILike) {
            // Postgres escapes LIKE patterns with backslash by default; SQLite needs it said.
            self.push(" ESCAPE '\\'");
        }
        self.push(")");
    }

    fn json_object(&mut self, pairs: &[(String, Expr)]) {
        match self.dialect {
            Dialect::Postgres => self.pg_json_object(pairs),
            Dialect::Sqlite => self.sqlite_json_object(pairs),
        }
    }

    fn pairs(&mut self, pairs: &[(String, Expr)]) {
        self.comma_list(pairs, |r, (k, v)| {
            r.string(k);
            r.push(", ");
            r.expr(v);
        });
    }

    /// Wider objects than one call allows are built per chunk and joined as text:
    /// `{a…}` `{b…}` → `{a…, b…}`, keeping key order and evaluating each value once.
    fn pg_json_object(&mut self, pairs: &[(String, Expr)]) {
        if pairs.len() <= PG_MAX_PAIRS {
            self.push("json_build_object(");
            self.pairs(pairs);
            self.push(")");
            return;
        }
        let chunks: Vec<&[(String, Expr)]> = pairs.chunks(PG_MAX_PAIRS).collect();
        let last = chunks.len() - 1;
        self.push("(");
        for (i, chunk) in chunks.iter().enumerate() {
            if i > 0 {
                self.push(" || ', ' || ");
            }
            // Drop the closing brace of all but the last chunk, the opening of all but the first.
            let (open, close) = match (i == 0, i == last) {
                (true, _) => ("left(", "::text, -1)"),
                (false, true) => ("right(", "::text, -1)"),
                (false, false) => ("substr(left(", "::text, -1), 2)"),
            };
            self.push(open);
            self.push("json_build_object(");
            self.pairs(chunk);
            self.push(")");
            self.push(close);
        }
        self.push(")::json");
    }

    /// SQLite caps arguments per call; further keys are appended with `json_insert`,
    /// which adds them at the end, in order.
    fn sqlite_json_object(&mut self, pairs: &[(String, Expr)]) {
        let chunks: Vec<&[(String, Expr)]> = if pairs.is_empty() {
            vec![pairs]
        } else {
            pairs.chunks(SQLITE_MAX_PAIRS).collect()
        };
        for _ in 1..chunks.len() {
            self.push("json_insert(");
        }
        self.push("json_object(");
        self.pairs(chunks[0]);
        self.push(")");
        for chunk in &chunks[1..] {
            for (k, v) in chunk.iter() {
                self.push(", ");
                // Keys are GraphQL names, but escape as a JSON path key regardless.
                self.string(&format!("$.\"{}\"", k.replace('"', "\\\"")));
                self.push(", ");
                self.expr(v);
            }
            self.push(")");
        }
    }

    fn json_value(&mut self, inner: &Expr, kind: JsonKind) {
        match (self.dialect, kind) {
            (Dialect::Postgres, _) | (Dialect::Sqlite, JsonKind::Plain) => self.expr(inner),
            (Dialect::Sqlite, JsonKind::Boolean) => {
                self.push("CASE WHEN ");
                self.expr(inner);
                self.push(" IS NULL THEN NULL WHEN ");
                self.expr(inner);
                self.push(" THEN json('true') ELSE json('false') END");
            }
            (Dialect::Sqlite, JsonKind::Float) => {
                // Integral floats print as `2`, as Postgres prints float8; the
                // executor registers this function on every connection.
                self.push("grafton_float(");
                self.expr(inner);
                self.push(")");
            }
            (Dialect::Sqlite, JsonKind::Json) => {
                self.push("json(");
                self.expr(inner);
                self.push(")");
            }
        }
    }

    fn count(&mut self, columns: &[Expr], distinct: bool) {
        match columns {
            [] => self.push("count(*)"),
            [one] => {
                self.push(if distinct {
                    "count(DISTINCT "
                } else {
                    "count("
                });
                self.expr(one);
                self.push(")");
            }
            many => {
                if distinct {
                    self.push(match self.dialect {
                        Dialect::Postgres => "count(DISTINCT ROW(",
                        Dialect::Sqlite => "count(DISTINCT json_array(",
                    });
                    self.comma_list(many, |r, e| r.expr(e));
                    self.push("))");
                } else {
                    self.push("count(*)");
                }
                self.push(" FILTER (WHERE ");
                for (i, c) in many.iter().enumerate() {
                    if i > 0 {
                        self.push(" AND ");
                    }
                    self.expr(c);
                    self.push(" IS NOT NULL");
                }
                self.push(")");
            }
        }
    }

    fn agg(&mut self, func: AggFunc, inner: &Expr) {
        let name = match (self.dialect, func) {
            (_, AggFunc::Sum) => "sum",
            (_, AggFunc::Min) => "min",
            (_, AggFunc::Max) => "max",
            (_, AggFunc::Avg) => "avg",
            (Dialect::Postgres, AggFunc::Stddev) => "stddev",
            (Dialect::Postgres, AggFunc::StddevPop) => "stddev_pop",
            (Dialect::Postgres, AggFunc::StddevSamp) => "stddev_samp",
            (Dialect::Postgres, AggFunc::VarPop) => "var_pop",
            (Dialect::Postgres, AggFunc::VarSamp) => "var_samp",
            (Dialect::Postgres, AggFunc::Variance) => "variance",
            // SQLite has none of these built in; the executor registers them.
            (Dialect::Sqlite, AggFunc::Stddev | AggFunc::StddevSamp) => "grafton_stddev_samp",
            (Dialect::Sqlite, AggFunc::StddevPop) => "grafton_stddev_pop",
            (Dialect::Sqlite, AggFunc::VarPop) => "grafton_var_pop",
            (Dialect::Sqlite, AggFunc::VarSamp | AggFunc::Variance) => "grafton_var_samp",
        };
        self.push(name);
        self.push("(");
        self.expr(inner);
        self.push(")");
        if self.dialect == Dialect::Postgres && func.is_statistical() {
            // numeric results would print as 2.5000000000000000; GraphQL says Float.
            self.push("::float8");
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
