//! Postgres's jsonb comparison operators for SQLite (`@>`, `<@`, `?`, `?|`, `?&`),
//! registered on every connection so `_contains`, `_contained_in`, `_has_key`,
//! `_has_keys_any` and `_has_keys_all` mean the same on both backends.

use crate::sqlite_json::{fail, json_arg};
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;
use serde_json::Value;

/// `a @> b` as PostgreSQL defines it: objects by key (recursively), arrays as sets
/// of contained elements, scalars by equality; at the top level only, an array also
/// contains a scalar that is one of its elements.
pub(crate) fn contains(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(items), scalar) if !scalar.is_array() && !scalar.is_object() => {
            items.iter().any(|item| deep_contains(item, scalar))
        }
        _ => deep_contains(a, b),
    }
}

fn deep_contains(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => b
            .iter()
            .all(|(k, bv)| a.get(k).is_some_and(|av| deep_contains(av, bv))),
        (Value::Array(a), Value::Array(b)) => {
            b.iter().all(|bv| a.iter().any(|av| deep_contains(av, bv)))
        }
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (a, b) => !a.is_array() && !a.is_object() && a == b,
    }
}

/// `a ? key`: a top-level key of an object, or a string element of an array (or the
/// string itself).
pub(crate) fn has_key(a: &Value, key: &str) -> bool {
    match a {
        Value::Object(map) => map.contains_key(key),
        Value::Array(items) => items.iter().any(|v| v.as_str() == Some(key)),
        Value::String(s) => s == key,
        _ => false,
    }
}

/// The keys of a `?|`/`?&` operand (a JSON array of strings; NULL elements skipped,
/// as PostgreSQL skips them).
fn keys(ctx: &Context<'_>, i: usize) -> rusqlite::Result<Option<Vec<String>>> {
    match json_arg(ctx, i)? {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(
            items
                .into_iter()
                .filter_map(|v| match v {
                    Value::Null => None,
                    Value::String(s) => Some(s),
                    other => Some(other.to_string()),
                })
                .collect(),
        )),
        Some(Value::String(s)) => Ok(Some(vec![s])),
        Some(_) => Err(fail("the keys must be an array of strings")),
    }
}

fn truth(v: Option<bool>) -> SqlValue {
    match v {
        Some(b) => SqlValue::Integer(i64::from(b)),
        None => SqlValue::Null,
    }
}

/// Registers the functions on `conn`.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("grafton_jsonb_contains", 2, flags, |ctx| {
        Ok(truth(match (json_arg(ctx, 0)?, json_arg(ctx, 1)?) {
            (Some(a), Some(b)) => Some(contains(&a, &b)),
            _ => None,
        }))
    })?;
    conn.create_scalar_function("grafton_jsonb_has_key", 2, flags, |ctx| {
        let key: Option<String> = ctx.get(1)?;
        Ok(truth(match (json_arg(ctx, 0)?, key) {
            (Some(a), Some(k)) => Some(has_key(&a, &k)),
            _ => None,
        }))
    })?;
    conn.create_scalar_function("grafton_jsonb_has_keys_any", 2, flags, |ctx| {
        Ok(truth(match (json_arg(ctx, 0)?, keys(ctx, 1)?) {
            (Some(a), Some(ks)) => Some(ks.iter().any(|k| has_key(&a, k))),
            _ => None,
        }))
    })?;
    conn.create_scalar_function("grafton_jsonb_has_keys_all", 2, flags, |ctx| {
        Ok(truth(match (json_arg(ctx, 0)?, keys(ctx, 1)?) {
            (Some(a), Some(ks)) => Some(ks.iter().all(|k| has_key(&a, k))),
            _ => None,
        }))
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn containment_follows_postgres() {
        assert!(contains(
            &json!({"a": 1, "b": {"c": [1, 2]}}),
            &json!({"b": {"c": [2]}})
        ));
        assert!(!contains(&json!({"a": 1}), &json!({"a": 2})));
        assert!(contains(&json!([1, 2, 3]), &json!([3, 1, 1])));
        assert!(contains(&json!(["foo", "bar"]), &json!("bar")));
        assert!(!contains(&json!("bar"), &json!(["bar"])));
        assert!(!contains(&json!({"a": ["x"]}), &json!({"a": "x"})));
        assert!(contains(&json!({"n": 1.0}), &json!({"n": 1})));
        assert!(contains(&json!({}), &json!({})));
        assert!(!contains(&json!([]), &json!({})));
    }

    #[test]
    fn keys_follow_postgres() {
        assert!(has_key(&json!({"a": null}), "a"));
        assert!(has_key(&json!(["a", 1]), "a"));
        assert!(!has_key(&json!([["a"]]), "a"));
        assert!(!has_key(&json!({"b": {"a": 1}}), "a"));
        assert!(has_key(&json!("a"), "a"));
    }
}
