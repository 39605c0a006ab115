//! `SELECT`: its items, source, filter, order and page, and SQLite's stand-in for
//! `DISTINCT ON`.

use super::*;

impl Renderer {
    pub(super) fn select(&mut self, s: &Select) {
        if self.dialect == Dialect::Sqlite && !s.distinct_on.is_empty() {
            // Whatever the rows come from: a table, or an inherited role's redacting
            // subquery.
            if let Some(from) = &s.from {
                return self.sqlite_distinct_on(s, from.alias());
            }
        }
        self.push("SELECT ");
        if !s.distinct_on.is_empty() {
            self.push("DISTINCT ON (");
            self.comma_list(&s.distinct_on, |r, e| r.expr(e));
            self.push(") ");
        }
        // PostgreSQL: a row's object as a record (see `Expr::RowObject`).
        let records = self.dialect == Dialect::Postgres
            && !s.lock
            && (s.items.iter()).any(|i| matches!(i, SelectItem::Expr(Expr::RowObject { .. }, _)));
        if records {
            self.comma_list(&s.items, |r, item| match item {
                SelectItem::Expr(Expr::RowObject { alias, .. }, name) => {
                    r.push("to_json(");
                    r.ident(alias);
                    r.push(") AS ");
                    r.ident(name);
                }
                other => r.select_item(other),
            });
        } else {
            self.select_items(&s.items);
        }
        if let Some(from) = &s.from {
            self.push(" FROM ");
            self.from(from);
        }
        if records {
            let mut first = s.from.is_none();
            for item in &s.items {
                if let SelectItem::Expr(Expr::RowObject { alias, pairs }, _) = item {
                    self.push(if first { " FROM " } else { ", LATERAL " });
                    first = false;
                    self.record(alias, pairs);
                }
            }
        }
        self.select_tail(s.filter.as_ref(), s);
        if s.lock && self.dialect == Dialect::Postgres {
            if let Some(From::Table { alias, .. }) = &s.from {
                self.push(" FOR UPDATE OF ");
                self.ident(alias);
            }
        }
    }

    /// `(SELECT value AS "key", …) AS "alias"`: a row's object as a record, whose
    /// columns PostgreSQL's `to_json` prints as the keys.
    pub(super) fn record(&mut self, alias: &str, pairs: &[(String, Expr)]) {
        self.push("(SELECT ");
        self.comma_list(pairs, |r, (key, value)| {
            r.expr(value);
            r.push(" AS ");
            r.ident(key);
        });
        self.push(") AS ");
        self.ident(alias);
    }

    /// A table's name, qualified by its schema on PostgreSQL. SQLite names a table
    /// alone: a file is one database (`main`), and an attached one would be named
    /// by its own alias, not the catalog's schema.
    pub(super) fn table_name(&mut self, schema: Option<&String>, name: &str) {
        if let (Some(schema), Dialect::Postgres) = (schema, self.dialect) {
            self.ident(schema);
            self.push(".");
        }
        self.ident(name);
    }

    pub(super) fn table_ref(&mut self, t: &TableRef) {
        self.table_name(t.schema.as_ref(), &t.name);
        self.push(" AS ");
        self.ident(&t.alias);
    }

    pub(super) fn select_items(&mut self, items: &[SelectItem]) {
        if items.is_empty() {
            self.push("1");
        }
        self.comma_list(items, |r, item| r.select_item(item));
    }

    fn select_item(&mut self, item: &SelectItem) {
        match item {
            SelectItem::Expr(e, alias) => {
                self.expr(e);
                let shown = match e {
                    Expr::ReadText(inner) if self.dialect == Dialect::Sqlite => inner,
                    e => e,
                };
                // A column keeps its own name without `AS`.
                if !matches!(shown, Expr::Column { column, .. } if column == alias) {
                    self.push(" AS ");
                    self.ident(alias);
                }
            }
            SelectItem::AllFrom(alias) => {
                self.ident(alias);
                self.push(".*");
            }
            SelectItem::Identity(alias) => {
                let items: Vec<SelectItem> = self
                    .identity_columns()
                    .iter()
                    .map(|&name| {
                        let column = Expr::column(alias, name);
                        SelectItem::Expr(Expr::ReadText(Box::new(column)), name.to_owned())
                    })
                    .collect();
                self.comma_list(&items, |r, item| r.select_item(item));
            }
        }
    }

    pub(super) fn select_tail(&mut self, filter: Option<&Expr>, s: &Select) {
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
    pub(super) fn page_value(&mut self, e: &Expr, sqlite_none: &str) {
        if self.dialect == Dialect::Sqlite && matches!(e, Expr::Param(_)) {
            self.push("coalesce(");
            self.expr(e);
            let _ = write!(self.sql, ", {sqlite_none})");
        } else {
            self.expr(e);
        }
    }

    /// SQLite has no `DISTINCT ON`: keep the first row per partition by a window.
    /// The windowed subquery carries only the columns the outer select reads.
    pub(super) fn sqlite_distinct_on(&mut self, s: &Select, alias: &str) {
        self.push("SELECT ");
        self.select_items(&s.items);
        self.push(" FROM (SELECT ");
        let whole_row = s
            .items
            .iter()
            .any(|i| matches!(i, SelectItem::AllFrom(a) | SelectItem::Identity(a) if a == alias));
        let read = s
            .items
            .iter()
            .filter_map(|i| match i {
                SelectItem::Expr(e, _) => Some(e),
                SelectItem::AllFrom(_) | SelectItem::Identity(_) => None,
            })
            .chain(s.order_by.iter().map(|o| &o.expr));
        match crate::refs::columns_of(alias, read).filter(|_| !whole_row) {
            Some(columns) => {
                for column in &columns {
                    self.ident(alias);
                    self.push(".");
                    self.ident(column);
                    self.push(", ");
                }
            }
            None => {
                self.ident(alias);
                self.push(".*, ");
            }
        }
        self.push("row_number() OVER (PARTITION BY ");
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

    pub(super) fn from(&mut self, f: &From) {
        match f {
            From::Table {
                schema,
                name,
                alias,
            } => {
                if let Some(read) = &mut self.read {
                    read.insert((schema.clone(), name.clone()));
                }
                self.table_name(schema.as_ref(), name);
                self.push(" AS ");
                self.ident(alias);
            }
            From::RowIds { table, ids } => self.identities_from(table, ids),
            From::Call {
                schema,
                name,
                args,
                alias,
            } => {
                self.ident(schema);
                self.push(".");
                self.ident(name);
                self.push("(");
                self.call_args(args);
                self.push(") AS ");
                self.ident(alias);
            }
            From::Subquery { select, alias } => {
                self.push("(");
                self.select(select);
                self.push(") AS ");
                self.ident(alias);
            }
        }
    }

    /// `"schema"."name"(args)`. Out of line: `expr` recurses once per nesting level.
    #[inline(never)]
    pub(super) fn func(
        &mut self,
        schema: &str,
        name: &str,
        args: &[(Option<String>, crate::ast::Expr)],
    ) {
        self.ident(schema);
        self.push(".");
        self.ident(name);
        self.push("(");
        self.call_args(args);
        self.push(")");
    }

    /// A function call's arguments: `a, "name" => b`.
    pub(super) fn call_args(&mut self, args: &[(Option<String>, crate::ast::Expr)]) {
        self.comma_list(args, |r, (name, value)| {
            if let Some(name) = name {
                r.ident(name);
                r.push(" => ");
            }
            r.expr(value);
        });
    }

    pub(super) fn order_items(&mut self, items: &[OrderItem]) {
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
}
