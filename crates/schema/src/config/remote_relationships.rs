//! Remote relationships from a table to a remote schema's field (Hasura's
//! `remote_relationships` with `to_remote_schema`, or its older form with
//! `remote_schema` and `hasura_fields`; the same shape in the config file).

use serde::Deserialize;
use serde_json::{Map, Value};

/// A table's relationship to a remote schema's field: the table's `lhs`
/// columns fill the field's arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "Value")]
pub struct RemoteRelationshipConfig {
    /// The remote schema.
    pub remote_schema: String,
    /// The table's columns the arguments read (`$column`), by database name.
    pub lhs_fields: Vec<String>,
    /// The field reached: the remote's root field, then each nested field, in
    /// the remote's own names, each with the arguments it is given.
    pub remote_field: Vec<RemoteFieldStep>,
}

/// One field on the way to a remote relationship's field.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteFieldStep {
    /// The field's name, in the remote's own names.
    pub name: String,
    /// Its arguments: JSON, where a string `"$column"` is the row's value of
    /// that column.
    pub arguments: Map<String, Value>,
}

impl TryFrom<Value> for RemoteRelationshipConfig {
    type Error = String;

    /// Reads a relationship's `definition`: `{to_remote_schema: {remote_schema,
    /// lhs_fields, remote_field}}` or the older `{remote_schema,
    /// hasura_fields, remote_field}`.
    fn try_from(definition: Value) -> Result<Self, String> {
        let Value::Object(mut d) = definition else {
            return Err("a remote relationship's definition is an object".into());
        };
        let forms = ["remote_schema", "to_source", "to_remote_schema"];
        let given: Vec<&str> = forms.into_iter().filter(|k| d.contains_key(*k)).collect();
        let (mut d, lhs_key) = match given[..] {
            ["to_remote_schema"] => match d.remove("to_remote_schema") {
                Some(Value::Object(inner)) => (inner, "lhs_fields"),
                _ => return Err("to_remote_schema is an object".into()),
            },
            ["remote_schema"] => (d, "hasura_fields"),
            ["to_source"] => {
                return Err(
                    "a relationship to another database (to_source) is not served by Grafton: it serves one database"
                        .into(),
                )
            }
            _ => return Err(
                "remote relationship definition (lenient format) expects exactly one of: remote_schema, to_source, to_remote_schema"
                    .into(),
            ),
        };
        let remote_schema = match d.remove("remote_schema") {
            Some(Value::String(s)) => s,
            _ => return Err("key \"remote_schema\" not found".into()),
        };
        let lhs_fields = match d.remove(lhs_key) {
            Some(Value::Array(items)) => (items.into_iter())
                .map(|v| match v {
                    Value::String(s) => Ok(s),
                    _ => Err(format!("{lhs_key} is a list of column names")),
                })
                .collect::<Result<Vec<_>, _>>()?,
            _ => return Err(format!("key \"{lhs_key}\" not found")),
        };
        let mut remote_field = Vec::new();
        let mut at = d.remove("remote_field");
        while let Some(level) = at.take() {
            let Value::Object(level) = level else {
                return Err("remote_field is an object".into());
            };
            if level.len() != 1 {
                return Err("Expecting one single mapping, received too many.".into());
            }
            let Some((name, Value::Object(mut step))) = level.into_iter().next() else {
                return Err("each remote_field level is {field: {arguments, field}}".into());
            };
            let arguments = match step.remove("arguments") {
                Some(Value::Object(a)) => a,
                None | Some(Value::Null) => Map::new(),
                Some(_) => return Err(format!("the arguments of '{name}' are an object")),
            };
            at = step.remove("field");
            // Nothing a definition says is dropped unread.
            if let Some(k) = step.keys().next() {
                return Err(format!(
                    "unexpected key \"{k}\" in remote_field's \"{name}\""
                ));
            }
            remote_field.push(RemoteFieldStep { name, arguments });
        }
        if remote_field.is_empty() {
            return Err("key \"remote_field\" not found".into());
        }
        if let Some(k) = d.keys().next() {
            return Err(format!(
                "unexpected key \"{k}\" in the relationship's definition"
            ));
        }
        Ok(Self {
            remote_schema,
            lhs_fields,
            remote_field,
        })
    }
}

impl RemoteRelationshipConfig {
    /// Every `$column` the arguments read.
    pub fn argument_columns(&self) -> Vec<String> {
        fn walk(v: &Value, out: &mut Vec<String>) {
            match v {
                Value::String(s) => {
                    if let Some(c) = s.strip_prefix('$') {
                        out.push(c.to_owned());
                    }
                }
                Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
                Value::Object(m) => m.values().for_each(|i| walk(i, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        for step in &self.remote_field {
            step.arguments.values().for_each(|v| walk(v, &mut out));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_of_hasuras_forms_read_the_same() {
        let current = json!({"to_remote_schema": {"remote_schema": "lib", "lhs_fields": ["author_id"],
            "remote_field": {"author": {"arguments": {"id": "$author_id"},
                "field": {"books": {"arguments": {"first": 2}}}}}}});
        let older = json!({"remote_schema": "lib", "hasura_fields": ["author_id"],
            "remote_field": {"author": {"arguments": {"id": "$author_id"},
                "field": {"books": {"arguments": {"first": 2}}}}}});
        let a = RemoteRelationshipConfig::try_from(current).expect("reads");
        let b = RemoteRelationshipConfig::try_from(older).expect("reads");
        assert_eq!(a, b);
        assert_eq!(a.remote_field.len(), 2);
        assert_eq!(a.remote_field[1].name, "books");
        assert_eq!(a.argument_columns(), vec!["author_id".to_owned()]);
        // A key it does not know is refused, never dropped.
        let extra = json!({"to_remote_schema": {"remote_schema": "lib", "lhs_fields": ["id"],
            "remote_field": {"author": {"arguments": {"id": "$id"}}}, "timeout": 3}});
        let refused = RemoteRelationshipConfig::try_from(extra).expect_err("refused");
        assert!(refused.contains("\"timeout\""), "{refused}");
        let nested = json!({"to_remote_schema": {"remote_schema": "lib", "lhs_fields": ["id"],
            "remote_field": {"author": {"arguments": {"id": "$id"}, "alias": "a"}}}});
        let refused = RemoteRelationshipConfig::try_from(nested).expect_err("refused");
        assert!(refused.contains("\"alias\""), "{refused}");
    }

    #[test]
    fn a_definition_it_cannot_serve_is_refused_with_hasuras_words() {
        let refused = |d: Value| RemoteRelationshipConfig::try_from(d).expect_err("refused");
        let two = json!({"remote_schema": "lib", "hasura_fields": ["a"],
            "remote_field": {"x": {}, "y": {}}});
        assert_eq!(
            refused(two),
            "Expecting one single mapping, received too many."
        );
        let none = json!({"lhs_fields": ["a"]});
        assert!(refused(none).contains("expects exactly one of"));
        let source = json!({"to_source": {"source": "other", "table": "t",
            "relationship_type": "object", "field_mapping": {"a": "b"}}});
        assert!(refused(source).contains("serves one database"));
    }
}
