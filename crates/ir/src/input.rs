//! Reading argument values that may come from the document or from variables.

use apollo_compiler::ast;
use serde_json::{Map, Value as Json};
use std::collections::BTreeSet;

/// An input value: as written in the document, or taken from a variable.
#[derive(Clone, Copy)]
pub(crate) enum Input<'a> {
    Ast(&'a ast::Value),
    Json(&'a Json),
}

/// Variable values plus the record of which ones shaped the plan.
pub(crate) struct Vars<'a> {
    pub(crate) values: &'a Map<String, Json>,
    pub(crate) shape: BTreeSet<String>,
}

impl<'a> Vars<'a> {
    /// Resolves a value used structurally: a variable is inlined (and recorded as
    /// shaping the plan); null and absent variables give `None`.
    pub(crate) fn deref(&mut self, input: Input<'a>) -> Option<Input<'a>> {
        match input {
            Input::Ast(ast::Value::Variable(name)) => {
                self.shape.insert(name.to_string());
                match self.values.get(name.as_str()) {
                    None | Some(Json::Null) => None,
                    Some(v) => Some(Input::Json(v)),
                }
            }
            Input::Ast(ast::Value::Null) | Input::Json(Json::Null) => None,
            other => Some(other),
        }
    }

    /// The fields of an input object, in document order.
    pub(crate) fn object(&mut self, input: Input<'a>) -> Vec<(&'a str, Input<'a>)> {
        match self.deref(input) {
            Some(Input::Ast(ast::Value::Object(fields))) => fields
                .iter()
                .map(|(k, v)| (k.as_str(), Input::Ast(v)))
                .collect(),
            Some(Input::Json(Json::Object(map))) => map
                .iter()
                .map(|(k, v)| (k.as_str(), Input::Json(v)))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The items of a list; a single value counts as a list of one (input coercion).
    pub(crate) fn list(&mut self, input: Input<'a>) -> Vec<Input<'a>> {
        match self.deref(input) {
            Some(Input::Ast(ast::Value::List(items))) => {
                items.iter().map(|v| Input::Ast(v)).collect()
            }
            Some(Input::Json(Json::Array(items))) => items.iter().map(Input::Json).collect(),
            Some(other) => vec![other],
            None => Vec::new(),
        }
    }

    /// An enum value's name.
    pub(crate) fn enum_name(&mut self, input: Input<'a>) -> Option<&'a str> {
        match self.deref(input)? {
            Input::Ast(ast::Value::Enum(name)) => Some(name.as_str()),
            Input::Ast(ast::Value::String(s)) => Some(s.as_str()),
            Input::Json(Json::String(s)) => Some(s.as_str()),
            _ => None,
        }
    }

    /// A boolean used structurally (`distinct:`, `@include(if:)`).
    pub(crate) fn boolean(&mut self, input: Input<'a>) -> Option<bool> {
        match self.deref(input)? {
            Input::Ast(ast::Value::Boolean(b)) => Some(*b),
            Input::Json(Json::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    /// A leaf value for a bind parameter. A variable stays a variable; an absent one
    /// makes the field absent (`None`), as the GraphQL spec says.
    pub(crate) fn leaf(&mut self, input: Input<'a>) -> Option<grafton_sql::ParamValue> {
        match input {
            Input::Ast(ast::Value::Variable(name)) => {
                if self.values.contains_key(name.as_str()) {
                    Some(grafton_sql::ParamValue::Variable(name.to_string()))
                } else {
                    None
                }
            }
            Input::Ast(v) => Some(grafton_sql::ParamValue::Literal(self.json_of(v))),
            Input::Json(v) => Some(grafton_sql::ParamValue::Literal(v.clone())),
        }
    }

    /// Converts a document value to JSON, inlining (and recording) any variables in it.
    pub(crate) fn json_of(&mut self, v: &ast::Value) -> Json {
        match v {
            ast::Value::Null => Json::Null,
            ast::Value::Enum(n) => Json::String(n.to_string()),
            ast::Value::Variable(n) => {
                self.shape.insert(n.to_string());
                self.values.get(n.as_str()).cloned().unwrap_or(Json::Null)
            }
            ast::Value::String(s) => Json::String(s.clone()),
            ast::Value::Float(f) => f
                .try_to_f64()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Json::Number)
                .unwrap_or(Json::Null),
            ast::Value::Int(i) => match i.as_str().parse::<i64>() {
                Ok(n) => Json::from(n),
                Err(_) => i
                    .try_to_f64()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(Json::Number)
                    .unwrap_or(Json::Null),
            },
            ast::Value::Boolean(b) => Json::Bool(*b),
            ast::Value::List(items) => Json::Array(items.iter().map(|i| self.json_of(i)).collect()),
            ast::Value::Object(fields) => Json::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.to_string(), self.json_of(v)))
                    .collect(),
            ),
        }
    }
}
