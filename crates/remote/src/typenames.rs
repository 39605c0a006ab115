//! A remote's answer named as served: its `__typename`s, the remote's type
//! names, renamed by the customization.

use apollo_compiler::executable::{Field, SelectionSet};
use apollo_compiler::{ExecutableDocument, Node};
use grafton_schema::remote::RemoteIntrospected;
use serde_json::Value;

/// Renames the remote's `__typename`s in `value` (the answer to `set`) to the
/// names served: each response key of an object once, whatever number of
/// fragments select it.
pub(crate) fn served(
    value: &mut Value,
    set: &SelectionSet,
    remote: &RemoteIntrospected,
    document: &ExecutableDocument,
) {
    match value {
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| served(v, set, remote, document)),
        Value::Object(object) => {
            let mut fields = Vec::new();
            collect(set, document, &mut fields, &mut Vec::new());
            let mut done: Vec<&str> = Vec::new();
            for f in &fields {
                let key = f.response_key().as_str();
                let Some(v) = object.get_mut(key) else {
                    continue;
                };
                if f.name == "__typename" {
                    if !done.contains(&key) {
                        done.push(key);
                        if let Some(name) = v.as_str() {
                            *v = Value::String(remote.served_type(name));
                        }
                    }
                } else if !f.selection_set.selections.is_empty() {
                    served(v, &f.selection_set, remote, document);
                }
            }
        }
        _ => {}
    }
}

/// The fields of `set`, fragments spread (each fragment once).
pub(crate) fn collect<'a>(
    set: &'a SelectionSet,
    document: &'a ExecutableDocument,
    out: &mut Vec<&'a Node<Field>>,
    seen: &mut Vec<&'a str>,
) {
    let mut typed = Vec::new();
    crate::holes::typed(set, document, &mut typed, seen);
    out.extend(typed.into_iter().map(|(_, f)| f));
}
