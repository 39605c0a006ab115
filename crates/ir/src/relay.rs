//! The Relay API's opaque values (its IR is `types/connection.rs`), read as
//! Hasura writes them: a global id is the base64 of
//! `[1, "schema", "table", <primary key values…>]`, a cursor the base64 of a JSON
//! object of the row's sort keys (`{"id" : 1}`). Both are read leniently, as
//! Hasura reads them (padding optional, whitespace ignored).

use base64::Engine as _;
use serde_json::Value as Json;

/// Why a cursor cannot be read (Hasura's message).
pub const INVALID_CURSOR: &str = "the \"after\" or \"before\" cursor is invalid";

/// The value at `path` in a decoded cursor.
pub fn cursor_value(cursor: &Json, path: &[String]) -> Option<Json> {
    let mut at = cursor;
    for key in path {
        at = at.as_object()?.get(key)?;
    }
    Some(at.clone())
}

/// Base64 as Hasura reads it: standard alphabet, padding optional, whitespace
/// (an id pasted with its newline) ignored.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine.decode(compact.as_bytes()).ok()
}

/// A cursor's JSON object, or `None` if it is not one. A number whose text a
/// float would not give back (a long `numeric`) is kept as that text, which
/// binds as exactly that value.
pub fn decode_cursor(text: &str) -> Option<Json> {
    let bytes = base64_decode(text)?;
    let raw: Box<serde_json::value::RawValue> = serde_json::from_slice(&bytes).ok()?;
    exact(&raw).filter(Json::is_object)
}

/// A JSON value read from its text, numbers kept exact.
fn exact(raw: &serde_json::value::RawValue) -> Option<Json> {
    let text = raw.get().trim();
    match text.as_bytes().first()? {
        b'{' => {
            type Fields = std::collections::BTreeMap<String, Box<serde_json::value::RawValue>>;
            let fields: Fields = serde_json::from_str(text).ok()?;
            let mut object = serde_json::Map::new();
            for (key, value) in fields {
                object.insert(key, exact(&value)?);
            }
            Some(Json::Object(object))
        }
        b'[' => {
            let items: Vec<Box<serde_json::value::RawValue>> = serde_json::from_str(text).ok()?;
            (items.iter().map(|item| exact(item)))
                .collect::<Option<Vec<Json>>>()
                .map(Json::Array)
        }
        b'-' | b'0'..=b'9' => {
            let number: Json = serde_json::from_str(text).ok()?;
            let printed = number.to_string();
            Some(match printed.as_str() == text {
                true => number,
                false => Json::String(text.to_owned()),
            })
        }
        _ => serde_json::from_str(text).ok(),
    }
}

/// A global id, read.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeId {
    /// The table's schema.
    pub schema: String,
    /// The table's name.
    pub table: String,
    /// Its primary key's values, in order.
    pub values: Vec<Json>,
}

impl NodeId {
    /// Reads a global id; the error is Hasura's message.
    pub fn decode(text: &str) -> Result<NodeId, String> {
        let invalid = |why: &str| format!("invalid node id: {why}");
        let bytes = base64_decode(text).ok_or_else(|| invalid("Error in $: not base64"))?;
        let json: Json =
            serde_json::from_slice(&bytes).map_err(|e| invalid(&format!("Error in $: {e}")))?;
        let Json::Array(items) = json else {
            return Err(invalid(
                "Error in $: parsing node id failed, expected Array",
            ));
        };
        match items.first() {
            None => return Err(invalid("unexpected GUID format, found empty list")),
            Some(Json::Number(n)) if n.as_f64() == Some(1.0) => {}
            Some(Json::Number(n)) => {
                return Err(invalid(&format!("unsupported GUID version: {n}")));
            }
            Some(_) => {
                return Err(invalid(
                    "unexpected GUID format, needs to start with a version number",
                ))
            }
        }
        match &items[1..] {
            [Json::String(schema), Json::String(table), values @ ..] if !values.is_empty() => {
                Ok(NodeId {
                    schema: schema.clone(),
                    table: table.clone(),
                    values: values.to_vec(),
                })
            }
            _ => Err(invalid(
                "GUID version 1: expecting schema name, table name and at least one column value",
            )),
        }
    }

    /// `'schema.table'`, as Hasura's messages name a table.
    pub fn table_name(&self) -> String {
        format!("'{}.{}'", self.schema, self.table)
    }

    /// Checks it has as many values as the table's primary key (`count`).
    pub fn check_count(&self, count: usize) -> Result<(), String> {
        match self.values.len() {
            n if n < count => Err(format!(
                "invalid node id: {} of the primary key's {count} columns are missing",
                count - n
            )),
            n if n > count => Err(format!(
                "invalid node id: unexpected column values {}",
                (self.values[count..].iter())
                    .map(Json::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            _ => Ok(()),
        }
    }
}

/// What a variable holding a global id contributes to a plan's key: its table (the
/// plan's shape); its key values are parameters.
pub fn node_shape(value: Option<&Json>) -> String {
    match value.and_then(Json::as_str).map(NodeId::decode) {
        Some(Ok(id)) => Json::from(vec![id.schema, id.table]).to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hasuras_ids_and_cursors_read() {
        // Hasura's own: `[1, "public", "article", 1]` and `{"id" : 6}`.
        let id = NodeId::decode("WzEsICJwdWJsaWMiLCAiYXJ0aWNsZSIsIDFd").unwrap();
        assert_eq!(
            (id.schema.as_str(), id.table.as_str()),
            ("public", "article")
        );
        assert_eq!(id.values, vec![Json::from(1)]);
        // Pasted with a newline, without padding.
        let id = NodeId::decode("WzEsICJwdWJsaWMiLCAiYXJ0aWNsZSIsIDZd\n").unwrap();
        assert_eq!(id.values, vec![Json::from(6)]);
        let cursor = decode_cursor("eyJpZCIgOiA2fQ").unwrap();
        assert_eq!(cursor_value(&cursor, &["id".into()]), Some(Json::from(6)));
        // A numeric no float holds keeps its digits; nested keys are found.
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let long = r#"{"a" : {"n" : 12345678901234567890.123456789}, "id" : 2.5}"#;
        let cursor = decode_cursor(&b64(long)).unwrap();
        let n = cursor_value(&cursor, &["a".into(), "n".into()]);
        assert_eq!(n, Some(Json::from("12345678901234567890.123456789")));
        assert_eq!(cursor_value(&cursor, &["id".into()]), Some(Json::from(2.5)));
        assert_eq!(cursor_value(&cursor, &["name".into()]), None);
        // Inside an array (a numeric[] key) too.
        let listed = r#"{"ns" : [1, 12345678901234567890.5, null]}"#;
        let cursor = decode_cursor(&b64(listed)).unwrap();
        assert_eq!(
            cursor_value(&cursor, &["ns".into()]),
            Some(serde_json::json!([1, "12345678901234567890.5", null]))
        );
    }

    #[test]
    fn a_bad_id_says_why() {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let cases = [
            ("[]", "found empty list"),
            ("[2, \"public\", \"a\", 1]", "unsupported GUID version: 2"),
            ("[\"x\"]", "needs to start with a version number"),
            ("[1, \"public\", \"a\"]", "at least one column value"),
            ("{}", "expected Array"),
            ("nope", "Error in $"),
        ];
        for (json, why) in cases {
            let e = NodeId::decode(&b64(json)).unwrap_err();
            assert!(
                e.starts_with("invalid node id: ") && e.contains(why),
                "{json}: {e}"
            );
        }
        let id = NodeId::decode(&b64("[1, \"public\", \"a\", 1, 2]")).unwrap();
        assert!(id.check_count(2).is_ok());
        assert!(id
            .check_count(1)
            .unwrap_err()
            .contains("unexpected column values 2"));
        assert!(id.check_count(3).unwrap_err().contains("missing"));
        assert!(decode_cursor(&b64("[1]")).is_none());
        assert!(decode_cursor("%%%").is_none());
    }
}
