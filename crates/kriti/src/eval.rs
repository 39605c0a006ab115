//! Kriti templates evaluated over JSON: `$body`, `$session_variables`,
//! `$base_url`, `$query_params` and the rest bound by the caller, a `range`'s
//! names by the block; a path that leads nowhere is an error unless it is
//! optional (`?.`), as Kriti says.

use super::parse::{Expr, Node, Part};
use serde_json::{Map, Value};

/// The most JSON values (every object, array and leaf counted) one
/// evaluation may make: a template over a client's lists never grows without
/// bound.
pub const MAX_VALUES: usize = 1_000_000;

/// The variables a template reads (`("$body", …)` and the like, then a
/// `range`'s names), and what is left of its budget of values.
#[derive(Debug, Clone)]
pub struct Scope {
    vars: Vec<(String, Value)>,
    budget: usize,
}

impl Scope {
    /// A scope binding `vars`, with the whole budget.
    pub fn new(vars: Vec<(String, Value)>) -> Self {
        Self {
            vars,
            budget: MAX_VALUES,
        }
    }

    /// Takes `n` values from the budget.
    fn spend(&mut self, n: usize) -> Result<(), String> {
        self.budget = (self.budget.checked_sub(n))
            .ok_or_else(|| format!("the template makes more than {MAX_VALUES} values"))?;
        Ok(())
    }
}

/// How many JSON values `v` holds (itself included).
fn size(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(size).sum::<usize>(),
        Value::Object(o) => 1 + o.values().map(size).sum::<usize>(),
        _ => 1,
    }
}

/// What kind of JSON value `v` is (errors name kinds, never values: a value
/// may hold a secret).
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The JSON value `node` makes in `scope`.
pub fn value(node: &Node, scope: &mut Scope) -> Result<Value, String> {
    scope.spend(1)?;
    Ok(match node {
        Node::Literal(v) => v.clone(),
        Node::Text(parts) => Value::String(text(parts, scope)?),
        Node::Expr(e) => expr(e, scope)?,
        Node::Object(fields) => {
            let mut out = Map::new();
            for (key, v) in fields {
                out.insert(text(key, scope)?, value(v, scope)?);
            }
            Value::Object(out)
        }
        Node::Array(items) => Value::Array(
            (items.iter())
                .map(|i| value(i, scope))
                .collect::<Result<_, _>>()?,
        ),
        Node::If(branches, otherwise) => {
            for (cond, body) in branches {
                if truthy(&expr(cond, scope)?)? {
                    return value(body, scope);
                }
            }
            match otherwise {
                Some(body) => value(body, scope)?,
                None => Value::Null,
            }
        }
        Node::Range(index, item, list, body) => {
            let Value::Array(items) = expr(list, scope)? else {
                return Err("`range` goes over a list".into());
            };
            let mut out = Vec::with_capacity(items.len());
            for (i, v) in items.into_iter().enumerate() {
                let bound = scope.vars.len();
                if let Some(index) = index {
                    scope.vars.push((index.clone(), Value::from(i)));
                }
                scope.vars.push((item.clone(), v));
                let made = value(body, scope);
                scope.vars.truncate(bound);
                out.push(made?);
            }
            Value::Array(out)
        }
    })
}

/// A string's pieces written out: a string value without its quotes, any
/// other as JSON.
pub fn text(parts: &[Part], scope: &mut Scope) -> Result<String, String> {
    let mut out = String::new();
    for p in parts {
        match p {
            Part::Text(t) => out.push_str(t),
            Part::Expr(e) => match expr(e, scope)? {
                Value::String(s) => out.push_str(&s),
                other => out.push_str(&other.to_string()),
            },
        }
    }
    Ok(out)
}

/// An unescaped template's value: `None` when it is one `{{ expr }}` that is
/// null (a query parameter or header left out, as Hasura leaves it).
pub fn optional_text(parts: &[Part], scope: &mut Scope) -> Result<Option<String>, String> {
    if let [Part::Expr(e)] = parts {
        return match expr(e, scope)? {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s)),
            other => Ok(Some(other.to_string())),
        };
    }
    text(parts, scope).map(Some)
}

fn truthy(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => Err(format!("a condition is true or false, not {}", kind(other))),
    }
}

fn expr(e: &Expr, scope: &mut Scope) -> Result<Value, String> {
    let v = expr_here(e, scope)?;
    scope.spend(size(&v))?;
    Ok(v)
}

fn expr_here(e: &Expr, scope: &mut Scope) -> Result<Value, String> {
    Ok(match e {
        Expr::Literal(v) => v.clone(),
        Expr::Path(name, steps) => {
            let Some((_, root)) = scope.vars.iter().rev().find(|(n, _)| n == name) else {
                return Err(format!("`{name}` is not bound here"));
            };
            let mut at = root;
            let null = Value::Null;
            for step in steps {
                let next = match (&step.key, at) {
                    (Value::String(k), Value::Object(o)) => o.get(k),
                    (Value::Number(n), Value::Array(a)) => {
                        n.as_u64().and_then(|i| a.get(usize::try_from(i).ok()?))
                    }
                    _ => None,
                };
                at = match next {
                    Some(v) => v,
                    None if step.optional => &null,
                    None => {
                        return Err(format!(
                            "{name}: no {} where the path leads",
                            match &step.key {
                                Value::String(k) => format!("field '{k}'"),
                                _ => "such element".to_owned(),
                            }
                        ))
                    }
                };
            }
            at.clone()
        }
        Expr::Not(inner) => Value::Bool(!truthy(&expr(inner, scope)?)?),
        Expr::Binary(a, op, b) => {
            let left = expr(a, scope)?;
            match op.as_str() {
                "??" if !left.is_null() => left,
                "??" => expr(b, scope)?,
                "&&" => Value::Bool(truthy(&left)? && truthy(&expr(b, scope)?)?),
                "||" => Value::Bool(truthy(&left)? || truthy(&expr(b, scope)?)?),
                "==" => Value::Bool(same(&left, &expr(b, scope)?)),
                "!=" => Value::Bool(!same(&left, &expr(b, scope)?)),
                _ => {
                    let right = expr(b, scope)?;
                    let order = match (&left, &right) {
                        (Value::Number(x), Value::Number(y)) => x.as_f64().partial_cmp(&y.as_f64()),
                        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
                        _ => None,
                    };
                    let Some(order) = order else {
                        return Err(format!("`{op}` compares two numbers or two strings"));
                    };
                    Value::Bool(match op.as_str() {
                        ">" => order.is_gt(),
                        "<" => order.is_lt(),
                        ">=" => order.is_ge(),
                        _ => order.is_le(),
                    })
                }
            }
        }
        Expr::Call(name, args) => {
            let args = (args.iter())
                .map(|a| expr(a, scope))
                .collect::<Result<Vec<_>, _>>()?;
            call(name, args, scope)?
        }
    })
}

/// Equal as Kriti compares: numbers by value (`1 == 1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Kriti's functions.
fn call(name: &str, mut args: Vec<Value>, scope: &Scope) -> Result<Value, String> {
    let arity = |n: usize| match args.len() == n {
        true => Ok(()),
        false => Err(format!("{name} takes {n} argument(s)")),
    };
    let string = |v: &Value| match v {
        Value::String(s) => Ok(s.clone()),
        other => Err(format!("{name} takes a string, not {}", kind(other))),
    };
    Ok(match name {
        "not" => {
            arity(1)?;
            Value::Bool(!truthy(&args[0])?)
        }
        "empty" => {
            arity(1)?;
            Value::Bool(match &args[0] {
                Value::Null => true,
                Value::String(s) => s.is_empty(),
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
                _ => false,
            })
        }
        "size" | "length" => {
            arity(1)?;
            Value::from(match &args[0] {
                Value::String(s) => s.chars().count(),
                Value::Array(a) => a.len(),
                Value::Object(o) => o.len(),
                other => return Err(format!("{name} of {}", kind(other))),
            })
        }
        "toUpper" | "toLower" | "toCaseFold" | "toTitle" | "escapeUri" => {
            arity(1)?;
            let s = string(&args[0])?;
            Value::String(match name {
                "toUpper" => s.to_uppercase(),
                "toLower" | "toCaseFold" => s.to_lowercase(),
                "toTitle" => title(&s),
                _ => percent(&s),
            })
        }
        "head" | "tail" | "inverse" => {
            arity(1)?;
            match (name, args.remove(0)) {
                ("head", Value::Array(a)) => a.into_iter().next().unwrap_or(Value::Null),
                ("tail", Value::Array(a)) => Value::Array(a.into_iter().skip(1).collect()),
                ("inverse", Value::Array(mut a)) => {
                    a.reverse();
                    Value::Array(a)
                }
                ("inverse", Value::String(s)) => Value::String(s.chars().rev().collect()),
                (_, other) => return Err(format!("{name} of {}", kind(&other))),
            }
        }
        "concat" => {
            arity(1)?;
            match args.remove(0) {
                Value::Array(items) if items.iter().all(Value::is_string) => {
                    Value::String(items.iter().filter_map(Value::as_str).collect::<String>())
                }
                Value::Array(items) if items.iter().all(Value::is_array) => Value::Array(
                    (items.into_iter())
                        .flat_map(|i| match i {
                            Value::Array(a) => a,
                            _ => Vec::new(),
                        })
                        .collect(),
                ),
                Value::Array(items) if items.iter().all(Value::is_object) => {
                    let mut out = Map::new();
                    for i in items {
                        if let Value::Object(o) = i {
                            out.extend(o);
                        }
                    }
                    Value::Object(out)
                }
                other => return Err(format!("concat of {}", kind(&other))),
            }
        }
        "removeNulls" => {
            arity(1)?;
            match args.remove(0) {
                Value::Array(a) => Value::Array(a.into_iter().filter(|v| !v.is_null()).collect()),
                Value::Object(o) => {
                    Value::Object(o.into_iter().filter(|(_, v)| !v.is_null()).collect())
                }
                other => return Err(format!("removeNulls of {}", kind(&other))),
            }
        }
        "toPairs" => {
            arity(1)?;
            match args.remove(0) {
                Value::Object(o) => Value::Array(
                    o.into_iter()
                        .map(|(k, v)| Value::Array(vec![Value::String(k), v]))
                        .collect(),
                ),
                other => return Err(format!("toPairs of {}", kind(&other))),
            }
        }
        "fromPairs" => {
            arity(1)?;
            let Value::Array(pairs) = args.remove(0) else {
                return Err("fromPairs takes a list of pairs".into());
            };
            let mut out = Map::new();
            for pair in pairs {
                match pair {
                    Value::Array(kv) if kv.len() == 2 => {
                        let mut kv = kv.into_iter();
                        let (k, v) = (kv.next(), kv.next());
                        let Some(Value::String(k)) = k else {
                            return Err("fromPairs: a pair's key is a string".into());
                        };
                        out.insert(k, v.unwrap_or(Value::Null));
                    }
                    _ => return Err("fromPairs takes a list of pairs".into()),
                }
            }
            Value::Object(out)
        }
        "getSessionVariable" => {
            arity(1)?;
            let var = string(&args[0])?.to_lowercase();
            let session = scope
                .vars
                .iter()
                .rev()
                .find(|(n, _)| n == "$session_variables");
            let value = session.and_then(|(_, s)| s.as_object()?.get(&var).cloned());
            value.unwrap_or(Value::Null)
        }
        other => return Err(format!("Kriti function `{other}` is not known")),
    })
}

fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut start = true;
    for c in s.chars() {
        match start {
            true => out.extend(c.to_uppercase()),
            false => out.extend(c.to_lowercase()),
        }
        start = c.is_whitespace();
    }
    out
}

/// `s` with every byte but the unreserved ones percent-encoded (RFC 3986).
pub fn percent(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
