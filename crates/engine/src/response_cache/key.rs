//! What an `@cached` answer is keyed by, and the directive's arguments.
//!
//! The key holds everything that shapes the answer: the API and role (their
//! planner), the document and operation, the client's variables, and the values
//! of exactly the session variables the plan binds (its rules' and presets'), or
//! every session variable when a function takes the whole session. Two users whose
//! rules read `x-hasura-user-id` never share an entry; two users of a role whose
//! rules read nothing do. A family is one document and operation for one role and
//! API, whatever the variables: Hasura's unit of clearing.

use crate::engine::Caller;
use apollo_compiler::executable::Operation;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// A key (or a family): the first 16 bytes of a SHA-256 of its parts.
pub type CacheKey = [u8; 16];

/// `@cached(ttl:, refresh:)`, as asked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Directive {
    /// How long the answer may be served (Hasura's default: 60 s).
    pub(crate) ttl: Duration,
    /// Compute the answer again and keep the new one.
    pub(crate) refresh: bool,
}

/// The operation's `@cached`, its arguments read as literals or from `variables`.
pub(crate) fn directive(
    operation: &Operation,
    variables: &Map<String, Value>,
) -> Option<Directive> {
    let d = operation.directives.get("cached")?;
    let value = |name: &str| -> Option<Value> {
        use apollo_compiler::ast::Value as V;
        match d.specified_argument_by_name(name)?.as_ref() {
            V::Int(i) => i.try_to_i32().ok().map(Value::from),
            V::Boolean(b) => Some(Value::Bool(*b)),
            V::Variable(v) => variables.get(v.as_str()).cloned(),
            _ => None,
        }
    };
    let ttl = (value("ttl").and_then(|v| v.as_u64())).unwrap_or(60);
    let refresh = (value("refresh").and_then(|v| v.as_bool())).unwrap_or(false);
    Some(Directive {
        ttl: Duration::from_secs(ttl),
        refresh,
    })
}

/// The planner's schema and rules, hashed once: what another instance (a rolling
/// deploy's other metadata) keys its answers by too.
pub(crate) fn fingerprint(planner: &crate::planner::Planner) -> CacheKey {
    *planner.fingerprint.get_or_init(|| {
        let mut h = Sha256::new();
        h.update(b"grafton-planner-1\0");
        part(&mut h, planner.model().sdl.as_bytes());
        part(&mut h, format!("{:?}", planner.rules).as_bytes());
        part(&mut h, format!("{:?}", planner.limits()).as_bytes());
        finish(h)
    })
}

/// The answer's key. `bound` holds the values the statement binds (a session
/// variable read as a list, `x-hasura-allowed-ids[]`, is there as its list).
pub(crate) fn key(
    caller: &Caller,
    document: &str,
    operation: Option<&str>,
    variables: &Map<String, Value>,
    session: &[String],
    bound: &Map<String, Value>,
    planner: &CacheKey,
) -> CacheKey {
    let mut h = Sha256::new();
    h.update(b"grafton-cached-1\0");
    h.update(planner);
    who(&mut h, caller, document, operation);
    json(&mut h, &Value::Object(variables.clone()));
    let whole = session.iter().any(|s| s == grafton_ir::SESSION_JSON_VAR);
    let mut names: Vec<&String> = match whole {
        true => caller.vars.keys().collect(),
        false => session.iter().collect(),
    };
    names.sort_unstable();
    names.dedup();
    for name in names {
        part(&mut h, name.as_bytes());
        let value = (bound.get(name.as_str())).or_else(|| caller.vars.get(name.as_str()));
        json(&mut h, value.unwrap_or(&Value::Null));
    }
    finish(h)
}

/// The answer's family: its key without variables and session.
pub(crate) fn family(caller: &Caller, document: &str, operation: Option<&str>) -> CacheKey {
    let mut h = Sha256::new();
    h.update(b"grafton-cached-family-1\0");
    who(&mut h, caller, document, operation);
    finish(h)
}

/// A key as the headers and the cache API write it.
pub fn to_hex(key: &CacheKey) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// A key written by [`to_hex`].
pub fn from_hex(text: &str) -> Option<CacheKey> {
    let text = text.trim();
    if text.len() != 32 || !text.is_ascii() {
        return None;
    }
    let mut key = [0u8; 16];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(key)
}

/// The planner that answers (API, role, trusted backend), the document and the
/// operation.
fn who(h: &mut Sha256, caller: &Caller, document: &str, operation: Option<&str>) {
    h.update([u8::from(caller.relay), u8::from(caller.backend_only)]);
    match &caller.role {
        Some(role) => part(h, role.as_bytes()),
        None => h.update([0xff]),
    }
    part(h, document.as_bytes());
    part(h, operation.unwrap_or("").as_bytes());
}

/// A length-prefixed part, so no two sequences of parts hash alike.
fn part(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// A JSON value with object keys in order (clients send them in any order).
fn json(h: &mut Sha256, v: &Value) {
    match v {
        Value::Null => h.update([0]),
        Value::Bool(b) => h.update([1, u8::from(*b)]),
        Value::Number(n) => {
            h.update([2]);
            part(h, n.to_string().as_bytes());
        }
        Value::String(s) => {
            h.update([3]);
            part(h, s.as_bytes());
        }
        Value::Array(items) => {
            h.update([4]);
            h.update((items.len() as u64).to_le_bytes());
            items.iter().for_each(|item| json(h, item));
        }
        Value::Object(fields) => {
            h.update([5]);
            h.update((fields.len() as u64).to_le_bytes());
            let mut sorted: Vec<(&String, &Value)> = fields.iter().collect();
            sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for (k, v) in sorted {
                part(h, k.as_bytes());
                json(h, v);
            }
        }
    }
}

fn finish(h: Sha256) -> CacheKey {
    let digest = h.finalize();
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    key
}
