//! Streaming subscriptions' cursors: each answer is the next batch of rows past a
//! subscriber's cursor; each row carries its cursor value in a hidden field, which
//! is read (from the last row) and removed before the batch is sent.

use grafton_ir::STREAM_CURSOR_FIELD;
use serde_json::Value;

/// A stream's cursor in the cohort's statement: the index of its parameter in a
/// subscriber's values, and the parameter (for its type).
pub(crate) struct Cursor {
    pub(crate) index: usize,
    pub(crate) param: grafton_sql::Param,
}

impl Cursor {
    /// The cursor of a plan's statement, if it streams.
    pub(crate) fn of(statement: &grafton_sql::Statement) -> Option<Self> {
        let var = grafton_sql::ParamValue::Variable(grafton_ir::STREAM_CURSOR_VAR.to_owned());
        let index = statement.params.iter().position(|p| p.value == var)?;
        Some(Cursor {
            index,
            param: statement.params[index].clone(),
        })
    }
}

/// A non-empty batch's response body (`{"data": …}`, hidden fields removed) and
/// the cursor value of its last row; `None` for an empty batch (nothing to send).
pub(crate) fn batch(data: &str) -> Option<(String, Value)> {
    let mut data: serde_json::Map<String, Value> = serde_json::from_str(data).ok()?;
    let rows = data.values_mut().find_map(Value::as_array_mut)?;
    let last = rows
        .last()
        .and_then(|row| row.get(STREAM_CURSOR_FIELD))
        .cloned()?;
    for row in rows.iter_mut() {
        if let Some(row) = row.as_object_mut() {
            row.remove(STREAM_CURSOR_FIELD);
        }
    }
    let body = serde_json::json!({ "data": data }).to_string();
    Some((body, last))
}

/// Value `index` of a subscriber's values (JSON array text): a stream's cursor.
pub(crate) fn value_at(values: &str, index: usize) -> Option<Value> {
    let all: Vec<Value> = serde_json::from_str(values).ok()?;
    all.get(index).cloned()
}

/// A subscriber's values (JSON array text) with value `index` replaced.
pub(crate) fn with_value(values: &str, index: usize, value: Value) -> Option<String> {
    let mut all: Vec<Value> = serde_json::from_str(values).ok()?;
    *all.get_mut(index)? = value;
    Some(Value::Array(all).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_gives_its_last_cursor_and_loses_the_hidden_field() {
        let data = format!(
            r##"{{"items_stream":[{{"id":1,"{f}":1}},{{"id":2,"{f}":2}}]}}"##,
            f = STREAM_CURSOR_FIELD
        );
        let (body, cursor) = batch(&data).expect("a batch");
        assert_eq!(body, r#"{"data":{"items_stream":[{"id":1},{"id":2}]}}"#);
        assert_eq!(cursor, Value::from(2));
        assert!(batch(r#"{"items_stream":[]}"#).is_none());
    }

    #[test]
    fn values_take_the_new_cursor() {
        assert_eq!(
            with_value(r#"["a","5",null]"#, 1, Value::from("9")).as_deref(),
            Some(r#"["a","9",null]"#)
        );
    }
}
