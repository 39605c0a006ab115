//! Turning GraphQL values into bind values for each backend.

use grafton_sql::{Param, ParamValue, SqlType};
use serde_json::{Map, Value};

/// The JSON value a parameter takes for this request.
pub(crate) fn value_of<'a>(param: &'a Param, variables: &'a Map<String, Value>) -> &'a Value {
    match &param.value {
        ParamValue::Literal(v) => v,
        ParamValue::Variable(name) => variables.get(name).unwrap_or(&Value::Null),
    }
}

/// A Postgres parameter's text: parsed by its declared type's input function (see
/// `pg_params`), or, for enums and other named types, cast in the SQL.
pub(crate) fn postgres_text(param: &Param, value: &Value) -> Option<String> {
    if param.list {
        let items = match value {
            Value::Null => return None,
            Value::Array(items) => items.as_slice(),
            other => std::slice::from_ref(other),
        };
        return Some(array_literal(items));
    }
    if is_json(param) && !value.is_null() {
        return Some(value.to_string());
    }
    // An array type's value: a list becomes its literal; a string is the literal.
    if let (Value::Array(items), true) = (value, is_array(param)) {
        return Some(array_literal(items));
    }
    scalar_text(value)
}

/// A parameter of a PostgreSQL array type (`pg_catalog._text`, `public._citext`).
fn is_array(param: &Param) -> bool {
    matches!(&param.ty, SqlType::Named { name, .. } if name.starts_with('_'))
}

/// A JSON-typed parameter carries JSON text, so a JSON string stays quoted.
fn is_json(param: &Param) -> bool {
    matches!(param.ty, SqlType::Builtin("json" | "jsonb"))
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        // json/jsonb values.
        other => Some(other.to_string()),
    }
}

/// A Postgres array literal: `{"a","b\"c",NULL}`. Every element is quoted, so no
/// element text can change the array's structure.
fn array_literal(items: &[Value]) -> String {
    let mut out = String::from("{");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match scalar_text(item) {
            None => out.push_str("NULL"),
            Some(text) => {
                out.push('"');
                for c in text.chars() {
                    if c == '"' || c == '\\' {
                        out.push('\\');
                    }
                    out.push(c);
                }
                out.push('"');
            }
        }
    }
    out.push('}');
    out
}

/// SQLite parameters bind natively; lists go in as JSON text for `json_each`.
pub(crate) fn sqlite_value(param: &Param, value: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    if param.list {
        return match value {
            Value::Null => V::Null,
            Value::Array(_) => V::Text(value.to_string()),
            other => V::Text(Value::Array(vec![other.clone()]).to_string()),
        };
    }
    if is_json(param) && !value.is_null() {
        return V::Text(value.to_string());
    }
    match value {
        Value::Null => V::Null,
        // A session variable is text; bound as the integer its type says, it
        // compares with values that have no column affinity (`count(*)`) too.
        Value::String(s) if matches!(param.ty, SqlType::Builtin("int2" | "int4" | "int8")) => {
            match s.trim().parse::<i64>() {
                Ok(i) => V::Integer(i),
                Err(_) => V::Text(s.clone()),
            }
        }
        Value::Bool(b) => V::Integer(i64::from(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => V::Integer(i),
            None => V::Real(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => V::Text(s.clone()),
        other => V::Text(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> Param {
        Param {
            value: ParamValue::Literal(Value::Null),
            ty: SqlType::Builtin("text"),
            list: true,
        }
    }

    #[test]
    fn array_literals_quote_everything() {
        let v = serde_json::json!(["a", "b\"c", "d\\e", null, 1, "}{,"]);
        assert_eq!(
            postgres_text(&list(), &v).as_deref(),
            Some(r#"{"a","b\"c","d\\e",NULL,"1","}{,"}"#)
        );
    }

    #[test]
    fn single_value_is_a_list_of_one() {
        assert_eq!(
            postgres_text(&list(), &serde_json::json!(3)).as_deref(),
            Some(r#"{"3"}"#)
        );
    }
}
