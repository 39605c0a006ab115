//! Postgres's jsonb update operators for SQLite, registered on every connection:
//! `||` (`grafton_jsonb_concat`), `- text`, `- int` and `#- text[]`, with the same
//! results and the same errors, so `_append`, `_prepend`, `_delete_key`,
//! `_delete_elem` and `_delete_at_path` behave alike on both backends.

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::Connection;
use serde_json::Value;

/// The start of every error these functions raise; the executor reports such errors
/// as invalid data, as Postgres does (SQLSTATE 22023).
pub(crate) const ERROR_PREFIX: &str = "invalid jsonb operation: ";

pub(crate) fn fail(message: &str) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(format!("{ERROR_PREFIX}{message}").into())
}

pub(crate) fn json_arg(ctx: &Context<'_>, i: usize) -> rusqlite::Result<Option<Value>> {
    match ctx.get_raw(i) {
        ValueRef::Null => Ok(None),
        ValueRef::Text(t) => serde_json::from_slice(t)
            .map(Some)
            .map_err(|e| fail(&format!("invalid JSON: {e}"))),
        ValueRef::Integer(i) => Ok(Some(Value::from(i))),
        ValueRef::Real(f) => Ok(serde_json::Number::from_f64(f).map(Value::Number)),
        ValueRef::Blob(_) => Err(fail("binary values are not JSON")),
    }
}

fn text(v: Option<Value>) -> SqlValue {
    match v {
        Some(v) => SqlValue::Text(v.to_string()),
        None => SqlValue::Null,
    }
}

/// `a || b`: objects merge (right wins), otherwise both become arrays and concatenate.
pub(crate) fn concat(a: Value, b: Value) -> Value {
    match (a, b) {
        (Value::Object(mut left), Value::Object(right)) => {
            for (k, v) in right {
                left.insert(k, v);
            }
            Value::Object(left)
        }
        (a, b) => {
            let mut items = match a {
                Value::Array(items) => items,
                other => vec![other],
            };
            match b {
                Value::Array(more) => items.extend(more),
                other => items.push(other),
            }
            Value::Array(items)
        }
    }
}

/// `a - key`: removes a key of an object, or every string element equal to it.
pub(crate) fn delete_key(a: Value, key: &str) -> Result<Value, String> {
    match a {
        Value::Object(mut map) => {
            map.shift_remove(key);
            Ok(Value::Object(map))
        }
        Value::Array(items) => Ok(Value::Array(
            items
                .into_iter()
                .filter(|v| v.as_str() != Some(key))
                .collect(),
        )),
        _ => Err("cannot delete from scalar".into()),
    }
}

fn index(len: usize, i: i64) -> Option<usize> {
    let i = if i < 0 { len as i64 + i } else { i };
    (0..len as i64).contains(&i).then_some(i as usize)
}

/// `a - index`: removes an array element (negative counts from the end).
pub(crate) fn delete_elem(a: Value, i: i64) -> Result<Value, String> {
    match a {
        Value::Array(mut items) => {
            if let Some(i) = index(items.len(), i) {
                items.remove(i);
            }
            Ok(Value::Array(items))
        }
        Value::Object(_) => Err("cannot delete from object using integer index".into()),
        _ => Err("cannot delete from scalar".into()),
    }
}

/// `a #- path`: removes the element at `path` (keys, or integers for arrays).
pub(crate) fn delete_path(a: Value, path: &[String]) -> Result<Value, String> {
    if !a.is_object() && !a.is_array() {
        return Err("cannot delete path in scalar".into());
    }
    let mut a = a;
    delete_in(&mut a, path, 0)?;
    Ok(a)
}

fn delete_in(v: &mut Value, path: &[String], depth: usize) -> Result<(), String> {
    let Some(step) = path.get(depth) else {
        return Ok(());
    };
    let last = depth + 1 == path.len();
    match v {
        Value::Object(map) => {
            if last {
                map.shift_remove(step.as_str());
            } else if let Some(inner) = map.get_mut(step.as_str()) {
                delete_in(inner, path, depth + 1)?;
            }
        }
        Value::Array(items) => {
            let i: i64 = step.parse().map_err(|_| {
                format!(
                    "path element at position {} is not an integer: \"{step}\"",
                    depth + 1
                )
            })?;
            if let Some(i) = index(items.len(), i) {
                if last {
                    items.remove(i);
                } else {
                    delete_in(&mut items[i], path, depth + 1)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Registers the functions on `conn`.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("grafton_jsonb_concat", 2, flags, |ctx| {
        Ok(text(match (json_arg(ctx, 0)?, json_arg(ctx, 1)?) {
            (Some(a), Some(b)) => Some(concat(a, b)),
            _ => None,
        }))
    })?;
    conn.create_scalar_function("grafton_jsonb_delete_key", 2, flags, |ctx| {
        let key: Option<String> = ctx.get(1)?;
        match (json_arg(ctx, 0)?, key) {
            (Some(a), Some(k)) => delete_key(a, &k)
                .map(|v| text(Some(v)))
                .map_err(|e| fail(&e)),
            _ => Ok(SqlValue::Null),
        }
    })?;
    conn.create_scalar_function("grafton_jsonb_delete_elem", 2, flags, |ctx| {
        let i: Option<i64> = ctx.get(1)?;
        match (json_arg(ctx, 0)?, i) {
            (Some(a), Some(i)) => delete_elem(a, i)
                .map(|v| text(Some(v)))
                .map_err(|e| fail(&e)),
            _ => Ok(SqlValue::Null),
        }
    })?;
    conn.create_scalar_function("grafton_jsonb_delete_path", 2, flags, |ctx| {
        let path = match json_arg(ctx, 1)? {
            Some(Value::Array(items)) => items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                })
                .collect::<Vec<String>>(),
            Some(_) => return Err(fail("the path must be an array of strings")),
            None => return Ok(SqlValue::Null),
        };
        match json_arg(ctx, 0)? {
            Some(a) => delete_path(a, &path)
                .map(|v| text(Some(v)))
                .map_err(|e| fail(&e)),
            None => Ok(SqlValue::Null),
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn concat_follows_postgres() {
        assert_eq!(
            concat(json!({"a":1,"b":2}), json!({"b":3,"c":4})),
            json!({"a":1,"b":3,"c":4})
        );
        assert_eq!(concat(json!([1, 2]), json!([3])), json!([1, 2, 3]));
        assert_eq!(concat(json!([1]), json!(2)), json!([1, 2]));
        assert_eq!(concat(json!(0), json!([1])), json!([0, 1]));
        assert_eq!(concat(json!({"a":1}), json!(2)), json!([{"a":1}, 2]));
        assert_eq!(concat(json!(1), json!(2)), json!([1, 2]));
    }

    #[test]
    fn deletes_follow_postgres() {
        assert_eq!(delete_key(json!({"a":1,"b":2}), "a"), Ok(json!({"b":2})));
        assert_eq!(
            delete_key(json!(["a", "b", "a", 1]), "a"),
            Ok(json!(["b", 1]))
        );
        assert!(delete_key(json!(3), "a").is_err());
        assert_eq!(delete_elem(json!([1, 2, 3]), -1), Ok(json!([1, 2])));
        assert_eq!(delete_elem(json!([1, 2, 3]), 7), Ok(json!([1, 2, 3])));
        assert!(delete_elem(json!({"a": 1}), 0).is_err());
        let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            delete_path(json!({"a":{"b":[1,2,3]}}), &path(&["a", "b", "1"])),
            Ok(json!({"a":{"b":[1,3]}}))
        );
        assert_eq!(
            delete_path(json!({"a":1}), &path(&["x", "y"])),
            Ok(json!({"a":1}))
        );
        assert!(delete_path(json!([1]), &path(&["x"])).is_err());
        assert!(delete_path(json!("s"), &path(&["x"])).is_err());
    }
}
