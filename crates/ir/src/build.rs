//! Walks a validated operation and builds the IR.

use crate::input::{Input, Vars};
use crate::types::*;
use apollo_compiler::collections::IndexMap;
use apollo_compiler::executable::{self, Selection, SelectionSet};
use apollo_compiler::{ExecutableDocument, Node};
use grafton_schema::{CompareOp, RootField, SchemaModel, TableField, TableId};
use serde_json::{Map, Value as Json};
use std::collections::BTreeSet;

mod aggregate;
mod aggregate_filter;
mod args;
mod call;
mod connection;
mod filter;
mod mutation;
mod related;
mod stream;

pub use stream::{STREAM_CURSOR_FIELD, STREAM_CURSOR_VAR};

pub use mutation::build_mutation;
pub use related::{build_related, related_var, RELATED_ROOT};

pub use crate::error::IrError;

type Fields<'d> = IndexMap<&'d str, Vec<&'d Node<executable::Field>>>;

/// Builds the IR of a query (or subscription: its root fields are a query's) operation,
/// or of a mutation whose every root field is an action. `variables` are the
/// coerced variable values.
pub fn build_query(
    model: &SchemaModel,
    document: &ExecutableDocument,
    operation: &executable::Operation,
    variables: &Map<String, Json>,
) -> Result<Query, IrError> {
    let mutation = operation.operation_type == executable::OperationType::Mutation;
    let root_type = match operation.operation_type {
        executable::OperationType::Query => "query_root",
        executable::OperationType::Subscription => "subscription_root",
        executable::OperationType::Mutation => "mutation_root",
    };
    let mut b = Builder::new(model, Some(document), variables);
    let mut root = Vec::new();
    let mut stream = None;
    let fields = b.collect(&[&operation.selection_set]);
    for (key, group) in &fields {
        let field = group[0];
        let action = |i: usize| {
            let fields = group.iter().map(|f| (*f).clone()).collect();
            Root::Action(ActionRoot { action: i, fields })
        };
        let remote = |i: usize| {
            let fields = group.iter().map(|f| (*f).clone()).collect();
            Root::Remote(crate::types::RemoteRoot { remote: i, fields })
        };
        let value = match field.name.as_str() {
            "__typename" => Root::Typename(root_type.to_owned()),
            // A mutation here is one whose every root field is an action or a
            // remote schema's.
            name if mutation => match model.mutation_fields.get(name) {
                Some(grafton_schema::MutationField::Action(i)) => action(*i),
                Some(grafton_schema::MutationField::Remote(i)) => remote(*i),
                _ => return Err(IrError::MixedActions),
            },
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
                Some(RootField::Function(f)) => Root::Rows(b.call_rows(*f, group)?),
                Some(RootField::Action(i)) => action(*i),
                Some(RootField::Remote(i)) => remote(*i),
                Some(RootField::FunctionAggregate(f)) => {
                    Root::Aggregate(b.call_aggregate(*f, group)?)
                }
                Some(RootField::Connection(t)) => {
                    Root::Connection(Box::new(b.connection(*t, group)?))
                }
                Some(RootField::Node) => Root::Rows(b.node(group)?),
                Some(RootField::FunctionConnection(f)) => {
                    Root::Connection(Box::new(b.call_connection(*f, group)?))
                }
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
    let is = |f: fn(&Root) -> bool| root.iter().any(|(_, r)| f(r));
    if mutation && is(|r| matches!(r, Root::Action(_))) && is(|r| matches!(r, Root::Remote(_))) {
        return Err(IrError::MixedActions);
    }
    if operation.operation_type == executable::OperationType::Subscription
        && is(|r| matches!(r, Root::Remote(_)))
    {
        return Err(IrError::NotSupported(
            "subscription to remote server is not supported".into(),
        ));
    }
    let subscription = operation.operation_type == executable::OperationType::Subscription;
    if subscription && root.len() > 1 && root.iter().any(|(_, r)| matches!(r, Root::Action(_))) {
        return Err(IrError::NotSupported(
            "a subscription to an asynchronous action's result has exactly one root field".into(),
        ));
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
        derived: b.derived,
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
    /// Parameters each request computes from its variables.
    pub(crate) derived: Vec<Derived>,
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
            derived: Vec::new(),
        }
    }

    /// CollectFields (GraphQL spec §6.3.2) over several selection sets at once, which
    /// also merges the sub-selections of fields sharing a response key.
    fn collect(&mut self, sets: &[&'a SelectionSet]) -> Fields<'a> {
        let mut out = Fields::default();
        for set in sets {
            self.collect_into(set, &mut out, &mut Vec::new(), None);
        }
        out
    }

    /// `only`: the object type the selection is of, where it is an interface's
    /// (`node`), so fragments on other types do not apply.
    fn collect_into(
        &mut self,
        set: &'a SelectionSet,
        out: &mut Fields<'a>,
        visited: &mut Vec<&'a str>,
        only: Option<&str>,
    ) {
        let applies = |condition: Option<&str>| match (only, condition) {
            (Some(only), Some(c)) => c == only || c == "Node",
            _ => true,
        };
        for selection in &set.selections {
            if !self.included(selection.directives()) {
                continue;
            }
            match selection {
                Selection::Field(f) => out.entry(f.response_key().as_str()).or_default().push(f),
                Selection::InlineFragment(inline) => {
                    // Every type here is an object type but `Node`'s, so a valid
                    // type condition applies but under `node`.
                    if applies(inline.type_condition.as_ref().map(|n| n.as_str())) {
                        self.collect_into(&inline.selection_set, out, visited, only);
                    }
                }
                Selection::FragmentSpread(spread) => {
                    let name = spread.fragment_name.as_str();
                    if visited.contains(&name) {
                        continue;
                    }
                    if let Some(fragment) = self.document.and_then(|d| d.fragments.get(name)) {
                        if !applies(Some(fragment.type_condition().as_str())) {
                            continue;
                        }
                        visited.push(name);
                        self.collect_into(&fragment.selection_set, out, visited, only);
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
            } else if name == grafton_schema::NODE_ID && model.is_node(table) {
                Field::NodeId
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
                    Some(TableField::ArrayConnection(r)) => {
                        let target = model.relationships[*r].target;
                        Field::Connection(*r, Box::new(self.connection(target, group)?))
                    }
                    Some(TableField::Computed(id)) => self.computed_field(*id, group)?,
                    Some(TableField::ComputedAggregate(id)) => {
                        Field::ComputedAggregate(self.computed_aggregate(*id, group)?)
                    }
                    Some(TableField::Remote(id)) => Field::Remote(crate::types::RemoteJoin {
                        rel: *id,
                        columns: model.remote_relationships[*id].lhs.clone(),
                        fields: group.iter().map(|f| (*f).clone()).collect(),
                    }),
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
        let path = self.json_path(field)?;
        Ok(match path.is_empty() {
            true => Field::Column(column),
            false => Field::JsonPath(column, path),
        })
    }

    /// A json/jsonb field's `path` argument (empty when absent).
    pub(crate) fn json_path(
        &mut self,
        field: &'a executable::Field,
    ) -> Result<Vec<PathStep>, IrError> {
        let path = self
            .arg(field, "path")
            .and_then(|v| self.vars.deref(v))
            .and_then(|v| match v {
                Input::Ast(apollo_compiler::ast::Value::String(s)) => Some(s.as_str()),
                Input::Json(Json::String(s)) => Some(s.as_str()),
                _ => None,
            });
        match path {
            None => Ok(Vec::new()),
            Some(p) => crate::json_path::parse(p).map_err(IrError::Validation),
        }
    }

    fn column(&self, table: TableId, name: &str) -> Result<usize, IrError> {
        self.model.column_by_field(table, name).ok_or_else(|| {
            IrError::Validation(format!(
                "'{name}' is not a column of '{}'",
                self.model.tables[table].type_name
            ))
        })
    }
}
