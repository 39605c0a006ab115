//! Root fields answered apart from the database (introspection from the schema,
//! actions by their handlers), merged with the database's answer.

use super::document::operation;
use super::plan::Source;
use super::{Planner, Prepared};
use crate::error::EngineError;
use crate::limits::LimitKind;
use apollo_compiler::introspection;
use apollo_compiler::response::{GraphQLError, JsonMap};
use serde_json::{Map, Value};

/// What root fields answered apart from the database and introspection gave:
/// actions' and remote schemas' answers by response key, the remotes' errors,
/// and whether a non-null one came back null (then `data` is null).
#[derive(Debug, Default)]
pub(crate) struct Outside {
    pub(crate) answers: Map<String, Value>,
    pub(crate) errors: Vec<Value>,
    pub(crate) null_data: bool,
    /// A limit an answer went over: the request fails with it.
    pub(crate) refused: Option<EngineError>,
}

impl Planner {
    /// Introspection fields are answered by apollo-compiler from the schema and
    /// action fields by their handlers (`actions`, by response key); both are
    /// merged, in document order, with whatever the database returned.
    pub(crate) fn merge_roots(
        &self,
        prepared: &Prepared,
        db_json: Option<String>,
        outside: Outside,
    ) -> Result<String, EngineError> {
        let Outside {
            answers: mut actions,
            errors: outside_errors,
            null_data,
            refused,
        } = outside;
        if let Some(e) = refused {
            return Err(e);
        }
        let (root_keys, introspects) = match &prepared.action {
            super::Action::Plan(plan) => (plan.roots.as_slice(), plan.has_introspection),
            super::Action::Mutation(_) => (&[][..], false),
        };
        let max = self.limits.max_response_bytes;
        let (intro, errors) = match introspects {
            true => self.introspect(prepared)?,
            false => (Default::default(), Vec::new()),
        };
        let mut db: Map<String, Value> = match db_json {
            Some(text) => serde_json::from_str(&text).map_err(|e| {
                EngineError::Execute(grafton_execute::ExecuteError::Config(format!(
                    "database returned invalid JSON: {e}"
                )))
            })?,
            None => Map::new(),
        };
        let mut data = Map::new();
        for (key, source) in root_keys {
            let value = match source {
                Source::Introspection => intro
                    .get(key.as_str())
                    .map(|v| serde_json::to_value(v).unwrap_or(Value::Null))
                    .unwrap_or(Value::Null),
                Source::Action(_) | Source::Remote(_) => actions.remove(key).unwrap_or(Value::Null),
                Source::Database => db.remove(key).unwrap_or(Value::Null),
            };
            data.insert(key.clone(), value);
        }
        let mut body = Map::new();
        // A non-null root field that came back null makes the whole data null.
        let data = match null_data {
            true => Value::Null,
            false => Value::Object(data),
        };
        body.insert("data".into(), data);
        let mut errors: Vec<Value> = (errors.iter())
            .map(|e| serde_json::to_value(e).unwrap_or(Value::Null))
            .collect();
        errors.extend(outside_errors);
        if !errors.is_empty() {
            body.insert("errors".into(), Value::Array(errors));
        }
        let body = Value::Object(body).to_string();
        crate::limits::check(LimitKind::ResponseBytes, Some(max), body.len() as u64)?;
        Ok(body)
    }

    /// The introspection root fields' answer, within the response size.
    fn introspect(&self, prepared: &Prepared) -> Result<(JsonMap, Vec<GraphQLError>), EngineError> {
        let document = &prepared.entry.document;
        let operation = operation(&prepared.entry, prepared.operation_name.as_deref())?;
        introspection::check_max_depth(document, operation)
            .map_err(|e| EngineError::validation(e.message().to_string()))?;
        let roots = prepared
            .entry
            .shapes
            .get(&operation.name)
            .map_or(1, |s| s.introspection_roots);
        let each = *self
            .introspection_size
            .get_or_init(|| crate::limits::introspection::full_size(&self.model.schema));
        let max = self.limits.max_response_bytes;
        crate::limits::check(
            LimitKind::Introspection,
            Some(max),
            roots.saturating_mul(each),
        )?;
        let response = introspection::partial_execute(
            &self.model.schema,
            &self.implementers,
            document,
            operation,
            &prepared.coerced,
        )
        .map_err(|e| EngineError::validation(e.message().to_string()))?;
        Ok((response.data.unwrap_or_default(), response.errors))
    }
}
