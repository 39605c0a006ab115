//! The GraphQL request object: its shape checked as GraphQL over HTTP says, and
//! Apollo's persisted-query extension read.

use crate::engine::GraphqlRequest;
use crate::error::RequestError;
use serde_json::{Map, Value};

/// Checks the request object's shape (GraphQL over HTTP §"Request Parameters").
pub(crate) fn parse_request(value: Value) -> Result<GraphqlRequest, RequestError> {
    let Value::Object(mut object) = value else {
        return Err(RequestError::BadRequest(
            "the request body must be a JSON object".into(),
        ));
    };
    let persisted_hash = persisted_hash(object.get("extensions"))?;
    let query = match object.remove("query") {
        Some(Value::String(q)) => q,
        Some(_) => return Err(RequestError::BadRequest("'query' must be a string".into())),
        // A persisted query may come as its hash alone.
        None if persisted_hash.is_some() => String::new(),
        None => {
            return Err(RequestError::BadRequest(
                "the request has no 'query'".into(),
            ))
        }
    };
    let operation_name = match object.remove("operationName") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => {
            return Err(RequestError::BadRequest(
                "'operationName' must be a string".into(),
            ))
        }
    };
    let variables = match object.remove("variables") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => {
            return Err(RequestError::BadRequest(
                "'variables' must be an object".into(),
            ))
        }
    };
    match object.remove("extensions") {
        None | Some(Value::Null) | Some(Value::Object(_)) => {}
        Some(_) => {
            return Err(RequestError::BadRequest(
                "'extensions' must be an object".into(),
            ))
        }
    }
    Ok(GraphqlRequest {
        query,
        operation_name,
        variables,
        persisted_hash,
    })
}

/// Apollo's `extensions.persistedQuery`: `{version: 1, sha256Hash: "…"}`.
fn persisted_hash(extensions: Option<&Value>) -> Result<Option<String>, RequestError> {
    let Some(pq) = extensions.and_then(|e| e.get("persistedQuery")) else {
        return Ok(None);
    };
    if pq.get("version").and_then(Value::as_u64) != Some(1) {
        return Err(RequestError::BadRequest(
            "unsupported persisted query version: only version 1 is".into(),
        ));
    }
    match pq.get("sha256Hash").and_then(Value::as_str) {
        Some(hash) if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Ok(Some(hash.to_owned()))
        }
        _ => Err(RequestError::BadRequest(
            "persistedQuery.sha256Hash must be a SHA-256 in hex".into(),
        )),
    }
}
