//! Rows related to values from outside the database: an action's output object
//! joined to a table (Hasura's action relationships). The IR is a query whose
//! one root field (`r`) is the relationship's selection, filtered on each mapped
//! column equal to a variable the engine fills per object, so one multiplexed
//! statement answers every object of a handler's answer.

use super::Builder;
use crate::types::*;
use crate::IrError;
use apollo_compiler::executable;
use apollo_compiler::{ExecutableDocument, Node};
use grafton_schema::{CompareOp, SchemaModel, TableId};
use serde_json::{Map, Value as Json};

/// The root field's response key.
pub const RELATED_ROOT: &str = "r";

/// The variable holding the object's value for mapped column `i` (not a GraphQL
/// name, so no request variable can take it).
pub fn related_var(i: usize) -> String {
    format!("_related.{i}")
}

/// The IR of `fields` (one relationship field of the document, its selections
/// merged) as rows of `table` whose `columns[i]` equals [`related_var`]`(i)`;
/// one row or null when `single`.
pub fn build_related(
    model: &SchemaModel,
    document: &ExecutableDocument,
    fields: &[&Node<executable::Field>],
    variables: &Map<String, Json>,
    table: TableId,
    single: bool,
    columns: &[usize],
) -> Result<Query, IrError> {
    let mut b = Builder::new(model, Some(document), variables);
    let mut rows = b.rows(table, fields, single)?;
    let mut conditions: Vec<BoolExp> = (columns.iter().enumerate())
        .map(|(i, &column)| BoolExp::Compare {
            column,
            op: CompareOp::Eq,
            value: Value::Variable(related_var(i)),
        })
        .collect();
    conditions.extend(rows.args.filter.take());
    rows.args.filter = Some(BoolExp::And(conditions));
    Ok(Query {
        root: vec![(RELATED_ROOT.to_owned(), Root::Rows(rows))],
        shape_vars: b.vars.shape,
        non_negative_vars: b.non_negative,
        stream: None,
        derived: b.derived,
    })
}
