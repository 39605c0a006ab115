//! The document stage: parse and validate a request's document once, and keep it
//! with the plans built from it.

use super::{GraphqlRequest, Plan, Planner, PLANS_PER_DOCUMENT};
use crate::error::EngineError;
use crate::limits::shape::{self, Shape};
use apollo_compiler::executable::{Operation, OperationType, Selection};
use apollo_compiler::validation::Valid;
use apollo_compiler::{ast, ExecutableDocument, Name};
use quick_cache::sync::Cache;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// A validated document and the plans built from it.
pub(super) struct DocEntry {
    pub(super) document: Valid<ExecutableDocument>,
    /// Each operation's size, measured once.
    pub(super) shapes: std::collections::HashMap<Option<Name>, Shape>,
    /// Each operation's canonical text, for the allow list (empty when it is off).
    pub(super) normalized: std::collections::HashMap<Option<Name>, String>,
    /// Every variable seen shaping a plan of this document (grows, never shrinks).
    pub(super) shape_vars: Mutex<BTreeSet<String>>,
    pub(super) plans: Cache<String, Arc<Plan>>,
}

impl Planner {
    /// Parses and validates a document.
    pub(super) fn parse(&self, req: &GraphqlRequest) -> Result<Arc<DocEntry>, EngineError> {
        let mut ast = ast::Document::parse(req.query.as_str(), "query.graphql").map_err(|e| {
            EngineError::ParseFailed(e.errors.iter().map(|d| d.to_json()).collect())
        })?;
        // The allow list compares documents as sent, before any leniency.
        let normalized = match self.allowed {
            Some(_) => crate::trusted::normalized(&ast),
            None => Default::default(),
        };
        // Only a document with a string literal can have a string offset.
        if req.query.contains('"') {
            crate::lenient::numeric_offsets(&mut ast, &self.model.args.offset);
        }
        let document = match ast.to_executable_validate(&self.model.schema) {
            Ok(document) => document,
            // Hasura accepts declared-but-unused variables; so do we unless strict.
            Err(e)
                if !self.strict
                    && e.errors
                        .iter()
                        .all(|d| d.error.unstable_error_name() == Some("UnusedVariable")) =>
            {
                Valid::assume_valid(e.partial)
            }
            Err(e) => {
                return Err(EngineError::Validation(
                    e.errors.iter().map(|d| d.to_json()).collect(),
                ))
            }
        };
        Ok(Arc::new(DocEntry {
            shapes: shape::measure(&document),
            normalized,
            document,
            shape_vars: Mutex::new(BTreeSet::new()),
            plans: Cache::new(PLANS_PER_DOCUMENT),
        }))
    }
}

pub(super) fn operation<'a>(
    entry: &'a DocEntry,
    name: Option<&str>,
) -> Result<&'a Operation, EngineError> {
    entry
        .document
        .operations
        .get(name)
        .map(|op| &**op)
        .map_err(|e| EngineError::validation(e.message().to_string()))
}

/// The first root field of `operation` that calls a VOLATILE function (one that may
/// write), looking through fragments.
pub(super) fn volatile_call<'a>(
    model: &grafton_schema::SchemaModel,
    document: &'a ExecutableDocument,
    operation: &'a Operation,
) -> Option<&'a str> {
    let mut pending = vec![&operation.selection_set];
    while let Some(set) = pending.pop() {
        for selection in &set.selections {
            match selection {
                Selection::Field(f) => {
                    use grafton_schema::RootField as R;
                    let volatile = match model.root_fields.get(f.name.as_str()) {
                        Some(R::Function(id) | R::FunctionAggregate(id)) => {
                            model.functions[*id].volatile
                        }
                        _ => false,
                    };
                    if volatile {
                        return Some(f.name.as_str());
                    }
                }
                Selection::InlineFragment(i) => pending.push(&i.selection_set),
                Selection::FragmentSpread(s) => pending.extend(
                    document
                        .fragments
                        .get(&s.fragment_name)
                        .map(|f| &f.selection_set),
                ),
            }
        }
    }
    None
}

/// A root field of the operation that is an action (or, with `remotes`, a
/// remote schema's), if any: a mutation with one is planned as a query is, and
/// refused if it has a database mutation beside it; a query with an action is
/// not run over GET, where a cross-site page could make a browser call its
/// handler with the user's cookies.
pub(super) fn action_root<'a>(
    model: &grafton_schema::SchemaModel,
    document: &'a ExecutableDocument,
    operation: &'a Operation,
    remotes: bool,
) -> Option<&'a str> {
    if model.actions.is_empty() && model.remote_schemas.is_empty() {
        return None;
    }
    let mut pending = vec![&operation.selection_set];
    let mut visited = Vec::new();
    while let Some(set) = pending.pop() {
        for selection in &set.selections {
            match selection {
                Selection::Field(f) => {
                    let name = f.name.as_str();
                    use grafton_schema::{MutationField as M, RootField as R};
                    let action = match operation.operation_type {
                        OperationType::Mutation => match model.mutation_fields.get(name) {
                            Some(M::Action(_)) => true,
                            Some(M::Remote(_)) => remotes,
                            _ => false,
                        },
                        // Over GET, a remote that receives the client's headers
                        // (its cookies) counts as an action does.
                        _ => match model.root_fields.get(name) {
                            Some(R::Action(_)) => true,
                            Some(R::Remote(i)) => {
                                let remote = model.remote_schemas.get(*i);
                                remotes
                                    || remote
                                        .is_some_and(|r| r.config.definition.forward_client_headers)
                            }
                            _ => false,
                        },
                    };
                    if action {
                        return Some(name);
                    }
                }
                other => fragment(other, document, &mut pending, &mut visited),
            }
        }
    }
    None
}

/// A remote relationship field of the operation whose remote is sent the
/// client's headers, if any (refused over GET, as such a remote's root fields
/// are).
pub(super) fn forwarding_join<'a>(
    model: &grafton_schema::SchemaModel,
    document: &'a ExecutableDocument,
    operation: &'a Operation,
) -> Option<&'a str> {
    let forwards = |id: usize| {
        let rel = model.remote_relationships.get(id);
        let remote = rel.and_then(|r| model.remote_schemas.get(r.remote));
        remote.is_some_and(|r| r.config.definition.forward_client_headers)
    };
    // A remote's type's relationship to another remote, likewise.
    let forwards_too = |r: &grafton_schema::RemoteTypeRel| {
        let remote = model.remote_schemas.get(r.remote);
        remote.is_some_and(|r| r.config.definition.forward_client_headers)
    };
    let type_rels: Vec<_> = (model.remote_type_remote_rels.iter())
        .filter(|r| forwards_too(r))
        .collect();
    if !(0..model.remote_relationships.len()).any(forwards) && type_rels.is_empty() {
        return None;
    }
    let mut pending = vec![&operation.selection_set];
    let mut visited = Vec::new();
    while let Some(set) = pending.pop() {
        let table = model.tables.iter().find(|t| t.type_name == set.ty.as_str());
        for selection in &set.selections {
            match selection {
                Selection::Field(f) => {
                    let field = table.and_then(|t| t.fields.get(f.name.as_str()));
                    if let Some(grafton_schema::TableField::Remote(id)) = field {
                        if forwards(*id) {
                            return Some(f.name.as_str());
                        }
                    }
                    let of_type = |r: &&grafton_schema::RemoteTypeRel| {
                        r.object == set.ty.as_str() && r.field == f.name.as_str()
                    };
                    if type_rels.iter().any(of_type) {
                        return Some(f.name.as_str());
                    }
                    pending.push(&f.selection_set);
                }
                other => fragment(other, document, &mut pending, &mut visited),
            }
        }
    }
    None
}

/// Queues the selections of an inline fragment or a fragment spread (each
/// named fragment once).
fn fragment<'a>(
    selection: &'a Selection,
    document: &'a ExecutableDocument,
    pending: &mut Vec<&'a apollo_compiler::executable::SelectionSet>,
    visited: &mut Vec<&'a apollo_compiler::Name>,
) {
    match selection {
        Selection::InlineFragment(i) => pending.push(&i.selection_set),
        Selection::FragmentSpread(s) => {
            if !visited.contains(&&s.fragment_name) {
                visited.push(&s.fragment_name);
                let fragment = document.fragments.get(&s.fragment_name);
                pending.extend(fragment.map(|f| &f.selection_set));
            }
        }
        Selection::Field(_) => {}
    }
}
