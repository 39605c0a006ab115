//! A tracked function's root field: its `args` as a call, and the rows (or the
//! aggregate) over what it returns.

use super::Builder;
use crate::types::*;
use crate::IrError;
use apollo_compiler::executable;
use apollo_compiler::Node;
use grafton_schema::{ComputedId, ComputedReturns, FunctionId};
use std::collections::BTreeMap;

impl<'a> Builder<'a> {
    /// `f(args: …, where: …)`: the function's rows under the list arguments.
    pub(super) fn call_rows(
        &mut self,
        function: FunctionId,
        group: &[&'a Node<executable::Field>],
    ) -> Result<Rows, IrError> {
        let info = &self.model.functions[function];
        let mut rows = self.rows(info.table, group, info.single)?;
        if info.single {
            // A function returning one row takes the list arguments too, as
            // Hasura's: `where` may leave it out (null), `limit: 0` too.
            rows.args = self.args(info.table, group[0])?;
        }
        rows.args.call = Some(self.tracked_call(function, group[0])?);
        Ok(rows)
    }

    /// `f_aggregate(args: …, where: …)`.
    pub(super) fn call_aggregate(
        &mut self,
        function: FunctionId,
        group: &[&'a Node<executable::Field>],
    ) -> Result<Aggregate, IrError> {
        let table = self.model.functions[function].table;
        let mut agg = self.aggregate(table, group)?;
        agg.args.call = Some(self.tracked_call(function, group[0])?);
        Ok(agg)
    }

    /// `f_connection(args: …, first: …)`: a page of the function's rows.
    pub(super) fn call_connection(
        &mut self,
        function: FunctionId,
        group: &[&'a Node<executable::Field>],
    ) -> Result<Connection, IrError> {
        let table = self.model.functions[function].table;
        let mut connection = self.connection(table, group)?;
        connection.args.call = Some(self.tracked_call(function, group[0])?);
        Ok(connection)
    }

    /// A tracked function's call.
    fn tracked_call(
        &mut self,
        function: FunctionId,
        field: &'a executable::Field,
    ) -> Result<Call, IrError> {
        let info = &self.model.functions[function];
        let spec = CallSpec {
            function: info.catalog_index,
            args: &info.args,
            session_arg: info.session_arg,
            row_arg: None,
            field: &info.field,
        };
        self.call(spec, field)
    }

    /// A computed field: a scalar's call, or the rows a set-returning one gives.
    pub(super) fn computed_field(
        &mut self,
        id: ComputedId,
        group: &[&'a Node<executable::Field>],
    ) -> Result<Field, IrError> {
        let call = self.computed_call(id, group[0])?;
        Ok(match self.model.computed[id].returns {
            ComputedReturns::Scalar(_) => Field::Computed(id, call, self.json_path(group[0])?),
            ComputedReturns::Rows(table) => {
                let mut rows = self.rows(table, group, false)?;
                rows.args.call = Some(call);
                Field::ComputedRows(rows)
            }
        })
    }

    /// `<field>_aggregate` of a computed field returning rows.
    pub(super) fn computed_aggregate(
        &mut self,
        id: ComputedId,
        group: &[&'a Node<executable::Field>],
    ) -> Result<Aggregate, IrError> {
        let call = self.computed_call(id, group[0])?;
        let ComputedReturns::Rows(table) = self.model.computed[id].returns else {
            return Err(IrError::Validation(
                "not a computed field returning rows".into(),
            ));
        };
        let mut agg = self.aggregate(table, group)?;
        agg.args.call = Some(call);
        Ok(agg)
    }

    /// A computed field's call with the row.
    fn computed_call(
        &mut self,
        id: ComputedId,
        field: &'a executable::Field,
    ) -> Result<Call, IrError> {
        let c = &self.model.computed[id];
        let spec = CallSpec {
            function: c.catalog_index,
            args: &c.args,
            session_arg: c.session_arg,
            row_arg: Some(c.row_arg),
            field: &c.name,
        };
        self.call(spec, field)
    }

    /// The call a field's `args` make. Every argument without a default must be
    /// given (an explicit `null` passes NULL); an omitted one takes its default,
    /// so those after it are passed by name and must have one (Hasura's rules).
    fn call(&mut self, spec: CallSpec<'_>, field: &'a executable::Field) -> Result<Call, IrError> {
        let f = &self.model.catalog.functions[spec.function];
        let mut given: BTreeMap<usize, Value> = BTreeMap::new();
        if let Some(v) = self.arg(field, "args") {
            for (key, value) in self.vars.object(v) {
                let Some(&(_, position)) = spec.args.iter().find(|(n, _)| n == key) else {
                    return Err(IrError::Validation(format!(
                        "'{key}' is not an argument of '{}'",
                        spec.field
                    )));
                };
                if let Some(value) = self.vars.leaf(value) {
                    given.insert(position, value);
                }
            }
        }
        if let Some(p) = spec.session_arg {
            given.insert(p, Value::Variable(SESSION_JSON_VAR.to_owned()));
        }
        if let Some(p) = spec.row_arg {
            // A placeholder: translate passes the row itself.
            given.insert(p, Value::Literal(serde_json::Value::Null));
        }
        let required = f.args.len().saturating_sub(f.defaults);
        for (name, position) in spec.args {
            if *position < required && !given.contains_key(position) {
                return Err(IrError::Validation(format!(
                    "missing argument '{name}' of '{}': it has no default",
                    spec.field
                )));
            }
        }
        let mut omitted = None;
        for (position, a) in f.args.iter().enumerate() {
            if !given.contains_key(&position) {
                omitted.get_or_insert(a.name.as_str());
            } else if let (Some(before), false) = (omitted, a.named) {
                return Err(IrError::Validation(format!(
                    "'{}': '{}' is given but '{before}' before it is not, and an unnamed \
                     argument can only be passed by position",
                    spec.field, a.name
                )));
            }
        }
        Ok(Call {
            function: spec.function,
            args: given.into_iter().collect(),
            session_arg: spec.session_arg,
            row_arg: spec.row_arg,
        })
    }
}

/// What a call's arguments are read against.
struct CallSpec<'m> {
    /// Index into the catalog's functions.
    function: usize,
    /// The arguments a caller passes: GraphQL name and position.
    args: &'m [(String, usize)],
    session_arg: Option<usize>,
    row_arg: Option<usize>,
    /// The field, for messages.
    field: &'m str,
}
