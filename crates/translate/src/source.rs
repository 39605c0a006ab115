//! Where a table's rows are read from: the table itself, or, for a role that sees
//! some of its columns only on some rows (an inherited role), a subquery that shows
//! the role exactly that.

use crate::ctx::sql_type;
use crate::ctx::Identities;
use crate::ctx::{Ctx, ROW_KEY};
use grafton_ir::Call;
use grafton_schema::TableId;
use grafton_sql::{Expr, From, Param, Select, SelectItem, SqlType, TableRef};

/// The column under which a redacting subquery exposes the written rows' order.
const ID_ORDER: &str = "__grafton_n";

impl Ctx<'_> {
    /// `FROM table AS alias` with a fresh alias: the rows the role reads (see
    /// [`source`](Self::source)).
    pub(crate) fn table_from(&mut self, table: TableId) -> (From, String) {
        let (from, alias, _) = self.source(table, None, None);
        (from, alias)
    }

    /// `FROM table AS alias` as stored, whatever the role: the rows a write targets.
    pub(crate) fn raw_table_from(&mut self, table: TableId) -> (From, String) {
        let alias = self.alias("_t");
        (self.stored(table, &alias, None, None), alias)
    }

    /// Whether the role sees some of `table`'s columns only on some rows: then
    /// [`source`](Self::source) applies its row rule itself.
    pub(crate) fn redacts(&self, table: TableId) -> bool {
        self.table_rules(table)
            .is_some_and(|r| !r.redact.is_empty())
    }

    /// The rows of `table` (with `ids`, only the written rows those identify; with
    /// `call`, the rows a tracked function returns) as `FROM … AS alias`, and with
    /// `ids` the expression that orders them as listed.
    ///
    /// Where the role sees some columns only on some rows, this is a subquery that
    /// applies the role's row rule to the stored rows and blanks (NULL) those columns
    /// on the rows where no rule granting them holds. Everything read through the
    /// alias (fields, `where`, `order_by`, aggregates, relationship joins) then sees
    /// what the role may see and nothing else, as Hasura's inherited roles do.
    pub(crate) fn source(
        &mut self,
        table: TableId,
        ids: Option<Identities>,
        call: Option<&Call>,
    ) -> (From, String, Option<Expr>) {
        let alias = self.alias("_t");
        let rules = self.table_rules(table).filter(|r| !r.redact.is_empty());
        let Some(rules) = rules else {
            let order = ids.is_some().then(|| Expr::RowIdOrder(alias.clone()));
            return (self.stored(table, &alias, ids, call), alias, order);
        };
        let stored = self.alias("_r");
        let order = ids.is_some().then(|| {
            (
                Expr::RowIdOrder(stored.clone()),
                Expr::column(&alias, ID_ORDER),
            )
        });
        let from = self.stored(table, &stored, ids, call);
        let model = self.model;
        let mut items = Vec::new();
        for (i, c) in model.table(table).columns.iter().enumerate() {
            let value = Expr::column(&stored, &c.name);
            let value = match rules.redact.iter().find(|(column, _)| *column == i) {
                Some((_, when)) => Expr::CaseWhen {
                    when: Box::new(self.trusted_filter(table, &stored, when)),
                    then: Box::new(value),
                },
                None => value,
            };
            items.push(SelectItem::Expr(value, c.name.clone()));
        }
        let (in_order, out_order) = match order {
            Some((inner, outer)) => (Some(inner), Some(outer)),
            None => (None, None),
        };
        if let Some(position) = in_order {
            items.push(SelectItem::Expr(position, ID_ORDER.into()));
        }
        // The stored row, for computed fields (SQLite has no row values, and no
        // computed fields).
        if model.dialect().row_values() {
            items.push(SelectItem::Expr(
                Expr::RowRef(stored.clone()),
                ROW_KEY.into(),
            ));
            self.wrapped.insert(alias.clone());
        }
        let filter = rules
            .select
            .as_ref()
            .map(|rule| self.trusted_filter(table, &stored, rule));
        let select = Select {
            items,
            from: Some(from),
            filter,
            ..Select::default()
        };
        let from = From::Subquery {
            select: Box::new(select),
            alias: alias.clone(),
        };
        (from, alias, out_order)
    }

    /// The stored table under `alias`, with `ids` the written rows joined in order,
    /// or with `call` the function's rows.
    fn stored(
        &self,
        table: TableId,
        alias: &str,
        ids: Option<Identities>,
        call: Option<&Call>,
    ) -> From {
        if let Some(call) = call {
            return self.call(call, alias);
        }
        let t = self.model.table(table);
        let (schema, name) = (self.schema_of(t), t.name.clone());
        match ids {
            None => From::Table {
                schema,
                name,
                alias: alias.to_owned(),
            },
            Some(ids) => From::RowIds {
                table: TableRef {
                    schema,
                    name,
                    alias: alias.to_owned(),
                    view: t.kind == grafton_catalog::TableKind::View,
                },
                ids,
            },
        }
    }

    /// `function(args…)` under `alias`.
    fn call(&self, call: &Call, alias: &str) -> From {
        let f = &self.model.catalog.functions[call.function];
        From::Call {
            schema: f.schema.clone(),
            name: f.name.clone(),
            args: self.call_args(call, self.parent_row.clone()),
            alias: alias.to_owned(),
        }
    }

    /// A scalar computed field's value: its function called with `row`.
    pub(crate) fn func(&self, call: &Call, row: Expr) -> Expr {
        let f = &self.model.catalog.functions[call.function];
        Expr::Func {
            schema: f.schema.clone(),
            name: f.name.clone(),
            args: self.call_args(call, Some(row)),
        }
    }

    /// A call's arguments: by position up to the first one omitted, by name after
    /// it (the IR checked they have names); the row argument is `row`.
    fn call_args(&self, call: &Call, row: Option<Expr>) -> Vec<(Option<String>, Expr)> {
        self.calls.set(true);
        let f = &self.model.catalog.functions[call.function];
        let mut positional = true;
        (call.args.iter().enumerate())
            .map(|(i, (position, value))| {
                positional &= i == *position;
                let a = &f.args[*position];
                let ty = match &a.scalar {
                    _ if call.session_arg == Some(*position) => {
                        SqlType::Builtin(if a.db_type == "jsonb" {
                            "jsonb"
                        } else {
                            "json"
                        })
                    }
                    Some(kind) => sql_type(self, kind),
                    // `uuid[]` is `pg_catalog._uuid`: the literal's text is cast to it.
                    None => match (&a.array_of, &a.row_of) {
                        (Some(element), _) => SqlType::Named {
                            schema: "pg_catalog".to_owned(),
                            name: format!("_{element}"),
                        },
                        // A row literal's text is cast to the row type.
                        (None, Some((schema, name))) => SqlType::Named {
                            schema: schema.clone(),
                            name: name.clone(),
                        },
                        (None, None) => SqlType::Builtin("text"),
                    },
                };
                let value = match (&row, call.row_arg == Some(*position)) {
                    (Some(row), true) => row.clone(),
                    _ => Expr::Param(Param {
                        value: value.clone(),
                        ty,
                        list: false,
                    }),
                };
                ((!positional).then(|| a.name.clone()), value)
            })
            .collect()
    }

    /// An argument-less scalar computed field's value for the row `alias` (in
    /// `where` and `order_by`).
    pub(crate) fn computed_value(&self, field: grafton_schema::ComputedId, alias: &str) -> Expr {
        self.func(&self.computed_call(field), self.row_value(alias))
    }

    /// The call of an argument-less computed field (the row, and the session).
    pub(crate) fn computed_call(&self, field: grafton_schema::ComputedId) -> Call {
        let c = &self.model.computed[field];
        let mut args = vec![(
            c.row_arg,
            grafton_ir::Value::Literal(serde_json::Value::Null),
        )];
        if let Some(p) = c.session_arg {
            args.push((
                p,
                grafton_ir::Value::Variable(grafton_ir::SESSION_JSON_VAR.into()),
            ));
        }
        args.sort_by_key(|(p, _)| *p);
        Call {
            function: c.catalog_index,
            args,
            session_arg: c.session_arg,
            row_arg: Some(c.row_arg),
        }
    }

    /// `alias`'s whole row: the table alias itself, or the row a subquery carries.
    pub(crate) fn row_value(&self, alias: &str) -> Expr {
        if self.wrapped.contains(alias) {
            Expr::column(alias, ROW_KEY)
        } else {
            Expr::RowRef(alias.to_owned())
        }
    }
}
