//! Walks a validated operation and builds the IR.

use crate::input::{Input, Vars};
use crate::types::*;
use apollo_compiler::collections::IndexMap;
use apollo_compiler::executable::{self, Selection, SelectionSet};
use apollo_compiler::{ExecutableDocument, Node};
use grafton_schema::{CompareOp, InputKind, RootField, SchemaModel, TableField, TableId};
use serde_json::{Map, Value as Json};
use std::collections::BTreeSet;

mod mutation;
mod stream;

pub use stream::{STREAM_CURSOR_FIELD, STREAM_CURSOR_VAR};

pub use mutation::build_mutation;

/// Why an operation could not be turned into IR.
#[derive(Debug, thiserror::Error)]
pub enum IrError {
    /// The operation is valid GraphQL but asks for something Grafton rejects.
    #[error("{0}")]
    Validation(String),
    /// The operation kind is not served yet.
    #[error("{0}")]
    NotSupported(String),
    /// A value written to a column does not match the column's JSON Schema.
    #[error("{message}")]
    InvalidInput {
        /// What is wrong, with where.
        message: String,
        /// Where in the operation's input (`insert_t.objects[0].details`).
        path: String,
        /// JSON pointer into the value where validation failed.
        pointer: String,
    },
    /// A value is not valid for its column's type (checked where the database does not).
    #[error("{0}")]
    DataException(String),
    /// A permission rule needs a session variable the request does not carry.
    #[error("missing session variable: \"{0}\"")]
    MissingSession(String),
}

type Fields<'d> = IndexMap<&'d str, Vec<&'d Node<executable::Field>>>;

/// Builds the IR of a query (or subscription: its root fields are a query's) operation.
/// `variables` are the coerced variable values.
pub fn build_query(
    model: &SchemaModel,
    document: &ExecutableDocument,
    operation: &executable::Operation,
    variables: &Map<String, Json>,
) -> Result<Query, IrError> {
    let root_type = match operation.operation_type {
        executable::OperationType::Query => "query_root",
        executable::OperationType::Subscription => "subscription_root",
        executable::OperationType::Mutation => {
            return Err(IrError::NotSupported(
                "a mutation is not a query".to_owned(),
            ))
        }
    };
    let mut b = Builder::new(model, Some(document), variables);
    let mut root = Vec::new();
    let mut stream = None;
    let fields = b.collect(&[&operation.selection_set]);
    for (key, group) in &fields {
        let field = group[0];
        let value = match field.name.as_str() {
            "__typename" => Root::Typename(root_type.to_owned()),
            "__schema" | "__type" => Root::Introspection,
            grafton_schema::NO_QUERIES
                if !model.root_fields.contains_key(grafton_schema::NO_QUERIES) =>
            {
                Root::Typename(String::new())
            }
            name => match model.root_fields.get(name) {
                Some(RootField::List(t)) => Root::Rows(b.rows(*t, group, false)?),
                Some(RootField::ByPk(t)) => Root::Rows(b.by_pk(*t, group)?),
                Some(RootField::Aggregate(t)) => Root::Aggregate(b.aggregate(*t, group)?),
                Some(RootField::Stream(t)) => {
                    let (rows, cursor) = b.stream(*t, group)?;
                    stream = Some(cursor);
                    Root::Rows(rows)
                }
                None => {
                    return Err(IrError::Validation(format!(
                        "field '{name}' not found in type: 'query_root'"
                    )))
                }
            },
        };
        root.push(((*key).to_owned(), value));
    }
    if stream.is_some() && root.len() > 1 {
        return Err(IrError::NotSupported(
            "a streaming subscription has exactly one root field".into(),
        ));
    }
    Ok(Query {
        root,
        shape_vars: b.vars.shape,
        non_negative_vars: b.non_negative,
        stream,
    })
}

/// Walks an operation into IR.
pub(crate) struct Builder<'a> {
    pub(crate) model: &'a SchemaModel,
    pub(crate) document: Option<&'a ExecutableDocument>,
    pub(crate) vars: Vars<'a>,
    pub(crate) non_negative: BTreeSet<String>,
    /// The role's rules, for mutations (`None`: admin, or a query).
    pub(crate) rules: Option<&'a crate::permissions::RoleRules>,
}

impl<'a> Builder<'a> {
    /// A builder over `model` reading `variables` (and `document`'s fragments).
    pub(crate) fn new(
        model: &'a SchemaModel,
        document: Option<&'a ExecutableDocument>,
        variables: &'a Map<String, Json>,
    ) -> Self {
        Builder {
            model,
            document,
            vars: Vars {
                values: variables,
                shape: BTreeSet::new(),
            },
            non_negative: BTreeSet::new(),
            rules: None,
        }
    }

    /// CollectFields (GraphQL spec §6.3.2) over several selection sets at once, which
    /// also merges the sub-selections of fields sharing a response key.
    fn collect(&mut self, sets: &[&'a SelectionSet]) -> Fields<'a> {
        let mut out = Fields::default();
        for set in sets {
            self.collect_into(set, &mut out, &mut Vec::new());
        }
        out
    }

    fn collect_into(
        &mut self,
        set: &'a SelectionSet,
        out: &mut Fields<'a>,
        visited: &mut Vec<&'a str>,
    ) {
        for selection in &set.selections {
            if !self.included(selection.directives()) {
                continue;
            }
            match selection {
                Selection::Field(f) => out.entry(f.response_key().as_str()).or_default().push(f),
                Selection::InlineFragment(inline) => {
                    // Every type here is an object type, so a valid type condition always applies.
                    self.collect_into(&inline.selection_set, out, visited);
                }
                Selection::FragmentSpread(spread) => {
                    let name = spread.fragment_name.as_str();
                    if visited.contains(&name) {
                        continue;
                    }
                    if let Some(fragment) = self.document.and_then(|d| d.fragments.get(name)) {
                        visited.push(name);
                        self.collect_into(&fragment.selection_set, out, visited);
                    }
                }
            }
        }
    }

    fn included(&mut self, directives: &'a executable::DirectiveList) -> bool {
        let flag = |b: &mut Self, name: &str| {
            directives
                .get(name)
                .and_then(|d| d.specified_argument_by_name("if"))
                .and_then(|v| b.vars.boolean(Input::Ast(v)))
        };
        flag(self, "skip") != Some(true) && flag(self, "include") != Some(false)
    }

    fn sub_fields(&mut self, group: &[&'a Node<executable::Field>]) -> Fields<'a> {
        let sets: Vec<&SelectionSet> = group.iter().map(|f| &f.selection_set).collect();
        self.collect(&sets)
    }

    fn arg(&self, field: &'a executable::Field, name: &str) -> Option<Input<'a>> {
        field
            .arguments
            .iter()
            .find(|a| a.name.as_str() == name)
            .map(|a| Input::Ast(&a.value))
    }

    fn rows(
        &mut self,
        table: TableId,
        group: &[&'a Node<executable::Field>],
        single: bool,
    ) -> Result<Rows, IrError> {
        let args = if single {
            Args::default()
        } else {
            self.args(table, group[0])?
        };
        let fields = self.sub_fields(group);
        Ok(Rows {
            table,
            args,
            fields: self.table_fields(table, &fields)?,
            single,
        })
    }

    fn by_pk(
        &mut self,
        table: TableId,
        group: &[&'a Node<executable::Field>],
    ) -> Result<Rows, IrError> {
        let info = &self.model.tables[table];
        let mut conditions = Vec::new();
        for &col in &info.primary_key {
            let name = &info.column_fields[col];
            let value = self
                .arg(group[0], name)
                .and_then(|v| self.vars.leaf(v))
                .ok_or_else(|| {
                    IrError::Validation(format!("missing primary key argument '{name}'"))
                })?;
            conditions.push(BoolExp::Compare {
                column: col,
                op: CompareOp::Eq,
                value,
            });
        }
        let mut rows = self.rows(table, group, true)?;
        rows.args.filter = Some(BoolExp::And(conditions));
        Ok(rows)
    }

    fn table_fields(
        &mut self,
        table: TableId,
        fields: &Fields<'a>,
    ) -> Result<Vec<(String, Field)>, IrError> {
        let model = self.model;
        let info = &model.tables[table];
        let mut out = Vec::with_capacity(fields.len());
        for (key, group) in fields {
            let name = group[0].name.as_str();
            let field = if name == "__typename" {
                Field::Typename(info.type_name.clone())
            } else {
                match info.fields.get(name) {
                    Some(TableField::Column(c)) => self.column_field(*c, group[0])?,
                    Some(TableField::Object(r)) => {
                        let target = model.relationships[*r].target;
                        Field::Object(*r, self.rows(target, group, true)?)
                    }
                    Some(TableField::Array(r)) => {
                        let target = model.relationships[*r].target;
                        Field::Array(*r, self.rows(target, group, false)?)
                    }
                    Some(TableField::ArrayAggregate(r)) => {
                        let target = model.relationships[*r].target;
                        Field::Aggregate(*r, self.aggregate(target, group)?)
                    }
                    None => {
                        return Err(IrError::Validation(format!(
                            "field '{name}' not found in type: '{}'",
                            info.type_name
                        )))
                    }
                }
            };
            out.push(((*key).to_owned(), field));
        }
        Ok(out)
    }

    /// A column, or with a `path` argument (json/jsonb columns) the JSON at that path.
    fn column_field(
        &mut self,
        column: usize,
        field: &'a executable::Field,
    ) -> Result<Field, IrError> {
        let path = self
            .arg(field, "path")
            .and_then(|v| self.vars.deref(v))
            .and_then(|v| match v {
                Input::Ast(apollo_compiler::ast::Value::String(s)) => Some(s.as_str()),
                Input::Json(Json::String(s)) => Some(s.as_str()),
                _ => None,
            });
        match path {
            None => Ok(Field::Column(column)),
            Some(p) => Ok(Field::JsonPath(
                column,
                crate::json_path::parse(p).map_err(IrError::Validation)?,
            )),
        }
    }

    fn aggregate(
        &mut self,
        table: TableId,
        group: &[&'a Node<executable::Field>],
    ) -> Result<Aggregate, IrError> {
        let args = self.args(table, group[0])?;
        // `__typename` names the type of the selection set it appears in.
        let parent_type = group[0].selection_set.ty.to_string();
        let mut fields = Vec::new();
        for (key, sub) in &self.sub_fields(group) {
            let value = match sub[0].name.as_str() {
                "__typename" => AggregateField::Typename(parent_type.clone()),
                "nodes" => {
                    let nodes = self.sub_fields(sub);
                    AggregateField::Nodes(self.table_fields(table, &nodes)?)
                }
                "aggregate" => AggregateField::Aggregate(self.aggregate_values(table, sub)?),
                other => {
                    return Err(IrError::Validation(format!(
                        "field '{other}' not found in an aggregate type"
                    )))
                }
            };
            fields.push(((*key).to_owned(), value));
        }
        Ok(Aggregate {
            table,
            args,
            fields,
        })
    }

    fn aggregate_values(
        &mut self,
        table: TableId,
        group: &[&'a Node<executable::Field>],
    ) -> Result<Vec<(String, AggregateValue)>, IrError> {
        let model = self.model;
        let parent_type = group[0].selection_set.ty.to_string();
        let mut out = Vec::new();
        for (key, sub) in &self.sub_fields(group) {
            let f = sub[0];
            let value = match f.name.as_str() {
                "__typename" => AggregateValue::Typename(parent_type.clone()),
                "count" => {
                    let mut columns = Vec::new();
                    if let Some(v) = self.arg(f, &model.args.columns) {
                        for item in self.vars.list(v) {
                            if let Some(name) = self.vars.enum_name(item) {
                                columns.push(self.column(table, name)?);
                            }
                        }
                    }
                    let distinct = self
                        .arg(f, &model.args.distinct)
                        .and_then(|v| self.vars.boolean(v))
                        .unwrap_or(false);
                    AggregateValue::Count { columns, distinct }
                }
                name => {
                    let func = *model.agg_funcs.get(name).ok_or_else(|| {
                        IrError::Validation(format!("unknown aggregate field '{name}'"))
                    })?;
                    let mut cols = Vec::new();
                    let func_type = f.selection_set.ty.to_string();
                    for (k, g) in &self.sub_fields(sub) {
                        let n = g[0].name.as_str();
                        let v = if n == "__typename" {
                            FuncField::Typename(func_type.clone())
                        } else {
                            FuncField::Column(self.column(table, n)?)
                        };
                        cols.push(((*k).to_owned(), v));
                    }
                    AggregateValue::Func(func, cols)
                }
            };
            out.push(((*key).to_owned(), value));
        }
        Ok(out)
    }

    fn column(&self, table: TableId, name: &str) -> Result<usize, IrError> {
        self.model.column_by_field(table, name).ok_or_else(|| {
            IrError::Validation(format!(
                "'{name}' is not a column of '{}'",
                self.model.tables[table].type_name
            ))
        })
    }

    fn args(&mut self, table: TableId, field: &'a executable::Field) -> Result<Args, IrError> {
        let names = &self.model.args;
        let mut args = Args::default();
        if let Some(v) = self.arg(field, &names.where_) {
            if self.vars.deref(v).is_some() {
                args.filter = Some(self.bool_exp(table, v)?);
            }
        }
        if let Some(v) = self.arg(field, &names.order_by) {
            for item in self.vars.list(v) {
                for (key, value) in self.vars.object(item) {
                    args.order_by.extend(self.order_by(table, key, value)?);
                }
            }
        }
        if let Some(v) = self.arg(field, &names.limit) {
            args.limit = self.page_value(v, "limit")?;
        }
        if let Some(v) = self.arg(field, &names.offset) {
            args.offset = self.page_value(v, "offset")?;
        }
        if let Some(v) = self.arg(field, &names.distinct_on) {
            for item in self.vars.list(v) {
                if let Some(name) = self.vars.enum_name(item) {
                    args.distinct_on.push(self.column(table, name)?);
                }
            }
            self.check_distinct_on(&args)?;
        }
        Ok(args)
    }

    /// A `limit`/`offset` value: negative literals are rejected here, variables are
    /// recorded so each request's value is checked before it reaches the database.
    fn page_value(&mut self, v: Input<'a>, what: &str) -> Result<Option<Value>, IrError> {
        let value = self.vars.leaf(v);
        match &value {
            Some(Value::Variable(name)) => {
                self.non_negative.insert(name.clone());
            }
            Some(Value::Literal(Json::Number(n))) if n.as_i64().is_some_and(|i| i < 0) => {
                return Err(IrError::Validation(format!(
                    "\"{what}\" must not be negative"
                )));
            }
            _ => {}
        }
        Ok(value)
    }

    /// Postgres's DISTINCT ON needs the order to start with the distinct columns.
    fn check_distinct_on(&self, args: &Args) -> Result<(), IrError> {
        if args.order_by.is_empty() {
            return Ok(());
        }
        let leading: BTreeSet<usize> = args
            .order_by
            .iter()
            .take(args.distinct_on.len())
            .filter_map(|o| match o.target {
                OrderTarget::Column(c) => Some(c),
                _ => None,
            })
            .collect();
        let wanted: BTreeSet<usize> = args.distinct_on.iter().copied().collect();
        if leading != wanted || args.order_by.len() < args.distinct_on.len() {
            return Err(IrError::Validation(
                "\"distinct_on\" columns must match initial \"order_by\" columns".to_owned(),
            ));
        }
        Ok(())
    }

    fn order_by(
        &mut self,
        table: TableId,
        key: &str,
        value: Input<'a>,
    ) -> Result<Vec<OrderBy>, IrError> {
        let model = self.model;
        let info = &model.tables[table];
        let field = info.fields.get(key).copied().ok_or_else(|| {
            IrError::Validation(format!(
                "'{key}' cannot be ordered on in '{}'",
                info.type_name
            ))
        })?;
        let mut out = Vec::new();
        match field {
            TableField::Column(c) => {
                if let Some(o) = self.direction(value, OrderTarget::Column(c))? {
                    out.push(o);
                }
            }
            TableField::Object(r) => {
                let target = model.relationships[r].target;
                for (k, v) in self.vars.object(value) {
                    for inner in self.order_by(target, k, v)? {
                        out.push(OrderBy {
                            target: OrderTarget::Object(r, Box::new(inner.target)),
                            ..inner
                        });
                    }
                }
            }
            TableField::ArrayAggregate(r) | TableField::Array(r) => {
                let target = model.relationships[r].target;
                for (k, v) in self.vars.object(value) {
                    if k == "count" {
                        if let Some(o) = self.direction(v, OrderTarget::ArrayCount(r))? {
                            out.push(o);
                        }
                        continue;
                    }
                    let func = *model.agg_funcs.get(k).ok_or_else(|| {
                        IrError::Validation(format!("unknown aggregate '{k}' in order_by"))
                    })?;
                    for (col_name, dir) in self.vars.object(v) {
                        let col = self.column(target, col_name)?;
                        if let Some(o) =
                            self.direction(dir, OrderTarget::ArrayAggregate(r, func, col))?
                        {
                            out.push(o);
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    fn direction(
        &mut self,
        value: Input<'a>,
        target: OrderTarget,
    ) -> Result<Option<OrderBy>, IrError> {
        let Some(name) = self.vars.enum_name(value) else {
            return Ok(None);
        };
        let (direction, nulls) = *self
            .model
            .order_values
            .get(name)
            .ok_or_else(|| IrError::Validation(format!("unknown order_by value '{name}'")))?;
        Ok(Some(OrderBy {
            target,
            direction,
            nulls,
        }))
    }

    pub(crate) fn bool_exp(
        &mut self,
        table: TableId,
        value: Input<'a>,
    ) -> Result<BoolExp, IrError> {
        let model = self.model;
        let [and, or, not] = &model.combinators;
        let mut all = Vec::new();
        for (key, v) in self.vars.object(value) {
            if key == and || key == or {
                let mut items = Vec::new();
                for item in self.vars.list(v) {
                    items.push(self.bool_exp(table, item)?);
                }
                // A null `_and`/`_or` is absent, not an empty (and for `_or`, false) list.
                if self.vars.deref(v).is_none() {
                    continue;
                }
                all.push(if key == and {
                    BoolExp::And(items)
                } else {
                    BoolExp::Or(items)
                });
                continue;
            }
            if key == not {
                if self.vars.deref(v).is_some() {
                    all.push(BoolExp::Not(Box::new(self.bool_exp(table, v)?)));
                }
                continue;
            }
            let info = &model.tables[table];
            match info.fields.get(key) {
                Some(TableField::Column(c)) => {
                    for (op_name, operand) in self.vars.object(v) {
                        if op_name == model.cast_op {
                            // `_cast: {String: {…}}`: the column compared as text.
                            for (_, inner) in self.vars.object(operand) {
                                for (name, value) in self.vars.object(inner) {
                                    let op = *model.ops.get(name).ok_or_else(|| {
                                        IrError::Validation(format!("unknown operator '{name}'"))
                                    })?;
                                    if let Some(value) = self.vars.leaf(value) {
                                        all.push(BoolExp::CompareText {
                                            column: *c,
                                            op,
                                            value,
                                        });
                                    }
                                }
                            }
                            continue;
                        }
                        let op = *model.ops.get(op_name).ok_or_else(|| {
                            IrError::Validation(format!("unknown operator '{op_name}'"))
                        })?;
                        if let Some(value) = self.vars.leaf(operand) {
                            all.push(BoolExp::Compare {
                                column: *c,
                                op,
                                value,
                            });
                        }
                    }
                }
                Some(TableField::Object(r)) | Some(TableField::Array(r)) => {
                    if self.vars.deref(v).is_some() {
                        let target = model.relationships[*r].target;
                        let inner = self.bool_exp(target, v)?;
                        all.push(BoolExp::Exists(*r, Box::new(inner)));
                    }
                }
                _ => {
                    return Err(IrError::Validation(format!(
                        "field '{key}' not found in type: '{}'",
                        model
                            .input_types
                            .iter()
                            .find(|(_, k)| **k == InputKind::BoolExp(table))
                            .map(|(n, _)| n.as_str())
                            .unwrap_or("bool_exp")
                    )))
                }
            }
        }
        Ok(match all.len() {
            1 => all.pop().unwrap_or(BoolExp::And(Vec::new())),
            _ => BoolExp::And(all),
        })
    }
}
