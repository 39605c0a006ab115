//! Relationships from a remote's types to tables and to other remotes in its
//! answer: where each is (the key the request kept in place), the object's
//! mapped fields (asked under [`PHANTOM`] aliases and taken out), as holes the
//! engine fills: from the database, one statement per relationship field, or
//! from the other remote, one call per relationship field.

use crate::output::Hole;
use apollo_compiler::executable::{Field, Selection, SelectionSet};
use apollo_compiler::{ExecutableDocument, Node};
use grafton_schema::remote::RemoteIntrospected;
use grafton_schema::{ActionRel, RemoteTypeRel};
use serde_json::{Map, Value};

/// The prefix of the aliases a relationship's mapped fields are asked under.
pub const PHANTOM: &str = "grafton__";

/// The relationships from the remotes' types that Grafton answers.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rels<'a> {
    /// To tables.
    pub tables: &'a [ActionRel],
    /// To other remotes.
    pub remotes: &'a [RemoteTypeRel],
}

impl Rels<'_> {
    /// The fields relationship `object.field` reads (the remote's names), if
    /// it is one.
    pub fn mapped(&self, object: &str, field: &str) -> Option<Vec<&str>> {
        if let Some(r) = (self.tables.iter()).find(|r| r.object == object && r.field == field) {
            return Some(r.mapping.iter().map(|(m, _)| m.as_str()).collect());
        }
        let r = (self.remotes.iter()).find(|r| r.object == object && r.field == field)?;
        Some(r.lhs.iter().map(String::as_str).collect())
    }

    fn is_empty(&self) -> bool {
        self.tables.is_empty() && self.remotes.is_empty()
    }
}

/// The holes of `value` (the answer to `fields`), their mapped fields taken
/// out of it.
pub fn find(
    value: &mut Value,
    fields: &[Node<Field>],
    document: &ExecutableDocument,
    rels: Rels<'_>,
    remote: &RemoteIntrospected,
) -> Vec<Hole> {
    let mut found = Found::default();
    if rels.is_empty() {
        return found.holes;
    }
    for f in fields {
        let cx = Walk {
            document,
            rels,
            remote,
        };
        walk(value, &f.selection_set, &cx, "", &mut found);
    }
    found.holes
}

/// What every step of a walk reads.
struct Walk<'a> {
    document: &'a ExecutableDocument,
    rels: Rels<'a>,
    remote: &'a RemoteIntrospected,
}

/// The holes found, and their places (each once).
#[derive(Default)]
struct Found {
    holes: Vec<Hole>,
    at: std::collections::HashSet<String>,
}

fn walk(value: &mut Value, set: &SelectionSet, cx: &Walk<'_>, pointer: &str, out: &mut Found) {
    let (document, rels) = (cx.document, cx.rels);
    match value {
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                walk(v, set, cx, &format!("{pointer}/{i}"), out);
            }
        }
        Value::Object(object) => {
            let mut fields = Vec::new();
            typed(set, document, &mut fields, &mut Vec::new());
            let mut phantoms: Vec<String> = Vec::new();
            for (ty, f) in &fields {
                let key = f.response_key().as_str();
                let at = format!("{pointer}/{key}");
                let Some(mapped) = rels.mapped(ty, f.name.as_str()) else {
                    if let Some(v) = object.get_mut(key) {
                        if !f.selection_set.selections.is_empty() {
                            walk(v, &f.selection_set, cx, &at, out);
                        }
                    }
                    continue;
                };
                let names: Vec<String> = (mapped.iter()).map(|m| format!("{PHANTOM}{m}")).collect();
                // The key kept in place answered the object's type: only an
                // object of the relationship's own type has it.
                let of_type = (object.get(key).and_then(Value::as_str))
                    .is_some_and(|t| cx.remote.served_type(t) == *ty);
                let source: Option<Map<String, Value>> = (mapped.iter().zip(&names))
                    .map(|(m, n)| Some(((*m).to_owned(), object.get(n)?.clone())))
                    .collect();
                phantoms.extend(names);
                if let Some(source) = source.filter(|_| of_type) {
                    if out.at.insert(at.clone()) {
                        // The fields of this key that are this relationship
                        // (another type's fragment may alias another field).
                        let same = |(t, g): &&(&str, &Node<Field>)| {
                            g.response_key() == key && t == ty && g.name == f.name
                        };
                        out.holes.push(Hole {
                            pointer: at,
                            object: (*ty).to_owned(),
                            field: f.name.to_string(),
                            fields: fields
                                .iter()
                                .filter(same)
                                .map(|(_, g)| (*g).clone())
                                .collect(),
                            source,
                        });
                    }
                }
            }
            for p in phantoms {
                object.remove(&p);
            }
        }
        _ => {}
    }
}

/// The fields of `set` with the type each is selected on (a fragment's type
/// condition, else the set's), fragments spread (each named one once).
pub(crate) fn typed<'a>(
    set: &'a SelectionSet,
    document: &'a ExecutableDocument,
    out: &mut Vec<(&'a str, &'a Node<Field>)>,
    seen: &mut Vec<&'a str>,
) {
    for s in &set.selections {
        match s {
            Selection::Field(f) => out.push((set.ty.as_str(), f)),
            Selection::InlineFragment(i) => typed(&i.selection_set, document, out, seen),
            Selection::FragmentSpread(spread) => {
                let name = spread.fragment_name.as_str();
                if seen.contains(&name) {
                    continue;
                }
                seen.push(name);
                if let Some(fragment) = document.fragments.get(name) {
                    typed(&fragment.selection_set, document, out, seen);
                }
            }
        }
    }
}
