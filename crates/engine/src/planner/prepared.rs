//! What the planner hands back: a request checked as written, then prepared (its
//! plan and coerced variables).

use super::document::{operation, DocEntry};
use super::Action;
use crate::limits::shape::Shape;
use apollo_compiler::executable::OperationType;
use apollo_compiler::response::JsonMap;
use apollo_compiler::validation::Valid;
use apollo_compiler::Name;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A request whose document passed the checks on it as written (see
/// [`Planner::check`]).
pub struct Checked {
    pub(super) entry: Arc<DocEntry>,
    /// The operation's size as written.
    pub shape: Shape,
}

impl Checked {
    /// The operation's type (`query`, `mutation`, `subscription`) and name.
    pub fn operation(&self, operation_name: Option<&str>) -> (&'static str, Option<Name>) {
        match operation(&self.entry, operation_name) {
            Ok(op) => {
                let kind = match op.operation_type {
                    OperationType::Query => "query",
                    OperationType::Mutation => "mutation",
                    OperationType::Subscription => "subscription",
                };
                (kind, op.name.clone())
            }
            Err(_) => ("", None),
        }
    }
}

/// A request ready to execute: its plan and its coerced variables.
pub struct Prepared {
    pub(super) entry: Arc<DocEntry>,
    pub(super) operation_name: Option<String>,
    pub(super) coerced: Valid<JsonMap>,
    /// Coerced variable values, bound by the statement's parameters.
    pub variables: Map<String, Value>,
    /// What it does.
    pub action: Action,
    /// The cost estimate for these variables (0 for a mutation).
    pub cost: u64,
    /// The operation's size as written.
    pub shape: Shape,
}

impl Prepared {
    /// The request's document.
    pub(crate) fn document(&self) -> &apollo_compiler::ExecutableDocument {
        &self.entry.document
    }

    /// The operation run.
    pub(crate) fn operation(&self) -> Option<&apollo_compiler::executable::Operation> {
        let name = self.operation_name.as_deref();
        self.entry
            .document
            .operations
            .get(name)
            .ok()
            .map(|op| &**op)
    }
}
