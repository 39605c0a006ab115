//! Relationships from a remote's types to tables in its answer: where each is
//! (the key the request kept in place), the row's mapped fields (asked under
//! [`PHANTOM`] aliases and taken out), as holes the engine fills from the
//! database, one statement per relationship field.

use crate::output::Hole;
use apollo_compiler::executable::{Field, Selection, SelectionSet};
use apollo_compiler::{ExecutableDocument, Node};
use grafton_schema::remote::RemoteIntrospected;
use grafton_schema::ActionRel;
use serde_json::{Map, Value};

/// The prefix of the aliases a relationship's mapped fields are asked under.
pub const PHANTOM: &str = "grafton__";

/// The holes of `value` (the answer to `fields`), their mapped fields taken
/// out of it.
pub fn find(
    value: &mut Value,
    fields: &[Node<Field>],
    document: &ExecutableDocument,
    rels: &[ActionRel],
    remote: &RemoteIntrospected,
) -> Vec<Hole> {
    let mut out = Vec::new();
    if rels.is_empty() {
        return out;
    }
    for f in fields {
        let cx = Walk {
            document,
            rels,
            remote,
        };
        walk(value, &f.selection_set, &cx, "", &mut out);
    }
    out
}

/// What every step of a walk reads.
struct Walk<'a> {
    document: &'a ExecutableDocument,
    rels: &'a [ActionRel],
    remote: &'a RemoteIntrospected,
}

fn walk(value: &mut Value, set: &SelectionSet, cx: &Walk<'_>, pointer: &str, out: &mut Vec<Hole>) {
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
                let rel = rels
                    .iter()
                    .find(|r| r.object == *ty && r.field == f.name.as_str());
                let Some(rel) = rel else {
                    if let Some(v) = object.get_mut(key) {
                        if !f.selection_set.selections.is_empty() {
                            walk(v, &f.selection_set, cx, &at, out);
                        }
                    }
                    continue;
                };
                let names: Vec<String> = (rel.mapping.iter())
                    .map(|(m, _)| format!("{PHANTOM}{m}"))
                    .collect();
                // The key kept in place answered the object's type: only an
                // object of the relationship's own type has it.
                let of_type = (object.get(key).and_then(Value::as_str))
                    .is_some_and(|t| cx.remote.served_type(t) == rel.object);
                let source: Option<Map<String, Value>> = (rel.mapping.iter().zip(&names))
                    .map(|((m, _), n)| Some((m.clone(), object.get(n)?.clone())))
                    .collect();
                phantoms.extend(names);
                if let Some(source) = source.filter(|_| of_type) {
                    if !out.iter().any(|h| h.pointer == at) {
                        let same = |(_, g): &&(&str, &Node<Field>)| g.response_key() == key;
                        out.push(Hole {
                            pointer: at,
                            object: rel.object.clone(),
                            field: rel.field.clone(),
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
