//! Aggregate fields: `<table>_aggregate { aggregate { count, sum { … } } nodes }`.

use super::Builder;
use crate::types::*;
use crate::IrError;
use apollo_compiler::executable;
use apollo_compiler::Node;
use grafton_schema::TableId;

impl<'a> Builder<'a> {
    pub(super) fn aggregate(
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

    pub(super) fn aggregate_values(
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
                        } else if let Some(&grafton_schema::TableField::Computed(id)) =
                            model.tables[table].fields.get(n)
                        {
                            let c = &model.computed[id];
                            if !c.args.is_empty()
                                || !matches!(c.returns, grafton_schema::ComputedReturns::Scalar(_))
                            {
                                return Err(IrError::Validation(format!(
                                    "'{n}' cannot be aggregated"
                                )));
                            }
                            FuncField::Computed(id)
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
}
