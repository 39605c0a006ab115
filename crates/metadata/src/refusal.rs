//! A metadata command's refusal in Hasura's terms: its `code`, message and the
//! JSON path of what is wrong (`$.args.table`). The transport picks the status.

use serde_json::{json, Value};

/// Why a metadata command was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {error}")]
pub struct Refusal {
    /// Hasura's error code (`already-tracked`, `not-exists`, `conflict`, …).
    pub code: &'static str,
    /// What is wrong, in Hasura's words where Hasura has them.
    pub error: String,
    /// Where in the request (`$`, `$.args`, `$.args[2].args.table`).
    pub path: String,
    /// The objects behind an `invalid-configuration` refusal.
    pub internal: Option<Box<Value>>,
    /// The server failed (the store could not be read or written), not the request.
    pub server_fault: bool,
}

impl Refusal {
    /// A refusal of the thing at `path`.
    pub fn new(code: &'static str, error: impl Into<String>, path: &str) -> Self {
        Self {
            code,
            error: error.into(),
            path: path.to_owned(),
            internal: None,
            server_fault: false,
        }
    }

    /// The request's args did not parse as the command's.
    pub fn parse(error: impl Into<String>) -> Self {
        Self::new("parse-failed", error, "$.args")
    }

    /// The same refusal, for the command at `prefix` (an element of a bulk).
    pub fn within(mut self, prefix: &str) -> Self {
        self.path = format!("{prefix}{}", self.path.trim_start_matches('$'));
        self
    }

    /// Hasura's error body.
    pub fn body(&self) -> Value {
        let mut body = json!({ "code": self.code, "error": self.error, "path": self.path });
        if let Some(internal) = &self.internal {
            body["internal"] = (**internal).clone();
        }
        body
    }
}
