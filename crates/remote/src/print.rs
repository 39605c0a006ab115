//! A remote's part of a request written in the remote's own names: each field
//! under its response key as alias, its arguments as the client wrote them (and
//! a role's presets), fragments inlined with their type conditions renamed,
//! only `@skip` and `@include` kept; and the variables it uses.

use apollo_compiler::ast::{self, Type};
use apollo_compiler::executable::{Field, Selection, SelectionSet};
use apollo_compiler::ExecutableDocument;
use grafton_schema::remote::{PresetValue, RemoteIntrospected};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::fmt::Write;

/// The longest document sent to a remote: fragments are inlined, and nested
/// spreads could otherwise multiply a small request's size.
pub const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// Writes a remote's part of a request in its own names.
pub(crate) struct Printer<'a> {
    pub(crate) remote: &'a RemoteIntrospected,
    pub(crate) document: &'a ExecutableDocument,
    /// The caller's session, for presets that read it.
    pub(crate) session: &'a Map<String, Value>,
    /// The request's coerced variables (those holding an input object with a
    /// preset are written into the document).
    pub(crate) variables: &'a Map<String, Value>,
    pub(crate) used: BTreeSet<String>,
    pub(crate) out: String,
    /// Why the part cannot be sent (a preset's session variable missing).
    pub(crate) error: Option<String>,
    /// Relationships from the remote's types: never sent, their mapped
    /// fields asked instead (see [`crate::holes`]).
    pub(crate) rels: crate::holes::Rels<'a>,
}

impl<'a> Printer<'a> {
    /// A printer of `remote`'s part of `document`, presets read from `session`.
    pub(crate) fn new(
        remote: &'a RemoteIntrospected,
        document: &'a ExecutableDocument,
        session: &'a Map<String, Value>,
        variables: &'a Map<String, Value>,
        rels: crate::holes::Rels<'a>,
    ) -> Self {
        Self {
            remote,
            document,
            session,
            variables,
            used: BTreeSet::new(),
            out: String::new(),
            error: None,
            rels,
        }
    }

    pub(crate) fn value(&mut self, v: &ast::Value) {
        let mut out = std::mem::take(&mut self.out);
        self.verbatim(v, &mut out);
        self.out = out;
    }

    /// Writes `v` as the client wrote it to `out`, its variables passed on.
    pub(crate) fn verbatim(&mut self, v: &ast::Value, out: &mut String) {
        collect_variables(v, &mut self.used);
        let _ = write!(out, "{}", v.serialize().no_indent());
    }

    fn directives(&mut self, directives: &ast::DirectiveList) {
        // Only `@skip` and `@include` mean anything to the remote.
        for d in directives.iter() {
            if d.name == "skip" || d.name == "include" {
                let _ = write!(self.out, " @{}(", d.name);
                for (i, a) in d.arguments.iter().enumerate() {
                    let sep = if i > 0 { ", " } else { "" };
                    let _ = write!(self.out, "{sep}{}: ", a.name);
                    self.value(&a.value);
                }
                self.out.push(')');
            }
        }
    }

    pub(crate) fn field(&mut self, key: &str, parent: &str, f: &Field) {
        if key.starts_with(crate::holes::PHANTOM) {
            self.error = Some(format!(
                "the alias '{key}' starts with '{}', which Grafton keeps for itself",
                crate::holes::PHANTOM
            ));
            return;
        }
        if let Some(mapped) = self.rels.mapped(parent, f.name.as_str()) {
            // The key kept in its place (a `__typename` the rows replace),
            // and the fields the rows are found by.
            let _ = write!(self.out, "{key}: __typename");
            for field in mapped {
                let _ = write!(self.out, " {}{field}: {field}", crate::holes::PHANTOM);
            }
            return;
        }
        let name = self.remote.remote_field(parent, f.name.as_str()).to_owned();
        let _ = write!(self.out, "{key}: {name}");
        let presets = (self.remote.presets)
            .get(&(parent.to_owned(), f.name.to_string()))
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut args = self.arguments(parent, f.name.as_str(), &f.arguments);
        // The role's presets: never the client's (they are not in its schema).
        for p in presets {
            match self.preset(&p.value) {
                Ok(v) => args.push(format!("{}: {v}", p.arg)),
                Err(e) => self.error = Some(e),
            }
        }
        if !args.is_empty() {
            let _ = write!(self.out, "({})", args.join(", "));
        }
        self.directives(&f.directives);
        if !f.selection_set.selections.is_empty() {
            self.set(&f.selection_set);
        }
    }

    pub(crate) fn set(&mut self, set: &SelectionSet) {
        // Past the cap, nothing more is written (the call is refused).
        if self.out.len() > MAX_DOCUMENT_BYTES {
            return;
        }
        let parent = set.ty.as_str();
        self.out.push_str(" {");
        for s in &set.selections {
            self.out.push(' ');
            match s {
                Selection::Field(f) => self.field(f.response_key().as_str(), parent, f),
                Selection::InlineFragment(i) => {
                    self.out.push_str("...");
                    if let Some(t) = &i.type_condition {
                        let _ = write!(self.out, " on {}", self.remote.remote_type(t.as_str()));
                    }
                    self.directives(&i.directives);
                    self.set(&i.selection_set);
                }
                Selection::FragmentSpread(spread) => {
                    let Some(fragment) = self.document.fragments.get(&spread.fragment_name) else {
                        continue;
                    };
                    let on = self.remote.remote_type(fragment.type_condition().as_str());
                    let _ = write!(self.out, "... on {on}");
                    self.directives(&spread.directives);
                    self.set(&fragment.selection_set);
                }
            }
        }
        self.out.push_str(" }");
    }
}

impl Printer<'_> {
    /// A preset's value as a GraphQL literal: as written, or the session's
    /// variable written as the argument's type.
    pub(crate) fn preset(&self, value: &PresetValue) -> Result<String, String> {
        let (var, kind) = match value {
            PresetValue::Literal(text) => return Ok(text.clone()),
            PresetValue::Session { var, kind } => (var, kind.as_str()),
        };
        let Some(v) = self.session.get(var) else {
            return Err(format!(
                "\"{var}\" session variable expected, but not found"
            ));
        };
        let text = match v {
            Value::String(t) => t.clone(),
            other => other.to_string(),
        };
        let bad = || format!("\"{text}\" cannot be coerced into a {kind} value");
        Ok(match kind {
            "Int" => text.trim().parse::<i32>().map_err(|_| bad())?.to_string(),
            "Float" => {
                let f = text.trim().parse::<f64>().map_err(|_| bad())?;
                serde_json::Number::from_f64(f).ok_or_else(bad)?.to_string()
            }
            "Boolean" => match text.trim() {
                "true" | "false" => text.trim().to_owned(),
                _ => return Err(bad()),
            },
            // An enum value is a name, never `null`, `true` or `false`.
            "Enum" => match text.trim() {
                "null" | "true" | "false" => return Err(bad()),
                name => crate::names::checked_name(name)
                    .map_err(|_| bad())?
                    .to_owned(),
            },
            _ => serde_json::to_string(&text).map_err(|_| bad())?,
        })
    }
}

fn collect_variables(v: &ast::Value, used: &mut BTreeSet<String>) {
    match v {
        ast::Value::Variable(name) => {
            used.insert(name.to_string());
        }
        ast::Value::List(items) => items.iter().for_each(|i| collect_variables(i, used)),
        ast::Value::Object(fields) => fields.iter().for_each(|(_, v)| collect_variables(v, used)),
        _ => {}
    }
}

/// `ty` in the remote's names.
pub(crate) fn remote_type(ty: &Type, remote: &RemoteIntrospected) -> String {
    match ty {
        Type::Named(n) => remote.remote_type(n.as_str()).to_owned(),
        Type::NonNullNamed(n) => format!("{}!", remote.remote_type(n.as_str())),
        Type::List(inner) => format!("[{}]", remote_type(inner, remote)),
        Type::NonNullList(inner) => format!("[{}]!", remote_type(inner, remote)),
    }
}
