//! The Relay API's connections and global ids as SQL.
//!
//! A page is the list query's inner select (filter, rules, order) cut at the cursor
//! (a keyset condition on the sort keys, the primary key last) and limited to
//! `first` (or, sorted the other way, `last`) rows; the outer aggregate builds the
//! edges in order and the page's info. Whether rows lie beyond the page is asked
//! with `EXISTS`: past its end, one row at its size as offset; before its cursor,
//! any row the cursor's condition excludes. So a page reads its rows and at most
//! one more in each direction, through the sort key's index, however long the list.

use crate::ctx::Ctx;
use crate::keyset::{beyond, reversed};
use crate::read_columns::{project_order_keys, select_read_columns};
use grafton_ir::{Connection, ConnectionField, EdgeField, PageInfoField};
use grafton_schema::{RelId, TableId};
use grafton_sql::{BinOp, Expr, From, JsonKind, OrderItem, Param, Select, SelectItem, SqlType};

/// The column under which a page's inner query carries each row's cursor.
const CURSOR: &str = "__grafton_cursor";

impl Ctx<'_> {
    /// A connection's JSON object (`edges`, `pageInfo`), as a scalar subquery.
    pub(crate) fn connection(&mut self, c: &Connection, parent: Option<(RelId, &str)>) -> Expr {
        let (mut inner, alias, order) = self.base(c.table, &c.args, parent, false, None);
        let size = (c.first.as_ref().or(c.last.as_ref())).map(|v| {
            Expr::Param(Param {
                value: v.clone(),
                ty: SqlType::Builtin("int8"),
                list: false,
            })
        });
        // The role's row limit caps every page.
        inner.limit = self.capped_limit(c.table, size);
        let unsplit = inner.filter.take();
        let keys = self.keys(c, &order);
        let split = c.split.as_ref().map(|s| {
            // DISTINCT ON keeps one row per group: a page starts at the next group.
            let n = match c.args.distinct_on.len() {
                0 => keys.len(),
                n => n.min(keys.len()),
            };
            (s.before, beyond(&keys[..n], &s.values[..n], s.before))
        });
        inner.filter = and(unsplit.clone(), split.as_ref().map(|(_, e)| e.clone()));
        let backward = c.last.is_some();
        if backward {
            // With DISTINCT ON only the groups' order turns: each group keeps the
            // row it keeps going forwards.
            let groups = match c.args.distinct_on.len() {
                0 => order.len(),
                n => n.min(order.len()),
            };
            inner.order_by = reversed(&order[..groups]);
            inner.order_by.extend_from_slice(&order[groups..]);
        }
        let one = || vec![SelectItem::Expr(Expr::Int(1), "one".into())];
        // A row past the page's far end (at its size as offset).
        let more = inner.limit.clone().map(|size| {
            let mut s = inner.clone();
            s.items = one();
            s.limit = Some(Expr::Int(1));
            s.offset = Some(size);
            Expr::Exists(Box::new(s))
        });
        // A row on the cursor's side of it.
        let rest = split.map(|(before, condition)| {
            let rest = Select {
                items: one(),
                from: inner.from.clone(),
                filter: and(unsplit, Some(Expr::NotTrue(Box::new(condition)))),
                ..Select::default()
            };
            (before, Expr::Exists(Box::new(rest)))
        });
        let (mut next, mut previous) = (Vec::new(), Vec::new());
        match backward {
            false => next.extend(more),
            true => previous.extend(more),
        }
        if let Some((before, exists)) = rest {
            match before {
                true => next.push(exists),
                false => previous.push(exists),
            }
        }
        let outer_alias = self.alias("_e");
        self.wrapped.insert(outer_alias.clone());
        let agg_order = project_order_keys(&mut inner, &outer_alias, &order);
        let cursor = Expr::column(&outer_alias, CURSOR);
        let mut wants_cursor = false;
        let nonempty = Expr::Compare {
            left: Box::new(Expr::CountStar),
            op: BinOp::Gt,
            right: Box::new(Expr::Int(0)),
        };
        let flag = |any: &[Expr]| {
            let e = match any {
                [] => Expr::Bool(false),
                _ => Expr::And(vec![nonempty.clone(), Expr::Or(any.to_vec())]),
            };
            Expr::ToJson(Box::new(e), JsonKind::Boolean)
        };
        // The outer select is an aggregate whatever is selected (one object
        // for the page, also when only `__typename` or a constant flag is asked).
        let one_row = Expr::Compare {
            left: Box::new(Expr::CountStar),
            op: BinOp::Gte,
            right: Box::new(Expr::Int(0)),
        };
        let mut pairs = Vec::with_capacity(c.fields.len());
        for (key, field) in &c.fields {
            let value = match field {
                ConnectionField::Typename(name) => Expr::Str(name.clone()),
                ConnectionField::Edges(fields) => {
                    let mut edge = Vec::with_capacity(fields.len());
                    for (key, field) in fields {
                        let value = match field {
                            EdgeField::Typename(name) => Expr::Str(name.clone()),
                            EdgeField::Cursor => {
                                wants_cursor = true;
                                Expr::ToJson(Box::new(cursor.clone()), JsonKind::Plain)
                            }
                            EdgeField::Node(fields) => {
                                self.row_object(c.table, &outer_alias, fields)
                            }
                        };
                        edge.push((key.clone(), value));
                    }
                    Expr::JsonAgg {
                        expr: Box::new(Expr::JsonObject(edge)),
                        order_by: agg_order.clone(),
                    }
                }
                ConnectionField::PageInfo(fields) => {
                    let mut info = Vec::with_capacity(fields.len());
                    for (key, field) in fields {
                        let end = |order: Vec<OrderItem>| {
                            let first = Expr::FirstBy {
                                expr: Box::new(cursor.clone()),
                                order_by: order,
                            };
                            Expr::ToJson(Box::new(first), JsonKind::Plain)
                        };
                        let value = match field {
                            PageInfoField::Typename(name) => Expr::Str(name.clone()),
                            PageInfoField::StartCursor => {
                                wants_cursor = true;
                                end(agg_order.clone())
                            }
                            PageInfoField::EndCursor => {
                                wants_cursor = true;
                                end(reversed(&agg_order))
                            }
                            PageInfoField::HasNextPage => flag(&next),
                            PageInfoField::HasPreviousPage => flag(&previous),
                        };
                        info.push((key.clone(), value));
                    }
                    Expr::JsonObject(info)
                }
            };
            pairs.push((key.clone(), value));
        }
        if wants_cursor {
            let entries = (c.cursor_keys.iter()).zip(keys.iter().map(|k| k.expr.clone()));
            let object = cursor_object(entries.map(|(p, e)| (p.as_slice(), e)).collect());
            let item = Expr::Base64(Box::new(object));
            inner.items.push(SelectItem::Expr(item, CURSOR.into()));
        }
        let object = Expr::JsonObject(pairs);
        let row = self.row_value(&alias);
        select_read_columns(&mut inner, &alias, &outer_alias, &object, row);
        let object = Expr::CaseWhen {
            when: Box::new(one_row),
            then: Box::new(object),
        };
        Expr::JsonSubquery(Box::new(Select {
            items: vec![SelectItem::Expr(object, "root".into())],
            from: Some(From::Subquery {
                select: Box::new(inner),
                alias: outer_alias,
            }),
            ..Select::default()
        }))
    }

    /// A row's global id: the base64 of `[1, "schema", "table", <key values…>]`.
    pub(crate) fn node_id(&self, table: TableId, alias: &str) -> Expr {
        let t = self.model.table(table);
        let mut items = vec![
            Expr::Int(1),
            Expr::Str(t.schema.clone()),
            Expr::Str(t.name.clone()),
        ];
        for &c in &self.model.tables[table].primary_key {
            items.push(Expr::column(alias, &t.columns[c].name));
        }
        Expr::ToJson(
            Box::new(Expr::Base64(Box::new(Expr::JsonArray(items)))),
            JsonKind::Plain,
        )
    }
}

fn and(a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Expr::And(vec![a, b])),
        (a, None) => a,
        (None, b) => b,
    }
}

/// One key of a cursor: a value, or a relationship's keys.
enum Entry<'p> {
    Value(Expr),
    Nested(Vec<(&'p [String], Expr)>),
}

/// A cursor: the sort keys' values as one JSON object, nested where a key's
/// path is (a relationship's keys under its name), in order.
fn cursor_object(entries: Vec<(&[String], Expr)>) -> Expr {
    let mut keys: Vec<(String, Entry)> = Vec::new();
    for (path, value) in entries {
        let Some((head, tail)) = path.split_first() else {
            continue;
        };
        let at = keys.iter_mut().find(|(k, _)| k == head);
        match (at, tail.is_empty()) {
            (None, true) => keys.push((head.clone(), Entry::Value(value))),
            (None, false) => keys.push((head.clone(), Entry::Nested(vec![(tail, value)]))),
            (Some((_, Entry::Nested(nested))), false) => nested.push((tail, value)),
            // A key met twice: its first value stands (both are the same).
            (Some(_), _) => {}
        }
    }
    let pairs = keys.into_iter().map(|(k, e)| {
        let value = match e {
            Entry::Value(v) => v,
            Entry::Nested(nested) => cursor_object(nested),
        };
        (k, value)
    });
    Expr::JsonObject(pairs.collect())
}
