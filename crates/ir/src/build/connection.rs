//! The Relay API's fields: `<t>_connection` (a page by cursor), `node(id:)`, and
//! a row's global `id`.

use super::{Builder, Fields};
use crate::input::Input;
use crate::relay::{decode_cursor, NodeId, INVALID_CURSOR};
use crate::types::*;
use crate::IrError;
use apollo_compiler::{ast, executable, Node};
use grafton_schema::{CompareOp, TableId};
use serde_json::Value as Json;

impl<'a> Builder<'a> {
    /// A connection over `table`: its arguments and its selection.
    pub(super) fn connection(
        &mut self,
        table: TableId,
        group: &[&'a Node<executable::Field>],
    ) -> Result<Connection, IrError> {
        let field = group[0];
        let mut args = self.args(table, field)?;
        if args.order_by.is_empty() {
            // DISTINCT ON needs its columns to lead the order.
            // NULLs last on both backends, as a list's default order puts them.
            let table_columns = &self.model.table(table).columns;
            args.order_by = (args.distinct_on.iter())
                .map(|&c| OrderBy {
                    target: OrderTarget::Column(c),
                    direction: grafton_sql::Direction::Asc,
                    nulls: (table_columns[c].nullable).then_some(grafton_sql::Nulls::Last),
                })
                .collect();
        }
        // A cursor names one row: the primary key breaks every tie.
        for &c in &self.model.tables[table].primary_key {
            let ordered = (args.order_by.iter()).any(|o| o.target == OrderTarget::Column(c));
            if !ordered {
                args.order_by.push(OrderBy {
                    target: OrderTarget::Column(c),
                    direction: grafton_sql::Direction::Asc,
                    nulls: None,
                });
            }
        }
        let cursor_keys: Vec<Vec<String>> = (args.order_by.iter())
            .map(|o| self.cursor_path(table, &o.target))
            .collect();
        let first = self.page_size(field, "first")?;
        let last = self.page_size(field, "last")?;
        if first.is_some() && last.is_some() {
            return Err(IrError::Validation(
                "\"first\" and \"last\" are not allowed at once".into(),
            ));
        }
        let after = self.present(field, "after");
        let before = self.present(field, "before");
        let split = match (after, before) {
            (Some(_), Some(_)) => {
                return Err(IrError::Validation(
                    "\"after\" and \"before\" are not allowed at once".into(),
                ))
            }
            (Some(cursor), None) => Some(self.split(&cursor_keys, cursor, false)?),
            (None, Some(cursor)) => Some(self.split(&cursor_keys, cursor, true)?),
            (None, None) => None,
        };
        let fields = self.sub_fields(group);
        let fields = self.connection_fields(table, &fields)?;
        Ok(Connection {
            table,
            args,
            first,
            last,
            split,
            cursor_keys,
            fields,
        })
    }

    /// An argument's value, `None` when absent or null. A variable's presence
    /// (null or not) shapes the plan, its value does not.
    fn present(&mut self, field: &'a executable::Field, name: &str) -> Option<Input<'a>> {
        let input = self.arg(field, name)?;
        match input {
            Input::Ast(ast::Value::Variable(var)) => {
                self.vars.shape.insert(format!("?{var}"));
                match self.vars.values.get(var.as_str()) {
                    None | Some(Json::Null) => None,
                    Some(_) => Some(input),
                }
            }
            Input::Ast(ast::Value::Null) | Input::Json(Json::Null) => None,
            other => Some(other),
        }
    }

    /// `first` / `last`: a parameter, never negative.
    fn page_size(
        &mut self,
        field: &'a executable::Field,
        name: &str,
    ) -> Result<Option<Value>, IrError> {
        match self.present(field, name) {
            Some(v) => self.page_value(v, name),
            None => Ok(None),
        }
    }

    /// The rows after (or before) a cursor: its value of each sort key.
    fn split(
        &mut self,
        paths: &[Vec<String>],
        cursor: Input<'a>,
        before: bool,
    ) -> Result<Split, IrError> {
        let values = match cursor {
            Input::Ast(ast::Value::Variable(var)) => (paths.iter().cloned())
                .map(|path| {
                    let name = format!("{var}#{}", self.derived.len());
                    self.derived.push(Derived {
                        name: name.clone(),
                        var: var.to_string(),
                        part: Part::CursorKey(path),
                    });
                    Value::Variable(name)
                })
                .collect(),
            other => {
                let text = match other {
                    Input::Ast(ast::Value::String(s)) => Some(s.as_str()),
                    Input::Json(Json::String(s)) => Some(s.as_str()),
                    _ => None,
                };
                let cursor = text.and_then(decode_cursor);
                let cursor = cursor.ok_or_else(|| IrError::Validation(INVALID_CURSOR.into()))?;
                (paths.iter())
                    .map(|p| crate::relay::cursor_value(&cursor, p).map(Value::Literal))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| IrError::Validation(INVALID_CURSOR.into()))?
            }
        };
        Ok(Split { before, values })
    }

    /// Where a sort key's value is in a cursor: Hasura's keys (the column's name,
    /// a relationship's field, `<rel>_aggregate` with its function).
    fn cursor_path(&self, table: TableId, target: &OrderTarget) -> Vec<String> {
        let model = self.model;
        let column = |t: TableId, c: usize| model.table(t).columns[c].name.clone();
        let aggregate = |rel: usize| format!("{}_aggregate", model.relationships[rel].name);
        let computed = |id: usize| format!("{}_aggregate", model.computed[id].name);
        let aggregated = |t: TableId, of: &Aggregated| match of {
            Aggregated::Column(c) => column(t, *c),
            Aggregated::Computed(id) => model.computed[*id].name.clone(),
        };
        let func_name = |func: &grafton_sql::AggFunc| {
            (model.agg_funcs.iter())
                .find(|(_, f)| *f == func)
                .map_or_else(String::new, |(n, _)| n.clone())
        };
        match target {
            OrderTarget::Column(c) => vec![column(table, *c)],
            OrderTarget::Computed(id) => vec![model.computed[*id].name.clone()],
            OrderTarget::Object(rel, inner) => {
                let r = &model.relationships[*rel];
                let mut path = vec![r.name.clone()];
                path.extend(self.cursor_path(r.target, inner));
                path
            }
            OrderTarget::ArrayCount(rel) => vec![aggregate(*rel), "count".into()],
            OrderTarget::ArrayAggregate(rel, func, of) => {
                let target = model.relationships[*rel].target;
                vec![aggregate(*rel), func_name(func), aggregated(target, of)]
            }
            OrderTarget::ComputedCount(id) => vec![computed(*id), "count".into()],
            OrderTarget::ComputedAggregate(id, func, of) => {
                let grafton_schema::ComputedReturns::Rows(target) = model.computed[*id].returns
                else {
                    return vec![computed(*id)];
                };
                vec![computed(*id), func_name(func), aggregated(target, of)]
            }
        }
    }

    fn connection_fields(
        &mut self,
        table: TableId,
        fields: &Fields<'a>,
    ) -> Result<Vec<(String, ConnectionField)>, IrError> {
        let type_name = |suffix: &str| {
            let base = format!("{}{suffix}", self.model.tables[table].base_name);
            self.model.naming.type_name(&base)
        };
        let mut out = Vec::new();
        for (key, group) in fields {
            let value = match group[0].name.as_str() {
                "__typename" => ConnectionField::Typename(type_name("Connection")),
                "edges" => {
                    let sub = self.sub_fields(group);
                    let mut edges = Vec::new();
                    for (key, group) in &sub {
                        let value = match group[0].name.as_str() {
                            "__typename" => EdgeField::Typename(type_name("Edge")),
                            "cursor" => EdgeField::Cursor,
                            _ => {
                                let node = self.sub_fields(group);
                                EdgeField::Node(self.table_fields(table, &node)?)
                            }
                        };
                        edges.push(((*key).to_owned(), value));
                    }
                    ConnectionField::Edges(edges)
                }
                _ => {
                    let sub = self.sub_fields(group);
                    let info = (sub.iter())
                        .map(|(key, group)| {
                            let value = match group[0].name.as_str() {
                                "__typename" => PageInfoField::Typename("PageInfo".into()),
                                "startCursor" => PageInfoField::StartCursor,
                                "endCursor" => PageInfoField::EndCursor,
                                "hasNextPage" => PageInfoField::HasNextPage,
                                _ => PageInfoField::HasPreviousPage,
                            };
                            ((*key).to_owned(), value)
                        })
                        .collect();
                    ConnectionField::PageInfo(info)
                }
            };
            out.push(((*key).to_owned(), value));
        }
        Ok(out)
    }

    /// `node(id:)`: the row the global id names, as the role may read it (none:
    /// null), with the fields the selection asks of its type.
    pub(super) fn node(&mut self, group: &[&'a Node<executable::Field>]) -> Result<Rows, IrError> {
        let model = self.model;
        let input = self.arg(group[0], "id");
        let (var, text) = match input {
            Some(Input::Ast(ast::Value::Variable(var))) => {
                self.vars.shape.insert(format!("@{var}"));
                let value = self.vars.values.get(var.as_str()).and_then(Json::as_str);
                (Some(var.to_string()), value)
            }
            Some(Input::Ast(ast::Value::String(s))) => (None, Some(s.as_str())),
            _ => (None, None),
        };
        let text =
            text.ok_or_else(|| IrError::Validation("invalid node id: expected a string".into()))?;
        let id = NodeId::decode(text).map_err(IrError::Validation)?;
        let table = (0..model.tables.len())
            .find(|&t| {
                let c = model.table(t);
                c.schema == id.schema
                    && c.name == id.table
                    && model.is_node(t)
                    && self.selectable(t)
            })
            .ok_or_else(|| {
                IrError::Validation(format!(
                    "invalid node id: no such table found: {}",
                    id.table_name()
                ))
            })?;
        let key = &model.tables[table].primary_key;
        id.check_count(key.len()).map_err(IrError::Validation)?;
        let mut conditions = Vec::with_capacity(key.len());
        for (index, &column) in key.iter().enumerate() {
            let value = match &var {
                Some(var) => {
                    let name = format!("{var}#{}", self.derived.len());
                    self.derived.push(Derived {
                        name: name.clone(),
                        var: var.clone(),
                        part: Part::NodeKey {
                            index,
                            count: key.len(),
                        },
                    });
                    Value::Variable(name)
                }
                None => Value::Literal(id.values[index].clone()),
            };
            conditions.push(BoolExp::Compare {
                column,
                op: CompareOp::Eq,
                value,
            });
        }
        let type_name = model.tables[table].type_name.as_str();
        let sets: Vec<_> = group.iter().map(|f| &f.selection_set).collect();
        let mut fields = Fields::default();
        for set in sets {
            self.collect_into(set, &mut fields, &mut Vec::new(), Some(type_name));
        }
        Ok(Rows {
            table,
            args: Args {
                filter: Some(BoolExp::And(conditions)),
                ..Args::default()
            },
            fields: self.table_fields(table, &fields)?,
            single: true,
        })
    }

    /// Whether the role reads `table` (it has an object type).
    fn selectable(&self, table: TableId) -> bool {
        self.model.access[table].select.is_some()
            && self
                .model
                .schema
                .types
                .contains_key(self.model.tables[table].type_name.as_str())
    }
}
