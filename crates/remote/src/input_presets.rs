//! Presets on input object fields (`input Range { low: Int @preset(value: 0) }`
//! in a role's permission SDL), as Hasura applies them: the field is not in the
//! role's schema, and every value of its type that a call carries gets it,
//! wherever the value sits (an argument, a list, a field of another input
//! object). A variable whose value holds such an object is written into the
//! document as a literal with the presets added (Hasura's "variable
//! expansion"); other variables are passed on as they are. An argument the
//! client leaves out gets nothing: a permission that must always apply puts
//! its preset on the argument, or makes the argument required.

use crate::print::Printer;
use apollo_compiler::ast::{self, Type};
use apollo_compiler::executable::Argument;
use apollo_compiler::schema::ExtendedType;
use apollo_compiler::{Node, Schema};
use grafton_schema::remote::{InputPresets, Preset};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// What rewriting needs, from the role's validated schema (served names) and
/// its presets by input type.
pub(crate) fn plan(schema: &Schema, presets: BTreeMap<String, Vec<Preset>>) -> InputPresets {
    let inputs: BTreeMap<&str, _> = (schema.types.iter())
        .filter_map(|(name, t)| match t {
            ExtendedType::InputObject(i) => Some((name.as_str(), i)),
            _ => None,
        })
        .collect();
    let mut rewritten: BTreeSet<String> = (presets.keys())
        .filter(|k| inputs.contains_key(k.as_str()))
        .cloned()
        .collect();
    // Every input type that holds a rewritten one, however deep.
    loop {
        let before = rewritten.len();
        for (name, i) in &inputs {
            let holds =
                (i.fields.values()).any(|f| rewritten.contains(f.ty.inner_named_type().as_str()));
            if holds {
                rewritten.insert((*name).to_owned());
            }
        }
        if rewritten.len() == before {
            break;
        }
    }
    // The input types inside them too: a variable's or a row's value is
    // written whole, each field as its type says (an enum's value a name).
    let mut written = rewritten.clone();
    loop {
        let before = written.len();
        for name in written.clone() {
            for f in inputs[name.as_str()].fields.values() {
                let inner = f.ty.inner_named_type().as_str();
                if inputs.contains_key(inner) {
                    written.insert(inner.to_owned());
                }
            }
        }
        if written.len() == before {
            break;
        }
    }
    let mut out = InputPresets::default();
    for name in &written {
        let fields = &inputs[name.as_str()].fields;
        let mut types = BTreeMap::new();
        for (field, f) in fields {
            let inner = f.ty.inner_named_type();
            if matches!(schema.types.get(inner), Some(ExtendedType::Enum(_))) {
                out.enums.insert(inner.to_string());
            }
            types.insert(field.to_string(), (*f.ty).clone());
        }
        out.types.insert(name.clone(), types);
    }
    for (name, t) in &schema.types {
        let fields = match t {
            ExtendedType::Object(o) => &o.fields,
            ExtendedType::Interface(i) => &i.fields,
            _ => continue,
        };
        for (field, f) in fields {
            let args: BTreeMap<String, Type> = (f.arguments.iter())
                .filter(|a| rewritten.contains(a.ty.inner_named_type().as_str()))
                .map(|a| (a.name.to_string(), (*a.ty).clone()))
                .collect();
            if !args.is_empty() {
                out.args.insert((name.to_string(), field.to_string()), args);
            }
        }
    }
    out.presets = (presets.into_iter())
        .filter(|(k, _)| rewritten.contains(k))
        .collect();
    out
}

/// `ty`'s named type when its values are rewritten.
fn rewritten<'t>(presets: &InputPresets, ty: &'t Type) -> Option<&'t str> {
    let name = ty.inner_named_type().as_str();
    presets.types.contains_key(name).then_some(name)
}

impl Printer<'_> {
    /// Field `parent.field`'s arguments as `name: value`, each value as the
    /// client wrote it, or rewritten with the presets of the input objects in
    /// it (left out when it is a variable the request does not give).
    pub(crate) fn arguments(
        &mut self,
        parent: &str,
        field: &str,
        arguments: &[Node<Argument>],
    ) -> Vec<String> {
        let remote = self.remote;
        let types = (remote.input_presets.args).get(&(parent.to_owned(), field.to_owned()));
        let mut out = Vec::new();
        for a in arguments {
            let mut text = format!("{}: ", a.name);
            match types.and_then(|t| t.get(a.name.as_str())) {
                Some(ty) => {
                    if !self.ast(&a.value, ty, &mut text) {
                        continue;
                    }
                }
                None => self.verbatim(&a.value, &mut text),
            }
            out.push(text);
        }
        out
    }

    /// Writes the client's `v`, of type `ty`; false when `v` is a variable the
    /// request does not give (nothing written).
    fn ast(&mut self, v: &ast::Value, ty: &Type, out: &mut String) -> bool {
        let remote = self.remote;
        let Some(named) = rewritten(&remote.input_presets, ty) else {
            self.verbatim(v, out);
            return true;
        };
        match (v, ty) {
            (ast::Value::Variable(name), _) => match self.variables.get(name.as_str()) {
                Some(value) => self.json(value, ty, out),
                None => return false,
            },
            (ast::Value::List(items), Type::List(inner) | Type::NonNullList(inner)) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    if !self.ast(item, inner, out) {
                        out.push_str("null");
                    }
                }
                out.push(']');
            }
            // One value where a list is taken is a list of one.
            (_, Type::List(inner) | Type::NonNullList(inner)) => return self.ast(v, inner, out),
            (ast::Value::Object(fields), _) => {
                let types = &remote.input_presets.types[named];
                let presets = remote.input_presets.presets.get(named);
                out.push('{');
                let mut first = true;
                for (name, value) in fields {
                    let Some(field_ty) = types.get(name.as_str()) else {
                        self.error = Some(format!("\"{name}\" is not a field of \"{named}\""));
                        continue;
                    };
                    if presets.is_some_and(|p| p.iter().any(|p| p.arg == name.as_str())) {
                        continue;
                    }
                    let mut text = format!("{}{name}: ", if first { "" } else { ", " });
                    if self.ast(value, field_ty, &mut text) {
                        out.push_str(&text);
                        first = false;
                    }
                }
                self.presets(presets, first, out);
                out.push('}');
            }
            _ => self.verbatim(v, out),
        }
        true
    }

    /// Writes a variable's or a row's JSON `value`, of type `ty`, as a literal.
    pub(crate) fn json(&mut self, value: &Value, ty: &Type, out: &mut String) {
        let remote = self.remote;
        let named = ty.inner_named_type().as_str();
        match (value, ty) {
            (Value::Null, _) => out.push_str("null"),
            (Value::Array(items), Type::List(inner) | Type::NonNullList(inner)) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.json(item, inner, out);
                }
                out.push(']');
            }
            (_, Type::List(inner) | Type::NonNullList(inner)) => self.json(value, inner, out),
            (Value::Object(fields), _) if remote.input_presets.types.contains_key(named) => {
                let types = &remote.input_presets.types[named];
                let presets = remote.input_presets.presets.get(named);
                out.push('{');
                let mut first = true;
                for (name, value) in fields {
                    // The preset wins over a value the relationship gave.
                    if presets.is_some_and(|p| p.iter().any(|p| &p.arg == name)) {
                        continue;
                    }
                    let Some(field_ty) = types.get(name) else {
                        self.error = Some(format!("\"{name}\" is not a field of \"{named}\""));
                        continue;
                    };
                    let _ = write!(out, "{}{name}: ", if first { "" } else { ", " });
                    first = false;
                    self.json(value, field_ty, out);
                }
                self.presets(presets, first, out);
                out.push('}');
            }
            (Value::String(s), _) if remote.input_presets.enums.contains(named) => {
                match crate::names::checked_name(s) {
                    // `null`, `true` and `false` are names, not enum values.
                    Ok(name) if !matches!(name, "null" | "true" | "false") => out.push_str(name),
                    _ => self.error = Some(format!("\"{s}\" is not a value of \"{named}\"")),
                }
            }
            _ => {
                if let Err(e) = crate::join::literal(value, &serde_json::Map::new(), out) {
                    self.error = Some(e);
                }
            }
        }
    }

    /// Writes an input type's presets after its other fields.
    fn presets(&mut self, presets: Option<&Vec<Preset>>, first: bool, out: &mut String) {
        for (i, p) in presets.into_iter().flatten().enumerate() {
            let sep = if first && i == 0 { "" } else { ", " };
            match self.preset(&p.value) {
                Ok(v) => {
                    let _ = write!(out, "{sep}{}: {v}", p.arg);
                }
                Err(e) => self.error = Some(e),
            }
        }
    }
}

#[cfg(test)]
#[path = "input_presets_tests.rs"]
mod tests;
