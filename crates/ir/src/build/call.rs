//! A tracked function's root field: its `args` as a call, and the rows (or the
//! aggregate) over what it returns.

use super::Builder;
use crate::types::*;
use crate::IrError;
use apollo_compiler::executable;
use apollo_compiler::Node;
use grafton_schema::FunctionId;
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
        rows.args.call = Some(self.call(function, group[0])?);
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
        agg.args.call = Some(self.call(function, group[0])?);
        Ok(agg)
    }

    /// The call a field's `args` make. Every argument without a default must be
    /// given (an explicit `null` passes NULL); an omitted one takes its default,
    /// so those after it are passed by name and must have one (Hasura's rules).
    fn call(
        &mut self,
        function: FunctionId,
        field: &'a executable::Field,
    ) -> Result<Call, IrError> {
        let info = &self.model.functions[function];
        let f = &self.model.catalog.functions[info.catalog_index];
        let mut given: BTreeMap<usize, Value> = BTreeMap::new();
        if let Some(v) = self.arg(field, "args") {
            for (key, value) in self.vars.object(v) {
                let Some(&(_, position)) = info.args.iter().find(|(n, _)| n == key) else {
                    return Err(IrError::Validation(format!(
                        "'{key}' is not an argument of '{}'",
                        info.field
                    )));
                };
                if let Some(value) = self.vars.leaf(value) {
                    given.insert(position, value);
                }
            }
        }
        if let Some(p) = info.session_arg {
            given.insert(p, Value::Variable(SESSION_JSON_VAR.to_owned()));
        }
        let required = f.args.len().saturating_sub(f.defaults);
        for (name, position) in &info.args {
            if *position < required && !given.contains_key(position) {
                return Err(IrError::Validation(format!(
                    "missing argument '{name}' of '{}': it has no default",
                    info.field
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
                    info.field, a.name
                )));
            }
        }
        Ok(Call {
            function,
            args: given.into_iter().collect(),
        })
    }
}
