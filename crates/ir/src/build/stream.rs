//! `t_stream(batch_size, cursor, where)`: the rows past a cursor, in cursor order,
//! a batch at a time. The cursor's current value is a variable of its own
//! ([`STREAM_CURSOR_VAR`]), which the engine moves forward per subscriber.

use super::{Builder, IrError};
use crate::types::{Args, BoolExp, OrderBy, OrderTarget, Rows, Stream, Value};
use apollo_compiler::executable;
use apollo_compiler::Node;
use grafton_schema::{CompareOp, TableId};
use grafton_sql::Direction;

/// The variable holding a stream's cursor (not a valid GraphQL name, so no
/// document's variable can take it).
pub const STREAM_CURSOR_VAR: &str = "#cursor";

/// The hidden field each streamed row carries: its cursor value, which the engine
/// reads and removes before the rows are sent.
pub const STREAM_CURSOR_FIELD: &str = "#cursor";

impl<'a> Builder<'a> {
    /// The rows of a `_stream` field, and its cursor.
    pub(super) fn stream(
        &mut self,
        table: TableId,
        group: &[&'a Node<executable::Field>],
    ) -> Result<(Rows, Stream), IrError> {
        let field = group[0];
        let names = &self.model.args;
        let batch = self
            .arg(field, &names.batch_size)
            .and_then(|v| self.page_value(v, "batch_size").transpose())
            .transpose()?
            .ok_or_else(|| IrError::Validation("\"batch_size\" is required".into()))?;
        let cursors = match self.arg(field, &names.cursor) {
            Some(v) => self.vars.list(v),
            None => Vec::new(),
        };
        let [cursor] = cursors.as_slice() else {
            return Err(IrError::NotSupported(
                "a stream takes exactly one cursor".into(),
            ));
        };
        let (mut initial, mut direction) = (None, Direction::Asc);
        for (key, value) in self.vars.object(*cursor) {
            if key == names.initial_value {
                let columns = self.vars.object(value);
                let [(name, value)] = columns.as_slice() else {
                    return Err(IrError::NotSupported(
                        "a stream cursor follows exactly one column".into(),
                    ));
                };
                let column = self.column(table, name)?;
                let value = self.vars.leaf(*value).ok_or_else(|| {
                    IrError::Validation(format!("the cursor's initial \"{name}\" is null"))
                })?;
                initial = Some((column, value));
            } else if key == names.ordering {
                direction = match self.vars.enum_name(value) {
                    Some("DESC") => Direction::Desc,
                    _ => Direction::Asc,
                };
            }
        }
        let (column, initial) = initial
            .ok_or_else(|| IrError::Validation("the cursor needs an \"initial_value\"".into()))?;
        let past = BoolExp::Compare {
            column,
            op: match direction {
                Direction::Asc => CompareOp::Gt,
                Direction::Desc => CompareOp::Lt,
            },
            value: Value::Variable(STREAM_CURSOR_VAR.to_owned()),
        };
        let filter = match self.arg(field, &names.where_) {
            Some(v) if self.vars.deref(v).is_some() => {
                BoolExp::And(vec![self.bool_exp(table, v)?, past])
            }
            _ => past,
        };
        let fields = self.sub_fields(group);
        let mut fields = self.table_fields(table, &fields)?;
        fields.push((
            STREAM_CURSOR_FIELD.to_owned(),
            crate::types::Field::Column(column),
        ));
        let rows = Rows {
            table,
            args: Args {
                filter: Some(filter),
                order_by: vec![OrderBy {
                    target: OrderTarget::Column(column),
                    direction,
                    nulls: None,
                }],
                limit: Some(batch),
                ..Args::default()
            },
            fields,
            single: false,
        };
        Ok((rows, Stream { initial }))
    }
}
