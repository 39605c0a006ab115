//! Row lists, single rows and aggregates as JSON-building subqueries.

use crate::ctx::{output_value, Ctx};
use crate::read_columns::{project_order_keys, select_read_columns};
use crate::record::{record_row, MAX_KEY_BYTES, MAX_RECORD_COLUMNS};
use grafton_catalog::Table;
use grafton_ir::permissions::{RoleRules, TableRules};
use grafton_ir::{Args, BoolExp, Field, PathStep, Query, Root, Rows};
use grafton_schema::{RelId, SchemaModel, TableId};
use grafton_sql::{Expr, From, JsonKind, JsonStep, OrderItem, Select, SelectItem};

/// Translates a query to one `SELECT` whose single value is the JSON `data` object,
/// with the role's row rules (if any) on every table it reads.
/// Returns `None` when no root field needs the database (only introspection).
pub fn translate_query(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    query: &Query,
) -> Option<Select> {
    translate_query_calling(model, rules, query).0
}

/// [`translate_query`], and whether the statement calls SQL functions (tracked
/// functions, computed fields), which may read tables it does not name.
pub fn translate_query_calling(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    query: &Query,
) -> (Option<Select>, bool) {
    let mut ctx = Ctx::new(model, rules);
    let select = query_select(&mut ctx, query);
    (select, ctx.calls.get())
}

fn query_select(ctx: &mut Ctx<'_>, query: &Query) -> Option<Select> {
    let mut pairs = Vec::new();
    for (key, root) in &query.root {
        let expr = match root {
            Root::Typename(name) => Expr::Str(name.clone()),
            Root::Introspection | Root::Action(_) | Root::Remote(_) => continue,
            Root::Rows(rows) => ctx.rows(rows, None),
            Root::Aggregate(agg) => ctx.aggregate(agg, None),
            Root::Connection(c) => ctx.connection(c, None),
        };
        pairs.push((key.clone(), expr));
    }
    if pairs.is_empty() {
        return None;
    }
    let data = ctx.row_record(Expr::JsonObject(pairs));
    Some(Select {
        items: vec![SelectItem::Expr(data, "data".into())],
        ..Select::default()
    })
}

impl<'a> Ctx<'a> {
    /// The role's rules on `table`, unless translating a rule itself.
    pub(crate) fn table_rules(&self, table: TableId) -> Option<&'a TableRules> {
        if self.trusted {
            return None;
        }
        self.rules.and_then(|r| r.tables.get(table))
    }

    /// The role's read rule on `table` as a condition on `alias`; `None`: every row,
    /// or a rule its [`source`](Self::source) applies already.
    pub(crate) fn row_rule(&mut self, table: TableId, alias: &str) -> Option<Expr> {
        if self.redacts(table) {
            return None;
        }
        let rule = self.table_rules(table)?.select.as_ref()?;
        Some(self.trusted_filter(table, alias, rule))
    }

    /// A rule's condition: translated without applying rules inside it.
    pub(crate) fn trusted_filter(&mut self, table: TableId, alias: &str, exp: &BoolExp) -> Expr {
        let was = self.trusted;
        self.trusted = true;
        let e = self.filter(table, alias, exp);
        self.trusted = was;
        e
    }

    /// `FROM target` of a relationship from `parent_alias`, and the condition that
    /// joins it, including the role's read rule on the target.
    pub(crate) fn related(&mut self, rel: RelId, parent_alias: &str) -> (From, String, Expr) {
        let target = self.model.relationships[rel].target;
        let (from, child) = self.rel_from(rel);
        let join = self.join(rel, parent_alias, &child);
        let condition = match self.row_rule(target, &child) {
            Some(rule) => Expr::And(vec![join, rule]),
            None => join,
        };
        (from, child, condition)
    }

    pub(crate) fn alias(&mut self, prefix: &str) -> String {
        let a = format!("{prefix}{}", self.next_alias);
        self.next_alias += 1;
        a
    }

    /// A row's `object` as [`Expr::RowObject`], a record PostgreSQL prints compact,
    /// where its keys can be column names; as it is elsewhere.
    pub(crate) fn row_record(&mut self, object: Expr) -> Expr {
        match object {
            Expr::JsonObject(pairs)
                if self.model.dialect().row_values()
                    && !pairs.is_empty()
                    && pairs.len() <= MAX_RECORD_COLUMNS
                    && pairs.iter().all(|(k, _)| k.len() <= MAX_KEY_BYTES) =>
            {
                Expr::RowObject {
                    alias: self.alias("_r"),
                    pairs,
                }
            }
            other => other,
        }
    }

    /// The schema a table is named in (the renderer decides whether a dialect
    /// writes it).
    pub(crate) fn schema_of(&self, t: &Table) -> Option<String> {
        Some(t.schema.clone())
    }

    /// The base query over `table`: FROM, the relationship join, `where`, order, page.
    /// `capped`: whether the role's row limit applies (lists; not aggregates, whose
    /// values cover every row the role may read, as in Hasura). With `ids`, only the
    /// rows a write returned, in their order.
    pub(crate) fn base(
        &mut self,
        table: TableId,
        args: &Args,
        parent: Option<(RelId, &str)>,
        capped: bool,
        ids: Option<crate::ctx::Identities>,
    ) -> (Select, String, Vec<OrderItem>) {
        let (from, alias, id_order) = self.source(table, ids, args.call.as_ref());
        let mut conditions = Vec::new();
        if let Some((rel, parent_alias)) = parent {
            conditions.push(self.join(rel, parent_alias, &alias));
        }
        if let Some(rule) = self.row_rule(table, &alias) {
            conditions.push(rule);
        }
        if let Some(f) = &args.filter {
            conditions.push(self.filter(table, &alias, f));
        }
        let order = match id_order {
            Some(expr) => vec![OrderItem {
                expr,
                direction: grafton_sql::Direction::Asc,
                nulls: None,
            }],
            None => self.order_items(table, &alias, args),
        };
        let t = self.model.table(table);
        let distinct_on = args
            .distinct_on
            .iter()
            .map(|&c| Expr::column(&alias, &t.columns[c].name))
            .collect();
        let param = |v: &grafton_ir::Value| {
            Expr::Param(grafton_sql::Param {
                value: v.clone(),
                ty: grafton_sql::SqlType::Builtin("int8"),
                list: false,
            })
        };
        let select = Select {
            distinct_on,
            from: Some(from),
            filter: match conditions.len() {
                0 => None,
                1 => conditions.pop(),
                _ => Some(Expr::And(conditions)),
            },
            order_by: order.clone(),
            limit: if capped {
                self.capped_limit(table, args.limit.as_ref().map(param))
            } else {
                args.limit.as_ref().map(param)
            },
            offset: args.offset.as_ref().map(param),
            ..Select::default()
        };
        (select, alias, order)
    }

    /// A list's `LIMIT` under the role's cap on `table`, if it has one.
    pub(crate) fn capped_limit(&self, table: TableId, limit: Option<Expr>) -> Option<Expr> {
        let Some(cap) = self.table_rules(table).and_then(|r| r.limit) else {
            return limit;
        };
        let cap = i64::try_from(cap).unwrap_or(i64::MAX);
        Some(match limit {
            None => Expr::Int(cap),
            Some(Expr::Param(grafton_sql::Param {
                value: grafton_sql::ParamValue::Literal(v),
                ..
            })) if v.as_i64().is_some() => Expr::Int(v.as_i64().unwrap_or(cap).min(cap)),
            Some(other) => Expr::Least(Box::new(other), cap),
        })
    }

    /// The JSON object for one row of `table` aliased `alias`.
    pub(crate) fn row_object(
        &mut self,
        table: TableId,
        alias: &str,
        fields: &[(String, Field)],
    ) -> Expr {
        let mut pairs = Vec::with_capacity(fields.len());
        for (key, field) in fields {
            let expr = match field {
                Field::Column(c) => {
                    let kind = &self.model.table(table).columns[*c].scalar;
                    output_value(self, kind, self.column_value(table, alias, *c))
                }
                Field::JsonPath(c, path) => {
                    let at = Expr::JsonAt {
                        expr: Box::new(self.column_value(table, alias, *c)),
                        path: json_steps(path),
                    };
                    Expr::ToJson(Box::new(at), JsonKind::Json)
                }
                Field::Typename(name) => Expr::Str(name.clone()),
                Field::Object(rel, rows) | Field::Array(rel, rows) => {
                    self.rows(rows, Some((*rel, alias)))
                }
                Field::Aggregate(rel, agg) => self.aggregate(agg, Some((*rel, alias))),
                Field::Connection(rel, c) => self.connection(c, Some((*rel, alias))),
                Field::NodeId => self.node_id(table, alias),
                Field::Computed(id, call, path) => {
                    let row = self.row_value(alias);
                    let mut value = self.func(call, row);
                    if !path.is_empty() {
                        value = Expr::JsonAt {
                            expr: Box::new(value),
                            path: json_steps(path),
                        };
                    }
                    match &self.model.computed[*id].returns {
                        grafton_schema::ComputedReturns::Scalar(kind) => {
                            output_value(self, kind, value)
                        }
                        grafton_schema::ComputedReturns::Rows(_) => {
                            Expr::ToJson(Box::new(value), JsonKind::Json)
                        }
                    }
                }
                // The columns the remote's arguments read, by name: the engine
                // calls the remote with them and puts its answer here.
                Field::Remote(join) => Expr::JsonObject(
                    (join.columns.iter())
                        .map(|(name, c)| {
                            let kind = &self.model.table(table).columns[*c].scalar;
                            let value = self.column_value(table, alias, *c);
                            (name.clone(), output_value(self, kind, value))
                        })
                        .collect(),
                ),
                // The function's rows take this row: its source's argument.
                Field::ComputedRows(rows) => {
                    let row = self.row_value(alias);
                    let was = self.parent_row.replace(row);
                    let e = self.rows(rows, None);
                    self.parent_row = was;
                    e
                }
                Field::ComputedAggregate(agg) => {
                    let row = self.row_value(alias);
                    let was = self.parent_row.replace(row);
                    let e = self.aggregate(agg, None);
                    self.parent_row = was;
                    e
                }
            };
            pairs.push((key.clone(), expr));
        }
        Expr::JsonObject(pairs)
    }

    /// A list (JSON array) or a single row (JSON object or null), as a scalar subquery.
    ///
    /// For a list, the inner query filters, sorts and pages plain rows; JSON (and any
    /// relationship subquery) is built by the outer aggregate for the rows kept only.
    /// Building it inside would make the database build JSON for every matching row
    /// before the sort discards all but `limit` of them.
    pub(crate) fn rows(&mut self, rows: &Rows, parent: Option<(RelId, &str)>) -> Expr {
        self.rows_from(rows, parent, None)
    }

    /// [`rows`](Self::rows), optionally over the rows a write returned (`ids`, in
    /// their order) instead of the whole table.
    pub(crate) fn rows_from(
        &mut self,
        rows: &Rows,
        parent: Option<(RelId, &str)>,
        ids: Option<crate::ctx::Identities>,
    ) -> Expr {
        let (mut inner, alias, order) = self.base(rows.table, &rows.args, parent, true, ids);
        if rows.single {
            let called = self.calls.replace(false);
            let object = self.row_object(rows.table, &alias, &rows.fields);
            let calls = self.calls.replace(called || self.calls.get());
            // Picked by an order from rows that may be many, a row calling a function
            // keeps `json_build_object`, built after the sort for the one row kept: a
            // record PostgreSQL cannot pull up (a volatile function among its
            // values) would be built for every candidate.
            let object = match inner.order_by.is_empty() || !calls {
                true => self.row_record(object),
                false => object,
            };
            inner.items = vec![SelectItem::Expr(object, "root".into())];
            // One row at most; a smaller `limit` (a function's `limit: 0`) holds.
            inner.limit = Some(match inner.limit.take() {
                Some(Expr::Int(n)) => Expr::Int(n.min(1)),
                Some(limit) => Expr::Least(Box::new(limit), 1),
                None => Expr::Int(1),
            });
            return Expr::JsonSubquery(Box::new(inner));
        }
        let outer_alias = self.alias("_e");
        self.wrapped.insert(outer_alias.clone());
        let object = self.row_object(rows.table, &outer_alias, &rows.fields);
        let record = (self.model.dialect().row_values() && inner.items.is_empty())
            .then(|| record_row(&object, &alias, &outer_alias, &order))
            .flatten();
        let (element, agg_order) = match record {
            Some((items, agg_order)) => {
                inner.items = items;
                (Expr::RowJson(outer_alias.clone()), agg_order)
            }
            None => {
                let agg_order = project_order_keys(&mut inner, &outer_alias, &order);
                let row = self.row_value(&alias);
                select_read_columns(&mut inner, &alias, &outer_alias, &object, row);
                (self.row_record(object), agg_order)
            }
        };
        Expr::JsonSubquery(Box::new(Select {
            items: vec![SelectItem::Expr(
                Expr::JsonAgg {
                    expr: Box::new(element),
                    order_by: agg_order,
                },
                "root".into(),
            )],
            from: Some(From::Subquery {
                select: Box::new(inner),
                alias: outer_alias,
            }),
            ..Select::default()
        }))
    }
}

/// A JSON path's steps as SQL's.
fn json_steps(path: &[PathStep]) -> Vec<JsonStep> {
    (path.iter())
        .map(|s| match s {
            PathStep::Key(k) => JsonStep::Key(k.clone()),
            PathStep::Index(i) => JsonStep::Index(*i),
        })
        .collect()
}
