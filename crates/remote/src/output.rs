//! A handler's answer against its action's output type, shaped to the selection:
//! each selected field in document order under its response key, `__typename`
//! answered, skipped and included fields as the variables say. A value that does
//! not fit its type is an error, never passed through.

use apollo_compiler::ast::{self, Type};
use apollo_compiler::executable::{Field, Selection, SelectionSet};
use apollo_compiler::schema::ExtendedType;
use apollo_compiler::{ExecutableDocument, Node, Schema};
use serde_json::{Map, Value};

/// What shapes an answer: the schema, the document (its fragments) and the
/// request's coerced variables; and the relationship fields met, to be answered
/// by the database.
pub struct Shaper<'a> {
    /// The role's schema.
    pub schema: &'a Schema,
    /// The request's document.
    pub document: &'a ExecutableDocument,
    /// The coerced variables.
    pub variables: &'a Map<String, Value>,
    /// Whether `object.field` is a relationship to a table.
    pub related: &'a (dyn Fn(&str, &str) -> bool + Sync),
    /// The relationship fields met (each `null` in the answer until filled).
    pub holes: std::sync::Mutex<Vec<Hole>>,
}

/// A relationship field of an object of the answer, to fill from the database.
#[derive(Debug, Clone)]
pub struct Hole {
    /// Where its value goes in the shaped answer (a JSON pointer).
    pub pointer: String,
    /// The custom object type.
    pub object: String,
    /// The relationship's name.
    pub field: String,
    /// The document's fields under its response key.
    pub fields: Vec<Node<Field>>,
    /// The handler's object it belongs to (its mapped fields' values).
    pub source: Map<String, Value>,
}

/// `$.a[0].b` as the JSON pointer `/a/0/b` (response keys are GraphQL names:
/// no `.`, `[`, `/` or `~` in them).
fn pointer(path: &str) -> String {
    let rest = path.strip_prefix('$').unwrap_or(path);
    rest.replace(['.', '['], "/").replace(']', "")
}

impl Shaper<'_> {
    /// `value` as `ty`, with `fields`' merged selection; or where and why it does
    /// not fit.
    pub fn shape(
        &self,
        ty: &Type,
        value: &Value,
        fields: &[&Node<Field>],
        path: &str,
    ) -> Result<Value, String> {
        match ty {
            Type::NonNullNamed(_) | Type::NonNullList(_) if value.is_null() => {
                Err(format!("{path}: expected a value of type {ty}, got null"))
            }
            _ if value.is_null() => Ok(Value::Null),
            Type::List(inner) | Type::NonNullList(inner) => {
                let Value::Array(items) = value else {
                    return Err(format!(
                        "{path}: expected a list of type {ty}, got {}",
                        kind(value)
                    ));
                };
                let shaped = (items.iter().enumerate())
                    .map(|(i, v)| self.shape(inner, v, fields, &format!("{path}[{i}]")))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Value::Array(shaped))
            }
            Type::Named(name) | Type::NonNullNamed(name) => self.named(name, value, fields, path),
        }
    }

    /// `value` checked against `ty` whole, every field of its objects (no
    /// selection yet: an asynchronous action's answer, checked when it comes and
    /// shaped to a selection when it is read); or where and why it does not fit.
    pub fn check(&self, ty: &Type, value: &Value) -> Result<Value, String> {
        self.shape(ty, value, &[], "$")
    }

    fn named(
        &self,
        name: &str,
        value: &Value,
        fields: &[&Node<Field>],
        path: &str,
    ) -> Result<Value, String> {
        // GraphQL's result coercion: an integral `1.0` is the Int 1, an integer ID
        // is its string; nothing else changes type.
        match (name, value) {
            ("Int", Value::Number(n)) if !(n.is_i64() || n.is_u64()) => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if f.fract() == 0.0 && f >= f64::from(i32::MIN) && f <= f64::from(i32::MAX) {
                    return Ok(Value::from(f as i64));
                }
            }
            ("ID", Value::Number(n)) if n.is_i64() || n.is_u64() => {
                return Ok(Value::String(n.to_string()))
            }
            _ => {}
        }
        let fits = match (name, value) {
            ("String", Value::String(_)) | ("Boolean", Value::Bool(_)) => true,
            ("Int", Value::Number(n)) => n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
            ("Float", Value::Number(_)) => true,
            ("ID", Value::String(_)) => true,
            ("String" | "Boolean" | "Int" | "Float" | "ID", _) => false,
            _ => match self.schema.types.get(name) {
                // A custom or database scalar: any JSON, as the handler sent it.
                Some(ExtendedType::Scalar(_)) => true,
                Some(ExtendedType::Enum(e)) => {
                    value.as_str().is_some_and(|v| e.values.contains_key(v))
                }
                Some(ExtendedType::Object(_)) => return self.object(name, value, fields, path),
                _ => false,
            },
        };
        match fits {
            true => Ok(value.clone()),
            false => Err(format!(
                "{path}: expected a value of type {name}, got {}",
                kind(value)
            )),
        }
    }

    fn object(
        &self,
        name: &str,
        value: &Value,
        fields: &[&Node<Field>],
        path: &str,
    ) -> Result<Value, String> {
        let Value::Object(answer) = value else {
            return Err(format!(
                "{path}: expected an object of type {name}, got {}",
                kind(value)
            ));
        };
        let Some(ExtendedType::Object(def)) = self.schema.types.get(name) else {
            return Err(format!("{path}: {name} is not an object type"));
        };
        if fields.is_empty() {
            // No selection (see `check`): every field of the type but its
            // relationships, in the type's order; whatever else came is dropped.
            let mut out = Map::new();
            for (field, def) in &def.fields {
                if (self.related)(name, field.as_str()) {
                    continue;
                }
                let v = answer.get(field.as_str()).unwrap_or(&Value::Null);
                let at = format!("{path}.{field}");
                out.insert(field.to_string(), self.shape(&def.ty, v, &[], &at)?);
            }
            return Ok(Value::Object(out));
        }
        let mut selected: Vec<(String, Vec<&Node<Field>>)> = Vec::new();
        for f in fields {
            self.collect(&f.selection_set, &mut selected, &mut Vec::new());
        }
        let mut out = Map::new();
        for (key, group) in &selected {
            let field = group[0];
            let at = format!("{path}.{key}");
            if field.name == "__typename" {
                out.insert(key.clone(), Value::String(name.to_owned()));
                continue;
            }
            if (self.related)(name, field.name.as_str()) {
                let mut holes = self.holes.lock().unwrap_or_else(|p| p.into_inner());
                holes.push(Hole {
                    pointer: pointer(&at),
                    object: name.to_owned(),
                    field: field.name.to_string(),
                    fields: group.iter().map(|f| (*f).clone()).collect(),
                    source: answer.clone(),
                });
                out.insert(key.clone(), Value::Null);
                continue;
            }
            let Some(def) = def.fields.get(field.name.as_str()) else {
                return Err(format!("{at}: {name} has no field {}", field.name));
            };
            let v = answer.get(field.name.as_str()).unwrap_or(&Value::Null);
            out.insert(key.clone(), self.shape(&def.ty, v, group, &at)?);
        }
        Ok(Value::Object(out))
    }

    /// CollectFields: the selection's fields by response key, fragments spread,
    /// `@skip` / `@include` applied.
    fn collect<'s>(
        &'s self,
        set: &'s SelectionSet,
        out: &mut Vec<(String, Vec<&'s Node<Field>>)>,
        visited: &mut Vec<&'s str>,
    ) {
        for selection in &set.selections {
            if !self.included(selection.directives()) {
                continue;
            }
            match selection {
                Selection::Field(f) => {
                    let key = f.response_key().to_string();
                    match out.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, group)) => group.push(f),
                        None => out.push((key, vec![f])),
                    }
                }
                Selection::InlineFragment(i) => self.collect(&i.selection_set, out, visited),
                Selection::FragmentSpread(s) => {
                    let name = s.fragment_name.as_str();
                    if visited.contains(&name) {
                        continue;
                    }
                    visited.push(name);
                    if let Some(fragment) = self.document.fragments.get(name) {
                        self.collect(&fragment.selection_set, out, visited);
                    }
                }
            }
        }
    }

    fn included(&self, directives: &ast::DirectiveList) -> bool {
        let flag = |name: &str| {
            let d = directives.get(name)?;
            let arg = d.specified_argument_by_name("if")?;
            Some(match &**arg {
                ast::Value::Boolean(b) => *b,
                ast::Value::Variable(v) => {
                    self.variables.get(v.as_str()) == Some(&Value::Bool(true))
                }
                _ => false,
            })
        };
        flag("skip") != Some(true) && flag("include") != Some(false)
    }

    /// An argument's value as JSON, its variables replaced (`None`: a variable
    /// the request did not give, so the argument is left out).
    pub fn argument(&self, value: &ast::Value) -> Option<Value> {
        Some(match value {
            ast::Value::Null => Value::Null,
            ast::Value::Variable(v) => self.variables.get(v.as_str())?.clone(),
            ast::Value::Enum(e) => Value::String(e.to_string()),
            ast::Value::String(s) => Value::String(s.clone()),
            ast::Value::Boolean(b) => Value::Bool(*b),
            ast::Value::Int(i) => match i.as_str().parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => serde_json::from_str(i.as_str()).unwrap_or(Value::Null),
            },
            ast::Value::Float(f) => serde_json::from_str(f.as_str()).unwrap_or(Value::Null),
            ast::Value::List(items) => {
                Value::Array(items.iter().filter_map(|v| self.argument(v)).collect())
            }
            ast::Value::Object(fields) => Value::Object(
                (fields.iter())
                    .filter_map(|(k, v)| Some((k.to_string(), self.argument(v)?)))
                    .collect(),
            ),
        })
    }
}

use grafton_kriti::eval::kind;

#[cfg(test)]
mod tests {
    #[test]
    fn a_path_becomes_its_json_pointer() {
        assert_eq!(super::pointer("$"), "");
        assert_eq!(super::pointer("$.picks[2].post"), "/picks/2/post");
    }
}
